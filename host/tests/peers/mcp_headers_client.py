"""The MCP Python SDK (pinned to MCP 2026-07-28) over Streamable HTTP,
with the operator's token: it sends SEP-2243's `Mcp-Method` and `Mcp-Name`
on every request and the server takes them. A request hook that rewrites
a call's header on its way (a middlebox routing on headers would see
another tool, or another method) is refused with HEADER_MISMATCH (-32020)
before the call runs.

Usage: mcp_headers_client.py URL TOKEN

The Rust test that runs this checks the files on disk.
"""

import asyncio
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

HEADER_MISMATCH = -32020


async def main(url, token):
    rewrite = {}
    sent = []

    async def hook(request):
        if request.headers.get("mcp-method") == "tools/call":
            sent.append((request.headers.get("mcp-method"), request.headers.get("mcp-name")))
            request.headers.update(rewrite)

    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        http.event_hooks["request"].append(hook)
        async with Client(streamable_http_client(url, http_client=http), mode="2026-07-28") as client:

            async def write(path):
                result = await client.call_tool("Write", {"path": path, "content": f"{path}\n"})
                assert not result.is_error, result.structured_content

            async def refused(path, header):
                try:
                    result = await client.call_tool("Write", {"path": path, "content": "x\n"})
                except MCPError as error:
                    assert error.error.code == HEADER_MISMATCH, error.error
                    assert f"{header} header" in error.error.message, error.error
                else:
                    raise AssertionError(f"answered: {result}")

            await write("py-headers/sent.txt")
            assert sent[-1] == ("tools/call", "Write"), sent
            # The body writes; the headers say it is a `view`, a read.
            rewrite["mcp-name"] = "view"
            await refused("py-headers/renamed.txt", "Mcp-Name")
            rewrite.clear()
            rewrite["mcp-method"] = "tools/list"
            await refused("py-headers/remethod.txt", "Mcp-Method")
            rewrite.clear()
            await write("py-headers/after.txt")
    print("mcp py headers client: ok")


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(*sys.argv[1:3]), timeout=120))
