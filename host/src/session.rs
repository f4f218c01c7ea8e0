//! A session (`docs/contract.md#session`): one `serve` stream, one MCP
//! connection, one WebSocket connection. Its calls carry its id
//! (`WRITE_TOOL_SESSION`), under which the component keeps, in the
//! journal, what the session has viewed and written; the session's end
//! removes that record.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::Root;

/// One session's id. [`WriteTool::call_in`](crate::WriteTool::call_in)
/// runs a call as part of it; [`Session::end`] removes what the component
/// kept for it.
#[derive(Debug)]
pub struct Session {
    id: String,
    /// The root whose journal the session's record is removed from when
    /// the session is dropped ([`Session::ends_in`]).
    root: Mutex<Option<Arc<Root>>>,
}

impl Session {
    /// A new session: its id is this process's (its pid and start, so that
    /// the record of a process that died is found and removed) and a count.
    pub fn new() -> Session {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let count = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let start = crate::journal::start_time(pid).unwrap_or(0);
        Session {
            id: format!("{pid:08x}{:08x}{count:016x}", start as u32),
            root: Mutex::new(None),
        }
    }

    /// A new session whose record is removed from `root`'s journal when it
    /// is dropped.
    pub fn ending_with(root: Arc<Root>) -> Session {
        let session = Session::new();
        session.ends_in(root);
        session
    }

    /// Remove the session's record from `root`'s journal when it is
    /// dropped (the root its calls last ran in, for a server whose roots
    /// are its client's).
    pub fn ends_in(&self, root: Arc<Root>) {
        let mut last = self
            .root
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if last.as_ref().is_none_or(|r| !Arc::ptr_eq(r, &root)) {
            // A root first used: the records of sessions whose process
            // died (killed, so never ended) go now.
            self.end(&root);
            if let Some(old) = last.replace(root) {
                self.end(&old);
            }
        }
    }

    /// The id the component gets.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Remove what the component kept for this session in `root`'s
    /// journal.
    pub fn end(&self, root: &Root) {
        if let Some(journal) = root.journal_dir() {
            journal.remove_session(&self.id);
        }
    }

    /// Whether the process that drew session `id` is gone.
    pub(crate) fn is_dead(id: &str) -> bool {
        let (Some(pid), Some(start)) = (id.get(..8), id.get(8..16)) else {
            return false;
        };
        let (Ok(pid), Ok(start)) = (u32::from_str_radix(pid, 16), u32::from_str_radix(start, 16))
        else {
            return false;
        };
        crate::journal::start_time(pid).map(|s| s as u32) != Some(start)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let root = self
            .root
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(root) = root {
            self.end(&root);
        }
    }
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}
