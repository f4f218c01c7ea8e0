//! A root's journal directory, opened, checked and held: everything the
//! host does in it goes through the one handle.

mod orphans;
mod sessions;

pub(crate) use orphans::sweep_orphans;

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, StatxFlags};

use super::{JournalChoice, JournalError, is_dead, key};
use crate::trust;

/// The file that names a journal's root.
const ROOT_NOTE: &str = "root";

/// What identifies a directory: its device, its inode and its birth time
/// (seconds and nanoseconds; zero where the file system keeps none). The
/// inode alone is not enough: ext4 gives a directory made after one was
/// deleted the freed inode's number.
pub(crate) type Identity = (u64, u64, i64, u32);

/// A root's journal directory, opened without following a link and
/// checked: this user's, private, and the root's own.
#[derive(Debug)]
pub(crate) struct JournalDir {
    fd: OwnedFd,
    /// Its path as given, for messages.
    path: PathBuf,
    /// Where what it guards lies inside the roots, root-relative
    /// (`super::place_among_roots`): the base that holds every root's
    /// journal (a model that could write another root's journal could
    /// change that root's files through its recovery), or the journal
    /// itself when it was given as is. Found once, before anything is
    /// written in it.
    inside: Vec<PathBuf>,
    id: Identity,
}

/// Where the directory `fd` (opened at `path`) lies inside the roots;
/// refused, named, where it is a root or holds one.
fn place(
    fd: &OwnedFd,
    path: &Path,
    roots: (&[(u64, u64)], &[&Path]),
) -> Result<Vec<PathBuf>, JournalError> {
    let guarded = real_path(fd, path).map_err(|e| error(path, e))?;
    super::place_among_roots(&guarded, roots).map_err(|why| error(path, why))
}

fn error(path: &Path, why: impl std::fmt::Display) -> JournalError {
    JournalError {
        path: path.to_path_buf(),
        why: why.to_string(),
    }
}

/// Where the directory `fd` holds really is: what `/proc` says of the
/// handle (the directory itself, whatever its path names by now), else
/// its path canonicalized.
fn real_path(fd: &OwnedFd, path: &Path) -> io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).or_else(|_| path.canonicalize())
}

fn identity_of(fd: BorrowedFd<'_>) -> io::Result<Identity> {
    let stat = rustix::fs::fstat(fd)?;
    let (sec, nsec) = birth(rustix::fs::statx(
        fd,
        "",
        AtFlags::EMPTY_PATH,
        StatxFlags::BTIME,
    ));
    Ok((stat.st_dev, stat.st_ino, sec, nsec))
}

/// The birth time a `statx` answer holds, or zero.
fn birth(statx: rustix::io::Result<rustix::fs::Statx>) -> (i64, u32) {
    statx
        .ok()
        .filter(|x| x.stx_mask & StatxFlags::BTIME.bits() != 0)
        .map_or((0, 0), |x| (x.stx_btime.tv_sec, x.stx_btime.tv_nsec))
}

/// Whether two identities are one directory's: a side that knows no
/// birth time (a `root` file of an earlier version, a file system that
/// keeps none) is compared by device and inode.
fn same(a: Identity, b: Identity) -> bool {
    let known = |id: Identity| id.2 != 0 || id.3 != 0;
    (a.0, a.1) == (b.0, b.1) && (!known(a) || !known(b) || (a.2, a.3) == (b.2, b.3))
}

impl JournalDir {
    /// The journal of the root at `root` (canonical) whose directory is
    /// `root_dir`, below the base `choice` names; `None` when off. A base
    /// that is one of the roots (`roots`: their identities and real
    /// paths), or holds one, is refused before anything is made in it.
    pub(crate) fn open(
        choice: &JournalChoice,
        root: &Path,
        root_dir: BorrowedFd<'_>,
        roots: (&[(u64, u64)], &[&Path]),
    ) -> Result<Option<JournalDir>, JournalError> {
        let Some(base) = choice.base()? else {
            return Ok(None);
        };
        let base_fd = trust::open_dir(&base).map_err(|e| error(&base, e))?;
        let inside = place(&base_fd, &base, roots)?;
        let name = key(root);
        let path = base.join(&name);
        let fd = open_private(&base_fd, &name).map_err(|e| error(&path, e))?;
        JournalDir::adopt(fd, path, inside, root, root_dir).map(Some)
    }

    /// The journal in `dir` itself, for the root at `root` whose directory
    /// is `root_dir`: a directory this user owns and no one else can
    /// write, below directories others cannot replace, that is no root
    /// and holds none (`roots`), refused before anything is written in it.
    pub(crate) fn at(
        dir: &Path,
        root: &Path,
        root_dir: BorrowedFd<'_>,
        roots: (&[(u64, u64)], &[&Path]),
    ) -> Result<JournalDir, JournalError> {
        let path = std::path::absolute(dir).map_err(|e| error(dir, e))?;
        let fd = trust::open_dir(&path).map_err(|e| error(&path, e))?;
        private(&fd).map_err(|e| error(&path, e))?;
        let inside = place(&fd, &path, roots)?;
        JournalDir::adopt(fd, path, inside, root, root_dir)
    }

