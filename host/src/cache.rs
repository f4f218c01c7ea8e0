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
//!
//! - **Trusted or not used**: the artifact is code the host runs, so
//!   whoever can write the cache chooses that code. The directory is created
//!   private (mode 0700); an existing one is used only if it is a real
//!   directory (not a link) owned by this user and writable by no one else,
//!   and an artifact only if it is a regular file (opened without following
//!   links) owned by this user and writable by no one else. Otherwise the
//!   host compiles, says why on stderr, and stores nothing there. Artifacts
//!   are written through exclusive opens that follow no link.
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
//! `WRITE_TOOL_CACHE=off` turns it off.

use std::fs;
use std::hash::{Hash, Hasher};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

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
/// A temp file older than this belongs to a writer that died.
const STALE_TEMP: Duration = Duration::from_secs(60 * 60);

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

    /// The cache the environment asks for: off when `WRITE_TOOL_CACHE=off`,
    /// else `$WRITE_TOOL_CACHE_DIR`, `$XDG_CACHE_HOME/write-tool` or
    /// `~/.cache/write-tool`; off when none of those is set.
    pub fn from_env() -> CompileCache {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if var(settings::CACHE).is_some_and(|v| v == "off" || v == "0") {
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
    /// a valid artifact is there, compiled (and stored) otherwise.
    pub(crate) fn component(
        &self,
        engine: &Engine,
        wasm: &[u8],
        how: Load,
    ) -> wasmtime::Result<Component> {
        let CompileCache::Dir(dir) = self else {
            return Component::new(engine, wasm);
        };
        if let Err(why) = trusted_dir(dir) {
            eprintln!(
                "write-tool: not using the compile cache {}: {why}",
                dir.display()
            );
            return Component::new(engine, wasm);
        }
        let path = dir.join(file_name(engine, wasm));
        if let Some(component) = load(engine, &path, how) {
            return Ok(component);
        }
        let component = Component::new(engine, wasm)?;
        if let Ok(artifact) = component.serialize()
            && store(dir, &path, &artifact).is_ok()
        {
            prune(dir, &path);
        }
        Ok(component)
    }
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

/// Whether `name` is a temp file of [`store`]: `.<artifact>.<pid>.<n>.tmp`.
fn is_temp_name(name: &str) -> bool {
    name.strip_prefix('.')
        .and_then(|rest| rest.get(..NAME_LEN).zip(rest.get(NAME_LEN..)))
        .is_some_and(|(artifact, rest)| {
            is_artifact_name(artifact) && rest.starts_with('.') && rest.ends_with(".tmp")
        })
}

/// Remove all but the [`CompileCache::KEEP`] newest artifacts (`kept`,
/// just stored, among them) and stale temp files. Other files are never
/// touched, and any error leaves the file in place.
fn prune(dir: &Path, kept: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    let mut artifacts = Vec::new();
    for entry in entries.flatten() {
        let (name, path) = (entry.file_name(), entry.path());
        let Some(name) = name.to_str() else {
            continue;
        };
        // Not following links: a link is never an artifact of ours.
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if !meta.is_file() || path == kept {
            continue;
        }
        let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        if is_artifact_name(name) {
            artifacts.push((modified, path));
        } else if is_temp_name(name)
            && now
                .duration_since(modified)
                .is_ok_and(|age| age > STALE_TEMP)
        {
            let _ = fs::remove_file(&path);
        }
    }
    // Newest first; `kept` is the newest of all.
    artifacts.sort_by_key(|&(modified, _)| std::cmp::Reverse(modified));
    for (_, path) in artifacts.into_iter().skip(CompileCache::KEEP - 1) {
        let _ = fs::remove_file(path);
    }
}

/// `<component key>-<engine key>.cwasm`.
fn file_name(engine: &Engine, wasm: &[u8]) -> String {
    // The embedded component's key was taken at build time.
    let component = if std::ptr::eq(wasm, crate::COMPONENT) {
        crate::COMPONENT_KEY.to_owned()
    } else {
        key(wasm)
    };
    format!("{component}-{}.cwasm", key_of_engine(engine))
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

fn load(engine: &Engine, path: &Path, how: Load) -> Option<Component> {
    let file = open_nofollow(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || untrusted(&meta).is_some() {
        return None;
    }
    let len = usize::try_from(meta.len()).ok()?;
    let artifact_len = len.checked_sub(TRAILER_LEN)?;
    let verified = |trailer: &[u8], sum: u64| {
        let (magic, stored) = trailer.split_at(MAGIC.len());
        magic == MAGIC && stored == sum.to_le_bytes()
    };
    match how {
        Load::Map => {
            let mut trailer = [0u8; TRAILER_LEN];
            read_exact_at(&file, &mut trailer, artifact_len).ok()?;
            verified(&trailer, crc_of(&file, artifact_len).ok()?)
                .then(|| deserialize(engine, Artifact::File(path)))?
        }
        Load::Copy => {
            let mut bytes = Vec::with_capacity(len);
            io::Read::read_to_end(&mut &file, &mut bytes).ok()?;
            let (artifact, trailer) = bytes.split_at_checked(artifact_len)?;
            verified(trailer, integrity(artifact))
                .then(|| deserialize(engine, Artifact::Bytes(artifact)))?
        }
    }
}

/// The [`integrity`] checksum of the first `len` bytes of `file`, read
/// through a mapping of the file: reading them into a buffer made the
/// kernel copy the whole artifact on every start
/// (BENCHMARKS.md#start-up).
#[cfg(unix)]
#[allow(unsafe_code, reason = "mapping a file to checksum it")]
fn crc_of(file: &fs::File, len: usize) -> io::Result<u64> {
    use rustix::mm::{MapFlags, ProtFlags, mmap, munmap};
    if len == 0 {
        return Ok(integrity(&[]));
    }
    // SAFETY: a fresh read-only private mapping of `len` bytes of a file
    // this process opened (`len` is within its size, checked by the
    // caller), read only here and unmapped below; no Rust value aliases it.
    // Files in the cache are replaced by rename, never truncated in place,
    // so the mapped pages stay backed while they are read.
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

#[cfg(not(unix))]
fn crc_of(file: &fs::File, len: usize) -> io::Result<u64> {
    let mut bytes = vec![0u8; len];
    read_exact_at(file, &mut bytes, 0)?;
    Ok(integrity(&bytes))
}

#[cfg(unix)]
fn read_exact_at(file: &fs::File, buf: &mut [u8], at: usize) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, at as u64)
}

#[cfg(not(unix))]
fn read_exact_at(file: &fs::File, buf: &mut [u8], at: usize) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = file;
    file.seek(SeekFrom::Start(at as u64))?;
    file.read_exact(buf)
}

/// Why the cache directory, or a file in it, may not hold code this
/// process runs.
#[derive(Debug)]
enum Untrusted {
    /// Its metadata could not be read.
    Unreadable(io::Error),
    /// It is a link, a file or something else, not a directory.
    NotADirectory,
    /// Another user owns it.
    OtherOwner,
    /// Others can write it.
    WritableByOthers,
}

impl std::fmt::Display for Untrusted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Untrusted::Unreadable(err) => write!(f, "{err}"),
            Untrusted::NotADirectory => {
                f.write_str("it is not a directory (a link is not followed)")
            }
            Untrusted::OtherOwner => f.write_str("it is owned by another user"),
            Untrusted::WritableByOthers => f.write_str("others can write it"),
        }
    }
}

