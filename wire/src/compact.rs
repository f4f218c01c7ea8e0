//! The envelope's JSON in either form (`docs/contract.md#envelope`), and
//! the compact one's rendering for a model: the compact form is written
//! straight from the [`Envelope`] without building another one, and read
//! back into it.

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use crate::ErrorCode;
use crate::envelope::{
    Context, DEFAULT_ENCODING, Data, Envelope, ErrorBody, Form, Operation, Stats, Status,
};
use crate::printable::printable;

impl Envelope {
    /// The envelope as one line of JSON, in its [`form`](Self::form).
    pub fn to_json(&self) -> String {
        // Serialising these plain types cannot fail: every map key is a
        // string and no value is a non-finite float.
        let json = match self.form {
            Form::Full => serde_json::to_string(self),
            Form::Compact => serde_json::to_string(&Compact(self)),
        };
        json.unwrap_or_else(|_| String::from("{}"))
    }

    /// Decode envelope JSON of either form. What the compact form leaves
    /// out comes back as its default: `stats` as `{"time_ms": 0}`, an
    /// empty echo, `error.message` as `text`.
    pub fn from_json(json: &str) -> serde_json::Result<Envelope> {
        decode(json)
    }

    /// The envelope as text for a model whose client shows text, not JSON:
    /// the text, the diff and the values a next call passes back, at most
    /// `max_chars` characters (`docs/contract.md#envelope`).
    pub fn for_model(&self, max_chars: usize) -> String {
        for_model(self, max_chars)
    }
}

/// The envelope, serialised in its compact form.
pub(crate) struct Compact<'e>(pub(crate) &'e Envelope);

impl Serialize for Compact<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let env = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("status", &env.status)?;
        if let Some(data) = &env.data {
            map.serialize_entry("data", &CompactData(data))?;
        }
        map.serialize_entry("text", &env.text)?;
        if let Some(error) = &env.error {
            // The message is the text: said once.
            #[derive(Serialize)]
            struct Code {
                code: ErrorCode,
            }
            map.serialize_entry("error", &Code { code: error.code })?;
        }
        map.end()
    }
}

/// `data`, with what goes without saying left out.
struct CompactData<'d>(&'d Data);

impl Serialize for CompactData<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let data = self.0;
        let mut map = serializer.serialize_map(None)?;
        // A view never applies anything: saying so is noise.
        if data.operation != Operation::View {
            map.serialize_entry("applied", &data.applied)?;
        }
        map.serialize_entry("operation", &data.operation)?;
        // A new file's diff is the content the caller just sent.
        if !data.diff_preview.is_empty() && data.operation != Operation::Create {
            map.serialize_entry("diff_preview", &data.diff_preview)?;
            if data.diff_truncated {
                map.serialize_entry("diff_truncated", &true)?;
            }
        }
        if data.encoding != DEFAULT_ENCODING {
            map.serialize_entry("encoding", &data.encoding)?;
        }
        if data.bom {
            map.serialize_entry("bom", &true)?;
        }
        if let Some(endings) = &data.line_endings {
            map.serialize_entry("line_endings", endings)?;
        }
        if let Some(lock) = &data.lock {
            map.serialize_entry("lock", lock)?;
        }
        if !data.warnings.is_empty() {
            map.serialize_entry("warnings", &data.warnings)?;
        }
        if let Some(id) = &data.change_id {
            map.serialize_entry("change_id", id)?;
        }
        if !data.files.is_empty() {
            map.serialize_entry("files", &data.files)?;
        }
        // Where an edit matched as sent, the diff shows where it went.
        let told = data
            .edits
            .iter()
            .any(|e| e.tolerance != EXACT || !e.repaired.is_empty());
        if told {
            map.serialize_entry("edits", &data.edits)?;
        }
        if let Some(view) = &data.view {
            // A directory's entries are in the text already.
            let mut view = view.clone();
            view.entries.clear();
            map.serialize_entry("view", &view)?;
        }
        if data.merged {
            map.serialize_entry("merged", &true)?;
        }
        map.end()
    }
}

/// The rung that changes nothing (`data.edits[].tolerance`).
const EXACT: &str = "exact";

/// An envelope in either form, as it is read: what the compact form
/// leaves out may be absent. Its schema is the answers' (`crate::schema`).
#[derive(Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(title = "Envelope"))]
pub(crate) struct Either {
    /// `success` (written, preview complete), `partial` (a dry run, or a
    /// preview cut short), `error` (nothing changed on disk).
    status: Status,
    /// What was written or shown; absent or `null` on error.
    #[serde(default)]
    data: Option<Data>,
    /// The answer for a person or a model.
    text: String,
    /// Numbers (the full form only).
    #[serde(default)]
    stats: Stats,
    /// What was asked and targeted (the full form only).
    #[serde(default)]
    context: Option<Context>,
    /// Why the call failed; only on error.
    #[serde(default)]
    error: Option<ErrorBody>,
}