    /// The journal `fd` for the root at `root`: refused if it is another
    /// root's; emptied if its root was deleted and made again; its `root`
    /// file written.
    fn adopt(
        fd: OwnedFd,
        path: PathBuf,
        inside: Vec<PathBuf>,
        root: &Path,
        root_dir: BorrowedFd<'_>,
    ) -> Result<JournalDir, JournalError> {
        let root_id = identity_of(root_dir).map_err(|e| error(root, e))?;
        match read_note(&fd) {
            Some((noted, _)) if noted != root => {
                return Err(error(
                    &path,
                    format!("it is the journal of another root ({})", noted.display()),
                ));
            }
            // The root was deleted and made again: another project, whose
            // files the old records must not put back.
            Some((_, Some(id))) if !same(id, root_id) => {
                clear(&fd).map_err(|e| error(&path, e))?;
            }
            _ => {}
        }
        write_note(&fd, root, root_id).map_err(|e| error(&path, e))?;
        let id = identity_of(fd.as_fd()).map_err(|e| error(&path, e))?;
        let journal = JournalDir {
            fd,
            path,
            inside,
            id,
        };
        journal.remove_dead_holders();
        Ok(journal)
    }

    /// Its path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Where what it guards lies inside the roots, root-relative.
    pub(crate) fn inside(&self) -> &[PathBuf] {
        &self.inside
    }

    /// Its device and inode: how the commit gate tells the journal's
    /// descriptor from a root's.
    pub(crate) fn id(&self) -> (u64, u64) {
        (self.id.0, self.id.1)
    }

    /// The name wasmtime-wasi opens for the guest's preopen: the very
    /// directory this handle holds (`/proc/self/fd/N`), not what its path
    /// names by then; the path where there is no `/proc`.
    pub(crate) fn preopen_path(&self) -> PathBuf {
        let by_handle = PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd()));
        if by_handle.exists() {
            by_handle
        } else {
            self.path.clone()
        }
    }

    /// Whether this process can write the journal.
    pub(crate) fn writable(&self) -> io::Result<()> {
        rustix::fs::accessat(
            &self.fd,
            ".",
            rustix::fs::Access::WRITE_OK,
            AtFlags::EACCESS,
        )
        .map_err(io::Error::from)
    }

    /// Remove the journal's lock if a `write-tool` process that died holds
    /// it (it was killed in the middle of a commit): the next call need
    /// not wait for the lock to grow stale. A lock of a live process, or
    /// of another host, is left alone.
    pub(crate) fn clear_dead_lock(&self) {
        let Some(holder) = read_small(&self.fd, "lock") else {
            return;
        };
        if is_dead(&holder) && read_small(&self.fd, "lock").is_some_and(|again| again == holder) {
            let _ = rustix::fs::unlinkat(&self.fd, "lock", AtFlags::empty());
        }
    }

    /// Remove the lock a call of this process took and could not release
    /// (the guest trapped while it held it).
    pub(crate) fn release_lock(&self) {
        let _ = rustix::fs::unlinkat(&self.fd, "lock", AtFlags::empty());
    }

    /// Remove the holder files (which the lock links to, one per process
    /// that took it) of `write-tool` processes that are gone.
    fn remove_dead_holders(&self) {
        for name in names(&self.fd) {
            if name.starts_with("holder-")
                && read_small(&self.fd, &name).is_some_and(|holder| is_dead(&holder))
            {
                let _ = rustix::fs::unlinkat(&self.fd, &name, AtFlags::empty());
            }
        }
    }

    /// The last complete record of the log, read back from its end.
    pub(crate) fn last_record(&self) -> Option<serde_json::Value> {
        // The longest record and the room of zeros after it: a damaged
        // log is not read whole.
        const MAX: u64 = (4 << 20) + (32 << 10);
        let fd = open_file(&self.fd, "log")?;
        let len = rustix::fs::fstat(&fd).ok()?.st_size;
        let len = u64::try_from(len).ok()?;
        let from = len.saturating_sub(MAX);
        let mut tail = vec![0; usize::try_from(len - from).ok()?];
        let mut read = 0;
        while read < tail.len() {
            match rustix::io::pread(&fd, &mut tail[read..], from + read as u64) {
                Ok(0) | Err(_) => break,
                Ok(n) => read += n,
            }
        }
        tail.truncate(read);
        let end = tail.iter().rposition(|&b| b == b'\n')?;
        let start = tail[..end]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        serde_json::from_slice(&tail[start..end]).ok()
    }

    /// The permission bits of the saved content `digest`.
    pub(crate) fn object_mode(&self, digest: &str) -> Option<u32> {
        // `k` and 32 hex digits (keyed), or 32 alone (before keys).
        let hex = digest.strip_prefix('k').unwrap_or(digest);
        if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let stat = rustix::fs::statat(
            &self.fd,
            format!("objects/{digest}"),
            AtFlags::SYMLINK_NOFOLLOW,
        )
        .ok()?;
        (FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile)
            .then_some(stat.st_mode & 0o7777)
    }
}

