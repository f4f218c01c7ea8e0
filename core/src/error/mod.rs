//! The one constructor per failure, and what kind of failure each is.
//!
//! Every failure the tool can report is built here, so that each keeps one
//! wording and messages never carry anything learnt about paths outside
//! the root. Code decides by [`ErrorKind`], never by a message; the wire
//! code ([`ErrorCode`]) follows from the kind.
//!
//! The module is a leaf: it imports nothing from the rest of the crate, so
//! that every other module can build its errors here without a circle.
//! The constructors are grouped by what failed: where a call may write
//! (`path`), the file and its content (`content`), the journal
//! (`journal`), what `view` does not show (`view`); the general ones are
//! here.

use std::fmt;
use std::io;

pub use write_tool_wire::ErrorCode;
use write_tool_wire::{Envelope, messages};

mod content;
mod editor;
mod journal;
mod path;
mod view;

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
    /// The file is no longer the version the call's `base` names, and the
    /// call's change could not be merged onto it.
    StaleBase,
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
    /// An idempotency key a change was made with, sent with other
    /// arguments, or committed by a twin of the call while it ran.
    KeyUsed,
    /// A saved content is missing or no longer what was saved.
    SavedAltered,
    /// `view`: nothing is at the path.
    Missing,
    /// `view`: a file the tool does not show (it has other hard links).
    NotShown,
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
            | K::NoSuchChange
            | K::Missing => ErrorCode::InvalidParam,
            K::OutsideRoot
            | K::NotAllowed
            | K::LinkLoop
            | K::Protected
            | K::NotRegularFile
            | K::NotShown => ErrorCode::AccessDenied,
            K::OsRefused | K::ReadOnlyRoot | K::HostRefused => ErrorCode::PermissionDenied,
            K::IsDirectory => ErrorCode::IsDirectory,
            K::Changed
            | K::StaleBase
            | K::Vanished
            | K::Exists
            | K::SharedFile
            | K::RevertConflict
            | K::KeyUsed => ErrorCode::Conflict,
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

    /// This failure in the tool's own words: the `tell` of an answer not
    /// given in another tool's voice (the text editor's).
    pub fn as_is(self) -> Self {
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

    /// A model's whole message or response, not one of its tool calls.
    #[cold]
    pub fn whole_message() -> Self {
        Self::new(
            ErrorKind::UnknownShape,
            "The request is a model's whole message or response, not a tool call. Send each \
             of its tool calls on its own (an Anthropic tool_use block, an OpenAI function_call \
             item or tool_calls entry), or give the whole turn to `write-tool turn --provider \
             anthropic|openai|openai-chat`, which runs them all and answers in the \
             provider's shape.",
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

    /// The host refused the commit because the call's client cancelled it
    /// (`docs/contract.md#cancellation`).
    #[cold]
    pub fn cancelled() -> Self {
        Self::new(ErrorKind::Cancelled, messages::CANCELLED)
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
