//! The line operations of a diff: exactly the ones `similar`'s
//! `TextDiff::diff_lines` with Myers gives, for a fraction of the work.
//!
//! `similar` (3.2.1, pinned) does four things for a line diff, and this
//! module does each more cheaply while handing the search itself to
//! `similar`:
//!
//! 1. **Split the lines** (`\n`, `\r\n` and a lone `\r` end a line): here
//!    with `memchr`'s vectorised search.
//! 2. **Number the lines** so that the search compares integers: here only
//!    the lines between the common prefix and suffix (the search never looks
//!    at the others), and only the old side goes into the map. A new line is
//!    first compared with the old line on its diagonal (most are equal to
//!    it) and looked up only when that fails; a new line that is not an old
//!    line can never match, so it gets one shared number that no old line
//!    has. The map hashes with foldhash under random seeds, and numbering
//!    runs under the diff's deadline (see [`random_state`]).
//! 3. **Reduce** before the search (`similar`'s `preflight`, after GNU
//!    diff): lines that appear only on one side, and very frequent lines
//!    surrounded by such lines, are set aside, the search runs on the rest,
//!    and the set-aside lines fill the gaps. `similar` hashes every line a
//!    second time for this; [`reduce`] does the same reduction, rule for
//!    rule, by counting the numbers in arrays.
//! 4. **Search** with Myers (`similar::algorithms::myers`) and clean up the
//!    result with `similar`'s own `Compact` and `Replace` hooks.
//!
//! To run the search on the reduced lines without `similar` reducing them
//! again, the two sides are given different element types (`u32` and
//! [`NewId`]): `similar` only reduces inputs whose two sides have the same
//! type, and otherwise takes exactly the path it takes after its own
//! reduction. The tests hold the result to `TextDiff`'s operations on
//! inputs large enough to be reduced; an upgrade of `similar` that changed
//! any of this would fail them.

use std::convert::Infallible;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::OnceLock;
use std::time::Instant;

use similar::DiffOp;
use similar::algorithms::{Capture, Compact, DiffHook, Replace, myers};

/// `text` split into lines, each keeping its terminator: exactly
/// `similar`'s `tokenize_lines` (`\n`, `\r\n` and a lone `\r` end a line).
pub(super) fn lines(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut lines = Vec::with_capacity(bytes.len() / 32 + 1);
    let mut start = 0;
    if memchr::memchr(b'\r', bytes).is_none() {
        // The common case, and a cheaper search: only `\n` ends lines.
        for at in memchr::memchr_iter(b'\n', bytes) {
            lines.push(&text[start..=at]);
            start = at + 1;
        }
    } else {
        let mut skip_lf_at = None;
        for at in memchr::memchr2_iter(b'\r', b'\n', bytes) {
            if skip_lf_at == Some(at) {
                continue;
            }
            let end = if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') {
                skip_lf_at = Some(at + 1);
                at + 2
            } else {
                at + 1
            };
            lines.push(&text[start..end]);
            start = end;
        }
    }
    if start < bytes.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// Whether `a` and `b` hold the same bytes, compared 8 at a time.
///
/// Not `==`: on slices that calls `memcmp`, and WASI's libc (which the
/// component links) compares a byte at a time; line equality was a fifth of
/// a 1 MiB dry run in the component.
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let ((a_words, a_rest), (b_words, b_rest)) = (a.as_chunks::<8>(), b.as_chunks::<8>());
    a_words.iter().zip(b_words).all(|(x, y)| x == y)
        && a_rest.iter().zip(b_rest).all(|(x, y)| x == y)
}

/// The number of a new line: the number of the equal old line, or
/// [`UNMATCHED`]. A type of its own, so that `similar` does not reduce
/// the input a second time (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct NewId(u32);

impl PartialEq<u32> for NewId {
    fn eq(&self, old: &u32) -> bool {
        self.0 == *old
    }
}

/// The number of every new line that is not an old line. No old line has
/// it, so it never matches.
const UNMATCHED: u32 = u32::MAX;

