//! The one place that touches the file system: resolution of a path under
//! the root (SPEC §4 steps 5–7) and the atomic write (SPEC §6).
//!
//! Everything goes through `std::fs` on paths below `root`. Inside the
//! component `root` is `.`, the single preopened directory, so these calls
//! *are* WASI calls on the preopen, and the capability layer stands behind
//! every check made here. Natively, the same code runs against a real
//! directory and serves as the baseline in benchmarks.

use std::collections::VecDeque;
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::error::ToolError;
use crate::path::{MAX_LINKS, RelPath, link_target_segments};

/// What the resolved target is.
#[derive(Debug)]
pub enum TargetKind {
    /// Nothing there yet: the write creates it.
    Missing,
    /// A regular file.
    File,
    /// A directory (or the root itself).
    Directory,
    /// A FIFO, socket, device or anything else that is not a regular file.
    Other,
}

/// A path resolved inside the root, every link followed.
#[derive(Debug)]
pub struct Resolved {
    /// Physical root-relative names of the target.
    pub names: Vec<String>,
    /// How many leading names exist as directories (the rest, except the
    /// last, are directories the write has to create).
    pub existing_dirs: usize,
    /// What the last name is.
    pub kind: TargetKind,
}

impl Resolved {
    /// Root-relative POSIX form, as reported in `path_resolved`.
    pub fn display(&self) -> String {
        self.names.join("/")
    }

    /// Root-relative POSIX form of the parent directory, `None` for a file
    /// directly in the root.
    pub fn parent_display(&self) -> Option<String> {
        let parent = &self.names[..self.names.len().saturating_sub(1)];
        (!parent.is_empty()).then(|| parent.join("/"))
    }

    /// Whether the write must create parent directories.
    pub fn creates_dirs(&self) -> bool {
        self.existing_dirs + 1 < self.names.len()
    }
}

/// Resolve `rel` under `root`, following links component by component.
///
/// A link whose target stays inside the root is followed; one with an
/// absolute target, one that climbs above the root at any step, and more
/// than [`MAX_LINKS`] links are refused. A missing component ends the walk:
/// the rest of the path is applied lexically and will be created.
pub fn resolve(root: &Path, rel: RelPath) -> Result<Resolved, ToolError> {
    let mut queue: VecDeque<String> = rel.into_names().into();
    let mut names: Vec<String> = Vec::new();
    let mut missing_from: Option<usize> = None;
    let mut last_is = LastIs::Directory;
    let mut links = 0usize;

    while let Some(name) = queue.pop_front() {
        match name.as_str() {
            "" | "." => continue,
            ".." => {
                if names.pop().is_none() {
                    return Err(ToolError::outside_root());
                }
                if missing_from.is_some_and(|m| names.len() <= m) {
                    missing_from = None;
                }
                last_is = if missing_from.is_some() {
                    LastIs::Missing
                } else {
                    LastIs::Directory
                };
                continue;
            }
            _ => {}
        }
        if missing_from.is_some() {
            names.push(name);
            continue;
        }
        let candidate = join(root, &names).join(&name);
        let kind = match lstat(&candidate) {
            Ok(kind) => kind,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                missing_from = Some(names.len());
                names.push(name);
                last_is = LastIs::Missing;
                continue;
            }
            Err(e) => return Err(ToolError::from_io(&e, "resolving the path")),
        };
        if kind == Kind::Symlink {
            links += 1;
            if links > MAX_LINKS {
                return Err(ToolError::link_loop());
            }
            let target = fs::read_link(&candidate)
                .map_err(|e| ToolError::from_io(&e, "resolving the path"))?;
            let segments = target
                .to_str()
                .and_then(link_target_segments)
                .ok_or_else(ToolError::outside_root)?;
            for segment in segments.into_iter().rev() {
                queue.push_front(segment);
            }
            continue;
        }
        if kind == Kind::Directory {
            names.push(name);
            last_is = LastIs::Directory;
            continue;
        }
        if queue.iter().any(|rest| !rest.is_empty() && rest != ".") {
            return Err(ToolError::parent_not_directory());
        }
        names.push(name);
        last_is = if kind == Kind::File {
            LastIs::File
        } else {
            LastIs::Other
        };
    }

    let kind = match last_is {
        LastIs::Missing => TargetKind::Missing,
        LastIs::Directory => TargetKind::Directory,
        LastIs::File => TargetKind::File,
        LastIs::Other => TargetKind::Other,
    };
    let existing_dirs = match kind {
        TargetKind::Missing => missing_from.unwrap_or(0),
        _ => names.len().saturating_sub(1),
    };
    Ok(Resolved {
        names,
        existing_dirs,
        kind,
    })
}

