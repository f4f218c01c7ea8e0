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

use std::path::PathBuf;

use wasmtime::Engine;
use wasmtime::component::Component;
use write_tool_wire::settings;

mod artifact;
#[cfg(unix)]
mod unix;

pub(crate) use artifact::Load;
use artifact::{file_name, file_size_limit, key};

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
    pub const KEEP: usize = artifact::KEEP;

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

/// Whether this process runs under a file-size limit.
pub(crate) fn file_size_limited() -> bool {
    file_size_limit().is_some()
}

#[cfg(test)]
mod tests {
    use super::artifact::*;
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
