//! The envelope: what every call answers with (`docs/contract.md#envelope`).
//!
//! # Format
//!
//! Two forms ([`Form`]; `docs/contract.md#envelope`). The compact one, what
//! a model gets by default, is written by `compact.rs`: `status`, `data`
//! with what goes without saying left out, `text`, and `error: {code}`.
//! The full one (envelope 1's shape) is one JSON object whose top-level
//! keys are exactly `status`, `data`, `text`, `stats`, `context`, plus
//! `error` only when `status` is `"error"`:
//!
//! ```json
//! {
//!   "status": "success",
//!   "data": {
//!     "applied": true,
//!     "operation": "create",
//!     "diff_preview": "--- a/src/new.py\n+++ b/src/new.py\n@@ -0,0 +1,2 @@\n+def hello():\n+    print(\"world\")\n",
//!     "diff_truncated": false
//!   },
//!   "text": "Created 'src/new.py' (2 lines, 33 bytes).\n(Created directory: src/)",
//!   "stats": {
//!     "time_ms": 1,
//!     "bytes_written": 33,
//!     "original_size": 0,
//!     "new_size": 33,
//!     "lines_added": 2,
//!     "lines_removed": 0
//!   },
//!   "context": {
//!     "cwd": ".",
//!     "params_input": {"path": "src/new.py", "content": "def hello():\n    print(\"world\")\n"},
//!     "path_resolved": "src/new.py"
//!   }
//! }
//! ```
//!
//! - `status`: `"success"` (written, preview complete), `"partial"` (dry run,
//!   or preview truncated), `"error"` (nothing changed on disk).
//! - `data`: `null` on error.
//! - `stats`: on error only `{"time_ms": n}`. A dry run has
//!   `bytes_written = 0` and `new_size = original_size`. `lines_added` and
//!   `lines_removed` count the whole diff even when the preview is cut.
//! - `context.params_input`: the arguments as received, long strings elided
//!   ([`crate::echo`]).
//! - `context.path_resolved`: the path actually targeted, or `null` if the
//!   path never resolved.
//! - `error`: `{"code": …, "message": …}`; `text` equals the message.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::ErrorCode;

mod data;

pub(crate) use data::DEFAULT_ENCODING;
pub use data::{
    BINARY, Data, EditMatch, FileResult, LockValues, Operation, View, ViewKind, Warning,
    WarningKind,
};

/// Outcome of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Written, preview complete.
    Success,
    /// Dry run, or preview truncated.
    Partial,
    /// Nothing changed.
    Error,
}

impl Status {
    /// The `status` of envelope JSON, `None` if it has none (or is not an
    /// envelope). Reads the `status` key and skips everything else.
    pub fn of_json(envelope: &str) -> Option<Status> {
        #[derive(Deserialize)]
        struct Head {
            status: Status,
        }
        serde_json::from_str::<Head>(envelope)
            .ok()
            .map(|head| head.status)
    }
}

/// The `stats` field.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Stats {
    /// Milliseconds spent in the call.
    pub time_ms: u64,
    /// The remaining fields, absent on error.
    #[serde(flatten)]
    pub write: Option<WriteStats>,
}

/// The `stats` fields that exist when the call did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WriteStats {
    /// Bytes written to disk.
    pub bytes_written: u64,
    /// Size before.
    pub original_size: u64,
    /// Size after.
    pub new_size: u64,
    /// Lines added (whole diff).
    pub lines_added: u64,
    /// Lines removed (whole diff).
    pub lines_removed: u64,
}

/// The `context` field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Context {
    /// The working directory relative to the project root: always `"."`.
    pub cwd: String,
    /// The arguments as received, as a JSON object ([`crate::echo`]).
    pub params_input: Value,
    /// The path actually targeted.
    pub path_resolved: Option<String>,
}

/// The `error` field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ErrorBody {
    /// Stable code.
    pub code: ErrorCode,
    /// Message, equal to `text` (the compact form leaves it to `text`).
    #[serde(default)]
    pub message: String,
}

/// The envelope. See the module documentation for the wire format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// Outcome.
    pub status: Status,
    /// What was written; `None` on error.
    pub data: Option<Data>,
    /// Text for a human or a model.
    pub text: String,
    /// Numbers (the full form only).
    pub stats: Stats,
    /// What was asked and targeted (the full form only).
    pub context: Context,
    /// Why it failed; only on error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
    /// Which form [`to_json`](Self::to_json) writes.
    #[serde(skip)]
    pub form: Form,
}

