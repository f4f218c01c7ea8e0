//! Compile the component once per machine, not once per process.
//!
//! Compiling the component with Cranelift is the one slow step of starting
//! (a few hundred milliseconds in a release build, seconds in a debug one).
//! The compiled artifact is kept in a cache directory:
//!
//! - **Keyed** by a hash of the component's bytes and of the engine's
//!   compatibility hash (wasmtime version, compiler settings, CPU features),
//!   so a new component or a new engine never loads an old artifact.
//! - **Written atomically** (a temp file in the same directory, then a
//!   rename), so a reader sees a whole artifact or none.
//! - **Validated on load**: a trailer with a magic number and a checksum of
//!   the artifact, checked before wasmtime sees it; wasmtime checks its own
//!   header too. Any mismatch, any corruption, any error means compiling as
//!   if there were no cache (and writing a fresh artifact). A process that
//!   makes one call then maps the artifact; a server copies it in ([`Load`]).
//! - **Never in the way**: a cache that cannot be read or written (read-only
//!   disk, full disk, file-size limit) costs at most the compile it would
//!   have saved; it never fails a call.
//! - **Bounded**: each new component or engine (an upgrade, a rebuild)
//!   stores a new artifact of a few MiB. After storing one, the cache
//!   keeps the [`CompileCache::KEEP`] most recently stored artifacts and
//!   removes older ones, and temp files that a killed writer left more than
//!   an hour ago. An artifact still in use that was removed costs one
//!   compile, then is the newest. This runs only after a compile, never on
//!   a start that loads.
//! - **Trusted or not used**: the artifact is code the host runs, so
//!   whoever can write the cache, or rename a directory above it, chooses
//!   that code. The directory is checked the way ssh's `StrictModes` checks
//!   a home directory: every directory above it must belong to root or this
//!   user and be writable by no one else unless it is sticky (`/tmp`), and
//!   the cache directory itself must belong to this user and be writable by
//!   no one else. It is then opened once, without following a link, and
//!   everything happens relative to that handle: an artifact is opened
//!   through it (following no link) and checked through the file it opened
//!   (a regular file of this user's that no one else can write, its
//!   checksum read through a mapping of that file), and what wasmtime loads
//!   is that same file — reopened as `/proc/self/fd/N`, which names the
//!   file the handle holds, not whatever the name points to by then, or
//!   read through the handle where there is no `/proc`. Otherwise the host
//!   compiles in memory, says why on stderr once, and stores nothing. New
//!   directories are created private (mode 0700); artifacts are written
//!   through exclusive opens that follow no link.
//!
//! **Why not wasmtime's own cache** (the `cache` feature, configured by a
//! TOML file): it stores artifacts zstd-compressed, so every start reads
//! and decompresses the whole artifact into fresh memory, where this cache
//! lets a one-shot process map the file and fault in only the pages a call
//! touches; it runs a worker thread per process for its statistics and
//! clean-up; it does not check who owns or can write its directory before
//! running what it finds there; and it would add zstd (a C library) and a
//! TOML parser to the build.
//!
//! Where it lives: `$WRITE_TOOL_CACHE_DIR` if set, else
//! `$XDG_CACHE_HOME/write-tool`, else `~/.cache/write-tool`.
//! `WRITE_TOOL_CACHE=off` turns it off. Only Unix hosts keep one; others
//! compile in every process.

use std::hash::{Hash, Hasher};
use std::path::PathBuf;

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;
use write_tool_wire::settings;

/// Marks a cache file: it follows the artifact.
const MAGIC: &[u8; 8] = b"WTCACHE3";
/// After the artifact: the magic, then the artifact's checksum (CRC-32, as
/// a little-endian u64). At the end, not the start, so that the artifact
/// starts the file and wasmtime can map the file instead of copying it.
const TRAILER_LEN: usize = 16;

/// Where compiled artifacts are kept, if anywhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompileCache {
    /// Compile in every process.
    Disabled,
    /// Keep artifacts in this directory.
    Dir(PathBuf),
}

impl CompileCache {
    /// How many artifacts a cache directory keeps: room for several
    /// versions of the tool side by side, a few tens of MiB at most.
    pub const KEEP: usize = 8;

