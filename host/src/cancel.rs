//! A call's cancel flag (`docs/contract.md#cancellation`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A call's cancel flag: set by whoever cancels, read at the commit point.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A flag that is clear.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Cancel the call: it stops at its commit point if it has not passed
    /// it yet.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}
