//! The tool definition handed to a model: name, description and the JSON
//! Schema of the parameters (`docs/contract.md#parameters`).

use serde_json::{Value, json};
use write_tool_wire::request;

/// The name agents call the tool by.
pub const TOOL_NAME: &str = "Write";

/// The definition as a JSON value: `Write`'s, with every tool the
/// component answers to a model under `tools` (`Write` first, then
/// `Edit`, `edit_file`, `apply_patch`, `view` and `append`), so that a host reading
/// the top level gets `Write` as it always did; under `custom_tools`,
/// `apply_patch` as an OpenAI custom tool held to a grammar; and under
/// `anthropic_tools`, Anthropic's text editor, which the tool executes.
pub fn definition() -> Value {
    let mut write = write_definition();
    let tools = json!([
        write.clone(),
        edit_definition(),
        edit_file_definition(),
        apply_patch_definition(),
        view_definition(),
        crate::pipeline::append::definition()
    ]);
    write["tools"] = tools;
    write["custom_tools"] = json!([apply_patch_freeform()]);
    // Anthropic's text editor is defined by Anthropic: its entry is the
    // type and name alone (`docs/contract.md#text-editor`).
    write["anthropic_tools"] = json!([
        {"type": "text_editor_20250728", "name": request::TEXT_EDITOR}
    ]);
    write
}

/// The patch format as a Lark grammar (`docs/contract.md#patch`): what a
/// model held to it writes is a patch this tool parses. It admits a part
/// of what the parser reads, which also forgives whitespace around markers,
/// a heredoc around the patch, blank lines and an empty added file; an
/// update's first hunk may leave out its `@@` line, each later one starts
/// with one, and every hunk has a line.
const APPLY_PATCH_GRAMMAR: &str = include_str!("edit/patch/apply_patch.lark");

/// `apply_patch` as an OpenAI custom tool whose input is the patch itself,
/// held to [`APPLY_PATCH_GRAMMAR`] (Responses `tools` entry, `"type":
/// "custom"`): the model's `custom_tool_call` comes back as it is.
fn apply_patch_freeform() -> Value {
    json!({
        "type": "custom",
        "name": "apply_patch",
        "description": "Use the `apply_patch` tool to edit files: a patch of one or more files, \
            applied all or none. This is a FREEFORM tool: the patch itself, not JSON. It is \
            '*** Begin Patch', then file operations, then '*** End Patch'. '*** Add File: <path>' \
            with the new file's lines, each prefixed with '+'. '*** Update File: <path>' \
            (optionally followed by '*** Move to: <new path>') with hunks: each starts with '@@' \
            (optionally '@@ <a line to find first, such as a function's signature>') and has lines \
            prefixed with ' ' (context, about 3 lines before and after), '-' (removed) or '+' \
            (added). '*** Delete File: <path>'. Paths are relative.",
        "format": {
            "type": "grammar",
            "syntax": "lark",
            "definition": APPLY_PATCH_GRAMMAR
        }
    })
}

/// Lock parameters an edit shares with a write.
fn lock_parameters() -> Value {
    json!({
        "expected_mtime_ms": {
            "type": "integer",
            "description": "Optimistic lock: the file's modification time in milliseconds since the epoch, as last read (a result's data.lock). A mismatch gives CONFLICT."
        },
        "expected_size_bytes": {
            "type": "integer",
            "minimum": 0,
            "description": "Optimistic lock: the file's size in bytes, as last read. A mismatch gives CONFLICT."
        },
        "expected_sha256": {
            "type": "string",
            "pattern": "^[0-9a-fA-F]{64}$",
            "description": "Optimistic lock: SHA-256 of the file's content, as last read (hex). A mismatch gives CONFLICT."
        },
        "base": {
            "type": "string",
            "pattern": "^[0-9a-fA-F]{32}$",
            "description": "The version you viewed: view's data.view.base. If the file changed since, your change is merged onto it, or, where the changes meet, nothing is written (CONFLICT)."
        }
    })
}

