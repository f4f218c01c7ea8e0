//! One line per call on stderr, through `tracing` (`docs/contract.md#cli`):
//! the surface, the status and error code, the path, the bytes written and
//! the host's time in milliseconds; never the content. Events go to the
//! target `write_tool::call` at level `info`; the CLI installs a subscriber
//! that shows them when `RUST_LOG` asks (`RUST_LOG=write_tool=info`), as
//! text or, with `--log-format json`, as one JSON object per line. With
//! nothing asked (and no metrics, `crate::metrics`), the envelope is not
//! even read again.

use std::time::Instant;

use write_tool_wire::{Envelope, Status};

/// The target of the per-call events.
pub const TARGET: &str = "write_tool::call";

/// Record one call on `surface` (`call`, `serve`, `ws`, `mcp`, `write`, …)
/// that answered with the envelope `json`, started at `started`; its
/// arguments, `request`, name the path where the envelope's compact form
/// does not.
pub fn call(surface: &'static str, request: Option<&str>, json: &str, started: Instant) {
    let logging = tracing::enabled!(target: TARGET, tracing::Level::INFO);
    if !logging && !crate::metrics::enabled() {
        return;
    }
    let ms = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX) as f64 / 1000.0;
    let Ok(envelope) = Envelope::from_json(json) else {
        tracing::info!(target: TARGET, surface, status = "unreadable", ms);
        return;
    };
    crate::metrics::record(surface, &envelope, started);
    if !logging {
        return;
    }
    let status = match envelope.status {
        Status::Success => "success",
        Status::Partial => "partial",
        Status::Error => "error",
    };
    let code = envelope.error.as_ref().map(|e| e.code.as_str());
    let asked = match (&envelope.context.path_resolved, request) {
        (None, Some(request)) => write_tool_wire::request::path_of(request),
        _ => None,
    };
    let path = envelope
        .context
        .path_resolved
        .as_deref()
        .or(asked.as_deref());
    let bytes = envelope.bytes_written();
    tracing::info!(target: TARGET, surface, status, code, path, bytes, ms);
}
