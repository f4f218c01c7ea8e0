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