/// The Myers operations between two lists of lines, as
/// `similar::capture_diff_deadline(Algorithm::Myers, ..)` gives them.
pub(super) fn line_ops(old: &[&str], new: &[&str], deadline: Option<Instant>) -> Vec<DiffOp> {
    let (prefix, suffix) = common_ends(old, new);
    let old_middle = &old[prefix..old.len() - suffix];
    let new_middle = &new[prefix..new.len() - suffix];

    let mut d = Compact::new(Replace::new(Capture::new()), old, new);
    let Ok(()) = (|| -> Result<(), Infallible> {
        if prefix > 0 {
            d.equal(0, 0, prefix)?;
        }
        let mut middle = Shift {
            d: &mut d,
            by: prefix,
        };
        match Numbered::new(old_middle, new_middle, deadline) {
            Ok(numbered) => match reduce(&numbered, deadline) {
                Some(reduced) => search_reduced(&mut middle, &numbered, &reduced, deadline)?,
                None => search(&mut middle, &numbered.old, &numbered.new, deadline)?,
            },
            // Let `similar` do it all on the lines themselves.
            Err(NotNumbered::TooMany) => search(&mut middle, old_middle, new_middle, deadline)?,
            // What `similar` gives for what is left when its deadline
            // passes: all of it deleted and inserted.
            Err(NotNumbered::OutOfTime) => {
                middle.delete(0, old_middle.len(), 0)?;
                middle.insert(old_middle.len(), 0, new_middle.len())?;
            }
        }
        if suffix > 0 {
            d.equal(old.len() - suffix, new.len() - suffix, suffix)?;
        }
        d.finish()
    })();
    d.into_inner().into_inner().into_ops()
}

/// How many lines `old` and `new` share at the start, and then at the end
/// of what is left.
fn common_ends(old: &[&str], new: &[&str]) -> (usize, usize) {
    let same = |(o, n): &(&&str, &&str)| same_bytes(o.as_bytes(), n.as_bytes());
    let prefix = old.iter().zip(new).take_while(same).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(same)
        .count();
    (prefix, suffix)
}

/// `similar`'s Myers over all of `old` and `new`.
fn search<O, N, D>(
    d: &mut D,
    old: &[O],
    new: &[N],
    deadline: Option<Instant>,
) -> Result<(), D::Error>
where
    O: Hash + Eq,
    N: PartialEq<O> + Hash + Eq,
    D: DiffHook,
{
    myers::diff_deadline(d, old, 0..old.len(), new, 0..new.len(), deadline)
}

/// The middle lines, numbered: equal numbers mean equal lines, except that
/// [`UNMATCHED`] new lines are equal to no old line.
struct Numbered {
    old: Vec<u32>,
    new: Vec<NewId>,
    /// How often each number occurs among the old lines (the numbers are
    /// `0..old_counts.len()`).
    old_counts: Vec<usize>,
    /// How often each number occurs among the new lines. New lines that
    /// are no old line are not counted: `similar` gives them no number.
    new_counts: Vec<usize>,
}

/// Why the lines were not numbered.
#[derive(Debug, PartialEq, Eq)]
enum NotNumbered {
    /// More distinct lines than a `u32` numbers.
    TooMany,
    /// The deadline passed.
    OutOfTime,
}

/// Bytes of lines hashed or compared between two looks at the clock. Few
/// enough that even a map whose every line collides cannot run far past
/// the deadline; many enough that the clock (a host call in the component)
/// is read every thousand lines or so, not every few: reading it every 32
/// lines was 6–10% of a 1 MiB dry run through the component.
const NUMBERING_CHECK_BYTES: usize = 64 << 10;

/// The deadline, looked at once [`NUMBERING_CHECK_BYTES`] have been spent.
struct Clock {
    deadline: Option<Instant>,
    spent: usize,
}

impl Clock {
    fn new(deadline: Option<Instant>) -> Clock {
        // Spent already, so that the first line looks at the clock.
        Clock {
            deadline,
            spent: NUMBERING_CHECK_BYTES,
        }
    }

