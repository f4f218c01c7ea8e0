//! A three-way merge by lines (`docs/contract.md#merge`), on this module's
//! own diff and within its budget: the hunks of the version seen against
//! the file now and against the model's change, walked in the version's
//! order. Hunks of one side alone are applied; hunks of both sides that
//! overlap or touch (as `git merge-file` counts them: a change next to the
//! other's is a conflict) conflict unless they make the same change. A
//! hunk next to lines like any of its own (a blank line among blank lines,
//! a brace among braces) could have been placed, whole or split, anywhere
//! among them, as another diff (git's) may place it: it reaches over them,
//! and hunks of the two sides whose reaches touch conflict too. Texts with
//! a lone carriage return, which git does not count as a line's end, are
//! not merged. Every hunk of each side is either applied or reported, so
//! no change is lost by the merge.

use std::ops::Range;

use similar::DiffTag;

use super::limits::{Budget, DiffLimits};
use super::lines::lines;
use super::ops::line_ops;

/// What a merge gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merged {
    /// Both changes, applied.
    Clean(String),
    /// Where they meet.
    Conflicts(Vec<Conflict>),
    /// A diff of the merge did not fit the budget.
    TooLarge,
    /// A text has a line ended by a lone carriage return, which git does
    /// not count as a line's end: not merged.
    LoneCr,
}

/// One place two changes meet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// Its first line in the file now, from 1.
    pub line: usize,
    /// The lines the file has there now.
    pub now: Vec<String>,
    /// The lines the model's change has there.
    pub yours: Vec<String>,
}

/// One change of a side: base lines replaced by the side's lines.
type Hunk = (Range<usize>, Range<usize>);

/// Merge `yours` and `now`, each made from `base`.
pub fn merge3(base: &str, now: &str, yours: &str, limits: &DiffLimits) -> Merged {
    let lone_cr = |t: &str| {
        t.as_bytes()
            .windows(2)
            .any(|w| w[0] == b'\r' && w[1] != b'\n')
    };
    if [base, now, yours]
        .iter()
        .any(|t| lone_cr(t) || t.ends_with('\r'))
    {
        return Merged::LoneCr;
    }
    let (b, n, y) = (lines(base), lines(now), lines(yours));
    let (Some(hn), Some(hy)) = (hunks(&b, &n, limits), hunks(&b, &y, limits)) else {
        return Merged::TooLarge;
    };
    let reach_n: Vec<Range<usize>> = hn.iter().map(|h| reach(&b, &n, h)).collect();
    let reach_y: Vec<Range<usize>> = hy.iter().map(|h| reach(&b, &y, h)).collect();
    let mut out = String::with_capacity(now.len().max(yours.len()));
    let mut conflicts = Vec::new();
    let (mut i, mut j) = (0, 0);
    // Where the walk is in the base, and how far each side is shifted
    // from it outside its hunks.
    let mut at = 0;
    let (mut shift_n, mut shift_y) = (0isize, 0isize);
    while i < hn.len() || j < hy.len() {
        // The next cluster: hunks of either side that overlap or touch.
        let first = match (hn.get(i), hy.get(j)) {
            (Some(a), Some(c)) => a.0.start.min(c.0.start),
            (Some(a), None) => a.0.start,
            (None, Some(c)) => c.0.start,
            (None, None) => break,
        };
        // The cluster's base lines, and how far its hunks reach.
        let (mut end, mut reached) = (first, first);
        let (from_i, from_j) = (i, j);
        loop {
            if let Some(h) = hn.get(i).filter(|_| reach_n[i].start <= reached) {
                end = end.max(h.0.end);
                reached = reached.max(reach_n[i].end);
                i += 1;
            } else if let Some(h) = hy.get(j).filter(|_| reach_y[j].start <= reached) {
                end = end.max(h.0.end);
                reached = reached.max(reach_y[j].end);
                j += 1;
            } else {
                break;
            }
        }
        out.extend(b[at..first].iter().copied());
        let side = |hunks: &[Hunk], from: usize, to: usize, shift: &mut isize| {
            let start = first.saturating_add_signed(*shift);
            for h in &hunks[from..to] {
                *shift += h.1.len() as isize - h.0.len() as isize;
            }
            start..end.saturating_add_signed(*shift)
        };
        let now_range = side(&hn, from_i, i, &mut shift_n);
        let your_range = side(&hy, from_j, j, &mut shift_y);
        let (now_lines, your_lines) = (&n[now_range.clone()], &y[your_range]);
        if j == from_j || now_lines == your_lines {
            out.extend(now_lines.iter().copied());
        } else if i == from_i {
            out.extend(your_lines.iter().copied());
        } else {
            conflicts.push(Conflict {
                line: now_range.start + 1,
                now: now_lines.iter().map(|l| trimmed(l)).collect(),
                yours: your_lines.iter().map(|l| trimmed(l)).collect(),
            });
            out.extend(now_lines.iter().copied());
        }
        at = end;
    }
    out.extend(b[at..].iter().copied());
    if conflicts.is_empty() {
        Merged::Clean(out)
    } else {
        Merged::Conflicts(conflicts)
    }
}

