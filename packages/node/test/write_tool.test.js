// The installed package, tested where it was installed (a fresh folder,
// from the tarball `cargo xtask dist` built). WRITETOOL_CLI names the
// `write-tool` binary: given the same bad request, the package and the CLI
// must answer with the same envelope.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { Result, RootError, WriteTool } from 'write-tool';

const CLI = process.env.WRITETOOL_CLI;

function fresh() {
  const dir = mkdtempSync(path.join(tmpdir(), 'write-tool-'));
  const root = path.join(dir, 'root');
  mkdirSync(root);
  return { dir, root, journal: path.join(dir, 'journal') };
}

// The environment without the host settings the tests set for the
// package (which must not pass them on).
function cleanEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('WRITE_TOOL_')));
}

function cliCall(root, request) {
  const out = spawnSync(CLI, ['--root', root, '--no-journal', 'call'], { input: JSON.stringify(request), env: cleanEnv() });
  // 1: the answer is an error envelope.
  assert.equal(out.status, 1, out.stderr.toString());
  return JSON.parse(out.stdout.toString());
}

function tree(dir) {
  return readdirSync(dir, { recursive: true }).sort();
}

test('the package is installed, with its types', () => {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('write-tool/package.json', { paths: [process.cwd()] });
  assert.match(manifest, /node_modules/);
  const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
  assert.ok(existsSync(path.join(path.dirname(manifest), pkg.types)));
  assert.ok(pkg.dependencies['@bytecodealliance/preview2-shim']);
});

test('write, view, edit and patch', () => {
  const { root } = fresh();
  const tool = new WriteTool({ root });
  let r = tool.write('src/a.js', 'console.log(1);\n');
  assert.ok(r instanceof Result);
  assert.equal(r.status, 'success', r.text);
  assert.equal(r.data.operation, 'create');
  assert.equal(readFileSync(path.join(root, 'src/a.js'), 'utf8'), 'console.log(1);\n');

  r = tool.write('src/a.js', 'console.log(2);\n', { dryRun: true });
  assert.equal(r.status, 'partial');
  assert.match(r.data.diff_preview, /\+console\.log\(2\);/);
  assert.equal(readFileSync(path.join(root, 'src/a.js'), 'utf8'), 'console.log(1);\n');

  writeFileSync(path.join(root, 'three.txt'), 'one\ntwo\nthree\n');
  r = tool.view('three.txt', { first: 2, last: 2 });
  assert.equal(r.status, 'success', r.text);
  assert.match(r.text, /\ttwo/);
  assert.doesNotMatch(r.text, /\tone|\tthree/);

  r = tool.edit('src/a.js', 'console.log(1)', "console.log('one')");
  assert.equal(r.status, 'success', r.text);
  assert.equal(readFileSync(path.join(root, 'src/a.js'), 'utf8'), "console.log('one');\n");

  r = tool.applyPatch('*** Begin Patch\n*** Add File: lib/b.js\n+export const b = 2;\n*** End Patch\n');
  assert.equal(r.status, 'success', r.text);
  assert.equal(readFileSync(path.join(root, 'lib/b.js'), 'utf8'), 'export const b = 2;\n');
});

test('two tools on two roots, calls interleaved, each writes only its own', () => {
  const a = fresh();
  const b = fresh();
  const ta = new WriteTool({ root: a.root });
  const tb = new WriteTool({ root: b.root });
  assert.equal(ta.write('x.txt', 'a\n').status, 'success');
  assert.equal(tb.write('x.txt', 'b\n').status, 'success');
  assert.equal(ta.edit('x.txt', 'a', 'aa').status, 'success');
  assert.equal(readFileSync(path.join(a.root, 'x.txt'), 'utf8'), 'aa\n');
  assert.equal(readFileSync(path.join(b.root, 'x.txt'), 'utf8'), 'b\n');
});

