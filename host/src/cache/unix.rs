//! The cache on Unix: one directory handle, everything relative to it.

use std::ffi::OsStr;
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::trust::{self, Untrusted, untrusted};

use super::artifact::{
    KEEP, Load, MAGIC, TRAILER_LEN, file_size_limit, integrity, is_artifact_name, is_temp_name,
};

/// A temp file older than this belongs to a writer that died.
const STALE_TEMP: Duration = Duration::from_secs(60 * 60);

/// The cache directory, opened and checked.
#[derive(Debug)]
pub(super) struct CacheDir {
    fd: OwnedFd,
}

impl CacheDir {
    /// The cache at `path`, created private if it is missing, when it
    /// and every directory above it are trusted (`crate::trust`).
    pub(super) fn open(path: &Path) -> Result<CacheDir, Untrusted> {
        trust::open_dir(path).map(|fd| CacheDir { fd })
    }

    /// The artifact `name`, checked and loaded as `how` says.
    pub(super) fn load(&self, engine: &Engine, name: &str, how: Load) -> Option<Component> {
        load_checked(engine, self.open_checked(name)?, how)
    }

    /// The artifact `name`, opened through this directory without
    /// following a link, if it is a regular file of this user's that no
    /// one else can write, with a valid trailer and checksum (read
    /// through a mapping of this very file).
    pub(super) fn open_checked(&self, name: &str) -> Option<std::fs::File> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::empty()).ok()?;
        let stat = rustix::fs::fstat(&fd).ok()?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile
            || untrusted(&stat).is_some()
        {
            return None;
        }
        let file = std::fs::File::from(fd);
        let len = usize::try_from(stat.st_size).ok()?;
        let artifact_len = len.checked_sub(TRAILER_LEN)?;
        let mut trailer = [0u8; TRAILER_LEN];
        read_exact_at(&file, &mut trailer, artifact_len).ok()?;
        verified(&trailer, crc_of(&file, artifact_len).ok()?).then_some(file)
    }

    /// Store `artifact` as `name`, through a temp file created
    /// exclusively (following no link) and renamed.
    pub(super) fn store(&self, name: &str, artifact: &[u8]) -> io::Result<()> {
        if !fits_file_size_limit(artifact.len() + TRAILER_LEN) {
            return Err(io::Error::from(io::ErrorKind::FileTooLarge));
        }
        let unique = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let temp = format!(".{name}.{}.{unique}.tmp", std::process::id());
        let result = (|| {
            let flags =
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(&self.fd, &temp, flags, Mode::from_raw_mode(0o600))?;
            let mut file = std::fs::File::from(fd);
            use std::io::Write;
            file.write_all(artifact)?;
            file.write_all(MAGIC)?;
            file.write_all(&integrity(artifact).to_le_bytes())?;
            drop(file);
            rustix::fs::renameat(&self.fd, &temp, &self.fd, name)?;
            Ok(())
        })();
        if result.is_err() {
            let _ = rustix::fs::unlinkat(&self.fd, &temp, AtFlags::empty());
        }
        result
    }

    /// Remove all but the [`KEEP`] newest artifacts
    /// (`kept`, just stored, among them) and stale temp files. Other
    /// files are never touched, and any error leaves the file in place.
    pub(super) fn prune(&self, kept: &str) {
        let Ok(entries) = rustix::fs::Dir::read_from(self.fd.as_fd()) else {
            return;
        };
        let now = SystemTime::now();
        let mut artifacts = Vec::new();
        for entry in entries.flatten() {
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            let Some(name) = name.to_str() else {
                continue;
            };
            let Ok(stat) = rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            // A link is never an artifact of ours.
            if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile || name == kept {
                continue;
            }
            let modified = SystemTime::UNIX_EPOCH
                + Duration::from_secs(u64::try_from(stat.st_mtime).unwrap_or(0));
            if is_artifact_name(name) {
                artifacts.push((modified, name.to_owned()));
            } else if is_temp_name(name)
                && now
                    .duration_since(modified)
                    .is_ok_and(|age| age > STALE_TEMP)
            {
                let _ = rustix::fs::unlinkat(&self.fd, name, AtFlags::empty());
            }
        }
        // Newest first; `kept` is the newest of all.
        artifacts.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
        for (_, name) in artifacts.into_iter().skip(KEEP - 1) {
            let _ = rustix::fs::unlinkat(&self.fd, &name, AtFlags::empty());
        }
    }
}

