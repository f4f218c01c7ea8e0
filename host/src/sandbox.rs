//! The project root, the only ambient authority the host uses, and the
//! WASI context that hands it to the guest.

use std::io;
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use crate::bindings::exports::write_tool::tool::tool::AllowedRoot;

/// The opened project root, and any other allowed roots (seed-004 mode).
#[derive(Debug)]
pub struct Root {
    project: Opened,
    others: Vec<Opened>,
}

/// One opened directory and the absolute names that address it.
#[derive(Debug)]
struct Opened {
    path: PathBuf,
    dir: Dir,
    names: Vec<String>,
}

impl Opened {
    fn open(given: &Path) -> io::Result<Opened> {
        let path = given.canonicalize()?;
        let dir = Dir::open_ambient_dir(&path, ambient_authority())?;
        if !dir.dir_metadata()?.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                "not a directory",
            ));
        }
        // The spelling the user gave (made absolute, links kept) and the
        // canonical one: a `write_file` call may use either. Paths that are
        // not UTF-8 cannot travel to the guest and are left out.
        let mut names: Vec<String> = Vec::new();
        for name in [std::path::absolute(given).ok(), Some(path.clone())]
            .into_iter()
            .flatten()
            .filter_map(|p| p.to_str().map(str::to_owned))
        {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        Ok(Opened { path, dir, names })
    }
}

/// The preopen name of the `n`th other root (from 1). It starts with `../`
/// so that no project path can be routed to it (see the WIT `allowed-root`).
fn other_preopen(n: usize) -> String {
    format!("../roots/{n}")
}

impl Root {
    /// Open `path` as the project root.
    ///
    /// # Ambient Authority
    ///
    /// This and [`Root::open_all`] are the functions in the host that
    /// resolve a path against the process's ambient file-system authority.
    /// Everything after them works relative to the handles they return: the
    /// guest gets the root (and only the root) as its preopen `.`, and the
    /// host's own follow-up (restoring permission bits) goes through the
    /// same capability.
    ///
    /// Fails when `path` does not exist or is not a directory.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Root> {
        Ok(Root {
            project: Opened::open(path.as_ref())?,
            others: Vec::new(),
        })
    }

    /// Open several allowed roots (seed 004's `AllowedPaths`, SPEC §9). The
    /// first is the project root: relative paths resolve against it. Each
    /// other root is its own preopen, reachable only by `write_file` calls
    /// that name an absolute path inside it.
    ///
    /// Fails when a path does not exist or is not a directory, when none is
    /// given, or when another root has no UTF-8 absolute name (a call could
    /// never name it); the error's message starts with the path.
    pub fn open_all<P: AsRef<Path>>(paths: impl IntoIterator<Item = P>) -> io::Result<Root> {
        let mut opened = Vec::new();
        for path in paths {
            let path = path.as_ref();
            // Several paths: the error names the one that failed.
            let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
            let root = Opened::open(path).map_err(named)?;
            if !opened.is_empty() && root.names.is_empty() {
                return Err(named(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "an allowed root needs a UTF-8 path",
                )));
            }
            opened.push(root);
        }
        let mut opened = opened.into_iter();
        let project = opened
            .next()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no root given"))?;
        Ok(Root {
            project,
            others: opened.collect(),
        })
    }

    /// The canonical host path of the project root.
    pub fn path(&self) -> &Path {
        &self.project.path
    }

    /// The capability for the project root.
    pub fn dir(&self) -> &Dir {
        &self.project.dir
    }

    /// The canonical host paths of every allowed root, project root first.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(&self.project)
            .chain(&self.others)
            .map(|o| o.path.as_path())
    }

    /// What the guest is told about the roots: the project root's absolute
    /// names, and each other root's preopen and names.
    pub(crate) fn guest_roots(&self) -> (Vec<String>, Vec<AllowedRoot>) {
        let others = self
            .others
            .iter()
            .enumerate()
            .map(|(i, o)| AllowedRoot {
                preopen: other_preopen(i + 1),
                names: o.names.clone(),
            })
            .collect();
        (self.project.names.clone(), others)
    }

    /// The WASI context of one call: the project root preopened as `.`,
    /// each other root as `../roots/<n>`, guest stderr into a bounded
    /// in-memory pipe, and nothing else — no environment, no arguments, no
    /// stdin, no stdout, no network (those are the builder's defaults,
    /// written down here so that they stay so).
    ///
    /// wasmtime-wasi 48's builder takes a host path, not an open `Dir`, so it
    /// opens the canonical paths that [`Root::open`] recorded.
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
        builder.preopened_dir(&self.project.path, ".", perms)?;
        for (i, other) in self.others.iter().enumerate() {
            builder.preopened_dir(&other.path, other_preopen(i + 1), perms)?;
        }
        builder.stderr(stderr);
        builder
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        Ok(builder.build())
    }

    /// The directory and relative path that `path` names the way the guest
    /// places it: relative paths in the project root, absolute ones in the
    /// root with the longest matching name. `None` if it names none.
    fn locate(&self, path: &str) -> Option<(&Dir, PathBuf)> {
        if !path.starts_with('/') {
            return Some((&self.project.dir, normalize(path)?));
        }
        let wanted = absolute_names(path)?;
        let mut best: Option<(usize, &Opened)> = None;
        for root in std::iter::once(&self.project).chain(&self.others) {
            for name in &root.names {
                let Some(prefix) = absolute_names(name) else {
                    continue;
                };
                if wanted.starts_with(&prefix) && best.is_none_or(|(len, _)| prefix.len() > len) {
                    best = Some((prefix.len(), root));
                }
            }
        }
        let (len, root) = best?;
        let rest = &wanted[len..];
        (!rest.is_empty()).then(|| (&root.dir, rest.iter().collect()))
    }
}

/// The names of an absolute POSIX path, `.` and `..` applied lexically.
///
/// The same rule as the guest's (`core/src/roots.rs`), which the host does
/// not link: both must place a path in the same root, or a mode would be
/// read from one file and put back on another (inside the roots either
/// way: every access here goes through a root's `Dir`).
fn absolute_names(path: &str) -> Option<Vec<&str>> {
    let rest = path.strip_prefix('/')?;
    let mut names = Vec::new();
    for name in rest.split('/') {
        match name {
            "" | "." => {}
            ".." => {
                names.pop();
            }
            name => names.push(name),
        }
    }
    Some(names)
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
        let (dir, rel) = root.locate(path)?;
        // `symlink_metadata` first: on a name without a link (the common
        // case) it is one `statx`, where `metadata` opens the file.
        let meta = match dir.symlink_metadata(&rel).ok()? {
            meta if meta.file_type().is_symlink() => dir.metadata(&rel).ok()?,
            meta => meta,
        };
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

    /// Put the mode back on `resolved` (as in `path_resolved`) if it
    /// differs.
    pub(crate) fn restore(self, root: &Root, resolved: &str) -> io::Result<()> {
        #[cfg(unix)]
        {
            use cap_std::fs::{Permissions, PermissionsExt};
            let Some((dir, rel)) = root.locate(resolved) else {
                return Ok(());
            };
            let current = dir.symlink_metadata(&rel)?;
            if !current.is_file() || current.permissions().mode() & 0o7777 == self.mode {
                return Ok(());
            }
            dir.set_permissions(&rel, Permissions::from_mode(self.mode))
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