test('revert with a journal outside the root', () => {
  const { root, journal } = fresh();
  const tool = new WriteTool({ root, journal });
  const first = tool.write('notes.txt', 'first\n');
  tool.write('notes.txt', 'second\n');
  let r = tool.revert();
  assert.equal(r.status, 'success', r.text);
  assert.equal(readFileSync(path.join(root, 'notes.txt'), 'utf8'), 'first\n');
  r = tool.revert(first.data.change_id);
  assert.equal(r.status, 'success', r.text);
  assert.ok(!existsSync(path.join(root, 'notes.txt')));

  r = tool.writeMany([{ path: 'm/1.txt', content: '1\n' }, { path: 'm/2.txt', content: '2\n' }]);
  assert.equal(r.data.operation, 'many', r.text);
  assert.equal(readFileSync(path.join(root, 'm/2.txt'), 'utf8'), '2\n');
  assert.equal(tool.revert(r.data.change_id).status, 'success');
  assert.ok(!existsSync(path.join(root, 'm/1.txt')));
});

test("two roots on one journal cannot revert each other's changes", () => {
  const a = fresh();
  const b = fresh();
  writeFileSync(path.join(a.root, 'cfg.txt'), "a's secret\n");
  writeFileSync(path.join(b.root, 'cfg.txt'), "b's own\n");
  const change = new WriteTool({ root: a.root, journal: a.journal }).write('cfg.txt', "a's new\n").data.change_id;
  const r = new WriteTool({ root: b.root, journal: a.journal }).revert(change, { force: true });
  assert.equal(r.status, 'error', r.text);
  assert.equal(readFileSync(path.join(b.root, 'cfg.txt'), 'utf8'), "b's own\n");
  assert.equal(readdirSync(a.journal).length, 2, 'one journal per root');
});

test('a root inside the journal is refused', () => {
  const { dir } = fresh();
  const base = path.join(dir, 'journals');
  mkdirSync(path.join(base, 'project'), { recursive: true });
  assert.throws(() => new WriteTool({ root: path.join(base, 'project'), journal: base }), /inside the journal/);
});

for (const [name, request] of [
  ['outside', { path: '../outside.txt', content: 'x' }],
  ['protected', { path: '.git/config', content: 'x' }],
  ['bad request', { nothing: 1 }],
  ['missing file', { name: 'Edit', arguments: { file_path: 'missing.txt', old_string: 'a', new_string: 'b' } }],
]) {
  test(`an error is the CLI's envelope and changes nothing: ${name}`, () => {
    const { dir, root } = fresh();
    mkdirSync(path.join(root, '.git'));
    const before = tree(root);
    const ours = new WriteTool({ root }).call(request);
    assert.equal(ours.status, 'error');
    assert.deepEqual(ours, cliCall(root, request));
    assert.deepEqual(tree(root), before);
    assert.ok(!existsSync(path.join(dir, 'outside.txt')));
  });
}

test("a root that does not exist gets the CLI's words", () => {
  const { dir } = fresh();
  const missing = path.join(dir, 'missing');
  let raised;
  assert.throws(() => new WriteTool({ root: missing }), (e) => {
    raised = e;
    return e instanceof RootError;
  });
  const cli = spawnSync(CLI, ['--root', missing, 'call'], { input: '{}', env: cleanEnv() });
  assert.equal(cli.status, 2);
  assert.equal(cli.stderr.toString().trim(), `write-tool: ${raised.message}`);
});

test('a journal inside the root is refused, and nothing is made', () => {
  const { root } = fresh();
  assert.throws(() => new WriteTool({ root, journal: path.join(root, 'journal') }), /inside the root/);
  assert.ok(!existsSync(path.join(root, 'journal')));
});

test('a file is not a root', () => {
  const { dir } = fresh();
  const file = path.join(dir, 'file');
  writeFileSync(file, 'x');
  assert.throws(() => new WriteTool({ root: file }), /not a directory/);
});
