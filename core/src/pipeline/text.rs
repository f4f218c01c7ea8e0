//! The envelope's `text` (`docs/contract.md#text`): one line saying what
//! happened, then a line for each thing worth knowing.

use write_tool_wire::Operation;
use write_tool_wire::request::ToolName;

/// The note on a cut preview.
pub(super) const TRUNCATED: &str =
    "(Diff preview truncated; the line counts cover the whole change.)";

use super::outcome::{Outcome, cut};
use crate::edit::Tolerance;
use crate::format::TextEncoding;
use crate::params::Request;

impl Outcome {
    /// The text for the request this is the outcome of.
    pub(super) fn text(&self, request: &Request) -> String {
        if request.tool == ToolName::WriteFile
            && !request.dry_run
            && !self.unchanged
            && self.edits.is_empty()
        {
            // The `write_file` confirmation, exactly: its callers match on it.
            return format!("Successfully wrote to {}", request.path);
        }
        let mut text = self.first_line(request);
        for note in self.notes() {
            text.push('\n');
            text.push_str(&note);
        }
        text
    }

    /// What happened, in one line.
    fn first_line(&self, request: &Request) -> String {
        let path = &request.path;
        let (added, removed) = (self.diff.lines_added, self.diff.lines_removed);
        let bytes = self.new_size;
        if !self.edits.is_empty() {
            let n = self.edits.len();
            let edits = format!("{n} {}", plural(n as u64, "edit", "edits"));
            return match (request.dry_run, self.unchanged) {
                (true, _) => {
                    format!("[Dry Run] Would edit '{path}' ({edits}, +{added}/-{removed} lines).")
                }
                (false, true) => format!("No changes to '{path}' (the edits leave it as it is)."),
                (false, false) => {
                    format!("Edited '{path}' ({edits}, +{added}/-{removed} lines, {bytes} bytes).")
                }
            };
        }
        match (request.dry_run, self.unchanged, self.operation) {
            (true, _, Operation::Create) => {
                format!("[Dry Run] Would create '{path}' (+{added} lines).")
            }
            (true, _, _) => {
                format!("[Dry Run] Would update '{path}' (+{added}/-{removed} lines).")
            }
            (false, true, _) => format!("No changes to '{path}' (content identical)."),
            (false, false, Operation::Create) => {
                let lines = self.new_lines;
                format!(
                    "Created '{path}' ({lines} {}, {bytes} {}).",
                    plural(lines, "line", "lines"),
                    plural(bytes, "byte", "bytes")
                )
            }
            (false, false, _) => {
                format!("Updated '{path}' (+{added}/-{removed} lines, {bytes} bytes).")
            }
        }
    }

    /// A line for each thing worth knowing, in the contract's order.
    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(dir) = self.committed.as_ref().and_then(|c| c.created_dir.as_ref()) {
            notes.push(format!("(Created directory: {dir}/)"));
        }
        if self.split_links {
            notes.push(if self.applied {
                "(The file had other hard links, which may lie beyond the project: the tool did not read it, and replaced it with the content as given, in UTF-8; the other links keep the old content.)"
            } else {
                "(The file has other hard links, which may lie beyond the project: the tool does not read it. The preview shows the content alone; a write replaces the file with it as given, in UTF-8, and the other links keep the old content.)"
            }.to_owned());
        }
        if self.merged {
            notes.push(
                "(The file had changed since the version you viewed: your change was merged \
                 onto what it holds now, and the other change kept. The diff shows your change \
                 on it.)"
                    .to_owned(),
            );
        }
        notes.extend(self.edit_notes());
        notes.extend(self.format_note());
        if let Some((line, found)) = self.diff.placeholders.first() {
            notes.push(format!(
                "Warning: line {line} looks like an omission placeholder ({:?}) and the write removes lines: if you meant to keep the code it stands for, write the complete file.",
                cut(found.trim(), 80)
            ));
        }
        if self.diff.truncated {
            notes.push(TRUNCATED.to_owned());
        }
        notes
    }

    /// A line for each edit that matched only on a tolerant rung or once
    /// its texts were repaired.
    fn edit_notes(&self) -> Vec<String> {
        let many = self.edits.len() > 1;
        self.edits
            .iter()
            .enumerate()
            .filter(|(_, m)| m.tolerance != Tolerance::Exact || !m.repairs.is_empty())
            .map(|(i, m)| {
                let who = if many {
                    format!("Edit {}", i + 1)
                } else {
                    "The edit".to_owned()
                };
                let lines: Vec<String> = m.lines.iter().map(u64::to_string).collect();
                let mut how = Vec::new();
                if m.tolerance != Tolerance::Exact {
                    how.push(format!(
                        "when ignoring {} ({})",
                        m.tolerance.forgave(),
                        m.tolerance.name()
                    ));
                }
                if !m.repairs.is_empty() {
                    let did: Vec<String> = m
                        .repairs
                        .iter()
                        .map(|r| format!("{} ({})", r.did(), r.name()))
                        .collect();
                    how.push(format!("with {}", did.join(", ")));
                }
                format!(
                    "{who} matched at line {} only {}: check the preview.",
                    lines.join(", "),
                    how.join(" and ")
                )
            })
            .collect()
    }

    /// What was kept of the file's format, or changed.
    fn format_note(&self) -> Vec<String> {
        let format = &self.format;
        if format.binary {
            return vec![
                "(The content is not UTF-8 text: written byte for byte, and not diffed.)"
                    .to_owned(),
            ];
        }
        let mut notes = Vec::new();
        if format.old_not_text {
            notes.push("(The existing file was not valid UTF-8 nor text in another encoding the tool knows; the diff shows it with U+FFFD replacement characters, and the content is written as UTF-8.)".to_owned());
        }
        if let Some(encoding) = format.converted_from {
            let was = if encoding == (TextEncoding::Utf8 { bom: true }) {
                "UTF-8 with a byte-order mark".to_owned()
            } else {
                encoding.name()
            };
            notes.push(format!(
                "(keep_format is false: written as given, in UTF-8; the file was {was}.)"
            ));
        } else if format.encoding != TextEncoding::PLAIN {
            notes.push(match format.encoding {
                TextEncoding::Utf8 { .. } => "UTF-8 byte-order mark kept.".to_owned(),
                other => format!(
                    "Encoding kept: {}{}.",
                    other.name(),
                    if other.bom() {
                        ", with its byte-order mark"
                    } else {
                        ""
                    }
                ),
            });
        }
        if format.endings_converted
            && let Some(ending) = format.line_endings
        {
            notes.push(format!(
                "Line endings kept as {}.",
                ending.name().to_ascii_uppercase()
            ));
        }
        notes
    }
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}
