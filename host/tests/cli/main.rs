//! The `write-tool` binary as scripts drive it: stdout holds only
//! envelopes, exit codes follow `docs/contract.md#cli`.

/// The commands, their exit codes and their input forms.
mod basic;
/// The compile cache: reuse, corruption, and caches that cannot be used.
mod cache;
/// A drain on SIGTERM whatever the client does.
mod drain;
/// Crashes, full disks, read-only roots, protected paths, hostile input and
/// a long-running `serve`.
mod hardening;
/// Idempotency keys: a repeat answered from the journal, after a kill
/// too, and a key with other arguments refused.
mod idempotency;
/// The journal's commands: undo, checkpoints, history, write-many, verify.
mod journal;
/// Journal directories others could write, links, roots made again or
/// gone, homes that cannot hold one.
mod journal_trust;
/// The per-call log, and no content in any log.
mod logs;
/// Requests nested 100,000 levels deep, and MCP lines over the limit, on
/// every stdio surface: answered, and the server goes on.
mod nesting;
/// A replaced or restored file never gains privilege.
mod privilege;
/// A `write-tool serve` driven line by line.
mod server;

pub use write_tool_test_support::process::{
    assert_usage_error, envelope, root_arg, run, run_cmd, run_on_terminal,
};
pub use write_tool_test_support::{bin_str, cache_dir};
