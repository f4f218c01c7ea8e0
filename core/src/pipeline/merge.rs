//! A write or edit made on a version of the file that has changed since:
//! merged onto the file as it is now instead of refused
//! (`docs/contract.md#merge`). The version the call names by its `base`
//! must be known — kept by the journal when a view showed it — or there
//! is no merge: the call is refused as it always was. The merge is
//! `diffy`'s three-way merge of lines (the one of `git merge-file`): the
//! version seen, the file now, and the model's change made on the version
//! seen. A clean merge is written as the call's content, through every
//! later stage; where the two changes meet, nothing is written and the
//! answer shows where.

use diffy::{ConflictStyle, MergeOptions};

use crate::diff;
use crate::error::{ErrorKind, ToolError};
use crate::format::{self, Plan, TextEncoding};
use crate::fs::Existing;
use crate::params::Request;

use crate::edit::{Edit, Matched, Voice};

use super::config::Config;
use super::edits;
use super::lock;

/// What the call made of the version it saw.
pub(super) enum Made<'a> {
    /// The file's whole content.
    Content,
    /// Edits, told in their voice.
    Edits(&'a [Edit], Voice),
}

/// The version a call's stale `base` names, when its change may be merged
/// onto the file now: `err` is the lock stage's refusal, which stands
/// otherwise.
pub(super) fn base_for(
    request: &Request,
    made: Option<&Made<'_>>,
    old: Option<&Existing>,
    config: &Config,
    err: &ToolError,
) -> Option<Vec<u8>> {
    if err.kind() != ErrorKind::StaleBase || old.is_none() || made.is_none() {
        return None;
    }
    let base = request.base.as_deref()?;
    let bytes = config.journal.as_deref()?.seen(base)?;
    // The kept copy is the version only if it still hashes to it.
    (lock::base_of(&bytes) == base).then_some(bytes)
}

/// The text of the merge of the call's change, made on `base`, onto the
/// file now (`plan` is its format plan), and the edits' matches in `base`.
pub(super) fn merged(
    base: &[u8],
    plan: &Plan<'_>,
    request: &Request,
    made: &Made<'_>,
    display: &str,
    config: &Config,
) -> Result<(String, Vec<Matched>), ToolError> {
    let stale = || ToolError::changed_since_viewed(display);
    let seen = format::plan(Some(base), request.keep_format, request.encoding)
        .map_err(|e| ToolError::not_in_encoding(&TextEncoding::Legacy(e.0).name()))?;
    if seen.old_not_text || plan.old_not_text {
        return Err(stale());
    }
    let (theirs, matches) = match made {
        // The content in the file's format, as the write would give it.
        Made::Content => (plan.text_of(&request.content).text.into_owned(), Vec::new()),
        Made::Edits(list, voice) => {
            let edited = edits::apply(&seen, list, *voice, display, config)?;
            (edited.text, edited.matches)
        }
    };
    let (ancestor, now) = (&*seen.old_text, &*plan.old_text);
    if !diff::within_budget(ancestor, now, &config.diff)
        || !diff::within_budget(ancestor, &theirs, &config.diff)
    {
        return Err(ToolError::too_much_to_merge(display));
    }
    let mut options = MergeOptions::new();
    options.set_conflict_style(ConflictStyle::Merge);
    match options.merge(ancestor, now, &theirs) {
        Ok(merged) => Ok((merged, matches)),
        Err(marked) => {
            let (count, shown) = conflicts(&marked);
            Err(ToolError::merge_conflict(display, count, &shown))
        }
    }
}

/// Most lines of conflicts an answer shows.
const MAX_CONFLICT_LINES: usize = 40;

/// How many places the two changes meet in `marked` (the merge with
/// conflict markers), and those places, each under the line of the file
/// now where it starts, with their markers named for a model (`now`,
/// `yours`), at most [`MAX_CONFLICT_LINES`] lines.
fn conflicts(marked: &str) -> (usize, String) {
    #[derive(PartialEq)]
    enum In {
        Merged,
        Now,
        Yours,
    }
    let (mut count, mut line_now, mut left) = (0, 1, 0);
    let mut state = In::Merged;
    let mut shown: Vec<String> = Vec::new();
    let mut show = |line: String, shown: &mut Vec<String>| {
        if shown.len() < MAX_CONFLICT_LINES {
            shown.push(line);
        } else {
            left += 1;
        }
    };
    for line in marked.lines() {
        match state {
            In::Merged if line.starts_with("<<<<<<< ") => {
                count += 1;
                state = In::Now;
                show(format!("At line {line_now}:"), &mut shown);
                show("<<<<<<< now".to_owned(), &mut shown);
            }
            In::Merged => line_now += 1,
            In::Now if line == "=======" => {
                state = In::Yours;
                show(line.to_owned(), &mut shown);
            }
            In::Now => {
                line_now += 1;
                show(line.to_owned(), &mut shown);
            }
            In::Yours if line.starts_with(">>>>>>> ") => {
                state = In::Merged;
                show(">>>>>>> yours".to_owned(), &mut shown);
            }
            In::Yours => show(line.to_owned(), &mut shown),
        }
    }
    if left > 0 {
        shown.push(format!("({left} more lines of conflicts not shown.)"));
    }
    (count, shown.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::{MAX_CONFLICT_LINES, conflicts};

    #[test]
    fn conflicts_are_counted_and_shown_with_a_models_names() {
        let marked = "a\n<<<<<<< ours\nb1\nb1b\n=======\nb2\n>>>>>>> theirs\nc\n\
                      <<<<<<< ours\nd1\n=======\n>>>>>>> theirs\n";
        let (count, shown) = conflicts(marked);
        assert_eq!(count, 2);
        assert_eq!(
            shown,
            "At line 2:\n<<<<<<< now\nb1\nb1b\n=======\nb2\n>>>>>>> yours\n\
             At line 5:\n<<<<<<< now\nd1\n=======\n>>>>>>> yours"
        );
        // A long one is cut at its bound, saying how much more there is.
        let long = format!("<<<<<<< o\n{}=======\n>>>>>>> t\n", "x\n".repeat(50));
        let (count, shown) = conflicts(&long);
        assert_eq!(count, 1);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines.len(), MAX_CONFLICT_LINES + 1, "{shown}");
        assert_eq!(lines[0], "At line 1:");
        assert_eq!(
            lines.last(),
            Some(&"(14 more lines of conflicts not shown.)")
        );
    }
}