    /// Count `bytes` (lines hashed or compared); look at the clock when
    /// due.
    fn spend(&mut self, bytes: usize) -> Result<(), NotNumbered> {
        self.spent = self.spent.saturating_add(bytes);
        if self.spent < NUMBERING_CHECK_BYTES {
            return Ok(());
        }
        self.spent = 0;
        if deadline_exceeded(self.deadline) {
            Err(NotNumbered::OutOfTime)
        } else {
            Ok(())
        }
    }
}

/// The old lines' numbers: a table of numbers, each standing for the
/// first old line that has it, which the lines are hashed and compared
/// through. Four bytes a line rather than a map's key, value and padding:
/// in the component, probing a `HashMap<&str, u32>` was the largest single
/// cost of a 1 MiB diff.
struct OldNumbers<'a> {
    old: &'a [&'a str],
    table: hashbrown::HashTable<u32>,
    /// Where each number first occurs among the old lines.
    first_at: Vec<usize>,
    hasher: foldhash::fast::SeedableRandomState,
    /// Bytes of lines compared on matching hashes since the clock last
    /// took them. Content built to collide makes that the bulk of the
    /// work, so it is counted.
    compared: usize,
}

impl<'a> OldNumbers<'a> {
    fn new(old: &'a [&'a str]) -> OldNumbers<'a> {
        OldNumbers {
            old,
            table: hashbrown::HashTable::with_capacity(old.len()),
            first_at: Vec::new(),
            hasher: random_state(),
            compared: 0,
        }
    }

    /// The bytes compared since the last call.
    fn take_compared(&mut self) -> usize {
        std::mem::take(&mut self.compared)
    }

    /// The number of old line `at`: a new one unless an earlier line is
    /// the same.
    fn number(&mut self, at: usize) -> Result<u32, NotNumbered> {
        let next = u32::try_from(self.first_at.len())
            .ok()
            .filter(|&n| n != UNMATCHED)
            .ok_or(NotNumbered::TooMany)?;
        let OldNumbers {
            old,
            table,
            first_at,
            hasher,
            compared,
        } = self;
        let line = old[at];
        let hash = hash_line(hasher, line);
        let firsts: &[usize] = first_at;
        let entry = table.entry(
            hash,
            |&id| same_line(old[firsts[id as usize]], line, compared),
            |&id| hash_line(hasher, old[firsts[id as usize]]),
        );
        Ok(match entry {
            hashbrown::hash_table::Entry::Occupied(found) => *found.get(),
            hashbrown::hash_table::Entry::Vacant(vacant) => {
                vacant.insert(next);
                first_at.push(at);
                next
            }
        })
    }

    /// The number of the old line equal to `line`, if there is one.
    fn find(&mut self, line: &str) -> Option<u32> {
        let hash = hash_line(&self.hasher, line);
        let (old, firsts, compared) = (self.old, &self.first_at, &mut self.compared);
        self.table
            .find(hash, |&id| {
                same_line(old[firsts[id as usize]], line, compared)
            })
            .copied()
    }
}

/// A line's hash: its bytes alone (lines with equal hashes are compared).
fn hash_line(hasher: &impl BuildHasher, line: &str) -> u64 {
    let mut state = hasher.build_hasher();
    state.write(line.as_bytes());
    state.finish()
}

/// Whether `a` and `b` are the same line, counting the bytes compared.
fn same_line(a: &str, b: &str, compared: &mut usize) -> bool {
    *compared = compared.saturating_add(a.len());
    same_bytes(a.as_bytes(), b.as_bytes())
}

