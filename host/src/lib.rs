//! A sandboxed wasmtime host for the Write tool component.
//!
//! ```no_run
//! use write_tool::{Options, Root, WriteTool};
//!
//! # fn main() -> wasmtime::Result<()> {
//! let tool = WriteTool::new(Options::default())?; // compiles the component once
//! let root = Root::open("/tmp/demo")?;             // the only ambient authority
//! let envelope = tool.call(&root, r#"{"path": "hello.txt", "content": "hi\n"}"#);
//! println!("{envelope}");
//! # Ok(())
//! # }
//! ```
//!
//! # How a call runs
//!
//! One [`wasmtime::Engine`] and one pre-instantiated component
//! ([`InstancePre`](wasmtime::component::InstancePre)) serve every call; each
//! call gets a fresh `Store` and instance, so nothing a call does survives
//! into the next. The guest sees one preopened directory, the root, as `.`,
//! and nothing else: no environment, no arguments, no stdin or stdout, no
//! network. Its stderr goes into a bounded in-memory pipe.
//!
//! # Limits
//!
//! [`Options`] bounds each call: the content size (refused by the guest with
//! `INVALID_PARAM`), the guest's linear memory, and the wall time (epoch
//! interruption). A call stopped by either of the last two is answered with
//! an `EXECUTION_ERROR` envelope; the host keeps serving.
//!
//! # Permission bits
//!
//! WASI 0.2 cannot change file modes, so a file the guest replaces would lose
//! its mode (an executable script would stop being executable). The host
//! reads the mode of the target before the call and puts it back on the new
//! file afterwards, through the same cap-std root. Hosts that offer only WASI
//! run the component unchanged, without this one guarantee.
//!
//! The host does not link the tool's logic: it treats the envelope as the
//! guest's output and only reads its `status` (and, for the permission bits,
//! its `data` and `context`).

#![deny(unsafe_code)]

#[allow(
    missing_debug_implementations,
    missing_docs,
    unused_qualifications,
    clippy::all,
    reason = "generated bindings"
)]
mod bindings;
mod cache;
mod calls;
mod envelope;
pub mod mcp;
mod sandbox;
mod state;
mod sweeps;
pub mod ws;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use wasmtime::component::{Linker, ResourceTable};
use wasmtime::{Engine, Store, Trap};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;

pub use bindings::exports::write_tool::tool::tool::{
    AllowedRoot, Config as GuestConfig, Context, Data, Durability, Envelope, ErrorCode, ErrorInfo,
    Operation, Stats, Status as TypedStatus,
};
pub use cache::CompileCache;
pub use envelope::{Status, invalid_request, status_of};
pub use sandbox::Root;

use bindings::WriteToolPre;
use sandbox::ModeSnapshot;
use state::{HostState, MemoryLimit};
use sweeps::Sweeps;

/// The guest component, built for `wasm32-wasip2` by `build.rs`.
pub const COMPONENT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/write_tool_guest.wasm"));

/// How often the epoch advances; the time bound is counted in these ticks.
const EPOCH_TICK: Duration = Duration::from_millis(10);

/// The smallest [`Options::memory_limit_bytes`]: the component's linear
/// memory starts at 8 MiB (`guest/build.rs`), so that calls of a few MiB
/// never grow it. Below that it cannot be instantiated.
pub const MIN_MEMORY_LIMIT_BYTES: usize = 8 << 20;

