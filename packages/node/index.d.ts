// Types of the write-tool package's API (index.js). The envelope's fields
// are described in the project's docs/contract.md#envelope.

/** `success` (written), `partial` (a dry run, or a cut preview) or `error` (nothing changed). */
export type Status = 'success' | 'partial' | 'error';

/** The envelope as the component answers it. */
export interface Envelope {
  status: Status;
  text: string;
  data?: Record<string, unknown>;
  error?: { code: string; message?: string };
  [key: string]: unknown;
}

/** The root (or the journal) is not a directory the tool can use. */
export class RootError extends Error {}

/** One envelope: what a call did, for a program and for a model. */
export class Result {
  readonly status: Status;
  /** What a model reads. */
  readonly text: string;
  /** The diff, the lock values, the change id, … */
  readonly data: Record<string, unknown>;
  /** `{code, message}` when `status` is `error`. */
  readonly error: { code: string; message?: string } | null;
  /** The whole envelope. */
  readonly envelope: Envelope;
  /** Whether the call did what it was asked (a dry run included). */
  readonly ok: boolean;
}

export interface Options {
  /** The project root: the one directory the component may change. */
  root: string;
  /** A directory outside the root for the journal (undo); made if missing. */
  journal?: string | null;
}

/** One file of a `writeMany`. */
export interface FileWrite {
  path: string;
  content: string;
  [key: string]: unknown;
}

/** The tool on one project root. Every call runs in a fresh instance. */
export class WriteTool {
  constructor(options: Options);
  readonly root: string;
  readonly journal: string | null;
  /** Any request the component reads (a tool call of any provider's shape, or the arguments). */
  call(request: Record<string, unknown>): Envelope;
  write(path: string, content: string, options?: { dryRun?: boolean }): Result;
  edit(path: string, oldText: string, newText: string, options?: { replaceAll?: boolean }): Result;
  view(path: string, options?: { first?: number; last?: number }): Result;
  applyPatch(patch: string): Result;
  writeMany(writes: FileWrite[]): Result;
  revert(changeId?: string, options?: { force?: boolean }): Result;
  /** The tools' JSON Schema, to hand a model. */
  definition(): unknown;
}
