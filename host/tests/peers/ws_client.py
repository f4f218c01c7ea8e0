"""Drive `write-tool serve --ws` with the `websockets` client library.

Usage: ws_client.py WRITE_TOOL ROOT

Starts the server on a free loopback port, then sends requests in both
forms, a malformed one, a binary one, one nested 100,000 levels deep and
several connections at once, and checks each reply; a message over the
limit must close the connection with code 1009, and a connection past
the 64th must wait for one to end. A browser-like connection from a foreign Origin must be
refused. 64 sockets that never send a handshake must not lock a real
client out past the handshake timeout, and a connection that stays idle is
closed after the idle timeout, even while its client pings. The Rust test that runs this checks the
files on disk.
"""

import asyncio
import json
import subprocess
import sys

import websockets


async def request(ws, payload):
    await ws.send(payload if isinstance(payload, (str, bytes)) else json.dumps(payload))
    return json.loads(await ws.recv())


async def main(binary, root):
    server = subprocess.Popen(
        [binary, "--root", root, "serve", "--ws", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stderr.readline()
        assert line.startswith("write-tool: serving ws://"), line
        url = line.split()[-1]

        async with websockets.connect(url, max_size=None) as ws:
            env = await request(ws, {"path": "a.txt", "content": "one\n"})
            assert env["status"] == "success" and env["data"]["operation"] == "create", env
            env = await request(ws, {"name": "write_file", "arguments": {"path": "notes/todo.txt", "content": "Buy milk"}})
            assert env["text"] == "Successfully wrote to notes/todo.txt", env
            env = await request(ws, {"name": "Write", "arguments": json.dumps({"path": "a.txt", "content": "two\n"})})
            assert env["data"]["operation"] == "update", env

            # Malformed requests are answered, and the connection stays.
            env = await request(ws, "{not json")
            assert env["error"]["code"] == "INVALID_PARAM", env
            env = await request(ws, b'{"path": "b.txt", "content": "x"}')
            assert env["error"]["code"] == "INVALID_PARAM" and "text message" in env["text"], env
            env = await request(ws, {"path": "../escape.txt", "content": "x"})
            assert env["error"]["code"] == "ACCESS_DENIED", env

            # Nested 100,000 levels deep: refused, and the connection stays.
            deep = '{"arguments":' * 100_000 + '{"path": "deep.txt", "content": "x"}' + "}" * 100_000
            env = await request(ws, deep)
            assert env["error"]["code"] == "INVALID_PARAM", env
            env = await request(ws, {"path": "after-deep.txt", "content": "x"})
            assert env["status"] == "success", env

            big = "x" * (3 * 1024 * 1024)
            env = await request(ws, {"path": "big.txt", "content": big})
            assert f"{len(big)} bytes" in env["text"], env["text"]

        # Several connections at once, each answered in its own order.
        async def client(n):
            async with websockets.connect(url) as ws:
                for i in range(5):
                    env = await request(ws, {"path": f"many/{n}/{i}.txt", "content": f"{n}-{i}\n"})
                    assert env["status"] == "success", env
        await asyncio.gather(*(client(n) for n in range(4)))

        # A page on another site must not be able to write files.
        try:
            async with websockets.connect(url, origin="http://evil.example") as ws:
                await request(ws, {"path": "evil.txt", "content": "x"})
        except websockets.exceptions.InvalidStatus as err:
            assert err.response.status_code == 403, err
        else:
            raise AssertionError("a foreign origin must be refused")
        # A local front end (on a dev server) is welcome.
        async with websockets.connect(url, origin="http://localhost:5173") as ws:
            env = await request(ws, {"name": "write_file", "arguments": {"path": "ui.txt", "content": "from the UI"}})
            assert env["status"] == "success", env

        assert server.poll() is None, "the server must still be running"
    finally:
        server.kill()
        server.wait()

    # A message over the limit closes the connection with 1009, "message
    # too big", and the server goes on.
    server = subprocess.Popen(
        [binary, "--root", root, "--max-request-bytes", "100000", "serve", "--ws", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stderr.readline().split()[-1]
        async with websockets.connect(url, max_size=None) as ws:
            await ws.send(json.dumps({"path": "over.txt", "content": "o" * 200_000}))
            try:
                await ws.recv()
            except websockets.exceptions.ConnectionClosedError as err:
                assert err.rcvd is not None and err.rcvd.code == 1009, err
            else:
                raise AssertionError("a message over the limit must close the connection")
        async with websockets.connect(url) as ws:
            env = await request(ws, {"path": "under.txt", "content": "u"})
            assert env["status"] == "success", env

        # 64 connections at once are served; the 65th is connected but its
        # request waits for a slot until one ends (within the handshake
        # timeout, else it is told to come back: 1013).
        held = [await websockets.connect(url) for _ in range(64)]
        extra = await websockets.connect(url)
        waiting = asyncio.ensure_future(request(extra, {"path": "under.txt", "content": "u"}))
        done, _ = await asyncio.wait([waiting], timeout=1)
        assert not done, "a 65th connection must wait"
        await held.pop().close()
        env = await asyncio.wait_for(waiting, timeout=60)
        assert env["status"] == "success", env
        for ws in held + [extra]:
            await ws.close()
    finally:
        server.kill()
        server.wait()
    # 64 sockets that connect and never send a handshake hold every slot,
    # but only until the handshake timeout: a real client gets through.
    server = subprocess.Popen(
        [binary, "--root", root, "serve", "--ws", "127.0.0.1:0",
         "--ws-handshake-timeout-ms", "1000", "--ws-idle-timeout-ms", "1500"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stderr.readline().split()[-1]
        host, port = url.removeprefix("ws://").rstrip("/").rsplit(":", 1)
        silent = [await asyncio.open_connection(host, int(port)) for _ in range(64)]
        loop = asyncio.get_running_loop()
        started = loop.time()
        # Pings every 0.2 s: a client library's own pings are no request
        # and do not keep the connection.
        async with websockets.connect(url, open_timeout=30, ping_interval=0.2) as ws:
            waited = loop.time() - started
            env = await request(ws, {"path": "past-the-silent.txt", "content": "in\n"})
            assert env["status"] == "success", env
            # Idle past its timeout, the connection is closed by the server
            # (1001, going away), pings or not; waiting for that is the
            # test, bounded.
            try:
                await asyncio.wait_for(ws.recv(), timeout=30)
            except websockets.exceptions.ConnectionClosed as closed:
                assert closed.rcvd is not None and closed.rcvd.code == 1001, closed
            else:
                raise AssertionError("an idle connection must be closed")
        assert waited < 30, waited
        for _, writer in silent:
            writer.close()
        assert server.poll() is None, "the server must still be running"
    finally:
        server.kill()
        server.wait()
    print("websocket client: ok")


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(sys.argv[1], sys.argv[2]), timeout=300))
