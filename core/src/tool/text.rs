//! The envelope's `text` (`docs/contract.md#text`): one line saying what
//! happened, then a line for each thing worth knowing.

use write_tool_wire::Operation;
use write_tool_wire::request::ToolName;

use super::Done;
use crate::diff;
use crate::params::Request;

impl Done {
    /// The text for the request this is the outcome of.
    pub(super) fn text(&self, request: &Request) -> String {
        let path = &request.path;
        let (added, removed) = (self.diff.lines_added, self.diff.lines_removed);
        let bytes = request.content.len();
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
                    let lines = diff::count_lines(&request.content);
                    format!(
                        "Created '{path}' ({lines} {}, {bytes} {}).",
                        plural(lines, "line", "lines"),
                        plural(bytes as u64, "byte", "bytes")
                    )
                }
                Operation::Update => {
                    format!("Updated '{path}' (+{added}/-{removed} lines, {bytes} bytes).")
                }
            }
        };
        if let Some(dir) = &self.created_dir {
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
        if self.old_not_utf8 {
            text.push_str("\n(The existing file was not valid UTF-8; the diff shows it with U+FFFD replacement characters.)");
        }
        if self.diff.truncated {
            text.push_str("\n(Diff preview truncated. Use Read to verify full content.)");
        }
        text
    }
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}
