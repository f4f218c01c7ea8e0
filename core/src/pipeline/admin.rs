//! The host's own requests on the journal (`docs/contract.md#journal`):
//! `history`, `verify`, `gc`. Refused unless the host allows them
//! (`WRITE_TOOL_ADMIN`), which it does for its own commands only; the
//! answer's `text` is one JSON document, and `data` is null.

use std::time::Instant;

use serde_json::{Value, json};
use write_tool_wire::envelope::{Context, Envelope, Stats, Status, elapsed_ms};

use crate::error::ToolError;
use crate::journal::{GENESIS, Head, Held, Journal, Kind, Record, chain};
use crate::params::JournalRequest;
use crate::roots::Roots;

use super::choose::Stack;
use super::config::Config;
use super::recover::recover;

/// Answer a host request.
pub(super) fn answer(
    roots: &Roots,
    request: &JournalRequest,
    echo: Value,
    config: &Config,
    start: Instant,
) -> Envelope {
    let result = (|| -> Result<Value, ToolError> {
        if !config.admin {
            return Err(ToolError::host_refuses(
                "read or maintain the journal (the host's own commands do)",
            ));
        }
        let journal = config.journal.as_ref().ok_or_else(ToolError::no_journal)?;
        let io = |e: std::io::Error| ToolError::journal_io(&e);
        match request {
            JournalRequest::History { path } => {
                // Finished or rolled back first: history shows what is.
                recover(&journal.lock().map_err(io)?, roots, config)?;
                history(journal, path.as_deref())
            }
            JournalRequest::Verify => verify(&journal.lock().map_err(io)?),
            JournalRequest::Seal => {
                let held = journal.lock().map_err(io)?;
                recover(&held, roots, config)?;
                let head = verify(&held)?;
                super::seal::seal(&held, roots, &head)
            }
            JournalRequest::CheckSeal => {
                let held = journal.lock().map_err(io)?;
                let head = verify(&held)?;
                super::seal::check(&held, roots, &head)
            }
            JournalRequest::Gc => {
                let mut held = journal.lock().map_err(io)?;
                recover(&held, roots, config)?;
                let collected = super::gc::collect(&mut held, 0).map_err(io)?;
                Ok(json!({ "gc": collected }))
            }
        }
    })();
    let time_ms = elapsed_ms(start);
    match result {
        Ok(value) => Envelope::answer(
            Status::Success,
            value.to_string(),
            None,
            Stats {
                time_ms,
                write: None,
            },
            Context::of(echo, None),
        ),
        Err(err) => err.into_envelope(time_ms, echo, None),
    }
}

/// The records that changed something or mark a point, newest first, with
/// `voided` where a commit did not happen and `undone` where a revert now
/// stands in for it; of `path` only, if given.
fn history(journal: &Journal, path: Option<&str>) -> Result<Value, ToolError> {
    let stack = Stack::read(journal)?;
    let undone = stack.undone();
    let mut shown: Vec<Value> = Vec::new();
    journal
        .scan(|_, record| {
            let Some(r) = record else {
                return Ok(true);
            };
            let listed = (r.is_change() || r.kind == Kind::Checkpoint)
                && path.is_none_or(|p| r.files.iter().any(|f| f.path == p));
            if listed {
                // Whole, `prev` included: an export for an audit.
                let mut value = serde_json::to_value(&r).unwrap_or(Value::Null);
                if let Value::Object(map) = &mut value {
                    if stack.is_voided(r.seq) {
                        map.insert("voided".into(), Value::Bool(true));
                    }
                    if undone.contains(&r.seq) {
                        map.insert("undone".into(), Value::Bool(true));
                    }
                }
                shown.push(value);
            }
            Ok(true)
        })
        .map_err(|e| ToolError::journal_io(&e))?;
    shown.reverse();
    Ok(json!({ "history": shown }))
}

