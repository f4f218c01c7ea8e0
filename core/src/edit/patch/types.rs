//! A patch's parts, and why one did not parse or apply.

use crate::edit::EditError;

/// A parsed patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The file operations, in order.
    pub ops: Vec<FileOp>,
}

/// One file's operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// Create a file with this content.
    Add {
        /// Where.
        path: String,
        /// Its content.
        content: String,
    },
    /// Remove a file.
    Delete {
        /// Which.
        path: String,
    },
    /// Change a file, and perhaps move it.
    Update {
        /// Which.
        path: String,
        /// Where it goes, if it moves.
        move_to: Option<String>,
        /// Its hunks, in file order.
        hunks: Vec<Hunk>,
    },
}

impl FileOp {
    /// The path the operation names first.
    pub fn path(&self) -> &str {
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path } | FileOp::Update { path, .. } => {
                path
            }
        }
    }
}

/// One hunk of an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// The `@@` line's text: a line to find first (a function, a class).
    pub context: Option<String>,
    /// The lines the hunk replaces: its context and `-` lines.
    pub old: Vec<String>,
    /// The lines it puts there: its context and `+` lines.
    pub new: Vec<String>,
    /// The hunk ends the file (`*** End of File`).
    pub end_of_file: bool,
}

pub(super) const BEGIN: &str = "*** Begin Patch";
pub(super) const END: &str = "*** End Patch";
pub(super) const ADD: &str = "*** Add File: ";
pub(super) const DELETE: &str = "*** Delete File: ";
pub(super) const UPDATE: &str = "*** Update File: ";
pub(super) const MOVE: &str = "*** Move to: ";
pub(super) const END_OF_FILE: &str = "*** End of File";

/// Why a patch did not parse: the message and the patch's line, from 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// What is wrong.
    pub message: String,
    /// Where, from 1.
    pub line: usize,
}

impl ParseError {
    pub(super) fn at(line: usize, message: impl Into<String>) -> Self {
        ParseError {
            message: message.into(),
            line,
        }
    }
}

/// Why a hunk did not apply.
#[derive(Debug, Clone, PartialEq)]
pub enum HunkError {
    /// The `@@` line is nowhere after the hunks before.
    ContextNotFound {
        /// Which hunk, from 0.
        index: usize,
        /// The `@@` line.
        context: String,
    },
    /// The old lines did not apply, as an edit's would not.
    Lines(EditError),
}

impl HunkError {
    /// The message, for the file shown as `path`, of a patch of `count`
    /// hunks for it.
    pub fn message(&self, path: &str, count: usize) -> String {
        match self {
            HunkError::ContextNotFound { index, context } => format!(
                "Hunk {} of '{path}': its '@@ {}' line is not in the file after the hunks before \
                 it. Nothing was changed.",
                index + 1,
                cut(context)
            ),
            HunkError::Lines(err) => err
                .message(path, count)
                .replacen("The edit", "The hunk", 1)
                .replacen("Edit ", "Hunk ", 1)
                .replace("old text was", "old lines were")
                .replace("old text is", "old lines are")
                .replace("old text", "old lines"),
        }
    }
}

pub(super) fn cut(line: &str) -> &str {
    &line[..line.floor_char_boundary(80)]
}
