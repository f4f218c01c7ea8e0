//! The platform layer in the component: `wasi:filesystem` descriptors,
//! called directly.
//!
//! Not through `std::fs`: wasi-libc routes a path to the preopen whose name
//! is its longest prefix (so a path would depend on what the preopens are
//! called), opens files for writing with the `mutate-directory` flag (which
//! some hosts refuse), and adds host calls of its own (an inode number per
//! `stat`, per directory entry).

use std::io;
use std::time::{Duration, SystemTime};

use wasi::filesystem::types::{
    Descriptor, DescriptorFlags, DescriptorStat, DescriptorType, ErrorCode, NewTimestamp,
    OpenFlags, PathFlags,
};

use super::{Kind, SandboxRefusal, Stat};

/// A directory descriptor.
#[derive(Debug)]
pub struct Dir {
    descriptor: Descriptor,
}

/// A file descriptor.
#[derive(Debug)]
pub struct File {
    descriptor: Descriptor,
}

/// The directories the host preopened, with the names it gave them.
pub fn preopens() -> Vec<(Dir, String)> {
    wasi::filesystem::preopens::get_directories()
        .into_iter()
        .map(|(descriptor, name)| (Dir { descriptor }, name))
        .collect()
}

/// The host's environment variables (where its settings come from).
pub fn environment() -> Vec<(String, String)> {
    wasi::cli::environment::get_environment()
}

/// The most one `write` hands the host at a time: the host copies each
/// write's buffer out of guest memory before writing it, and in pieces that
/// copy stays small however large the file.
const WRITE_CHUNK: usize = 1 << 20;

impl Dir {
    /// A handle on `descriptor`, which must be a directory (a preopen).
    pub fn from_descriptor(descriptor: Descriptor) -> Dir {
        Dir { descriptor }
    }

    /// The descriptor.
    pub fn descriptor(&self) -> &Descriptor {
        &self.descriptor
    }

    /// Whether `other` is a handle on the same directory.
    pub fn is_same(&self, other: &Dir) -> bool {
        self.descriptor.is_same_object(&other.descriptor)
    }

    /// What `rel` is, not following a final link.
    pub fn stat_at(&self, rel: &str) -> io::Result<Stat> {
        let stat = self
            .descriptor
            .stat_at(PathFlags::empty(), rel)
            .map_err(error)?;
        Ok(convert(&stat))
    }

    /// Whether `a` and `b` (relative paths, final links not followed) name
    /// the same file or directory.
    pub fn same_entry(&self, a: &str, b: &str) -> bool {
        let hash = |rel| {
            self.descriptor
                .metadata_hash_at(PathFlags::empty(), rel)
                .map(|h| (h.lower, h.upper))
        };
        matches!((hash(a), hash(b)), (Ok(x), Ok(y)) if x == y)
    }

    /// The target of the link `rel`.
    pub fn read_link_at(&self, rel: &str) -> io::Result<Option<String>> {
        match self.descriptor.readlink_at(rel) {
            Ok(target) => Ok(Some(target)),
            Err(ErrorCode::IllegalByteSequence) => Ok(None),
            Err(code) => Err(error(code)),
        }
    }

    /// The directory `rel` below this one. A final link is not followed:
    /// callers name directories they resolved already.
    pub fn open_dir_at(&self, rel: &str) -> io::Result<Dir> {
        let descriptor = self
            .descriptor
            .open_at(
                PathFlags::empty(),
                rel,
                OpenFlags::DIRECTORY,
                DescriptorFlags::READ,
            )
            .map_err(error)?;
        Ok(Dir { descriptor })
    }

    /// Create the directory `rel`.
    pub fn create_dir_at(&self, rel: &str) -> io::Result<()> {
        self.descriptor.create_directory_at(rel).map_err(error)
    }

    /// Remove the empty directory `rel`.
    pub fn remove_dir_at(&self, rel: &str) -> io::Result<()> {
        self.descriptor.remove_directory_at(rel).map_err(error)
    }

    /// Open the file `rel` for reading, not following a final link.
    ///
    /// Opened for reading and writing where that is allowed: a FIFO put in
    /// place of the file after the caller looked at it would make a
    /// read-only open wait for a writer, perhaps forever, out of reach of
    /// any time bound on the guest; opened for both it never waits (Linux,
    /// macOS). Nothing is written through the handle. Where writing is not
    /// allowed (a read-only file or root) the read-only open is the
    /// fallback, and only there does that window remain.
    pub fn open_read_at(&self, rel: &str) -> io::Result<File> {
        let open = |flags| {
            self.descriptor
                .open_at(PathFlags::empty(), rel, OpenFlags::empty(), flags)
        };
        // Read-write first: opening a FIFO read-write never waits for a
        // writer, where read-only can wait for ever. Read-only only when
        // writing was refused (a read-only file, an immutable one, a root
        // granted read-only), not when the name was gone for a moment: a
        // FIFO renamed in just then would hold the call.
        let descriptor = match open(DescriptorFlags::READ | DescriptorFlags::WRITE) {
            Err(ErrorCode::Access | ErrorCode::ReadOnly | ErrorCode::NotPermitted) => {
                open(DescriptorFlags::READ)
            }
            other => other,
        }
        .map_err(error)?;
        Ok(File { descriptor })
    }

