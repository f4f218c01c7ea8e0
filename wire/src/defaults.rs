//! The limits a host gets when it sets none (`docs/contract.md#limits`).

/// Largest `content` accepted, in bytes: 16 MiB. Larger content is refused
/// with `INVALID_PARAM` naming the limit.
pub const MAX_CONTENT_BYTES: u64 = 16 << 20;

/// Bound on the diff algorithm for the largest texts, in milliseconds
/// (`docs/contract.md#diff`).
pub const DIFF_TIMEOUT_MS: u64 = 1_000;

/// Wall-time bound on one call, in milliseconds. The component cannot
/// enforce it; hosts do (the wasmtime host with epoch interruption).
pub const CALL_TIMEOUT_MS: u64 = 30_000;

/// The journal's bound on its size (saved contents and records), in bytes:
/// 1 GiB (`docs/contract.md#journal`).
pub const JOURNAL_MAX_BYTES: u64 = 1 << 30;

/// The journal's bound on the changes it keeps: 10,000.
pub const JOURNAL_MAX_CHANGES: u64 = 10_000;

/// The journal's bound on a change's age, in days: 30.
pub const JOURNAL_MAX_AGE_DAYS: u64 = 30;

/// Most files one `write_many` writes: 100.
pub const MANY_MAX_FILES: u64 = 100;

/// Most bytes of content one `write_many` carries in all: 64 MiB.
pub const MANY_MAX_BYTES: u64 = 64 << 20;
