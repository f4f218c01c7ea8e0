"""Start the MCP server the way a client configuration says, and use it.

Usage: mcp_config_client.py CONFIG_JSON

CONFIG_JSON is an `mcpServers` configuration (the README's snippet, with
its placeholder root filled in). `write-tool` must be on PATH.
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(config_path):
    with open(config_path) as f:
        entry = json.load(f)["mcpServers"]["write-tool"]
    server = StdioServerParameters(command=entry["command"], args=entry["args"])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            names = sorted(t.name for t in (await session.list_tools()).tools)
            assert names == ["Write", "write_file"], names
            result = await session.call_tool("Write", {"path": "from-config.txt", "content": "configured\n"})
            assert result.is_error is False, result
            assert result.structured_content["status"] == "success", result
    print("configured server: ok")


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(sys.argv[1]), timeout=300))
