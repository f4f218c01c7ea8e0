//! Anthropic's text editor tool, executed as it is
//! (`docs/contract.md#text-editor`): each command runs as the tool's own
//! request through the same stages — `view`, a create-only write, an edit,
//! an insert, a revert of the path's latest change — and its answer's text
//! is then told in the words of Anthropic's reference implementation, which
//! the models that call it know. The rest of the envelope is the request's
//! own.

use std::time::Instant;

use serde_json::Value;
use write_tool_wire::envelope::{Envelope, elapsed_ms};
use write_tool_wire::request::ToolName;
use write_tool_wire::{Status, ViewKind};

use crate::edit::Voice;
use crate::error::ToolError;
use crate::params::{EditorCommand, EditorRequest, RevertRequest, RevertTarget};
use crate::roots::Roots;

use super::config::Config;
use super::prepare::Source;
use super::{revert, single, target, view};

/// The reference's request to look again after an edit.
const REVIEW: &str = "Review the changes and make sure they are as expected. Edit the file \
    again if necessary.";

/// The same after an insert.
const REVIEW_INSERT: &str = "Review the changes and make sure they are as expected (correct \
    indentation, no duplicate lines, etc). Edit the file again if necessary.";

/// Answer one command.
pub(super) fn answer(
    roots: &Roots,
    request: &EditorRequest,
    echo: Value,
    config: &Config,
    start: Instant,
) -> Envelope {
    let path = request.path.as_str();
    let name = request.command.name();
    let tell = |err: ToolError| err.as_text_editor_says(name, path);
    let mut envelope = match &request.command {
        EditorCommand::View(view) => view::answer(roots, view, echo, config, start, tell),
        EditorCommand::Create(write) => {
            single::answer(roots, write, Source::Content, echo, config, start, tell)
        }
        EditorCommand::StrReplace(edit) | EditorCommand::Insert(edit) => {
            let source = Source::Edits(&edit.edits, Voice::TextEditor);
            single::answer(roots, &edit.request, source, echo, config, start, tell)
        }
        &EditorCommand::UndoEdit { dry_run, force } => {
            let how = (dry_run, force);
            undo(roots, path, how, echo, config, start, tell)
        }
    };
    let Some(data) = envelope.data.as_ref() else {
        return envelope;
    };
    // A dry run, a failure and a change cut short say so in the tool's own
    // words: the reference has none for them.
    if envelope.status == Status::Error || !(data.applied || data.view.is_some()) {
        return envelope;
    }
    let snippet = snippet(&data.diff_preview);
    let text = match &request.command {
        EditorCommand::View(_) => viewed(&envelope, path),
        EditorCommand::Create(_) => Some(format!("File created successfully at: {path}")),
        EditorCommand::StrReplace(_) => Some(format!(
            "The file {path} has been edited. Here's the result of running `cat -n` on a \
             snippet of {path}:\n{snippet}{REVIEW}"
        )),
        EditorCommand::Insert(_) => Some(format!(
            "The file {path} has been edited. Here's the result of running `cat -n` on a \
             snippet of the edited file:\n{snippet}{REVIEW_INSERT}"
        )),
        EditorCommand::UndoEdit { .. } => Some(format!(
            "Last edit to {path} undone successfully. Here's the result of running `cat -n` \
             on a snippet of {path}:\n{snippet}"
        )),
    };
    if let Some(mut text) = text {
        // A match the reference would not have found: what was forgiven,
        // in the tool's words.
        if data.edits.iter().any(|e| e.tolerance != "exact") {
            text.push_str(&format!("\nNote: {}", envelope.text));
        }
        envelope.text = text;
    }
    envelope
}

/// `undo_edit`: the latest change of the file `path` names, undone from
/// the journal.
fn undo(
    roots: &Roots,
    path: &str,
    (dry_run, force): (bool, bool),
    echo: Value,
    config: &Config,
    start: Instant,
    tell: impl FnOnce(ToolError) -> ToolError,
) -> Envelope {
    let named = match target::resolve(roots, ToolName::WriteFile, path) {
        Ok(target) => target.display,
        Err(err) => return tell(err).into_envelope(elapsed_ms(start), echo, None),
    };
    let request = RevertRequest {
        target: RevertTarget::LatestOf(named),
        dry_run,
        force,
    };
    revert::answer(roots, &request, echo, config, start, tell)
}

/// A view's text with the reference's first line: a file's lines as
/// `cat -n` shows them, a directory's entries two levels deep.
fn viewed(envelope: &Envelope, path: &str) -> Option<String> {
    let view = envelope.data.as_ref()?.view.as_ref()?;
    let header = match view.kind {
        ViewKind::File if view.lines.is_some() => {
            format!("Here's the result of running `cat -n` on {path}:")
        }
        ViewKind::Directory => format!(
            "Here's the files and directories up to 2 levels deep in {path}, excluding hidden \
             items:"
        ),
        // An empty or binary file: the tool's words say what it is.
        _ => return None,
    };
    let body = envelope.text.split_once('\n').map_or("", |(_, body)| body);
    Some(format!("{header}\n{body}\n"))
}

/// The lines a unified diff shows of the new text, numbered as `cat -n`
/// numbers them (`{n:>6}\t{line}`), each hunk's after the one before:
/// the changed lines with the lines around them.
fn snippet(diff: &str) -> String {
    let mut out = String::new();
    let mut lines = diff.lines();
    while let Some(line) = lines.next() {
        let Some((mut old_left, mut next, mut new_left)) = hunk_header(line) else {
            continue;
        };
        while old_left + new_left > 0 {
            let Some(line) = lines.next() else {
                break;
            };
            let (mark, text) = line.split_at(line.len().min(1));
            match mark {
                " " => {
                    out.push_str(&format!("{next:>6}\t{text}\n"));
                    next += 1;
                    old_left = old_left.saturating_sub(1);
                    new_left = new_left.saturating_sub(1);
                }
                "+" => {
                    out.push_str(&format!("{next:>6}\t{text}\n"));
                    next += 1;
                    new_left = new_left.saturating_sub(1);
                }
                "-" => old_left = old_left.saturating_sub(1),
                // `\ No newline at end of file`, or the cut's mark.
                _ => {}
            }
        }
    }
    out
}

/// A hunk header's old count, new start and new count: `@@ -a,b +c,d @@`.
fn hunk_header(line: &str) -> Option<(u64, u64, u64)> {
    let rest = line.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let count = |range: &str| -> Option<(u64, u64)> {
        match range.split_once(',') {
            Some((start, len)) => Some((start.parse().ok()?, len.parse().ok()?)),
            None => Some((range.parse().ok()?, 1)),
        }
    };
    let (_, old_len) = count(old)?;
    let (new_start, new_len) = count(new)?;
    Some((old_len, new_start.max(1), new_len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snippet_is_the_new_side_of_each_hunk_numbered_as_cat_n_numbers() {
        let diff = "--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n one\n-two\n+2\n+2b\n three\n\
                    @@ -9,2 +10,2 @@\n nine\n-ten\n+10\n\\ No newline at end of file\n";
        assert_eq!(
            snippet(diff),
            "     1\tone\n     2\t2\n     3\t2b\n     4\tthree\n    10\tnine\n    11\t10\n"
        );
        // A removed line that looks like a file header is a line.
        assert_eq!(snippet("@@ -1,2 +1,1 @@\n--- x\n keep\n"), "     1\tkeep\n");
        assert_eq!(snippet(""), "");
        assert_eq!(hunk_header("@@ -0,0 +1 @@"), Some((0, 1, 1)));
    }
}