enum LastIs {
    Missing,
    Directory,
    File,
    Other,
}

/// What a path names, not following a final symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Symlink,
    Directory,
    File,
    Other,
}

fn lstat(path: &Path) -> io::Result<Kind> {
    #[cfg(target_os = "wasi")]
    if let Some(kind) = wasi_fs::lstat(path) {
        return kind;
    }
    let file_type = fs::symlink_metadata(path)?.file_type();
    Ok(if file_type.is_symlink() {
        Kind::Symlink
    } else if file_type.is_dir() {
        Kind::Directory
    } else if file_type.is_file() {
        Kind::File
    } else {
        Kind::Other
    })
}

/// `root` joined with `names`.
pub fn join(root: &Path, names: &[String]) -> PathBuf {
    let mut path = root.to_path_buf();
    path.extend(names);
    path
}

/// The existing file's bytes and what the optimistic lock compares.
#[derive(Debug)]
pub struct Existing {
    /// The file's content.
    pub bytes: Vec<u8>,
    /// Its modification time, read from the open handle.
    pub modified: Option<SystemTime>,
    /// Number of hard links to it.
    pub link_count: u64,
}

/// What [`read_existing`] needs to know of an open file before reading it.
struct Stat {
    is_file: bool,
    len: u64,
    modified: Option<SystemTime>,
    link_count: u64,
}

/// Read the regular file at `path`. The caller has checked it is one: a FIFO
/// is never opened, since opening it would block.
pub fn read_existing(path: &Path) -> io::Result<Existing> {
    let mut file = File::open(path)?;
    let stat = stat(&file)?;
    if !stat.is_file {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(stat.len).unwrap_or(0));
    // Through `take`: `File::read_to_end` would ask for the metadata again
    // (a second `fstat`, two host calls in the component) to size a buffer
    // that is sized already.
    (&mut file).take(u64::MAX).read_to_end(&mut bytes)?;
    Ok(Existing {
        bytes,
        modified: stat.modified,
        link_count: stat.link_count,
    })
}

#[cfg(not(target_os = "wasi"))]
fn stat(file: &File) -> io::Result<Stat> {
    let meta = file.metadata()?;
    #[cfg(unix)]
    let link_count = std::os::unix::fs::MetadataExt::nlink(&meta);
    #[cfg(not(unix))]
    let link_count = 1;
    Ok(Stat {
        is_file: meta.is_file(),
        len: meta.len(),
        modified: meta.modified().ok(),
        link_count,
    })
}

/// One `fstat` through wasi-libc: `File::metadata` has no link count
/// (`std::os::wasi::fs::MetadataExt` is unstable), and asking for both
/// would cost two `fstat`s, four host calls.
#[cfg(target_os = "wasi")]
#[allow(unsafe_code, reason = "one fstat call on a descriptor we own")]
fn stat(file: &File) -> io::Result<Stat> {
    use std::os::fd::AsRawFd;
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `file` keeps the descriptor open for the duration of the call
    // and `st` is a properly sized out-buffer that fstat fills on success.
    let rc = unsafe { libc::fstat(file.as_raw_fd(), st.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstat returned 0, so it initialised `st`.
    let st = unsafe { st.assume_init() };
    // WASI timestamps are unsigned: never before the epoch.
    let modified = u64::try_from(st.st_mtim.tv_sec)
        .ok()
        .zip(u32::try_from(st.st_mtim.tv_nsec).ok())
        .and_then(|(secs, nanos)| SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs, nanos)));
    Ok(Stat {
        is_file: st.st_mode & libc::S_IFMT == libc::S_IFREG,
        len: u64::try_from(st.st_size).unwrap_or(0),
        modified,
        link_count: st.st_nlink,
    })
}

