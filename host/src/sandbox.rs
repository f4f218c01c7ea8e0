//! The roots, and the WASI context that hands them to the guest. A root is
//! opened by path once (the ambient authority the guest's capabilities
//! come from: `--root`, or an MCP client's roots when it lists them) and
//! held; every call gets the held descriptors, never a new lookup by path.
//! The host's only other file-system use is its own compile cache.

use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use cap_std::AmbientAuthority;
use cap_std::fs::Dir;
use wasmtime_wasi::filesystem::WasiFilesystemCtx;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};
use write_tool_wire::roots;

use crate::journal::JournalDir;

/// The opened project root, and any other allowed roots
/// (`docs/contract.md#several-roots`).
///
/// Every directory is opened once, when the `Root` is made, and every call
/// goes through those handles: nothing resolves the roots' paths again.
pub struct Root {
    project: Opened,
    others: Vec<Opened>,
    /// The guest's preopens, opened once and shared by every call: one
    /// set read-write, one read-only.
    preopens: [WasiFilesystemCtx; 2],
    /// How the project root is named among them.
    naming: ProjectPreopen,
    /// The journal's directory, if changes are recorded
    /// (`crate::journal`), opened and checked.
    journal: Option<JournalDir>,
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Root")
            .field("project", &self.project)
            .field("others", &self.others)
            .finish_non_exhaustive()
    }
}

/// How the project root is named among the guest's preopens. The component
/// finds it either way (`docs/contract.md#several-roots`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProjectPreopen {
    /// `.`, and its absolute names besides (the default).
    #[default]
    Dot,
    /// Only its absolute names, as runtimes such as Wassette name a
    /// directory they grant.
    HostPath,
}

/// One opened directory and the absolute names that address it.
#[derive(Debug)]
struct Opened {
    path: PathBuf,
    dir: Dir,
    names: Vec<String>,
}

