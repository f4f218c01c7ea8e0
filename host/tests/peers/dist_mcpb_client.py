"""Drive the server of an unpacked MCP bundle with the MCP Python SDK, as a
desktop client runs it: the manifest's command and arguments.

Usage: python dist_mcpb_client.py COMMAND ARG...

Lists the tools (printed as "tools: NAME NAME …"), then writes, views and
edits notes.md in the project root.
"""

import asyncio
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def failed(result):
    # The SDK's field, under the name of the version installed.
    return getattr(result, "is_error", None) or getattr(result, "isError", False)


def text(result):
    return "".join(block.text for block in result.content if block.type == "text")


async def main(command, args):
    server = StdioServerParameters(command=command, args=args)
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            print("tools:", " ".join(tool.name for tool in tools.tools))
            result = await session.call_tool("Write", {"path": "notes.md", "content": "# Notes\ndraft\n"})
            assert not failed(result), text(result)
            result = await session.call_tool("view", {"path": "notes.md"})
            assert not failed(result) and "draft" in text(result), text(result)
            result = await session.call_tool(
                "Edit", {"file_path": "notes.md", "old_string": "draft", "new_string": "edited"}
            )
            assert not failed(result), text(result)
            print(text(result))


asyncio.run(main(sys.argv[1], sys.argv[2:]))