/// Positional writes: on WASI they are `descriptor.write`, which reports
/// the file-system error (`no space`, `file too large`, `quota`) where a
/// stream write collapses every failure into a generic I/O error.
#[cfg(unix)]
fn write_all_at(file: &File, content: &[u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, content, 0)
}

/// `std::os::wasi::fs::FileExt` is unstable, so ask wasi-libc directly.
#[cfg(target_os = "wasi")]
#[allow(
    unsafe_code,
    reason = "pwrite on a descriptor we own, from a live slice"
)]
fn write_all_at(file: &File, content: &[u8]) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // The host copies each write's buffer out of guest memory before it
    // writes it; in pieces, that copy stays small however large the file.
    const CHUNK: usize = 1 << 20;
    let mut written = 0usize;
    while written < content.len() {
        let rest = &content[written..];
        let rest = &rest[..rest.len().min(CHUNK)];
        let offset = libc::off_t::try_from(written)
            .map_err(|_| io::Error::from(io::ErrorKind::FileTooLarge))?;
        // SAFETY: `rest` is a live, initialised slice of `rest.len()` bytes
        // and `file` keeps the descriptor open for the call.
        let n = unsafe { libc::pwrite(file.as_raw_fd(), rest.as_ptr().cast(), rest.len(), offset) };
        match n {
            n if n > 0 => written += n.unsigned_abs(),
            0 => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            _ => {
                let err = io::Error::last_os_error();
                if err.kind() != io::ErrorKind::Interrupted {
                    return Err(err);
                }
            }
        }
    }
    Ok(())
}

#[cfg(not(any(unix, target_os = "wasi")))]
fn write_all_at(mut file: &File, content: &[u8]) -> io::Result<()> {
    io::Write::write_all(&mut file, content)
}

/// Create the directories `names[existing..last]` under `root`, returning
/// those actually created (outermost first) so that a failed write can
/// remove them again.
pub fn create_parents(root: &Path, resolved: &Resolved) -> io::Result<Vec<PathBuf>> {
    let mut created = Vec::new();
    let parents = resolved.names.len().saturating_sub(1);
    for depth in resolved.existing_dirs..parents {
        let dir = join(root, &resolved.names[..=depth]);
        match fs::create_dir(&dir) {
            Ok(()) => created.push(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && is_real_dir(&dir) => {}
            Err(e) => {
                remove_dirs(&created);
                return Err(e);
            }
        }
    }
    Ok(created)
}

fn is_real_dir(path: &Path) -> bool {
    lstat(path).is_ok_and(|kind| kind == Kind::Directory)
}

/// Remove directories created for a write that then failed (innermost
/// first). Only empty directories go; anything else is left alone.
pub fn remove_dirs(created: &[PathBuf]) {
    for dir in created.iter().rev() {
        let _ = fs::remove_dir(dir);
    }
}

/// How hard a write works to survive a power cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Sync the file before the rename and the directory after it (the
    /// default): once the call answers, the new content survives a crash.
    #[default]
    Full,
    /// Sync the file only: the content is never torn, but the rename itself
    /// may be lost in a crash.
    File,
    /// No syncs (tmpfs, CI, scratch trees): still atomic for every reader,
    /// not durable.
    None,
}

/// Prefix of the tool's temp files; the full name is
/// `.wt-<16 hex digits>.tmp`, short and fixed-length so that a 255-byte
/// target name still works.
pub const TEMP_PREFIX: &str = ".wt-";
/// Suffix of the tool's temp files.
pub const TEMP_SUFFIX: &str = ".tmp";

