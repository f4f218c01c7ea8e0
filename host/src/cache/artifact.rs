//! The artifacts a cache directory holds: their names, their trailer,
//! their keys.

use std::hash::{Hash, Hasher};

use sha2::{Digest, Sha256};
use wasmtime::Engine;

/// How many artifacts a cache directory keeps: room for several versions
/// of the tool side by side, a few tens of MiB at most.
pub(super) const KEEP: usize = 8;

/// Marks a cache file: it follows the artifact.
pub(super) const MAGIC: &[u8; 8] = b"WTCACHE3";
/// After the artifact: the magic, then the artifact's checksum (CRC-32, as
/// a little-endian u64). At the end, not the start, so that the artifact
/// starts the file and wasmtime can map the file instead of copying it.
pub(super) const TRAILER_LEN: usize = 16;

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
pub(super) fn key(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes)[..16])
}

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Feeds what a `Hash` implementation writes into SHA-256: the engine's
/// compatibility hash is only available as `impl Hash`.
pub(super) struct Sha256Hasher(Sha256);

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
pub(super) fn key_of_engine(engine: &Engine) -> String {
    let mut hasher = Sha256Hasher(Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hex(&hasher.0.finalize()[..16])
}

/// Integrity check of a stored artifact (several MiB, read on every start):
/// CRC-32, which catches torn and corrupted files at memory speed. It is not
/// a defence against someone who can write the cache; the directory's
/// permissions are.
pub(super) fn integrity(bytes: &[u8]) -> u64 {
    u64::from(crc32fast::hash(bytes))
}

/// How many hex digits each half of an artifact's name has (see
/// [`file_name`]); builds before SHA-256 keys used 16.
pub(super) const KEY_DIGITS: usize = 32;
pub(super) const OLD_KEY_DIGITS: usize = 16;

/// The length of an artifact's name (see [`file_name`]).
pub(super) const NAME_LEN: usize = KEY_DIGITS + 1 + KEY_DIGITS + ".cwasm".len();

/// Whether `name` is an artifact's, as [`file_name`] makes them (or as
/// builds before it did, so that they are pruned too).
pub(super) fn is_artifact_name(name: &str) -> bool {
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
pub(super) fn is_temp_name(name: &str) -> bool {
    name.strip_prefix('.')
        .and_then(|rest| rest.get(..NAME_LEN).zip(rest.get(NAME_LEN..)))
        .is_some_and(|(artifact, rest)| {
            is_artifact_name(artifact) && rest.starts_with('.') && rest.ends_with(".tmp")
        })
}

/// `<component key>-<engine key>.cwasm`.
pub(super) fn file_name(engine: &Engine, component: String) -> String {
    format!("{component}-{}.cwasm", key_of_engine(engine))
}

#[cfg(unix)]
pub(super) fn file_size_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Fsize).current
}

#[cfg(not(unix))]
pub(super) fn file_size_limit() -> Option<u64> {
    None
}
