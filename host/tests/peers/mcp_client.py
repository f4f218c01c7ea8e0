"""Drive `write-tool mcp` with the official MCP Python SDK's stdio client.

Usage: mcp_client.py WRITE_TOOL ROOT [MODE]

MODE is the SDK's: `legacy` (the default: `initialize`, MCP 2025-11-25),
`auto` (`server/discover` first) or `2026-07-28` (stateless requests, the
protocol version and capabilities in each request's `_meta`, no
`initialize`). Lists the tools, calls Write (create, update, dry run, an
error, 12 MiB of content), view, write_file, the text editor and the
journal's tools, and checks every answer against the tools' output
schema with a JSON Schema validator of each draft MCP clients use. The Rust
test that runs this checks the files on disk.
"""

import asyncio
import json
import os
import sys

from jsonschema import Draft7Validator, Draft202012Validator
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

# The output schema every tool lists (they all answer with an envelope).
OUTPUT = {}


def envelope(result, full=False):
    """The envelope (structured content), checked against the text block:
    the envelope written for a model, not its JSON a second time; and
    against the listed output schema, errors too (the SDK checks only
    successes)."""
    assert len(result.content) == 1, result.content
    env = result.structured_content
    for draft in (Draft202012Validator, Draft7Validator):
        errors = [e.message for e in draft(OUTPUT["schema"]).iter_errors(env)]
        assert not errors, (draft.__name__, errors, env)
    OUTPUT["checked"] = OUTPUT.get("checked", 0) + 1
    text = result.content[0].text
    assert text.startswith(env["text"]), (text, env)
    data = env.get("data") or {}
    if data.get("operation") != "create" and data.get("diff_preview"):
        assert data["diff_preview"] in text, (text, env)
    if data.get("lock"):
        assert f"expected_size_bytes: {data['lock']['expected_size_bytes']}" in text, (text, env)
    assert not text.lstrip().startswith("{"), text
    assert ("stats" in env and "context" in env) is full, env
    assert result.is_error == (env["status"] == "error"), (result.is_error, env)
    return env


async def main(binary, root, mode):
    # The environment as the test set it (the SDK passes only a few
    # variables by default): the journal's and the cache's directories.
    server = StdioServerParameters(command=binary, args=["--root", root, "mcp"], env=dict(os.environ))
    if mode == "legacy":
        async with stdio_client(server) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert init.server_info.name == "write-tool", init.server_info
                assert init.capabilities.tools is not None
                await exercise(session, root)
    else:
        async with Client(server, mode=mode) as client:
            # No `initialize`: the server answered `server/discover`
            # (auto), or the version was pinned and every request carries
            # it.
            if mode == "auto":
                found = client.session.discover_result
                assert found is not None, "auto must find a 2026-07-28 server"
                assert "2026-07-28" in found.supported_versions, found
                assert client.server_info.name == "write-tool", client.server_info
            assert client.session.initialize_result is None
            await exercise(client, root)
    assert OUTPUT["checked"] >= 20, OUTPUT["checked"]
    print(f"mcp client ({mode}): ok")


