"""Start the MCP server the way a client configuration says, and use it.

Usage: mcp_config_client.py CONFIG_JSON [broken ROOT]

CONFIG_JSON is an `mcpServers` configuration (the README's snippet, its
placeholders filled in). With `broken ROOT`, the configuration's root is
not a usable directory: the server must still start, list its tools, say
what is wrong in a log message, and answer a call with an error naming
ROOT.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(config_path, broken_root):
    with open(config_path) as f:
        entry = json.load(f)["mcpServers"]["write-tool"]
    server = StdioServerParameters(command=entry["command"], args=entry["args"])
    logged = []
    got_log = asyncio.Event()

    async def on_log(params):
        logged.append(params)
        got_log.set()

    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, logging_callback=on_log) as session:
            await session.initialize()
            names = sorted(t.name for t in (await session.list_tools()).tools)
            assert names == ["Edit", "Write", "append", "apply_patch", "checkpoint", "edit_file", "revert", "view", "write_file", "write_many"], names
            result = await session.call_tool("Write", {"path": "from-config.txt", "content": "configured\n"})
            if broken_root is None:
                assert result.is_error is False, result
                assert result.structured_content["status"] == "success", result
                print("configured server: ok")
                return
            assert result.is_error is True, result
            message = result.structured_content["text"]
            assert broken_root in message and "not a usable directory" in message, message
            assert result.content[0].text.find(broken_root) >= 0, result
            # The log message comes once the client is initialized; wait
            # for it rather than for a time.
            await asyncio.wait_for(got_log.wait(), timeout=30)
            assert logged[0].level == "error", logged
            assert broken_root in logged[0].data, logged
            print("broken configuration: ok")


if __name__ == "__main__":
    broken = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "broken" else None
    asyncio.run(asyncio.wait_for(main(sys.argv[1], broken), timeout=300))
