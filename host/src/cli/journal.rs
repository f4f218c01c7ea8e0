//! The journal's commands: `write-many`, `undo`, `checkpoint`, `history`,
//! `journal`.

use std::io::{self, Write};

use anyhow::{Context, bail};
use serde_json::json;
use write_tool::{Root, WriteTool};

use super::input;
use super::output::{EXIT_OK, answer_person, emit, exit_code, printable, safe_json};

/// `write-tool write-many`: a JSON array of write arguments on stdin,
/// written all or none.
pub(crate) fn write_many(
    tool: &WriteTool,
    root: &Root,
    dry_run: bool,
    limit: usize,
    pretty: bool,
) -> anyhow::Result<u8> {
    let envelope = input::from_stdin(
        limit,
        "write-many read nothing on stdin: give a JSON array of writes.",
        |bytes| match serde_json::from_slice::<serde_json::Value>(&bytes) {
            Ok(writes @ serde_json::Value::Array(_)) => Ok(tool.call_as_person(
                root,
                &json!({ "writes": writes, "dry_run": dry_run }).to_string(),
            )),
            _ => Err(
                "write-many reads a JSON array of write arguments on stdin: \
                      [{\"path\": …, \"content\": …}, …].",
            ),
        },
    )?;
    answer_person(envelope, pretty)
}

/// `write-tool undo [ID | --to NAME]`.
pub(crate) fn undo(
    tool: &WriteTool,
    root: &Root,
    id: Option<String>,
    to: Option<String>,
    force: bool,
    dry_run: bool,
    pretty: bool,
) -> anyhow::Result<u8> {
    let mut arguments =
        json!({ "name": "revert", "arguments": { "dry_run": dry_run, "force": force } });
    if let Some(id) = id {
        arguments["arguments"]["change_id"] = json!(id);
    }
    if let Some(to) = to {
        arguments["arguments"]["to"] = json!(to);
    }
    answer_person(tool.call_as_host(root, &arguments.to_string()), pretty)
}

/// `write-tool checkpoint NAME`.
pub(crate) fn checkpoint(
    tool: &WriteTool,
    root: &Root,
    name: &str,
    pretty: bool,
) -> anyhow::Result<u8> {
    let arguments = json!({ "name": "checkpoint", "arguments": { "checkpoint": name } });
    let envelope = tool.call_as_host(root, &arguments.to_string());
    emit(&mut io::stdout(), &envelope, pretty)?;
    Ok(exit_code(&envelope))
}

/// A host request on the journal: its JSON answer, or the error envelope's
/// message as the error.
fn journal_request(
    tool: &WriteTool,
    root: &Root,
    arguments: serde_json::Value,
) -> anyhow::Result<serde_json::Value> {
    let envelope = tool.call_as_host(root, &arguments.to_string());
    let envelope: serde_json::Value =
        serde_json::from_str(&envelope).context("the tool's answer is not JSON")?;
    let text = envelope["text"].as_str().unwrap_or_default();
    if envelope["status"] != "success" {
        bail!("{text}");
    }
    serde_json::from_str(text).context("the journal's answer is not JSON")
}

/// `write-tool history [PATH] [--json]`.
pub(crate) fn history(
    tool: &WriteTool,
    root: &Root,
    path: Option<String>,
    as_json: bool,
) -> anyhow::Result<u8> {
    let answer = journal_request(tool, root, json!({ "journal": "history", "path": path }))?;
    let mut out = io::stdout().lock();
    if as_json {
        writeln!(out, "{}", safe_json(&answer["history"].to_string()))?;
        return Ok(EXIT_OK);
    }
    for record in answer["history"].as_array().into_iter().flatten() {
        let id = record["id"].as_str().unwrap_or("?");
        let when = record["time_ms"]
            .as_i64()
            .map_or_else(String::new, format_time);
        let kind = record["kind"].as_str().unwrap_or("?");
        let what = match kind {
            "checkpoint" => format!("'{}'", printable(record["name"].as_str().unwrap_or(""))),
            _ => record["files"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|f| {
                    format!(
                        "{} ({})",
                        printable(f["path"].as_str().unwrap_or("?")),
                        f["op"].as_str().unwrap_or("?")
                    )
                })
                .collect::<Vec<_>>()
                .join(", "),
        };
        let undoes = match (&record["reverts"], &record["to"]) {
            (serde_json::Value::String(id), _) => format!(" [undoes {}]", printable(id)),
            (_, serde_json::Value::String(name)) => {
                format!(" [back to '{}']", printable(name))
            }
            _ => String::new(),
        };
        let state = if record["voided"] == true {
            " [did not happen]"
        } else if record["undone"] == true {
            " [undone]"
        } else {
            ""
        };
        let by = if record["by"] == "model" {
            " (model)"
        } else {
            ""
        };
        let id = printable(id);
        writeln!(out, "{id:>6}  {when}  {kind:<10} {what}{undoes}{state}{by}")?;
    }
    Ok(EXIT_OK)
}

/// A time in ms since the epoch as `YYYY-MM-DD HH:MM:SS` UTC.
fn format_time(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// `write-tool journal verify|gc`: the answer as JSON; `verify` exits 1
/// when the chain is broken.
pub(crate) fn journal(
    tool: &WriteTool,
    root: &Root,
    action: super::flags::JournalAction,
) -> anyhow::Result<u8> {
    let (request, key) = match action {
        super::flags::JournalAction::Verify => ("verify", "verify"),
        super::flags::JournalAction::Gc => ("gc", "gc"),
    };
    let answer = journal_request(tool, root, json!({ "journal": request }))?;
    writeln!(
        io::stdout().lock(),
        "{}",
        safe_json(&answer[key].to_string())
    )?;
    Ok(if key == "verify" && answer[key]["ok"] != true {
        super::output::EXIT_ERROR_ENVELOPE
    } else {
        EXIT_OK
    })
}
