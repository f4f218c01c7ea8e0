"""Drive `write-tool mcp` as a client that offers roots (MCP `roots/list`).

Usage: mcp_roots_client.py WRITE_TOOL CWD A B C

Three sessions:
1. `write-tool mcp` started in CWD with no --root; the client offers the
   roots A and B: relative paths land in A, absolute ones in B are allowed,
   CWD is not. Then the client's roots change to C (roots/list_changed),
   and a write is sent while the server is still waiting for the new
   roots (the client holds its answer until it has sent the write): the
   write waits for them and lands in C.
2. `write-tool --root A mcp`: the command line wins over the client's
   roots (C).
3. A client that offers no roots: the server writes in its own root, CWD.

The Rust test that runs this checks the files on disk.
"""

import asyncio
import pathlib
import sys
import warnings

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

# The roots capability is deprecated in the newest protocol; clients still
# offer it, and the server still follows it.
warnings.simplefilter("ignore")


def envelope(result):
    return result.structured_content


listed = 0
# Set while the client must hold its roots/list answer; the answer goes
# once `call_sent` is set.
hold = None
call_sent = None


def roots_callback(current):
    async def list_roots(_context):
        global listed
        listed += 1
        if hold is not None and hold.is_set():
            await call_sent.wait()
        return types.ListRootsResult(
            roots=[types.Root(uri=pathlib.Path(p).as_uri(), name=pathlib.Path(p).name) for p in current]
        )

    return list_roots


class Outgoing:
    """The client's write stream, which sets `call_sent` once a tools/call
    has gone to the server."""

    def __init__(self, inner):
        self._inner = inner

    async def send(self, message):
        await self._inner.send(message)
        root = getattr(message.message, "root", message.message)
        if getattr(root, "method", None) == "tools/call" and call_sent is not None:
            call_sent.set()

    def __getattr__(self, name):
        return getattr(self._inner, name)

    async def __aenter__(self):
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc):
        return await self._inner.__aexit__(*exc)


async def session(binary, cwd, args, roots, body):
    server = StdioServerParameters(command=binary, args=args + ["mcp"], cwd=cwd)
    callback = roots_callback(roots) if roots is not None else None
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, Outgoing(write), list_roots_callback=callback) as s:
            await s.initialize()
            await body(s)


async def main(binary, cwd, a, b, c):
    roots = [a, b]

    async def follows_the_client(s):
        env = envelope(await s.call_tool("Write", {"path": "from-client.txt", "content": "a\n"}))
        assert env["status"] == "success", env
        env = envelope(
            await s.call_tool("write_file", {"path": f"{b}/in-b.txt", "content": "b\n", "envelope": "full"})
        )
        assert env["status"] == "success", env
        assert env["context"]["path_resolved"] == f"{b}/in-b.txt", env
        env = envelope(
            await s.call_tool("write_file", {"path": f"{cwd}/escape.txt", "content": "x\n"})
        )
        assert env["error"]["code"] == "ACCESS_DENIED", env
        global hold, call_sent
        hold, call_sent = asyncio.Event(), asyncio.Event()
        roots[:] = [c]
        before = listed
        hold.set()
        await s.send_roots_list_changed()
        # The server asks for the new roots at once; the client answers only
        # after it has sent the next call, so that call reaches the server
        # while the roots are still being asked for, and must wait for them
        # to land in C rather than in A.
        env = envelope(await s.call_tool("Write", {"path": "after-change.txt", "content": "c\n", "envelope": "full"}))
        assert env["status"] == "success", env
        assert call_sent.is_set() and listed > before, (listed, before)
        assert env["context"]["path_resolved"] == "after-change.txt", env
        hold.clear()

    await session(binary, cwd, [], roots, follows_the_client)

    async def command_line_wins(s):
        env = envelope(await s.call_tool("Write", {"path": "cli-wins.txt", "content": "a\n"}))
        assert env["status"] == "success", env

    await session(binary, cwd, ["--root", a], [c], command_line_wins)

    async def no_roots_offered(s):
        env = envelope(await s.call_tool("Write", {"path": "own-root.txt", "content": "d\n"}))
        assert env["status"] == "success", env

    await session(binary, cwd, [], None, no_roots_offered)
    print("mcp roots client: ok")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
