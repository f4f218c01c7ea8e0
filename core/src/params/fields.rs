//! A write's parameters, and the checks every request's fields share.

use serde_json::{Map, Value};

use write_tool_wire::echo;
use write_tool_wire::request::ToolName;

use crate::error::ToolError;

/// One validated request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Which name the call used.
    pub tool: ToolName,
    /// The path as given.
    pub path: String,
    /// The content to write.
    pub content: String,
    /// Compute everything, change nothing.
    pub dry_run: bool,
    /// Optimistic lock: the file's mtime in milliseconds since the epoch.
    pub expected_mtime_ms: Option<i64>,
    /// Optimistic lock: the file's size.
    pub expected_size_bytes: Option<u64>,
    /// Optimistic lock: the file's SHA-256, lowercase or uppercase hex.
    pub expected_sha256: Option<String>,
    /// The version the caller saw: a `view`'s `data.view.base`, the
    /// XXH3-128 of the file's bytes (`docs/contract.md#view`).
    pub base: Option<String>,
    /// Keep the old file's encoding, byte-order mark and line endings
    /// (`docs/contract.md#format`); `false` writes the content as given.
    pub keep_format: bool,
    /// Refuse to replace a file that exists.
    pub create_only: bool,
    /// Report the SHA-256 of the file in the envelope's lock values.
    pub report_sha256: bool,
    /// The encoding the caller says the old file is in: replaces detection
    /// (`docs/contract.md#format`).
    pub encoding: Option<&'static encoding_rs::Encoding>,
    /// The content as bytes (`content_base64`), written exactly as they
    /// are: no format kept, `content` empty (`docs/contract.md#bytes`).
    pub raw: Option<Vec<u8>>,
}

impl Request {
    /// A `Write` request from the typed WIT arguments.
    pub fn new(path: String, content: String, dry_run: bool) -> Self {
        Request {
            tool: ToolName::Write,
            path,
            content,
            dry_run,
            expected_mtime_ms: None,
            expected_size_bytes: None,
            expected_sha256: None,
            base: None,
            keep_format: true,
            create_only: false,
            report_sha256: false,
            encoding: None,
            raw: None,
        }
    }

    /// The `params_input` echo of typed arguments.
    pub fn echo(&self) -> Value {
        echo::typed(&self.path, &self.content, self.dry_run)
    }
}

pub(super) fn request_from(
    mut args: Map<String, Value>,
    tool: ToolName,
) -> (Value, Result<Request, ToolError>) {
    // Move the content out instead of copying it: it can be many MiB.
    let content = match args.get_mut("content") {
        Some(Value::String(text)) => {
            let text = std::mem::take(text);
            args.insert("content".into(), echo::content(&text));
            Some(text)
        }
        _ => None,
    };
    let raw = match args.get_mut(CONTENT_BASE64) {
        Some(Value::String(encoded)) => {
            let encoded = std::mem::take(encoded);
            args.insert(CONTENT_BASE64.into(), echo::content(&encoded));
            Some(decoded(&encoded))
        }
        Some(_) => Some(Err(wrong_type(CONTENT_BASE64, "a base64 string"))),
        None => None,
    };
    let result = match raw {
        None => fields(&args, content, tool),
        Some(raw) => bytes_request(&args, content.is_some(), raw, tool),
    };
    (echo::arguments(args), result)
}

/// The parameter that carries a write's content as bytes, in standard
/// base64 with padding: how a host writes a file that is not UTF-8 text
/// (the file API's `PUT`), byte for byte.
pub(super) const CONTENT_BASE64: &str = "content_base64";

/// The bytes `encoded` holds.
fn decoded(encoded: &str) -> Result<Vec<u8>, ToolError> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|e| {
            ToolError::invalid_param(format!(
                "Parameter '{CONTENT_BASE64}' is not standard base64 with padding ({e}); \
                 nothing was written."
            ))
        })
}

/// A write of `raw` bytes: its other fields as a write's, with no text and
/// nothing of the old file's format kept.
fn bytes_request(
    args: &Map<String, Value>,
    has_content: bool,
    raw: Result<Vec<u8>, ToolError>,
    tool: ToolName,
) -> Result<Request, ToolError> {
    if has_content || args.contains_key("content") {
        return Err(ToolError::invalid_param(format!(
            "Give 'content' or '{CONTENT_BASE64}', not both."
        )));
    }
    if matches!(args.get("keep_format"), Some(Value::Bool(true))) || args.contains_key("encoding") {
        return Err(ToolError::invalid_param(format!(
            "'{CONTENT_BASE64}' is written byte for byte: it takes neither keep_format: true nor \
             encoding."
        )));
    }
    let mut request = fields(args, Some(String::new()), tool)?;
    request.keep_format = false;
    request.raw = Some(raw?);
    Ok(request)
}

