//! The diff preview (`docs/contract.md#diff`): a standard unified diff, cut
//! to a size an agent can read, with counts over the whole diff.
//!
//! The diff runs under a budget of work ([`DiffLimits::work_for`]): once it
//! is spent, the search stops refining and reports the rest as a
//! replacement, so a pathological input yields a coarser but still correct
//! diff instead of a hang, and the same one on every machine.
//!
//! The line operations come from `diff/ops.rs`: exactly the ones
//! `similar`'s `TextDiff::diff_lines` with Myers would give, computed with
//! less work; `diff/render.rs` turns them into the preview.

pub(crate) mod limits;
mod lines;
mod merge3;
mod myers;
mod numbering;
mod ops;
mod preflight;
pub use merge3::{Conflict, Merged, merge3};
mod render;

use std::ops::Range;

use similar::{DiffOp, DiffTag};

use limits::Budget;
pub use limits::DiffLimits;
use lines::lines;
pub(crate) use lines::same_bytes;
use ops::line_ops;

/// The preview and the whole-diff counts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiffSummary {
    /// Unified diff text, every line ending in `\n`; when cut, followed by
    /// [`TRUNCATION_MARK`]. Empty when old and new are equal.
    pub preview: String,
    /// Whether the preview was cut.
    pub truncated: bool,
    /// Lines added over the whole diff.
    pub lines_added: u64,
    /// Lines removed over the whole diff.
    pub lines_removed: u64,
    /// Lines the diff adds that are omission placeholders
    /// ([`crate::placeholder`]), when it also removes lines: their number
    /// in the new text (from 1) and the line, at most
    /// [`MAX_PLACEHOLDERS`].
    pub placeholders: Vec<(u64, String)>,
}

/// The most placeholder lines one diff reports.
pub const MAX_PLACEHOLDERS: usize = 5;

/// A run of lines the diff found in both texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The lines' numbers in the old text, from 0.
    pub old_lines: Range<usize>,
    /// Where they are in the new text, in bytes.
    pub new_bytes: Range<usize>,
}

/// Diff `old` against `new` for the file at root-relative `path`.
pub fn diff(old: &str, new: &str, path: &str, limits: &DiffLimits) -> DiffSummary {
    diff_keeping(old, new, path, limits).0
}

/// The lines a diff keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keeping {
    /// The runs of kept lines, in order.
    pub runs: Vec<Kept>,
    /// How many lines the old text has.
    pub old_line_count: usize,
}

/// [`diff`], and the lines it keeps: what a writer that re-encodes the new
/// text can copy from the old file instead.
pub fn diff_keeping(
    old: &str,
    new: &str,
    path: &str,
    limits: &DiffLimits,
) -> (DiffSummary, Keeping) {
    let mut budget = Budget::new(limits.work_for(old.len().saturating_add(new.len())));
    let old_lines = lines(old);
    let new_lines = lines(new);
    let (ops, coarse) = line_ops(&old_lines, &new_lines, &mut budget);
    let kept = Keeping {
        runs: kept_runs(&ops, &new_lines, new),
        old_line_count: old_lines.len(),
    };
    (
        summary(ops, &old_lines, &new_lines, path, limits, coarse),
        kept,
    )
}

/// The equal runs of `ops`, with the new side in bytes of `new`, which
/// `new_lines` split.
fn kept_runs(ops: &[DiffOp], new_lines: &[&str], new: &str) -> Vec<Kept> {
    let offset = |line: &str| line.as_ptr() as usize - new.as_ptr() as usize;
    ops.iter()
        .filter(|op| op.tag() == DiffTag::Equal && !op.new_range().is_empty())
        .map(|op| {
            let (first, last) = (op.new_range().start, op.new_range().end - 1);
            Kept {
                old_lines: op.old_range(),
                new_bytes: offset(new_lines[first])
                    ..offset(new_lines[last]) + new_lines[last].len(),
            }
        })
        .collect()
}

