//! The common case in one pass: every edit's old text is in the file
//! exactly once, byte for byte, and the places lie apart. Then applying the
//! edits in order is applying them all at once, and the file is read once
//! and copied once, whatever the number of edits.
//!
//! An old text is found by its first line, which ends where a line of the
//! file ends: the file's lines are walked once for every edit together,
//! and only a line that ends as some edit's first line does is compared. Anything this path is not sure of (an
//! old text found twice or nowhere, places close together, a replacement
//! that would make a later edit's old text appear anew) goes to the
//! sequential path, which decides and explains.

use foldhash::{HashMap, HashMapExt};

use super::canon::Tolerance;
use super::types::{Edit, Edited, Matched, line_numbers};

/// Where one edit's old text is.
#[derive(Debug, Clone, Copy)]
struct Place {
    start: usize,
    /// Its line, from 1, in the file.
    line: u64,
}

/// `edits` applied to `text`, when every one is sure to apply at one
/// place; `None` otherwise.
pub(super) fn all_at_once(text: &str, edits: &[Edit]) -> Option<Edited> {
    if edits
        .iter()
        .any(|e| e.replace_all || e.old.is_empty() || e.old == e.new)
    {
        return None;
    }
    // The check that no replacement makes a later old text appear anew
    // looks at every pair of edits: past this many bytes the sequential
    // path (bounded by the host's time limit) is no slower.
    let bytes: usize = edits.iter().map(|e| e.old.len() + e.new.len()).sum();
    if bytes.saturating_mul(edits.len()) > PAIR_BUDGET {
        return None;
    }
    let places = find(text, edits)?;
    // A place inside a line may have a twin of whole lines elsewhere: the
    // sequential path says so.
    if edits
        .iter()
        .zip(&places)
        .any(|(e, p)| super::doubt::whole_lines_elsewhere(text, &e.old, p.start).is_some())
    {
        return None;
    }
    let longest = edits.iter().map(|e| e.old.len()).max()?;
    let mut order: Vec<usize> = (0..edits.len()).collect();
    order.sort_by_key(|&k| places[k].start);
    // Apart: no old text can then reach from one place into the next.
    for pair in order.windows(2) {
        let end = places[pair[0]].start + edits[pair[0]].old.len();
        if places[pair[1]].start < end + longest {
            return None;
        }
    }
    if makes_anew(text, edits, &places) {
        return None;
    }
    let grown: usize = edits.iter().map(|e| e.new.len()).sum();
    let mut out = String::with_capacity(text.len() + grown);
    let mut last = 0;
    for &k in &order {
        out.push_str(&text[last..places[k].start]);
        out.push_str(&edits[k].new);
        last = places[k].start + edits[k].old.len();
    }
    out.push_str(&text[last..]);
    let breaks = |s: &str| memchr::memchr_iter(b'\n', s.as_bytes()).count() as i64;
    let matches = edits
        .iter()
        .enumerate()
        .map(|(k, _)| {
            // Lines earlier edits added or removed above this one.
            let shift: i64 = (0..k)
                .filter(|&j| places[j].start < places[k].start)
                .map(|j| breaks(&edits[j].new) - breaks(&edits[j].old))
                .sum();
            Matched {
                tolerance: Tolerance::Exact,
                lines: vec![places[k].line.saturating_add_signed(shift)],
                repairs: Vec::new(),
            }
        })
        .collect();
    Some(Edited { text: out, matches })
}

/// Most bytes the pairwise check of [`makes_anew`] may look at.
const PAIR_BUDGET: usize = 64 << 20;

/// Edits by the last bytes of their old text's first line.
type Heads<'a> = HashMap<&'a [u8], Vec<usize>>;

/// Most bytes of a head compared through the map before the whole old
/// text is.
const TAIL: usize = 128;

