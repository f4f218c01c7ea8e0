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
            Failure::Host(err) => format!("Execution failed in the tool component: {err}"),
        }
    }
}
