"""Drive the sidecar's HTTP surfaces on `write-tool serve --ws`: MCP over
Streamable HTTP with the MCP Python SDK, and agent-sandbox's file API with
its Python SDK (`k8s-agent-sandbox`, the sandboxd connection with the
pod's address resolved to loopback: no cluster).

Usage: sidecar_client.py WRITE_TOOL ROOT JOURNAL

Checks the answers, the port's Host and Origin rules, that the file API
reads only what `view` shows and that its writes go through the journal
(a revert takes them back). The Rust test that runs this checks the
files on disk.
"""

import asyncio
import http.client
import os
import subprocess
import sys

from jsonschema import Draft202012Validator
from k8s_agent_sandbox.connector import SandboxConnector
from k8s_agent_sandbox.exceptions import SandboxRequestError
from k8s_agent_sandbox.files.filesystem import Filesystem
from k8s_agent_sandbox.models import SandboxdInClusterConnectionConfig
from mcp import Client


def raw(port, method, path, body=None, headers=None):
    """One request, as it comes: no client library in the way."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, data


async def mcp_over_http(port, mode, root):
    said = []

    async def progress(step, total, message):
        said.append(message)

    async with Client(f"http://127.0.0.1:{port}/mcp", mode=mode) as client:
        tools = (await client.list_tools()).tools
        assert [t.name for t in tools] == [t.name for t in (await client.list_tools()).tools]
        schema = tools[0].output_schema
        name = f"http-{mode}.txt"
        result = await client.call_tool("Write", {"path": name, "content": f"over {mode}\n"})
        assert not result.is_error, result
        Draft202012Validator(schema).validate(result.structured_content)
        result = await client.call_tool("view", {"path": name})
        assert result.structured_content["data"]["view"]["kind"] == "file", result
        writes = [{"path": f"http-{mode}/{i}.txt", "content": f"{i}\n"} for i in range(3)]
        result = await client.call_tool("write_many", {"writes": writes}, progress_callback=progress)
        assert result.structured_content["data"]["operation"] == "many", result
        assert said[:1] == [f"Writing 3 files as one change: http-{mode}/0.txt, http-{mode}/1.txt, http-{mode}/2.txt."], said
        result = await client.call_tool("Write", {"path": "../out.txt", "content": "x"})
        assert result.is_error and result.structured_content["error"]["code"] == "ACCESS_DENIED", result


def files_api(port, root):
    config = SandboxdInClusterConnectionConfig(mode="in-cluster-pod-ip", rest_port=port)
    connector = SandboxConnector("sbx", "default", config, k8s_helper=None, get_pod_ip=lambda: "127.0.0.1")
    assert connector.is_sandboxd()
    files = Filesystem(connector, None, "write-tool-peer")

    files.write("api/hello.txt", "hello\r\nworld\n")
    assert files.read("api/hello.txt") == b"hello\r\nworld\n", "the bytes as sent"
    files.write("api/hello.txt", b"second\n")
    assert files.read("api/hello.txt") == b"second\n"
    assert files.exists("api/hello.txt") and not files.exists("api/nothing.txt")
    names = {e.name: e for e in files.list("api")}
    assert names["hello.txt"].type == "file" and names["hello.txt"].size == 7, names
    files.write("api/sub/deep.txt", "deep\n")
    names = {e.name: e for e in files.list("api")}
    assert names["sub"].type == "directory", names

    # Deleting is the host's to allow; this server allows it, through the
    # journal.
    files.write("api/gone.txt", "bye\n")
    files.delete("api/gone.txt")
    assert not files.exists("api/gone.txt")
    try:
        files.delete("api/sub")
    except SandboxRequestError as err:
        assert err.__cause__.response.status_code == 409, err.__cause__
    else:
        raise AssertionError("a directory is not removed")

    # What `view` does not show, the file API does not read.
    os.makedirs(f"{root}/.git", exist_ok=True)
    with open(f"{root}/.git/config", "w") as f:
        f.write("[core]\n")
    status, body = raw(port, "GET", "/v1/files/.git%2Fconfig")
    assert status == 403, (status, body)
    with open(f"{root}/api/linked.txt", "w") as f:
        f.write("linked\n")
    os.link(f"{root}/api/linked.txt", f"{root}/linked-too.txt")
    status, body = raw(port, "GET", "/v1/files/api%2Flinked.txt")
    assert status == 403 and b"hard links" in body, (status, body)
    status, body = raw(port, "GET", "/v1/files/..%2Fescape.txt")
    assert status == 403, (status, body)
    status, body = raw(port, "PUT", "/v1/files/..%2Fescape.txt", b"x")
    assert status == 403, (status, body)
    status, body = raw(port, "PUT", "/v1/files/api%2Fbinary.bin", b"\xff\xfe\x00")
    assert status == 400, (status, body)
    status, body = raw(port, "PUT", "/v1/files/api%2Fmode.txt?mode=9999", b"x")
    assert status == 400, (status, body)
    status, body = raw(port, "GET", "/v1/health")
    assert status == 200 and b'"status":"ok"' in body, (status, body)
    status, body = raw(port, "GET", "/v1/metadata")
    assert status == 200 and b"WRITE_TOOL_VERSION" in body, (status, body)

    # The port's rules: a name that is not this machine's, a page from
    # elsewhere.
    status, _ = raw(port, "GET", "/v1/health", headers={"Host": "evil.example.com"})
    assert status == 403, status
    status, _ = raw(port, "PUT", "/v1/files/evil.txt", b"x", headers={"Origin": "https://evil.example.com"})
    assert status == 403, status
    status, _ = raw(port, "POST", "/mcp", b"{}", headers={"Origin": "https://evil.example.com", "Content-Type": "application/json"})
    assert status == 403, status


async def undo_through_mcp(port):
    """A file API write is a change the journal can take back."""
    async with Client(f"http://127.0.0.1:{port}/mcp", mode="2026-07-28") as client:
        result = await client.call_tool("checkpoint", {"checkpoint": "before-put"})
        assert not result.is_error, result
        status, body = raw(port, "PUT", "/v1/files/api%2Fundone.txt", b"undo me\n")
        assert status == 204, (status, body)
        result = await client.call_tool("revert", {"to": "before-put"})
        assert not result.is_error, result.structured_content


def main(binary, root, journal):
    server = subprocess.Popen(
        [binary, "--root", root, "--journal", journal, "--allow-delete", "serve", "--ws", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stderr.readline()
        assert line.startswith("write-tool: serving ws://"), line
        port = int(line.split()[-1].removeprefix("ws://").rstrip("/").rsplit(":", 1)[1])
        for mode in ("legacy", "auto", "2026-07-28"):
            asyncio.run(asyncio.wait_for(mcp_over_http(port, mode, root), timeout=120))
        files_api(port, root)
        asyncio.run(asyncio.wait_for(undo_through_mcp(port), timeout=120))
    finally:
        server.terminate()
        server.wait(timeout=60)
    print("sidecar client: ok")


if __name__ == "__main__":
    main(*sys.argv[1:4])
