// The write-tool component under Node.js (npm @bytecodealliance/jco and
// @bytecodealliance/preview2-shim).
//
//   write-tool component -o write_tool.wasm   # the same file the CLI runs
//   npm install && npm run transpile          # jco: component -> gen/
//   node write_tool.mjs ROOT [JOURNAL]
//
// ROOT is preopened as ".", the only directory the component can write in.
// JOURNAL, a directory outside ROOT, is granted as the journal
// (docs/contract.md#journal): every change is then recorded with what it
// replaced, and can be reverted.

import { _setEnv } from '@bytecodealliance/preview2-shim/cli';
import { _setPreopens } from '@bytecodealliance/preview2-shim/filesystem';

const [root, journal] = process.argv.slice(2);
if (!root) {
  console.error('usage: node write_tool.mjs ROOT [JOURNAL]');
  process.exit(2);
}
if (journal) {
  // The preopen's name the component is told is its journal, never a root
  // (the component sees Node's environment, WRITE_TOOL_* settings and all).
  _setPreopens({ '.': root, journal });
  _setEnv({ ...process.env, WRITE_TOOL_JOURNAL: 'journal' });
} else {
  _setPreopens({ '.': root });
}

// Imported after the preopens are set: the component reads them on first use.
const { tool } = await import('./gen/write_tool.js');

// The typed export: an object with the envelope's fields (camelCase).
let env = tool.write('hello/from-node.txt', 'written by jco\n', false);
console.log(env.status, '-', env.text);
if (env.status !== 'success') process.exit(1);

// The JSON export: a tool call (or just its arguments) in, envelope out.
env = JSON.parse(tool.call(JSON.stringify({
  name: 'Write',
  arguments: { path: 'hello/from-node.txt', content: 'updated\n' },
})));
console.log(env.status, '-', env.text);
process.stdout.write(env.data.diff_preview);
if (env.data.operation !== 'update') process.exit(1);

// The typed edit: one place replaced, the file's format kept
// (docs/contract.md#edit).
env = tool.edit('hello/from-node.txt', [{ oldText: 'updated', newText: 'edited', replaceAll: false }], false);
console.log(env.status, '-', env.text);
if (env.status !== 'success' || env.data.edits[0].tolerance !== 'exact') process.exit(1);

env = JSON.parse(tool.call(JSON.stringify({ path: '../outside.txt', content: 'x' })));
console.log(env.status, '-', env.error.code, env.text);
if (env.error.code !== 'ACCESS_DENIED') process.exit(1);

if (journal) {
  // The latest change, the edit, taken back.
  env = tool.revert('', false);
  console.log(env.status, '-', env.text);
  if (env.status !== 'success') process.exit(1);
  // Two files at once, all or none, then both taken back by their id.
  env = JSON.parse(tool.call(JSON.stringify({
    writes: [
      { path: 'hello/a.txt', content: 'a\n' },
      { path: 'hello/b.txt', content: 'b\n' },
    ],
  })));
  console.log(env.status, '-', env.text);
  if (env.data.operation !== 'many') process.exit(1);
  env = tool.revert(env.data.change_id, false);
  console.log(env.status, '-', env.text);
  if (env.status !== 'success') process.exit(1);
}
