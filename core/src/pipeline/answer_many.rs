//! The answer of a change of several files (`write_many`, a patch, a
//! revert): one envelope, a preview of every file, a line per file.

use std::time::Instant;

use serde_json::Value;
use write_tool_wire::envelope::{
    Context, Data, Envelope, FileResult, Operation, Stats, Status, Warning, WarningKind,
    WriteStats, elapsed_ms,
};

use crate::diff::limits::{MAX_PREVIEW_BYTES, MAX_PREVIEW_LINES, TRUNCATION_MARK};
use crate::error::ToolError;

use super::outcome::cut;

/// One file of a change of several, as the envelope reports it.
#[derive(Debug)]
pub(super) struct GroupFile {
    /// As `path_resolved`.
    pub(super) path: String,
    /// What happens to it.
    pub(super) operation: Operation,
    /// Its diff preview.
    pub(super) preview: String,
    /// Whether the preview was cut (or withheld).
    pub(super) truncated: bool,
    /// Whole-diff counts.
    pub(super) lines_added: u64,
    /// Whole-diff counts.
    pub(super) lines_removed: u64,
    /// Its size before and after.
    pub(super) sizes: (u64, u64),
    /// Whether it changes at all.
    pub(super) changes: bool,
    /// Placeholder warnings: line and text.
    pub(super) warnings: Vec<(u64, String)>,
    /// The encoding it is written in.
    pub(super) encoding: String,
    /// A patch's move: `to '…'` on the old path, `from '…'` on the new.
    pub(super) moved: Option<String>,
}

/// What a change of several files did or would do.
#[derive(Debug)]
pub(super) struct Group {
    /// The files, in order.
    pub(super) files: Vec<GroupFile>,
    /// Whether it was applied.
    pub(super) applied: bool,
    /// Its record's id.
    pub(super) change_id: Option<String>,
    /// The first line of `text`.
    pub(super) headline: String,
}

/// The envelope of a change of several files (`write_many`, a revert),
/// or of the reason it was refused.
pub(super) fn group_envelope(
    result: Result<Group, ToolError>,
    dry_run: bool,
    echo: Value,
    start: Instant,
) -> Envelope {
    match result {
        Ok(group) => group.into_envelope(dry_run, echo, elapsed_ms(start)),
        Err(err) => err.into_envelope(elapsed_ms(start), echo, None),
    }
}

/// Most bytes and lines of the previews of a change of several, together.
const GROUP_PREVIEW_BYTES: usize = 2 * MAX_PREVIEW_BYTES;
const GROUP_PREVIEW_LINES: usize = 2 * MAX_PREVIEW_LINES;

impl Group {
    /// The envelope.
    pub(super) fn into_envelope(self, dry_run: bool, echo: Value, time_ms: u64) -> Envelope {
        let (preview, truncated) = self.preview();
        let status = if dry_run || truncated {
            Status::Partial
        } else {
            Status::Success
        };
        let encodings: std::collections::BTreeSet<&str> =
            self.files.iter().map(|f| f.encoding.as_str()).collect();
        let encoding = match encodings.len() {
            1 => encodings.into_iter().next().unwrap_or("utf-8").to_owned(),
            _ => "mixed".to_owned(),
        };
        let files = self
            .files
            .iter()
            .map(|f| FileResult {
                path: f.path.clone(),
                operation: f.operation,
                bytes_written: self.written(f),
                lines_added: f.lines_added,
                lines_removed: f.lines_removed,
            })
            .collect();
        Envelope::answer(
            status,
            self.text(),
            Some(Data {
                applied: self.applied,
                diff_preview: preview,
                diff_truncated: truncated,
                encoding,
                warnings: self.warnings(),
                change_id: self.change_id.clone(),
                files,
                ..Data::of(Operation::Many)
            }),
            Stats {
                time_ms,
                write: Some(self.stats()),
            },
            Context::of(echo, None),
        )
    }

    /// One preview of every file that changes, whole files while they fit
    /// the group's bound; whether it was cut.
    fn preview(&self) -> (String, bool) {
        let mut preview = String::new();
        let mut lines = 0;
        let mut truncated = false;
        for f in self.files.iter().filter(|f| f.changes) {
            let n = f.preview.lines().count();
            if preview.len() + f.preview.len() > GROUP_PREVIEW_BYTES
                || lines + n > GROUP_PREVIEW_LINES
            {
                truncated = true;
                break;
            }
            preview.push_str(&f.preview);
            lines += n;
            truncated |= f.truncated;
        }
        if truncated && !preview.ends_with(TRUNCATION_MARK) {
            preview.push_str(TRUNCATION_MARK);
            preview.push('\n');
        }
        (preview, truncated)
    }

    /// The headline, and a line per file.
    fn text(&self) -> String {
        let mut text = self.headline.clone();
        for f in &self.files {
            let what = match (f.changes, f.operation, &f.moved) {
                (_, Operation::Delete, Some(moved)) => format!("moved {moved}"),
                (_, _, Some(moved)) => {
                    format!("moved {moved} (+{}/-{})", f.lines_added, f.lines_removed)
                }
                (false, _, _) => "unchanged".to_owned(),
                (true, Operation::Create, _) => format!("create (+{})", f.lines_added),
                (true, Operation::Delete, _) => format!("remove (-{})", f.lines_removed),
                (true, _, _) => format!("update (+{}/-{})", f.lines_added, f.lines_removed),
            };
            text.push_str(&format!("\n- '{}': {what}", f.path));
        }
        text
    }

    /// The bytes written to `f`.
    fn written(&self, f: &GroupFile) -> u64 {
        if self.applied && f.changes {
            f.sizes.1
        } else {
            0
        }
    }

    /// The summed stats.
    fn stats(&self) -> WriteStats {
        WriteStats {
            bytes_written: self.files.iter().map(|f| self.written(f)).sum(),
            original_size: self.files.iter().map(|f| f.sizes.0).sum(),
            new_size: self
                .files
                .iter()
                .map(|f| if self.applied { f.sizes.1 } else { f.sizes.0 })
                .sum(),
            lines_added: self.files.iter().map(|f| f.lines_added).sum(),
            lines_removed: self.files.iter().map(|f| f.lines_removed).sum(),
        }
    }

    /// The placeholder warnings, each with its file's path.
    fn warnings(&self) -> Vec<Warning> {
        self.files
            .iter()
            .flat_map(|f| {
                f.warnings.iter().map(|(line, text)| Warning {
                    kind: WarningKind::OmissionPlaceholder,
                    line: *line,
                    text: cut(&format!("{}: {text}", f.path), 200).to_owned(),
                })
            })
            .collect()
    }
}