impl Numbered {
    fn new(old: &[&str], new: &[&str], deadline: Option<Instant>) -> Result<Numbered, NotNumbered> {
        if old.is_empty() || new.is_empty() {
            // Nothing to search: all inserted or all deleted.
            return Ok(Numbered {
                old: vec![0; old.len()],
                new: vec![NewId(UNMATCHED); new.len()],
                old_counts: if old.is_empty() {
                    Vec::new()
                } else {
                    vec![old.len()]
                },
                new_counts: vec![0; usize::from(!old.is_empty())],
            });
        }
        let mut clock = Clock::new(deadline);
        let mut numbers = OldNumbers::new(old);
        let mut old_ids = Vec::with_capacity(old.len());
        // Counted here rather than in passes of their own: `reduce` needs
        // them, and it was a tenth of a 1 MiB diff in the component.
        let mut old_counts: Vec<usize> = Vec::new();
        for (at, line) in old.iter().enumerate() {
            clock.spend(line.len().saturating_add(numbers.take_compared()))?;
            let id = numbers.number(at)?;
            match old_counts.get_mut(id as usize) {
                Some(count) => *count += 1,
                None => old_counts.push(1),
            }
            old_ids.push(id);
        }
        let mut new_counts = vec![0usize; old_counts.len()];
        // Most new lines equal the old line on the diagonal of the line
        // before them (the same offset between the two sides): a comparison
        // finds their number without hashing them. Another line is looked
        // up, and where it is an old line, its first place sets the offset.
        let mut new_ids = Vec::with_capacity(new.len());
        let mut offset: Option<isize> = Some(0);
        for (at, line) in new.iter().enumerate() {
            clock.spend(line.len().saturating_add(numbers.take_compared()))?;
            let diagonal = offset
                .and_then(|offset| at.checked_add_signed(offset))
                .filter(|&i| {
                    old.get(i)
                        .is_some_and(|o| same_bytes(o.as_bytes(), line.as_bytes()))
                });
            let id = match diagonal {
                Some(i) => old_ids[i],
                None => match numbers.find(line) {
                    Some(id) => {
                        offset = isize::try_from(numbers.first_at[id as usize])
                            .ok()
                            .zip(isize::try_from(at).ok())
                            .map(|(first, at)| first - at);
                        id
                    }
                    None => UNMATCHED,
                },
            };
            if let Some(count) = new_counts.get_mut(id as usize) {
                *count += 1;
            }
            new_ids.push(NewId(id));
        }
        Ok(Numbered {
            old: old_ids,
            new: new_ids,
            old_counts,
            new_counts,
        })
    }
}

/// foldhash, seeded from the standard library's random keys (the system's
/// random source natively, WASI's in the component). foldhash's own seed
/// comes from address-space layout, which WebAssembly does not randomise.
///
/// foldhash is faster than SipHash on lines and claims only minimal
/// resistance to hash flooding. That is enough here because the numbering
/// runs under the diff's deadline, checked every [`NUMBERING_CHECK_BYTES`]
/// of lines hashed or compared: content built to collide can make
/// the diff coarse, as content built to be hard for Myers can, but cannot
/// keep it past the deadline.
fn random_state() -> foldhash::fast::SeedableRandomState {
    static SHARED: OnceLock<foldhash::SharedSeed> = OnceLock::new();
    let keys = std::collections::hash_map::RandomState::new();
    let shared = SHARED.get_or_init(|| foldhash::SharedSeed::from_u64(keys.hash_one(0u8)));
    foldhash::fast::SeedableRandomState::with_seed(keys.hash_one(1u8), shared)
}

/// The lines the search runs on after [`reduce`], with where each one is
/// among the middle lines.
struct Reduced {
    old_values: Vec<u32>,
    old_indices: Vec<usize>,
    new_values: Vec<NewId>,
    new_indices: Vec<usize>,
}

// The constants and rules of `similar` 3.2.1's `algorithms::preflight`.
const MIN_LEN: usize = 512;
const MIN_WORK: usize = 128 * 1024;
const BOUNDARY_PROBE: usize = 8;
const DEADLINE_CHECK_INTERVAL: usize = 1024;
const SCAN_WINDOW: usize = 100;
const CONFUSING_RATIO: usize = 4;
const MAX_MATCH_FREQUENCY: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Discard,
    Keep,
    Investigate,
}

fn deadline_exceeded(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|deadline| Instant::now() > deadline)
}

