//! What an envelope says happened on disk, as far as the host's after-call
//! work cares: whether the call wrote (its directory counts as swept).

use write_tool_wire::{Envelope, Operation};

use crate::bindings::exports::tool as wit;

/// The fields of an envelope the host acts on, from either form of it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Outcome<'e> {
    applied: bool,
    operation: Option<Operation>,
    bytes_written: u64,
    _envelope: std::marker::PhantomData<&'e ()>,
}

impl<'e> From<&'e Envelope> for Outcome<'e> {
    fn from(env: &'e Envelope) -> Self {
        Outcome {
            applied: env.data.as_ref().is_some_and(|d| d.applied),
            operation: env.data.as_ref().map(|d| d.operation),
            bytes_written: env.bytes_written(),
            _envelope: std::marker::PhantomData,
        }
    }
}

impl<'e> From<&'e wit::Envelope> for Outcome<'e> {
    fn from(env: &'e wit::Envelope) -> Self {
        Outcome {
            applied: env.data.as_ref().is_some_and(|d| d.applied),
            operation: env.data.as_ref().map(|d| match d.operation {
                wit::Operation::Create => Operation::Create,
                wit::Operation::Update => Operation::Update,
                wit::Operation::Delete => Operation::Delete,
                wit::Operation::Many => Operation::Many,
                wit::Operation::Checkpoint => Operation::Checkpoint,
            }),
            bytes_written: env.stats.bytes_written.unwrap_or(0),
            _envelope: std::marker::PhantomData,
        }
    }
}

impl<'e> Outcome<'e> {
    /// Whether the call wrote a file (and so swept its directory, if
    /// asked). An update that left the file as it was (no diff) counts as not written: one more
    /// sweep.
    pub(crate) fn wrote(&self) -> bool {
        self.applied && (self.operation == Some(Operation::Create) || self.bytes_written > 0)
    }
}
