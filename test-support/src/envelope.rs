//! The envelope as a consumer decodes it: the suites' own mirror types,
//! which reject unknown fields, and a check of the top-level shape
//! (`docs/contract.md#envelope`).

use serde::Deserialize;
use serde_json::Value;

/// Decode envelope JSON into the mirror types and check the top-level
/// shape: exactly the keys of `docs/contract.md#envelope`, `error` only on
/// error.
pub fn decode(json: &str) -> Envelope {
    let value: Value =
        serde_json::from_str(json).unwrap_or_else(|e| panic!("envelope is not JSON ({e}): {json}"));
    let keys: Vec<&str> = value
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    let envelope: Envelope = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("envelope shape ({e}): {json}"));
    if envelope.status == "error" {
        assert_eq!(
            keys,
            ["status", "data", "text", "stats", "context", "error"],
            "{json}"
        );
        assert!(value["data"].is_null());
        let error = envelope.error.as_ref().expect("error body");
        assert_eq!(envelope.text, error.message, "text equals the message");
        assert_eq!(
            value["stats"].as_object().map(|o| o.len()),
            Some(1),
            "error stats hold only time_ms"
        );
    } else {
        assert_eq!(
            keys,
            ["status", "data", "text", "stats", "context"],
            "{json}"
        );
        assert!(envelope.data.is_some(), "{json}");
        assert!(envelope.stats.bytes_written.is_some(), "{json}");
        assert!(
            matches!(envelope.status.as_str(), "success" | "partial"),
            "{json}"
        );
    }
    assert_eq!(envelope.context.cwd, ".");
    assert!(envelope.context.params_input.is_object(), "{json}");
    assert!(envelope.stats.time_ms < 600_000, "{json}");
    envelope
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    pub status: String,
    pub data: Option<Data>,
    pub text: String,
    pub stats: Stats,
    pub context: Context,
    #[serde(default)]
    pub error: Option<ErrorBody>,
}

impl Envelope {
    pub fn code(&self) -> Option<&str> {
        self.error.as_ref().map(|e| e.code.as_str())
    }

    pub fn data(&self) -> &Data {
        self.data.as_ref().expect("data")
    }

    pub fn preview(&self) -> &str {
        &self.data().diff_preview
    }

    /// Every string the tool wrote of its own rather than echoed from the
    /// request: the text, the error message, the diff preview, the
    /// operation, the resolved path and the working directory. What must
    /// not leak must be absent from all of them.
    pub fn own_words(&self) -> Vec<&str> {
        let mut words = vec![self.text.as_str(), self.context.cwd.as_str()];
        words.extend(self.error.as_ref().map(|e| e.message.as_str()));
        words.extend(self.context.path_resolved.as_deref());
        if let Some(data) = &self.data {
            words.extend([data.diff_preview.as_str(), data.operation.as_str()]);
            words.push(data.encoding.as_str());
            words.extend(data.warnings.iter().map(|w| w.text.as_str()));
        }
        words
    }

    /// Panics with the envelope unless it is an error with `code`.
    #[track_caller]
    pub fn assert_error(&self, code: &str) -> &Self {
        assert_eq!(self.code(), Some(code), "{self:#?}");
        self
    }

    #[track_caller]
    pub fn assert_status(&self, status: &str) -> &Self {
        assert_eq!(self.status, status, "{self:#?}");
        self
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Data {
    pub applied: bool,
    pub operation: String,
    pub diff_preview: String,
    pub diff_truncated: bool,
    pub encoding: String,
    pub bom: bool,
    pub line_endings: Option<String>,
    pub lock: Option<Lock>,
    pub warnings: Vec<Warning>,
    #[serde(default)]
    pub change_id: Option<String>,
    #[serde(default)]
    pub files: Vec<FileResult>,
    #[serde(default)]
    pub edits: Vec<EditMatch>,
    #[serde(default)]
    pub view: Option<ViewData>,
    #[serde(default)]
    pub merged: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewData {
    pub kind: String,
    #[serde(default)]
    pub lines: Option<[u64; 2]>,
    pub total: u64,
    #[serde(default)]
    pub next_line: Option<u64>,
    #[serde(default)]
    pub base: Option<String>,
    /// A directory's own entries (the full form only).
    #[serde(default)]
    pub entries: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditMatch {
    pub tolerance: String,
    pub lines: Vec<u64>,
    #[serde(default)]
    pub repaired: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileResult {
    pub path: String,
    pub operation: String,
    pub bytes_written: u64,
    pub lines_added: u64,
    pub lines_removed: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    pub expected_mtime_ms: Option<i64>,
    pub expected_size_bytes: u64,
    pub expected_sha256: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Warning {
    pub kind: String,
    pub line: u64,
    pub text: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stats {
    pub time_ms: u64,
    pub bytes_written: Option<u64>,
    pub original_size: Option<u64>,
    pub new_size: Option<u64>,
    pub lines_added: Option<u64>,
    pub lines_removed: Option<u64>,
}

impl Stats {
    /// `(bytes_written, original_size, new_size, lines_added, lines_removed)`
    /// of a non-error envelope.
    #[track_caller]
    pub fn numbers(&self) -> (u64, u64, u64, u64, u64) {
        let get = |v: Option<u64>| v.expect("stats of a non-error envelope");
        (
            get(self.bytes_written),
            get(self.original_size),
            get(self.new_size),
            get(self.lines_added),
            get(self.lines_removed),
        )
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Context {
    pub cwd: String,
    pub params_input: Value,
    pub path_resolved: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
}
