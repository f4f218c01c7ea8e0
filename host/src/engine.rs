//! The engine every call runs on, and the clock that bounds each call.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use wasmtime::Engine;

use crate::Options;

/// How often the epoch advances; the time bound is counted in these ticks.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// The engine for `options`: epoch interruption (the time bound), and a
/// pooling allocator sized for `options.max_concurrent_calls` instances
/// unless `options.pool_instances` is off.
pub(crate) fn engine(options: &Options) -> wasmtime::Result<Engine> {
    let mut config = wasmtime::Config::new();
    config.epoch_interruption(true);
    // Copy-on-write memory images live in a memfd, which counts against
    // RLIMIT_FSIZE: under a file-size limit, initialise memory by copying.
    config.memory_init_cow(!crate::cache::file_size_limited());
    // Every call gets a fresh instance (nothing one call does reaches the
    // next). The pool reuses memory slots instead of mapping new ones, and
    // keeps the first pages of each slot resident, so a call does not fault
    // in again the memory the previous one touched (BENCHMARKS.md, item 4).
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
        // pages the call wrote instead of zeroing the whole resident part.
        .pagemap_scan(wasmtime::Enabled::Auto);
    if options.pool_instances {
        config.allocation_strategy(wasmtime::InstanceAllocationStrategy::Pooling(pool));
    }
    Engine::new(&config)
}

/// Advances the engine's epoch every [`EPOCH_TICK`] until dropped. The
/// thread holds only a weak reference to the engine.
#[derive(Debug)]
pub(crate) struct Ticker {
    stop: Arc<AtomicBool>,
}

impl Ticker {
    pub(crate) fn start(engine: &Engine) -> Ticker {
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
        Ticker { stop }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The epoch deadline, in ticks, for a call bounded by `timeout`.
pub(crate) fn deadline_ticks(timeout: Duration) -> u64 {
    let ticks = timeout.as_nanos().div_ceil(EPOCH_TICK.as_nanos());
    u64::try_from(ticks).unwrap_or(u64::MAX).max(1)
}
