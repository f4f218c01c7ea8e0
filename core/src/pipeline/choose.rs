//! Which records a revert undoes, read from the log line by line
//! (`docs/contract.md#journal`).
//!
//! - **The undo stack.** A revert without an id undoes the latest change
//!   that is not itself a revert and is not undone already, so that
//!   `undo`, run again, steps further back; a revert of a revert redoes
//!   what that one undid.
//! - **Who may undo what.** A model undoes only what a model did: a
//!   person's change is not its to take back, a model's "latest change" is
//!   its own latest, a rewind that would take back a person's change is
//!   refused, and a model finds only a model's checkpoints by name. A
//!   person may undo anything, and finds their own checkpoint of a name
//!   first.

use std::collections::{HashMap, HashSet};

use crate::error::ToolError;
use crate::journal::{By, Journal, Kind, Record, seq_of};
use crate::params::RevertTarget;

use super::config::Config;
use super::group::Extra;

/// What the log says of each change, without its files.
#[derive(Debug, Default)]
pub(super) struct Stack {
    /// Each change and checkpoint in order: seq, kind, who, checkpoint name.
    entries: Vec<(u64, Kind, By, Option<String>)>,
    /// The records a `void` says never happened.
    voided: HashSet<u64>,
    /// Each revert's undone seqs.
    undoes: HashMap<u64, Vec<u64>>,
    /// The changes of the file [`Stack::read_of`] was asked about, and how
    /// many files each changed.
    of_file: HashMap<u64, usize>,
}

impl Stack {
    /// The log's changes, read line by line.
    pub(super) fn read(journal: &Journal) -> Result<Stack, ToolError> {
        Stack::read_of(journal, None)
    }

    /// The log's changes, and which of them changed the file `path`.
    fn read_of(journal: &Journal, path: Option<&str>) -> Result<Stack, ToolError> {
        let mut stack = Stack::default();
        journal
            .scan(|_, record| {
                let Some(record) = record else {
                    return Ok(true);
                };
                if record.kind == Kind::Void {
                    stack.voided.extend(record.of);
                } else if record.is_change() || record.kind == Kind::Checkpoint {
                    if record.kind == Kind::Revert {
                        let mut undoes = record.undoes.clone();
                        if undoes.is_empty() {
                            undoes.extend(record.reverts.as_deref().and_then(seq_of));
                        }
                        stack.undoes.insert(record.seq, undoes);
                    }
                    if let Some(path) = path
                        && record.files.iter().any(|f| f.path == path)
                    {
                        stack.of_file.insert(record.seq, record.files.len());
                    }
                    stack
                        .entries
                        .push((record.seq, record.kind, record.by, record.name));
                }
                Ok(true)
            })
            .map_err(|e| ToolError::journal_io(&e))?;
        Ok(stack)
    }

    /// Whether `seq` is a change that happened.
    fn live(&self, seq: u64) -> bool {
        !self.voided.contains(&seq)
    }

    /// The changes undone now: by a live revert that is not undone itself.
    pub(super) fn undone(&self) -> HashSet<u64> {
        let mut undone = HashSet::new();
        for (seq, kind, _, _) in &self.entries {
            if *kind != Kind::Revert || !self.live(*seq) {
                continue;
            }
            for target in self.undoes.get(seq).into_iter().flatten() {
                match self.undoes.get(target) {
                    // A revert of a revert: what that one undid is back.
                    Some(redone) => {
                        for x in redone {
                            undone.remove(x);
                        }
                        undone.insert(*target);
                    }
                    None => {
                        undone.insert(*target);
                    }
                }
            }
        }
        undone
    }

    /// Whether `seq` is a live change.
    pub(super) fn is_voided(&self, seq: u64) -> bool {
        self.voided.contains(&seq)
    }
}

/// The changes a revert undoes (in order), what its record says, and how
/// its answer names them.
#[derive(Debug)]
pub(super) struct Chosen {
    pub(super) records: Vec<Record>,
    pub(super) extra: Extra,
    pub(super) what: String,
}

