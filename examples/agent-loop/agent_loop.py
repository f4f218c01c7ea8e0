"""A minimal agent loop with write-tool as the model's file tool, without
MCP: the tools handed to the model in its provider's format, its tool
calls run by `write-tool turn`, the answers sent back in the provider's
shape.

Usage: agent_loop.py PROVIDER ROOT [WRITE_TOOL]

PROVIDER is anthropic (Messages API), openai (Responses API) or
openai-chat (Chat Completions). The model is a recorded conversation
(recorded/PROVIDER.json: the API's responses, in order), so the loop runs
without a network or a key; `model()` says where the real call goes.
Prints the conversation as it would be sent next, as JSON.
"""

import json
import subprocess
import sys

PROMPT = "Create hello.py that prints hello, then make it print hello, world."


def tool(write_tool, root, *args, stdin=None):
    """Run write-tool; its stdout as JSON."""
    done = subprocess.run(
        [write_tool, "--root", root, *args],
        input=stdin, capture_output=True, text=True,
    )
    # `turn` exits 1 when a call failed: the model is told why, in the
    # answer, and the loop goes on.
    if done.returncode not in (0, 1):
        sys.exit(f"write-tool {' '.join(args)} failed: {done.stderr}")
    return json.loads(done.stdout)


def model(provider, recorded, conversation, tools):
    """The model's next response. A real loop calls the API here:
    anthropic: client.messages.create(model=..., max_tokens=..., tools=tools, messages=conversation)
    openai: client.responses.create(model=..., tools=tools, input=conversation)
    openai-chat: client.chat.completions.create(model=..., tools=tools, messages=conversation)
    """
    return recorded.pop(0)


def main(provider, root, write_tool="write-tool"):
    with open(f"{__file__.rsplit('/', 1)[0]}/recorded/{provider}.json") as f:
        recorded = json.load(f)
    tools = tool(write_tool, root, "schema", "--provider", provider)
    conversation = [{"role": "user", "content": PROMPT}]
    while True:
        response = model(provider, recorded, conversation, tools)
        # The model's turn joins the conversation as the API gave it.
        if provider == "anthropic":
            conversation.append({"role": "assistant", "content": response["content"]})
            more = response["stop_reason"] == "tool_use"
        elif provider == "openai":
            conversation.extend(response["output"])
            more = any(i["type"] in ("function_call", "custom_tool_call") for i in response["output"])
        else:
            message = response["choices"][0]["message"]
            conversation.append(message)
            more = bool(message.get("tool_calls"))
        if not more:
            break
        # Its tool calls run; what comes back is in the API's own shape.
        reply = tool(write_tool, root, "turn", "--provider", provider, stdin=json.dumps(response))
        if provider == "anthropic":
            conversation.append(reply)
        else:
            conversation.extend(reply)
    print(json.dumps(conversation, indent=1))


if __name__ == "__main__":
    main(*sys.argv[1:4])