/// The counts, placeholders and preview of `ops`.
fn summary(
    ops: Vec<DiffOp>,
    old_lines: &[&str],
    new_lines: &[&str],
    path: &str,
    limits: &DiffLimits,
    coarse: bool,
) -> DiffSummary {
    let (mut lines_added, mut lines_removed) = (0u64, 0u64);
    for op in &ops {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => {}
            DiffTag::Delete => lines_removed += old_range.len() as u64,
            DiffTag::Insert => lines_added += new_range.len() as u64,
            DiffTag::Replace => {
                lines_removed += old_range.len() as u64;
                lines_added += new_range.len() as u64;
            }
        }
    }
    if lines_added == 0 && lines_removed == 0 {
        return DiffSummary::default();
    }

    // A diff cut short by its budget is coarse: most of its "added" lines
    // are the file's own, and looking at them all would cost as much as the
    // search the budget saved.
    let placeholders = if lines_removed > 0 && !coarse {
        placeholders(&ops, new_lines)
    } else {
        Vec::new()
    };

    let (preview, truncated) = render::unified(ops, old_lines, new_lines, path, limits);
    DiffSummary {
        preview,
        truncated,
        lines_added,
        lines_removed,
        placeholders,
    }
}

/// The omission placeholders among the lines `ops` adds, by the shape of
/// the change around each (`docs/contract.md#placeholders`): a placeholder
/// stands for lines kept, so it counts only in a hunk (a run of changes
/// between kept lines) that removes lines: one that says so where the hunk
/// removes any, a bare ellipsis where it removes a block (two lines or
/// more) and adds fewer than it removes.
fn placeholders(ops: &[DiffOp], new_lines: &[&str]) -> Vec<(u64, String)> {
    use crate::placeholder::{Placeholder, classify};
    let mut found = Vec::new();
    for hunk in ops.split(|op| op.tag() == DiffTag::Equal) {
        let removed: usize = hunk.iter().map(|op| op.old_range().len()).sum();
        if removed == 0 {
            continue;
        }
        let added: usize = hunk.iter().map(|op| op.new_range().len()).sum();
        let block_gone = removed >= 2 && added < removed;
        for index in hunk.iter().flat_map(DiffOp::new_range) {
            let line = new_lines[index];
            let counts = match classify(line) {
                Some(Placeholder::Says) => true,
                Some(Placeholder::Bare) => block_gone,
                None => false,
            };
            if counts {
                found.push((index as u64 + 1, line.trim_end().to_owned()));
                if found.len() == MAX_PLACEHOLDERS {
                    return found;
                }
            }
        }
    }
    found
}

/// Number of lines in `text`, counting a final line without a newline.
pub fn count_lines(text: &str) -> u64 {
    let newlines = text.bytes().filter(|&b| b == b'\n').count() as u64;
    newlines + u64::from(!text.is_empty() && !text.ends_with('\n'))
}

#[cfg(test)]
mod tests {
    use super::limits::*;
    use super::*;

    use render::Preview;
    use similar::{Algorithm, ChangeTag};