impl Opened {
    fn open(given: &Path, ambient: AmbientAuthority) -> io::Result<Opened> {
        let path = given.canonicalize()?;
        let dir = Dir::open_ambient_dir(&path, ambient)?;
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

impl Root {
    /// Open `path` as the project root.
    ///
    /// # Ambient Authority
    ///
    /// This and [`Root::open_all`] are the functions in the host that
    /// resolve a path against the process's ambient file-system authority,
    /// which the `ambient` token (`cap_std::ambient_authority()`) makes
    /// visible at the call site. Everything after them works through the
    /// handles they open: the guest gets the root (and only the root) as
    /// its preopen `.`, and the host's own follow-up (restoring permission
    /// bits) goes through the same capability.
    ///
    /// Fails when `path` does not exist or is not a directory.
    pub fn open(path: impl AsRef<Path>, ambient: AmbientAuthority) -> io::Result<Root> {
        Root::open_all([path], ambient)
    }

    /// [`Root::open_all`], naming the project root's preopen as `naming`
    /// says.
    pub fn open_all_as<P: AsRef<Path>>(
        paths: impl IntoIterator<Item = P>,
        naming: ProjectPreopen,
        ambient: AmbientAuthority,
    ) -> io::Result<Root> {
        let mut root = Root::open_all(paths, ambient)?;
        if naming != ProjectPreopen::Dot {
            root.naming = naming;
            root.reopen()?;
        }
        Ok(root)
    }

    /// The same roots, with every change recorded in the journal at
    /// `journal` (`docs/contract.md#journal`), a directory the guest gets
    /// as one more preopen, never as a root. Where it lies inside a root,
    /// it is protected there. The directory must be this user's and
    /// private (no access for group or others: it holds what every change
    /// replaced), below directories no one else can replace
    /// (`crate::trust`); it is opened once, without following a link, and
    /// belongs to this root from then on (its `root` file says so).
    ///
    /// # Ambient Authority
    ///
    /// `journal` is opened by path, as the roots are.
    pub fn with_journal(self, journal: impl AsRef<Path>) -> io::Result<Root> {
        let paths: Vec<&Path> = self.paths().collect();
        let dir = JournalDir::at(
            journal.as_ref(),
            self.path(),
            self.project.dir.as_fd(),
            (&self.identities()?, &paths),
        )
        .map_err(|e| io::Error::other(e.to_string()))?;
        self.with_journal_dir(dir)
    }

    /// The same roots, recording in `journal`, whose place among them
    /// was found when it was opened.
    pub(crate) fn with_journal_dir(mut self, journal: JournalDir) -> io::Result<Root> {
        self.journal = Some(journal);
        self.reopen()?;
        Ok(self)
    }

    /// The roots' identities (device, inode), project root first, by
    /// which the journal is found inside them whatever their spelling.
    pub(crate) fn identities(&self) -> io::Result<Vec<(u64, u64)>> {
        std::iter::once(&self.project)
            .chain(&self.others)
            .map(|o| {
                rustix::fs::fstat(&o.dir)
                    .map(|s| (s.st_dev, s.st_ino))
                    .map_err(io::Error::from)
            })
            .collect()
    }

    /// The journal's directory, if changes are recorded.
    pub fn journal(&self) -> Option<&Path> {
        self.journal.as_ref().map(JournalDir::path)
    }

    /// The journal, opened, if changes are recorded.
    pub(crate) fn journal_dir(&self) -> Option<&JournalDir> {
        self.journal.as_ref()
    }

    /// Open the guest's preopens again, after a change to what they are.
    fn reopen(&mut self) -> io::Result<()> {
        let journal = self.journal.as_ref().map(JournalDir::preopen_path);
        let journal = journal.as_deref();
        self.preopens = [
            preopens(
                &self.project,
                &self.others,
                FsPerms::ReadWrite,
                self.naming,
                journal,
            )?,
            preopens(
                &self.project,
                &self.others,
                FsPerms::ReadOnly,
                self.naming,
                journal,
            )?,
        ];
        Ok(())
    }

    /// What the guest needs to find the journal, as settings: its preopen's
    /// name, and globs that protect it where it lies inside a root.
    pub(crate) fn journal_env(&self) -> Option<(String, Vec<String>)> {
        let journal = self.journal.as_ref()?;
        Some((
            crate::journal::PREOPEN.to_owned(),
            crate::journal::protect_globs(journal.inside()),
        ))
    }

    /// Open several allowed roots (`docs/contract.md#several-roots`). The
    /// first is the project root: relative paths resolve against it. Every
    /// root is preopened under its absolute names (the path given, made
    /// absolute, and its canonical form), by which `write_file` calls may
    /// name files in it; the project root also as `.`.
    ///
    /// Fails when a path does not exist or is not a directory, when none is
    /// given, or when another root has no UTF-8 absolute name (a call could
    /// never name it); the error's message starts with the path.
    pub fn open_all<P: AsRef<Path>>(
        paths: impl IntoIterator<Item = P>,
        ambient: AmbientAuthority,
    ) -> io::Result<Root> {
        let mut opened = Vec::new();
        for path in paths {
            let path = path.as_ref();
            // The error names the path that failed.
            let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
            let root = Opened::open(path, ambient).map_err(named)?;
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
        let others: Vec<Opened> = opened.collect();
        let naming = ProjectPreopen::Dot;
        let preopens = [
            preopens(&project, &others, FsPerms::ReadWrite, naming, None)?,
            preopens(&project, &others, FsPerms::ReadOnly, naming, None)?,
        ];
        Ok(Root {
            project,
            others,
            preopens,
            naming,
            journal: None,
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

    /// The WASI context of one call: the roots as preopens, the host's
    /// settings as environment variables (`env`), guest stderr into a
    /// bounded in-memory pipe, and nothing else — no other environment, no
    /// arguments, no stdin, no stdout, no network (those are the builder's
    /// defaults, written down here so that they stay so).
    pub(crate) fn wasi_ctx(
        &self,
        stderr: MemoryOutputPipe,
        read_only: bool,
        env: &[(&str, String)],
    ) -> WasiCtx {
        let mut builder = WasiCtxBuilder::new();
        builder.envs(env);
        builder.stderr(stderr);
        builder
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        let mut ctx = builder.build();
        *ctx.filesystem() = self.preopens[usize::from(read_only)].clone();
        ctx
    }

    /// The directory and relative path that `path` names the way the guest
    /// places it: relative paths in the project root, absolute ones in the
    /// root with the longest matching name. `None` if it names none.
    pub(crate) fn locate(&self, path: &str) -> Option<(&Dir, PathBuf)> {
        if !path.starts_with('/') {
            return Some((&self.project.dir, normalize(path)?));
        }
        let names = std::iter::once(&self.project)
            .chain(&self.others)
            .flat_map(|root| root.names.iter().map(move |name| (root, name.as_str())));
        let (root, rest) = roots::locate(path, names)?;
        (!rest.is_empty()).then(|| (&root.dir, rest.iter().collect()))
    }
}

/// The preopens of every call, opened once: the project root as `.` (when
/// `naming` says so) and under each of its absolute names, every other root
/// under each of its. wasmtime-wasi's builder opens a preopen from a path;
/// the handles it opens here are cloned into each call's context
/// ([`Root::wasi_ctx`]), so no call resolves the paths again.
fn preopens(
    project: &Opened,
    others: &[Opened],
    perms: FsPerms,
    naming: ProjectPreopen,
    journal: Option<&Path>,
) -> io::Result<WasiFilesystemCtx> {
    let mut builder = WasiCtxBuilder::new();
    // Must precede `preopened_dir`, which captures it. The host is
    // synchronous, so blocking file I/O on the calling thread is what it
    // wants.
    builder.allow_blocking_current_thread(true);
    let io = |e: wasmtime::Error| io::Error::other(e.to_string());
    if naming == ProjectPreopen::Dot || project.names.is_empty() {
        builder
            .preopened_dir(&project.path, ".", perms)
            .map_err(io)?;
    }
    for root in std::iter::once(project).chain(others) {
        for name in &root.names {
            builder.preopened_dir(&root.path, name, perms).map_err(io)?;
        }
    }
    // The journal is written whatever the roots' permissions: a read-only
    // root refuses every write before the journal is reached.
    if let Some(journal) = journal {
        builder
            .preopened_dir(journal, crate::journal::PREOPEN, FsPerms::ReadWrite)
            .map_err(io)?;
    }
    Ok(std::mem::take(builder.build().filesystem()))
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
