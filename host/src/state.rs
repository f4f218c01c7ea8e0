//! What each call's `Store` holds: the WASI context, the resource table,
//! the memory limiter and the watch on the call's time bound.

use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::cancel::Cancel;
use crate::engine::Armed;

/// Per-call store data.
pub(crate) struct HostState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limits: MemoryLimit,
    /// Watches the call's time bound while the store lives.
    pub(crate) deadline: Option<Armed>,
    /// Set when the call's client cancels it (`commit_gate`).
    pub(crate) cancel: Option<Cancel>,
    /// Whether the guest passed its commit point (`commit_gate`): a
    /// failure after it is reported as a write done.
    pub(crate) committed: bool,
    /// The journal directory's device and inode, when the call has one:
    /// how the commit gate tells the journal's operations from a change.
    pub(crate) journal_id: Option<(u64, u64)>,
    /// Whether the guest holds the journal's lock (`commit_gate`): a guest
    /// stopped while it does leaves it, and the host releases it.
    pub(crate) holds_lock: bool,
    /// The files (device, inode) the guest linked into the journal in this
    /// call: the journal's name of a replaced file is not one of the names
    /// the mode rule asks about (`crate::modes`).
    pub(crate) journal_links: Vec<(u64, u64)>,
}

impl HostState {
    /// Whether the call was cancelled: read at its commit point.
    pub(crate) fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(Cancel::is_cancelled)
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// Caps the guest's linear memory — each call's, and all calls' in flight
/// together — and remembers which cap was hit, so that the resulting trap
/// can be reported as what it is.
///
/// The process-wide cap is the same number as a call's: calls in flight
/// share it, so the memory all guests hold never passes it however many
/// run at once (a server's memory is the cap and what the host itself
/// holds of the requests, BENCHMARKS.md#memory). A call refused because
/// the others hold the rest says so.
#[derive(Debug)]
pub(crate) struct MemoryLimit {
    pub(crate) max_bytes: usize,
    pub(crate) hit: bool,
    /// The cap all calls in flight share was what stopped it.
    pub(crate) hit_shared: bool,
    /// The bytes of guest memory every call in flight holds.
    pub(crate) shared: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// What this call holds of it.
    pub(crate) granted: usize,
}

impl MemoryLimit {
    /// A call's limit, drawing on `shared`.
    pub(crate) fn new(
        max_bytes: usize,
        shared: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    ) -> MemoryLimit {
        MemoryLimit {
            max_bytes,
            hit: false,
            hit_shared: false,
            shared,
            granted: 0,
        }
    }
}

impl Drop for MemoryLimit {
    fn drop(&mut self) {
        self.shared
            .fetch_sub(self.granted, std::sync::atomic::Ordering::SeqCst);
    }
}

impl ResourceLimiter for MemoryLimit {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.max_bytes {
            self.hit = true;
            return Ok(false);
        }
        use std::sync::atomic::Ordering;
        let more = desired.saturating_sub(current);
        let taken = self
            .shared
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                used.checked_add(more)
                    .filter(|total| *total <= self.max_bytes)
            });
        if taken.is_err() {
            self.hit = true;
            self.hit_shared = true;
            return Ok(false);
        }
        self.granted += more;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // Tables hold function references; the guest needs a handful.
        Ok(desired <= 100_000)
    }
}
