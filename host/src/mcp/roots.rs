//! Where the MCP server's roots come from when it follows the client, and
//! why a call may have none (`docs/contract.md#roots`).

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::Peer;

use crate::{Root, ambient_authority};

/// Why the server has no root to run a call under. The message is for the
/// person who configures the client: the client shows it as the call's
/// error and as a log message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootsError {
    /// `--root` named something that is not a usable directory.
    Configured {
        /// The roots as given.
        roots: String,
        /// What the system said.
        reason: String,
    },
    /// No `--root`, the client offers no roots, and the server's working
    /// directory is the file system's root.
    NoProject,
    /// The client's `roots/list` failed.
    ListFailed(String),
    /// The client listed no `file:` roots.
    NoFileRoots,
    /// A root the client listed is not a usable directory.
    ClientRootUnusable(String),
}

impl std::fmt::Display for RootsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RootsError::Configured { roots, reason } => write!(
                f,
                "The project root this server was started with (--root {roots}) is not a usable \
                 directory: {reason}. Nothing was written. Fix the path in the MCP client's \
                 configuration of write-tool: an absolute path to an existing directory."
            ),
            RootsError::NoProject => f.write_str(
                "This server has no project root: it was started without --root, the client \
                 offers no roots, and its working directory is the file system's root. Nothing \
                 was written. Add \"--root\", \"/absolute/path/to/project\" to the server's args \
                 in the MCP client's configuration.",
            ),
            RootsError::ListFailed(reason) => write!(
                f,
                "The client's roots could not be listed ({reason}); nothing was written."
            ),
            RootsError::NoFileRoots => f.write_str(
                "The client offered no directory roots (file URIs); nothing was written.",
            ),
            RootsError::ClientRootUnusable(reason) => write!(
                f,
                "A root the client offered is not a usable directory ({reason}); nothing was \
                 written."
            ),
        }
    }
}

impl std::error::Error for RootsError {}

/// The client's roots (`roots/list`), opened.
///
/// MCP deprecated roots (SEP-2577) after the protocol versions clients
/// speak today; while they offer roots, the server follows them.
///
/// # Ambient Authority
///
/// Opening them resolves the paths the client named against the process's
/// ambient file-system authority, as [`Root::open_all`] does for `--root`.
#[allow(deprecated, reason = "clients still offer roots; see above")]
pub(super) async fn client_roots(
    peer: &Peer<RoleServer>,
    options: &crate::Options,
) -> Result<Arc<Root>, RootsError> {
    let listed = peer
        .list_roots()
        .await
        .map_err(|e| RootsError::ListFailed(e.to_string()))?;
    let paths: Vec<PathBuf> = listed
        .roots
        .iter()
        .filter_map(|root| file_path(&root.uri))
        .collect();
    if paths.is_empty() {
        return Err(RootsError::NoFileRoots);
    }
    options
        .root(&paths, ambient_authority())
        .map(Arc::new)
        .map_err(|e| RootsError::ClientRootUnusable(e.to_string()))
}

/// The path of a `file:` URI (`file:///a/b`, `file://localhost/a/b`),
/// percent-decoded by `url`; `None` for anything else, a URI naming
/// another host among them.
fn file_path(uri: &str) -> Option<PathBuf> {
    let url = url::Url::parse(uri).ok()?;
    if url.scheme() != "file" {
        return None;
    }
    url.to_file_path().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_are_paths() {
        assert_eq!(file_path("file:///a/b"), Some(PathBuf::from("/a/b")));
        assert_eq!(
            file_path("file://localhost/a%20b/c"),
            Some(PathBuf::from("/a b/c"))
        );
        assert_eq!(file_path("https://example.com/a"), None);
        assert_eq!(file_path("file://server/share"), None);
        // An unfinished escape stays as it is (WHATWG URL, as clients
        // write them).
        assert_eq!(file_path("file:///a%2"), Some(PathBuf::from("/a%2")));
        assert_eq!(file_path("file:///a%2Fb"), Some(PathBuf::from("/a/b")));
    }
}
