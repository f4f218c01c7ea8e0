//! Host-driven tests: every call goes through the real component, the real
//! wasmtime host and the real file system, in temp directories.

mod support;

/// `append`: text added at the end of a file, with a write's guarantees.
mod append;
/// Hostile paths by class, with the sandbox invariants checked for each.
mod attack;
/// A write's content as bytes, written exactly as given.
mod bytes;
/// A cancelled call stops at its commit point, and only there.
mod cancel;
/// The envelope's compact form, what a model gets by default.
mod compact;
/// Many threads through one host.
mod concurrency;
/// Creating files: texts, parents, counts.
mod create;
/// The diff preview: format, patch round trips, limits, whole counts.
mod diff;
/// Dry runs change nothing, not even directories.
mod dry_run;
/// Edits: request shapes, the matching ladder, guarantees kept.
mod edit;
/// Every encoding the detector returns: kept, or refused, never a wrong
/// guess written.
mod encodings;
/// Every error code and every kind of bad input; nothing changes on disk.
mod errors;
/// The sandbox: the escape matrix, links, special files.
mod escape;
/// Files keep their format; lock values, `create_only`, placeholders.
mod format;
/// Git's hooks and configuration outside `.git`, against a real `git`.
mod git;
/// The shape of the house: no circle of imports in any crate.
mod house;
/// The journal: records, revert, checkpoints, write_many, the chain.
mod journal;
/// The journal as an attack surface: hard links, tampering, bounds, who
/// may undo what.
mod journal_attack;
/// Host limits: content size, memory cap, time bound.
mod limits;
/// A link removed as itself, and made again by its revert.
mod links;
/// The tree's map in `docs/reference.md`: every path named exists.
mod map;
/// A stale write merged onto the file now, against `git merge-file`.
mod merge;
/// Multi-file patches: all or nothing, deletes and moves by the host's
/// leave.
mod patch;
/// Another thread swaps parts of the path for outward links mid-write.
mod race;
/// Another writer changes or creates the file at the tool's commit point.
mod race_commit;
/// What a change reads while a directory of its path is swapped.
mod race_read;
/// Several roots: `write_file`, absolute paths, other roots' names.
mod roots;
/// The component as agent runtimes run it: plain wasmtime, the root
/// preopened by its host path, no settings, JSON arguments.
mod runtimes;
/// Sessions: the version a session saw, and read-first.
mod session;
/// Anthropic's text editor tool: its commands, words and rules.
mod text_editor;
/// Replacing files: identity, permission bits, hard links, no-ops.
mod update;
/// `view`: numbered lines, pages, directories, and the write's rules.
mod view;
/// The typed `write` export and `definition`.
mod wit;
