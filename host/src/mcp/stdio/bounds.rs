//! What a stdio client may leave waiting: answers it has not read, and
//! `tools/call` requests read and not yet done, each bounded so that a
//! client cannot fill the host's memory.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How many bytes of answers may wait for a client that does not read
/// them before no more requests are read: a client that only writes
/// stops being read, instead of filling the host's memory with answers.
pub(super) const MAX_BACKLOG_BYTES: usize = 8 << 20;

/// The bytes queued and not yet written, and a wake-up each time some are.
#[derive(Default)]
pub(super) struct Backlog {
    pub(super) bytes: AtomicUsize,
    pub(super) written: tokio::sync::Notify,
}

impl Backlog {
    /// Whether the backlog is over its bound. A wake-up (`written`) sent
    /// before a wait for it is kept for it (`notify_one`).
    pub(super) fn over(&self) -> bool {
        self.bytes.load(Ordering::SeqCst) > MAX_BACKLOG_BYTES
    }
}

/// How many `tools/call` requests may be read and not yet done, and how
/// many bytes of them: rmcp runs each request read in a task of its own,
/// which holds the request while it waits for a call slot. A call past
/// the bound is answered at once, not run, so that a client that sends
/// faster than calls finish cannot fill the host's memory with requests.
/// Reading never stops for it: the answer a call waits for (`roots/list`)
/// may sit behind the calls. A cancelled request counts until its task
/// ends.
pub(super) const MAX_PENDING_CALLS: usize = 64;
const MAX_PENDING_BYTES: usize = 64 << 20;

/// The `tools/call` requests read and not yet done.
#[derive(Default)]
pub(super) struct Pending {
    calls: AtomicUsize,
    bytes: AtomicUsize,
}

impl Pending {
    pub(super) fn full(&self) -> bool {
        self.calls.load(Ordering::SeqCst) >= MAX_PENDING_CALLS
            || self.bytes.load(Ordering::SeqCst) >= MAX_PENDING_BYTES
    }

    /// One more request of `bytes`, until the returned mark is dropped.
    pub(super) fn admit(self: &Arc<Pending>, bytes: usize) -> Admitted {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.bytes.fetch_add(bytes, Ordering::SeqCst);
        Admitted(Arc::new(Mark {
            pending: Arc::clone(self),
            bytes,
        }))
    }
}

/// A request's place among the pending ones, carried in its extensions:
/// rmcp hands them to the request's handler and drops them with it, once
/// the request is answered, cancelled and ended, or refused.
#[derive(Clone)]
pub(super) struct Admitted(#[allow(dead_code, reason = "held for its drop")] Arc<Mark>);

struct Mark {
    pending: Arc<Pending>,
    bytes: usize,
}

impl Drop for Mark {
    fn drop(&mut self) {
        self.pending.calls.fetch_sub(1, Ordering::SeqCst);
        self.pending.bytes.fetch_sub(self.bytes, Ordering::SeqCst);
    }
}