/// Limits and switches for every call a [`WriteTool`] runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Largest `content` accepted, in bytes (default 16 MiB). Larger content
    /// is refused with `INVALID_PARAM` naming the limit.
    pub max_content_bytes: u64,
    /// Accept empty content (default false: `INVALID_PARAM`).
    pub allow_empty: bool,
    /// Cap on the guest's linear memory, in bytes (default 1 GiB). It must
    /// hold the arguments, the old file, the new content and the diff, and
    /// be at least [`MIN_MEMORY_LIMIT_BYTES`].
    pub memory_limit_bytes: usize,
    /// Wall-time bound on one call (default 30 s).
    pub timeout: Duration,
    /// Most time the diff algorithm may take (default 1 s); past it the
    /// diff is coarser but still correct. That is the bound for texts of
    /// 64 MiB (old and new content together); smaller ones get a share in
    /// proportion, at least 1/32 of it: 16 ms per MiB and at least 31 ms
    /// with the default (`write_tool_core::diff::DiffLimits::time_for`).
    pub diff_timeout: Duration,
    /// Bytes of guest stderr kept per call (default 64 KiB).
    pub stderr_capacity: usize,
    /// Refuse `.git` in any letter case, also through links (default true).
    pub default_protect: bool,
    /// More protected paths, as globs (see the WIT `config` record).
    pub protect: Vec<String>,
    /// Preopen the root read-only: every write is refused with
    /// `PERMISSION_DENIED` and nothing changes (default false).
    pub read_only: bool,
    /// Which syncs a write makes (default [`Durability::Full`]: file and
    /// directory).
    pub durability: Durability,
    /// Where compiled code is kept between processes (default: what the
    /// environment says, see [`CompileCache::from_env`]).
    pub cache: CompileCache,
    /// Calls this tool runs at the same time (default 100). Each has a
    /// memory slot reserved up front; a call beyond them fails with
    /// `EXECUTION_ERROR` rather than wait. A process that makes one call at
    /// a time (the CLI) needs only a couple.
    pub max_concurrent_calls: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_content_bytes: 16 * 1024 * 1024,
            allow_empty: false,
            memory_limit_bytes: 1 << 30,
            timeout: Duration::from_secs(30),
            diff_timeout: Duration::from_secs(1),
            stderr_capacity: 64 * 1024,
            default_protect: true,
            protect: Vec::new(),
            read_only: false,
            durability: Durability::Full,
            cache: CompileCache::from_env(),
            max_concurrent_calls: 100,
        }
    }
}

/// The compiled component and the engine that runs it. Cheap to share
/// between threads; each call is independent.
pub struct WriteTool {
    pre: WriteToolPre<HostState>,
    options: Options,
    ticker: Arc<AtomicBool>,
    sweeps: Sweeps,
}

impl std::fmt::Debug for WriteTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteTool")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Drop for WriteTool {
    fn drop(&mut self) {
        self.ticker.store(true, Ordering::Relaxed);
    }
}

impl WriteTool {
    /// Compile the embedded component (or load it from the compile cache
    /// that `options.cache` names).
    pub fn new(options: Options) -> wasmtime::Result<WriteTool> {
        Self::from_component_bytes(COMPONENT, options)
    }

    /// Compile (or load from the cache) a component given as bytes, for
    /// example a `.wasm` built separately.
    pub fn from_component_bytes(bytes: &[u8], options: Options) -> wasmtime::Result<WriteTool> {
        let engine = engine(&options)?;
        let component = options.cache.component(&engine, bytes).map_err(|err| {
            if options.memory_limit_bytes < MIN_MEMORY_LIMIT_BYTES {
                err.context(format!(
                    "the memory limit of {} bytes is below the component's initial memory \
                     (at least {MIN_MEMORY_LIMIT_BYTES} bytes)",
                    options.memory_limit_bytes
                ))
            } else {
                err
            }
        })?;
        let mut linker = Linker::<HostState>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        let pre = WriteToolPre::new(linker.instantiate_pre(&component)?)?;
        let ticker = start_ticker(&engine);
        let tool = WriteTool {
            pre,
            options,
            ticker,
            sweeps: Sweeps::default(),
        };
        tool.check_config()?;
        Ok(tool)
    }

    /// The options every call runs with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Run a tool call given as raw JSON (the arguments object, or
    /// `{"name": "Write", "arguments": …}`) and return the envelope JSON.
    ///
    /// Always returns an envelope: failures of the guest itself (time bound,
    /// memory cap, trap) become `EXECUTION_ERROR` envelopes.
    pub fn call(&self, root: &Root, arguments: &str) -> String {
        let start = Instant::now();
        let path = envelope::path_argument(arguments);
        let snapshot = path.as_deref().and_then(|p| ModeSnapshot::take(root, p));
        let sweep = path
            .as_deref()
            .is_none_or(|p| self.sweeps.needed(root.path(), p));
        match self.invoke(root, sweep, |guest, store| {
            guest.call_call(store, arguments)
        }) {
            Ok(json) => {
                if snapshot.is_some() || sweep {
                    self.after_write(root, path.as_deref(), snapshot, sweep, &json);
                }
                json
            }
            Err(failure) => {
                if let Some(path) = &path {
                    self.sweeps.forget(root.path(), path);
                }
                envelope::error_json(
                    "EXECUTION_ERROR",
                    &failure.message(&self.options),
                    elapsed_ms(start),
                    envelope::echo_arguments(arguments),
                )
            }
        }
    }

