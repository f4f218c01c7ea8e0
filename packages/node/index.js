// write-tool: the file-changing tool AI code agents call, as a library.
//
// The package carries the write-tool component transpiled by jco (gen/,
// built from the same bytes `write-tool component` writes) and runs it on
// @bytecodealliance/preview2-shim. The component can touch one directory,
// the project root: it is its only preopen, but for the journal, outside
// the root, when one is given. The envelope and every rule are in the
// project's docs/contract.md.

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

import { _setEnv } from '@bytecodealliance/preview2-shim/cli';
import { _setPreopens } from '@bytecodealliance/preview2-shim/filesystem';
import { WASIShim } from '@bytecodealliance/preview2-shim/instantiation';

import { instantiate } from './gen/write_tool.js';

// The preopen's name the component is told is its journal, never a root.
const JOURNAL = 'journal';

// Compiled once per process, instantiated once per call.
const modules = new Map();
function getCoreModule(name) {
  let module = modules.get(name);
  if (!module) {
    module = new WebAssembly.Module(readFileSync(new URL(`./gen/${name}`, import.meta.url)));
    modules.set(name, module);
  }
  return module;
}

// WASI as the shim provides it, keyed as jco's `instantiate` looks it up.
const imports = new WASIShim().getImportObject();

/** The root (or the journal) is not a directory the tool can use. */
export class RootError extends Error {
  constructor(message) {
    super(message);
    this.name = 'RootError';
  }
}

const STRERROR = {
  ENOENT: 'No such file or directory',
  ENOTDIR: 'Not a directory',
  EACCES: 'Permission denied',
  ELOOP: 'Too many levels of symbolic links',
};

function directory(given, what) {
  let real;
  try {
    real = realpathSync(given);
  } catch (e) {
    // The CLI's words for the same root (Rust's `io::Error`).
    const reason = STRERROR[e.code];
    const said = reason ? `${reason} (os error ${Math.abs(e.errno)})` : e.message;
    throw new RootError(`${what} is not a usable directory: ${given}: ${said}`);
  }
  if (!statSync(real).isDirectory()) {
    throw new RootError(`${what} is not a usable directory: ${given}: not a directory`);
  }
  return real;
}

// `wanted` with its nearest existing ancestor's links resolved, as the
// directory would be once made.
function realParent(wanted) {
  let head = wanted;
  const tail = [];
  for (;;) {
    try {
      return path.join(realpathSync(head), ...tail.reverse());
    } catch {
      const up = path.dirname(head);
      if (up === head) return wanted;
      tail.push(path.basename(head));
      head = up;
    }
  }
}

const inside = (p, dir) => {
  const rel = path.relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

// The root's own journal below `base`, made private where missing. `base`
// holds one journal per root, named as the CLI names it (the first 16
// bytes of the SHA-256 of the root's real path, in hex), so that a tool on
// another root given the same base cannot revert this root's changes into
// its own. A base inside the root (a model could rewrite the journal) or
// holding it (a call could write the journals), another user's, or one
// others may write is refused before anything is made.
function ownJournal(root, base) {
  const wanted = realParent(path.resolve(base));
  if (inside(wanted, root)) {
    throw new RootError(
      `the journal ${wanted} lies inside the root ${root}: a model could reach it there; keep it outside`,
    );
  }
  if (inside(root, wanted)) {
    throw new RootError(
      `the root ${root} lies inside the journal ${wanted}: a call could write the journals there; keep them apart`,
    );
  }
  mkdirSync(wanted, { recursive: true, mode: 0o700 });
  const real = directory(wanted, 'the journal');
  const stat = statSync(real);
  if ((process.getuid && stat.uid !== process.getuid()) || (stat.mode & 0o022) !== 0) {
    throw new RootError(
      `the journal ${real} is another user's or others may write it: give a directory of your own that only you can write`,
    );
  }
  const key = createHash('sha256').update(root).digest('hex').slice(0, 32);
  const own = path.join(real, key);
  mkdirSync(own, { recursive: true, mode: 0o700 });
  return own;
}

/** One envelope: what a call did, for a program and for a model. */
export class Result {
  constructor(envelope) {
    /** `success`, `partial` (a dry run, a cut preview) or `error`. */
    this.status = envelope.status ?? 'error';
    /** What a model reads. */
    this.text = envelope.text ?? '';
    /** The diff, the lock values, the change id, … */
    this.data = envelope.data ?? {};
    /** `{code, message}` when `status` is `error`. */
    this.error = envelope.error ?? null;
    /** The whole envelope. */
    this.envelope = envelope;
  }

  get ok() {
    return this.status !== 'error';
  }
}

/** The tool on one project root. */
export class WriteTool {
  /**
   * `root` must be an existing directory: the only one the component can
   * change. `journal`, a directory of the user's outside it (made, private,
   * if missing), keeps each root's journal in a folder of its own, so that
   * `revert` can take a change back.
   */
  constructor({ root, journal } = {}) {
    if (root === undefined) throw new RootError('a root is not a usable directory: none was given');
    this.root = directory(root, 'a root');
    this.journal = null;
    if (journal !== undefined && journal !== null) {
      this.journal = ownJournal(this.root, journal);
    }
  }

  // A fresh instance per call: nothing one call does reaches the next, and
  // each tool's root is the one preopened while it runs (the shim's
  // preopens are the process's; calls are synchronous, so none interleave).
  #instance() {
    if (this.journal) {
      _setPreopens({ '.': this.root, [JOURNAL]: this.journal });
      _setEnv({ WRITE_TOOL_JOURNAL: JOURNAL });
    } else {
      _setPreopens({ '.': this.root });
      _setEnv({});
    }
    return instantiate(getCoreModule, imports).tool;
  }

  /**
   * Run one request (a tool call of any provider's shape, or the arguments
   * alone) and answer with its envelope as an object. Bad input is an
   * `error` envelope, not an exception.
   */
  call(request) {
    return JSON.parse(this.#instance().call(JSON.stringify(request)));
  }

  #run(name, args) {
    return new Result(this.call({ name, arguments: args }));
  }

  /** Write `content` to `path` (relative to the root), whole. */
  write(path, content, { dryRun = false } = {}) {
    return this.#run('Write', { path, content, dry_run: dryRun });
  }

  /** Replace `oldText` with `newText` in `path`: the one place it matches, or every one. */
  edit(path, oldText, newText, { replaceAll = false } = {}) {
    return this.#run('Edit', {
      file_path: path, old_string: oldText, new_string: newText, replace_all: replaceAll,
    });
  }

  /** A file's lines (`first` to `last`, from 1) or a directory's entries. */
  view(path, { first, last } = {}) {
    const args = { path };
    if (first !== undefined || last !== undefined) args.view_range = [first ?? 1, last ?? -1];
    return this.#run('view', args);
  }

  /** Apply a patch in the `apply_patch` format: every file it names, or none. */
  applyPatch(patch) {
    return this.#run('apply_patch', { patch });
  }

  /** Write several files (`[{path, content}]`) as one change: all, or none. */
  writeMany(writes) {
    return this.#run('write_many', { writes });
  }

  /** Take back a change by its id, or the latest one. Needs the journal. */
  revert(changeId, { force = false } = {}) {
    const args = { force };
    if (changeId) args.change_id = changeId;
    return this.#run('revert', args);
  }

  /** The tools' JSON Schema, to hand a model. */
  definition() {
    return JSON.parse(this.#instance().definition());
  }
}