/// Check the chain of records, line by line: each holds the hash of the
/// line before it, and the seqs count up by one; then the last record
/// against the head the journal keeps, which no later record covers. The
/// first problem is reported.
pub(super) fn verify(held: &Held<'_>) -> Result<Value, ToolError> {
    let io = |e: std::io::Error| ToolError::journal_io(&e);
    let mut chain_check = Chain::default();
    held.journal()
        .scan(|line, record| {
            chain_check.next(line, record);
            Ok(chain_check.problem.is_none())
        })
        .map_err(io)?;
    let mark = held.mark().map_err(io)?;
    if chain_check.problem.is_none() {
        chain_check.problem = chain_check.against(mark.head.as_ref(), mark.seq);
    }
    let Chain {
        problem,
        last,
        first,
        lines,
        ..
    } = chain_check;
    Ok(json!({
        "verify": {
            "ok": problem.is_none(),
            "records": lines,
            "first": first,
            "head": last.map(|(seq, hash)| json!({"seq": seq, "hash": hash})),
            "problem": problem,
        }
    }))
}

/// The chain as read so far.
#[derive(Debug, Default)]
struct Chain {
    lines: u64,
    first: Option<u64>,
    /// The last record's seq and hash.
    last: Option<(u64, String)>,
    /// A first record not at 1: explained if a gc record says the records
    /// before it were dropped.
    unexplained_start: Option<u64>,
    problem: Option<Value>,
}

impl Chain {
    fn next(&mut self, line: &[u8], record: Option<Record>) {
        self.lines += 1;
        let Some(record) = record else {
            self.problem = Some(json!({"line": self.lines, "problem": "not a record"}));
            return;
        };
        match &self.last {
            None => {
                self.first = Some(record.seq);
                if !(record.seq == 1 && record.prev == GENESIS) {
                    self.unexplained_start = Some(record.seq);
                }
            }
            Some((seq, hash)) => {
                if record.seq != seq + 1 {
                    self.problem = Some(json!({
                        "seq": record.seq,
                        "problem": format!("follows record {seq}: records were removed or reordered"),
                    }));
                    return;
                }
                if &record.prev != hash {
                    self.problem = Some(json!({
                        "seq": seq,
                        "problem": "altered: the record after it holds another hash of it",
                    }));
                    return;
                }
            }
        }
        if record.kind == Kind::Gc
            && self
                .unexplained_start
                .is_some_and(|start| record.dropped_through == Some(start - 1))
        {
            self.unexplained_start = None;
        }
        self.last = Some((record.seq, chain(line)));
    }

    /// The problem of a chain read whole, judged against the `head` the
    /// journal keeps (`in_progress`: the commit its mark names).
    fn against(&self, head: Option<&Head>, in_progress: Option<u64>) -> Option<Value> {
        if let Some(seq) = self.unexplained_start {
            return Some(json!({
                "seq": seq,
                "problem": "the records before it are missing, and no gc record says they were \
                            dropped",
            }));
        }
        let problem = |seq: u64, text: &str| Some(json!({"seq": seq, "problem": text}));
        match (head, &self.last) {
            (None, None) => None,
            (None, Some((seq, _))) => problem(
                *seq,
                "the journal keeps no head (it was removed, or no write of this version has \
                 been recorded yet), so the last record cannot be checked",
            ),
            (Some(head), None) => problem(head.seq, "every record was removed"),
            (Some(head), Some((seq, hash))) if head.seq == *seq => {
                (head.hash != *hash).then(|| {
                    json!({
                        "seq": seq,
                        "problem": "altered: the head the journal keeps holds another hash of it",
                    })
                })
            }
            (Some(head), Some((seq, _))) if head.seq > *seq => problem(
                *seq,
                &format!(
                    "records after it were cut off: the head is record {}",
                    head.seq
                ),
            ),
            (Some(_), Some((seq, _))) if in_progress == Some(*seq) => None,
            (Some(head), Some((seq, _))) => problem(
                *seq,
                &format!(
                    "records after the head (record {}) were appended without it: by someone \
                     else, or before a power loss",
                    head.seq
                ),
            ),
        }
    }
}
