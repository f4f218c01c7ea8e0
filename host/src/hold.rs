//! The hold a quiesce puts on every call of the process
//! (`docs/contract.md#quiesce`): calls that come are refused, the quiesce
//! waits for those running to end, and a resume lets calls run again and
//! undoes a quiesce still waiting or sealing.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;

/// The answer to a call that comes while the calls are held.
pub(crate) const QUIESCED_MESSAGE: &str = "The server is quiesced for a snapshot; nothing was \
     written. It takes calls again once resumed (POST /resume) or restarted.";

/// The process's hold: every server's calls, whatever surface.
pub(crate) static HOLD: Hold = Hold::new();

/// Whether calls are held, how many run, and how often calls were let run
/// again. One per process ([`HOLD`]); the tests make their own.
pub(crate) struct Hold {
    quiesced: AtomicBool,
    /// Held while a quiesce sets the hold and notes the resumes so far,
    /// and while a resume lifts it: a resume between the two would leave
    /// the calls held by a quiesce it undid.
    turn: Mutex<()>,
    running: AtomicUsize,
    /// Told each time a call ends, and on each resume.
    moved: Notify,
    resumed: AtomicUsize,
}

/// One call counted as running until it is dropped.
pub(crate) struct Running<'a>(&'a Hold);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
        self.0.moved.notify_waiters();
    }
}

/// How a quiesce's wait ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// No call runs; calls that come are refused until a resume, which
    /// the ticket tells.
    Settled(Ticket),
    /// Calls still ran after the bound; they stay held.
    StillRunning,
    /// A resume came while it waited: calls run again.
    Resumed,
}

/// A settled quiesce, to ask later whether a resume undid it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Ticket(usize);

impl Hold {
    pub(crate) const fn new() -> Hold {
        Hold {
            quiesced: AtomicBool::new(false),
            turn: Mutex::new(()),
            running: AtomicUsize::new(0),
            moved: Notify::const_new(),
            resumed: AtomicUsize::new(0),
        }
    }

    /// Count a call, unless the calls are held. Counted first, then the
    /// hold looked at: a quiesce that sets the hold and then finds no call
    /// running cannot miss one that started meanwhile (both sequentially
    /// consistent).
    pub(crate) fn start(&self) -> Option<Running<'_>> {
        self.running.fetch_add(1, Ordering::SeqCst);
        let running = Running(self);
        (!self.quiesced.load(Ordering::SeqCst)).then_some(running)
    }

    /// Hold every call: calls that come are refused, and this returns once
    /// the calls running have ended, after `bound` with some still running,
    /// or as soon as a resume comes.
    pub(crate) async fn quiesce(&self, bound: Duration) -> Wait {
        let at = {
            let _turn = self.turn.lock().unwrap_or_else(PoisonError::into_inner);
            self.quiesced.store(true, Ordering::SeqCst);
            self.resumed.load(Ordering::SeqCst)
        };
        let settled = async {
            loop {
                // Made before the looks, so that an end or a resume in
                // between still wakes it.
                let moved = self.moved.notified();
                if self.resumed.load(Ordering::SeqCst) != at {
                    return Wait::Resumed;
                }
                if self.running.load(Ordering::SeqCst) == 0 {
                    return Wait::Settled(Ticket(at));
                }
                moved.await;
            }
        };
        tokio::time::timeout(bound, settled)
            .await
            .unwrap_or(Wait::StillRunning)
    }

    /// Let calls run again, undoing any quiesce that waits or seals.
    pub(crate) fn resume(&self) {
        {
            let _turn = self.turn.lock().unwrap_or_else(PoisonError::into_inner);
            self.resumed.fetch_add(1, Ordering::SeqCst);
            self.quiesced.store(false, Ordering::SeqCst);
        }
        self.moved.notify_waiters();
    }

    /// Whether a resume came since the quiesce of `ticket` settled.
    pub(crate) fn undone(&self, ticket: &Ticket) -> bool {
        self.resumed.load(Ordering::SeqCst) != ticket.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::FutureExt;

    const LONG: Duration = Duration::from_secs(30);

    #[tokio::test]
    async fn calls_running_end_and_calls_that_come_are_refused() {
        let hold = Hold::new();
        let running = hold.start().expect("not held");
        let mut wait = Box::pin(hold.quiesce(LONG));
        assert!(
            wait.as_mut().now_or_never().is_none(),
            "settled with a call running"
        );
        assert!(hold.start().is_none(), "a call that came ran");
        drop(running);
        let Wait::Settled(ticket) = wait.await else {
            panic!("not settled once the call ended");
        };
        assert!(hold.start().is_none(), "a call ran while held");
        assert!(!hold.undone(&ticket));
        hold.resume();
        assert!(hold.undone(&ticket));
        assert!(hold.start().is_some(), "held after a resume");
    }

    #[tokio::test]
    async fn a_call_that_does_not_end_leaves_the_calls_held() {
        let hold = Hold::new();
        let _running = hold.start().expect("not held");
        let wait = hold.quiesce(Duration::from_millis(20)).await;
        assert_eq!(wait, Wait::StillRunning);
        assert!(hold.start().is_none(), "a call that came ran");
    }

    /// In order, as the turn makes every resume and quiesce: a resume
    /// that lands between a quiesce's two steps cannot be forced from
    /// here, which is why they are one turn.
    #[tokio::test]
    async fn a_resume_before_a_quiesce_does_not_undo_it() {
        let hold = Hold::new();
        hold.resume();
        let Wait::Settled(ticket) = hold.quiesce(LONG).await else {
            panic!("undone by a resume that came first");
        };
        assert!(!hold.undone(&ticket));
        assert!(hold.start().is_none(), "a call ran while held");
    }

    #[tokio::test]
    async fn a_resume_undoes_a_waiting_quiesce() {
        let hold = Hold::new();
        let running = hold.start().expect("not held");
        let mut wait = Box::pin(hold.quiesce(LONG));
        assert!(wait.as_mut().now_or_never().is_none());
        hold.resume();
        // It answers at once, the call still running.
        assert_eq!(wait.await, Wait::Resumed);
        assert!(hold.start().is_some(), "held after a resume");
        drop(running);
    }
}
