//! What the command line writes: envelopes on stdout, and its exit status.

use std::io::Write;

use anyhow::Context;

use serde_json::Value;
use write_tool::wire::printable::unprintable;
use write_tool::wire::{Envelope, ErrorCode, Status, messages};

/// Exit status for `success` and `partial` envelopes.
pub(crate) const EXIT_OK: u8 = 0;
/// Exit status for an `error` envelope.
pub(crate) const EXIT_ERROR_ENVELOPE: u8 = 1;
/// Exit status for a usage or host failure (message on stderr, no
/// envelope).
pub(crate) const EXIT_USAGE: u8 = 2;

/// Write one envelope (or other JSON document) as a line of stdout.
/// Print the envelope of a person's command on stdout, its messages
/// naming flags where they name settings, and say the exit code.
pub(crate) fn answer_person(envelope: String, pretty: bool) -> anyhow::Result<u8> {
    let envelope = for_a_person(envelope);
    emit(&mut std::io::stdout(), &envelope, pretty)?;
    Ok(exit_code(&envelope))
}

pub(crate) fn emit(out: &mut impl Write, json: &str, pretty: bool) -> anyhow::Result<()> {
    let text = if pretty {
        serde_json::from_str::<Value>(json)
            .and_then(|v| serde_json::to_string_pretty(&v))
            .unwrap_or_else(|_| json.to_owned())
    } else {
        json.to_owned()
    };
    writeln!(out, "{}", safe_json(&text))
        .and_then(|()| out.flush())
        .context("cannot write to stdout")
}

/// JSON text with every [`unprintable`] character escaped (`\uXXXX`):
/// the same JSON value, which a terminal shows without acting on it.
/// Outside strings JSON holds only its whitespace (newlines and tabs of
/// pretty output, kept); inside them serde escapes the C0 controls, so
/// what is left to escape is DEL, C1 and the invisible format characters.
pub(crate) fn safe_json(json: &str) -> std::borrow::Cow<'_, str> {
    let escape = |c: char| unprintable(c) && !matches!(c, '\n' | '\t' | '\r');
    if !json.chars().any(escape) {
        return std::borrow::Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if escape(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Text for a person's terminal: every [`unprintable`] character shown as
/// `\u{XXXX}`.
pub(crate) fn printable(text: &str) -> String {
    write_tool::wire::printable::printable(text, false)
}

/// The settings a model's host sets, as the flags a person passes, in the
/// component's messages (`docs/contract.md#cli`).
const FLAGS_FOR_SETTINGS: [(&str, &str); 6] = [
    (
        "grant the tool a journal directory (WRITE_TOOL_JOURNAL)",
        "keep the journal (leave out --no-journal, or pass --journal DIR)",
    ),
    (
        "it has to grant the tool a directory for it (WRITE_TOOL_JOURNAL)",
        "leave out --no-journal, or pass --journal DIR",
    ),
    (
        "the host allows them with WRITE_TOOL_ALLOW_DELETE",
        "pass --allow-delete",
    ),
    ("(WRITE_TOOL_ALLOW_DELETE)", "(--allow-delete)"),
    ("('force': true)", "(--force)"),
    ("create_only", "--create-only"),
];

/// An envelope as a person at the command line reads it (`write`, `edit`,
/// `patch`, `write-many`, `undo`): where the component's message is about
/// a host setting, it names the flag that sets it. `call` and the servers
/// answer programs and the models behind them, which cannot pass a flag:
/// they get the message as it is.
pub(crate) fn for_a_person(envelope: String) -> String {
    let named = FLAGS_FOR_SETTINGS.iter().any(|(s, _)| envelope.contains(s));
    if !named {
        return with_flag_hints(envelope);
    }
    let Ok(mut decoded) = Envelope::from_json(&envelope) else {
        return envelope;
    };
    if let Some(error) = &mut decoded.error {
        for (setting, flag) in FLAGS_FOR_SETTINGS {
            error.message = error.message.replace(setting, flag);
        }
        decoded.text.clone_from(&error.message);
    }
    with_flag_hints(decoded.to_json())
}

/// An envelope as a person at the command line reads it: where the
/// component's message is about a host option, it names the flag that sets
/// it.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What a terminal would act on is escaped, and the JSON is the same
    /// value: an ESC, a C1 CSI, a right-to-left override, a line separator.
    #[test]
    fn unprintable_characters_are_escaped_and_the_value_kept() {
        let value =
            serde_json::json!({"name": "a\u{1b}]0;x\u{7}b\u{9b}c\u{202e}d\u{2028}e\u{e0041}"});
        let json = value.to_string();
        let safe = safe_json(&json);
        assert!(safe.chars().all(|c| !unprintable(c)), "{safe}");
        assert_eq!(serde_json::from_str::<Value>(&safe).unwrap(), value);
        // Pretty output's whitespace stays as it is.
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        assert_eq!(safe_json(&pretty).lines().count(), pretty.lines().count());
        assert_eq!(printable("ok\u{1b}[31m"), "ok\\u{1B}[31m");
        assert_eq!(safe_json("{\"a\":\"plain\"}"), "{\"a\":\"plain\"}");
    }
}
