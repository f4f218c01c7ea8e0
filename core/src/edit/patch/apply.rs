//! Applying an update's hunks: in order, each after the one before; a
//! hunk's old lines are taken at their first place, byte for byte, after
//! that point (the format's own rule), else on a tolerant rung of the
//! ladder only where that rung finds exactly one place.

use std::time::Instant;

use crate::edit::{Edit, EditError, Edited, Matched, Tolerance, closest, line_numbers, locate};

use super::types::{Hunk, HunkError};

/// The text's line break: its first one's.
fn line_break(text: &str) -> &'static str {
    match memchr::memchr(b'\n', text.as_bytes()) {
        Some(at) if at > 0 && text.as_bytes()[at - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// `hunks` applied to `text` in order.
pub fn apply_hunks(text: &str, hunks: &[Hunk], deadline: Instant) -> Result<Edited, HunkError> {
    let mut current = text.to_owned();
    let mut pos = 0;
    let mut matches = Vec::with_capacity(hunks.len());
    for (index, hunk) in hunks.iter().enumerate() {
        if let Some(context) = &hunk.context {
            pos = after_context(&current, pos, context).ok_or_else(|| {
                HunkError::ContextNotFound {
                    index,
                    context: context.clone(),
                }
            })?;
        }
        let join = |lines: &[String]| -> String {
            lines.iter().map(|l| format!("{l}\n")).collect::<String>()
        };
        if hunk.old.is_empty() {
            // Lines added after the `@@` line, or at the end of the file.
            let at = if hunk.context.is_some() {
                pos
            } else {
                current.len()
            };
            let lb = line_break(&current);
            let mut added: String = hunk.new.iter().map(|l| format!("{l}{lb}")).collect();
            if at == current.len() && !current.is_empty() && !current.ends_with('\n') {
                added.insert_str(0, lb);
            }
            let line = line_numbers(&current, std::iter::once(at))[0];
            current.insert_str(at, &added);
            pos = at + added.len();
            matches.push(Matched {
                tolerance: Tolerance::Exact,
                lines: vec![line],
                repairs: Vec::new(),
            });
            continue;
        }
        let edit = Edit::replace(join(&hunk.old), join(&hunk.new), false);
        let edit = if !current.ends_with('\n') && hunk.end_of_file {
            // The file's last line has no break: neither has the hunk's.
            Edit::replace(
                edit.old.trim_end_matches('\n'),
                edit.new.trim_end_matches('\n'),
                false,
            )
        } else {
            edit
        };
        let found = locate(&current[pos..], &edit, index, true).map_err(|e| {
            HunkError::Lines(match e {
                // Lines of the rest of the file, counted from `pos`.
                EditError::Ambiguous {
                    index,
                    tolerance,
                    lines,
                } => {
                    let base = line_numbers(&current, std::iter::once(pos))[0] - 1;
                    EditError::Ambiguous {
                        index,
                        tolerance,
                        lines: lines.into_iter().map(|l| l + base).collect(),
                    }
                }
                other => other,
            })
        })?;
        let Some((tolerance, regions)) = found else {
            return Err(HunkError::Lines(EditError::NotFound {
                index,
                closest: closest::find(&current, &edit.old, deadline),
                consumed: false,
                gap: None,
            }));
        };
        let region = &regions[0];
        let (start, end) = (pos + region.start, pos + region.end);
        let line = line_numbers(&current, std::iter::once(start))[0];
        current.replace_range(start..end, &region.replacement);
        pos = start + region.replacement.len();
        matches.push(Matched {
            tolerance,
            lines: vec![line],
            repairs: Vec::new(),
        });
    }
    Ok(Edited {
        text: current,
        matches,
    })
}

/// Just after the first line at or after `pos` that is `context`, exactly
/// or once trimmed.
fn after_context(text: &str, pos: usize, context: &str) -> Option<usize> {
    let want = context.trim();
    // From the start of the line `pos` is in.
    let mut at = text[..pos].rfind('\n').map_or(0, |nl| nl + 1);
    for line in text[at..].split_inclusive('\n') {
        let end = at + line.len();
        if line.trim() == want && end > pos {
            return Some(end);
        }
        at = end;
    }
    None
}
