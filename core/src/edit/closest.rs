//! When an old text matches nowhere: the region of the file closest to it,
//! so that the model's next try can be right in one step.
//!
//! Bounded on any file: lines are compared by a hash of their trimmed
//! text, windows are scored by a running count (one pass), and only the
//! best few windows are compared character by character, under the diff's
//! deadline.

use std::time::Instant;

use foldhash::{HashMap, HashMapExt};
use similar::{Algorithm, TextDiff};

/// Most lines of the short diff a miss shows.
const MAX_DIFF_LINES: usize = 24;
/// Windows compared closely once the running count has ranked them: enough
/// that a region whose one shared line is common (`def __call__(self):` in
/// a file of many) is still among them.
const CANDIDATES: usize = 32;

/// The region of a file closest to an old text.
#[derive(Debug, Clone, PartialEq)]
pub struct Closest {
    /// Its first line, from 1.
    pub first_line: usize,
    /// Its last line, from 1.
    pub last_line: usize,
    /// How alike it and the old text are, from 0 to 1.
    pub similarity: f32,
    /// A short unified diff from the old text to the region.
    pub diff: String,
    /// Other regions, first and last line, about as alike.
    pub also: Vec<(usize, usize)>,
}

/// Most other regions named.
const MAX_ALSO: usize = 3;
/// How much less alike another region may be and still be named.
const ALSO_WITHIN: f32 = 0.05;

fn key(line: &str) -> &str {
    line.trim()
}

/// The first 16 characters of a trimmed line, when it has more.
fn line_start(key: &str) -> Option<&str> {
    if key.len() <= 16 {
        return None;
    }
    match key.get(..16) {
        Some(start) if start.is_ascii() => Some(start),
        _ => key.char_indices().nth(16).map(|(at, _)| &key[..at]),
    }
}

/// How a line of the file matches a line of the old text.
#[derive(Clone, Copy)]
enum Class {
    None,
    /// Whole (trimmed), the old line's entry.
    Exact(usize),
    /// By its first 16 characters, the start's entry.
    Start(usize),
}

