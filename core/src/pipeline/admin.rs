//! The host's own requests on the journal (`docs/contract.md#journal`):
//! `history`, `verify`, `gc`. Refused unless the host allows them
//! (`WRITE_TOOL_ADMIN`), which it does for its own commands only; the
//! answer's `text` is one JSON document, and `data` is null.

use std::collections::HashSet;
use std::time::Instant;

use serde_json::{Value, json};
use write_tool_wire::envelope::{CWD, Context, Envelope, Stats, Status, elapsed_ms};

use crate::error::ToolError;
use crate::journal::{GENESIS, Journal, Kind, Record, chain};
use crate::params::JournalRequest;
use crate::roots::Roots;

use super::config::Config;
use super::journaled;

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
        let io = |e: std::io::Error| journaled::journal_error(&e);
        match request {
            JournalRequest::History { path } => history(journal, path.as_deref()).map_err(io),
            JournalRequest::Verify => verify(journal).map_err(io),
            JournalRequest::Gc => {
                let mut held = journal.lock().map_err(io)?;
                journaled::recover(&held, roots, config);
                let collected = super::gc::collect(&mut held, 0).map_err(io)?;
                Ok(json!({ "gc": collected }))
            }
        }
    })();
    let time_ms = elapsed_ms(start);
    match result {
        Ok(value) => Envelope {
            status: Status::Success,
            data: None,
            text: value.to_string(),
            stats: Stats {
                time_ms,
                write: None,
            },
            context: Context {
                cwd: CWD.to_owned(),
                params_input: echo,
                path_resolved: None,
            },
            error: None,
        },
        Err(err) => err.into_envelope(time_ms, echo, None),
    }
}

/// The records that changed something or mark a point, newest first, with
/// `voided` where a commit did not happen; of `path` only, if given.
fn history(journal: &Journal, path: Option<&str>) -> std::io::Result<Value> {
    let records = journal.records()?;
    let voided: HashSet<u64> = records
        .iter()
        .filter(|r| r.kind == Kind::Void)
        .filter_map(|r| r.of)
        .collect();
    let shown: Vec<Value> = records
        .iter()
        .rev()
        .filter(|r| r.is_change() || r.kind == Kind::Checkpoint)
        .filter(|r| path.is_none_or(|p| r.files.iter().any(|f| f.path == p)))
        .map(|r| {
            // Whole, `prev` included: an export for an audit.
            let mut value = serde_json::to_value(r).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut value
                && voided.contains(&r.seq)
            {
                map.insert("voided".into(), Value::Bool(true));
            }
            value
        })
        .collect();
    Ok(json!({ "history": shown }))
}

/// Check the chain of records: each holds the hash of the line before it,
/// and the seqs count up by one. The first problem is reported; the head
/// (the last record's seq and hash) lets an auditor who kept it notice
/// records cut off the end.
fn verify(journal: &Journal) -> std::io::Result<Value> {
    let lines = journal.lines()?;
    let mut problem: Option<Value> = None;
    let mut prev: Option<(u64, String)> = None;
    let mut first_seq = None;
    let records: Vec<Option<Record>> = lines
        .iter()
        .map(|l| crate::journal::from_json(l).ok())
        .collect();
    for (i, (line, record)) in lines.iter().zip(&records).enumerate() {
        let Some(record) = record else {
            problem = Some(json!({"line": i + 1, "problem": "not a record"}));
            break;
        };
        match &prev {
            None => {
                first_seq = Some(record.seq);
                let explained = record.seq == 1 && record.prev == GENESIS
                    || records
                        .iter()
                        .flatten()
                        .any(|r| r.kind == Kind::Gc && r.dropped_through == Some(record.seq - 1));
                if !explained {
                    problem = Some(json!({
                        "seq": record.seq,
                        "problem": "the records before it are missing, and no gc record says \
                                    they were dropped",
                    }));
                    break;
                }
            }
            Some((seq, hash)) => {
                if record.seq != seq + 1 {
                    problem = Some(json!({
                        "seq": record.seq,
                        "problem": format!("follows record {seq}: records were removed or reordered"),
                    }));
                    break;
                }
                if &record.prev != hash {
                    problem = Some(json!({
                        "seq": seq,
                        "problem": "altered: the record after it holds another hash of it",
                    }));
                    break;
                }
            }
        }
        prev = Some((record.seq, chain(line)));
    }
    Ok(json!({
        "verify": {
            "ok": problem.is_none(),
            "records": lines.len(),
            "first": first_seq,
            "head": prev.map(|(seq, hash)| json!({"seq": seq, "hash": hash})),
            "problem": problem,
        }
    }))
}
