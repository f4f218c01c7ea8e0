//! The envelopes the host writes itself.
//!
//! The guest answers every call it finishes. When it cannot finish (the
//! time bound or memory cap stopped it, or it trapped) the host answers in
//! the same format, with code `EXECUTION_ERROR`. A request that cannot
//! reach the guest at all (not UTF-8, or over the size limit) is answered
//! with `INVALID_PARAM`.

use write_tool_wire::{Envelope, ErrorCode};

/// The `INVALID_PARAM` envelope JSON for a request that cannot reach the
/// guest.
pub fn invalid_request(message: &str) -> String {
    Envelope::refused(ErrorCode::InvalidParam, message).to_json()
}

/// What a request over the size limit is told, on every surface.
pub fn request_too_long(limit: usize) -> String {
    format!("Request is over the limit of {limit} bytes; it was not read.")
}