/// Replace `target` with `content` atomically: write a temp file beside it
/// (created exclusively), sync it, rename it over the target, then sync the
/// directory where the platform allows. On failure the temp file is removed
/// and the target is untouched.
///
/// With `sweep_from` (the write's start), temp files that a killed writer
/// left in the same directory — names of the tool's own pattern, regular
/// files, last modified more than [`STALE_TEMP_AGE`] before the start — are
/// removed first. The margin keeps
/// the sweep off the temp files of writers still running beside this one
/// (between its last `write` and its rename, a live writer only syncs). A
/// writer that loses its temp file all the same (a sync slower than the
/// margin) notices when its rename finds nothing and starts over.
pub fn write_atomic(
    target: &Path,
    content: &[u8],
    sweep_from: Option<SystemTime>,
    sync: Durability,
) -> io::Result<()> {
    let dir = target.parent().unwrap_or(Path::new("."));
    if let Some(started) = sweep_from {
        remove_stale_temps(dir, started);
    }
    let mut attempt = 0;
    loop {
        let (temp, file) = create_temp(dir)?;
        match fill_and_rename(file, &temp, target, content, sync) {
            Ok(()) => break,
            Err(e) => {
                let _ = fs::remove_file(&temp);
                attempt += 1;
                if e.kind() != io::ErrorKind::NotFound || attempt >= 8 {
                    return Err(e);
                }
            }
        }
    }
    if sync == Durability::Full {
        sync_dir(dir);
    }
    Ok(())
}