/// `similar`'s reduction of the (already trimmed) middle lines, or `None`
/// where `similar` would search them as they are.
fn reduce(numbered: &Numbered, deadline: Option<Instant>) -> Option<Reduced> {
    let (old, new) = (&numbered.old[..], &numbered.new[..]);
    if !should_scan(old, new, deadline) {
        return None;
    }
    let old_actions = actions(old.iter().copied(), old.len(), &numbered.new_counts);
    let new_actions = actions(new.iter().map(|id| id.0), new.len(), &numbered.old_counts);
    let (old_values, old_indices) = kept(old, &old_actions, deadline)?;
    let (new_values, new_indices) = kept(new, &new_actions, deadline)?;
    if old_indices.len() == old.len() && new_indices.len() == new.len() {
        return None;
    }
    Some(Reduced {
        old_values,
        old_indices,
        new_values,
        new_indices,
    })
}

/// Whether `similar` looks for lines to set aside: large enough inputs
/// whose two ends differ.
fn should_scan(old: &[u32], new: &[NewId], deadline: Option<Instant>) -> bool {
    if deadline_exceeded(deadline) {
        return false;
    }
    let (old_len, new_len) = (old.len(), new.len());
    if old_len < MIN_LEN || new_len < MIN_LEN || old_len.saturating_mul(new_len) < MIN_WORK {
        return false;
    }
    let (old_last, new_last) = (old_len - 1, new_len - 1);
    if new[0] == old[0] || new[new_last] == old[old_last] {
        return false;
    }
    let probe_len = old_len.min(new_len).min(BOUNDARY_PROBE + 1);
    !(1..probe_len).any(|skip| {
        new[skip] == old[0]
            || new[0] == old[skip]
            || new[new_last - skip] == old[old_last]
            || new[new_last] == old[old_last - skip]
    })
}

/// What to do with each line, from how often it occurs on the other side.
fn actions(ids: impl Iterator<Item = u32>, len: usize, other_counts: &[usize]) -> Vec<Action> {
    let frequency_limit = len.isqrt().clamp(1, MAX_MATCH_FREQUENCY);
    ids.map(
        |id| match other_counts.get(id as usize).copied().unwrap_or(0) {
            0 => Action::Discard,
            count if count < frequency_limit => Action::Keep,
            _ => Action::Investigate,
        },
    )
    .collect()
}

/// The lines kept and where they were; `None` past the deadline.
fn kept<T: Copy>(
    values: &[T],
    actions: &[Action],
    deadline: Option<Instant>,
) -> Option<(Vec<T>, Vec<usize>)> {
    let (mut kept, mut indices) = (
        Vec::with_capacity(values.len()),
        Vec::with_capacity(values.len()),
    );
    for (offset, &value) in values.iter().enumerate() {
        if offset.is_multiple_of(DEADLINE_CHECK_INTERVAL) && deadline_exceeded(deadline) {
            return None;
        }
        let keep = match actions[offset] {
            Action::Discard => false,
            Action::Keep => true,
            Action::Investigate => !confusing(actions, offset),
        };
        if keep {
            kept.push(value);
            indices.push(offset);
        }
    }
    Some((kept, indices))
}

/// Whether a frequent line sits among lines that are set aside (on both
/// sides, and mostly), so that it would only confuse the search.
fn confusing(actions: &[Action], index: usize) -> bool {
    let run = |indexes: &mut dyn Iterator<Item = usize>| {
        let (mut discards, mut investigates) = (0usize, 0usize);
        for index in indexes.take(SCAN_WINDOW) {
            match actions[index] {
                Action::Discard => discards += 1,
                Action::Investigate => investigates += 1,
                Action::Keep => break,
            }
        }
        (discards, investigates)
    };
    let (left_discards, left_investigates) = run(&mut (0..index).rev());
    if left_discards == 0 {
        return false;
    }
    let (right_discards, right_investigates) = run(&mut (index + 1..actions.len()));
    if right_discards == 0 {
        return false;
    }
    let discards = left_discards + right_discards;
    let investigates = left_investigates + right_investigates + 1;
    investigates.saturating_mul(CONFUSING_RATIO) < investigates + discards
}

