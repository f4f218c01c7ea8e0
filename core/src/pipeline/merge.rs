//! A write or edit made on a version of the file that has changed since:
//! merged onto the file as it is now instead of refused
//! (`docs/contract.md#merge`). The version the call names by its `base`
//! must be known — kept by the journal when a view showed it — or there
//! is no merge: the call is refused as it always was. The merge is a
//! three-way merge of lines as `git merge-file` makes it
//! ([`diff::merge3`]): the version seen, the file now, and the model's
//! change made on the version seen. A clean merge is written as the call's content, through every
//! later stage; where the two changes meet, nothing is written and the
//! answer shows where.

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
    display: &str,
    base: Option<&str>,
    made: Option<&Made<'_>>,
    old: Option<&Existing>,
    config: &Config,
    err: &ToolError,
) -> Option<Vec<u8>> {
    if err.kind() != ErrorKind::StaleBase || old.is_none() || made.is_none() {
        return None;
    }
    let base = base?;
    let bytes = config.journal.as_deref()?.seen(display, base)?;
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
    match diff::merge3(&seen.old_text, &plan.old_text, &theirs, &config.diff) {
        diff::Merged::Clean(merged) => Ok((merged, matches)),
        diff::Merged::TooLarge => Err(ToolError::too_much_to_merge(display)),
        diff::Merged::LoneCr => Err(stale()),
        diff::Merged::Conflicts(places) => Err(ToolError::merge_conflict(
            display,
            places.len(),
            &shown(&places),
        )),
    }
}

/// Most lines of conflicts an answer shows.
const MAX_CONFLICT_LINES: usize = 40;

/// The places two changes meet, each under the line of the file now
/// where it starts, the file's lines after `<<<<<<< now` and the model's
/// after `=======`, at most [`MAX_CONFLICT_LINES`] lines in all.
fn shown(places: &[diff::Conflict]) -> String {
    let mut lines = Vec::new();
    for place in places {
        lines.push(format!("At line {}:", place.line));
        lines.push("<<<<<<< now".to_owned());
        lines.extend(place.now.iter().cloned());
        lines.push("=======".to_owned());
        lines.extend(place.yours.iter().cloned());
        lines.push(">>>>>>> yours".to_owned());
    }
    let left = lines.len().saturating_sub(MAX_CONFLICT_LINES);
    lines.truncate(MAX_CONFLICT_LINES);
    if left > 0 {
        lines.push(format!("({left} more lines of conflicts not shown.)"));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::{MAX_CONFLICT_LINES, shown};
    use crate::diff::Conflict;

    fn place(line: usize, now: &[&str], yours: &[&str]) -> Conflict {
        let owned = |l: &[&str]| l.iter().map(|s| (*s).to_owned()).collect();
        Conflict {
            line,
            now: owned(now),
            yours: owned(yours),
        }
    }

    #[test]
    fn conflicts_are_shown_under_their_lines_with_a_models_names() {
        let text = shown(&[place(2, &["b1", "b1b"], &["b2"]), place(5, &["d1"], &[])]);
        assert_eq!(
            text,
            "At line 2:\n<<<<<<< now\nb1\nb1b\n=======\nb2\n>>>>>>> yours\n\
             At line 5:\n<<<<<<< now\nd1\n=======\n>>>>>>> yours"
        );
        // A long one is cut at its bound, saying how much more there is.
        let many: Vec<&str> = vec!["x"; 50];
        let text = shown(&[place(1, &many, &[])]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), MAX_CONFLICT_LINES + 1, "{text}");
        assert_eq!(lines[0], "At line 1:");
        assert_eq!(
            lines.last(),
            Some(&"(14 more lines of conflicts not shown.)")
        );
    }
}
