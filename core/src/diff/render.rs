//! The preview: a standard unified diff (`docs/contract.md#diff`), cut at
//! whole lines to the preview's limits.

use similar::udiff::UnifiedHunkHeader;
use similar::{ChangeTag, DiffOp};

use super::limits::{CONTEXT_LINES, DiffLimits, TRUNCATION_MARK};

/// The unified diff of `ops` between `old` and `new` lines for the file at
/// `path`, as much of it as `limits` allow, and whether it was cut.
pub(super) fn unified(
    ops: Vec<DiffOp>,
    old: &[&str],
    new: &[&str],
    path: &str,
    limits: &DiffLimits,
) -> (String, bool) {
    let mut preview = Preview::new(limits);
    'render: {
        if !preview.push(&format!("--- a/{path}\n")) || !preview.push(&format!("+++ b/{path}\n")) {
            break 'render;
        }
        let mut line = String::new();
        for hunk in similar::group_diff_ops(ops, CONTEXT_LINES) {
            if !preview.push(&format!("{}\n", UnifiedHunkHeader::new(&hunk))) {
                break 'render;
            }
            let changes = hunk.iter().flat_map(|op| op.iter_changes(old, new));
            for change in changes {
                line.clear();
                line.push_str(match change.tag() {
                    ChangeTag::Equal => " ",
                    ChangeTag::Delete => "-",
                    ChangeTag::Insert => "+",
                });
                line.push_str(change.value());
                let missing_newline = !line.ends_with('\n');
                if missing_newline {
                    line.push('\n');
                }
                if !preview.push(&line) {
                    break 'render;
                }
                if missing_newline && !preview.push("\\ No newline at end of file\n") {
                    break 'render;
                }
            }
        }
    }
    preview.finish()
}

/// Collects whole lines until either limit would be passed.
pub(super) struct Preview<'a> {
    limits: &'a DiffLimits,
    text: String,
    lines: usize,
    truncated: bool,
}

impl<'a> Preview<'a> {
    pub(super) fn new(limits: &'a DiffLimits) -> Self {
        Preview {
            limits,
            text: String::new(),
            lines: 0,
            truncated: false,
        }
    }

    /// Append one line (with its newline); false once the preview is full.
    pub(super) fn push(&mut self, line: &str) -> bool {
        if self.lines >= self.limits.max_lines
            || self.text.len() + line.len() > self.limits.max_bytes
        {
            self.truncated = true;
            return false;
        }
        self.text.push_str(line);
        self.lines += 1;
        true
    }

    pub(super) fn finish(mut self) -> (String, bool) {
        if self.truncated {
            self.text.push_str(TRUNCATION_MARK);
        }
        (self.text, self.truncated)
    }
}