    /// Open the file `name` of this directory for reading only, not
    /// following a final link: `view`'s open, which must not look like a
    /// write to a watcher (a read-write open ends with `IN_CLOSE_WRITE`) or
    /// fail on a running program. Its caller has seen a regular file
    /// there; a FIFO renamed in between would make this open wait for a
    /// writer, the window `open_read_at` closes where it may.
    pub fn open_read_only_at(&self, name: &str) -> io::Result<File> {
        let descriptor = self
            .descriptor
            .open_at(
                PathFlags::empty(),
                name,
                OpenFlags::empty(),
                DescriptorFlags::READ,
            )
            .map_err(error)?;
        Ok(File { descriptor })
    }

    /// Create the file `name`, which must not exist, for writing.
    pub fn create_new_at(&self, name: &str) -> io::Result<File> {
        let descriptor = self
            .descriptor
            .open_at(
                PathFlags::empty(),
                name,
                OpenFlags::CREATE | OpenFlags::EXCLUSIVE,
                DescriptorFlags::WRITE,
            )
            .map_err(error)?;
        Ok(File { descriptor })
    }

    /// Rename `from` to `to`, both in this directory, replacing `to`.
    pub fn rename_at(&self, from: &str, to: &str) -> io::Result<()> {
        self.descriptor
            .rename_at(from, &self.descriptor, to)
            .map_err(error)
    }

    /// Make `name` a symbolic link to `target`; fails (`AlreadyExists`)
    /// when `name` exists.
    pub fn symlink_at(&self, target: &str, name: &str) -> io::Result<()> {
        self.descriptor.symlink_at(target, name).map_err(error)
    }

    /// Set the modification time of the file `name` to now.
    pub fn touch_at(&self, name: &str) -> io::Result<()> {
        self.descriptor
            .set_times_at(
                PathFlags::empty(),
                name,
                NewTimestamp::NoChange,
                NewTimestamp::Now,
            )
            .map_err(error)
    }

    /// Give the file `from` the name `to` too, both in this directory;
    /// fails (`AlreadyExists`) when `to` exists.
    pub fn link_at(&self, from: &str, to: &str) -> io::Result<()> {
        self.descriptor
            .link_at(PathFlags::empty(), from, &self.descriptor, to)
            .map_err(error)
    }

    /// Give the file `from` (in this directory) the name `to` in `other`,
    /// which may be another preopen; fails (`AlreadyExists`) when `to`
    /// exists, and where the two lie on different file systems.
    pub fn link_into(&self, from: &str, other: &Dir, to: &str) -> io::Result<()> {
        self.descriptor
            .link_at(PathFlags::empty(), from, &other.descriptor, to)
            .map_err(error)
    }

    /// Open the file `name` for writing, created if `create` and missing.
    pub fn open_write_at(&self, name: &str, create: bool) -> io::Result<File> {
        let flags = if create {
            OpenFlags::CREATE
        } else {
            OpenFlags::empty()
        };
        let descriptor = self
            .descriptor
            .open_at(
                PathFlags::empty(),
                name,
                flags,
                DescriptorFlags::READ | DescriptorFlags::WRITE,
            )
            .map_err(error)?;
        Ok(File { descriptor })
    }

    /// What identifies the file or directory `rel` (final link not
    /// followed): equal for two names of one file.
    pub fn identity_at(&self, rel: &str) -> io::Result<(u64, u64)> {
        let hash = self
            .descriptor
            .metadata_hash_at(PathFlags::empty(), rel)
            .map_err(error)?;
        Ok((hash.lower, hash.upper))
    }

    /// Remove the file `name`.
    pub fn unlink_at(&self, name: &str) -> io::Result<()> {
        self.descriptor.unlink_file_at(name).map_err(error)
    }

    /// Make the directory's entries durable.
    pub fn sync(&self) -> io::Result<()> {
        self.descriptor.sync().map_err(error)
    }

    /// The names in this directory that `keep` accepts. WASI's own listing:
    /// wasi-libc's `readdir` would ask the host for an inode number per
    /// entry.
    pub fn names(&self, keep: impl Fn(&str) -> bool) -> io::Result<Vec<String>> {
        let entries = self.descriptor.read_directory().map_err(error)?;
        let mut names = Vec::new();
        while let Some(entry) = entries.read_directory_entry().map_err(error)? {
            if keep(&entry.name) {
                names.push(entry.name);
            }
        }
        Ok(names)
    }
}

