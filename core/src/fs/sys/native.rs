//! The platform layer natively: a handle is a directory's path, and each
//! operation is a `std::fs` call on a path below it.

use std::fs::{self, OpenOptions};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::{Kind, Stat};

/// A directory, by its path.
#[derive(Debug, Clone)]
pub struct Dir {
    path: PathBuf,
}

/// An open file.
#[derive(Debug)]
pub struct File {
    file: fs::File,
}

/// The directories the host preopened: natively there is no host, and
/// none.
pub fn preopens() -> Vec<(Dir, String)> {
    Vec::new()
}

/// The host's environment variables: natively none are the tool's (the
/// native build takes its configuration as a value).
pub fn environment() -> Vec<(String, String)> {
    Vec::new()
}

impl Dir {
    /// The directory at `path`. Nothing is opened: natively a handle is
    /// its path, and no sandbox sits below the tool's own checks.
    pub fn from_path(path: impl Into<PathBuf>) -> Dir {
        Dir { path: path.into() }
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `other` is a handle on the same directory.
    pub fn is_same(&self, other: &Dir) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            match (fs::metadata(&self.path), fs::metadata(&other.path)) {
                (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
                _ => false,
            }
        }
        #[cfg(not(unix))]
        {
            self.path == other.path
        }
    }

    fn join(&self, rel: &str) -> PathBuf {
        if rel.is_empty() {
            self.path.clone()
        } else {
            self.path.join(rel)
        }
    }

    /// What `rel` is, not following a final link.
    pub fn stat_at(&self, rel: &str) -> io::Result<Stat> {
        stat(&fs::symlink_metadata(self.join(rel))?)
    }

    /// The target of the link `rel`, if it is text.
    pub fn read_link_at(&self, rel: &str) -> io::Result<Option<String>> {
        Ok(fs::read_link(self.join(rel))?
            .into_os_string()
            .into_string()
            .ok())
    }

    /// The directory `rel` below this one, which must be a directory and
    /// not a link to one (the walk's step, `fs/walk.rs`). A handle here is
    /// a path, so this narrows the window a swap has and cannot close it.
    pub fn open_dir_at(&self, rel: &str) -> io::Result<Dir> {
        let path = self.join(rel);
        if !fs::symlink_metadata(&path)?.is_dir() {
            return Err(io::ErrorKind::NotADirectory.into());
        }
        Ok(Dir::from_path(path))
    }

    /// Create the directory `rel`.
    pub fn create_dir_at(&self, rel: &str) -> io::Result<()> {
        fs::create_dir(self.join(rel))
    }

    /// Remove the empty directory `rel`.
    pub fn remove_dir_at(&self, rel: &str) -> io::Result<()> {
        fs::remove_dir(self.join(rel))
    }

    /// Open the file `rel` for reading.
    ///
    /// Opened for reading and writing where allowed, as in the component
    /// (`sys/wasi.rs`): a FIFO swapped in is then never waited on.
    pub fn open_read_at(&self, rel: &str) -> io::Result<File> {
        let path = self.join(rel);
        // As in the component (`wasi.rs`): read-only only when writing was
        // refused.
        let file = match OpenOptions::new().read(true).write(true).open(&path) {
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
                ) =>
            {
                fs::File::open(&path)?
            }
            other => other?,
        };
        Ok(File { file })
    }

    /// Open the file `name` of this directory for reading only (`view`:
    /// see the component's).
    pub fn open_read_only_at(&self, name: &str) -> io::Result<File> {
        Ok(File {
            file: fs::File::open(self.join(name))?,
        })
    }

    /// Create the file `name`, which must not exist, for writing.
    pub fn create_new_at(&self, name: &str) -> io::Result<File> {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.join(name))?;
        Ok(File { file })
    }

    /// Rename `from` to `to`, both in this directory, replacing `to`.
    pub fn rename_at(&self, from: &str, to: &str) -> io::Result<()> {
        fs::rename(self.join(from), self.join(to))
    }

    /// Give the file `from` the name `to` too, both in this directory;
    /// fails (`AlreadyExists`) when `to` exists.
    pub fn link_at(&self, from: &str, to: &str) -> io::Result<()> {
        fs::hard_link(self.join(from), self.join(to))
    }

    /// Make `name` a symbolic link to `target`; fails (`AlreadyExists`)
    /// when `name` exists.
    pub fn symlink_at(&self, target: &str, name: &str) -> io::Result<()> {
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(target, self.join(name))
        }
        #[cfg(not(unix))]
        {
            let _ = (target, name);
            Err(io::ErrorKind::Unsupported.into())
        }
    }

    /// Set the modification time of the file `name` to now.
    pub fn touch_at(&self, name: &str) -> io::Result<()> {
        fs::File::options()
            .write(true)
            .open(self.join(name))?
            .set_modified(std::time::SystemTime::now())
    }

    /// Whether `a` and `b` (relative paths, final links not followed) name
    /// the same file or directory.
    pub fn same_entry(&self, a: &str, b: &str) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let id = |rel| fs::symlink_metadata(self.join(rel)).map(|m| (m.dev(), m.ino()));
            matches!((id(a), id(b)), (Ok(x), Ok(y)) if x == y)
        }
        #[cfg(not(unix))]
        {
            let _ = (a, b);
            false
        }
    }

    /// Give the file `from` (in this directory) the name `to` in `other`;
    /// fails (`AlreadyExists`) when `to` exists, and across file systems.
    pub fn link_into(&self, from: &str, other: &Dir, to: &str) -> io::Result<()> {
        fs::hard_link(self.join(from), other.join(to))
    }

    /// Open the file `name` for writing, created if `create` and missing.
    pub fn open_write_at(&self, name: &str, create: bool) -> io::Result<File> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false)
            .open(self.join(name))?;
        Ok(File { file })
    }

    /// What identifies the file or directory `rel` (final link not
    /// followed): equal for two names of one file.
    pub fn identity_at(&self, rel: &str) -> io::Result<(u64, u64)> {
        identity(&fs::symlink_metadata(self.join(rel))?)
    }

    /// Remove the file `name`.
    pub fn unlink_at(&self, name: &str) -> io::Result<()> {
        fs::remove_file(self.join(name))
    }

    /// Make the directory's entries durable.
    pub fn sync(&self) -> io::Result<()> {
        fs::File::open(&self.path)?.sync_all()
    }

    /// The names in this directory that `keep` accepts.
    pub fn names(&self, keep: impl Fn(&str) -> bool) -> io::Result<Vec<String>> {
        Ok(fs::read_dir(&self.path)?
            .flatten()
            .filter_map(|entry| entry.file_name().into_string().ok())
            .filter(|name| keep(name))
            .collect())
    }
}

