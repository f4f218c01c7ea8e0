//! What an envelope says happened on disk, as far as the host's after-call
//! work cares: whether a file was replaced (its mode is put back) and
//! whether the call wrote (its directory counts as swept).

use write_tool_wire::{Envelope, Operation};

use crate::bindings::exports::tool as wit;

/// The fields of an envelope the host acts on, from either form of it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Outcome<'e> {
    applied: bool,
    operation: Option<Operation>,
    bytes_written: u64,
    path_resolved: Option<&'e str>,
}

impl<'e> From<&'e Envelope> for Outcome<'e> {
    fn from(env: &'e Envelope) -> Self {
        Outcome {
            applied: env.data.as_ref().is_some_and(|d| d.applied),
            operation: env.data.as_ref().map(|d| d.operation),
            bytes_written: env.stats.write.map_or(0, |w| w.bytes_written),
            path_resolved: env.context.path_resolved.as_deref(),
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
            path_resolved: env.context.path_resolved.as_deref(),
        }
    }
}

impl<'e> Outcome<'e> {
    /// The path of an existing file that was replaced by a new one (which
    /// lost its mode): the write was applied, to an existing file, and
    /// wrote bytes (identical content writes none and keeps the old file).
    pub(crate) fn replaced(&self) -> Option<&'e str> {
        let replaced =
            self.applied && self.operation == Some(Operation::Update) && self.bytes_written > 0;
        replaced.then_some(self.path_resolved).flatten()
    }

    /// Whether the call wrote a file (and so swept its directory, if
    /// asked). An update to empty content counts as not written: one more
    /// sweep.
    pub(crate) fn wrote(&self) -> bool {
        self.applied && (self.operation == Some(Operation::Create) || self.bytes_written > 0)
    }
}