impl File {
    /// What the open file is.
    pub fn stat(&self) -> io::Result<Stat> {
        Ok(convert(&self.descriptor.stat().map_err(error)?))
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
        loop {
            let offset = bytes.len() as u64;
            if offset > cap {
                break;
            }
            let want = len
                .saturating_sub(offset)
                .max(1 << 16)
                .min(cap.saturating_add(1) - offset);
            let (chunk, end) = self.descriptor.read(want, offset).map_err(error)?;
            if chunk.is_empty() {
                break;
            }
            bytes.extend_from_slice(&chunk);
            if end {
                break;
            }
        }
        Ok(bytes)
    }

    /// Write `content` at the start of the file.
    pub fn write_all(&self, content: &[u8]) -> io::Result<()> {
        self.write_at(content, 0)
    }

    /// Make the file's content durable.
    pub fn sync(&self) -> io::Result<()> {
        self.descriptor.sync().map_err(error)
    }

    /// Make the file's content durable, and its metadata where reading
    /// the content needs it (its size).
    pub fn sync_data(&self) -> io::Result<()> {
        self.descriptor.sync_data().map_err(error)
    }

    /// Cut or extend the file to `len` bytes.
    pub fn set_len(&self, len: u64) -> io::Result<()> {
        self.descriptor.set_size(len).map_err(error)
    }

    /// What identifies the open file (see [`Dir::identity_at`]).
    pub fn identity(&self) -> io::Result<(u64, u64)> {
        let hash = self.descriptor.metadata_hash().map_err(error)?;
        Ok((hash.lower, hash.upper))
    }

    /// Write `content` at `offset`.
    pub fn write_at(&self, content: &[u8], offset: u64) -> io::Result<()> {
        let mut written = 0usize;
        while written < content.len() {
            let rest = &content[written..];
            let piece = &rest[..rest.len().min(WRITE_CHUNK)];
            let n = self
                .descriptor
                .write(piece, offset + written as u64)
                .map_err(error)?;
            if n == 0 {
                return Err(io::Error::from(io::ErrorKind::WriteZero));
            }
            written += usize::try_from(n).unwrap_or(piece.len()).min(piece.len());
        }
        Ok(())
    }

    /// Up to `len` bytes from `offset`.
    pub fn read_at(&self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        while (bytes.len() as u64) < len {
            let at = offset + bytes.len() as u64;
            let (chunk, end) = self
                .descriptor
                .read(len - bytes.len() as u64, at)
                .map_err(error)?;
            bytes.extend_from_slice(&chunk);
            if end || chunk.is_empty() {
                break;
            }
        }
        Ok(bytes)
    }
}

fn convert(stat: &DescriptorStat) -> Stat {
    let kind = match stat.type_ {
        DescriptorType::SymbolicLink => Kind::Symlink,
        DescriptorType::Directory => Kind::Directory,
        DescriptorType::RegularFile => Kind::File,
        _ => Kind::Other,
    };
    // WASI timestamps are unsigned: never before the epoch.
    let modified = stat
        .data_modification_timestamp
        .and_then(|t| SystemTime::UNIX_EPOCH.checked_add(Duration::new(t.seconds, t.nanoseconds)));
    let changed = stat
        .status_change_timestamp
        .and_then(|t| SystemTime::UNIX_EPOCH.checked_add(Duration::new(t.seconds, t.nanoseconds)));
    Stat {
        kind,
        len: stat.size,
        modified,
        changed,
        link_count: stat.link_count,
    }
}

/// The `io::Error` for a WASI error code, with the kind std would give the
/// matching errno; `not-permitted` is the capability layer's refusal.
fn error(code: ErrorCode) -> io::Error {
    use io::ErrorKind as K;
    let kind = match code {
        ErrorCode::NotPermitted => {
            return io::Error::new(K::PermissionDenied, SandboxRefusal);
        }
        ErrorCode::Access => K::PermissionDenied,
        ErrorCode::NoEntry => K::NotFound,
        ErrorCode::Exist => K::AlreadyExists,
        ErrorCode::NotDirectory => K::NotADirectory,
        ErrorCode::IsDirectory => K::IsADirectory,
        ErrorCode::InsufficientSpace => K::StorageFull,
        ErrorCode::Quota => K::QuotaExceeded,
        ErrorCode::FileTooLarge => K::FileTooLarge,
        ErrorCode::ReadOnly => K::ReadOnlyFilesystem,
        ErrorCode::NameTooLong => K::InvalidFilename,
        ErrorCode::Invalid => K::InvalidInput,
        ErrorCode::Interrupted => K::Interrupted,
        ErrorCode::WouldBlock => K::WouldBlock,
        ErrorCode::Busy => K::ResourceBusy,
        ErrorCode::NotEmpty => K::DirectoryNotEmpty,
        ErrorCode::InsufficientMemory => K::OutOfMemory,
        ErrorCode::Unsupported => K::Unsupported,
        _ => K::Other,
    };
    io::Error::from(kind)
}