async def exercise(session, root):
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == {"Write", "write_file", "Edit", "edit_file", "apply_patch", "view", "append", "write_many", "revert", "checkpoint"}, set(tools)
    # Listed in one order every time, each with the envelope's schema.
    assert list(tools) == [t.name for t in (await session.list_tools()).tools]
    OUTPUT["schema"] = tools["Write"].output_schema
    assert OUTPUT["schema"]["type"] == "object", OUTPUT
    assert all(t.output_schema == OUTPUT["schema"] for t in tools.values())
    Draft202012Validator.check_schema(OUTPUT["schema"])
    Draft7Validator.check_schema(OUTPUT["schema"])
    write = tools["Write"]
    assert write.input_schema["required"] == ["path", "content"], write.input_schema
    assert "dry_run" in write.input_schema["properties"]
    for tool in tools.values():
        hints = tool.annotations
        # Plan modes admit exactly the tools that declare
        # readOnlyHint: view, and nothing that writes.
        looks = tool.name == "view"
        assert hints.read_only_hint is looks, hints
        writes = tool.name in ("Write", "write_file", "write_many")
        # An append only adds, as a checkpoint only marks: neither
        # destroys what was there.
        adds = tool.name in ("checkpoint", "append")
        assert hints.destructive_hint is not (adds or looks), hints
        assert hints.idempotent_hint is (writes or looks), hints
        assert hints.open_world_hint is False, hints

    env = envelope(await session.call_tool("Write", {"path": "src/a.txt", "content": "one\n"}))
    assert env["status"] == "success", env
    assert env["data"]["operation"] == "create", env
    assert env["text"] == "Created 'src/a.txt' (1 line, 4 bytes).\n(Created directory: src/)", env

    env = envelope(await session.call_tool("Write", {"path": "src/a.txt", "content": "one\ntwo\n"}))
    assert env["data"]["operation"] == "update", env
    assert "+two" in env["data"]["diff_preview"], env

    env = envelope(await session.call_tool("Edit", {"file_path": "src/a.txt", "old_string": "two", "new_string": "2"}))
    assert env["status"] == "success", env
    assert "edits" not in env["data"], env  # exact: the diff says where
    full = envelope(await session.call_tool("Edit", {"file_path": "src/a.txt", "old_string": "2\n", "new_string": "two\n", "dry_run": True, "envelope": "full"}), full=True)
    assert full["data"]["edits"] == [{"tolerance": "exact", "lines": [2]}], full
    assert full["context"]["params_input"]["envelope"] == "full", full
    env = envelope(await session.call_tool("edit_file", {"path": "src/a.txt", "edits": [{"oldText": "2", "newText": "two"}]}))
    assert env["status"] == "success", env
    with open(f"{root}/src/a.txt") as f:
        assert f.read() == "one\ntwo\n"

    # A look through the read-only tool: numbered lines, and the
    # base a write passes back, in the text block too.
    env = envelope(await session.call_tool("view", {"path": "src/a.txt"}))
    assert env["status"] == "success", env
    assert env["text"] == "'src/a.txt', lines 1-2 of 2:\n     1\tone\n     2\ttwo", env
    assert "applied" not in env["data"], env
    view = env["data"]["view"]
    assert (view["kind"], view["lines"], view["total"]) == ("file", [1, 2], 2), view
    text = (await session.call_tool("view", {"path": "src/a.txt"})).content[0].text
    assert f"base: {view['base']}" in text, text
    env = envelope(await session.call_tool("Write", {"path": "src/a.txt", "content": "one\ntwo\n", "base": view["base"]}))
    assert env["status"] == "success", env

    # Anthropic's text editor, called by name as a client that
    # forwards Claude's tool_use blocks calls it, though not listed:
    # answered in the words of Anthropic's reference implementation.
    result = await session.call_tool("str_replace_based_edit_tool", {"command": "insert", "path": f"{root}/src/a.txt", "insert_line": 1, "insert_text": "one and a half\n"})
    env = envelope(result)
    assert result.is_error is not True and env["status"] == "success", env
    assert env["text"].startswith(f"The file {root}/src/a.txt has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n"), env
    with open(f"{root}/src/a.txt") as f:
        assert f.read() == "one\none and a half\ntwo\n"
    result = await session.call_tool("str_replace_based_edit_tool", {"command": "create", "path": "src/a.txt", "file_text": "x\n"})
    assert result.is_error is True, result
    assert envelope(result)["text"] == "File already exists at: src/a.txt. Cannot overwrite files using command `create`.", result
    result = await session.call_tool("str_replace_editor", {"command": "view", "path": "src/a.txt", "view_range": [2, 2]})
    assert result.is_error is not True, result
    assert envelope(result)["text"] == "Here's the result of running `cat -n` on src/a.txt:\n     2\tone and a half\n", result

    env = envelope(await session.call_tool("view", {"path": "src"}))
    assert env["data"]["view"]["kind"] == "directory", env
    with open(f"{root}/blob.bin", "wb") as f:
        f.write(bytes(range(256)) * 4)
    env = envelope(await session.call_tool("view", {"path": "blob.bin"}))
    assert env["data"]["view"]["kind"] == "binary", env

    env = envelope(await session.call_tool("Write", {"path": "dry.txt", "content": "x\n", "dry_run": True}))
    assert env["status"] == "partial" and env["data"]["applied"] is False, env

    result = await session.call_tool("Write", {"path": "../escape.txt", "content": "x\n"})
    env = envelope(result)
    assert result.is_error is True
    assert env["error"]["code"] == "ACCESS_DENIED", env

    env = envelope(await session.call_tool("Write", {"path": "no-content.txt"}))
    assert env["error"]["code"] == "INVALID_PARAM", env

    big = "0123456789abcde\n" * (12 * 1024 * 1024 // 16)
    env = envelope(await session.call_tool("Write", {"path": "big.txt", "content": big}))
    # A new file's preview is not sent (it is the content), so
    # none is cut: a success.
    assert env["status"] == "success" and env["data"]["applied"] is True, env["text"]
    assert f"{len(big)} bytes" in env["text"], env["text"]

    env = envelope(await session.call_tool("write_file", {"path": "notes/todo.txt", "content": "Buy milk"}))
    assert env["text"] == "Successfully wrote to notes/todo.txt", env

    try:
        await session.call_tool("NoSuchTool", {})
    except Exception as err:  # the SDK raises on a JSON-RPC error
        assert "Unknown tool" in str(err), err
    else:
        raise AssertionError("an unknown tool must be a JSON-RPC error")

    # Several files as one change, a checkpoint, and the change
    # undone: the journal's tools (docs/contract.md#journal).
    writes = [{"path": "many/1.txt", "content": "1\n"}, {"path": "many/2.txt", "content": "2\n"}]
    said = []

    async def progress(step, total, message):
        said.append(message)

    env = envelope(await session.call_tool("write_many", {"writes": writes}, progress_callback=progress))
    # Said at once, before the answer: what the call is doing.
    assert said[:1] == ["Writing 2 files as one change: many/1.txt, many/2.txt."], said
    assert env["data"]["operation"] == "many" and len(env["data"]["files"]) == 2, env
    group = env["data"]["change_id"]
    env = envelope(await session.call_tool("checkpoint", {"checkpoint": "mcp"}))
    assert env["data"]["operation"] == "checkpoint", env
    env = envelope(await session.call_tool("revert", {"change_id": group}))
    assert env["status"] == "success", env
    assert [f["operation"] for f in env["data"]["files"]] == ["delete", "delete"], env
    assert not os.path.exists(os.path.join(root, "many")), "the group is undone"

    # The server is still there after all of that.
    env = envelope(await session.call_tool("Write", {"path": "last.txt", "content": "still here\n"}))
    assert env["status"] == "success", env


if __name__ == "__main__":
    mode = sys.argv[3] if len(sys.argv) > 3 else "legacy"
    asyncio.run(asyncio.wait_for(main(sys.argv[1], sys.argv[2], mode), timeout=300))