    /// The cache the environment asks for: off when `WRITE_TOOL_CACHE` is
    /// `off`, `false`, `no` or `0` (any case), else `$WRITE_TOOL_CACHE_DIR`,
    /// `$XDG_CACHE_HOME/write-tool` or `~/.cache/write-tool`; off when none
    /// of those is set.
    pub fn from_env() -> CompileCache {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if var(settings::CACHE)
            .and_then(|v| v.into_string().ok())
            .is_some_and(|v| settings::is_off(&v))
        {
            return CompileCache::Disabled;
        }
        if let Some(dir) = var(settings::CACHE_DIR) {
            return CompileCache::Dir(PathBuf::from(dir));
        }
        if let Some(xdg) = var("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
        {
            return CompileCache::Dir(xdg.join("write-tool"));
        }
        match var("HOME") {
            Some(home) => CompileCache::Dir(PathBuf::from(home).join(".cache").join("write-tool")),
            None => CompileCache::Disabled,
        }
    }

    /// The component for `wasm`: loaded from the cache (as `how` says) when
    /// a valid artifact is there, compiled (and stored) otherwise. `known`
    /// is `wasm`'s key when the caller has it (the embedded component's,
    /// taken at build time): hashing 2 MB would cost a one-shot process a
    /// sixth of its start.
    pub(crate) fn component(
        &self,
        engine: &Engine,
        wasm: &[u8],
        known: Option<&str>,
        how: Load,
    ) -> wasmtime::Result<Component> {
        let CompileCache::Dir(dir) = self else {
            return Component::new(engine, wasm);
        };
        #[cfg(unix)]
        {
            let cache = match unix::CacheDir::open(dir) {
                Ok(cache) => cache,
                Err(why) => {
                    eprintln!(
                        "write-tool: not using the compile cache {}: {why}",
                        dir.display()
                    );
                    return Component::new(engine, wasm);
                }
            };
            let name = file_name(engine, known.map_or_else(|| key(wasm), str::to_owned));
            if let Some(component) = cache.load(engine, &name, how) {
                return Ok(component);
            }
            let component = Component::new(engine, wasm)?;
            if let Ok(artifact) = component.serialize()
                && cache.store(&name, &artifact).is_ok()
            {
                cache.prune(&name);
            }
            Ok(component)
        }
        #[cfg(not(unix))]
        {
            let _ = (dir, known, how);
            Component::new(engine, wasm)
        }
    }
}

/// How an artifact found in the cache is brought into memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Load {
    /// Mapped from its file: nothing is copied, the fastest start.
    Map,
    /// Copied into this process's own memory: calls then run faster than
    /// from a mapped artifact (BENCHMARKS.md#start-up), which pays for
    /// the copy in a process that makes many.
    Copy,
}

/// A key of the cache: the first 128 bits of a SHA-256, in hex. A
/// specified hash, so that every build of the tool names the same
/// component's artifact alike (std's `DefaultHasher` leaves its algorithm
/// unspecified, free to change between Rust releases).
fn key(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes)[..16])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Feeds what a `Hash` implementation writes into SHA-256: the engine's
/// compatibility hash is only available as `impl Hash`.
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn finish(&self) -> u64 {
        unreachable!("read through `key_of_engine`, never `finish`")
    }
}

/// The engine's key: its compatibility hash (wasmtime version, compiler
/// settings, CPU features) through SHA-256.
fn key_of_engine(engine: &Engine) -> String {
    let mut hasher = Sha256Hasher(Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hex(&hasher.0.finalize()[..16])
}

/// Integrity check of a stored artifact (several MiB, read on every start):
/// CRC-32, which catches torn and corrupted files at memory speed. It is not
/// a defence against someone who can write the cache; the directory's
/// permissions are.
fn integrity(bytes: &[u8]) -> u64 {
    u64::from(crc32fast::hash(bytes))
}

/// How many hex digits each half of an artifact's name has (see
/// [`file_name`]); builds before SHA-256 keys used 16.
const KEY_DIGITS: usize = 32;
const OLD_KEY_DIGITS: usize = 16;

/// The length of an artifact's name (see [`file_name`]).
const NAME_LEN: usize = KEY_DIGITS + 1 + KEY_DIGITS + ".cwasm".len();

/// Whether `name` is an artifact's, as [`file_name`] makes them (or as
/// builds before it did, so that they are pruned too).
fn is_artifact_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".cwasm") else {
        return false;
    };
    let Some((component, engine)) = stem.split_once('-') else {
        return false;
    };
    let digits = component.len();
    (digits == KEY_DIGITS || digits == OLD_KEY_DIGITS)
        && engine.len() == digits
        && component
            .bytes()
            .chain(engine.bytes())
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Whether `name` is a temp file of `store`: `.<artifact>.<pid>.<n>.tmp`.
fn is_temp_name(name: &str) -> bool {
    name.strip_prefix('.')
        .and_then(|rest| rest.get(..NAME_LEN).zip(rest.get(NAME_LEN..)))
        .is_some_and(|(artifact, rest)| {
            is_artifact_name(artifact) && rest.starts_with('.') && rest.ends_with(".tmp")
        })
}