/// The two forms of the envelope's JSON (`docs/contract.md#envelope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    /// What a model needs and nothing it already has: no `stats`, no
    /// `context`, the message once (in `text`), defaults and a create's
    /// diff (the content the caller just sent) left out.
    #[default]
    Compact,
    /// Every field, the caller's arguments echoed: envelope 1's shape.
    Full,
}

impl Form {
    /// The form a name means (`"compact"`, `"full"`: the `envelope`
    /// argument's and `WRITE_TOOL_ENVELOPE`'s values), if any.
    pub fn from_name(name: &str) -> Option<Form> {
        match name {
            "compact" => Some(Form::Compact),
            "full" => Some(Form::Full),
            _ => None,
        }
    }

    /// The form's name, as [`from_name`](Self::from_name) reads it.
    pub fn as_str(self) -> &'static str {
        match self {
            Form::Compact => "compact",
            Form::Full => "full",
        }
    }

    /// The form arguments (or their echo) ask for with `envelope`, if they
    /// name one.
    pub fn asked(arguments: &Value) -> Option<Form> {
        arguments
            .get("envelope")
            .and_then(Value::as_str)
            .and_then(Form::from_name)
    }
}

/// The version of the envelope's shape that [`Form::Compact`] is; a field
/// that moves or goes raises it (`docs/contract.md#envelope-versions`).
pub const ENVELOPE_VERSION: u32 = 2;

/// `context.cwd`: paths are relative to the project root.
pub const CWD: &str = ".";

impl Default for Context {
    fn default() -> Self {
        Context::of(Value::Object(Map::new()), None)
    }
}

