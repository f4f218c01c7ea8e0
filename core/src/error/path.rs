//! Where a call may not write: paths, links, protected places, what is
//! there instead of a file.

use super::{ErrorKind, ToolError};

impl ToolError {
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

    /// A link to remove whose target the tool cannot read: an absolute
    /// one, which the component's sandbox does not show (natively it
    /// could, and is refused alike), or one that is not UTF-8 text, so
    /// the journal could not make it again.
    #[cold]
    pub fn unreadable_link(path: &str) -> Self {
        Self::new(
            ErrorKind::OutsideRoot,
            format!(
                "'{path}' is a link to an absolute path, or to a name that is not UTF-8 text, \
                 which this tool does not read: its removal could not be undone, so nothing was \
                 deleted. Remove it outside the tool."
            ),
        )
    }

    /// A link to remove that leads to a protected place: git's
    /// `core.hooksPath` or an include followed through it protect the
    /// place, not the link's name, so its removal would leave that place
    /// open to writes, and a link made again would hand git what was
    /// written there.
    #[cold]
    pub fn protected_link(path: &str) -> Self {
        Self::new(
            ErrorKind::Protected,
            format!(
                "'{path}' is a link to a protected place: removing it would unprotect that \
                 place, so nothing was deleted."
            ),
        )
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
}