/// `<component key>-<engine key>.cwasm`.
fn file_name(engine: &Engine, component: String) -> String {
    format!("{component}-{}.cwasm", key_of_engine(engine))
}

#[cfg(unix)]
mod unix {
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

    use super::{
        CompileCache, Load, MAGIC, TRAILER_LEN, integrity, is_artifact_name, is_temp_name,
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
                let flags = OFlags::WRONLY
                    | OFlags::CREATE
                    | OFlags::EXCL
                    | OFlags::NOFOLLOW
                    | OFlags::CLOEXEC;
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

        /// Remove all but the [`CompileCache::KEEP`] newest artifacts
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
            for (_, name) in artifacts.into_iter().skip(CompileCache::KEEP - 1) {
                let _ = rustix::fs::unlinkat(&self.fd, &name, AtFlags::empty());
            }
        }
    }

    /// The checked artifact `file`, loaded as `how` says: the file itself,
    /// never what its name holds by now.
    pub(super) fn load_checked(
        engine: &Engine,
        file: std::fs::File,
        how: Load,
    ) -> Option<Component> {
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
        super::file_size_limit().is_none_or(|max| u64::try_from(len).is_ok_and(|len| len <= max))
    }
}

/// Whether this process runs under a file-size limit.
pub(crate) fn file_size_limited() -> bool {
    file_size_limit().is_some()
}

#[cfg(unix)]
fn file_size_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Fsize).current
}

#[cfg(not(unix))]
fn file_size_limit() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded component's key, hashed at build time, is the one any
    /// copy of its bytes gets, so `write-tool component -o x.wasm` loaded
    /// through `from_component_bytes` shares its artifact.
    #[test]
    fn the_build_time_key_is_the_components_hash() {
        let copy = crate::COMPONENT.to_vec();
        assert_eq!(crate::COMPONENT_KEY, key(&copy));
        assert_eq!(
            key(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223",
            "SHA-256, as specified"
        );
    }

    /// What wasmtime loads is the file whose bytes were checked, not what
    /// the name holds by then: the artifact is opened and checked, another
    /// valid artifact is renamed over its name, and the load still gives
    /// the first.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_artifact_loaded_is_the_one_checked() {
        let dir = tempfile::tempdir().unwrap();
        let engine = crate::engine::engine(&crate::Options::default()).unwrap();
        let cache = unix::CacheDir::open(dir.path()).unwrap();
        let tool = Component::new(&engine, crate::COMPONENT).unwrap();
        // An empty component: valid, compiled by the same engine, and with
        // no `tool` export.
        let empty = Component::new(&engine, b"\0asm\x0d\0\x01\0").unwrap();
        let exports = |c: &Component| -> Vec<String> {
            c.component_type()
                .exports(&engine)
                .map(|(name, _)| name.to_owned())
                .collect()
        };
        for how in [Load::Map, Load::Copy] {
            cache.store("a.cwasm", &tool.serialize().unwrap()).unwrap();
            cache.store("b.cwasm", &empty.serialize().unwrap()).unwrap();
            let checked = cache.open_checked("a.cwasm").expect("a valid artifact");
            std::fs::rename(dir.path().join("b.cwasm"), dir.path().join("a.cwasm")).unwrap();
            let loaded = unix::load_checked(&engine, checked, how).unwrap();
            assert_eq!(exports(&loaded), ["tool"], "{how:?}");
            // By name, it is the other now.
            let by_name = cache.load(&engine, "a.cwasm", how).unwrap();
            assert!(exports(&by_name).is_empty(), "{how:?}");
        }
    }
}
