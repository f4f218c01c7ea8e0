//! The engine every call runs on, and the watchdog that bounds each call's
//! time.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use wasmtime::{Engine, EngineWeak, Store, UpdateDeadline};

use crate::Options;

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
    // in again the memory the previous one touched
    // (BENCHMARKS.md#fresh-memory-per-call).
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

/// Stops calls that run past their time bound, without waking while they
/// run within it.
///
/// Each call's store has an epoch deadline one tick away and a callback
/// that compares the clock with the call's own deadline. One thread sleeps
/// until the earliest deadline of the calls in flight and then advances the
/// epoch once: the call that is due traps, any other call's callback finds
/// its own deadline ahead and goes on. A ticker advancing the epoch every
/// few milliseconds would wake a hundred times a second, idle or not, and
/// compete for a CPU with the calls it watches.
#[derive(Debug)]
pub(crate) struct Watchdog {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// The calls in flight that are not yet due: (id, deadline).
    deadlines: Vec<(u64, Instant)>,
    next_id: u64,
    /// When the thread next looks, if it sleeps.
    wakes_at: Option<Instant>,
    stopped: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent whatever panicked while holding it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Watchdog {
    /// The watchdog of `engine`'s calls, each bounded by `timeout`.
    pub(crate) fn start(engine: &Engine, timeout: Duration) -> Watchdog {
        let shared = Arc::new(Shared::default());
        let weak = engine.weak();
        let watched = Arc::clone(&shared);
        let spawned = thread::Builder::new()
            .name("write-tool-deadline".into())
            .spawn(move || watch(&watched, &weak, timeout));
        if spawned.is_err() {
            // Without the thread no deadline arrives; calls still run.
            shared.lock().stopped = true;
        }
        Watchdog { shared }
    }

    /// Sets `store` up to trap once `timeout` has passed from now; the call
    /// is watched until the returned guard is dropped.
    pub(crate) fn arm<T>(&self, store: &mut Store<T>, timeout: Duration) -> Option<Armed> {
        store.set_epoch_deadline(1);
        let Some(deadline) = Instant::now().checked_add(timeout) else {
            store.epoch_deadline_callback(|_| Ok(UpdateDeadline::Continue(1)));
            return None;
        };
        store.epoch_deadline_callback(move |_| {
            if Instant::now() >= deadline {
                Ok(UpdateDeadline::Interrupt)
            } else {
                Ok(UpdateDeadline::Continue(1))
            }
        });
        let mut state = self.shared.lock();
        let id = state.next_id;
        state.next_id += 1;
        state.deadlines.push((id, deadline));
        // Deadlines are `timeout` after their call starts and the thread
        // never sleeps longer than `timeout`, so this only wakes it for a
        // deadline sooner than it planned to look (a clock step).
        if state.wakes_at.is_some_and(|at| deadline < at) {
            self.shared.changed.notify_one();
        }
        Some(Armed {
            shared: Arc::clone(&self.shared),
            id,
        })
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.shared.lock().stopped = true;
        self.shared.changed.notify_one();
    }
}

/// The watchdog thread: advance the epoch whenever a deadline passes.
fn watch(shared: &Shared, engine: &EngineWeak, timeout: Duration) {
    let mut state = shared.lock();
    while !state.stopped {
        let now = Instant::now();
        let watched = state.deadlines.len();
        state.deadlines.retain(|&(_, deadline)| deadline > now);
        if state.deadlines.len() < watched {
            match engine.upgrade() {
                Some(engine) => engine.increment_epoch(),
                None => break,
            }
        }
        // Until the next deadline; with none, for `timeout`, which no
        // deadline armed from now on can come before.
        let sleep = state
            .deadlines
            .iter()
            .map(|&(_, deadline)| deadline - now)
            .min()
            .unwrap_or(timeout);
        state.wakes_at = now.checked_add(sleep);
        state = match shared.changed.wait_timeout(state, sleep) {
            Ok((state, _)) => state,
            Err(poisoned) => poisoned.into_inner().0,
        };
        state.wakes_at = None;
    }
}

/// A call the [`Watchdog`] watches; dropping it ends the watch.
#[derive(Debug)]
pub(crate) struct Armed {
    shared: Arc<Shared>,
    id: u64,
}

impl Drop for Armed {
    fn drop(&mut self) {
        // No wake-up: if this was the deadline the thread sleeps towards,
        // it wakes then, finds nothing due and sleeps on.
        self.shared
            .lock()
            .deadlines
            .retain(|&(id, _)| id != self.id);
    }
}
