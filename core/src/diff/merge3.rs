//! A three-way merge by lines (`docs/contract.md#merge`), on this module's
//! own diff and within its budget: the hunks of the version seen against
//! the file now and against the model's change, walked in the version's
//! order, merged only where `git merge-file` would merge them to the same
//! bytes.
//!
//! Another diff (git's) may align repeated lines otherwise than this one:
//! place a hunk elsewhere among lines like its own, match another copy of
//! a line, or split a change in two. What it cannot place otherwise is a
//! change between two **anchors**: base lines in no hunk that are once in
//! each of the three texts, or once in each text's part between the
//! anchors found before (see [`anchors`]). So hunks are clustered up to
//! the next anchor, not the next unchanged line: a cluster of one side's
//! hunks is that side's text there, however it was aligned; a cluster
//! with hunks of both sides conflicts, even where they make the same
//! change (git may have found them apart and made it twice). Only texts
//! the same throughout are taken as one. Texts with a lone carriage
//! return, which git does not count as a line's end, are not merged.
//! Every hunk of each side is either applied or reported, so no change is
//! lost by the merge.

use std::collections::HashMap;
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
    if now == yours {
        return Merged::Clean(now.to_owned());
    }
    let (b, n, y) = (lines(base), lines(now), lines(yours));
    let (Some(hn), Some(hy)) = (hunks(&b, &n, limits), hunks(&b, &y, limits)) else {
        return Merged::TooLarge;
    };
    let anchors = anchors(&b, &n, &y, &hn, &hy);
    // Whether an anchor lies among the base lines `from..to`.
    let anchored = |from: usize, to: usize| from < to && anchors[to] > anchors[from];
    let mut out = String::with_capacity(now.len().max(yours.len()));
    let mut conflicts = Vec::new();
    let (mut i, mut j) = (0, 0);
    // Where the walk is in the base, and how far each side is shifted
    // from it outside its hunks.
    let mut at = 0;
    let (mut shift_n, mut shift_y) = (0isize, 0isize);
    while i < hn.len() || j < hy.len() {
        let first = match (hn.get(i), hy.get(j)) {
            (Some(a), Some(c)) => a.0.start.min(c.0.start),
            (Some(a), None) => a.0.start,
            (None, Some(c)) => c.0.start,
            (None, None) => break,
        };
        // The next cluster: hunks of either side up to the next anchor.
        let mut end = first;
        let (from_i, from_j) = (i, j);
        loop {
            if let Some(h) = hn.get(i).filter(|h| !anchored(end, h.0.start)) {
                end = end.max(h.0.end);
                i += 1;
            } else if let Some(h) = hy.get(j).filter(|h| !anchored(end, h.0.start)) {
                end = end.max(h.0.end);
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
        if j == from_j {
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

/// How many levels of anchors are looked for within the segments the
/// last level left: each level splits them further, and few texts need
/// more (a pathological one is then merged less, never wrongly).
const ANCHOR_LEVELS: usize = 8;

/// How many anchors the base has before each of its lines and at its end
/// (`base.len() + 1` counts). An anchor is a base line in no hunk of
/// either side that is once in each text — or, level by level, once in
/// each text's part between the anchors found so far (as patience diff
/// finds its unique lines): every diff that keeps the anchors aligns
/// those parts with each other, so a line once in each of them has one
/// place to go.
fn anchors(b: &[&str], n: &[&str], y: &[&str], hn: &[Hunk], hy: &[Hunk]) -> Vec<usize> {
    let (to_n, to_y) = (kept(hn, b.len()), kept(hy, b.len()));
    let mut anchor = vec![false; b.len()];
    let mut parts = vec![(0..b.len(), 0..n.len(), 0..y.len())];
    let mut counts: HashMap<&str, [u32; 3]> = HashMap::new();
    for _ in 0..ANCHOR_LEVELS {
        let mut next = Vec::new();
        for (pb, pn, py) in parts {
            counts.clear();
            for (text, lines) in [&b[pb.clone()], &n[pn.clone()], &y[py.clone()]]
                .into_iter()
                .enumerate()
            {
                for &line in lines {
                    let count = &mut counts.entry(line).or_default()[text];
                    *count = count.saturating_add(1);
                }
            }
            let (mut from_b, mut from_n, mut from_y) = (pb.start, pn.start, py.start);
            let mut found = false;
            for k in pb.clone() {
                let (Some(at_n), Some(at_y)) = (to_n[k], to_y[k]) else {
                    continue;
                };
                if anchor[k] || counts[b[k]] != [1, 1, 1] {
                    continue;
                }
                anchor[k] = true;
                found = true;
                next.push((from_b..k, from_n..at_n, from_y..at_y));
                (from_b, from_n, from_y) = (k + 1, at_n + 1, at_y + 1);
            }
            if found {
                next.push((from_b..pb.end, from_n..pn.end, from_y..py.end));
            }
        }
        if next.is_empty() {
            break;
        }
        parts = next;
    }
    let mut before = Vec::with_capacity(b.len() + 1);
    let mut count = 0;
    before.push(count);
    for &is in &anchor {
        count += usize::from(is);
        before.push(count);
    }
    before
}

/// Where each base line a side keeps (in none of its `hunks`) is in the
/// side's text.
fn kept(hunks: &[Hunk], base_len: usize) -> Vec<Option<usize>> {
    let mut at = vec![None; base_len];
    let (mut k, mut shift) = (0, 0isize);
    for h in hunks
        .iter()
        .chain(std::iter::once(&(base_len..base_len, 0..0)))
    {
        for (line, slot) in at.iter_mut().enumerate().take(h.0.start).skip(k) {
            *slot = Some(line.saturating_add_signed(shift));
        }
        shift += h.1.len() as isize - h.0.len() as isize;
        k = h.0.end;
    }
    at
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
            // Both remove a blank line of three (the model moves it): git
            // removes two.
            (
                "x();\n1,\n\n\n\n}\n",
                "x();\n1,\n\n\n}\n",
                "x();\n\n1,\n\n\n}\n",
            ),
            // Git keeps `x` (once in each text) where this diff keeps
            // `return`, and finds the changes touching.
            ("return\nx\n", "x\nreturn\nx\n", "x\nreturn\n}\n"),
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

    /// A small deterministic generator (no dependency for a test's dice).
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((self.0 >> 33) % n as u64) as usize
        }
    }

    /// `git merge-file -p` of `now` and `yours` from `base` in `dir`: the
    /// merge, and whether git found conflicts; `None` without git.
    fn git_merge(
        dir: &std::path::Path,
        base: &str,
        now: &str,
        yours: &str,
    ) -> Option<(String, bool)> {
        for (name, text) in [("base", base), ("now", now), ("yours", yours)] {
            std::fs::write(dir.join(name), text).expect("write");
        }
        let out = std::process::Command::new("git")
            .args(["merge-file", "-p", "now", "base", "yours"])
            .current_dir(dir)
            .output()
            .ok()?;
        // The number of conflicts, or 255 (or a signal) when git failed.
        let code = out.status.code().expect("an exit code");
        assert!(code < 128, "git merge-file failed: {out:?}");
        Some((String::from_utf8(out.stdout).expect("UTF-8"), code > 0))
    }

    /// Merges of texts made of a few repeated lines (two or three letters,
    /// braces and blank lines: where alignments are most ambiguous), each
    /// side changed in one to three places, against `git merge-file`: the
    /// tool never merges where git conflicts, nor to other bytes than
    /// git's, and still merges some. Two threads of 10,000 draws.
    #[test]
    fn merges_only_where_git_merge_file_merges_the_same() {
        let alphabets: [&[&str]; 3] = [
            &["}\n", "\n", "1,\n", "x();\n", "return;\n"],
            &["a\n", "b\n"],
            &["a\n", "b\n", "c\n"],
        ];
        let run = |seed: u64| -> Option<[usize; 4]> {
            let dir = tempfile::tempdir().expect("tempdir");
            let mut rng = Lcg(seed);
            // Cases, both clean and equal, refused where git merges, and
            // where git conflicts.
            let mut counts = [0; 4];
            for _ in 0..10_000 {
                let alphabet = alphabets[rng.below(alphabets.len())];
                let len = 2 + rng.below(10);
                let base: Vec<&str> = (0..len)
                    .map(|_| alphabet[rng.below(alphabet.len())])
                    .collect();
                let mut edit = |marker: &'static str| -> String {
                    let mut lines = base.clone();
                    for _ in 0..1 + rng.below(3) {
                        // A side's own line, or one of the alphabet's.
                        let pick = rng.below(alphabet.len() + 1);
                        let line = alphabet.get(pick).copied().unwrap_or(marker);
                        let at = rng.below(lines.len());
                        match rng.below(3) {
                            0 => lines[at] = line,
                            1 => lines.insert(at, line),
                            _ if lines.len() > 1 => {
                                lines.remove(at);
                            }
                            _ => lines.insert(0, line),
                        }
                    }
                    lines.concat()
                };
                let now = edit("now\n");
                let yours = edit("yours\n");
                let base = base.concat();
                if now == yours || now == base || yours == base {
                    continue;
                }
                counts[0] += 1;
                let (git, git_conflicts) = git_merge(dir.path(), &base, &now, &yours)?;
                match merged(&base, &now, &yours) {
                    Merged::Clean(text) => {
                        assert!(
                            !git_conflicts,
                            "merged where git conflicts: {base:?} {now:?} {yours:?} -> {text:?}"
                        );
                        assert_eq!(
                            text, git,
                            "other bytes than git's: {base:?} {now:?} {yours:?}"
                        );
                        counts[1] += 1;
                    }
                    Merged::Conflicts(_) if !git_conflicts => counts[2] += 1,
                    Merged::Conflicts(_) => counts[3] += 1,
                    other => panic!("{base:?} {now:?} {yours:?}: {other:?}"),
                }
            }
            Some(counts)
        };
        let counts: Vec<Option<[usize; 4]>> = std::thread::scope(|s| {
            let threads: Vec<_> = [3, 4].map(|seed| s.spawn(move || run(seed))).into();
            threads
                .into_iter()
                .map(|t| t.join().expect("thread"))
                .collect()
        });
        let Some(counts) = counts.into_iter().collect::<Option<Vec<_>>>() else {
            eprintln!("skipped: no `git` to run `git merge-file`");
            return;
        };
        let [cases, same, safer, conflicts] = counts
            .iter()
            .fold([0; 4], |t, c| std::array::from_fn(|k| t[k] + c[k]));
        eprintln!(
            "against git merge-file: {cases} cases; git conflicts {conflicts}, all refused; git \
             merges {}: merged to git's bytes {same}, refused {safer}",
            same + safer
        );
        assert!(cases >= 15_000 && same > 0 && conflicts > 0, "{counts:?}");
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
