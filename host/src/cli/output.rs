//! What the command line writes: envelopes on stdout, and its exit status.

use std::io::Write;

use anyhow::Context;

use serde_json::Value;
use write_tool::wire::{Envelope, ErrorCode, Status, messages};

/// Exit status for `success` and `partial` envelopes.
pub(crate) const EXIT_OK: u8 = 0;
/// Exit status for an `error` envelope.
pub(crate) const EXIT_ERROR_ENVELOPE: u8 = 1;
/// Exit status for a usage or host failure (message on stderr, no
/// envelope).
pub(crate) const EXIT_USAGE: u8 = 2;

/// Write one envelope (or other JSON document) as a line of stdout.
pub(crate) fn emit(out: &mut impl Write, json: &str, pretty: bool) -> anyhow::Result<()> {
    let text = if pretty {
        serde_json::from_str::<Value>(json)
            .and_then(|v| serde_json::to_string_pretty(&v))
            .unwrap_or_else(|_| json.to_owned())
    } else {
        json.to_owned()
    };
    writeln!(out, "{text}")
        .and_then(|()| out.flush())
        .context("cannot write to stdout")
}

/// An envelope as a person at the command line reads it (`write`,
/// `call`): where the component's message is about a host option, it
/// names the flag that sets it. `serve` answers programs and the models
/// behind them, which cannot pass a flag: they get the message as it is.
pub(crate) fn with_flag_hints(envelope: String) -> String {
    let hint = if envelope.contains(messages::EMPTY_CONTENT) {
        "Pass --allow-empty to write an empty file."
    } else if envelope.contains(messages::CONTENT_OVER_LIMIT) {
        "Pass --max-content-bytes N to raise the limit."
    } else {
        return envelope;
    };
    let Ok(mut decoded) = Envelope::from_json(&envelope) else {
        return envelope;
    };
    match &mut decoded.error {
        Some(error) if error.code == ErrorCode::InvalidParam => {
            error.message = format!("{} {hint}", error.message);
            decoded.text.clone_from(&error.message);
            decoded.to_json()
        }
        _ => envelope,
    }
}

/// The exit status for an envelope.
pub(crate) fn exit_code(envelope: &str) -> u8 {
    match Status::of_json(envelope) {
        Some(Status::Success | Status::Partial) => EXIT_OK,
        _ => EXIT_ERROR_ENVELOPE,
    }
}
