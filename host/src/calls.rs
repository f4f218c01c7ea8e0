//! Tool calls from the async servers (`mcp`, `serve --ws`): each runs on a
//! blocking thread, at most as many at once as the tool has instance slots,
//! so that a burst waits its turn instead of failing for want of a slot.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, PoisonError, Weak};

use tokio::sync::Semaphore;
use write_tool_wire::{Envelope, ErrorCode};

use crate::auth::{Caller, Tokens};
use crate::hold::{HOLD, QUIESCED_MESSAGE};
use crate::{Cancel, Root, Session, WriteTool};

/// Why a call could not run to its end. Its message is for the client,
/// which gets it in an `EXECUTION_ERROR` envelope or a JSON-RPC error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallError {
    /// The runtime is shutting down: the call never started.
    ShuttingDown,
    /// The task running the call ended without an answer.
    Lost,
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CallError::ShuttingDown => "The server is shutting down; nothing was written.",
            CallError::Lost => "The call did not finish.",
        })
    }
}

impl std::error::Error for CallError {}

/// The tool and the slots calls wait for.
#[derive(Debug)]
pub(crate) struct Calls {
    tool: Arc<WriteTool>,
    slots: Arc<Semaphore>,
    /// How many slots there are.
    limit: u32,
    /// The server's name in the per-call log (`crate::log`).
    surface: &'static str,
    /// Each caller's share of the slots, where the port tells callers
    /// apart.
    shares: Option<Arc<Shares>>,
}

/// The slots one caller may hold at once: fewer than all, so that while
/// one caller's calls fill its share and queue behind it, another's find
/// a slot free (`docs/contract.md#port-auth`). A caller's calls wait for
/// its share first and for a slot after, so the calls it queued never
/// stand before another caller's in the slots' queue.
#[derive(Debug)]
struct Shares {
    /// Slots a caller may hold at once.
    each: usize,
    /// Each caller's share, alive while a call of it holds or awaits one.
    by: std::sync::Mutex<HashMap<Caller, Weak<Semaphore>>>,
}

impl Shares {
    /// `caller`'s share, made with its first call.
    fn of(&self, caller: &Caller) -> Arc<Semaphore> {
        let mut by = self.by.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(share) = by.get(caller).and_then(Weak::upgrade) {
            return share;
        }
        // Callers whose calls all ended leave nothing behind.
        by.retain(|_, share| share.strong_count() > 0);
        let share = Arc::new(Semaphore::new(self.each));
        by.insert(caller.clone(), Arc::downgrade(&share));
        share
    }
}

impl Calls {
    pub(crate) fn new(tool: Arc<WriteTool>, surface: &'static str) -> Calls {
        let limit = tool.options().max_concurrent_calls.max(1);
        Calls {
            tool,
            slots: Arc::new(Semaphore::new(limit as usize)),
            limit,
            surface,
            shares: None,
        }
    }

    /// The calls of a port that asks for `tokens`. Where it takes OAuth
    /// access tokens, whose subjects are callers apart, each caller is held
    /// to a share of the slots: a quarter of them is always left to the
    /// others (of 8, a caller holds at most 6; with fewer than 4 slots, no
    /// share is smaller than all). The port's own token, or none, speaks
    /// for one caller, whom a share would only slow.
    pub(crate) fn for_port(tool: Arc<WriteTool>, tokens: &Tokens) -> Calls {
        let mut calls = Calls::new(tool, "ws");
        if tokens.oauth.is_some() {
            let limit = calls.limit as usize;
            calls.shares = Some(Arc::new(Shares {
                each: limit - limit / 4,
                by: std::sync::Mutex::new(HashMap::new()),
            }));
        }
        calls
    }

    /// The same tool and slots, for another surface of one server: a
    /// port that serves several surfaces (`serve --ws`) runs as many calls
    /// at once as the tool has instances, whichever surface they come by.
    pub(crate) fn for_surface(&self, surface: &'static str) -> Calls {
        Calls {
            tool: Arc::clone(&self.tool),
            slots: Arc::clone(&self.slots),
            limit: self.limit,
            surface,
            shares: self.shares.clone(),
        }
    }

    /// Wait until no call is in flight and keep every slot: calls that
    /// come after wait for good (a drain, `docs/contract.md#drain`; the
    /// semaphore is fair, so none slips in before).
    pub(crate) async fn quiesce(&self) {
        if let Ok(all) = Arc::clone(&self.slots).acquire_many_owned(self.limit).await {
            all.forget();
        }
    }

    /// The tool.
    pub(crate) fn tool(&self) -> &WriteTool {
        &self.tool
    }

    /// The tool, shared.
    pub(crate) fn shared_tool(&self) -> Arc<WriteTool> {
        Arc::clone(&self.tool)
    }

    /// The envelope JSON for one request under `root`. The slot travels
    /// with the blocking task, so a call whose waiter went away still holds
    /// it until it ends. Fails only when the call could not run to its end
    /// (the runtime is shutting down, or the task panicked); the message
    /// says which. With `cancel`, the call stops at its commit point once
    /// the flag is set ([`WriteTool::call_cancellable`]). With `session`,
    /// the call is part of it ([`WriteTool::call_in`]); without, it is
    /// outside any, as the CLI's `call` is. `caller` is whom it is for,
    /// held to its share of the slots where they are shared.
    pub(crate) async fn call(
        &self,
        root: Arc<Root>,
        request: impl AsRef<str> + Send + 'static,
        cancel: Option<Cancel>,
        session: Option<Arc<Session>>,
        caller: &Caller,
    ) -> Result<String, CallError> {
        let Some(running) = HOLD.start() else {
            return Ok(Envelope::refused(ErrorCode::ExecutionError, QUIESCED_MESSAGE).to_json());
        };
        let waiting = crate::metrics::InFlight::waiting(self.surface);
        let share = match &self.shares {
            Some(shares) => Some(
                shares
                    .of(caller)
                    .acquire_owned()
                    .await
                    .map_err(|_| CallError::ShuttingDown)?,
            ),
            None => None,
        };
        let permit = Arc::clone(&self.slots)
            .acquire_owned()
            .await
            .map_err(|_| CallError::ShuttingDown)?;
        drop(waiting);
        let tool = Arc::clone(&self.tool);
        let surface = self.surface;
        let in_flight = crate::metrics::InFlight::start(surface);
        tokio::task::spawn_blocking(move || {
            let _running = running;
            let _permit = permit;
            let _share = share;
            let _in_flight = in_flight;
            let started = std::time::Instant::now();
            let answer = match (&session, &cancel) {
                (Some(session), cancel) => {
                    tool.call_in(&root, request.as_ref(), session, cancel.as_ref())
                }
                (None, Some(cancel)) => tool.call_cancellable(&root, request.as_ref(), cancel),
                (None, None) => tool.call(&root, request.as_ref()),
            };
            crate::log::call(surface, Some(request.as_ref()), &answer, started);
            answer
        })
        .await
        .map_err(|_| CallError::Lost)
    }
}