/// The milliseconds since `start`, as `stats.time_ms` counts them.
pub fn elapsed_ms(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl Context {
    /// The context of a call with the arguments `params_input` (echoed),
    /// of the path `path_resolved` where it resolved one.
    pub fn of(params_input: Value, path_resolved: Option<String>) -> Context {
        Context {
            cwd: CWD.to_owned(),
            params_input,
            path_resolved,
        }
    }
}

impl Envelope {
    /// An answer that is not an error, in the compact form: every answer
    /// the tool builds, but errors ([`Envelope::error`]), is made here.
    pub fn answer(
        status: Status,
        text: String,
        data: Option<Data>,
        stats: Stats,
        context: Context,
    ) -> Self {
        Envelope {
            status,
            data,
            text,
            stats,
            context,
            error: None,
            form: Form::Compact,
        }
    }

    /// An error envelope: `data` null, `stats` only the time, `text` the
    /// message.
    pub fn error(
        code: ErrorCode,
        message: String,
        time_ms: u64,
        params_input: Value,
        path_resolved: Option<String>,
    ) -> Self {
        Envelope {
            error: Some(ErrorBody {
                code,
                message: message.clone(),
            }),
            ..Envelope::answer(
                Status::Error,
                message,
                None,
                Stats {
                    time_ms,
                    write: None,
                },
                Context::of(params_input, path_resolved),
            )
        }
    }

    /// This envelope in `form`.
    #[must_use]
    pub fn in_form(self, form: Form) -> Self {
        Envelope { form, ..self }
    }

    /// An error envelope for a request that never reached the tool: no
    /// arguments to echo (`params_input` is `{}`), no time spent.
    pub fn refused(code: ErrorCode, message: impl Into<String>) -> Self {
        Envelope::error(code, message.into(), 0, Value::Object(Map::new()), None)
    }

    /// Bytes written to disk: `stats.bytes_written`, or where the compact
    /// form left `stats` out, what `data` says of it (the size of a file
    /// written, the files' bytes of a change of several; nothing for a dry
    /// run, an error or content the file already had).
    pub fn bytes_written(&self) -> u64 {
        if let Some(write) = self.stats.write {
            return write.bytes_written;
        }
        match &self.data {
            Some(data) if data.applied && !data.files.is_empty() => {
                data.files.iter().map(|f| f.bytes_written).sum()
            }
            Some(data)
                if data.applied
                    && (data.operation == Operation::Create || !data.diff_preview.is_empty()) =>
            {
                data.lock.as_ref().map_or(0, |l| l.expected_size_bytes)
            }
            _ => 0,
        }
    }

    /// The error code, if this is an error envelope.
    pub fn code(&self) -> Option<ErrorCode> {
        self.error.as_ref().map(|e| e.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_envelope_shape() {
        let env = Envelope::error(
            ErrorCode::IsDirectory,
            "Target path is a directory.".into(),
            3,
            serde_json::json!({"path": "."}),
            None,
        );
        let json = env.to_json();
        assert_eq!(
            json,
            r#"{"status":"error","text":"Target path is a directory.","error":{"code":"IS_DIRECTORY"}}"#,
            "compact: the message once, no stats or context"
        );
        let decoded = Envelope::from_json(&json).expect("decode");
        assert_eq!(decoded.form, Form::Compact);
        assert_eq!(decoded.error, env.error, "the message comes back from text");
        assert_eq!(Status::of_json(&json), Some(Status::Error));

        let full = Envelope {
            form: Form::Full,
            ..env
        };
        let json = full.to_json();
        assert_eq!(
            json,
            r#"{"status":"error","data":null,"text":"Target path is a directory.","stats":{"time_ms":3},"context":{"cwd":".","params_input":{"path":"."},"path_resolved":null},"error":{"code":"IS_DIRECTORY","message":"Target path is a directory."}}"#
        );
        assert_eq!(Envelope::from_json(&json).expect("decode"), full);
    }

    #[test]
    fn success_round_trips() {
        let env = Envelope {
            status: Status::Partial,
            data: Some(Data {
                applied: false,
                operation: Operation::Update,
                diff_preview: "--- a/x\n+++ b/x\n".into(),
                diff_truncated: false,
                encoding: "utf-16le".into(),
                bom: true,
                line_endings: Some("crlf".into()),
                lock: Some(LockValues {
                    expected_mtime_ms: Some(1_700_000_000_000),
                    expected_size_bytes: 2,
                    expected_sha256: None,
                }),
                warnings: vec![Warning {
                    kind: WarningKind::OmissionPlaceholder,
                    line: 3,
                    text: "// ... rest unchanged".into(),
                }],
                change_id: None,
                files: Vec::new(),
                edits: Vec::new(),
                view: None,
                merged: false,
            }),
            text: "[Dry Run] Would update 'x' (+0/-0 lines).".into(),
            stats: Stats {
                time_ms: 1,
                write: Some(WriteStats {
                    bytes_written: 0,
                    original_size: 2,
                    new_size: 2,
                    lines_added: 0,
                    lines_removed: 0,
                }),
            },
            context: Context {
                cwd: CWD.into(),
                params_input: serde_json::json!({"path": "x"}),
                path_resolved: Some("x".into()),
            },
            error: None,
            form: Form::Full,
        };
        let json = env.to_json();
        assert!(!json.contains("\"error\""), "{json}");
        assert_eq!(Envelope::from_json(&json).expect("decode"), env);
        assert_eq!(Status::of_json("{}"), None);

        // Compact: what is not a default stays; stats and context go.
        let compact = Envelope {
            form: Form::Compact,
            ..env.clone()
        };
        let json = compact.to_json();
        assert_eq!(
            json,
            r#"{"status":"partial","data":{"applied":false,"operation":"update","diff_preview":"--- a/x\n+++ b/x\n","encoding":"utf-16le","bom":true,"line_endings":"crlf","lock":{"expected_mtime_ms":1700000000000,"expected_size_bytes":2},"warnings":[{"kind":"omission_placeholder","line":3,"text":"// ... rest unchanged"}]},"text":"[Dry Run] Would update 'x' (+0/-0 lines)."}"#
        );
        let decoded = Envelope::from_json(&json).expect("decode");
        assert_eq!(decoded.data, env.data, "data as it was");
        assert_eq!(decoded.stats, Stats::default());
    }

    #[test]
    fn a_views_answer_says_no_applied_and_hands_its_base_to_a_model() {
        let env = Envelope {
            status: Status::Success,
            data: Some(Data {
                applied: false,
                operation: Operation::View,
                diff_preview: String::new(),
                diff_truncated: false,
                encoding: "utf-8".into(),
                bom: false,
                line_endings: Some("lf".into()),
                lock: None,
                warnings: Vec::new(),
                change_id: None,
                files: Vec::new(),
                edits: Vec::new(),
                view: Some(View {
                    kind: ViewKind::File,
                    lines: Some([1, 2]),
                    total: 2,
                    next_line: None,
                    base: Some("0123456789abcdef0123456789abcdef".into()),
                    entries: Vec::new(),
                }),
                merged: false,
            }),
            text: "'a', lines 1-2 of 2:\n     1\tx\n     2\ty".into(),
            stats: Stats::default(),
            context: Context::default(),
            error: None,
            form: Form::Compact,
        };
        let json = env.to_json();
        assert_eq!(
            json,
            r#"{"status":"success","data":{"operation":"view","line_endings":"lf","view":{"kind":"file","lines":[1,2],"total":2,"base":"0123456789abcdef0123456789abcdef"}},"text":"'a', lines 1-2 of 2:\n     1\tx\n     2\ty"}"#
        );
        assert_eq!(
            Envelope::from_json(&json).unwrap().data,
            env.data,
            "read back"
        );
        assert!(
            env.for_model(40_000)
                .ends_with("     2\ty\nbase: 0123456789abcdef0123456789abcdef"),
            "{}",
            env.for_model(40_000)
        );
    }

    #[test]
    fn bytes_written_come_from_stats_or_from_what_data_says() {
        let lock = |size| {
            Some(LockValues {
                expected_mtime_ms: Some(1),
                expected_size_bytes: size,
                expected_sha256: None,
            })
        };
        let env = |applied, operation, diff: &str, files: Vec<FileResult>| Envelope {
            status: Status::Success,
            data: Some(Data {
                applied,
                operation,
                diff_preview: diff.into(),
                diff_truncated: false,
                encoding: "utf-8".into(),
                bom: false,
                line_endings: None,
                lock: lock(40),
                warnings: Vec::new(),
                change_id: None,
                files,
                edits: Vec::new(),
                view: None,
                merged: false,
            }),
            text: String::new(),
            stats: Stats::default(),
            context: Context::default(),
            error: None,
            form: Form::Compact,
        };
        let file = |bytes| FileResult {
            path: "p".into(),
            operation: Operation::Create,
            bytes_written: bytes,
            lines_added: 1,
            lines_removed: 0,
        };
        let decoded = |e: Envelope| Envelope::from_json(&e.to_json()).unwrap().bytes_written();
        assert_eq!(decoded(env(true, Operation::Create, "", Vec::new())), 40);
        assert_eq!(
            decoded(env(true, Operation::Update, "-a\n+b\n", Vec::new())),
            40
        );
        assert_eq!(
            decoded(env(true, Operation::Update, "", Vec::new())),
            0,
            "no change"
        );
        assert_eq!(
            decoded(env(false, Operation::Update, "-a\n", Vec::new())),
            0,
            "dry run"
        );
        let many = env(true, Operation::Many, "-a\n", vec![file(3), file(4)]);
        assert_eq!(decoded(many), 7);
        let mut full = env(true, Operation::Update, "-a\n", Vec::new());
        full.stats.write = Some(WriteStats {
            bytes_written: 5,
            original_size: 1,
            new_size: 5,
            lines_added: 1,
            lines_removed: 1,
        });
        full.form = Form::Full;
        assert_eq!(decoded(full), 5, "stats win");
    }

    #[test]
    fn compact_leaves_out_defaults_a_new_files_diff_and_exact_edits() {
        let data = |operation, edits: Vec<EditMatch>| Data {
            applied: true,
            operation,
            diff_preview: "--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+a\n".into(),
            diff_truncated: true,
            encoding: "utf-8".into(),
            bom: false,
            line_endings: None,
            lock: None,
            warnings: Vec::new(),
            change_id: Some("c1".into()),
            files: Vec::new(),
            edits,
            view: None,
            merged: false,
        };
        let env = |data| Envelope {
            status: Status::Success,
            data: Some(data),
            text: "t".into(),
            stats: Stats::default(),
            context: Context::default(),
            error: None,
            form: Form::Compact,
        };
        let created = env(data(Operation::Create, Vec::new())).to_json();
        assert_eq!(
            created,
            r#"{"status":"success","data":{"applied":true,"operation":"create","change_id":"c1"},"text":"t"}"#
        );
        let exact = EditMatch {
            tolerance: "exact".into(),
            lines: vec![1],
            repaired: Vec::new(),
        };
        let updated = env(data(Operation::Update, vec![exact.clone()])).to_json();
        assert_eq!(
            updated,
            r#"{"status":"success","data":{"applied":true,"operation":"update","diff_preview":"--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+a\n","diff_truncated":true,"change_id":"c1"},"text":"t"}"#
        );
        let loose = EditMatch {
            tolerance: "indentation".into(),
            ..exact.clone()
        };
        let repaired = EditMatch {
            repaired: vec!["line_numbers".into()],
            ..exact.clone()
        };
        let told = env(data(Operation::Update, vec![exact.clone(), loose])).to_json();
        assert!(told.contains(r#""edits":[{"tolerance":"exact""#), "{told}");
        let told = env(data(Operation::Update, vec![repaired])).to_json();
        assert!(told.contains(r#""repaired":["line_numbers"]"#), "{told}");
    }
}
