//! `append` (`docs/contract.md#append`): text added at the end of a file,
//! which is created, with its parents, when it is not there. The kind's
//! own parts are here — its parameters and their schema, the checks of
//! its arguments, its answer — with the registry's line
//! (`write_tool_wire::kinds`); the check of its target and the text it
//! makes sit beside the edits' (`edits.rs`), where the write's stages
//! take them. It is a write of the file's text with the new text after
//! it, so every guarantee of a write holds: the sandbox and protected
//! places, the format kept, the one commit point, the journal and its
//! undo, the lock values.
//!
//! Decisions:
//! - the text starts on a line of its own: after a last line with no line
//!   break, one is put first (in the file's line endings, as all text is);
//! - nothing is needed first, not even under read-first: an append loses
//!   nothing that is there;
//! - the lock values and `base` are a write's: a file changed since is a
//!   `CONFLICT`, never an append onto what the caller did not mean;
//! - it is made on what it read even without them: a line another writer
//!   added meanwhile is refused (`CONFLICT`), not replaced unseen;
//! - bytes (`content_base64`) and `create_only` are refused: an append is
//!   text, and of a file that may be there.

use std::time::Instant;

use schemars::JsonSchema;
use serde_json::{Value, json};
use write_tool_wire::envelope::{Envelope, elapsed_ms};
use write_tool_wire::kinds::{self, Op};

use crate::error::ToolError;
use crate::params::Request;
use crate::roots::Roots;

use super::config::Config;
use super::prepare::Source;
use super::single;

/// Append's parameters: a write's, less the bytes and `create_only`. The
/// arguments are read by the write's own reader (its messages are the
/// contract's); this type is what the schema a model is given is derived
/// from, and a test holds the two to the same names.
#[derive(JsonSchema)]
#[expect(dead_code, reason = "read for its schema alone")]
struct Params {
    /// Path to the file (relative to project root, POSIX style). Created,
    /// with its parent directories, if it does not exist. Required.
    path: String,
    /// The text to add at the end of the file. It starts on a line of its
    /// own; end it with a line break to end the line. Required.
    content: String,
    /// If true, compute the diff but do not write to disk.
    #[schemars(default = "no")]
    dry_run: bool,
    /// Optimistic lock: the file's modification time in milliseconds since
    /// the epoch, as last read. A mismatch gives CONFLICT.
    expected_mtime_ms: Option<i64>,
    /// Optimistic lock: the file's size in bytes, as last read. A mismatch
    /// gives CONFLICT.
    expected_size_bytes: Option<u64>,
    /// Optimistic lock: SHA-256 of the file's content, as last read (hex).
    /// A mismatch gives CONFLICT.
    #[schemars(regex(pattern = r"^[0-9a-fA-F]{64}$"))]
    expected_sha256: Option<String>,
    /// The version you viewed: view's data.view.base. If the file changed
    /// since, nothing is written (CONFLICT).
    #[schemars(regex(pattern = r"^[0-9a-fA-F]{32}$"))]
    base: Option<String>,
    /// If true, an existing file keeps its encoding, byte-order mark and
    /// line endings; false writes the whole file in UTF-8 with the text as
    /// given.
    #[schemars(default = "yes")]
    keep_format: bool,
    /// If true, the result's data.lock also carries expected_sha256 of the
    /// file.
    #[schemars(default = "no")]
    report_sha256: bool,
    /// Only when an append was refused because the file's encoding is
    /// uncertain: the encoding it is in (utf-8, windows-1252, shift_jis,
    /// ...), used instead of detecting it.
    encoding: Option<String>,
}

fn no() -> bool {
    false
}

fn yes() -> bool {
    true
}

/// Append's entry among the tools a model is given.
pub(crate) fn definition() -> Value {
    let parameters = write_tool_wire::schema::parameters::<Params>();
    json!({
        "name": kinds::of(Op::Append).name(),
        "description": "Add text at the end of a file, keeping what is there; the file and \
            its parent directories are created if they do not exist. The text starts on a \
            line of its own. Use it for logs, notes and lists that grow; to change what a \
            file holds, use Edit or Write. Returns a diff of the lines added.",
        "parameters": parameters,
    })
}

/// A write's arguments, read by its reader, as an append's: refused where
/// an append cannot be what they ask.
fn check(request: &Request) -> Result<(), ToolError> {
    if request.raw.is_some() {
        return Err(ToolError::invalid_param(
            "An append is text: give 'content', not 'content_base64'. Nothing was written.",
        ));
    }
    if request.create_only {
        return Err(ToolError::invalid_param(
            "An append adds to a file that may be there: 'create_only' does not apply. To \
             create a file only if it does not exist, use Write with create_only. Nothing \
             was written.",
        ));
    }
    Ok(())
}

/// Answer an append.
pub(super) fn answer(
    roots: &Roots,
    request: &Request,
    echo: Value,
    config: &Config,
    start: Instant,
) -> Envelope {
    match check(request) {
        Ok(()) => single::answer(
            roots,
            request,
            Source::Append,
            echo,
            config,
            start,
            ToolError::as_is,
        ),
        Err(err) => err.into_envelope(elapsed_ms(start), echo, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema names what the write's reader reads for an append, and
    /// nothing else.
    #[test]
    fn the_schema_names_the_parameters_the_reader_takes() {
        let definition = definition();
        let parameters = &definition["parameters"];
        assert_eq!(parameters["type"], "object");
        assert_eq!(parameters["required"], json!(["path", "content"]));
        assert!(parameters.get("title").is_none());
        assert!(parameters.get("description").is_none());
        assert!(!parameters.to_string().contains("\\n"), "{parameters}");
        let names: Vec<&str> = parameters["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        // The write's parameters (those before the rest's in the reader's
        // list), but the one an append refuses.
        let write: Vec<&str> = write_tool_wire::request::PARAMETERS
            .iter()
            .copied()
            .take_while(|p| *p != "file_path")
            .filter(|p| *p != "create_only")
            .collect();
        assert_eq!(names, write);
        // Each is one the reader takes: set, it reads as given.
        let hash = "a".repeat(64);
        let args = json!({"name": "append", "arguments": {
            "path": "p", "content": "c", "dry_run": true, "expected_mtime_ms": 1,
            "expected_size_bytes": 2, "expected_sha256": hash, "base": "b".repeat(32),
            "keep_format": false, "report_sha256": true, "encoding": "windows-1252",
        }});
        let parsed = crate::params::parse_any(&args.to_string());
        let Ok(crate::params::Call::Append(request)) = parsed.call else {
            panic!("{:?}", parsed.call);
        };
        assert_eq!(
            (request.path.as_str(), request.content.as_str()),
            ("p", "c")
        );
        assert!(request.dry_run && request.report_sha256 && !request.keep_format);
        assert_eq!(request.expected_mtime_ms, Some(1));
        assert_eq!(request.expected_size_bytes, Some(2));
        assert_eq!(request.expected_sha256.as_deref(), Some(hash.as_str()));
        assert!(request.base.is_some() && request.encoding.is_some());
        let text = parameters.to_string();
        assert!(!text.contains("\"format\""), "{text}");
        assert!(text.contains("^[0-9a-fA-F]{64}$"), "{text}");
    }
}
