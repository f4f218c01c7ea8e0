//! The tool definition handed to a model: name, description and the JSON
//! Schema of the parameters (`docs/contract.md#parameters`).

use serde_json::{Value, json};

/// The name agents call the tool by.
pub const TOOL_NAME: &str = "Write";

/// The definition as a JSON value.
pub fn definition() -> Value {
    json!({
        "name": TOOL_NAME,
        "description": "Writes a file to the local filesystem. Overwrites existing file if present. \
            Automatically creates parent directories. Provide the COMPLETE file content. \
            Returns a unified diff preview of the change; use dry_run to preview without writing. \
            An existing file keeps its encoding and line endings. The result's data.lock holds \
            expected_mtime_ms and expected_size_bytes: pass them to the next write of the file \
            to be sure nobody changed it meanwhile.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "Path to the file (relative to project root, POSIX style, no absolute path). Required."
                },
                "content": {
                    "type": "string",
                    "description": "Full content to write to the file (entire file). Required."
                },
                "dry_run": {
                    "type": "boolean",
                    "description": "If true, compute diff but do not write to disk.",
                    "default": false
                },
                "expected_mtime_ms": {
                    "type": "integer",
                    "description": "Optimistic lock: the file's modification time in milliseconds since the epoch, as last read. A mismatch, or a file that does not exist, gives CONFLICT."
                },
                "expected_size_bytes": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Optimistic lock: the file's size in bytes, as last read. A mismatch, or a file that does not exist, gives CONFLICT."
                },
                "expected_sha256": {
                    "type": "string",
                    "pattern": "^[0-9a-fA-F]{64}$",
                    "description": "Optimistic lock: SHA-256 of the file's content, as last read (hex). A mismatch, or a file that does not exist, gives CONFLICT."
                },
                "create_only": {
                    "type": "boolean",
                    "description": "If true, only create a new file: an existing file is never replaced (CONFLICT). Use it when you mean to create.",
                    "default": false
                },
                "keep_format": {
                    "type": "boolean",
                    "description": "If true, an existing file keeps its encoding (UTF-8, UTF-16, legacy such as windows-1252), byte-order mark and line endings (CRLF or LF); write the text normally. Set false only to convert a file: the content is then written exactly as given, in UTF-8.",
                    "default": true
                },
                "report_sha256": {
                    "type": "boolean",
                    "description": "If true, the result's data.lock also carries expected_sha256 of the file.",
                    "default": false
                },
                "encoding": {
                    "type": "string",
                    "description": "Only when a write was refused because the file's encoding is uncertain: the encoding the existing file is in (utf-8, windows-1252, shift_jis, gbk, ...), used instead of detecting it."
                }
            },
            "required": ["path", "content"]
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn definition_snapshot() {
        insta::assert_json_snapshot!(super::definition());
    }
}
