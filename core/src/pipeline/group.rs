//! A change as the commit takes it: its files, in order, and what its
//! record says; and what the commit did.

use std::time::SystemTime;

use crate::journal::{Kind, Record};

use super::stage::Planned;

/// A change to commit: all its files or none.
#[derive(Debug)]
pub(super) struct Change<'r, 'a> {
    /// What the record calls it.
    pub(super) kind: Kind,
    /// Its files.
    pub(super) files: Vec<Planned<'r, 'a>>,
    /// The record's fields of a revert.
    pub(super) extra: Extra,
}

/// What a revert adds to its record.
#[derive(Debug, Default)]
pub(super) struct Extra {
    /// The change it undid.
    pub(super) reverts: Option<String>,
    /// A revert to a checkpoint: its name.
    pub(super) to: Option<String>,
    /// The seqs of the changes it undid.
    pub(super) undoes: Vec<u64>,
}

/// What a commit did.
#[derive(Debug)]
pub(super) struct Done {
    /// The record, where a journal keeps one.
    pub(super) record: Option<Record>,
    /// Each file's new modification time, in order.
    pub(super) modified: Vec<Option<SystemTime>>,
}
