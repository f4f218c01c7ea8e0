//! Error codes and the one constructor per failure.
//!
//! Every failure the tool can report is built here, so that each code keeps
//! one wording and messages never carry anything learnt about paths outside
//! the root.

use std::fmt;
use std::io;

use write_tool_wire::Envelope;
pub use write_tool_wire::ErrorCode;

/// A failure of one tool call: a code and the message shown to the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// The stable code.
    pub code: ErrorCode,
    /// The message; the envelope's `text` equals it.
    pub message: String,
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}

impl ToolError {
    /// The error envelope for this failure.
    pub fn into_envelope(
        self,
        time_ms: u64,
        params_input: serde_json::Value,
        path_resolved: Option<String>,
    ) -> Envelope {
        Envelope::error(
            self.code,
            self.message,
            time_ms,
            params_input,
            path_resolved,
        )
    }

    #[cold]
    fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ToolError {
            code,
            message: message.into(),
        }
    }

    /// `INVALID_PARAM` with a message naming the problem.
    #[cold]
    pub fn invalid_param(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidParam, message)
    }

    /// An absolute path where a relative one is wanted; `relative` is the
    /// path's form relative to the project root, when it lies there.
    #[cold]
    pub fn absolute_path(relative: Option<&str>) -> Self {
        match relative {
            Some(relative) => Self::invalid_param(format!(
                "Absolute path not allowed. Use relative path: '{relative}'."
            )),
            None => Self::invalid_param("Absolute path not allowed. Use relative path."),
        }
    }

    /// The path climbs above the root or leads outside it.
    #[cold]
    pub fn outside_root() -> Self {
        Self::new(ErrorCode::AccessDenied, "Path must be within project root.")
    }

    /// `write_file`'s wording for a path outside every allowed root
    /// (`docs/contract.md#several-roots`).
    #[cold]
    pub fn not_allowed(path: &str) -> Self {
        Self::new(
            ErrorCode::AccessDenied,
            format!("path '{path}' is not in allowed directories"),
        )
    }

    /// More than [`MAX_LINKS`](crate::path::MAX_LINKS) links, or a cycle.
    #[cold]
    pub fn link_loop() -> Self {
        Self::new(
            ErrorCode::AccessDenied,
            "Too many levels of symbolic links in path.",
        )
    }

    /// The resolved path is protected (`.git`, or a host pattern).
    #[cold]
    pub fn protected() -> Self {
        Self::new(ErrorCode::AccessDenied, "Path is protected.")
    }

    /// The operating system refused to change the file or its directory,
    /// though the path stays inside the root.
    #[cold]
    pub fn os_refused() -> Self {
        Self::new(
            ErrorCode::PermissionDenied,
            "Permission denied writing to file: the system refused to change it or its directory \
             (it may be immutable, append-only, or granted read-only).",
        )
    }

    /// The host opened the root read-only.
    #[cold]
    pub fn read_only_root() -> Self {
        Self::new(
            ErrorCode::PermissionDenied,
            "Permission denied writing to file: the project root is read-only.",
        )
    }

    /// The target exists and is a FIFO, socket, device or similar.
    #[cold]
    pub fn not_regular_file() -> Self {
        Self::new(ErrorCode::AccessDenied, "Target is not a regular file.")
    }

    /// The target is a directory (or the root itself, or ends in `/`).
    #[cold]
    pub fn is_directory() -> Self {
        Self::new(ErrorCode::IsDirectory, "Target path is a directory.")
    }

    /// The path ends in `/` but nothing is there.
    #[cold]
    pub fn slash_but_nothing_there() -> Self {
        Self::invalid_param(
            "Path ends with '/', but there is nothing there; to create a file, leave out the trailing '/'.",
        )
    }

    /// The path ends in `/` but names a file.
    #[cold]
    pub fn slash_but_a_file() -> Self {
        Self::invalid_param(
            "Path ends with '/', but there is a file there, not a directory; leave out the trailing '/'.",
        )
    }

    /// A component before the last one is an existing non-directory.
    #[cold]
    pub fn parent_not_directory() -> Self {
        Self::invalid_param("A parent of the path is not a directory.")
    }

    /// The file to replace is larger than the tool reads.
    #[cold]
    pub fn existing_too_large(len: u64, limit: u64) -> Self {
        Self::execution(format!(
            "The existing file is {len} bytes, more than the {limit} bytes this tool reads to \
             diff and replace a file; nothing was written."
        ))
    }

    /// An optimistic-lock parameter did not match.
    #[cold]
    pub fn conflict() -> Self {
        Self::new(
            ErrorCode::Conflict,
            "File changed since it was read; Read it again.",
        )
    }

    /// `create_only`, and the file exists.
    #[cold]
    pub fn exists(path: &str, len: u64) -> Self {
        let unit = if len == 1 { "byte" } else { "bytes" };
        Self::new(
            ErrorCode::Conflict,
            format!(
                "File '{path}' already exists ({len} {unit}); create_only refuses to replace it. \
                 Read it first, then write without create_only to replace it, or choose another path."
            ),
        )
    }

    /// The content holds a character the file's encoding cannot store.
    #[cold]
    pub fn unencodable(err: &crate::tool::Unencodable) -> Self {
        Self::invalid_param(format!(
            "The file is {} and '{}' (U+{:04X}, line {}) cannot be written in it; nothing was \
             written. Use characters the encoding has, or pass keep_format: false to write the \
             file as UTF-8.",
            err.encoding, err.character, err.character as u32, err.line
        ))
    }

    /// An omission placeholder in content that removes lines, refused.
    #[cold]
    pub fn placeholder(line: u64, text: &str) -> Self {
        Self::invalid_param(format!(
            "Line {line} of the content looks like an omission placeholder ({:?}) while the \
             write removes lines; nothing was written. Write the complete file content.",
            crate::tool::cut(text.trim(), 80)
        ))
    }

    /// A host or runtime failure that has no better code.
    #[cold]
    pub fn execution(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::ExecutionError, message)
    }

    /// Map an I/O error met while `doing` something (for example
    /// "writing to file") to a code and a message that says what happened.
    ///
    /// The OS error text is deliberately not included: it can name host
    /// paths. The kinds below are the ones an agent can act on.
    #[cold]
    pub fn from_io(err: &io::Error, doing: &str) -> Self {
        use io::ErrorKind as K;
        if crate::fs::sys::is_sandbox_refusal(err) {
            return Self::outside_root();
        }
        match err.kind() {
            K::PermissionDenied | K::ReadOnlyFilesystem => Self::new(
                ErrorCode::PermissionDenied,
                format!("Permission denied {doing}."),
            ),
            K::StorageFull => {
                Self::execution(format!("Disk full: no space left on device while {doing}."))
            }
            K::QuotaExceeded => Self::execution(format!("Disk quota exceeded while {doing}.")),
            K::FileTooLarge => {
                Self::execution(format!("File too large for the file system while {doing}."))
            }
            K::IsADirectory => Self::is_directory(),
            K::NotADirectory => Self::parent_not_directory(),
            K::InvalidFilename => Self::invalid_param("The file system refused the file name."),
            K::NotFound => Self::execution(format!(
                "A directory on the path was removed or replaced while {doing}; nothing was written."
            )),
            _ => Self::execution(format!("I/O error while {doing}.")),
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
            assert_eq!(err.code, code, "{kind:?}");
        }
        let full = ToolError::from_io(
            &io::Error::from(io::ErrorKind::StorageFull),
            "writing to file",
        );
        assert_eq!(
            full.message,
            "Disk full: no space left on device while writing to file."
        );
    }
}