/// The one place of each edit's old text, or `None` if one has none or
/// several.
///
/// An old text with a line break ends its first line there, so that line
/// (its head) is the end of some line of the file: each line of the file
/// is looked up, by its last bytes, among the heads no longer than it.
/// An old text within one line is searched for whole.
fn find(text: &str, edits: &[Edit]) -> Option<Vec<Place>> {
    let bytes = text.as_bytes();
    let mut places: Vec<Option<Place>> = vec![None; edits.len()];
    // By head length: the heads' last bytes → which edits.
    let mut heads: Vec<(usize, Heads<'_>)> = Vec::new();
    for (k, edit) in edits.iter().enumerate() {
        let old = edit.old.as_bytes();
        match memchr::memchr(b'\n', old) {
            Some(nl) => {
                let len = nl + 1;
                let tail = &old[len - len.min(TAIL)..len];
                let at = match heads.iter().position(|(l, _)| *l == len) {
                    Some(at) => at,
                    None => {
                        heads.push((len, HashMap::new()));
                        heads.len() - 1
                    }
                };
                heads[at].1.entry(tail).or_default().push(k);
            }
            None => {
                let mut found = memchr::memmem::find_iter(bytes, old);
                let start = found.next()?;
                if found.next().is_some() {
                    return None;
                }
                let line = line_numbers(text, std::iter::once(start))[0];
                places[k] = Some(Place { start, line });
            }
        }
    }
    heads.sort_by_key(|(len, _)| *len);
    if !heads.is_empty() {
        let mut line_start = 0;
        let mut line_no: u64 = 1;
        for nl in memchr::memchr_iter(b'\n', bytes) {
            let end = nl + 1;
            for (len, by_tail) in &heads {
                if *len > end - line_start {
                    break;
                }
                let Some(list) = by_tail.get(&bytes[end - (*len).min(TAIL)..end]) else {
                    continue;
                };
                let start = end - len;
                for &k in list {
                    let old = edits[k].old.as_bytes();
                    if bytes.get(start..start + old.len()) != Some(old) {
                        continue;
                    }
                    if places[k].is_some() {
                        return None;
                    }
                    places[k] = Some(Place {
                        start,
                        line: line_no,
                    });
                }
            }
            line_start = end;
            line_no += 1;
        }
    }
    places.into_iter().collect()
}

/// Whether a replacement puts a later edit's old text where the file did
/// not have it (the sequential path would then see it twice).
fn makes_anew(text: &str, edits: &[Edit], places: &[Place]) -> bool {
    let bytes = text.as_bytes();
    (0..edits.len()).any(|j| {
        let (start, end) = (places[j].start, places[j].start + edits[j].old.len());
        let new = edits[j].new.as_bytes();
        edits[j + 1..].iter().any(|e| {
            // The replacement with as much of the file around it as the
            // old text could reach over.
            let old = e.old.as_bytes();
            let reach = old.len() - 1;
            let before = &bytes[start.saturating_sub(reach)..start];
            let after = &bytes[end..(end + reach).min(bytes.len())];
            let mut window = Vec::with_capacity(before.len() + new.len() + after.len());
            window.extend_from_slice(before);
            window.extend_from_slice(new);
            window.extend_from_slice(after);
            let finder = memchr::memmem::Finder::new(old);
            // Every occurrence, overlapping ones too: each touches the
            // replacement, or it would lie in the file as it was.
            let mut from = 0;
            while let Some(at) = finder.find(&window[from..]) {
                let at = from + at;
                if at < before.len() + new.len().max(1) && at + old.len() > before.len() {
                    return true;
                }
                from = at + 1;
            }
            false
        })
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::edit;
    use super::super::{Edit, apply, sequence};
    use super::*;
    use std::time::{Duration, Instant};

    /// The one-pass path gives what the sequential one gives.
    fn same_as_sequential(text: &str, edits: &[Edit]) {
        let fast = all_at_once(text, edits).expect("the fast path takes it");
        let mut current = text.to_owned();
        for (k, e) in edits.iter().enumerate() {
            let one = apply(
                &current,
                std::slice::from_ref(e),
                Instant::now() + Duration::from_secs(1),
            )
            .expect("applies");
            assert_eq!(one.matches[0].lines, fast.matches[k].lines, "edit {k}");
            current = one.text;
        }
        assert_eq!(fast.text, current);
    }

    #[test]
    fn apart_exact_edits_apply_in_one_pass_with_the_lines_in_order() {
        let text: String = (0..200).map(|i| format!("line {i}\n")).collect();
        same_as_sequential(
            &text,
            &[
                edit("line 150\nline 151\n", "x\ny\nz\n"),
                edit("line 10\nline 11\nline 12\n", "one\n"),
                edit("ne 100", "NE"),
            ],
        );
    }

    #[test]
    fn anything_unsure_goes_the_sequential_way() {
        let text: String = (0..50).map(|i| format!("line {i}\n")).collect();
        // Twice in the file.
        assert!(all_at_once(&text, &[edit("line 1", "x")]).is_none());
        // Close together.
        assert!(
            all_at_once(&text, &[edit("line 10\n", "a\n"), edit("line 11\n", "b\n")]).is_none()
        );
        // The first replacement makes the second old text appear anew.
        let made = [edit("line 5\n", "line 40\n"), edit("line 40\n", "q\n")];
        assert!(all_at_once(&text, &made).is_none());
        assert!(apply(&text, &made, Instant::now() + Duration::from_secs(1)).is_err());
        // Nowhere.
        assert!(all_at_once(&text, &[edit("nope\nnope\n", "x")]).is_none());
    }

    proptest::proptest! {
        /// Whatever the new texts' ends, `apply` (which fits them before
        /// the one-pass path) gives what the in-order path gives.
        #[test]
        fn fitted_edits_give_the_in_order_answer(
            lines in proptest::collection::vec("[a-e]{1,4}\n", 4..40),
            picks in proptest::collection::vec((0usize..40, 1usize..3, "[abx\n]{0,4}"), 1..5),
            cut in proptest::bool::ANY,
        ) {
            let mut text = lines.concat();
            if cut {
                text.pop();
            }
            let edits: Vec<Edit> = picks
                .iter()
                .map(|(from, len, new)| {
                    let from = from % lines.len();
                    let to = (from + len).min(lines.len());
                    let old = lines[from..to].concat();
                    // An old text at the file's end loses its break with it.
                    let old = if text.ends_with(old.trim_end_matches('\n')) && !text.ends_with(&old) {
                        old.trim_end_matches('\n').to_owned()
                    } else {
                        old
                    };
                    edit(&old, new)
                })
                .collect();
            let deadline = Instant::now() + Duration::from_secs(1);
            let fast = apply(&text, &edits, deadline);
            let slow = sequence(&text, &edits, deadline);
            match (fast, slow) {
                (Ok(f), Ok(s)) => {
                    proptest::prop_assert_eq!(f.text, s.text);
                    proptest::prop_assert_eq!(f.matches, s.matches);
                }
                (f, s) => proptest::prop_assert_eq!(f.is_err(), s.is_err(), "{:?} / {:?}", f.err(), s.err()),
            }
        }
    }

    proptest::proptest! {
        /// Whenever the one-pass path takes edits, it gives what applying
        /// them one by one gives.
        #[test]
        fn one_pass_is_in_order(
            lines in proptest::collection::vec("[a-e]{1,4}\n", 4..40),
            // New texts that end as the old ones do, so neither path fits
            // them.
            picks in proptest::collection::vec((0usize..40, 1usize..3, "([abx\n]{0,3}\n)?"), 1..5),
        ) {
            let text = lines.concat();
            let edits: Vec<Edit> = picks
                .iter()
                .map(|(from, len, new)| {
                    let from = from % lines.len();
                    let to = (from + len).min(lines.len());
                    edit(&lines[from..to].concat(), new)
                })
                .collect();
            if let Some(fast) = all_at_once(&text, &edits) {
                let mut current = text.clone();
                for (k, e) in edits.iter().enumerate() {
                    let deadline = Instant::now() + Duration::from_secs(1);
                    let one = sequence(&current, std::slice::from_ref(e), deadline);
                    proptest::prop_assert!(one.is_ok(), "{:?}", one);
                    let one = one.unwrap_or_else(|_| unreachable!());
                    proptest::prop_assert_eq!(&one.matches[0].lines, &fast.matches[k].lines);
                    current = one.text;
                }
                proptest::prop_assert_eq!(fast.text, current);
            }
        }
    }
}
