//! `Edit`, `MultiEdit`, `edit_file` and `apply_patch`: their arguments.

use serde_json::{Map, Value};

use write_tool_wire::request::{self as shapes, ToolName};

use crate::edit::Edit;
use crate::edit::patch::{self, Patch};
use crate::error::ToolError;

use super::fields::{Request, either_path, fields, flag, missing, wrong_type};

/// `apply_patch`: a patch, parsed (`docs/contract.md#patch`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchRequest {
    /// Its file operations.
    pub patch: Patch,
    /// Compute everything, change nothing.
    pub dry_run: bool,
}

/// An edit of one existing file (`docs/contract.md#edit`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditRequest {
    /// The write's parameters: path, dry run, lock values, encoding; the
    /// content is the edited text.
    pub request: Request,
    /// The edits, in order.
    pub edits: Vec<Edit>,
}

/// A patch from its text, as the typed interface takes it.
pub fn parse_patch(text: &str, dry_run: bool) -> Result<PatchRequest, ToolError> {
    let mut args = Map::new();
    args.insert("patch".into(), Value::String(text.to_owned()));
    args.insert("dry_run".into(), Value::Bool(dry_run));
    patch_request(&args)
}

/// `apply_patch`'s arguments: the patch text as `input` (the name
/// OpenAI's function tool gives it) or `patch`.
pub(super) fn patch_request(args: &Map<String, Value>) -> Result<PatchRequest, ToolError> {
    let text = match (args.get("input"), args.get("patch")) {
        (Some(Value::String(text)), _) | (None, Some(Value::String(text))) => text,
        (Some(_), _) => return Err(wrong_type("input", "a string holding the patch")),
        (None, Some(_)) => return Err(wrong_type("patch", "a string holding the patch")),
        (None, None) => return Err(missing("input")),
    };
    let patch = patch::parse(text).map_err(|e| {
        ToolError::invalid_param(format!(
            "The patch does not parse (line {}): {} Nothing was changed.",
            e.line, e.message
        ))
    })?;
    Ok(PatchRequest {
        patch,
        dry_run: flag(args, "dry_run", false)?,
    })
}

/// Most edits one call may carry.
const MAX_EDITS: usize = 1000;

/// An edit's arguments, in any of its shapes: `Edit` (`file_path`,
/// `old_string`, `new_string`, `replace_all`), `MultiEdit` (`file_path`,
/// `edits: [{old_string, new_string, replace_all}]`), `edit_file`
/// (`path`, `edits: [{oldText, newText}]`, `dryRun`). Either spelling of a
/// name is taken in every shape, and `old_text`/`new_text` too.
pub(super) fn edit(args: &Map<String, Value>, tool: &str) -> Result<EditRequest, ToolError> {
    let path = either_path(args, "file_path")?;
    let edits = match args.get("edits") {
        Some(Value::Array(items)) if items.is_empty() => {
            return Err(ToolError::invalid_param(
                "Parameter 'edits' is empty: give one edit or more.",
            ));
        }
        Some(Value::Array(items)) if items.len() > MAX_EDITS => {
            return Err(ToolError::invalid_param(format!(
                "Parameter 'edits' holds {} edits, over the limit of {MAX_EDITS} per call.",
                items.len()
            )));
        }
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::Object(item) => one_edit(item)
                    .map_err(|e| ToolError::invalid_param(format!("edits[{i}]: {}", e.message()))),
                _ => Err(wrong_type(&format!("edits[{i}]"), "an object")),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err(wrong_type("edits", "an array of edits")),
        None => vec![one_edit(args)?],
    };
    let dry_run = match (args.get("dry_run"), args.get("dryRun")) {
        (Some(_), _) => flag(args, "dry_run", false)?,
        (None, Some(_)) => flag(args, "dryRun", false)?,
        (None, None) => false,
    };
    // The write's own parameters, without the edits' texts (copied once
    // already into `edits`).
    let mut with_path: Map<String, Value> = args
        .iter()
        .filter(|(key, _)| {
            !matches!(
                key.as_str(),
                "edits"
                    | "old_string"
                    | "new_string"
                    | "oldText"
                    | "newText"
                    | "old_text"
                    | "new_text"
            )
        })
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    with_path.insert("path".into(), Value::String(path));
    let mut request = fields(&with_path, Some(String::new()), tool_of(tool))?;
    if request.create_only {
        return Err(ToolError::invalid_param(
            "An edit changes a file that exists; 'create_only' has no place in it. To create \
             a file, use Write.",
        ));
    }
    // An edit always writes the file back in its own format.
    request.keep_format = true;
    request.dry_run = dry_run;
    Ok(EditRequest { request, edits })
}

/// Path rules follow the family of the shape: `edit_file` is the MCP
/// filesystem server's, whose paths may be absolute under an allowed
/// directory, as `write_file`'s are.
pub(super) fn tool_of(shape: &str) -> ToolName {
    if shape == shapes::EDIT_FILE {
        ToolName::WriteFile
    } else {
        ToolName::Write
    }
}

/// One edit's fields: a replacement (`old_string`, `new_string`,
/// `replace_all`), or an insert (`insert_line` and the text as
/// `new_string` or, as Anthropic's models send it, `insert_text`).
pub(super) fn one_edit(item: &Map<String, Value>) -> Result<Edit, ToolError> {
    // `null` is no insert: a client's schema may send every field.
    if let Some(line) = item.get("insert_line").filter(|v| !v.is_null()) {
        return one_insert(item, line);
    }
    let text = |names: [&str; 3]| -> Result<String, ToolError> {
        for name in names {
            match item.get(name) {
                Some(Value::String(text)) => return Ok(text.clone()),
                Some(_) => return Err(wrong_type(name, "a string")),
                None => {}
            }
        }
        Err(missing(names[0]))
    };
    let old = text(["old_string", "oldText", "old_text"])?;
    let new = text(["new_string", "newText", "new_text"])?;
    let replace_all = match (item.get("replace_all"), item.get("replaceAll")) {
        (Some(_), _) => flag(item, "replace_all", false)?,
        (None, Some(_)) => flag(item, "replaceAll", false)?,
        (None, None) => false,
    };
    Ok(Edit::replace(old, new, replace_all))
}

/// An insert's fields.
fn one_insert(item: &Map<String, Value>, line: &Value) -> Result<Edit, ToolError> {
    let line = line
        .as_u64()
        .ok_or_else(|| wrong_type("insert_line", "a line number from 0 (0: before the first)"))?;
    let replacing = ["old_string", "oldText", "old_text"]
        .iter()
        .any(|name| item.get(*name).is_some_and(|v| v != ""));
    if replacing || item.get("replace_all").is_some_and(|v| v == true) {
        return Err(ToolError::invalid_param(
            "An edit either replaces old_string or inserts after insert_line, not both. \
             Nothing was changed.",
        ));
    }
    for name in [
        "insert_text",
        "new_string",
        "newText",
        "new_text",
        "new_str",
    ] {
        match item.get(name) {
            Some(Value::String(text)) => return Ok(Edit::insert(line, text.clone())),
            Some(_) => return Err(wrong_type(name, "a string")),
            None => {}
        }
    }
    Err(missing("insert_text"))
}