/// The directory `name` in `base`, made private if missing, opened without
/// following a link: this user's, and no one else's to read or write.
fn open_private(base: &OwnedFd, name: &str) -> Result<OwnedFd, String> {
    match rustix::fs::mkdirat(base, name, Mode::from_raw_mode(0o700)) {
        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
        Err(e) => return Err(io::Error::from(e).to_string()),
    }
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(base, name, flags, Mode::empty()).map_err(|e| match e {
        rustix::io::Errno::NOTDIR | rustix::io::Errno::LOOP => {
            "it is not a directory (a link is not followed)".to_owned()
        }
        e => io::Error::from(e).to_string(),
    })?;
    private(&fd)?;
    Ok(fd)
}

/// Refuse a journal directory that is not this user's alone.
fn private(fd: &OwnedFd) -> Result<(), String> {
    let stat = rustix::fs::fstat(fd).map_err(|e| io::Error::from(e).to_string())?;
    if stat.st_uid != trust::me() {
        return Err("it is owned by another user".into());
    }
    if stat.st_mode & 0o077 != 0 {
        return Err(format!(
            "it is not private (mode {:o}): others could read what every change replaced \
             (chmod 700 it)",
            stat.st_mode & 0o777
        ));
    }
    Ok(())
}

/// A regular file in `dir`, opened for reading without following a link.
fn open_file(dir: &OwnedFd, name: &str) -> Option<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let fd = rustix::fs::openat(dir, name, flags, Mode::empty()).ok()?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    (FileType::from_raw_mode(stat.st_mode) == FileType::RegularFile).then_some(fd)
}

/// A small file of `dir` as text (a lock, a holder, a note).
fn read_small(dir: &OwnedFd, name: &str) -> Option<String> {
    let fd = open_file(dir, name)?;
    let mut buf = vec![0; 4096];
    let n = rustix::io::read(&fd, &mut buf).ok()?;
    buf.truncate(n);
    String::from_utf8(buf).ok()
}

/// The names in `dir`.
fn names(dir: &OwnedFd) -> Vec<String> {
    let Ok(entries) = rustix::fs::Dir::read_from(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().ok().map(str::to_owned))
        .filter(|n| n != "." && n != "..")
        .collect()
}

/// What a journal's `root` file says: the root's path, and its identity
/// where a version that records it wrote the file.
fn read_note(dir: &OwnedFd) -> Option<(PathBuf, Option<Identity>)> {
    let text = read_small(dir, ROOT_NOTE)?;
    let mut lines = text.lines();
    let path = PathBuf::from(lines.next()?);
    let id = lines.next().and_then(|line| {
        let mut fields = line.split(' ');
        let dev = fields.next()?.parse().ok()?;
        let ino = fields.next()?.parse().ok()?;
        let sec = fields.next().and_then(|f| f.parse().ok()).unwrap_or(0);
        let nsec = fields.next().and_then(|f| f.parse().ok()).unwrap_or(0);
        Some((dev, ino, sec, nsec))
    });
    Some((path, id))
}

/// Write the `root` file: the root's path and identity.
fn write_note(dir: &OwnedFd, root: &Path, id: Identity) -> io::Result<()> {
    let text = format!("{}\n{} {} {} {}\n", root.display(), id.0, id.1, id.2, id.3);
    if read_small(dir, ROOT_NOTE).as_deref() == Some(text.as_str()) {
        return Ok(());
    }
    let temp = ".root.tmp";
    let _ = rustix::fs::unlinkat(dir, temp, AtFlags::empty());
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, temp, flags, Mode::from_raw_mode(0o600))?;
    rustix::io::write(&fd, text.as_bytes())?;
    drop(fd);
    rustix::fs::renameat(dir, temp, dir, ROOT_NOTE)?;
    Ok(())
}

/// Remove what the journal `dir` holds: its files and its saved contents.
/// Nothing is followed: the journal's layout is two levels deep.
fn clear(dir: &OwnedFd) -> io::Result<()> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    for entry in names(dir) {
        let stat = rustix::fs::statat(dir, entry.as_str(), AtFlags::SYMLINK_NOFOLLOW)?;
        if FileType::from_raw_mode(stat.st_mode) == FileType::Directory {
            let inner = rustix::fs::openat(dir, entry.as_str(), flags, Mode::empty())?;
            for file in names(&inner) {
                rustix::fs::unlinkat(&inner, file.as_str(), AtFlags::empty())?;
            }
            rustix::fs::unlinkat(dir, entry.as_str(), AtFlags::REMOVEDIR)?;
        } else {
            rustix::fs::unlinkat(dir, entry.as_str(), AtFlags::empty())?;
        }
    }
    Ok(())
}