/// The region of `text` closest to `old`, `None` when no line of `old`
/// with any letters in it is anywhere in `text` and no line comes close.
pub fn find(text: &str, old: &str, deadline: Instant) -> Option<Closest> {
    let lines: Vec<&str> = text.lines().collect();
    let wanted: Vec<&str> = old.lines().collect();
    let k = wanted.len().max(1);
    if lines.is_empty() {
        return None;
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for line in &wanted {
        if !key(line).is_empty() {
            *counts.entry(key(line)).or_default() += 1;
        }
    }
    let hit = weights(&lines, &wanted, &counts);
    // Running score of each window of k.
    let width = k.min(lines.len());
    let mut scores = Vec::with_capacity(lines.len() - width + 1);
    let mut sum: u64 = hit[..width].iter().sum();
    scores.push(sum);
    for i in width..lines.len() {
        sum = sum + hit[i] - hit[i - width];
        scores.push(sum);
    }
    let mut starts: Vec<usize> = (0..scores.len()).filter(|&i| scores[i] > 0).collect();
    if starts.is_empty() {
        starts = nearest_lines(&lines, &wanted, deadline);
    } else {
        // Best first; ties by position.
        starts.sort_by_key(|&i| std::cmp::Reverse(scores[i]));
        starts.truncate(CANDIDATES);
    }
    let mut scored: Vec<(f32, usize)> = Vec::new();
    for &start in starts.iter().take(CANDIDATES) {
        if Instant::now() >= deadline && !scored.is_empty() {
            break;
        }
        let region = join(&lines[start..(start + width).min(lines.len())]);
        let ratio = TextDiff::configure()
            .algorithm(Algorithm::Myers)
            .deadline(deadline)
            .diff_chars(old, region.as_str())
            .ratio();
        scored.push((ratio, start));
    }
    // Best first; ties by position.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let &(similarity, start) = scored.first()?;
    let end = (start + width).min(lines.len());
    let region = join(&lines[start..end]);
    Some(Closest {
        first_line: start + 1,
        last_line: end,
        similarity,
        diff: short_diff(old, &region, deadline),
        also: also_alike(&scored, width, lines.len()),
    })
}

/// Each line's weight, in millionths: what it shares with the old text.
fn weights(lines: &[&str], wanted: &[&str], counts: &HashMap<&str, usize>) -> Vec<u64> {
    // A line of the old text counts for less the more often the file has
    // it: a window that shares one rare line with the old text beats one
    // that shares a `}` found everywhere. A line the file does not have
    // counts by its start, for half as much: the line a model got wrong
    // is most often right up to a slip near its end. One pass classifies
    // the file's lines; the weights follow from the counts.
    let exact: HashMap<&str, usize> = counts.keys().enumerate().map(|(i, k)| (*k, i)).collect();
    let mut prefix: HashMap<&str, usize> = HashMap::new();
    for k in wanted.iter().map(|l| key(l)).filter_map(line_start) {
        let next = prefix.len();
        prefix.entry(k).or_insert(next);
    }
    let mut seen = vec![0u32; exact.len()];
    let mut near = vec![0u32; prefix.len()];
    let class: Vec<Class> = lines
        .iter()
        .map(|l| {
            let k = key(l);
            if k.is_empty() {
                return Class::None;
            }
            if let Some(&e) = exact.get(k) {
                seen[e] += 1;
                return Class::Exact(e);
            }
            match line_start(k).and_then(|p| prefix.get(p)) {
                Some(&e) => {
                    near[e] += 1;
                    Class::Start(e)
                }
                None => Class::None,
            }
        })
        .collect();
    // A start counts only for an old line the file does not have whole.
    let mut twinless = vec![false; prefix.len()];
    for k in wanted.iter().map(|l| key(l)) {
        if let Some(&e) = line_start(k).and_then(|p| prefix.get(p))
            && exact.get(k).is_none_or(|&x| seen[x] == 0)
        {
            twinless[e] = true;
        }
    }
    // In millionths, summed exactly.
    class
        .iter()
        .map(|c| match *c {
            Class::None => 0,
            Class::Exact(e) => 1_000_000 / u64::from(seen[e]),
            Class::Start(e) if twinless[e] => 500_000 / u64::from(near[e]),
            Class::Start(_) => 0,
        })
        .collect()
}

/// Other regions nearly as alike as the best (`scored`, best first), apart
/// from it and each other: an old text that fits several places as well
/// names them all, so the model adds what tells them apart.
fn also_alike(scored: &[(f32, usize)], width: usize, lines: usize) -> Vec<(usize, usize)> {
    let Some(&(best, first)) = scored.first() else {
        return Vec::new();
    };
    let mut taken = vec![first];
    let mut also = Vec::new();
    for &(ratio, start) in &scored[1..] {
        if also.len() == MAX_ALSO || ratio < best - ALSO_WITHIN {
            break;
        }
        if taken.iter().all(|&t| t.abs_diff(start) >= width.max(1)) {
            taken.push(start);
            also.push((start + 1, (start + width).min(lines)));
        }
    }
    also
}

/// The region an old text with lines left out at its line `gap` (an
/// elision, `// ...`) stands for: from where the lines before the gap are
/// to where the lines after it are, the nearest such pair (each side as
/// whole lines, trimmed), or each side's closest region when a side is
/// nowhere as it is. No diff: what the gap stands for is not the model's
/// to guess, nor the tool's.
pub fn around_gap(text: &str, old: &str, gap: usize, deadline: Instant) -> Option<Closest> {
    let wanted: Vec<&str> = old.lines().collect();
    let (head, tail) = (&wanted[..gap], &wanted[gap + 1..]);
    let lines: Vec<&str> = text.lines().collect();
    // Every place of a side, as long as the deadline allows (a side of
    // many blank lines in a file of many is slow to place).
    let places = |part: &[&str]| -> Vec<usize> {
        if part.is_empty() || part.len() > lines.len() {
            return Vec::new();
        }
        let mut found = Vec::new();
        for i in 0..=lines.len() - part.len() {
            if i % 1024 == 0 && Instant::now() >= deadline {
                return Vec::new();
            }
            if part.iter().zip(&lines[i..]).all(|(p, l)| key(p) == key(l)) {
                found.push(i);
            }
        }
        found
    };
    let (heads, tails) = (places(head), places(tail));
    // Each place of the lines before the gap with the nearest place of the
    // lines after it (at least one line between them), nearest first.
    let mut pairs: Vec<(usize, usize, usize)> = heads
        .iter()
        .filter_map(|&h| {
            let after = h + head.len() + 1;
            let t = tails[tails.partition_point(|&t| t < after)..].first()?;
            Some((t - after, h, *t))
        })
        .collect();
    pairs.sort_unstable();
    let range = |&(_, h, t): &(usize, usize, usize)| (h + 1, t + tail.len());
    if let Some(first) = pairs.first() {
        let (first_line, last_line) = range(first);
        return Some(Closest {
            first_line,
            last_line,
            similarity: 1.0,
            diff: String::new(),
            also: pairs[1..].iter().take(MAX_ALSO).map(range).collect(),
        });
    }
    let side = |part: &[&str]| {
        let part = part.join("\n");
        if part.trim().is_empty() {
            None
        } else {
            find(text, &part, deadline)
        }
    };
    let head = side(head);
    let tail = side(tail);
    let (first_line, last_line, similarity) = match (head, tail) {
        (Some(h), Some(t)) if t.last_line >= h.first_line => {
            (h.first_line, t.last_line, h.similarity.min(t.similarity))
        }
        (Some(h), _) => (h.first_line, h.last_line, h.similarity),
        (None, Some(t)) => (t.first_line, t.last_line, t.similarity),
        (None, None) => return None,
    };
    Some(Closest {
        first_line,
        last_line,
        similarity,
        diff: String::new(),
        also: Vec::new(),
    })
}

/// With no line shared: the lines most like the old text's first line with
/// letters, best first, as long as the deadline allows.
fn nearest_lines(lines: &[&str], wanted: &[&str], deadline: Instant) -> Vec<usize> {
    let Some(probe) = wanted.iter().map(|l| key(l)).find(|l| !l.is_empty()) else {
        return Vec::new();
    };
    let mut scored: Vec<(f32, usize)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if i % 256 == 0 && Instant::now() >= deadline {
            break;
        }
        let line = key(line);
        if line.is_empty() || line.len() > probe.len() * 3 + 16 {
            continue;
        }
        let ratio = TextDiff::configure()
            .deadline(deadline)
            .diff_chars(probe, line)
            .ratio();
        if ratio >= 0.5 {
            scored.push((ratio, i));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    // The window starts where the probe line is in the old text.
    let offset = wanted.iter().position(|l| !key(l).is_empty()).unwrap_or(0);
    scored
        .into_iter()
        .map(|(_, i)| i.saturating_sub(offset))
        .collect()
}

fn join(lines: &[&str]) -> String {
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// A unified diff from `old` to the region, cut to a few lines, without
/// its headers: the sentence before it names both sides and the lines,
/// which a model would otherwise read twice. Hunks after the first are
/// set apart by a line `...`.
fn short_diff(old: &str, region: &str, deadline: Instant) -> String {
    let mut old = old.to_owned();
    if !old.ends_with('\n') {
        old.push('\n');
    }
    let diff = TextDiff::configure()
        .deadline(deadline)
        .diff_lines(old.as_str(), region);
    let text = diff.unified_diff().context_radius(2).to_string();
    let mut out = String::new();
    // Without a header set, the text is hunks only, each opened by `@@`
    // (a line of a hunk starts with ' ', '-', '+' or '\\').
    let body = text
        .lines()
        .enumerate()
        .filter_map(|(n, line)| match (line.starts_with("@@"), n) {
            (true, 0) => None,
            (true, _) => Some("..."),
            (false, _) => Some(line),
        });
    for (n, line) in body.enumerate() {
        if n == MAX_DIFF_LINES {
            out.push_str("... (diff cut)\n");
            break;
        }
        // A minified file's line would otherwise come whole.
        match line.char_indices().nth(MAX_LINE_CHARS) {
            Some((end, _)) => {
                let more = line[end..].chars().count();
                out.push_str(&line[..end]);
                out.push_str(&format!(" ... ({more} more characters)"));
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// The most characters of a line the closest region's diff shows.
const MAX_LINE_CHARS: usize = 300;

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(1)
    }

    #[test]
    fn the_region_with_the_most_lines_in_common_is_shown() {
        let text = "fn a() {}\n\nfn b() {\n    let x = 1;\n    run(x);\n}\n";
        let found = find(text, "fn b() {\n    let x = 2;\n    run(x);\n}\n", soon()).unwrap();
        assert_eq!((found.first_line, found.last_line), (3, 6));
        assert!(found.similarity > 0.9, "{found:?}");
        assert!(
            found.diff.contains("-    let x = 2;\n+    let x = 1;\n"),
            "{}",
            found.diff
        );
    }

    #[test]
    fn the_shown_diff_cuts_long_lines() {
        let old = format!("{}\n", "a".repeat(1000));
        let region = format!("{}b\n", "a".repeat(999));
        let diff = short_diff(&old, &region, soon());
        assert!(diff.len() < 700, "{diff}");
        assert!(
            diff.contains(&format!("-{} ... (701 more characters)\n", "a".repeat(299))),
            "{diff}"
        );
    }

    #[test]
    fn the_shown_diff_has_no_headers_and_sets_hunks_apart() {
        let old: String = (0..12).map(|i| format!("line {i}\n")).collect();
        let region = old
            .replace("line 1\n", "line one\n")
            .replace("line 10\n", "line ten\n");
        let diff = short_diff(&old, &region, soon());
        assert!(diff.starts_with(" line 0\n-line 1\n+line one\n"), "{diff}");
        assert!(!diff.contains("@@") && !diff.contains("---"), "{diff}");
        assert!(diff.contains("\n...\n"), "the hunks set apart: {diff}");
        assert!(diff.ends_with("-line 10\n+line ten\n line 11\n"), "{diff}");
    }

    #[test]
    fn a_line_with_no_twin_finds_its_nearest() {
        let text = "alpha = 1\nbeta = compute(2)\ngamma = 3\n";
        let found = find(text, "beta = compute(3)", soon()).unwrap();
        assert_eq!(found.first_line, 2);
        assert!(find(text, "zzzzzzzzzzzzzzzzzzzzzzzzzz", soon()).is_none());
    }
}