/// `Edit`: replace text in an existing file, once or several times.
fn edit_definition() -> Value {
    let mut properties = json!({
        "file_path": {
            "type": "string",
            "description": "Path to the file to edit (relative to project root, POSIX style). The file must exist. Required."
        },
        "old_string": {
            "type": "string",
            "description": "The text to replace: copy it from the file, with enough surrounding lines to occur exactly once."
        },
        "new_string": {
            "type": "string",
            "description": "The text to put in its place (must differ from old_string)."
        },
        "replace_all": {
            "type": "boolean",
            "description": "Replace every occurrence of old_string instead of exactly one.",
            "default": false
        },
        "insert_line": {
            "type": "integer",
            "minimum": 0,
            "description": "Insert new_string as lines of their own after this line (0: at the top) instead of replacing; old_string then empty."
        },
        "edits": {
            "type": "array",
            "description": "Several edits of the file instead of old_string/new_string: applied in order, each to the result of the one before, all or none.",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "old_string": {"type": "string"},
                    "new_string": {"type": "string"},
                    "replace_all": {"type": "boolean", "default": false},
                    "insert_line": {"type": "integer", "minimum": 0}
                },
                "required": ["old_string", "new_string"]
            }
        },
        "dry_run": {
            "type": "boolean",
            "description": "If true, show the diff but do not write.",
            "default": false
        }
    });
    merge(&mut properties, lock_parameters());
    json!({
        "name": "Edit",
        "description": "Performs exact string replacements in an existing file. old_string must occur \
            exactly once in the file (or set replace_all); give several edits at once with `edits`. \
            If nothing matches exactly, a match that differs only in line endings, trailing whitespace, \
            uniformly shifted indentation (also tabs for spaces) or typographic quotes and dashes is \
            used when it is the only one, and the result says so. Otherwise nothing is changed and the \
            error lists the lines of every match, or shows the closest region with a diff so that the \
            next try can be right. The file keeps its encoding and line endings. Returns a unified \
            diff preview. Use Write to create a file.",
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": ["file_path"]
        }
    })
}

/// `edit_file`: the MCP filesystem server's shape.
fn edit_file_definition() -> Value {
    json!({
        "name": "edit_file",
        "description": "Make line-based edits to a text file. Each edit replaces exact text sequences \
            with new content (whitespace and quote slips are forgiven when the match is unique). \
            Returns a git-style diff showing the changes made. Only works within allowed directories.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "edits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "oldText": {"type": "string", "description": "Text to search for - must match exactly"},
                            "newText": {"type": "string", "description": "Text to replace with"}
                        },
                        "required": ["oldText", "newText"]
                    }
                },
                "dryRun": {
                    "type": "boolean",
                    "default": false,
                    "description": "Preview changes using git-style diff format"
                }
            },
            "required": ["path", "edits"]
        }
    })
}

/// `apply_patch`: several files in one patch, all or none.
fn apply_patch_definition() -> Value {
    json!({
        "name": "apply_patch",
        "description": "Apply a patch to one or more files, all or none. The patch is: '*** Begin Patch', \
            then file operations, then '*** End Patch'. '*** Add File: <path>' followed by the new \
            file's lines, each prefixed with '+'. '*** Update File: <path>' (optionally followed by \
            '*** Move to: <new path>') followed by hunks: each hunk starts with '@@' (optionally \
            '@@ <a line to find first, such as a function's signature>') and has lines prefixed with \
            ' ' (context, about 3 lines before and after), '-' (removed) or '+' (added). \
            '*** Delete File: <path>'. Paths are relative. Hunks apply in order; context must match \
            the file (whitespace and quote slips are forgiven when the place is unique). Deleting and \
            moving files work only where the host allows them.",
        "parameters": {
            "type": "object",
            "properties": {
                "input": {
                    "type": "string",
                    "description": "The entire patch, from '*** Begin Patch' to '*** End Patch'."
                },
                "dry_run": {
                    "type": "boolean",
                    "description": "If true, show the diff of every file but change nothing.",
                    "default": false
                }
            },
            "required": ["input"]
        }
    })
}

/// `view`: a file's lines or a directory's entries, changing nothing.
fn view_definition() -> Value {
    json!({
        "name": "view",
        "description": "Show a file's lines, numbered as `cat -n` numbers them (the number, a tab, \
            the line), or a directory's entries two levels deep. Changes nothing. At most 2,000 \
            lines and 32,000 characters per answer; when there is more, the last line says how \
            to see it. The answer names the file's encoding and line endings, and its \
            data.view.base names the version you saw: pass it as base to a write or edit so \
            that it changes only that version. Files that are not text are described, not shown.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "The file or directory, relative to the project root (POSIX style; '.' is the root)."
                },
                "view_range": {
                    "type": "array",
                    "items": {"type": "integer"},
                    "minItems": 2,
                    "maxItems": 2,
                    "description": "Lines to show, [first, last], from 1 (of a directory, its own entries); last -1 for the end. Default: from the start."
                }
            },
            "required": ["path"]
        }
    })
}

fn merge(into: &mut Value, from: Value) {
    if let (Value::Object(into), Value::Object(from)) = (into, from) {
        into.extend(from);
    }
}

/// `Write`'s definition.
fn write_definition() -> Value {
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
                "base": {
                    "type": "string",
                    "pattern": "^[0-9a-fA-F]{32}$",
                    "description": "The version you viewed: view's data.view.base. If the file changed since, or no longer exists, nothing is written (CONFLICT)."
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
