//! The front stage of an edit (`docs/contract.md#edit`): the target must be
//! a text file the tool can read, and the edits turn its decoded text into
//! the content the rest of the stages write.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::edit::patch::{self, Hunk};
use crate::edit::{self, Edit, Edited, Voice};
use crate::error::ToolError;
use crate::format::Plan;
use crate::fs::TargetKind;
use crate::params::EditRequest;
use write_tool_wire::echo;

use super::config::Config;
use super::target::Target;

/// An edit (or a patch's removal, `removing`) changes a file that is
/// there and that the tool reads.
pub(super) fn check_target(
    target: &Target<'_>,
    shared: bool,
    removing: bool,
) -> Result<(), ToolError> {
    if target.resolved.kind != TargetKind::File {
        let display = &target.display;
        // `check_writable` refused a directory and a special file before.
        return Err(if removing {
            ToolError::no_file_to_remove(display)
        } else {
            ToolError::no_file_to_edit(display)
        });
    }
    if shared {
        return Err(ToolError::shared_file_edit(&target.display));
    }
    Ok(())
}

/// The old file's text with `edits` made, or why they cannot be.
pub(super) fn apply(
    plan: &Plan<'_>,
    edits: &[Edit],
    voice: Voice,
    display: &str,
    config: &Config,
) -> Result<Edited, ToolError> {
    let deadline = text_of(plan, display, config)?;
    edit::apply(&plan.old_text, edits, deadline)
        .map_err(|e| ToolError::invalid_param(e.told(display, edits, voice)))
}

/// The old file's text with a patch's `hunks` applied, or why they
/// cannot be.
pub(super) fn apply_hunks(
    plan: &Plan<'_>,
    hunks: &[Hunk],
    display: &str,
    config: &Config,
) -> Result<Edited, ToolError> {
    let deadline = text_of(plan, display, config)?;
    patch::apply_hunks(&plan.old_text, hunks, deadline)
        .map_err(|e| ToolError::invalid_param(e.message(display, hunks.len())))
}

/// The target of an append: a file, or nothing yet (a directory and
/// what is no file were refused before); not a file with other names,
/// which is never read, so its text could not be kept.
pub(super) fn check_append_target(target: &Target<'_>, shared: bool) -> Result<(), ToolError> {
    if shared {
        return Err(ToolError::invalid_param(format!(
            "File '{}' has other hard links, which may lie beyond the project: the tool does \
             not read it, so it cannot append to it; nothing was written. Use Write to \
             replace it whole.",
            target.display
        )));
    }
    Ok(())
}

/// The file's text with `text` after it, starting on a line of its own.
pub(super) fn appended(plan: &Plan<'_>, text: &str, display: &str) -> Result<String, ToolError> {
    if plan.old_not_text {
        return Err(ToolError::invalid_param(format!(
            "File '{display}' is not text in any encoding the tool knows, so nothing can be \
             appended to it. Nothing was written."
        )));
    }
    let old = &plan.old_text;
    let open = !old.is_empty() && !old.ends_with(['\n', '\r']);
    let mut all = String::with_capacity(old.len() + usize::from(open) + text.len());
    all.push_str(old);
    if open {
        all.push('\n');
    }
    all.push_str(text);
    Ok(all)
}

/// The old file must be text to be edited; the search for a closest
/// region then has as many milliseconds as the diff's budget.
fn text_of(plan: &Plan<'_>, display: &str, config: &Config) -> Result<Instant, ToolError> {
    if plan.old_not_text {
        return Err(ToolError::invalid_param(format!(
            "File '{display}' is not text in any encoding the tool knows, so it cannot be \
             edited. Nothing was written."
        )));
    }
    Ok(Instant::now() + Duration::from_millis(config.diff.budget_ms))
}

/// The `params_input` echo of a typed edit.
pub(super) fn echo(request: &EditRequest) -> Value {
    let edits: Vec<Value> = request
        .edits
        .iter()
        .map(|e| match e.insert_line {
            Some(line) => json!({
                "insert_line": line,
                "new_text": echo::content(&e.new),
            }),
            None => json!({
                "old_text": echo::content(&e.old),
                "new_text": echo::content(&e.new),
                "replace_all": e.replace_all,
            }),
        })
        .collect();
    let mut args = serde_json::Map::new();
    args.insert("path".into(), Value::String(request.request.path.clone()));
    args.insert("edits".into(), Value::Array(edits));
    args.insert("dry_run".into(), Value::Bool(request.request.dry_run));
    echo::arguments(args)
}