/// Decode envelope JSON of either form (see [`Envelope::from_json`]), in
/// one pass: the full form is the one with `context`.
pub(crate) fn decode(json: &str) -> serde_json::Result<Envelope> {
    let either: Either = serde_json::from_str(json)?;
    let form = match either.context {
        Some(_) => Form::Full,
        None => Form::Compact,
    };
    let error = either.error.map(|mut error| {
        if error.message.is_empty() {
            error.message.clone_from(&either.text);
        }
        error
    });
    Ok(Envelope {
        status: either.status,
        data: either.data,
        text: either.text,
        stats: either.stats,
        context: either.context.unwrap_or_default(),
        error,
        form,
    })
}

/// The envelope as a model reads it where a client shows it text rather
/// than JSON (an MCP text block): the text, the diff, and the values a next
/// call passes back (the lock, the change id), at most `max_chars`
/// characters; past that, the text and diff are cut with a line that says
/// so, and the values kept. Characters a terminal would act on come as
/// `\u{…}` ([`printable`]): the JSON form escaped the controls, and a
/// client may print this one to a terminal.
pub(crate) fn for_model(env: &Envelope, max_chars: usize) -> String {
    let mut out = env.text.clone();
    let mut keys = Vec::new();
    if let Some(data) = &env.data {
        if !data.diff_preview.is_empty() && data.operation != Operation::Create {
            out.push_str("\n\n");
            out.push_str(&data.diff_preview);
        }
        if let Some(lock) = &data.lock {
            if let Some(mtime) = lock.expected_mtime_ms {
                keys.push(format!("expected_mtime_ms: {mtime}"));
            }
            keys.push(format!("expected_size_bytes: {}", lock.expected_size_bytes));
            if let Some(sha) = &lock.expected_sha256 {
                keys.push(format!("expected_sha256: {sha}"));
            }
        }
        // A view's base is what a write passes back to change only the
        // version seen.
        if let Some(base) = data.view.as_ref().and_then(|v| v.base.as_ref()) {
            keys.push(format!("base: {base}"));
        }
        if let Some(id) = &data.change_id {
            keys.push(format!("change_id: {id}"));
        }
    }
    let keys = printable(&keys.join(", "), true);
    let room = max_chars.saturating_sub(keys.chars().count() + 1);
    let mut out = cut_chars(printable(&out, true), room);
    if !keys.is_empty() {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&keys);
    }
    out
}

/// `text` whole if it has at most `max` characters; else its first
/// characters and a last line saying how many were left out, `max` in all.
fn cut_chars(text: String, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text;
    }
    // The count left out has no more digits than the total.
    let note_len = format!("\n... ({total} of {total} characters left out)").len();
    let keep = max.saturating_sub(note_len);
    let end = text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i);
    format!(
        "{}\n... ({} of {total} characters left out)",
        &text[..end],
        total - keep
    )
}

#[cfg(test)]
mod tests {
    use super::{cut_chars, for_model};

    #[test]
    fn the_text_escapes_controls_and_a_cut_keeps_the_values_a_next_call_needs() {
        let env = crate::Envelope::from_json(
            r#"{"status":"success","data":{"applied":true,"operation":"update","diff_preview":"-a\u001b[2J\n+b\u202e\n","lock":{"expected_mtime_ms":7,"expected_size_bytes":2},"change_id":"c9"},"text":"Updated."}"#,
        )
        .unwrap();
        let text = for_model(&env, usize::MAX);
        assert_eq!(
            text,
            "Updated.\n\n-a\\u{1B}[2J\n+b\\u{202E}\nexpected_mtime_ms: 7, expected_size_bytes: 2, change_id: c9"
        );
        let long = crate::Envelope {
            text: "x".repeat(200),
            ..env
        };
        let cut = for_model(&long, 150);
        assert!(
            cut.chars().count() <= 150 && cut.starts_with("xxx"),
            "{cut}"
        );
        assert!(
            cut.ends_with(
                "characters left out)\nexpected_mtime_ms: 7, expected_size_bytes: 2, change_id: c9"
            ),
            "{cut}"
        );
    }

    #[test]
    fn a_cut_text_keeps_to_its_bound_and_says_what_went() {
        let text = "é".repeat(100);
        assert_eq!(cut_chars(text.clone(), 100), text);
        let cut = cut_chars(text, 60);
        assert!(cut.chars().count() <= 60, "{cut}");
        let kept = cut.chars().take_while(|&c| c == 'é').count();
        assert!(
            cut.ends_with(&format!("({} of 100 characters left out)", 100 - kept)),
            "{cut}"
        );
    }
}
