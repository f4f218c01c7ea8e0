//! Numbering lines so that the search compares integers.
//!
//! Only the lines between the common prefix and suffix are numbered (the
//! search never looks at the others), and only the old side goes into the
//! map. A new line is first compared with the old line on its diagonal
//! (most are equal to it) and looked up only when that fails; a new line
//! that is not an old line can never match, so it gets one shared number,
//! [`UNMATCHED`], that no old line has. The map hashes with foldhash under
//! random seeds, and what the numbering may spend is bounded by the bytes
//! it numbers (see [`random_state`] and [`WORK_PER_BYTE`]).

use super::limits::{
    Budget, NUMBERING_BYTES_PER_STEP, NUMBERING_STEPS_COMPARED, NUMBERING_STEPS_HASHED, OutOfBudget,
};
use super::lines::same_bytes;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::OnceLock;

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
    /// The budget ran out ([`Charge`]).
    OutOfBudget,
    /// The map compared far more than lines not built to collide in it
    /// ever make it compare (see [`WORK_PER_BYTE`]).
    Flooded,
}

/// What the numbering may spend, in bytes of lines hashed or compared:
/// [`WORK_PER_BYTE`] times the bytes of the lines numbered so far, and
/// [`WORK_SLACK`] more. A line costs its hashing and at most one full
/// comparison with its equal (a few more bytes where the map's tags
/// collide by chance), so that is never reached by lines that are not
/// built to collide in the map, whose hash seed is random: the numbering's
/// result does not depend on the machine, and lines built to collide end
/// it early (the diff is then coarse) instead of making it quadratic.
const WORK_PER_BYTE: usize = 8;
/// See [`WORK_PER_BYTE`].
const WORK_SLACK: usize = 64 << 10;

/// What is left of the numbering's allowance (see [`WORK_PER_BYTE`]).
struct Allowance {
    left: usize,
}

impl Allowance {
    fn new() -> Allowance {
        Allowance { left: WORK_SLACK }
    }

    /// Earn a line's share of the allowance and pay for its hashing and for
    /// the bytes the map `compared`.
    fn line(&mut self, len: usize, compared: usize) -> Result<(), NotNumbered> {
        self.left = self
            .left
            .saturating_add(len.saturating_mul(WORK_PER_BYTE))
            .checked_sub(len.saturating_add(compared))
            .ok_or(NotNumbered::Flooded)?;
        Ok(())
    }
}

/// What the budget is charged for numbering, a batch of lines at a time
/// (so that the budget is not looked at for every line): for each line,
/// [`NUMBERING_STEPS_HASHED`] steps where it is hashed and looked up, or
/// [`NUMBERING_STEPS_COMPARED`] where a comparison with the old line on its
/// diagonal finds it, and a step per [`NUMBERING_BYTES_PER_STEP`] bytes.
#[derive(Default)]
struct Charge {
    due: usize,
    lines: usize,
}

/// Lines charged together.
const CHARGE_BATCH_LINES: usize = 1024;

impl Charge {
    fn line(&mut self, steps: usize, len: usize, budget: &mut Budget) -> Result<(), NotNumbered> {
        self.due = self
            .due
            .saturating_add(steps + len / NUMBERING_BYTES_PER_STEP);
        self.lines += 1;
        if self.lines == CHARGE_BATCH_LINES {
            self.settle(budget)?;
        }
        Ok(())
    }

    /// Charge what is due; refused, the numbering stops.
    fn settle(&mut self, budget: &mut Budget) -> Result<(), NotNumbered> {
        self.lines = 0;
        Ok(budget.take(std::mem::take(&mut self.due))?)
    }
}

