//! The one constructor per failure, and what kind of failure each is.
//!
//! Every failure the tool can report is built here, so that each keeps one
//! wording and messages never carry anything learnt about paths outside
//! the root. Code decides by [`ErrorKind`], never by a message; the wire
//! code ([`ErrorCode`]) follows from the kind.
//!
//! The module is a leaf: it imports nothing from the rest of the crate, so
//! that every other module can build its errors here without a circle.

use std::fmt;
use std::io;

pub use write_tool_wire::ErrorCode;
use write_tool_wire::{Envelope, messages};

/// What went wrong, for code that decides by it (as [`io::ErrorKind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A parameter is missing, of the wrong type or malformed.
    InvalidParam,
    /// The request is no shape of tool call the tool knows.
    UnknownShape,
    /// The content is empty and the host does not allow it.
    EmptyContent,
    /// The content is over the host's limit.
    ContentTooLarge,
    /// An absolute path given to a tool that takes relative ones.
    AbsolutePath,
    /// The path climbs above the root or leads outside it.
    OutsideRoot,
    /// `write_file`: the path is in none of the allowed directories.
    NotAllowed,
    /// Too many links, or a cycle.
    LinkLoop,
    /// The resolved path is protected.
    Protected,
    /// The operating system refused the change, inside the root.
    OsRefused,
    /// The host made the root read-only.
    ReadOnlyRoot,
    /// The target is a FIFO, socket, device or similar.
    NotRegularFile,
    /// The target is a directory.
    IsDirectory,
    /// The path ends in `/` and names nothing, or a file.
    TrailingSlash,
    /// A parent of the path is not a directory.
    ParentNotDirectory,
    /// The old file is larger than the tool reads.
    ExistingTooLarge,
    /// The file differs from the lock values the call gave.
    Changed,
    /// The file the lock values describe is gone.
    Vanished,
    /// `create_only`, and a file is there.
    Exists,
    /// Lock values for a file with other hard links, which is not read.
    SharedFile,
    /// The content holds a character the file's encoding cannot store.
    Unencodable,
    /// An omission placeholder in content that removes lines, refused.
    Placeholder,
    /// The system's storage refused (disk full, quota, file too large).
    Storage,
    /// The call was cancelled before its commit point.
    Cancelled,
    /// The journal could not record the change.
    Journal,
    /// The host keeps no journal, or refuses this request.
    HostRefused,
    /// The journal has no such change or checkpoint.
    NoSuchChange,
    /// A revert would undo changes made since.
    RevertConflict,
    /// A saved content is missing or no longer what was saved.
    SavedAltered,
    /// Another I/O failure.
    Io,
    /// A host or runtime failure with no better kind.
    Execution,
}

impl ErrorKind {
    /// The stable wire code of this kind.
    pub fn code(self) -> ErrorCode {
        use ErrorKind as K;
        match self {
            K::InvalidParam
            | K::UnknownShape
            | K::EmptyContent
            | K::ContentTooLarge
            | K::AbsolutePath
            | K::TrailingSlash
            | K::ParentNotDirectory
            | K::Unencodable
            | K::Placeholder
            | K::NoSuchChange => ErrorCode::InvalidParam,
            K::OutsideRoot | K::NotAllowed | K::LinkLoop | K::Protected | K::NotRegularFile => {
                ErrorCode::AccessDenied
            }
            K::OsRefused | K::ReadOnlyRoot | K::HostRefused => ErrorCode::PermissionDenied,
            K::IsDirectory => ErrorCode::IsDirectory,
            K::Changed | K::Vanished | K::Exists | K::SharedFile | K::RevertConflict => {
                ErrorCode::Conflict
            }
            K::ExistingTooLarge
            | K::Storage
            | K::Cancelled
            | K::Journal
            | K::SavedAltered
            | K::Io
            | K::Execution => ErrorCode::ExecutionError,
        }
    }
}