    /// The diff as `similar`'s `TextDiff` renders it: the implementation
    /// before lines were numbered by this module, kept as the oracle that
    /// the faster path must match byte for byte.
    fn text_diff_oracle(old: &str, new: &str, path: &str) -> DiffSummary {
        use similar::TextDiff;
        let text_diff = TextDiff::configure()
            .algorithm(Algorithm::Myers)
            .diff_lines(old, new);
        let limits = DiffLimits::default();
        let (mut added, mut removed) = (0u64, 0u64);
        for op in text_diff.ops() {
            let (_, old_range, new_range) = op.as_tag_tuple();
            if op.tag() != DiffTag::Equal {
                removed += old_range.len() as u64;
                added += new_range.len() as u64;
            }
        }
        if added == 0 && removed == 0 {
            return DiffSummary::default();
        }
        let mut preview = Preview::new(&limits);
        'render: {
            if !preview.push(&format!("--- a/{path}\n"))
                || !preview.push(&format!("+++ b/{path}\n"))
            {
                break 'render;
            }
            let mut unified = text_diff.unified_diff();
            unified.context_radius(CONTEXT_LINES);
            for hunk in unified.iter_hunks() {
                if !preview.push(&format!("{}\n", hunk.header())) {
                    break 'render;
                }
                for change in hunk.iter_changes() {
                    let sign = match change.tag() {
                        ChangeTag::Equal => " ",
                        ChangeTag::Delete => "-",
                        ChangeTag::Insert => "+",
                    };
                    let mut line = format!("{sign}{}", change.value());
                    let missing_newline = !line.ends_with('\n');
                    if missing_newline {
                        line.push('\n');
                    }
                    if !preview.push(&line)
                        || (missing_newline && !preview.push("\\ No newline at end of file\n"))
                    {
                        break 'render;
                    }
                }
            }
        }
        let (preview, truncated) = preview.finish();
        DiffSummary {
            preview,
            truncated,
            lines_added: added,
            lines_removed: removed,
            placeholders: Vec::new(),
        }
    }

    fn same_as_text_diff(old: &str, new: &str) {
        use similar::DiffableStr;
        assert_eq!(lines(old), old.tokenize_lines());
        assert_eq!(lines(new), new.tokenize_lines());
        let (ops, coarse) = line_ops(&lines(old), &lines(new), &mut Budget::new(u64::MAX));
        assert!(!coarse);
        let want = similar::TextDiff::configure()
            .algorithm(Algorithm::Myers)
            .diff_lines(old, new)
            .ops()
            .to_vec();
        assert_eq!(ops, want);
        let limits = DiffLimits {
            budget_ms: 3_600_000,
            ..DiffLimits::default()
        };
        assert_eq!(
            diff(old, new, "f", &limits),
            text_diff_oracle(old, new, "f")
        );
    }

    #[test]
    fn numbered_lines_give_text_diffs_ops_on_large_inputs() {
        let text = |n: usize, tag: &str| -> String {
            (0..n)
                .map(|i| format!("{tag} line {i}: the quick brown fox\n"))
                .collect()
        };
        let every = |base: &str, step: usize| -> String {
            base.lines()
                .enumerate()
                .map(|(i, l)| {
                    if i % step == step / 2 {
                        format!("{l} (changed)\n")
                    } else {
                        format!("{l}\n")
                    }
                })
                .collect()
        };
        let mib = text(20_000, "m");
        same_as_text_diff(&mib, &every(&mib, 2_000));
        same_as_text_diff(&mib, &text(20_000, "rewritten"));
        // Many repeated lines: the case where which of several equal
        // diffs is chosen depends on every detail of the algorithm.
        let repeated: String = (0..3_000)
            .map(|i| ["{\n", "}\n", "\n", "x\n"][i % 4])
            .collect();
        let shuffled: String = (0..3_000)
            .map(|i| ["}\n", "\n", "{\n", "y\n", "x\n"][(i * 7) % 5])
            .collect();
        same_as_text_diff(&repeated, &shuffled);
        same_as_text_diff("a\r\nb\rc\n", "a\nb\r\nc");
    }

    /// Apply a (complete) unified diff produced by [`diff`] to `old`.
    fn apply(old: &str, patch: &str) -> String {
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let mut out = String::new();
        let mut at = 0usize;
        // Not `lines()`: it would also eat a `\r` that belongs to the text.
        let mut lines = patch
            .split_inclusive('\n')
            .map(|l| l.strip_suffix('\n').unwrap_or(l))
            .skip(2)
            .peekable();
        while let Some(header) = lines.next() {
            let old_start: usize = header
                .trim_start_matches("@@ -")
                .split([',', ' '])
                .next()
                .and_then(|n| n.parse().ok())
                .expect("hunk header");
            // An empty old range names the line before it.
            let start = if header.starts_with(&format!("@@ -{old_start},0 ")) {
                old_start
            } else {
                old_start - 1
            };
            while at < start {
                out.push_str(old_lines[at]);
                at += 1;
            }
            while let Some(line) = lines.peek().copied() {
                if line.starts_with("@@") {
                    break;
                }
                lines.next();
                let no_newline = lines.peek().is_some_and(|l| l.starts_with('\\'));
                if no_newline {
                    lines.next();
                }
                let body = &line[1..];
                let eol = if no_newline { "" } else { "\n" };
                match &line[..1] {
                    " " => {
                        out.push_str(body);
                        out.push_str(eol);
                        at += 1;
                    }
                    "-" => at += 1,
                    "+" => {
                        out.push_str(body);
                        out.push_str(eol);
                    }
                    other => panic!("bad line {other:?}"),
                }
            }
        }
        for rest in &old_lines[at..] {
            out.push_str(rest);
        }
        out
    }

    fn roundtrip(old: &str, new: &str) -> DiffSummary {
        let summary = diff(old, new, "f.txt", &DiffLimits::default());
        assert!(!summary.truncated);
        assert_eq!(apply(old, &summary.preview), new, "old={old:?} new={new:?}");
        summary
    }

    #[test]
    fn unified_format_for_a_create() {
        let s = roundtrip("", "a\nb\n");
        insta::assert_snapshot!(s.preview, @r"
        --- a/f.txt
        +++ b/f.txt
        @@ -0,0 +1,2 @@
        +a
        +b
        ");
        assert_eq!((s.lines_added, s.lines_removed), (2, 0));
    }

    #[test]
    fn no_final_newline_cases() {
        let s = roundtrip("a\nb", "a\nc");
        insta::assert_snapshot!(s.preview, @r"
        --- a/f.txt
        +++ b/f.txt
        @@ -1,2 +1,2 @@
         a
        -b
        \ No newline at end of file
        +c
        \ No newline at end of file
        ");
        roundtrip("a\nb\n", "a\nb");
        roundtrip("a\nb", "a\nb\n");
        roundtrip("x", "");
        roundtrip("", "x");
        roundtrip(
            "1\n2\n3\n4\n5\n6\n7\n8\nend",
            "0\n1\n2\n3\n4\n5\n6\n7\n8\nend",
        );
    }

    #[test]
    fn identical_inputs_have_an_empty_preview() {
        let s = diff("same\n", "same\n", "f", &DiffLimits::default());
        assert_eq!(s, DiffSummary::default());
    }

    #[test]
    fn several_hunks_apply() {
        let old: String = (0..60).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 5\n", "five\n")
            .replace("line 40\n", "")
            .replace("line 59\n", "last\nmore\n");
        let s = roundtrip(&old, &new);
        assert_eq!((s.lines_added, s.lines_removed), (3, 3));
        assert_eq!(s.preview.matches("@@ -").count(), 3);
    }

    #[test]
    fn exactly_the_line_limit_is_not_truncated() {
        // headers (2) + hunk header (1) + 97 added lines = 100 lines.
        let new: String = (0..97).map(|i| format!("{i}\n")).collect();
        let s = roundtrip("", &new);
        assert_eq!(s.preview.lines().count(), 100);
        let new: String = (0..98).map(|i| format!("{i}\n")).collect();
        let s = diff("", &new, "f.txt", &DiffLimits::default());
        assert!(s.truncated);
        assert!(s.preview.ends_with("\n... (truncated)"));
        assert_eq!(s.preview.lines().count(), 101);
        assert_eq!(s.lines_added, 98, "counts cover the whole diff");
    }

    #[test]
    fn byte_limit_cuts_at_whole_lines() {
        let new: String = (0..50).map(|i| format!("{i:0>299}\n")).collect();
        let s = diff("", &new, "f.txt", &DiffLimits::default());
        assert!(s.truncated);
        let kept = s.preview.strip_suffix(TRUNCATION_MARK).expect("mark");
        assert!(kept.len() <= MAX_PREVIEW_BYTES);
        assert!(kept.ends_with('\n'));
        assert!(kept.lines().skip(3).all(|l| l.len() == 300));
        assert_eq!(s.lines_added, 50);
    }

    #[test]
    fn the_work_allowed_is_a_share_of_the_budget_in_proportion_to_the_text() {
        let limits = DiffLimits::default();
        let mib = 1 << 20;
        let steps = |ms: u64| ms * STEPS_PER_MS;
        assert_eq!(limits.budget_ms, 1_000);
        let least = steps(1_000) / 32;
        assert_eq!(limits.work_for(0), least, "the least share");
        assert_eq!(limits.work_for(mib), least, "1/64 is under it");
        assert_eq!(limits.work_for(3 * mib), steps(1_000) * 3 / 64);
        assert_eq!(limits.work_for(10 * mib), steps(1_000) * 10 / 64);
        assert_eq!(limits.work_for(FULL_BUDGET_BYTES), steps(1_000));
        assert_eq!(limits.work_for(usize::MAX), steps(1_000), "capped");
        let larger = DiffLimits {
            budget_ms: 100_000,
            ..limits
        };
        assert_eq!(
            larger.work_for(10 * mib),
            steps(100_000) * 10 / 64,
            "scaled"
        );
        assert_eq!(larger.work_for(0), steps(100_000) / 32);
        let zero = DiffLimits {
            budget_ms: 0,
            ..limits
        };
        assert_eq!(zero.work_for(mib), 0);
    }

    /// A diff cut short reports no placeholders: its "added" lines are
    /// mostly the file's own. The exact diff of the same texts does.
    #[test]
    fn a_coarse_diff_reports_no_placeholders() {
        let old: String = (0..3000).map(|i| format!("{}\n", i * 7 % 1000)).collect();
        let mut new: String = (0..3000).map(|i| format!("{}\n", i * 11 % 1000)).collect();
        new.push_str("// ... rest of the code unchanged ...\n");
        let coarse = DiffLimits {
            budget_ms: 0,
            ..DiffLimits::default()
        };
        assert!(diff(&old, &new, "f", &coarse).placeholders.is_empty());
        let exact = DiffLimits {
            budget_ms: 3_600_000,
            ..DiffLimits::default()
        };
        assert!(!diff(&old, &new, "f", &exact).placeholders.is_empty());
    }

    /// The budget is the share of old and new text together: a large new
    /// text buys the work of numbering itself.
    #[test]
    fn the_budget_is_a_share_of_both_texts() {
        let half = "x\n".repeat(2 << 20);
        let new = format!("{half}a\n{half}");
        // 8 MiB of new text: 5,000 ms buy its share, 1/8 of 350 million
        // steps, which covers hashing its 4 million lines (34 million);
        // the least share, what the old text alone would buy, does not.
        let limits = DiffLimits {
            budget_ms: 5_000,
            ..DiffLimits::default()
        };
        let s = diff("a\n", &new, "f", &limits);
        assert_eq!(s.lines_removed, 0, "exact within old and new's share");
    }

    #[test]
    fn a_diff_without_budget_is_coarse_but_correct() {
        let old: String = (0..3000).map(|i| format!("{}\n", i * 7 % 1000)).collect();
        let new: String = (0..3000).map(|i| format!("{}\n", i * 11 % 1000)).collect();
        let limits = DiffLimits {
            max_lines: usize::MAX,
            max_bytes: usize::MAX,
            budget_ms: 0,
        };
        let s = diff(&old, &new, "f.txt", &limits);
        assert!(!s.truncated);
        assert_eq!(apply(&old, &s.preview), new);
        let added = s
            .preview
            .lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .count();
        assert_eq!(added as u64, s.lines_added);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// The untruncated preview applied to the old content gives the new
        /// content, and the counts match the diff's `+` and `-` lines.
        #[test]
        fn numbered_lines_give_text_diffs_output(
            old in proptest::collection::vec(proptest::sample::select(LINES.to_vec()), 0..60),
            new in proptest::collection::vec(proptest::sample::select(LINES.to_vec()), 0..60),
            old_end: bool,
            new_end: bool,
        ) {
            same_as_text_diff(&join(&old, old_end), &join(&new, new_end));
        }

        #[test]
        fn preview_round_trips_and_counts_match(
            old in proptest::collection::vec(proptest::sample::select(LINES.to_vec()), 0..40),
            new in proptest::collection::vec(proptest::sample::select(LINES.to_vec()), 0..40),
            old_final_newline: bool,
            new_final_newline: bool,
        ) {
            let (old, new) = (join(&old, old_final_newline), join(&new, new_final_newline));
            let unlimited = DiffLimits { max_lines: usize::MAX, max_bytes: usize::MAX, ..DiffLimits::default() };
            let s = diff(&old, &new, "p.txt", &unlimited);
            proptest::prop_assert!(!s.truncated);
            proptest::prop_assert_eq!(apply(&old, &s.preview), new);
            let body = s.preview.lines().skip(2);
            let added = body.clone().filter(|l| l.starts_with('+')).count() as u64;
            let removed = body.filter(|l| l.starts_with('-')).count() as u64;
            proptest::prop_assert_eq!((added, removed), (s.lines_added, s.lines_removed));
        }
    }

    /// `lines` joined by `\n`, with a final one if `end` (and any lines).
    fn join(lines: &[&str], end: bool) -> String {
        let mut text = lines.join("\n");
        if end && !text.is_empty() {
            text.push('\n');
        }
        text
    }

    /// Few distinct lines, so that old and new share many of them.
    const LINES: &[&str] = &[
        "a",
        "b",
        "c",
        "",
        " ",
        "fn main() {",
        "}",
        "\t",
        "ünï",
        "\r",
    ];

    #[test]
    fn counts_lines() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\nb"), 2);
        assert_eq!(count_lines("\n\n"), 2);
    }
}