    /// Write `content` to `path` through the typed interface.
    pub fn write(&self, root: &Root, path: &str, content: &str, dry_run: bool) -> Envelope {
        let start = Instant::now();
        let snapshot = ModeSnapshot::take(root, path);
        let sweep = self.sweeps.needed(root.path(), path);
        match self.invoke(root, sweep, |guest, store| {
            guest.call_write(store, path, content, dry_run)
        }) {
            Ok(envelope) => {
                if let (Some(snapshot), Some(resolved)) = (snapshot, replaced_path(&envelope)) {
                    let _ = snapshot.restore(root, resolved);
                }
                if sweep
                    && envelope.data.as_ref().is_some_and(|data| {
                        wrote(
                            data.applied,
                            matches!(data.operation, Operation::Create),
                            envelope.stats.bytes_written,
                        )
                    })
                {
                    self.sweeps.done(root.path(), path);
                }
                envelope
            }
            Err(failure) => {
                self.sweeps.forget(root.path(), path);
                envelope::error_typed(
                    &failure.message(&self.options),
                    elapsed_ms(start),
                    envelope::echo_typed(path, content, dry_run),
                )
            }
        }
    }

    /// After a call that answered: put the file's mode back if it was
    /// replaced, and remember that its directory was swept if it wrote.
    fn after_write(
        &self,
        root: &Root,
        path: Option<&str>,
        snapshot: Option<ModeSnapshot>,
        sweep: bool,
        json: &str,
    ) {
        let Ok(outcome) = serde_json::from_str::<Outcome<'_>>(json) else {
            return;
        };
        let (applied, operation) = outcome
            .data
            .map_or((false, None), |data| (data.applied, data.operation));
        let bytes_written = outcome.stats.bytes_written;
        if let (Some(snapshot), Some(resolved)) = (snapshot, outcome.context.path_resolved)
            && was_replaced(
                applied,
                operation.as_deref() == Some("update"),
                bytes_written,
            )
        {
            let _ = snapshot.restore(root, &resolved);
        }
        if let (true, Some(path)) = (sweep, path)
            && wrote(
                applied,
                operation.as_deref() == Some("create"),
                bytes_written,
            )
        {
            self.sweeps.done(root.path(), path);
        }
    }

    /// Let the guest validate the options once, so that a bad `protect`
    /// pattern is a construction error rather than a failure of every call.
    /// Only patterns can be invalid: without any, there is nothing to check
    /// (and a one-shot process saves an instantiation).
    fn check_config(&self) -> wasmtime::Result<()> {
        if self.options.protect.is_empty() {
            return Ok(());
        }
        let mut store = self.store(wasmtime_wasi::WasiCtxBuilder::new().build());
        let instance = self.pre.instantiate(&mut store)?;
        instance
            .write_tool_tool_tool()
            .call_configure(&mut store, &self.guest_config(None, true))?
            .map_err(wasmtime::Error::msg)
    }

    /// The tool definition JSON (name, description, parameter schema).
    pub fn definition(&self) -> wasmtime::Result<String> {
        // The definition touches no files; an empty temp root is not needed,
        // but the WASI context wants a preopen, so give it none at all.
        let mut store = self.store(wasmtime_wasi::WasiCtxBuilder::new().build());
        let instance = self.pre.instantiate(&mut store)?;
        instance.write_tool_tool_tool().call_definition(&mut store)
    }

    fn store(&self, wasi: wasmtime_wasi::WasiCtx) -> Store<HostState> {
        let mut store = Store::new(
            self.pre.engine(),
            HostState {
                wasi,
                table: ResourceTable::new(),
                limits: MemoryLimit {
                    max_bytes: self.options.memory_limit_bytes,
                    hit: false,
                },
            },
        );
        store.limiter(|state| &mut state.limits);
        let ticks = self
            .options
            .timeout
            .as_nanos()
            .div_ceil(EPOCH_TICK.as_nanos());
        store.set_epoch_deadline(u64::try_from(ticks).unwrap_or(u64::MAX).max(1));
        store.epoch_deadline_trap();
        store
    }

    /// Run `f` in a fresh instance configured for `root`; `sweep` is the
    /// guest's `sweep-temps` (see [`Sweeps`]).
    fn invoke<R>(
        &self,
        root: &Root,
        sweep: bool,
        f: impl FnOnce(
            &bindings::exports::write_tool::tool::tool::Guest,
            &mut Store<HostState>,
        ) -> wasmtime::Result<R>,
    ) -> Result<R, Failure> {
        let stderr = MemoryOutputPipe::new(self.options.stderr_capacity);
        let wasi = root
            .wasi_ctx(stderr, self.options.read_only)
            .map_err(Failure::Host)?;
        let mut store = self.store(wasi);
        let result = (|| {
            let instance = self.pre.instantiate(&mut store)?;
            let guest = instance.write_tool_tool_tool();
            guest
                .call_configure(&mut store, &self.guest_config(root, sweep))?
                .map_err(wasmtime::Error::msg)?;
            f(guest, &mut store)
        })();
        result.map_err(|err| {
            if store.data().limits.hit {
                Failure::Memory
            } else if matches!(err.downcast_ref::<Trap>(), Some(Trap::Interrupt)) {
                Failure::Timeout
            } else {
                Failure::Host(err)
            }
        })
    }

    fn guest_config<'a>(&self, root: impl Into<Option<&'a Root>>, sweep: bool) -> GuestConfig {
        let (root_names, other_roots) = root.into().map(Root::guest_roots).unwrap_or_default();
        GuestConfig {
            max_content_bytes: self.options.max_content_bytes,
            allow_empty: self.options.allow_empty,
            diff_timeout_ms: u64::try_from(self.options.diff_timeout.as_millis())
                .unwrap_or(u64::MAX),
            default_protect: self.options.default_protect,
            protect: self.options.protect.clone(),
            read_only: self.options.read_only,
            durability: self.options.durability,
            sweep_temps: sweep,
            root_names,
            other_roots,
        }
    }
}