/// Choose what `target` names, as `config.by` may.
pub(super) fn choose(
    journal: &Journal,
    target: &RevertTarget,
    config: &Config,
) -> Result<Chosen, ToolError> {
    let of = match target {
        RevertTarget::LatestOf(path) => Some(path.as_str()),
        _ => None,
    };
    let stack = Stack::read_of(journal, of)?;
    let model = config.by == By::Model;
    let changes = |from: u64| {
        stack
            .entries
            .iter()
            .filter(move |(seq, kind, _, _)| *seq > from && *kind != Kind::Checkpoint)
            .filter(|(seq, _, _, _)| stack.live(*seq))
    };
    let (seqs, extra, what) = match target {
        RevertTarget::Latest => {
            let undone = stack.undone();
            let (seq, _, _, _) = changes(0)
                .rfind(|(seq, kind, by, _)| {
                    *kind != Kind::Revert && !undone.contains(seq) && (!model || *by == By::Model)
                })
                .ok_or_else(|| ToolError::no_such_change("change to revert"))?;
            (vec![*seq], single(*seq), crate::journal::id_of(*seq))
        }
        RevertTarget::LatestOf(path) => {
            let undone = stack.undone();
            let (seq, _, _, _) = changes(0)
                .rfind(|(seq, kind, by, _)| {
                    *kind != Kind::Revert
                        && stack.of_file.contains_key(seq)
                        && !undone.contains(seq)
                        && (!model || *by == By::Model)
                })
                .ok_or_else(|| ToolError::no_such_change(&format!("change of '{path}' to undo")))?;
            let id = crate::journal::id_of(*seq);
            if stack.of_file.get(seq).is_some_and(|&n| n > 1) {
                return Err(ToolError::undo_of_many(path, &id));
            }
            (vec![*seq], single(*seq), id)
        }
        RevertTarget::Change(id) => {
            let named = || ToolError::no_such_change(&format!("change '{id}'"));
            let seq = seq_of(id).ok_or_else(named)?;
            let (_, _, by, _) = changes(0)
                .find(|(s, _, _, _)| *s == seq)
                .ok_or_else(named)?;
            if model && *by == By::Person {
                return Err(ToolError::persons_change(&crate::journal::id_of(seq)));
            }
            (vec![seq], single(seq), crate::journal::id_of(seq))
        }
        RevertTarget::Checkpoint(name) => {
            let named = |e: &&(u64, Kind, By, Option<String>)| {
                e.1 == Kind::Checkpoint && e.3.as_deref() == Some(name)
            };
            let mut mark = stack.entries.iter().filter(named);
            let own = mark.clone().rfind(|e| e.2 == config.by);
            // A person's own checkpoint of that name first, else any; a
            // model's only.
            let mark = if model { own } else { own.or(mark.next_back()) }
                .ok_or_else(|| ToolError::no_such_change(&format!("checkpoint '{name}'")))?;
            let seqs: Vec<u64> = changes(mark.0).map(|e| e.0).collect();
            if model && let Some(theirs) = changes(mark.0).find(|e| e.2 == By::Person) {
                return Err(ToolError::persons_change(&crate::journal::id_of(theirs.0)));
            }
            let extra = Extra {
                to: Some(name.clone()),
                undoes: seqs.clone(),
                ..Extra::default()
            };
            (
                seqs,
                extra,
                format!("the changes since checkpoint '{name}'"),
            )
        }
    };
    let records = records_of(journal, &seqs)?;
    if model {
        refuse_over_a_person(journal, &stack, &records)?;
    }
    Ok(Chosen {
        records,
        extra,
        what,
    })
}

/// A model's revert is refused, forced or not, when a person changed one
/// of its files after the changes it undoes — a change of the person's
/// that is live and not undone: putting the file back would take the
/// person's work out of it (`docs/contract.md#journal`, who may undo
/// what). A person's undo of their own later change does not count: it
/// gave the file back as the model left it. Changes made by hand, which
/// the journal never saw, are what "changed since" and `force` are for.
fn refuse_over_a_person(
    journal: &Journal,
    stack: &Stack,
    records: &[Record],
) -> Result<(), ToolError> {
    let Some(last) = records.iter().map(|r| r.seq).max() else {
        return Ok(());
    };
    let paths: HashSet<&str> = records
        .iter()
        .flat_map(|r| r.files.iter().map(|f| f.path.as_str()))
        .collect();
    let undone = stack.undone();
    let mut theirs = None;
    journal
        .scan(|_, record| {
            if let Some(record) = record
                && record.seq > last
                && record.is_change()
                && record.by == By::Person
                && stack.live(record.seq)
                && !undone.contains(&record.seq)
                && !takes_back_only_later(&record, last)
                && let Some(file) = record
                    .files
                    .iter()
                    .find(|f| paths.contains(f.path.as_str()))
            {
                theirs = Some((file.path.clone(), record.id));
                return Ok(false);
            }
            Ok(true)
        })
        .map_err(|e| ToolError::journal_io(&e))?;
    match theirs {
        Some((path, id)) => Err(ToolError::changed_by_a_person_since(&path, &id)),
        None => Ok(()),
    }
}

/// Whether `record` is a revert of changes made after `seq` only: a
/// person's undo of their own later change gives the file back as the
/// model left it, and takes no one's work out of it.
fn takes_back_only_later(record: &Record, seq: u64) -> bool {
    record.kind == Kind::Revert
        && !record.undoes.is_empty()
        && record.undoes.iter().all(|&s| s > seq)
}

/// What the record of a revert of one change says.
fn single(seq: u64) -> Extra {
    Extra {
        reverts: Some(crate::journal::id_of(seq)),
        undoes: vec![seq],
        ..Extra::default()
    }
}

/// The records of `seqs`, read again from the log, in order.
fn records_of(journal: &Journal, seqs: &[u64]) -> Result<Vec<Record>, ToolError> {
    let wanted: HashSet<u64> = seqs.iter().copied().collect();
    let mut found = Vec::with_capacity(seqs.len());
    journal
        .scan(|_, record| {
            if let Some(record) = record.filter(|r| wanted.contains(&r.seq)) {
                found.push(record);
            }
            Ok(found.len() < wanted.len())
        })
        .map_err(|e| ToolError::journal_io(&e))?;
    Ok(found)
}