/// The checked artifact `file`, loaded as `how` says: the file itself,
/// never what its name holds by now.
pub(super) fn load_checked(engine: &Engine, file: std::fs::File, how: Load) -> Option<Component> {
    match how {
        Load::Map => {
            // The file this process checked, by its handle: a directory
            // or file swapped meanwhile changes nothing here.
            let by_handle = format!("/proc/self/fd/{}", file.as_raw_fd());
            if Path::new(&by_handle).exists() {
                return deserialize(engine, Artifact::File(Path::new(&by_handle)));
            }
            let bytes = read_all(&file)?;
            deserialize(engine, Artifact::Bytes(&bytes[..bytes.len() - TRAILER_LEN]))
        }
        Load::Copy => {
            let bytes = read_all(&file)?;
            let (artifact, trailer) = bytes.split_at(bytes.len() - TRAILER_LEN);
            verified(trailer, integrity(artifact))
                .then(|| deserialize(engine, Artifact::Bytes(artifact)))?
        }
    }
}

fn verified(trailer: &[u8], sum: u64) -> bool {
    let (magic, stored) = trailer.split_at(MAGIC.len());
    magic == MAGIC && stored == sum.to_le_bytes()
}

fn read_all(mut file: &std::fs::File) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    (bytes.len() >= TRAILER_LEN).then_some(bytes)
}

fn read_exact_at(file: &std::fs::File, buf: &mut [u8], at: usize) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, at as u64)
}

/// The [`integrity`] checksum of the first `len` bytes of `file`, read
/// through a mapping of the file: reading them into a buffer made the
/// kernel copy the whole artifact on every start
/// (BENCHMARKS.md#start-up).
#[allow(unsafe_code, reason = "mapping a file to checksum it")]
fn crc_of(file: &std::fs::File, len: usize) -> io::Result<u64> {
    use rustix::mm::{MapFlags, ProtFlags, mmap, munmap};
    if len == 0 {
        return Ok(integrity(&[]));
    }
    // SAFETY: a fresh read-only private mapping of `len` bytes of a file
    // this process opened (`len` is within its size, checked by the
    // caller), read only here and unmapped below; no Rust value aliases
    // it. Files in the cache are replaced by rename, never truncated in
    // place, so the mapped pages stay backed while they are read.
    unsafe {
        let ptr = mmap(
            std::ptr::null_mut(),
            len,
            ProtFlags::READ,
            MapFlags::PRIVATE,
            file,
            0,
        )?;
        let sum = integrity(std::slice::from_raw_parts(ptr.cast::<u8>(), len));
        munmap(ptr, len)?;
        Ok(sum)
    }
}

/// A checked artifact: its file, or its bytes read from the file.
enum Artifact<'a> {
    File(&'a Path),
    Bytes(&'a [u8]),
}

#[allow(
    unsafe_code,
    reason = "loading a compiled artifact is inherently trusted"
)]
fn deserialize(engine: &Engine, artifact: Artifact<'_>) -> Option<Component> {
    // SAFETY: wasmtime requires that the artifact come from `serialize`
    // of a compatible engine. It was written by `store` from
    // `Component::serialize`; the file name carries the engine's
    // compatibility hash and the trailer a checksum of exactly the
    // artifact's bytes, both checked on the very file loaded here (by
    // its handle, `/proc/self/fd/N`, or its bytes read through that
    // handle), which only this user could have written; wasmtime
    // validates its own header too.
    match artifact {
        Artifact::File(path) => unsafe { Component::deserialize_file(engine, path) }.ok(),
        Artifact::Bytes(bytes) => unsafe { Component::deserialize(engine, bytes) }.ok(),
    }
}

/// Writing past `RLIMIT_FSIZE` raises `SIGXFSZ`, which kills the
/// process: never try.
fn fits_file_size_limit(len: usize) -> bool {
    file_size_limit().is_none_or(|max| u64::try_from(len).is_ok_and(|len| len <= max))
}