/// Why the guest did not answer.
enum Failure {
    Timeout,
    Memory,
    Host(wasmtime::Error),
}

impl Failure {
    fn message(&self, options: &Options) -> String {
        match self {
            Failure::Timeout => format!(
                "Execution stopped: the call exceeded its time limit of {} ms. Nothing was written.",
                options.timeout.as_millis()
            ),
            Failure::Memory => format!(
                "Execution stopped: the call exceeded its memory limit of {} bytes. Nothing was written.",
                options.memory_limit_bytes
            ),
            Failure::Host(err) => format!("Execution failed in the tool component: {err}"),
        }
    }
}

fn engine(options: &Options) -> wasmtime::Result<Engine> {
    let mut config = wasmtime::Config::new();
    config.epoch_interruption(true);
    // Copy-on-write memory images live in a memfd, which counts against
    // RLIMIT_FSIZE: under a file-size limit, initialise memory by copying.
    config.memory_init_cow(!cache::file_size_limited());
    // A fresh instance per call: the pooling allocator reuses memory slots
    // instead of mapping new ones, and keeps the first pages of each slot
    // resident (zeroed, not unmapped), so a call does not fault in the
    // memory the previous one already touched.
    let mut pool = wasmtime::PoolingAllocationConfig::new();
    let slots = options.max_concurrent_calls.max(1);
    pool.total_component_instances(slots)
        .total_core_instances(slots.saturating_mul(4))
        .total_memories(slots)
        .total_tables(slots.saturating_mul(4))
        // Async stacks are never used (the host is synchronous), but the
        // pool would otherwise set up a thousand of them, guard pages and
        // all, when the engine starts.
        .total_stacks(1)
        .max_memory_size(options.memory_limit_bytes)
        .linear_memory_keep_resident(16 << 20)
        .table_keep_resident(64 << 10)
        // Where the kernel has PAGEMAP_SCAN (Linux 6.7+), reset only the
        // pages the call wrote instead of zeroing the whole resident part:
        // a 1 KiB dry run spent an eighth of its time in that `memset`.
        .pagemap_scan(wasmtime::Enabled::Auto);
    config.allocation_strategy(wasmtime::InstanceAllocationStrategy::Pooling(pool));
    Engine::new(&config)
}