/// Whether `name` is one of the tool's temp-file names.
pub fn is_temp_name(name: &str) -> bool {
    name.len() == TEMP_PREFIX.len() + 16 + TEMP_SUFFIX.len()
        && name.starts_with(TEMP_PREFIX)
        && name.ends_with(TEMP_SUFFIX)
        && name[TEMP_PREFIX.len()..TEMP_PREFIX.len() + 16]
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// How much older than a write's start a temp file must be for the write to
/// sweep it away.
pub const STALE_TEMP_AGE: Duration = Duration::from_secs(1);

fn remove_stale_temps(dir: &Path, started: SystemTime) {
    let Some(cutoff) = started.checked_sub(STALE_TEMP_AGE) else {
        return;
    };
    for name in temp_names(dir) {
        let path = dir.join(name);
        let stale = fs::symlink_metadata(&path)
            .is_ok_and(|m| m.is_file() && m.modified().is_ok_and(|t| t < cutoff));
        if stale {
            let _ = fs::remove_file(&path);
        }
    }
}

/// The names in `dir` of the tool's temp-file pattern.
fn temp_names(dir: &Path) -> Vec<String> {
    #[cfg(target_os = "wasi")]
    if let Some(names) = wasi_fs::temp_names(dir) {
        return names;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| is_temp_name(name))
        .collect()
}

/// WASI 0.2 called directly where wasi-libc would make extra host calls.
///
/// - A listing: wasi-libc's `readdir` (under `std::fs::read_dir`) asks the
///   host for an inode number for every entry, one host call and two
///   system calls each: in a directory of 2,000 files, a 1 KiB write took
///   7.2 ms instead of 0.3 ms (3.7 ms this way; the host still reads each
///   entry's metadata as it lists them).
/// - An `lstat`: wasi-libc's `fstatat` asks for the metadata hash too (the
///   inode number), a second host call and three more system calls for
///   each path component [`resolve`] looks at.
#[cfg(target_os = "wasi")]
mod wasi_fs {
    use std::cell::OnceCell;
    use std::io;
    use std::path::{Component, Path, PathBuf};

    use wasi::filesystem::types::{
        Descriptor, DescriptorFlags, DescriptorType, ErrorCode, OpenFlags, PathFlags,
    };

    use super::Kind;

    thread_local! {
        /// The preopens and their names, asked for once per instance (each
        /// call runs in a fresh one).
        static PREOPENS: OnceCell<Vec<(Descriptor, PathBuf)>> = const { OnceCell::new() };
    }

    /// `f` on the preopen whose name is the longest prefix of `path` (how
    /// wasi-libc resolves paths too) and the rest of `path` below it.
    fn beneath<R>(path: &Path, f: impl FnOnce(&Descriptor, &str) -> Option<R>) -> Option<R> {
        PREOPENS.with(|preopens| {
            let preopens = preopens.get_or_init(|| {
                wasi::filesystem::preopens::get_directories()
                    .into_iter()
                    .map(|(descriptor, name)| (descriptor, PathBuf::from(name)))
                    .collect()
            });
            let wanted: Vec<Component<'_>> = path.components().collect();
            let (preopen, prefix) = preopens
                .iter()
                .filter_map(|(descriptor, name)| {
                    let prefix = name.components().count();
                    name.components()
                        .eq(wanted.iter().copied().take(prefix))
                        .then_some((descriptor, prefix))
                })
                .max_by_key(|(_, prefix)| *prefix)?;
            let rest: PathBuf = wanted[prefix..].iter().collect();
            f(preopen, rest.to_str()?)
        })
    }

    /// What `path` is, not following a final symbolic link. `None` when
    /// the answer should come from `std` (which then also gives the exact
    /// error): anything but success or "no such entry".
    pub(super) fn lstat(path: &Path) -> Option<io::Result<Kind>> {
        beneath(path, |dir, rest| {
            if rest.is_empty() {
                return None;
            }
            match dir.stat_at(PathFlags::empty(), rest) {
                Ok(stat) => Some(Ok(match stat.type_ {
                    DescriptorType::SymbolicLink => Kind::Symlink,
                    DescriptorType::Directory => Kind::Directory,
                    DescriptorType::RegularFile => Kind::File,
                    _ => Kind::Other,
                })),
                Err(ErrorCode::NoEntry) => Some(Err(io::Error::from(io::ErrorKind::NotFound))),
                Err(_) => None,
            }
        })
    }

    /// Sync `dir` if it is a preopen itself, through the descriptor the
    /// host gave: `std` would open it again first (two more system calls
    /// and a `statx`). Whether it was (then it is synced, or cannot be).
    pub(super) fn sync_preopen(dir: &Path) -> bool {
        beneath(dir, |preopen, rest| {
            rest.is_empty().then(|| {
                let _ = preopen.sync();
            })
        })
        .is_some()
    }

    /// `None` when `dir` cannot be listed this way (then `std` lists it).
    pub(super) fn temp_names(dir: &Path) -> Option<Vec<String>> {
        beneath(dir, |preopen, rest| {
            // Symbolic links are not followed: `dir` was resolved already.
            let opened;
            let dir = if rest.is_empty() {
                preopen
            } else {
                opened = preopen
                    .open_at(
                        PathFlags::empty(),
                        rest,
                        OpenFlags::DIRECTORY,
                        DescriptorFlags::READ,
                    )
                    .ok()?;
                &opened
            };
            let entries = dir.read_directory().ok()?;
            let mut names = Vec::new();
            while let Some(entry) = entries.read_directory_entry().ok()? {
                if super::is_temp_name(&entry.name) {
                    names.push(entry.name);
                }
            }
            Some(names)
        })
    }
}

fn fill_and_rename(
    file: File,
    temp: &Path,
    target: &Path,
    content: &[u8],
    sync: Durability,
) -> io::Result<()> {
    write_all_at(&file, content)?;
    if sync != Durability::None {
        file.sync_all()?;
    }
    drop(file);
    fs::rename(temp, target)
}

fn create_temp(dir: &Path) -> io::Result<(PathBuf, File)> {
    let state = std::collections::hash_map::RandomState::new();
    let mut last_err = None;
    for attempt in 0u32..16 {
        let mut hasher = state.build_hasher();
        hasher.write_u32(attempt);
        let name = format!("{TEMP_PREFIX}{:016x}{TEMP_SUFFIX}", hasher.finish());
        let path = dir.join(name);
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last_err = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last_err.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists)))
}