/// `similar`'s search over reduced lines: equal runs of the reduced lines
/// are the anchors; everything between anchors is deleted and inserted.
fn search_reduced<D: DiffHook>(
    d: &mut D,
    numbered: &Numbered,
    reduced: &Reduced,
    deadline: Option<Instant>,
) -> Result<(), D::Error> {
    let mut hook = Anchors {
        d,
        old_indices: &reduced.old_indices,
        new_indices: &reduced.new_indices,
        cursor: (0, 0),
        end: (numbered.old.len(), numbered.new.len()),
    };
    search(
        &mut hook,
        &reduced.old_values[..],
        &reduced.new_values[..],
        deadline,
    )
}

/// Maps the search over reduced lines back onto all lines (`similar`'s
/// `ReducedDiffHook`).
struct Anchors<'a, D> {
    d: &'a mut D,
    old_indices: &'a [usize],
    new_indices: &'a [usize],
    cursor: (usize, usize),
    end: (usize, usize),
}

impl<D: DiffHook> Anchors<'_, D> {
    fn gaps_until(&mut self, old: usize, new: usize) -> Result<(), D::Error> {
        if self.cursor.0 < old {
            self.d
                .delete(self.cursor.0, old - self.cursor.0, self.cursor.1)?;
            self.cursor.0 = old;
        }
        if self.cursor.1 < new {
            self.d
                .insert(self.cursor.0, self.cursor.1, new - self.cursor.1)?;
            self.cursor.1 = new;
        }
        Ok(())
    }
}

impl<D: DiffHook> DiffHook for Anchors<'_, D> {
    type Error = D::Error;

    fn equal(&mut self, old_index: usize, new_index: usize, len: usize) -> Result<(), D::Error> {
        let mut offset = 0;
        while offset < len {
            let old = self.old_indices[old_index + offset];
            let new = self.new_indices[new_index + offset];
            self.gaps_until(old, new)?;
            let mut run = 1;
            while offset + run < len
                && self.old_indices[old_index + offset + run] == old + run
                && self.new_indices[new_index + offset + run] == new + run
            {
                run += 1;
            }
            self.d.equal(old, new, run)?;
            self.cursor = (old + run, new + run);
            offset += run;
        }
        Ok(())
    }

    // Lines the search deletes or inserts are inside the gaps around the
    // next anchor (or the end).
    fn delete(&mut self, _: usize, _: usize, _: usize) -> Result<(), D::Error> {
        Ok(())
    }

    fn insert(&mut self, _: usize, _: usize, _: usize) -> Result<(), D::Error> {
        Ok(())
    }

    fn finish(&mut self) -> Result<(), D::Error> {
        let (old, new) = self.end;
        self.gaps_until(old, new)
    }
}

/// Passes operations on the middle lines on at their place among all
/// lines, and holds back `finish` (the common suffix comes after).
struct Shift<D> {
    d: D,
    by: usize,
}

impl<D: DiffHook> DiffHook for Shift<D> {
    type Error = D::Error;

    fn equal(&mut self, old_index: usize, new_index: usize, len: usize) -> Result<(), D::Error> {
        self.d.equal(old_index + self.by, new_index + self.by, len)
    }

    fn delete(
        &mut self,
        old_index: usize,
        old_len: usize,
        new_index: usize,
    ) -> Result<(), D::Error> {
        self.d
            .delete(old_index + self.by, old_len, new_index + self.by)
    }

    fn insert(
        &mut self,
        old_index: usize,
        new_index: usize,
        new_len: usize,
    ) -> Result<(), D::Error> {
        self.d
            .insert(old_index + self.by, new_index + self.by, new_len)
    }

    fn replace(
        &mut self,
        old_index: usize,
        old_len: usize,
        new_index: usize,
        new_len: usize,
    ) -> Result<(), D::Error> {
        self.d
            .replace(old_index + self.by, old_len, new_index + self.by, new_len)
    }

    fn finish(&mut self) -> Result<(), D::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use similar::Algorithm;

    /// What `TextDiff` gives: the operations these must equal.
    fn text_diff_ops(old: &str, new: &str) -> Vec<DiffOp> {
        similar::TextDiff::configure()
            .algorithm(Algorithm::Myers)
            .diff_lines(old, new)
            .ops()
            .to_vec()
    }