/// Advance the engine's epoch every [`EPOCH_TICK`] until the tool is
/// dropped. The thread holds only a weak reference to the engine.
fn start_ticker(engine: &Engine) -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let weak = engine.weak();
    let flag = Arc::clone(&stop);
    let spawned = thread::Builder::new()
        .name("write-tool-epoch".into())
        .spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                thread::sleep(EPOCH_TICK);
                match weak.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => break,
                }
            }
        });
    if spawned.is_err() {
        // Without a ticker the deadline never arrives; calls still run.
        stop.store(true, Ordering::Relaxed);
    }
    stop
}

fn elapsed_ms(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The few envelope fields [`WriteTool::after_write`] reads. Everything
/// else, the preview and the text included, is skipped unparsed.
#[derive(serde::Deserialize)]
struct Outcome<'a> {
    #[serde(default, borrow)]
    data: Option<OutcomeData<'a>>,
    #[serde(default)]
    stats: OutcomeStats,
    #[serde(default, borrow)]
    context: OutcomeContext<'a>,
}

#[derive(serde::Deserialize)]
struct OutcomeData<'a> {
    #[serde(default)]
    applied: bool,
    #[serde(default, borrow)]
    operation: Option<std::borrow::Cow<'a, str>>,
}

#[derive(Default, serde::Deserialize)]
struct OutcomeStats {
    #[serde(default)]
    bytes_written: Option<u64>,
}

#[derive(Default, serde::Deserialize)]
struct OutcomeContext<'a> {
    #[serde(default, borrow)]
    path_resolved: Option<std::borrow::Cow<'a, str>>,
}

/// The root-relative path of a file the envelope says was replaced.
fn replaced_path(envelope: &Envelope) -> Option<&str> {
    let data = envelope.data.as_ref()?;
    let update = matches!(data.operation, Operation::Update);
    was_replaced(data.applied, update, envelope.stats.bytes_written)
        .then_some(envelope.context.path_resolved.as_deref())
        .flatten()
}

/// An existing file was replaced by a new one (which lost its mode): the
/// write was applied, to an existing file, and wrote bytes (identical
/// content writes none and keeps the old file).
fn was_replaced(applied: bool, update: bool, bytes_written: Option<u64>) -> bool {
    applied && update && bytes_written.unwrap_or(0) > 0
}

/// Whether the call wrote a file (and so swept its directory, if asked).
/// An update to empty content counts as not written: one more sweep.
fn wrote(applied: bool, create: bool, bytes_written: Option<u64>) -> bool {
    applied && (create || bytes_written.unwrap_or(0) > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::component::Component;

    /// The world imports standard WASI 0.2 and nothing else, and exports
    /// the tool inside its interface (never `write` at world level).
    #[test]
    fn the_component_imports_only_wasi_0_2() {
        let engine = engine(&Options::default()).unwrap();
        let component = Component::new(&engine, COMPONENT).unwrap();
        let ty = component.component_type();
        let imports: Vec<&str> = ty.imports(&engine).map(|(name, _)| name).collect();
        assert!(!imports.is_empty());
        for name in &imports {
            assert!(
                name.starts_with("wasi:") && name.contains("@0.2."),
                "unexpected import {name}"
            );
        }
        assert!(imports.iter().any(|n| n.starts_with("wasi:filesystem/")));
        assert!(
            !imports
                .iter()
                .any(|n| n.starts_with("wasi:sockets/") || n.starts_with("wasi:http/"))
        );
        let exports: Vec<&str> = ty.exports(&engine).map(|(name, _)| name).collect();
        assert_eq!(exports, ["write-tool:tool/tool@0.1.0"]);
    }
}
