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
import json
import os
import subprocess
import sys

from jsonschema import Draft202012Validator
from k8s_agent_sandbox.connector import SandboxConnector
from k8s_agent_sandbox.exceptions import SandboxRequestError
from k8s_agent_sandbox.files.filesystem import Filesystem
from k8s_agent_sandbox.models import SandboxdInClusterConnectionConfig
from mcp import Client


def raw(port, method, path, body=None, headers=None, with_headers=False):
    """One request, as it comes: no client library in the way."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    if with_headers:
        return response.status, data, {k.lower(): v for k, v in response.getheaders()}
    return response.status, data


def start(binary, root, journal, *flags):
    """`serve --ws` on a free port: the process, its port."""
    server = subprocess.Popen(
        [binary, "--root", root, "--journal", journal, *flags, "serve", "--ws", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = server.stderr.readline()
    assert line.startswith("write-tool: serving ws://"), line
    return server, int(line.split()[-1].removeprefix("ws://").rstrip("/").rsplit(":", 1)[1])


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
    # A link is removed as itself, as `rm` removes it; its target stays.
    files.write("api/kept.txt", "kept\n")
    os.symlink("kept.txt", f"{root}/api/alias.txt")
    files.delete("api/alias.txt")
    assert not os.path.lexists(f"{root}/api/alias.txt")
    assert files.read("api/kept.txt") == b"kept\n"
    try:
        files.delete("api/sub")
    except SandboxRequestError as err:
        assert err.__cause__.response.status_code == 409, err.__cause__
    else:
        raise AssertionError("a directory is not removed")

    # Bytes as sent: an update keeps none of the old file's line endings.
    files.write("api/endings.txt", b"a\r\nb\r\n")
    files.write("api/endings.txt", b"c\nd\n")
    assert files.read("api/endings.txt") == b"c\nd\n"
    # A mode is checked, not applied.
    status, body = raw(port, "PUT", "/v1/files/api%2Frun.sh?mode=0755", b"echo hi\n")
    assert status == 204, (status, body)
    assert not os.access(f"{root}/api/run.sh", os.X_OK), "no call makes a file executable"

    # What `view` does not show, the file API does not read or list.
    os.makedirs(f"{root}/.git/hooks", exist_ok=True)
    with open(f"{root}/.git/config", "w") as f:
        f.write("[core]\n")
    with open(f"{root}/api/.hidden", "w") as f:
        f.write("x\n")
    listed = [e.name for e in files.list(".")]
    assert ".git" not in listed and listed == sorted(listed), listed
    assert ".hidden" not in [e.name for e in files.list("api")]
    # A link inside the root that leads into .git, then `..`: the place
    # `view` judged (the root), not the one the link leads to.
    os.symlink(".git/hooks", f"{root}/h")
    status, body = raw(port, "GET", "/v1/files/h%2F..")
    assert status == 200 and b"config" not in body and b".git" not in body, (status, body)
    status, body = raw(port, "GET", "/v1/files/h%2F..%2Fconfig")
    assert status == 404, (status, body)
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
    # Any bytes, as the spec's octet-stream: binary, or text in another
    # encoding, read back as they were sent.
    for name, data in [("api/binary.bin", b"\xff\xfe\x00\x89PNG"), ("api/cp1252.txt", "café\r\n".encode("cp1252"))]:
        files.write(name, data)
        assert files.read(name) == data, name
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
    status, _ = raw(port, "GET", "/v1/health", headers={"Origin": "http://localhost:5173"})
    assert status == 200, "a loopback origin is welcome"

    # Stateless: no session, and nothing but POST on /mcp.
    initialize = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
    mcp_headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    status, body, headers = raw(port, "POST", "/mcp", initialize, headers=mcp_headers, with_headers=True)
    assert status == 200 and "mcp-session-id" not in headers, (status, headers, body)
    for method in ("GET", "DELETE"):
        status, _ = raw(port, method, "/mcp", headers={"Accept": "text/event-stream"})
        assert status == 405, (method, status)
    # Bodies over the port's limit (1 MiB here), counted as the request
    # they become.
    status, _ = raw(port, "PUT", "/v1/files/api%2Fbig.txt", b"\x01" * (300 * 1024))
    assert status == 413, status
    status, _ = raw(port, "POST", "/mcp", b" " * (2 << 20), headers=mcp_headers)
    assert status == 413, status


async def undo_through_mcp(port):
    """A file API write is a change the journal can take back."""
    async with Client(f"http://127.0.0.1:{port}/mcp", mode="2026-07-28") as client:
        result = await client.call_tool("checkpoint", {"checkpoint": "before-put"})
        assert not result.is_error, result
        status, body = raw(port, "PUT", "/v1/files/api%2Fundone.txt", b"undo me\n")
        assert status == 204, (status, body)
        result = await client.call_tool("revert", {"to": "before-put"})
        assert not result.is_error, result.structured_content


def quiesce(binary, root, journal, port):
    """Quiesce holds the calls and seals the journal; the next start
    checks the seal, once."""
    status, body = raw(port, "POST", "/quiesce")
    assert status == 200, (status, body)
    sealed = json.loads(body)
    assert sealed["quiesced"] is True, sealed
    seal = sealed["journal"]["seal"]
    assert seal["head"]["seq"] >= 1 and seal["files"], seal
    assert all(f["held"] for f in seal["files"]), seal
    assert len(sealed["journal"]["digest"]) == 64, sealed
    status, body = raw(port, "PUT", "/v1/files/api%2Fheld.txt", b"no\n")
    assert status == 503 and b"quiesced" in body, (status, body)
    status, body = raw(port, "POST", "/resume")
    assert status == 200, (status, body)
    # The seal is checked and taken away: nothing changed meanwhile.
    assert json.loads(body)["journal"]["check"]["ok"] is True, body
    status, body = raw(port, "PUT", "/v1/files/api%2Fresumed.txt", b"yes\n")
    assert status == 204, (status, body)
    status, body = raw(port, "POST", "/quiesce")
    assert status == 200, (status, body)
    return json.loads(body)["journal"]["seal"]


def main(binary, root, journal):
    server, port = start(binary, root, journal, "--allow-delete", "--max-request-bytes", str(1 << 20))
    try:
        for mode in ("legacy", "auto", "2026-07-28"):
            asyncio.run(asyncio.wait_for(mcp_over_http(port, mode, root), timeout=120))
        files_api(port, root)
        asyncio.run(asyncio.wait_for(undo_through_mcp(port), timeout=120))
        seal = quiesce(binary, root, journal, port)
    finally:
        server.terminate()
        server.wait(timeout=60)

    # Started again on the sealed journal: it matches, and says so; the
    # seal is taken away once checked. Sealed again, and stopped.
    server, port = start(binary, root, journal)
    try:
        line = server.stderr.readline()
        assert "match the seal" in line and "no longer" not in line, line
        # Without --allow-delete, DELETE is refused and the file stays.
        status, body = raw(port, "DELETE", "/v1/files/api%2Fhello.txt")
        assert status == 403, (status, body)
        status, body = raw(port, "POST", "/quiesce")
        assert status == 200, (status, body)
    finally:
        server.terminate()
        server.wait(timeout=60)
    # A file the last change wrote, changed while the sandbox was away.
    sealed_file = seal["files"][0]["path"]
    with open(os.path.join(root, sealed_file), "a") as f:
        f.write("changed behind the journal's back\n")
    server, port = start(binary, root, journal)
    try:
        line = server.stderr.readline()
        assert "no longer match" in line and sealed_file in line, line
    finally:
        server.terminate()
        server.wait(timeout=60)
    print("sidecar client: ok")


if __name__ == "__main__":
    main(*sys.argv[1:4])
