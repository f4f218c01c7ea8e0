//! The project root, the only ambient authority the host uses, and the
//! WASI context that hands it to the guest.

use std::io;
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

/// An opened project root.
#[derive(Debug)]
pub struct Root {
    path: PathBuf,
    dir: Dir,
}

impl Root {
    /// Open `path` as the project root.
    ///
    /// # Ambient Authority
    ///
    /// This is the one function in the host that resolves a path against the
    /// process's ambient file-system authority. Everything after it works
    /// relative to the handle it returns: the guest gets the root (and only
    /// the root) as its preopen `.`, and the host's own follow-up (restoring
    /// permission bits) goes through the same capability.
    ///
    /// Fails when `path` does not exist or is not a directory.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Root> {
        let given = path.as_ref();
        let path = given.canonicalize()?;
        let dir = Dir::open_ambient_dir(&path, ambient_authority())?;
        if !dir.dir_metadata()?.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                "not a directory",
            ));
        }
        Ok(Root { path, dir })
    }

    /// The canonical host path of the root.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The capability for the root.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// The WASI context of one call: the root preopened read-write as `.`,
    /// guest stderr into a bounded in-memory pipe, and nothing else — no
    /// environment, no arguments, no stdin, no stdout, no network (those are
    /// the builder's defaults, written down here so that they stay so).
    ///
    /// wasmtime-wasi 48's builder takes a host path, not an open `Dir`, so it
    /// opens the canonical path that [`Root::open`] recorded.
    pub(crate) fn wasi_ctx(
        &self,
        stderr: MemoryOutputPipe,
        read_only: bool,
    ) -> wasmtime::Result<WasiCtx> {
        let mut builder = WasiCtxBuilder::new();
        // Must precede `preopened_dir`, which captures it. The host is
        // synchronous, so blocking file I/O on this thread is what we want.
        builder.allow_blocking_current_thread(true);
        let perms = if read_only {
            FsPerms::ReadOnly
        } else {
            FsPerms::ReadWrite
        };
        builder.preopened_dir(&self.path, ".", perms)?;
        builder.stderr(stderr);
        builder
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        Ok(builder.build())
    }
}

/// A regular file's permission bits, read before the guest replaces it, so
/// that they can be put back on the new file (WASI has no chmod).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ModeSnapshot {
    #[cfg(unix)]
    mode: u32,
}

impl ModeSnapshot {
    /// The mode of the regular file `path` names under the root, if any.
    /// `path` is normalised the way the guest does it (`.` and empty names
    /// dropped, `..` applied lexically); links are followed by cap-std,
    /// which stays inside the root.
    pub(crate) fn take(root: &Root, path: &str) -> Option<ModeSnapshot> {
        let rel = normalize(path)?;
        let meta = root.dir.metadata(&rel).ok()?;
        if !meta.is_file() {
            return None;
        }
        #[cfg(unix)]
        {
            use cap_std::fs::PermissionsExt;
            Some(ModeSnapshot {
                mode: meta.permissions().mode() & 0o7777,
            })
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            None
        }
    }

    /// Put the mode back on `resolved` (root-relative) if it differs.
    pub(crate) fn restore(self, root: &Root, resolved: &str) -> io::Result<()> {
        #[cfg(unix)]
        {
            use cap_std::fs::{Permissions, PermissionsExt};
            let current = root.dir.symlink_metadata(resolved)?;
            if !current.is_file() || current.permissions().mode() & 0o7777 == self.mode {
                return Ok(());
            }
            root.dir
                .set_permissions(resolved, Permissions::from_mode(self.mode))
        }
        #[cfg(not(unix))]
        {
            let _ = (root, resolved);
            Ok(())
        }
    }
}

fn normalize(path: &str) -> Option<PathBuf> {
    if path.starts_with('/') || path.contains('\\') || path.contains('\0') {
        return None;
    }
    let mut names: Vec<&str> = Vec::new();
    for name in path.split('/') {
        match name {
            "" | "." => {}
            ".." => {
                names.pop()?;
            }
            name => names.push(name),
        }
    }
    (!names.is_empty()).then(|| names.iter().collect())
}
