//! Last, **answer**: what the stages found and did, dressed as the
//! envelope (`docs/contract.md#envelope`).

use serde_json::Value;
use write_tool_wire::envelope::{
    Context, Data, EditMatch, Envelope, LockValues, Operation, Stats, Status, Warning, WarningKind,
    WriteStats,
};

use crate::diff::{self, DiffSummary};
use crate::edit::Matched;
use crate::format::{LineEnding, NewText, Plan, TextEncoding};
use crate::fs::Existing;
use crate::params::Request;

use super::commit::Committed;

/// What a call found and did, gathered from the stages' outputs.
#[derive(Debug)]
pub(super) struct Outcome {
    /// Whether the target existed.
    pub(super) operation: Operation,
    /// The old file's size (0 when there was none).
    pub(super) original_size: u64,
    /// The old file had other hard links: it was not read.
    pub(super) split_links: bool,
    /// What the format stage decided.
    pub(super) format: FormatKept,
    /// The diff of old against new.
    pub(super) diff: DiffSummary,
    /// The new bytes are the old ones.
    pub(super) unchanged: bool,
    /// The size of the new bytes.
    pub(super) new_size: u64,
    /// Lines of a created file.
    pub(super) new_lines: u64,
    /// Whether the file now holds the content (it was written, or already
    /// held it).
    pub(super) applied: bool,
    /// What the commit left, when it ran.
    pub(super) committed: Option<Committed>,
    /// The lock values of the file after the call, if there is one.
    pub(super) lock: Option<LockValues>,
    /// The journal's id of the change, when it recorded one.
    pub(super) change_id: Option<String>,
    /// An edit's matches, in order; empty for a write.
    pub(super) edits: Vec<Matched>,
    /// The change was merged onto a file changed since its base.
    pub(super) merged: bool,
}

/// The format a call kept or changed, as the envelope reports it.
#[derive(Debug, Clone, Copy)]
pub(super) struct FormatKept {
    /// The encoding the file is written in.
    pub(super) encoding: TextEncoding,
    /// The old file's uniform line ending, given to the content.
    pub(super) line_endings: Option<LineEnding>,
    /// The content's line endings were changed to the file's.
    pub(super) endings_converted: bool,
    /// `keep_format: false` over a file of another encoding: the one it had.
    pub(super) converted_from: Option<TextEncoding>,
    /// The old file is not text in any encoding the tool knows.
    pub(super) old_not_text: bool,
    /// The new bytes are not text (a `content_base64` write): written as
    /// given, with no diff.
    pub(super) binary: bool,
}

impl Outcome {
    /// The outcome of a call that stops before its commit (a dry run, or
    /// content identical to the file's).
    pub(super) fn new(
        old: Option<&Existing>,
        plan: &Plan<'_>,
        new: &NewText<'_>,
        new_size: u64,
        diff: DiffSummary,
        unchanged: bool,
    ) -> Outcome {
        Outcome {
            operation: match old {
                Some(_) => Operation::Update,
                None => Operation::Create,
            },
            original_size: old.map_or(0, |o| o.bytes.len() as u64),
            split_links: false,
            format: FormatKept {
                encoding: plan.encoding,
                line_endings: plan.line_endings,
                endings_converted: new.endings_converted,
                converted_from: plan.converted_from,
                old_not_text: plan.old_not_text,
                binary: false,
            },
            diff,
            unchanged,
            new_size,
            new_lines: if old.is_none() {
                diff::count_lines(&new.text)
            } else {
                0
            },
            applied: false,
            committed: None,
            lock: None,
            change_id: None,
            edits: Vec::new(),
            merged: false,
        }
    }

    /// The outcome for a file's old name when a patch moves it: removed,
    /// its lines shown under the new name, not here.
    pub(super) fn moved_away(&self) -> Outcome {
        Outcome::removed(self.original_size, self.format, DiffSummary::default())
    }

    /// The outcome of removing a symbolic link whose target's text is
    /// `len` bytes long: `diff` shows it going.
    pub(super) fn link_removed(len: u64, diff: DiffSummary) -> Outcome {
        let format = FormatKept {
            encoding: TextEncoding::Utf8 { bom: false },
            line_endings: None,
            endings_converted: false,
            converted_from: None,
            old_not_text: false,
            binary: false,
        };
        Outcome::removed(len, format, diff)
    }

    /// A removal of `original_size` bytes, before its commit.
    fn removed(original_size: u64, format: FormatKept, diff: DiffSummary) -> Outcome {
        Outcome {
            operation: Operation::Delete,
            original_size,
            split_links: false,
            format,
            diff,
            unchanged: false,
            new_size: 0,
            new_lines: 0,
            applied: false,
            committed: None,
            lock: None,
            change_id: None,
            edits: Vec::new(),
            merged: false,
        }
    }

    /// The target is a file with other hard links, replaced without being
    /// read: an update whose old side is unknown, so the preview is not the
    /// whole change.
    pub(super) fn unread_shared(&mut self) {
        self.operation = Operation::Update;
        self.split_links = true;
        self.new_lines = 0;
    }

    /// The envelope for `request`, `echo` its `params_input`.
    pub(super) fn into_envelope(
        self,
        request: &Request,
        echo: Value,
        time_ms: u64,
        path_resolved: Option<String>,
    ) -> Envelope {
        let incomplete = self.diff.truncated || self.split_links;
        let status = if request.dry_run || incomplete {
            Status::Partial
        } else {
            Status::Success
        };
        let text = self.text(request);
        // A call that did not write leaves the file as it was.
        let (bytes_written, new_size) = match self.committed {
            Some(_) => (self.new_size, self.new_size),
            None => (0, self.original_size),
        };
        let format = self.format;
        Envelope::answer(
            status,
            text,
            Some(Data {
                applied: self.applied,
                diff_preview: self.diff.preview,
                diff_truncated: incomplete,
                encoding: match format.binary {
                    true => write_tool_wire::envelope::BINARY.to_owned(),
                    false => format.encoding.name(),
                },
                bom: format.encoding.bom() && !format.binary,
                line_endings: format.line_endings.map(|e| e.name().to_owned()),
                lock: self.lock,
                warnings: self
                    .diff
                    .placeholders
                    .into_iter()
                    .map(|(line, text)| Warning {
                        kind: WarningKind::OmissionPlaceholder,
                        line,
                        text: cut(&text, 200).to_owned(),
                    })
                    .collect(),
                change_id: self.change_id,
                edits: self
                    .edits
                    .iter()
                    .map(|m| EditMatch {
                        tolerance: m.tolerance.name().to_owned(),
                        lines: m.lines.clone(),
                        repaired: m.repairs.iter().map(|r| r.name().to_owned()).collect(),
                    })
                    .collect(),
                merged: self.merged,
                ..Data::of(self.operation)
            }),
            Stats {
                time_ms,
                write: Some(WriteStats {
                    bytes_written,
                    original_size: self.original_size,
                    new_size,
                    lines_added: self.diff.lines_added,
                    lines_removed: self.diff.lines_removed,
                }),
            },
            Context::of(echo, path_resolved),
        )
    }
}

/// A symbolic link as a diff shows it: one line naming where it points
/// (its target is text the journal keeps, never what it points to).
pub(super) fn link_text(to: &str) -> String {
    // Escaped, so that a line break in a target cannot make lines of its
    // own in the preview.
    format!("(a symbolic link to '{}')\n", to.escape_debug())
}

/// `text` cut to at most `max` bytes, at a character boundary.
pub(super) fn cut(text: &str, max: usize) -> &str {
    &text[..text.floor_char_boundary(max)]
}