/// Make the rename durable. Not every platform lets a directory be opened
/// and synced (WASI hosts differ); the file itself is already synced, so a
/// refusal here is not an error.
fn sync_dir(dir: &Path) {
    #[cfg(target_os = "wasi")]
    if wasi_fs::sync_preopen(dir) {
        return;
    }
    if let Ok(handle) = File::open(dir) {
        let _ = handle.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn resolve_in(root: &Path, path: &str) -> Result<Resolved, ErrorCode> {
        resolve(root, RelPath::parse(path).map_err(|e| e.code)?).map_err(|e| e.code)
    }

    #[test]
    fn missing_parents_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("a")).unwrap();
        let r = resolve_in(dir.path(), "a/b/c/f.txt").unwrap();
        assert!(matches!(r.kind, TargetKind::Missing));
        assert_eq!(r.existing_dirs, 1);
        assert!(r.creates_dirs());
        assert_eq!(r.parent_display().as_deref(), Some("a/b/c"));
        let r = resolve_in(dir.path(), "a/f.txt").unwrap();
        assert!(!r.creates_dirs());
    }

    #[cfg(unix)]
    #[test]
    fn links_inside_are_followed_and_outside_refused() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        fs::create_dir_all(root.join("real")).unwrap();
        symlink("real", root.join("alias")).unwrap();
        symlink("../outside", root.join("out")).unwrap();
        symlink("/tmp", root.join("abs")).unwrap();
        symlink("loop", root.join("loop")).unwrap();
        symlink("../root/real", root.join("back")).unwrap();
        let r = resolve_in(&root, "alias/f.txt").unwrap();
        assert_eq!(r.display(), "real/f.txt");
        assert_eq!(
            resolve_in(&root, "out/f.txt").unwrap_err(),
            ErrorCode::AccessDenied
        );
        assert_eq!(
            resolve_in(&root, "abs/f.txt").unwrap_err(),
            ErrorCode::AccessDenied
        );
        assert_eq!(
            resolve_in(&root, "loop").unwrap_err(),
            ErrorCode::AccessDenied
        );
        assert_eq!(
            resolve_in(&root, "back/f").unwrap_err(),
            ErrorCode::AccessDenied
        );
    }

    #[test]
    fn atomic_write_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("f.txt");
        fs::write(&target, "old").unwrap();
        write_atomic(&target, b"new", Some(SystemTime::now()), Durability::Full).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["f.txt"]);
    }

    #[test]
    fn stale_temps_of_the_tools_pattern_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let stale = dir.path().join(".wt-0123456789abcdef.tmp");
        let lookalike = dir.path().join(".wt-0123456789ABCDEF.tmp");
        let other = dir.path().join("user.tmp");
        for path in [&stale, &lookalike, &other] {
            fs::write(path, "left over").unwrap();
        }
        let started = SystemTime::now() + STALE_TEMP_AGE + Duration::from_secs(1);
        write_atomic(
            &dir.path().join("f.txt"),
            b"x",
            Some(started),
            Durability::None,
        )
        .unwrap();
        assert!(!stale.exists());
        assert!(lookalike.exists() && other.exists());
        // Temp files about as new as the write belong to a live writer.
        let fresh = dir.path().join(".wt-fedcba9876543210.tmp");
        fs::write(&fresh, "in flight").unwrap();
        write_atomic(
            &dir.path().join("f.txt"),
            b"y",
            Some(SystemTime::now()),
            Durability::File,
        )
        .unwrap();
        assert!(fresh.exists());
        // Without a sweep, even a stale one stays.
        fs::write(&stale, "left over").unwrap();
        write_atomic(&dir.path().join("f.txt"), b"z", None, Durability::None).unwrap();
        assert!(stale.exists());
    }

    #[test]
    fn temp_names() {
        assert!(is_temp_name(".wt-0123456789abcdef.tmp"));
        assert!(!is_temp_name(".wt-0123456789abcde.tmp"));
        assert!(!is_temp_name(".wt-0123456789abcdeg.tmp"));
        assert!(!is_temp_name("x.wt-0123456789abcdef.tmp"));
    }
}