pub(super) fn fields(
    args: &Map<String, Value>,
    content: Option<String>,
    tool: ToolName,
) -> Result<Request, ToolError> {
    let path = match args.get("path") {
        Some(Value::String(path)) => path.clone(),
        Some(_) => return Err(wrong_type("path", "a string")),
        None => return Err(missing("path")),
    };
    let content = match (content, args.get("content")) {
        (Some(content), _) => content,
        (None, Some(_)) => return Err(wrong_type("content", "a string")),
        (None, None) => return Err(missing("content")),
    };
    let dry_run = flag(args, "dry_run", false)?;
    let keep_format = flag(args, "keep_format", true)?;
    let create_only = flag(args, "create_only", false)?;
    let report_sha256 = flag(args, "report_sha256", false)?;
    let expected_mtime_ms = match args.get("expected_mtime_ms") {
        None => None,
        Some(v) => Some(
            v.as_i64()
                .ok_or_else(|| wrong_type("expected_mtime_ms", "an integer"))?,
        ),
    };
    let expected_size_bytes = match args.get("expected_size_bytes") {
        None => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or_else(|| wrong_type("expected_size_bytes", "a non-negative integer"))?,
        ),
    };
    let expected_sha256 = match args.get("expected_sha256") {
        None => None,
        Some(Value::String(hex))
            if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            Some(hex.to_ascii_lowercase())
        }
        Some(_) => return Err(wrong_type("expected_sha256", "a 64-digit hex string")),
    };
    let base = match args.get("base") {
        None => None,
        Some(Value::String(hex))
            if hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            Some(hex.to_ascii_lowercase())
        }
        Some(_) => {
            return Err(wrong_type(
                "base",
                "a view's data.view.base, a 32-digit hex string",
            ));
        }
    };
    let encoding = encoding(args)?;
    Ok(Request {
        tool,
        path,
        content,
        dry_run,
        expected_mtime_ms,
        expected_size_bytes,
        expected_sha256,
        base,
        keep_format,
        create_only,
        report_sha256,
        encoding,
        raw: None,
    })
}

/// The path of a request that takes either Claude Code's `file_path` or
/// `path`: one of them, or both the same; `missing` names the one a request
/// without either is told about.
pub(super) fn either_path(
    args: &Map<String, Value>,
    missing_name: &str,
) -> Result<String, ToolError> {
    match (args.get("file_path"), args.get("path")) {
        (Some(Value::String(a)), Some(Value::String(b))) if a != b => Err(
            ToolError::invalid_param("Give 'file_path' or 'path', not two different paths."),
        ),
        (Some(Value::String(path)), _) | (None, Some(Value::String(path))) => Ok(path.clone()),
        (Some(_), _) => Err(wrong_type("file_path", "a string")),
        (None, Some(_)) => Err(wrong_type("path", "a string")),
        (None, None) => Err(missing(missing_name)),
    }
}

/// The `encoding` parameter: the encoding the caller says the old file is
/// in, `None` when absent.
pub(super) fn encoding(
    args: &Map<String, Value>,
) -> Result<Option<&'static encoding_rs::Encoding>, ToolError> {
    match args.get("encoding") {
        None => Ok(None),
        Some(Value::String(label)) => encoding_rs::Encoding::for_label(label.trim().as_bytes())
            .filter(|e| *e != encoding_rs::REPLACEMENT && *e != encoding_rs::X_USER_DEFINED)
            .map(Some)
            .ok_or_else(|| {
                ToolError::invalid_param(format!(
                    "Parameter 'encoding' must name an encoding (a WHATWG label such as \
                     utf-8, windows-1252, shift_jis, gbk), not '{}'.",
                    truncate(label, 64)
                ))
            }),
        Some(_) => Err(wrong_type("encoding", "a string naming an encoding")),
    }
}

/// The boolean parameter `name`, `default` when absent.
pub(super) fn flag(
    args: &Map<String, Value>,
    name: &str,
    default: bool,
) -> Result<bool, ToolError> {
    match args.get(name) {
        None => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(wrong_type(name, "a boolean")),
    }
}

#[cold]
pub(super) fn missing(name: &str) -> ToolError {
    ToolError::invalid_param(format!("Missing required parameter '{name}'."))
}

#[cold]
pub(super) fn wrong_type(name: &str, what: &str) -> ToolError {
    ToolError::invalid_param(format!("Parameter '{name}' must be {what}."))
}

pub(super) fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}