    fn ops(old: &str, new: &str) -> Vec<DiffOp> {
        line_ops(&lines(old), &lines(new), None)
    }

    /// Whether the middle lines of `old` and `new` get reduced.
    fn reduces(old: &str, new: &str) -> bool {
        let (old, new) = (lines(old), lines(new));
        let (prefix, suffix) = common_ends(&old, &new);
        let numbered = Numbered::new(
            &old[prefix..old.len() - suffix],
            &new[prefix..new.len() - suffix],
            None,
        )
        .expect("few lines");
        reduce(&numbered, None).is_some()
    }

    /// A text of `tokens`: below 4 a frequent line, else a numbered one
    /// (which may repeat), framed by a first and last line of its own so
    /// that `similar` looks for lines to set aside.
    fn text(side: &str, tokens: &[u16]) -> String {
        let mut text = format!("{side} head\n");
        for &token in tokens {
            match token {
                0 => text.push_str("}\n"),
                1 => text.push('\n'),
                2 => text.push_str("    {\n"),
                3 => text.push_str("        return;\n"),
                n => text.push_str(&format!("line {n}\n")),
            }
        }
        text.push_str(&format!("{side} tail\n"));
        text
    }

    /// `tokens` with `edits` applied: at `at`, remove `remove` tokens and
    /// put `block` in their place.
    fn edited(tokens: &[u16], edits: &[(usize, usize, Vec<u16>)]) -> Vec<u16> {
        let mut tokens = tokens.to_vec();
        for (at, remove, block) in edits {
            let at = at % (tokens.len() + 1);
            let end = (at + remove).min(tokens.len());
            tokens.splice(at..end, block.iter().copied());
        }
        tokens
    }

    /// Numbered lines, some of them frequent (4 lines, each about 40
    /// times in 850) and some about as frequent as the limit at which the
    /// reduction starts to investigate them (8 lines, each about 30 times).
    fn token() -> impl Strategy<Value = u16> {
        prop_oneof![2 => 0u16..4, 3 => 4u16..12, 5 => 12u16..3_000]
    }

    /// A block written in place of old lines: lines the old text does not
    /// have, among frequent ones, so that the reduction sets the new lines
    /// aside and has to decide about the frequent ones between them.
    fn block() -> impl Strategy<Value = Vec<u16>> {
        proptest::collection::vec(prop_oneof![1 => 0u16..4, 3 => 3_000u16..9_000], 0..60)
    }

    proptest! {
        /// Each new line gets the number of the equal old line (or none),
        /// whether it was found on a diagonal or looked up.
        #[test]
        fn new_lines_get_the_numbers_of_equal_old_lines(
            old in proptest::collection::vec(0u8..6, 1..60),
            new in proptest::collection::vec(0u8..8, 1..60),
        ) {
            let line = |n: &u8| format!("{n}\n");
            let (old, new): (Vec<String>, Vec<String>) =
                (old.iter().map(line).collect(), new.iter().map(line).collect());
            let (old, new): (Vec<&str>, Vec<&str>) =
                (old.iter().map(String::as_str).collect(), new.iter().map(String::as_str).collect());
            let numbered = Numbered::new(&old, &new, None).expect("numbered");
            for (i, o) in old.iter().enumerate() {
                for (j, n) in new.iter().enumerate() {
                    prop_assert_eq!(o == n, numbered.new[j] == numbered.old[i]);
                }
                for (k, other) in old.iter().enumerate() {
                    prop_assert_eq!(o == other, numbered.old[i] == numbered.old[k]);
                }
            }
        }
    }

