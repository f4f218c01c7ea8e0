//! Numbering lines so that the search compares integers.
//!
//! Only the lines between the common prefix and suffix are numbered (the
//! search never looks at the others), and only the old side goes into the
//! map. A new line is first compared with the old line on its diagonal
//! (most are equal to it) and looked up only when that fails; a new line
//! that is not an old line can never match, so it gets one shared number,
//! [`UNMATCHED`], that no old line has. The map hashes with foldhash under
//! random seeds, and numbering runs under the diff's deadline (see
//! [`random_state`]).

use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::OnceLock;
use std::time::Instant;

use super::limits::deadline_exceeded;
use super::lines::same_bytes;

/// The number of a new line: the number of the equal old line, or
/// [`UNMATCHED`]. A type of its own, so that `similar` does not reduce
/// the input a second time (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct NewId(pub(super) u32);

impl PartialEq<u32> for NewId {
    fn eq(&self, old: &u32) -> bool {
        self.0 == *old
    }
}

/// The number of every new line that is not an old line. No old line has
/// it, so it never matches.
pub(super) const UNMATCHED: u32 = u32::MAX;

/// The middle lines, numbered: equal numbers mean equal lines, except that
/// [`UNMATCHED`] new lines are equal to no old line.
pub(super) struct Numbered {
    pub(super) old: Vec<u32>,
    pub(super) new: Vec<NewId>,
    /// How often each number occurs among the old lines (the numbers are
    /// `0..old_counts.len()`).
    pub(super) old_counts: Vec<usize>,
    /// How often each number occurs among the new lines. New lines that
    /// are no old line are not counted: `similar` gives them no number.
    pub(super) new_counts: Vec<usize>,
}

/// Why the lines were not numbered.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum NotNumbered {
    /// More distinct lines than a `u32` numbers.
    TooMany,
    /// The deadline passed.
    OutOfTime,
}

/// Bytes of lines hashed or compared between two looks at the clock. Few
/// enough that even a map whose every line collides cannot run far past
/// the deadline; many enough that the clock (a host call in the component)
/// is read every thousand lines or so, not every few
/// (BENCHMARKS.md#the-diff).
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
/// through: four bytes a line rather than a map's key, value and padding
/// (BENCHMARKS.md#the-diff).
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
    pub(super) fn new(
        old: &[&str],
        new: &[&str],
        deadline: Option<Instant>,
    ) -> Result<Numbered, NotNumbered> {
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
        // Counted here rather than in passes of their own: the reduction
        // needs them.
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
}
