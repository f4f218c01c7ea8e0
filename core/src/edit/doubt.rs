//! Places an edit should not take on its own say: an exact place inside a
//! line when the old text stands as whole lines elsewhere, and a place
//! found only once blank lines were taken off an old text that seems to
//! have skipped the line next to it.

use super::types::Region;

/// Most lines compared whole before an exact place inside a line is taken
/// without doubt: bounded work on any file, the same answer on any
/// machine.
const MAX_CANDIDATES: usize = 10_000;

/// Longest line compared by characters with the new text's lines.
const MAX_COMPARED: usize = 1_000;

/// Whether a line of the file next to `region` (the one before it or the
/// one after it) is in `new`, or nearly (four in five characters alike),
/// but not in `old`: an old text that left that line out, and a new text
/// that kept it or changed it a little.
pub(super) fn skipped_neighbour(text: &str, region: &Region, old: &str, new: &str) -> bool {
    let before = text[..region.start]
        .strip_suffix('\n')
        .map(|t| t.rsplit('\n').next().unwrap_or(t));
    let after = text[region.end..].lines().next();
    let olds: Vec<&str> = old.lines().map(str::trim).collect();
    [before, after].into_iter().flatten().any(|line| {
        let line = line.trim();
        !line.is_empty()
            && !olds.contains(&line)
            && new.lines().map(str::trim).any(|n| {
                n == line
                    || (!olds.contains(&n)
                        && n.len().max(line.len()) <= MAX_COMPARED
                        && similar::TextDiff::from_chars(n, line).ratio() >= 0.8)
            })
    })
}

/// Whether `text[start..end]` starts a line and ends one.
pub(super) fn whole_lines(text: &str, start: usize, end: usize) -> bool {
    let bytes = text.as_bytes();
    let starts_line = start == 0 || bytes[start - 1] == b'\n';
    let ends_line =
        end == bytes.len() || bytes[end - 1] == b'\n' || matches!(bytes[end], b'\n' | b'\r');
    starts_line && ends_line
}

/// Where else the old text stands as whole lines when whitespace is
/// ignored, when its one exact place at `start` lies inside a line: the
/// exact rung would take `count = 0` inside `discount = 0` while the line
/// `count = 0` (with trailing spaces) is elsewhere. Found by the old
/// text's first line, trimmed, so it costs one search of the file.
pub(super) fn whole_lines_elsewhere(text: &str, old: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let end = start + old.len();
    if whole_lines(text, start, end) {
        return None;
    }
    let wanted: Vec<&str> = old.lines().map(str::trim).collect();
    let first = *wanted.first()?;
    if first.is_empty() {
        return None;
    }
    // One pass: each line's start found once, each line looked at from its
    // first hit only (a later hit on it has that one before it).
    let mut line_start = 0;
    let mut scanned = 0;
    let mut looked = usize::MAX;
    let mut candidates = 0;
    for at in memchr::memmem::find_iter(bytes, first.as_bytes()) {
        if let Some(nl) = memchr::memrchr(b'\n', &bytes[scanned..at]) {
            line_start = scanned + nl + 1;
        }
        scanned = at;
        if looked == line_start {
            continue;
        }
        looked = line_start;
        if (at < end && start < at + first.len()) || !text[line_start..at].trim().is_empty() {
            continue;
        }
        candidates += 1;
        if candidates > MAX_CANDIDATES {
            return None;
        }
        let mut lines = text[line_start..].lines();
        if wanted
            .iter()
            .all(|w| lines.next().is_some_and(|l| l.trim() == *w))
        {
            return Some(line_start);
        }
    }
    None
}
