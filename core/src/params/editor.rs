//! Anthropic's text editor tool (`str_replace_based_edit_tool`, and
//! `str_replace_editor` of the versions with `undo_edit`): each command's
//! arguments, as the model sends them in a `tool_use` block's `input`
//! (`docs/contract.md#text-editor`). Each command is one of the tool's own
//! requests, so every guarantee of those holds.

use serde_json::{Map, Value};

use write_tool_wire::request as shapes;

use crate::error::ToolError;

use super::edit::{EditRequest, edit};
use super::fields::{Request, fields, flag, wrong_type};
use super::view::{ViewRequest, view};

/// One command of the text editor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditorRequest {
    /// The path as the model gave it, which the answer repeats.
    pub path: String,
    /// What to do.
    pub command: EditorCommand,
}

/// The text editor's commands, each as the request it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorCommand {
    /// `view`: a file's lines or a directory's entries.
    View(ViewRequest),
    /// `create`: a new file (never one that exists, as the reference
    /// implementation refuses).
    Create(Request),
    /// `str_replace`: one old text replaced.
    StrReplace(EditRequest),
    /// `insert`: text inserted after a line.
    Insert(EditRequest),
    /// `undo_edit`: the path's latest change undone, from the journal (a
    /// dry run, or forced over a change made since, as a revert may be).
    UndoEdit {
        /// Compute everything, change nothing.
        dry_run: bool,
        /// Undo even over a change made since, losing it.
        force: bool,
    },
}

impl EditorCommand {
    /// The command's name.
    pub fn name(&self) -> &'static str {
        match self {
            EditorCommand::View(_) => "view",
            EditorCommand::Create(_) => "create",
            EditorCommand::StrReplace(_) => "str_replace",
            EditorCommand::Insert(_) => "insert",
            EditorCommand::UndoEdit { .. } => "undo_edit",
        }
    }
}

/// A parameter a command needs, missing: the reference's words.
fn required(name: &str, command: &str) -> ToolError {
    ToolError::invalid_param(format!(
        "Parameter `{name}` is required for command: {command}"
    ))
}

/// A string parameter, if given.
fn text(args: &Map<String, Value>, name: &str) -> Result<Option<String>, ToolError> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(wrong_type(name, "a string")),
    }
}

/// The text editor's arguments, called as `tool` (which names its
/// commands in the answer to an unknown one).
pub(super) fn editor(args: &Map<String, Value>, tool: &str) -> Result<EditorRequest, ToolError> {
    let command = match args.get("command") {
        Some(Value::String(command)) => command.as_str(),
        Some(_) => return Err(wrong_type("command", "a string")),
        None => return Err(required("command", "any")),
    };
    let path = text(args, "path")?.ok_or_else(|| required("path", command))?;
    // Every command's paths follow the MCP filesystem server's rules,
    // whose absolute paths under a root are taken as this tool's models
    // send them.
    let command = match command {
        "view" => EditorCommand::View(view(args)?),
        "create" => {
            let content = text(args, "file_text")?.ok_or_else(|| required("file_text", command))?;
            let mut request = fields(args, Some(content), shapes::ToolName::WriteFile)?;
            request.create_only = true;
            EditorCommand::Create(request)
        }
        "str_replace" => {
            let old = text(args, "old_str")?.ok_or_else(|| required("old_str", command))?;
            let new = text(args, "new_str")?.unwrap_or_default();
            let mut args = without_texts(args);
            args.insert("old_string".into(), Value::String(old));
            args.insert("new_string".into(), Value::String(new));
            EditorCommand::StrReplace(edit(&args, shapes::EDIT_FILE)?)
        }
        "insert" => {
            let line = args
                .get("insert_line")
                .ok_or_else(|| required("insert_line", command))?
                .clone();
            // Anthropic's documentation names the text `new_str`; its
            // models send `insert_text`.
            let inserted = match text(args, "insert_text")? {
                Some(inserted) => inserted,
                None => text(args, "new_str")?.ok_or_else(|| required("insert_text", command))?,
            };
            let mut args = without_texts(args);
            args.insert("insert_line".into(), line);
            args.insert("insert_text".into(), Value::String(inserted));
            EditorCommand::Insert(edit(&args, shapes::EDIT_FILE)?)
        }
        "undo_edit" => EditorCommand::UndoEdit {
            dry_run: flag(args, "dry_run", false)?,
            force: flag(args, "force", false)?,
        },
        other => {
            let undo = if tool == shapes::TEXT_EDITOR_UNDO {
                ", undo_edit"
            } else {
                ""
            };
            return Err(ToolError::invalid_param(format!(
                "Unrecognized command {}. The allowed commands for the {tool} tool are: view, \
                 create, str_replace, insert{undo}",
                super::fields::truncate(other, 64)
            )));
        }
    };
    Ok(EditorRequest { path, command })
}

/// The parameters an edit takes besides its texts, which the command
/// gives under its own names: nothing else reaches the edit, so that the
/// change made is the one the command shows (no `edits` of another shape
/// in its place, no `replace_all` the command does not have).
const EDIT_PARAMETERS: [&str; 8] = [
    "path",
    "dry_run",
    "expected_mtime_ms",
    "expected_size_bytes",
    "expected_sha256",
    "base",
    "report_sha256",
    "encoding",
];

/// The arguments an edit takes, without the command's texts.
fn without_texts(args: &Map<String, Value>) -> Map<String, Value> {
    args.iter()
        .filter(|(key, _)| EDIT_PARAMETERS.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}
