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

/// Caps the guest's linear memory and remembers whether the cap was hit, so
/// that the resulting trap can be reported as what it is.
#[derive(Debug)]
pub(crate) struct MemoryLimit {
    pub(crate) max_bytes: usize,
    pub(crate) hit: bool,
}

impl ResourceLimiter for MemoryLimit {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.max_bytes {
            self.hit = true;
            return Ok(false);
        }
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
