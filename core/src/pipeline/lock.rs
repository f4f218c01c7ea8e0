//! Stage 3, **the optimistic lock** (`docs/contract.md#parameters`): a
//! write that names what it expects of the file on disk is refused with
//! `CONFLICT` when the file differs, or does not exist; and the lock
//! values every answer carries for the next write.

use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};
use write_tool_wire::LockValues;

use crate::error::ToolError;
use crate::fs::Existing;
use crate::params::Request;

/// Whether the request names any lock parameter.
pub(super) fn requested(request: &Request) -> bool {
    request.expected_mtime_ms.is_some()
        || request.expected_size_bytes.is_some()
        || request.expected_sha256.is_some()
        || request.base.is_some()
}

/// Compare the request's lock parameters with the file on disk, shown as
/// `display`.
pub(super) fn check(
    request: &Request,
    base: Option<&str>,
    existing: Option<&Existing>,
    display: &str,
) -> Result<(), ToolError> {
    if !requested(request) && base.is_none() {
        return Ok(());
    }
    let Some(existing) = existing else {
        return Err(ToolError::vanished(display));
    };
    if let Some(size) = request.expected_size_bytes
        && size != existing.bytes.len() as u64
    {
        return Err(ToolError::changed(display));
    }
    if let Some(mtime) = request.expected_mtime_ms
        && Some(mtime) != existing.modified.and_then(mtime_ms)
    {
        return Err(ToolError::changed(display));
    }
    if let Some(hash) = &request.expected_sha256
        && *hash != sha256_hex(&existing.bytes)
    {
        return Err(ToolError::changed(display));
    }
    if let Some(base) = base
        && base != base_of(&existing.bytes)
    {
        return Err(ToolError::changed_since_viewed(display));
    }
    Ok(())
}

/// The version token of a file that holds `bytes` (`data.view.base`):
/// XXH3-128, 32 lowercase hex digits. Not SHA-256, which costs as much in
/// the component as the rest of a view of 1 MiB (BENCHMARKS.md#view): it
/// tells a change from another writer, who does not choose contents to
/// collide with what the model saw.
pub(super) fn base_of(bytes: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

/// The lock values of a file that holds `bytes`, last modified at
/// `modified`; its hash only when `sha256` asks for it (hashing a large
/// file costs as much as diffing it).
pub(super) fn values(bytes: &[u8], modified: Option<SystemTime>, sha256: bool) -> LockValues {
    LockValues {
        expected_mtime_ms: modified.and_then(mtime_ms),
        expected_size_bytes: bytes.len() as u64,
        expected_sha256: sha256.then(|| sha256_hex(bytes)),
    }
}

/// A modification time in whole milliseconds since the epoch, as the lock
/// parameters take it.
pub(super) fn mtime_ms(modified: SystemTime) -> Option<i64> {
    let ms = match modified.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).ok()?,
        Err(before) => -i64::try_from(before.duration().as_millis()).ok()?,
    };
    Some(ms)
}

/// Lowercase hex SHA-256 of `bytes`.
pub(super) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