    proptest! {
        #[test]
        fn same_bytes_is_equality(
            a in proptest::collection::vec(0u8..3, 0..40),
            b in proptest::collection::vec(0u8..3, 0..40),
        ) {
            prop_assert_eq!(same_bytes(&a, &b), a == b);
            prop_assert!(same_bytes(&a, &a.clone()));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Inputs large enough for the reduction, with frequent lines that
        /// the reduction must investigate: the same operations as
        /// `TextDiff`.
        #[test]
        fn reduced_inputs_give_text_diffs_ops(
            // At most 8 × 24 lines removed: both sides stay above the
            // 512 lines below which nothing is reduced.
            tokens in proptest::collection::vec(token(), 720..1_000),
            edits in proptest::collection::vec((0usize..1_000, 0usize..24, block()), 1..8),
        ) {
            let (old, new) = (text("old", &tokens), text("new", &edited(&tokens, &edits)));
            prop_assert!(reduces(&old, &new));
            prop_assert_eq!(ops(&old, &new), text_diff_ops(&old, &new));
        }
    }

    #[test]
    fn a_long_common_prefix_and_suffix_are_not_numbered() {
        let body: String = (0..2_000).map(|i| format!("line {i}\n")).collect();
        let old = format!("{body}old\n{body}");
        let new = format!("{body}new\nnewer\n{body}");
        assert_eq!(ops(&old, &new), text_diff_ops(&old, &new));
        let (old, new) = (lines(&old), lines(&new));
        let numbered =
            Numbered::new(&old[2_000..2_001], &new[2_000..2_002], None).expect("numbered");
        assert_eq!((numbered.old.len(), numbered.new.len()), (1, 2));
    }

    #[test]
    fn one_side_empty() {
        for (old, new) in [
            ("", "a\nb\n"),
            ("a\nb\n", ""),
            ("x\n", "x\na\nb\n"),
            ("x\na\n", "x\n"),
        ] {
            assert_eq!(ops(old, new), text_diff_ops(old, new), "{old:?} {new:?}");
        }
    }

    #[test]
    fn new_lines_that_are_no_old_line_never_match() {
        let numbered =
            Numbered::new(&["a\n", "b\n"], &["c\n", "a\n", "d\n"], None).expect("numbered");
        assert_eq!(numbered.old, [0, 1]);
        assert_eq!(numbered.new, [NewId(UNMATCHED), NewId(0), NewId(UNMATCHED)]);
        assert_eq!(numbered.old_counts, [1, 1]);
        assert_eq!(numbered.new_counts, [1, 0]);
    }

    #[test]
    fn bytes_the_map_compares_count_toward_the_next_look_at_the_clock() {
        let mut clock = Clock::new(None);
        clock.spend(1).expect("no deadline");
        assert_eq!(clock.spent, 0, "the first line looks at the clock");
        clock.spend(100).expect("no deadline");
        assert_eq!(clock.spent, 100);
        let long = "x".repeat(NUMBERING_CHECK_BYTES);
        let old = [long.as_str(), long.as_str()];
        let mut numbers = OldNumbers::new(&old);
        assert_eq!(numbers.number(0), Ok(0));
        assert_eq!(numbers.compared, 0, "nothing to compare with yet");
        assert_eq!(numbers.number(1), Ok(0));
        assert_eq!(numbers.find(&long), Some(0));
        assert_eq!(numbers.compared, 2 * NUMBERING_CHECK_BYTES);
        clock
            .spend(1 + std::mem::take(&mut numbers.compared))
            .expect("no deadline");
        assert_eq!(clock.spent, 0, "the comparisons made the clock due");
    }

    #[test]
    fn numbering_stops_at_the_deadline_and_the_diff_is_coarse() {
        let past = Instant::now().checked_sub(std::time::Duration::from_millis(1));
        let (old, new) = (["a\n", "b\n", "c\n"], ["c\n", "a\n", "b\n"]);
        assert_eq!(
            Numbered::new(&old, &new, past).err(),
            Some(NotNumbered::OutOfTime)
        );
        let (old, new) = (
            ["same\n", "a\n", "b\n", "c\n", "end\n"],
            ["same\n", "c\n", "a\n", "b\n", "x\n", "end\n"],
        );
        assert_eq!(
            line_ops(&old, &new, past),
            [
                DiffOp::Equal {
                    old_index: 0,
                    new_index: 0,
                    len: 1
                },
                DiffOp::Replace {
                    old_index: 1,
                    old_len: 3,
                    new_index: 1,
                    new_len: 4
                },
                DiffOp::Equal {
                    old_index: 4,
                    new_index: 5,
                    len: 1
                },
            ]
        );
    }
}
