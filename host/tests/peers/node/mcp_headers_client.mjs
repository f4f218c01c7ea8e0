// The MCP TypeScript SDK's v2 client (`@modelcontextprotocol/client`,
// pinned to MCP 2026-07-28) over Streamable HTTP, with the operator's
// token: it sends SEP-2243's `Mcp-Method` and `Mcp-Name` on every request
// and the server takes them. A fetch that rewrites a call's header on its
// way (a middlebox routing on headers would see another tool, or another
// method) is refused with HEADER_MISMATCH (-32020) before the call runs.
//
// Usage: node mcp_headers_client.mjs URL TOKEN
//
// The Rust test that runs this checks the files on disk.

import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, token] = process.argv.slice(2);

const sent = [];
let rewrite = null;
async function fetching(input, init) {
  const headers = new Headers(init?.headers);
  if (headers.get("mcp-method") === "tools/call") {
    sent.push([headers.get("mcp-method"), headers.get("mcp-name")]);
    rewrite?.(headers);
  }
  return fetch(input, { ...init, headers });
}

const transport = new StreamableHTTPClientTransport(new URL(url), {
  fetch: fetching,
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client(
  { name: "write-tool-headers-peer", version: "1.0.0" },
  { versionNegotiation: { mode: { pin: "2026-07-28" } } },
);
await client.connect(transport);
assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");

async function write(path) {
  const result = await client.callTool({ name: "Write", arguments: { path, content: `${path}\n` } });
  assert.equal(result.structuredContent.status, "success", JSON.stringify(result));
}

async function refused(path, header) {
  await assert.rejects(
    client.callTool({ name: "Write", arguments: { path, content: "x\n" } }),
    (error) => {
      assert.equal(error.code, -32020, String(error));
      assert.match(error.message, new RegExp(`${header} header`), String(error));
      return true;
    },
  );
}

await write("ts-headers/sent.txt");
assert.deepEqual(sent.at(-1), ["tools/call", "Write"], JSON.stringify(sent));
// The body writes; the headers say it is a `view`, a read.
rewrite = (headers) => headers.set("mcp-name", "view");
await refused("ts-headers/renamed.txt", "Mcp-Name");
rewrite = (headers) => headers.set("mcp-method", "tools/list");
await refused("ts-headers/remethod.txt", "Mcp-Method");
rewrite = null;
await write("ts-headers/after.txt");
await client.close();
console.log("mcp ts headers client: ok");
