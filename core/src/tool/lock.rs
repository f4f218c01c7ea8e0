//! The optimistic lock (`docs/contract.md#parameters`): a write that names
//! what it expects of the file on disk is refused with `CONFLICT` when the
//! file differs, or does not exist.

use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::error::ToolError;
use crate::fs::Existing;
use crate::params::Request;

/// Whether the request names any lock parameter.
pub(super) fn requested(request: &Request) -> bool {
    request.expected_mtime_ms.is_some()
        || request.expected_size_bytes.is_some()
        || request.expected_sha256.is_some()
}

/// Compare the request's lock parameters with the file on disk.
pub(super) fn check(request: &Request, existing: Option<&Existing>) -> Result<(), ToolError> {
    if !requested(request) {
        return Ok(());
    }
    let Some(existing) = existing else {
        return Err(ToolError::conflict());
    };
    if let Some(size) = request.expected_size_bytes
        && size != existing.bytes.len() as u64
    {
        return Err(ToolError::conflict());
    }
    if let Some(mtime) = request.expected_mtime_ms
        && Some(mtime) != existing.modified.and_then(mtime_ms)
    {
        return Err(ToolError::conflict());
    }
    if let Some(hash) = &request.expected_sha256
        && *hash != sha256_hex(&existing.bytes)
    {
        return Err(ToolError::conflict());
    }
    Ok(())
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