impl File {
    /// What the open file is.
    pub fn stat(&self) -> io::Result<Stat> {
        stat(&self.file.metadata()?)
    }

    /// The whole file, whose size is `len` (more or less is fine).
    pub fn read_all(&self, len: u64) -> io::Result<Vec<u8>> {
        self.read_capped(len, u64::MAX)
    }

    /// The file, whose size is `len`, read to its end or to `cap` bytes and
    /// one more, whichever comes first: a file that grows while it is read
    /// is never held beyond what the caller reads.
    pub fn read_capped(&self, len: u64, cap: u64) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(usize::try_from(len.min(cap)).unwrap_or(0));
        // Through `take`: `File::read_to_end` would ask for the metadata
        // again to size a buffer that is sized already.
        (&self.file)
            .take(cap.saturating_add(1))
            .read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// Write `content` at the start of the file.
    pub fn write_all(&self, content: &[u8]) -> io::Result<()> {
        self.write_at(content, 0)
    }

    /// Make the file's content durable.
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_all()
    }

    /// Make the file's content durable, and its metadata where reading
    /// the content needs it (its size).
    pub fn sync_data(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    /// Cut or extend the file to `len` bytes.
    pub fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }

    /// What identifies the open file (see [`Dir::identity_at`]).
    pub fn identity(&self) -> io::Result<(u64, u64)> {
        identity(&self.file.metadata()?)
    }

    /// Write `content` at `offset`.
    pub fn write_at(&self, content: &[u8], offset: u64) -> io::Result<()> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileExt;
            self.file.write_all_at(content, offset)
        }
        #[cfg(not(unix))]
        {
            use std::io::{Seek, SeekFrom, Write};
            let mut file = &self.file;
            file.seek(SeekFrom::Start(offset))?;
            file.write_all(content)
        }
    }

    /// Up to `len` bytes from `offset`.
    pub fn read_at(&self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        use std::io::{Seek, SeekFrom};
        let mut file = &self.file;
        file.seek(SeekFrom::Start(offset))?;
        let mut bytes = Vec::new();
        file.take(len).read_to_end(&mut bytes)?;
        Ok(bytes)
    }
}

/// A file's identity: device and inode where there are such.
fn identity(meta: &fs::Metadata) -> io::Result<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Ok((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

fn stat(meta: &fs::Metadata) -> io::Result<Stat> {
    let file_type = meta.file_type();
    let kind = if file_type.is_symlink() {
        Kind::Symlink
    } else if file_type.is_dir() {
        Kind::Directory
    } else if file_type.is_file() {
        Kind::File
    } else {
        Kind::Other
    };
    #[cfg(unix)]
    let link_count = std::os::unix::fs::MetadataExt::nlink(meta);
    #[cfg(not(unix))]
    let link_count = 1;
    #[cfg(unix)]
    let changed = {
        use std::os::unix::fs::MetadataExt;
        u64::try_from(meta.ctime()).ok().and_then(|s| {
            std::time::SystemTime::UNIX_EPOCH.checked_add(std::time::Duration::new(s, 0))
        })
    };
    #[cfg(not(unix))]
    let changed = None;
    Ok(Stat {
        kind,
        len: meta.len(),
        modified: meta.modified().ok(),
        changed,
        link_count,
    })
}
