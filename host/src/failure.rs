//! Why the guest did not answer a call, said in one sentence.

use wasmtime::Trap;

use crate::Options;
use crate::state::HostState;

/// How the message of a call stopped by the time limit begins.
pub(crate) const TIMEOUT_MESSAGE: &str = "Execution stopped: the call exceeded its time limit";

/// Why the guest did not answer, and whether it had passed its commit
/// point (`docs/contract.md#cancellation`) when it stopped.
#[derive(Debug)]
pub(crate) struct Failure {
    cause: Cause,
    committed: bool,
}

/// Why the guest did not answer.
#[derive(Debug)]
enum Cause {
    /// The call ran past [`Options::timeout`].
    Timeout,
    /// The guest asked for more memory than [`Options::memory_limit_bytes`].
    Memory,
    /// The calls in flight together hold [`Options::memory_limit_bytes`].
    SharedMemory,
    /// The host could not set the call up, or the guest trapped.
    Host(wasmtime::Error),
}

impl Failure {
    /// Classify the error a call into the guest ended with.
    pub(crate) fn of(err: wasmtime::Error, state: &HostState) -> Failure {
        let cause = if state.limits.hit_shared {
            Cause::SharedMemory
        } else if state.limits.hit {
            Cause::Memory
        } else if matches!(err.downcast_ref::<Trap>(), Some(Trap::Interrupt)) {
            Cause::Timeout
        } else {
            Cause::Host(err)
        };
        Failure {
            cause,
            committed: state.committed,
        }
    }

    /// The envelope's message.
    pub(crate) fn message(&self, options: &Options) -> String {
        let why = match &self.cause {
            Cause::Timeout => format!("{TIMEOUT_MESSAGE} of {} ms.", options.timeout.as_millis()),
            Cause::Memory => format!(
                "Execution stopped: the call exceeded its memory limit of {} bytes.",
                options.memory_limit_bytes
            ),
            Cause::SharedMemory => format!(
                "Execution stopped: the calls in flight together reached this host's memory limit \
                 of {} bytes; try again when they are done.",
                options.memory_limit_bytes
            ),
            // What went wrong is for the host's operator (`log`), not for
            // the model: wasmtime's errors carry backtraces of the guest.
            Cause::Host(_) => "Execution failed: the tool component stopped unexpectedly \
                               (the host's log has the details)."
                .to_owned(),
        };
        // A stop can land after the rename, in the little the guest does
        // once the file is in place: then the write is done, and saying
        // otherwise would have the model write it again or give up on it.
        let what = if self.committed {
            "The write was done before it stopped: the file holds the new content."
        } else {
            "Nothing was written."
        };
        format!("{why} {what}")
    }

    /// Write what the envelope leaves out to the host's log (stderr).
    pub(crate) fn log(&self) {
        if let Cause::Host(err) = &self.cause {
            eprintln!("write-tool: the tool component failed: {err:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// However long and detailed the engine's error, the envelope gets one
    /// plain sentence.
    #[test]
    fn a_trap_is_one_plain_sentence() {
        let trap = wasmtime::Error::msg(
            "error while executing at wasm backtrace:\n    0: 0x1234 - write_tool_guest::f\n    1: 0x5678 - alloc::raw_vec::capacity_overflow",
        )
        .context("wasm trap: wasm `unreachable` instruction executed");
        let failure = Failure {
            cause: Cause::Host(trap),
            committed: false,
        };
        assert_eq!(
            failure.message(&Options::default()),
            "Execution failed: the tool component stopped unexpectedly (the host's log has the \
             details). Nothing was written."
        );
    }

    /// A stop after the commit point says the write was done.
    #[test]
    fn a_stop_after_the_commit_point_says_the_write_was_done() {
        let failure = Failure {
            cause: Cause::Timeout,
            committed: true,
        };
        let message = failure.message(&Options::default());
        assert!(
            message
                .ends_with("The write was done before it stopped: the file holds the new content."),
            "{message}"
        );
    }
}