/// How far in the base hunk `h` of the side `side` reaches: over the base
/// lines next to it that are like any of its own, old or new, where
/// another diff could have placed it, or a part of it.
fn reach(base: &[&str], side: &[&str], h: &Hunk) -> Range<usize> {
    let own = |line: &str| base[h.0.clone()].contains(&line) || side[h.1.clone()].contains(&line);
    let mut start = h.0.start;
    while start > 0 && own(base[start - 1]) {
        start -= 1;
    }
    let mut end = h.0.end;
    while end < base.len() && own(base[end]) {
        end += 1;
    }
    start..end
}

/// A line without its ending.
fn trimmed(line: &str) -> String {
    line.trim_end_matches(['\n', '\r']).to_owned()
}

/// The changes from `old` to `new`, in order, or `None` when the diff did
/// not fit the budget for texts of their size.
fn hunks(old: &[&str], new: &[&str], limits: &DiffLimits) -> Option<Vec<Hunk>> {
    let bytes = old.iter().chain(new).map(|l| l.len()).sum();
    let mut budget = Budget::new(limits.work_for(bytes));
    let (ops, coarse) = line_ops(old, new, &mut budget);
    if coarse {
        return None;
    }
    let mut hunks: Vec<Hunk> = Vec::new();
    for op in ops.iter().filter(|op| op.tag() != DiffTag::Equal) {
        let (o, n) = (op.old_range(), op.new_range());
        match hunks.last_mut() {
            Some(last) if last.0.end == o.start && last.1.end == n.start => {
                last.0.end = o.end;
                last.1.end = n.end;
            }
            _ => hunks.push((o, n)),
        }
    }
    Some(hunks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merged(base: &str, now: &str, yours: &str) -> Merged {
        merge3(base, now, yours, &DiffLimits::default())
    }

    #[test]
    fn changes_apart_are_both_applied_and_the_same_change_once() {
        let base = "a\nb\nc\nd\ne\n";
        assert_eq!(
            merged(base, "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n"),
            Merged::Clean("A\nb\nc\nd\nE\n".into())
        );
        assert_eq!(
            merged(base, "a\nB\nc\nd\ne\n", "a\nB\nc\nd\ne\n"),
            Merged::Clean("a\nB\nc\nd\ne\n".into())
        );
        // An insertion and a removal far apart.
        assert_eq!(
            merged(base, "a\nx\nb\nc\nd\ne\n", "a\nb\nc\nd\n"),
            Merged::Clean("a\nx\nb\nc\nd\n".into())
        );
    }

    #[test]
    fn changes_that_overlap_or_touch_conflict() {
        let base = "a\nb\nc\nd\n";
        let Merged::Conflicts(c) = merged(base, "a\nB1\nc\nd\n", "a\nB2\nc\nd\n") else {
            panic!("a conflict");
        };
        assert_eq!(
            c,
            [Conflict {
                line: 2,
                now: vec!["B1".into()],
                yours: vec!["B2".into()]
            }]
        );
        // Neighbouring lines, as git counts them.
        assert!(matches!(
            merged(base, "a\nB\nc\nd\n", "a\nb\nC\nd\n"),
            Merged::Conflicts(_)
        ));
        // An insertion where the other side changes a line.
        assert!(matches!(
            merged(base, "a\nx\nb\nc\nd\n", "a\nB\nc\nd\n"),
            Merged::Conflicts(_)
        ));
    }

    #[test]
    fn a_change_among_repeated_lines_is_never_lost() {
        // The other writer removes one of three like lines; the model
        // changes one: both survive, or the merge refuses.
        let base = "v=[\n1,\n1,\n1,\n]\n";
        match merged(base, "v=[\n1,\n1,\n]\n", "v=[\n2,\n1,\n1,\n]\n") {
            Merged::Clean(text) => {
                assert!(
                    text.contains("2,") && text.matches("1,").count() == 1,
                    "{text}"
                );
            }
            other => assert!(matches!(other, Merged::Conflicts(_)), "{other:?}"),
        }
    }

    #[test]
    fn where_git_would_place_a_change_otherwise_the_merge_refuses() {
        // Found by a review's fuzzing, each merged by an earlier rule where
        // git finds a conflict, or to other bytes than git's.
        for (base, now, yours) in [
            ("a\nx\nx\nb\n", "x\nM\nM\n", "x\nb\n"),
            ("x\n\n\n\n}\n\n}\n", "x\n\n\nb\nx\n\n}\n\n}\n", "\n\n\n}\n"),
            // A lone carriage return ends no line for git.
            ("a\rb\rc\r", "A\rb\rc\r", "a\rb\rC\r"),
        ] {
            let got = merged(base, now, yours);
            assert!(
                !matches!(got, Merged::Clean(_)),
                "{base:?} {now:?} {yours:?}: {got:?}"
            );
        }
    }

    #[test]
    fn a_diff_over_the_budget_is_too_large_to_merge() {
        let base: String = (0..2_000).map(|i| format!("line {i}\n")).collect();
        let swapped: String = (0..2_000).map(|i| format!("line {}\n", i ^ 1)).collect();
        let none = DiffLimits {
            budget_ms: 0,
            ..DiffLimits::default()
        };
        assert_eq!(merge3(&base, &swapped, &base, &none), Merged::TooLarge);
    }
}
