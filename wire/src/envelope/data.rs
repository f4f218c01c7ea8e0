//! The envelope's `data` (`docs/contract.md#envelope`): what a call did
//! or would do to a file, field by field.

use serde::{Deserialize, Serialize};

/// What the write did or would do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    /// The target did not exist.
    Create,
    /// The target existed.
    Update,
    /// The target was removed (a revert of its creation).
    Delete,
    /// Several files: see `files` (`write_many`, a revert).
    Many,
    /// A checkpoint was set; no file changed.
    Checkpoint,
    /// A file or directory was shown (`view`); nothing changed.
    View,
}

/// One file of a change of several (`data.files`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileResult {
    /// The file, as `path_resolved` names it.
    pub path: String,
    /// What happened (or, for a dry run, would happen) to it.
    pub operation: Operation,
    /// Bytes written to it.
    pub bytes_written: u64,
    /// Lines added (whole diff).
    pub lines_added: u64,
    /// Lines removed (whole diff).
    pub lines_removed: u64,
}

/// The `data` field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Data {
    /// Whether the content is on disk (the compact form leaves it out of a
    /// view's answer, which never applies anything).
    #[serde(default)]
    pub applied: bool,
    /// Create or update.
    pub operation: Operation,
    /// The (possibly cut) unified diff.
    #[serde(default)]
    pub diff_preview: String,
    /// Whether the preview was cut.
    #[serde(default)]
    pub diff_truncated: bool,
    /// The encoding the file is written in (a dry run: would be), WHATWG's
    /// name in lowercase: `utf-8`, `utf-16le`, `windows-1252`, …; [`BINARY`]
    /// for bytes written as given that are not UTF-8 text.
    #[serde(default = "utf_8")]
    pub encoding: String,
    /// Whether the file starts with a byte-order mark.
    #[serde(default)]
    pub bom: bool,
    /// The old file's uniform line ending (`lf` or `crlf`), which the
    /// content's line breaks were given; `None` when the content's were
    /// kept as given (a new file, mixed endings, `keep_format: false`).
    #[serde(default)]
    pub line_endings: Option<String>,
    /// What the next write of this file passes as its optimistic lock:
    /// the file as written (a dry run or identical content: as it is);
    /// `None` when there is no file.
    #[serde(default)]
    pub lock: Option<LockValues>,
    /// Things the caller should look at; empty when there are none.
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// The journal's id of the change (`docs/contract.md#journal`): what a
    /// revert names. Absent when nothing was recorded (a dry run, no
    /// change, no journal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_id: Option<String>,
    /// The files of a change of several, in order; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileResult>,
    /// Where each edit of an edit call matched and how
    /// (`docs/contract.md#edit`), in order; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edits: Vec<EditMatch>,
    /// What a `view` showed (`docs/contract.md#view`); absent otherwise.
    /// The lines themselves are in `text`, once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<View>,
    /// The file had changed since the version the call's `base` named, and
    /// the call's change was merged onto it (`docs/contract.md#merge`);
    /// absent otherwise. Not in the WIT record (a field there would break
    /// the typed interface of 0.1): the envelope's `text` says it there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub merged: bool,
}

impl Data {
    /// The data of an answer about `operation` with every other field
    /// empty: each answer fills in what it has and takes the rest from here
    /// (`..Data::of(operation)`), so that a field added to `Data` is added
    /// in one place.
    pub fn of(operation: Operation) -> Data {
        Data {
            applied: false,
            operation,
            diff_preview: String::new(),
            diff_truncated: false,
            encoding: String::new(),
            bom: false,
            line_endings: None,
            lock: None,
            warnings: Vec::new(),
            change_id: None,
            files: Vec::new(),
            edits: Vec::new(),
            view: None,
            merged: false,
        }
    }
}

/// What a `view` showed (`data.view`), beside the text that shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct View {
    /// A text file's lines, a directory's entries, or a file that is not
    /// text (described, not shown).
    pub kind: ViewKind,
    /// The first and last line shown, from 1 (for a directory, the first
    /// and last of its own entries shown); absent when none was (a file
    /// that is not text, an empty file or directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<[u64; 2]>,
    /// The file's lines; for a directory, its own (first-level) entries.
    pub total: u64,
    /// Where the next page starts (a line, or a directory's entry: the
    /// `offset` that shows it) when the answer stopped before the end of
    /// what was asked; absent when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_line: Option<u64>,
    /// XXH3-128 of the file's bytes, 32 lowercase hex digits: the version
    /// the caller saw, which a write or an edit passes back as `base` to
    /// change only that version. Absent for a directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// A directory's own entries that the listing shows (first level: no
    /// hidden, protected or temp names), a directory's with a `/`; in the
    /// full form only — the compact one has them in `text` — and not in
    /// the WIT record. Empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entries: Vec<String>,
}

/// Kinds of [`View`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ViewKind {
    /// A text file: its lines, numbered.
    File,
    /// A directory: its entries, two levels deep.
    Directory,
    /// A file that is not text in any encoding the tool knows.
    Binary,
}

/// Where one edit matched (`data.edits`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EditMatch {
    /// The rung of the matching ladder that found it: `exact`,
    /// `line_endings`, `trailing_whitespace`, `indentation` or
    /// `look_alikes`.
    pub tolerance: String,
    /// The first line of each place it changed, from 1, in the text as it
    /// was when the edit applied.
    pub lines: Vec<u64>,
    /// What was repaired in the edit's texts before a rung found it
    /// (`docs/contract.md#matching`): `line_break_at_end`, `line_numbers`,
    /// `json_escapes`, `html_entities`, `blank_ends`; absent when nothing
    /// was. Not in the WIT record (a field there would break the typed
    /// interface of 0.1): the envelope's `text` says it there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repaired: Vec<String>,
}

/// The lock values of a file, named as the lock parameters are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LockValues {
    /// Modification time in whole milliseconds since the epoch; absent
    /// where the platform keeps none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_mtime_ms: Option<i64>,
    /// Size in bytes.
    pub expected_size_bytes: u64,
    /// SHA-256 of the content, lowercase hex; only when the call asked for
    /// it (`report_sha256`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_sha256: Option<String>,
}

/// A warning about the content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Warning {
    /// What kind of warning (`omission_placeholder`).
    pub kind: WarningKind,
    /// The line of the new content it is about, from 1.
    pub line: u64,
    /// That line (cut to 200 bytes).
    pub text: String,
}

/// Kinds of [`Warning`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// A line such as `// ... rest of the code unchanged ...` in content
    /// that removes lines: the model may have meant to keep what it
    /// omitted.
    OmissionPlaceholder,
}

/// `data.encoding` of a write whose bytes (`content_base64`) are not UTF-8
/// text: no encoding, the bytes as given.
pub const BINARY: &str = "binary";

/// `data.encoding` when the compact form leaves it out.
pub(crate) const DEFAULT_ENCODING: &str = "utf-8";

/// `data.encoding` when an envelope leaves it out.
fn utf_8() -> String {
    DEFAULT_ENCODING.to_owned()
}
