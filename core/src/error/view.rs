//! What `view` does not show, and why.

use super::{ErrorKind, ToolError};

impl ToolError {
    /// `view` of a path where nothing is.
    #[cold]
    pub fn nothing_to_view(path: &str) -> Self {
        Self::new(
            ErrorKind::Missing,
            format!(
                "'{path}{}View its directory to see what is there, or use Write to create it.",
                write_tool_wire::messages::NOTHING_THERE
            ),
        )
    }

    /// A patch's `Delete File` of a path where nothing is, in `view`'s
    /// words (which the file API's 404 reads).
    #[cold]
    pub fn no_file_to_remove(path: &str) -> Self {
        Self::new(
            ErrorKind::Missing,
            format!(
                "'{path}{}Nothing was removed; view its directory to see what is there.",
                write_tool_wire::messages::NOTHING_THERE
            ),
        )
    }

    /// `view` of a file with other hard links, which the tool does not
    /// read: showing it would show a file that may lie beyond the project.
    #[cold]
    pub fn shared_file_view(path: &str) -> Self {
        Self::new(
            ErrorKind::NotShown,
            format!(
                "File '{path}' has other hard links, which may lie beyond the project: the tool \
                 does not read it, so it does not show it."
            ),
        )
    }

    /// `view` of a file larger than the tool reads.
    #[cold]
    pub fn too_large_to_view(path: &str, len: u64, limit: u64) -> Self {
        Self::new(
            ErrorKind::ExistingTooLarge,
            format!(
                "File '{path}' is {len} bytes, over the {limit} the tool reads; it is not \
                 shown. Read it with another tool, or ask the host for a larger limit."
            ),
        )
    }
}
