//! `checkpoint` (`docs/contract.md#journal`): a named point a revert goes
//! back to. Its name is shown to people (`write-tool history`), so it is
//! printable text: no controls, no invisible or direction-changing
//! characters that would make it read as something else, or act on a
//! terminal.

use std::time::Instant;

use serde_json::Value;
use write_tool_wire::envelope::{
    Context, Data, Envelope, Operation, Stats, Status, WriteStats, elapsed_ms,
};

use crate::error::ToolError;
use crate::fs;
use crate::journal::{Kind, Record};
use crate::roots::Roots;

use super::config::Config;
use super::recover::recover;

/// The longest checkpoint name, in bytes.
const MAX_NAME_BYTES: usize = 200;

/// A checkpoint's name: 1 to 200 bytes, every character printable.
fn check_name(name: &str) -> Result<(), ToolError> {
    if name.trim().is_empty() || name.len() > MAX_NAME_BYTES {
        return Err(ToolError::invalid_param(format!(
            "A checkpoint's name is 1 to {MAX_NAME_BYTES} bytes of text; nothing was recorded."
        )));
    }
    if let Some(c) = name.chars().find(|&c| crate::path::is_unprintable(c)) {
        return Err(ToolError::invalid_param(format!(
            "A checkpoint's name must be printable text, and this one holds U+{:04X} (a \
             control, invisible or direction-changing character); nothing was recorded.",
            c as u32
        )));
    }
    Ok(())
}

/// Answer a `checkpoint`: a record of the name, nothing written.
pub(super) fn checkpoint(
    roots: &Roots,
    name: &str,
    echo: Value,
    config: &Config,
    start: Instant,
) -> Envelope {
    let set = (|| -> Result<Record, ToolError> {
        if !config.revert {
            return Err(ToolError::host_refuses("set checkpoints"));
        }
        check_name(name)?;
        let journal = config.journal.as_ref().ok_or_else(ToolError::no_journal)?;
        let held = journal.lock().map_err(|e| ToolError::journal_io(&e))?;
        recover(&held, roots, config)?;
        let mut record = Record::new(Kind::Checkpoint);
        record.name = Some(name.to_owned());
        record.by = config.by;
        held.append(record, config.durability != fs::Durability::None)
            .map_err(|e| ToolError::journal_io(&e))
    })();
    let time_ms = elapsed_ms(start);
    match set {
        Ok(record) => recorded(
            Operation::Checkpoint,
            &record.id,
            format!(
                "Checkpoint '{name}' set ({}): revert with {{\"to\": \"{name}\"}} undoes every \
                 change after it.",
                record.id
            ),
            time_ms,
            echo,
            None,
        ),
        Err(err) => err.into_envelope(time_ms, echo, None),
    }
}

/// The answer to a change the journal recorded that shows no file: a
/// checkpoint set, or a repeat answered from its record
/// (`super::idempotent`).
pub(super) fn recorded(
    operation: Operation,
    change_id: &str,
    text: String,
    time_ms: u64,
    echo: Value,
    path_resolved: Option<String>,
) -> Envelope {
    Envelope::answer(
        Status::Success,
        text,
        Some(Data {
            applied: true,
            change_id: Some(change_id.to_owned()),
            ..Data::of(operation)
        }),
        Stats {
            time_ms,
            write: Some(WriteStats {
                bytes_written: 0,
                original_size: 0,
                new_size: 0,
                lines_added: 0,
                lines_removed: 0,
            }),
        },
        Context::of(echo, path_resolved),
    )
}
