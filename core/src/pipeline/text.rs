//! The envelope's `text` (`docs/contract.md#text`): one line saying what
//! happened, then a line for each thing worth knowing.

use write_tool_wire::Operation;
use write_tool_wire::request::ToolName;

use super::outcome::{Outcome, cut};
use crate::format::TextEncoding;
use crate::params::Request;

impl Outcome {
    /// The text for the request this is the outcome of.
    pub(super) fn text(&self, request: &Request) -> String {
        let path = &request.path;
        let (added, removed) = (self.diff.lines_added, self.diff.lines_removed);
        let bytes = self.new_size;
        let format = &self.format;
        if request.tool == ToolName::WriteFile && !request.dry_run && !self.unchanged {
            // The `write_file` confirmation, exactly: its callers match on it.
            return format!("Successfully wrote to {path}");
        }
        let mut text = if request.dry_run {
            match self.operation {
                Operation::Create => format!("[Dry Run] Would create '{path}' (+{added} lines)."),
                Operation::Update => {
                    format!("[Dry Run] Would update '{path}' (+{added}/-{removed} lines).")
                }
            }
        } else if self.unchanged {
            format!("No changes to '{path}' (content identical).")
        } else {
            match self.operation {
                Operation::Create => {
                    let lines = self.new_lines;
                    format!(
                        "Created '{path}' ({lines} {}, {bytes} {}).",
                        plural(lines, "line", "lines"),
                        plural(bytes, "byte", "bytes")
                    )
                }
                Operation::Update => {
                    format!("Updated '{path}' (+{added}/-{removed} lines, {bytes} bytes).")
                }
            }
        };
        if let Some(dir) = self.committed.as_ref().and_then(|c| c.created_dir.as_ref()) {
            text.push_str(&format!("\n(Created directory: {dir}/)"));
        }
        if self.split_links && self.applied && !self.unchanged {
            text.push_str("\n(The file had other hard links; they keep the old content.)");
        }
        if self.diff.withheld {
            text.push_str(
                "\n(The file has other hard links, which may lie beyond the project: the preview leaves out its old lines.)",
            );
        }
        if format.old_not_text {
            text.push_str("\n(The existing file was not valid UTF-8 nor text in another encoding the tool knows; the diff shows it with U+FFFD replacement characters, and the content is written as UTF-8.)");
        }
        if let Some(encoding) = format.converted_from {
            let was = if encoding == (TextEncoding::Utf8 { bom: true }) {
                "UTF-8 with a byte-order mark".to_owned()
            } else {
                encoding.name()
            };
            text.push_str(&format!(
                "\n(keep_format is false: written as given, in UTF-8; the file was {was}.)"
            ));
        } else if format.encoding != TextEncoding::PLAIN {
            text.push_str(&match format.encoding {
                TextEncoding::Utf8 { .. } => "\nUTF-8 byte-order mark kept.".to_owned(),
                other => format!(
                    "\nEncoding kept: {}{}.",
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
            text.push_str(&format!(
                "\nLine endings kept as {}.",
                ending.name().to_ascii_uppercase()
            ));
        }
        if let Some((line, found)) = self.diff.placeholders.first() {
            text.push_str(&format!(
                "\nWarning: line {line} looks like an omission placeholder ({:?}) and the write removes lines: if you meant to keep the code it stands for, write the complete file.",
                cut(found.trim(), 80)
            ));
        }
        if self.diff.truncated {
            text.push_str("\n(Diff preview truncated; the line counts cover the whole change.)");
        }
        text
    }
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}
