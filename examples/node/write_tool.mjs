// The write-tool component under Node.js (npm @bytecodealliance/jco and
// @bytecodealliance/preview2-shim).
//
//   write-tool component -o write_tool.wasm   # the same file the CLI runs
//   npm install && npm run transpile          # jco: component -> gen/
//   node write_tool.mjs ROOT
//
// ROOT is preopened as ".", the only directory the component can see.

import { _setPreopens } from '@bytecodealliance/preview2-shim/filesystem';

const root = process.argv[2];
if (!root) {
  console.error('usage: node write_tool.mjs ROOT');
  process.exit(2);
}
_setPreopens({ '.': root });

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

env = JSON.parse(tool.call(JSON.stringify({ path: '../outside.txt', content: 'x' })));
console.log(env.status, '-', env.error.code, env.error.message);
if (env.error.code !== 'ACCESS_DENIED') process.exit(1);