impl From<OutOfBudget> for NotNumbered {
    fn from(_: OutOfBudget) -> NotNumbered {
        NotNumbered::OutOfBudget
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
    /// Bytes of lines compared on matching hashes since the allowance last
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

/// Whether `a` and `b` are the same line, counting the bytes compared:
/// none when their lengths differ (`same_bytes` looks at nothing then), so
/// that what is counted is the same whatever the hash seed, except for
/// lines of one length whose hashes meet by chance.
fn same_line(a: &str, b: &str, compared: &mut usize) -> bool {
    if a.len() == b.len() {
        *compared = compared.saturating_add(a.len());
    }
    same_bytes(a.as_bytes(), b.as_bytes())
}

impl Numbered {
    /// Number `old` and `new`, charging `budget` as it goes
    /// ([`Charge`]).
    pub(super) fn new(
        old: &[&str],
        new: &[&str],
        budget: &mut Budget,
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
        let mut allowance = Allowance::new();
        let mut charge = Charge::default();
        let mut numbers = OldNumbers::new(old);
        let mut old_ids = Vec::with_capacity(old.len());
        // Counted here rather than in passes of their own: the reduction
        // needs them.
        let mut old_counts: Vec<usize> = Vec::new();
        for (at, line) in old.iter().enumerate() {
            allowance.line(line.len(), numbers.take_compared())?;
            charge.line(NUMBERING_STEPS_HASHED, line.len(), budget)?;
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
            allowance.line(line.len(), numbers.take_compared())?;
            let diagonal = offset
                .and_then(|offset| at.checked_add_signed(offset))
                .filter(|&i| {
                    old.get(i)
                        .is_some_and(|o| same_bytes(o.as_bytes(), line.as_bytes()))
                });
            let steps = if diagonal.is_some() {
                NUMBERING_STEPS_COMPARED
            } else {
                NUMBERING_STEPS_HASHED
            };
            charge.line(steps, line.len(), budget)?;
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
        charge.settle(budget)?;
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
/// may spend only so much on the bytes compared ([`WORK_PER_BYTE`]):
/// content built to collide can make the diff coarse, as content built to
/// be hard for Myers can, but cannot make it slow.
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
            let numbered = Numbered::new(&old, &new, &mut Budget::new(u64::MAX)).expect("numbered");
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
        let numbered = Numbered::new(
            &["a\n", "b\n"],
            &["c\n", "a\n", "d\n"],
            &mut Budget::new(u64::MAX),
        )
        .expect("numbered");
        assert_eq!(numbered.old, [0, 1]);
        assert_eq!(numbered.new, [NewId(UNMATCHED), NewId(0), NewId(UNMATCHED)]);
        assert_eq!(numbered.old_counts, [1, 1]);
        assert_eq!(numbered.new_counts, [1, 0]);
    }

    /// Lines of other lengths cost nothing to tell apart, so a chance
    /// meeting of their hashes (which depends on the seed) counts for
    /// nothing.
    #[test]
    fn only_lines_of_one_length_count_as_compared() {
        let mut compared = 0;
        assert!(!same_line(&"y".repeat(2_000), "x\n", &mut compared));
        assert_eq!(compared, 0);
        assert!(!same_line("ab\n", "x\n\n", &mut compared));
        assert!(same_line("ab\n", "ab\n", &mut compared));
        assert_eq!(compared, 6);
    }

    #[test]
    fn numbering_stops_when_the_budget_runs_out() {
        let old: Vec<String> = (0..3_000).map(|i| format!("{i}\n")).collect();
        let old: Vec<&str> = old.iter().map(String::as_str).collect();
        let new: Vec<&str> = old.iter().rev().copied().collect();
        // 6,000 lines, each hashed (8 steps): 48,000 steps and more.
        let mut budget = Budget::new(40_000);
        assert_eq!(
            Numbered::new(&old, &new, &mut budget).err(),
            Some(NotNumbered::OutOfBudget)
        );
        assert!(budget.exhausted());
        let mut budget = Budget::new(60_000);
        assert!(Numbered::new(&old, &new, &mut budget).is_ok());
        assert!(!budget.exhausted());
    }

    #[test]
    fn bytes_the_map_compares_are_paid_from_the_allowance() {
        let long = "x".repeat(1_000);
        let old = [long.as_str(), long.as_str()];
        let mut numbers = OldNumbers::new(&old);
        assert_eq!(numbers.number(0), Ok(0));
        assert_eq!(numbers.compared, 0, "nothing to compare with yet");
        assert_eq!(numbers.number(1), Ok(0));
        assert_eq!(numbers.find(&long), Some(0));
        assert_eq!(numbers.take_compared(), 2_000);
        assert_eq!(numbers.find("x\n"), None);
        assert_eq!(numbers.take_compared(), 0, "no line of that length");

        let mut allowance = Allowance::new();
        allowance.line(1_000, 2_000).expect("within the allowance");
        assert_eq!(allowance.left, WORK_SLACK + 8_000 - 3_000);
        // Comparisons far beyond what the lines' bytes earn end it.
        assert_eq!(
            allowance.line(10, WORK_SLACK + 1_000_000).err(),
            Some(NotNumbered::Flooded)
        );
    }
}