/// A failure of one tool call: its kind and the message shown to the
/// caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    kind: ErrorKind,
    /// The message; the envelope's `text` equals it.
    message: String,
    /// The code, where it is not the kind's own (an I/O failure that the
    /// system reported as a permission refusal).
    code: Option<ErrorCode>,
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code(), self.message)
    }
}

impl std::error::Error for ToolError {}

impl ToolError {
    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The wire code.
    pub fn code(&self) -> ErrorCode {
        self.code.unwrap_or_else(|| self.kind.code())
    }

    /// The message the caller reads.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same failure, its message introduced by `prefix` (which file of
    /// several it is about).
    pub fn prefixed(mut self, prefix: &str) -> Self {
        self.message = format!("{prefix}: {}", self.message);
        self
    }

    /// The error envelope for this failure.
    pub fn into_envelope(
        self,
        time_ms: u64,
        params_input: serde_json::Value,
        path_resolved: Option<String>,
    ) -> Envelope {
        let code = self.code();
        Envelope::error(code, self.message, time_ms, params_input, path_resolved)
    }

    #[cold]
    fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            message: message.into(),
            code: None,
        }
    }

    /// `INVALID_PARAM` with a message naming the problem.
    #[cold]
    pub fn invalid_param(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidParam, message)
    }

    /// The request is none of the shapes the tool reads; `shapes` names
    /// the ones it does.
    #[cold]
    pub fn unknown_shape(shapes: &str) -> Self {
        Self::new(
            ErrorKind::UnknownShape,
            format!("The request is not a tool call this tool reads. It takes {shapes}."),
        )
    }

    /// Empty content, which the host does not allow.
    #[cold]
    pub fn empty_content() -> Self {
        Self::new(ErrorKind::EmptyContent, messages::EMPTY_CONTENT)
    }

    /// Content over the host's limit of `limit` bytes.
    #[cold]
    pub fn content_too_large(len: u64, limit: u64) -> Self {
        Self::new(
            ErrorKind::ContentTooLarge,
            format!(
                "Content is {len} bytes, {} of {limit} bytes (a host setting); nothing was \
                 written.",
                messages::CONTENT_OVER_LIMIT
            ),
        )
    }

    /// An absolute path where a relative one is wanted; `relative` is the
    /// path's form relative to the project root, when it lies there, and
    /// `write_file` says whether another allowed directory holds it (which
    /// `write_file` reaches by its absolute name).
    #[cold]
    pub fn absolute_path(relative: Option<&str>, write_file: bool) -> Self {
        let mut message = match relative {
            Some(relative) => {
                format!("Absolute path not allowed. Use relative path: '{relative}'.")
            }
            None => "Absolute path not allowed. Use relative path.".to_owned(),
        };
        if write_file {
            message.push_str(
                " The path is in another allowed directory: write_file takes it by its \
                 absolute path.",
            );
        }
        Self::new(ErrorKind::AbsolutePath, message)
    }

    /// The path climbs above the root or leads outside it.
    #[cold]
    pub fn outside_root() -> Self {
        Self::new(ErrorKind::OutsideRoot, "Path must be within project root.")
    }

    /// `write_file`'s wording for a path outside every allowed root
    /// (`docs/contract.md#several-roots`).
    #[cold]
    pub fn not_allowed(path: &str) -> Self {
        Self::new(
            ErrorKind::NotAllowed,
            format!("path '{path}' is not in allowed directories"),
        )
    }

    /// More links than a path may follow, or a cycle.
    #[cold]
    pub fn link_loop() -> Self {
        Self::new(
            ErrorKind::LinkLoop,
            "Too many levels of symbolic links in path.",
        )
    }

    /// The resolved path is protected (`.git`, or a host pattern).
    #[cold]
    pub fn protected() -> Self {
        Self::new(ErrorKind::Protected, "Path is protected.")
    }

    /// The operating system refused to change the file or its directory,
    /// though the path stays inside the root.
    #[cold]
    pub fn os_refused() -> Self {
        Self::new(
            ErrorKind::OsRefused,
            "Permission denied writing to file: the system refused to change it or its directory \
             (it may be immutable, append-only, or granted read-only).",
        )
    }

    /// The host opened the root read-only.
    #[cold]
    pub fn read_only_root() -> Self {
        Self::new(
            ErrorKind::ReadOnlyRoot,
            "Permission denied writing to file: the project root is read-only.",
        )
    }

    /// The target exists and is a FIFO, socket, device or similar.
    #[cold]
    pub fn not_regular_file() -> Self {
        Self::new(ErrorKind::NotRegularFile, "Target is not a regular file.")
    }

    /// The walk saw a regular file, and what the tool then opened at its
    /// name was something else: it was replaced in between.
    #[cold]
    pub fn replaced_while_read() -> Self {
        Self::new(
            ErrorKind::NotRegularFile,
            "The target was replaced while the tool read it: it is no longer the regular file the \
             tool found there. Nothing was written.",
        )
    }

    /// The rename found a directory where the file was: it was replaced
    /// while the tool wrote.
    #[cold]
    pub fn became_directory() -> Self {
        Self::new(
            ErrorKind::IsDirectory,
            "Target path became a directory while the tool wrote it; nothing was written.",
        )
    }

    /// The host refused the commit because the call's client cancelled it
    /// (`docs/contract.md#cancellation`).
    #[cold]
    pub fn cancelled() -> Self {
        Self::new(ErrorKind::Cancelled, messages::CANCELLED)
    }

    /// The target is a directory (or the root itself, or ends in `/`).
    #[cold]
    pub fn is_directory() -> Self {
        Self::new(ErrorKind::IsDirectory, "Target path is a directory.")
    }

    /// The path ends in `/` but nothing is there.
    #[cold]
    pub fn slash_but_nothing_there() -> Self {
        Self::new(
            ErrorKind::TrailingSlash,
            "Path ends with '/', but there is nothing there; to create a file, leave out the trailing '/'.",
        )
    }

    /// The path ends in `/` but names a file.
    #[cold]
    pub fn slash_but_a_file() -> Self {
        Self::new(
            ErrorKind::TrailingSlash,
            "Path ends with '/', but there is a file there, not a directory; leave out the trailing '/'.",
        )
    }

    /// A component before the last one is an existing non-directory.
    #[cold]
    pub fn parent_not_directory() -> Self {
        Self::new(
            ErrorKind::ParentNotDirectory,
            "A parent of the path is not a directory.",
        )
    }

    /// The file to replace is larger than the tool reads.
    #[cold]
    pub fn existing_too_large(len: u64, limit: u64) -> Self {
        Self::new(
            ErrorKind::ExistingTooLarge,
            format!(
                "The existing file is {len} bytes, more than the {limit} bytes this tool reads to \
                 diff and replace a file; nothing was written."
            ),
        )
    }

    /// The journal could not record the change (`why`): the write is
    /// refused, since a write never goes unrecorded while it is on.
    #[cold]
    pub fn journal(why: &str) -> Self {
        Self::new(
            ErrorKind::Journal,
            format!(
                "The journal could not record this change: {why}. Nothing was written. Free \
                 space in the journal's directory (`write-tool journal gc` drops old changes), \
                 or turn the journal off (`--no-journal`)."
            ),
        )
    }

    /// A change a writer that stopped left half done could not be
    /// finished or rolled back (`why`): this call writes nothing, and the
    /// next one tries again.
    #[cold]
    pub fn unfinished(why: &str) -> Self {
        Self::new(
            ErrorKind::Journal,
            format!(
                "A change another writer left half done (it was stopped while committing) could \
                 not be finished or rolled back ({why}); the next call tries again. Nothing of \
                 this call was written."
            ),
        )
    }

    /// The journal could not record the change because of `err`.
    #[cold]
    pub fn journal_io(err: &io::Error) -> Self {
        use std::io::ErrorKind as K;
        let why = match err.kind() {
            K::StorageFull | K::QuotaExceeded | K::FileTooLarge => {
                "the journal's file system is full or over its quota"
            }
            K::ArgumentListTooLong => "the change is too large for one record of the journal",
            K::WouldBlock => "another writer held the journal for too long",
            K::PermissionDenied | K::ReadOnlyFilesystem => {
                "the journal's directory cannot be written"
            }
            K::OutOfMemory => "the journal is over its size bound even after dropping old changes",
            _ => "the journal could not be written",
        };
        Self::journal(why)
    }

    /// The host keeps no journal: nothing can be undone.
    #[cold]
    pub fn no_journal() -> Self {
        Self::new(
            ErrorKind::HostRefused,
            "This host keeps no journal, so changes cannot be undone: it has to grant the tool \
             a directory for it (WRITE_TOOL_JOURNAL). Nothing was changed.",
        )
    }

    /// `write_many` without a journal: its all-or-nothing rests on it.
    #[cold]
    pub fn no_journal_for_many() -> Self {
        Self::new(
            ErrorKind::HostRefused,
            "write_many needs the journal, which this host does not keep: a crash between two \
             renames could not be rolled back, so the writes would not be all or nothing. \
             Write the files one by one, or grant the tool a journal directory \
             (WRITE_TOOL_JOURNAL). Nothing was written.",
        )
    }

    /// A patch that needs the journal (several files, a delete or a move)
    /// on a host that keeps none.
    #[cold]
    pub fn no_journal_for_patch() -> Self {
        Self::new(
            ErrorKind::HostRefused,
            "This patch changes several files, or deletes or moves one: that needs the journal, \
             which this host does not keep, to be all or nothing and undoable. Apply the files' \
             changes one by one (a patch of one Update or Add File), or grant the tool a \
             journal directory (WRITE_TOOL_JOURNAL). Nothing was written.",
        )
    }

    /// The host does not let calls do `what`.
    #[cold]
    pub fn host_refuses(what: &str) -> Self {
        Self::new(
            ErrorKind::HostRefused,
            format!("The host does not let calls {what}. Nothing was changed."),
        )
    }

    /// A model asked to undo a change a person made.
    #[cold]
    pub fn persons_change(id: &str) -> Self {
        Self::new(
            ErrorKind::HostRefused,
            format!(
                "{id} was made by a person, not by a model: a model may not undo it. Nothing \
                 was changed."
            ),
        )
    }

    /// A revert would put back the content of a file the tool never read
    /// (it had other hard links), which the journal therefore never saved.
    #[cold]
    pub fn unrevertable(path: &str, id: &str) -> Self {
        Self::new(
            ErrorKind::InvalidParam,
            format!(
                "{id} cannot be reverted: '{path}' had other hard links when {id} replaced it, so \
                 the tool never read it and the journal holds nothing to put back. Nothing was \
                 changed."
            ),
        )
    }

    /// A model's revert would remove a file it did not create as it is
    /// now, on a host that does not let calls remove files.
    #[cold]
    pub fn revert_would_delete(path: &str) -> Self {
        Self::new(
            ErrorKind::HostRefused,
            format!(
                "Reverting would remove '{path}', which changed since it was created, and the \
                 host does not let calls remove files (WRITE_TOOL_ALLOW_DELETE). Nothing was \
                 changed."
            ),
        )
    }

    /// No change or checkpoint of that name in the journal.
    #[cold]
    pub fn no_such_change(what: &str) -> Self {
        Self::new(
            ErrorKind::NoSuchChange,
            format!(
                "The journal has no {what} (it may have been dropped by the journal's bounds). \
                 Nothing was changed."
            ),
        )
    }

    /// A revert would lose changes made since the ones it undoes.
    #[cold]
    pub fn revert_conflict(paths: &[String], lost: &str) -> Self {
        Self::new(
            ErrorKind::RevertConflict,
            format!(
                "{} changed since the change being reverted: {}. Nothing was changed. Reverting \
                 anyway ('force': true) loses what this diff shows:\n{lost}",
                if paths.len() == 1 { "A file" } else { "Files" },
                paths
                    .iter()
                    .map(|p| format!("'{p}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    }

    /// The content the journal saved for `path` cannot be restored.
    #[cold]
    pub fn saved_altered(path: &str, missing: bool) -> Self {
        Self::new(
            ErrorKind::SavedAltered,
            if missing {
                format!("The journal's saved content of '{path}' is gone; nothing was changed.")
            } else {
                format!(
                    "The journal's saved content of '{path}' was changed since it was saved (its \
                     digest differs); it is not restored, and nothing was changed."
                )
            },
        )
    }

    /// The file on disk differs from the lock values the call gave.
    #[cold]
    pub fn changed(path: &str) -> Self {
        Self::new(
            ErrorKind::Changed,
            format!(
                "File '{path}' changed since it was read (its size, modification time or hash \
                 differ from the lock values given); nothing was written. Read it again, or \
                 dry-run this write: the answer's data.lock holds its current lock values."
            ),
        )
    }

    /// The lock values describe a file, and there is none.
    #[cold]
    pub fn vanished(path: &str) -> Self {
        Self::new(
            ErrorKind::Vanished,
            format!(
                "File '{path}' no longer exists, though the lock values given describe one; \
                 nothing was written. Write without lock values to create it."
            ),
        )
    }

    /// Lock values for a file with other hard links, which the tool does
    /// not read, so cannot compare.
    #[cold]
    pub fn shared_file_lock(path: &str) -> Self {
        Self::new(
            ErrorKind::SharedFile,
            format!(
                "File '{path}' has other hard links, which may lie beyond the project: the tool \
                 does not read it, so it cannot check lock values against it; nothing was \
                 written. Write without lock values to replace it."
            ),
        )
    }

    /// An edit of a file with other hard links, which the tool does not
    /// read.
    pub fn shared_file_edit(path: &str) -> Self {
        Self::new(
            ErrorKind::SharedFile,
            format!(
                "File '{path}' has other hard links, which may lie beyond the project: the tool \
                 does not read it, so it cannot edit it; nothing was written. Use Write to \
                 replace it whole."
            ),
        )
    }

    /// `create_only`, and the file exists: `len` bytes, when they may be
    /// told.
    #[cold]
    pub fn exists(path: &str, len: Option<u64>) -> Self {
        let size = match len {
            Some(1) => " (1 byte)".to_owned(),
            Some(len) => format!(" ({len} bytes)"),
            None => String::new(),
        };
        Self::new(
            ErrorKind::Exists,
            format!(
                "File '{path}' already exists{size}; create_only refuses to replace it. \
                 Read it first, then write without create_only to replace it, or choose another path."
            ),
        )
    }

    /// The content holds `character`, on its `line` (from 1), which the
    /// file's `encoding` cannot store.
    #[cold]
    pub fn unencodable(encoding: &str, character: char, line: u64) -> Self {
        Self::new(
            ErrorKind::Unencodable,
            format!(
                "The file is {encoding} and '{character}' (U+{:04X}, line {line}) cannot be \
                 written in it; nothing was written. Use characters the encoding has, or pass \
                 keep_format: false to write the file as UTF-8.",
                character as u32
            ),
        )
    }

    /// The call named an encoding the file is not valid text in.
    #[cold]
    pub fn not_in_encoding(encoding: &str) -> Self {
        Self::new(
            ErrorKind::Unencodable,
            format!(
                "The file is not valid {encoding} text, the encoding the call named; nothing was \
                 written. Name the encoding it is in, or leave out encoding to let the tool find it."
            ),
        )
    }

    /// The file's encoding is a guess the content does not settle:
    /// `candidates` are the likeliest, the guess first.
    #[cold]
    pub fn encoding_unsettled(candidates: &[String]) -> Self {
        Self::new(
            ErrorKind::Unencodable,
            format!(
                "The file's encoding is uncertain: it reads as {}, and the content does not tell \
                 which (no line of the file with non-ASCII text is in it unchanged). Nothing was \
                 written. Pass encoding: \"<name>\" naming the file's encoding, or keep_format: \
                 false to write the content as UTF-8.",
                candidates.join(", ")
            ),
        )
    }

    /// An omission placeholder in content that removes lines, refused.
    #[cold]
    pub fn placeholder(line: u64, text: &str) -> Self {
        let text = text.trim();
        Self::new(
            ErrorKind::Placeholder,
            format!(
                "Line {line} of the content looks like an omission placeholder ({:?}) while the \
                 write removes lines; nothing was written. Write the complete file content.",
                &text[..text.floor_char_boundary(80)]
            ),
        )
    }

    /// A host or runtime failure that has no better kind.
    #[cold]
    pub fn execution(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Execution, message)
    }

    /// Map an I/O error met while `doing` something (for example
    /// "writing to file") to a kind and a message that says what happened.
    /// A refusal of the capability layer is the caller's to tell apart
    /// first (`fs::io_error`).
    ///
    /// The OS error text is deliberately not included: it can name host
    /// paths. The kinds below are the ones an agent can act on.
    #[cold]
    pub fn from_io(err: &io::Error, doing: &str) -> Self {
        use io::ErrorKind as K;
        match err.kind() {
            K::PermissionDenied | K::ReadOnlyFilesystem => ToolError {
                kind: ErrorKind::Io,
                message: format!("Permission denied {doing}."),
                code: Some(ErrorCode::PermissionDenied),
            },
            K::StorageFull => Self::new(
                ErrorKind::Storage,
                format!("Disk full: no space left on device while {doing}."),
            ),
            K::QuotaExceeded => Self::new(
                ErrorKind::Storage,
                format!("Disk quota exceeded while {doing}."),
            ),
            K::FileTooLarge => Self::new(
                ErrorKind::Storage,
                format!("File too large for the file system while {doing}."),
            ),
            K::IsADirectory => Self::is_directory(),
            K::NotADirectory => Self::parent_not_directory(),
            K::InvalidFilename => Self::new(
                ErrorKind::InvalidParam,
                "The file system refused the file name.",
            ),
            K::NotFound => Self::new(
                ErrorKind::Io,
                format!(
                    "A directory on the path was removed or replaced while {doing}; nothing was written."
                ),
            ),
            _ => Self::new(ErrorKind::Io, format!("I/O error while {doing}.")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_map_to_stable_codes() {
        let cases = [
            (io::ErrorKind::PermissionDenied, ErrorCode::PermissionDenied),
            (io::ErrorKind::StorageFull, ErrorCode::ExecutionError),
            (io::ErrorKind::QuotaExceeded, ErrorCode::ExecutionError),
            (io::ErrorKind::IsADirectory, ErrorCode::IsDirectory),
            (io::ErrorKind::NotADirectory, ErrorCode::InvalidParam),
            (io::ErrorKind::Other, ErrorCode::ExecutionError),
        ];
        for (kind, code) in cases {
            let err = ToolError::from_io(&io::Error::from(kind), "writing to file");
            assert_eq!(err.code(), code, "{kind:?}");
        }
        let full = ToolError::from_io(
            &io::Error::from(io::ErrorKind::StorageFull),
            "writing to file",
        );
        assert_eq!(full.kind(), ErrorKind::Storage);
        assert_eq!(
            full.message(),
            "Disk full: no space left on device while writing to file."
        );
    }

    #[test]
    fn a_system_refusal_is_an_io_kind_with_the_permission_code() {
        let err = ToolError::from_io(
            &io::Error::from(io::ErrorKind::PermissionDenied),
            "writing to file",
        );
        assert_eq!(err.kind(), ErrorKind::Io);
        assert_eq!(err.code(), ErrorCode::PermissionDenied);
        assert_ne!(err.kind(), ErrorKind::OutsideRoot);
    }
}