/// Whether `dir` may hold code this process runs. A directory that does
/// not exist yet is fine: it is created private.
fn trusted_dir(dir: &Path) -> Result<(), Untrusted> {
    let meta = match fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Untrusted::Unreadable(e)),
    };
    if !meta.is_dir() {
        return Err(Untrusted::NotADirectory);
    }
    match untrusted(&meta) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

/// Why a cache entry with metadata `meta` is not to be trusted, if it is
/// not: owned by another user, or writable by others.
#[cfg(unix)]
fn untrusted(meta: &fs::Metadata) -> Option<Untrusted> {
    use std::os::unix::fs::MetadataExt;
    if meta.uid() != rustix::process::geteuid().as_raw() {
        return Some(Untrusted::OtherOwner);
    }
    if meta.mode() & 0o022 != 0 {
        return Some(Untrusted::WritableByOthers);
    }
    None
}

#[cfg(not(unix))]
fn untrusted(_meta: &fs::Metadata) -> Option<Untrusted> {
    None
}

#[cfg(unix)]
fn open_nofollow(path: &Path) -> io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::File::options()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
}

#[cfg(not(unix))]
fn open_nofollow(path: &Path) -> io::Result<fs::File> {
    fs::File::open(path)
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
    // SAFETY: wasmtime requires that the artifact come from `serialize` of
    // a compatible engine. It was written by `store` below from
    // `Component::serialize`; the file name carries the engine's
    // compatibility hash and the trailer a checksum of exactly the
    // artifact's bytes, both checked just before this call, and wasmtime
    // validates its own header. Mapped, the file is opened again by path
    // (its ELF reader ignores the trailer): the directory is private to the
    // user, who is the trust boundary, and whatever is there then was put
    // there by `store`'s atomic rename.
    match artifact {
        Artifact::File(path) => unsafe { Component::deserialize_file(engine, path) }.ok(),
        Artifact::Bytes(bytes) => unsafe { Component::deserialize(engine, bytes) }.ok(),
    }
}

