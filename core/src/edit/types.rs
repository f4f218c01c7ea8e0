//! What an edit is, and what applying edits gives.

use super::canon::Tolerance;
use super::repair::Repair;

/// One edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The text to find.
    pub old: String,
    /// The text to put in its place.
    pub new: String,
    /// Replace every place the old text is, rather than exactly one.
    pub replace_all: bool,
    /// Insert the new text after this line (from 1; 0: before the first)
    /// instead of replacing old text, which is then empty.
    pub insert_line: Option<u64>,
}

impl Edit {
    /// Replace `old` by `new`: in exactly one place, or every one.
    pub fn replace(old: impl Into<String>, new: impl Into<String>, replace_all: bool) -> Edit {
        Edit {
            old: old.into(),
            new: new.into(),
            replace_all,
            insert_line: None,
        }
    }

    /// Insert `text` after line `line` (0: before the first).
    pub fn insert(line: u64, text: impl Into<String>) -> Edit {
        Edit {
            old: String::new(),
            new: text.into(),
            replace_all: false,
            insert_line: Some(line),
        }
    }
}

/// Where one edit applied and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched {
    /// The rung that found it.
    pub tolerance: Tolerance,
    /// The first line of each place, from 1, in the text the edit applied
    /// to.
    pub lines: Vec<u64>,
    /// What was repaired in the edit's texts before the rung found it.
    pub repairs: Vec<Repair>,
}

/// The text after every edit.
#[derive(Debug)]
pub struct Edited {
    /// The new text.
    pub text: String,
    /// Each edit's match, in order.
    pub matches: Vec<Matched>,
}

/// The line, from 1, of each of `starts` (ascending) in `text`.
pub(crate) fn line_numbers(text: &str, starts: impl Iterator<Item = usize>) -> Vec<u64> {
    let mut line = 1;
    let mut from = 0;
    starts
        .map(|at| {
            line += memchr::memchr_iter(b'\n', &text.as_bytes()[from..at]).count() as u64;
            from = at;
            line
        })
        .collect()
}

/// Whether some non-blank line of `text` has indentation.
pub(super) fn has_indentation(text: &str) -> bool {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.starts_with([' ', '\t']))
}

/// Whether `text` has a line that is `line` once trimmed.
pub(super) fn has_line(text: &str, line: &str) -> bool {
    text.lines().any(|l| l.trim() == line)
}

/// One place an edit changes, in the text it applies to.
#[derive(Debug)]
pub(super) struct Region {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) replacement: String,
    /// The old text's indentation is the file's here, as written.
    pub(super) indent_kept: bool,
}
