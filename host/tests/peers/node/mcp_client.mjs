// Drive `write-tool mcp` with the official MCP TypeScript SDK's stdio
// client (a 2025-11-25 client: it opens with `initialize`).
//
// Usage: node mcp_client.mjs WRITE_TOOL ROOT [URL]
//
// With URL (`http://ADDR/mcp` of `serve --ws`), over Streamable HTTP
// instead of stdio; ROOT is then the server's root.
//
// The SDK checks every successful answer's structuredContent against the
// tool's outputSchema with Ajv (draft 7); this script checks the error
// answers the same way, and that a long call reports progress. The Rust
// test that runs this checks the files on disk.

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import Ajv from "ajv";

const [binary, root, url] = process.argv.slice(2);
const transport = url
  ? new StreamableHTTPClientTransport(new URL(url))
  : new StdioClientTransport({ command: binary, args: ["--root", root, "mcp"], env: process.env });
const client = new Client({ name: "write-tool-peer", version: "1.0.0" });
await client.connect(transport);
assert.equal(client.getServerVersion().name, "write-tool");

const listed = (await client.listTools()).tools;
const again = (await client.listTools()).tools;
assert.deepEqual(listed.map((t) => t.name), again.map((t) => t.name), "tools in one order");
const schema = listed[0].outputSchema;
assert.equal(schema.type, "object");
for (const tool of listed) assert.deepEqual(tool.outputSchema, schema, tool.name);
const valid = new Ajv({ strict: false, allErrors: true }).compile(schema);

let checked = 0;
async function call(name, args, options) {
  const result = await client.callTool({ name, arguments: args }, undefined, options);
  const envelope = result.structuredContent;
  assert.ok(valid(envelope), JSON.stringify({ errors: valid.errors, envelope }));
  assert.equal(result.isError === true, envelope.status === "error", JSON.stringify(result));
  checked += 1;
  return envelope;
}

let env = await call("Write", { path: "ts/a.txt", content: "one\n" });
assert.equal(env.data.operation, "create", JSON.stringify(env));
env = await call("Write", { path: "ts/a.txt", content: "one\ntwo\n" });
assert.match(env.data.diff_preview, /\+two/);
env = await call("view", { path: "ts/a.txt" });
assert.equal(env.data.view.kind, "file");
env = await call("view", { path: "ts" });
assert.equal(env.data.view.kind, "directory");
env = await call("Edit", { file_path: "ts/a.txt", old_string: "two", new_string: "2", envelope: "full" });
assert.equal(env.status, "success");
assert.equal(env.context.path_resolved, "ts/a.txt");
env = await call("Write", { path: "ts/dry.txt", content: "x\n", dry_run: true });
assert.equal(env.status, "partial");
env = await call("Write", { path: "../escape.txt", content: "x\n" });
assert.equal(env.error.code, "ACCESS_DENIED");
env = await call("Write", { path: "ts/no-content.txt" });
assert.equal(env.error.code, "INVALID_PARAM");

const said = [];
env = await call(
  "write_many",
  { writes: [{ path: "ts/many/1.txt", content: "1\n" }, { path: "ts/many/2.txt", content: "2\n" }] },
  { onprogress: (progress) => said.push(progress.message) },
);
assert.equal(env.data.files.length, 2);
assert.equal(said[0], "Writing 2 files as one change: ts/many/1.txt, ts/many/2.txt.", JSON.stringify(said));
env = await call("revert", { change_id: env.data.change_id });
assert.equal(env.status, "success");

assert.equal(checked, 10);
await client.close();
console.log("mcp ts client: ok");