fn store(dir: &Path, path: &Path, artifact: &[u8]) -> io::Result<()> {
    if !fits_file_size_limit(artifact.len() + TRAILER_LEN) {
        return Err(io::Error::from(io::ErrorKind::FileTooLarge));
    }
    create_private_dir(dir)?;
    let unique = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let temp = dir.join(format!(
        ".{}.{}.{unique}.tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("artifact"),
        std::process::id()
    ));
    let result = (|| {
        let mut file = create_exclusive(&temp)?;
        file.write_all(artifact)?;
        file.write_all(MAGIC)?;
        file.write_all(&integrity(artifact).to_le_bytes())?;
        drop(file);
        fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// A new file at `path`, for this user alone: exclusive (a file or link
/// already there makes it fail) and following no link.
#[cfg(unix)]
fn create_exclusive(path: &Path) -> io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::File::options()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
}

#[cfg(not(unix))]
fn create_exclusive(path: &Path) -> io::Result<fs::File> {
    fs::File::options().write(true).create_new(true).open(path)
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)
}

/// Writing past `RLIMIT_FSIZE` raises `SIGXFSZ`, which kills the process:
/// never try.
fn fits_file_size_limit(len: usize) -> bool {
    file_size_limit().is_none_or(|max| u64::try_from(len).is_ok_and(|len| len <= max))
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

    /// A file or a link already at a temp file's name makes the store fail
    /// instead of writing through it.
    #[cfg(unix)]
    #[test]
    fn artifacts_are_created_exclusively_and_follow_no_link() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        fs::write(&victim, "untouched").expect("victim");
        let planted = dir.path().join("planted.tmp");
        std::os::unix::fs::symlink(&victim, &planted).expect("link");
        assert!(create_exclusive(&planted).is_err());
        assert_eq!(fs::read_to_string(&victim).expect("read"), "untouched");
        let fresh = dir.path().join("fresh.tmp");
        create_exclusive(&fresh).expect("a new file");
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&fresh).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

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
        let engine = Engine::default();
        assert_eq!(
            file_name(&engine, crate::COMPONENT),
            file_name(&engine, &copy)
        );
    }
}
