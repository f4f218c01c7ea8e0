//! Why the guest did not answer a call, said in one sentence.

use wasmtime::Trap;

use crate::Options;
use crate::state::HostState;

/// Why the guest did not answer.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The call ran past [`Options::timeout`].
    Timeout,
    /// The guest asked for more memory than [`Options::memory_limit_bytes`].
    Memory,
    /// The host could not set the call up, or the guest trapped.
    Host(wasmtime::Error),
}

impl Failure {
    /// Classify the error a call into the guest ended with.
    pub(crate) fn of(err: wasmtime::Error, state: &HostState) -> Failure {
        if state.limits.hit {
            Failure::Memory
        } else if matches!(err.downcast_ref::<Trap>(), Some(Trap::Interrupt)) {
            Failure::Timeout
        } else {
            Failure::Host(err)
        }
    }

    /// The envelope's message.
    pub(crate) fn message(&self, options: &Options) -> String {
        match self {
            Failure::Timeout => format!(
                "Execution stopped: the call exceeded its time limit of {} ms. Nothing was written.",
                options.timeout.as_millis()
            ),
            Failure::Memory => format!(
                "Execution stopped: the call exceeded its memory limit of {} bytes. Nothing was written.",
                options.memory_limit_bytes
            ),
            // What went wrong is for the host's operator (`log`), not for
            // the model: wasmtime's errors carry backtraces of the guest.
            Failure::Host(_) => "Execution failed: the tool component stopped unexpectedly \
                                 (the host's log has the details)."
                .to_owned(),
        }
    }

    /// Write what the envelope leaves out to the host's log (stderr).
    pub(crate) fn log(&self) {
        if let Failure::Host(err) = self {
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
        let message = Failure::Host(trap).message(&Options::default());
        assert_eq!(
            message,
            "Execution failed: the tool component stopped unexpectedly (the host's log has the details)."
        );
    }
}
