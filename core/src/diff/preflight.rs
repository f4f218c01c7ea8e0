//! `similar`'s reduction before the search (its `algorithms::preflight`,
//! after GNU diff), done on line numbers.
//!
//! Lines that appear only on one side, and very frequent lines surrounded
//! by such lines, are set aside; the search runs on the rest, and the
//! set-aside lines fill the gaps. `similar` hashes every line a second time
//! for this; here the same reduction is done, rule for rule, by counting
//! the numbers in arrays. Names are `similar` 3.2.1's, so that an upgrade
//! compares mechanically.

use similar::algorithms::DiffHook;

use super::limits::{Budget, OutOfBudget};
use super::myers::search;
use super::numbering::{NewId, Numbered};

/// The lines the search runs on after [`reduce_for_myers`], with where each one is
/// among the middle lines.
pub(super) struct Reduced {
    old_values: Vec<u32>,
    old_indices: Vec<usize>,
    new_values: Vec<NewId>,
    new_indices: Vec<usize>,
}

// The constants and rules of `similar` 3.2.1's `algorithms::preflight`.
const DISJOINT_FAST_PATH_MIN_LEN: usize = 512;
const DISJOINT_FAST_PATH_MIN_WORK: usize = 128 * 1024;
const DISJOINT_FAST_PATH_BOUNDARY_PROBE: usize = 8;
const CONFUSING_RECORD_SCAN_WINDOW: usize = 100;
const CONFUSING_RECORD_RATIO: usize = 4;
const MAX_MATCH_FREQUENCY_THRESHOLD: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RecordAction {
    Discard,
    Keep,
    Investigate,
}

/// `similar`'s reduction of the (already trimmed) middle lines, or `None`
/// where `similar` would search them as they are. It charges `budget` a
/// step a line and one for each line it reads around a frequent line.
pub(super) fn reduce_for_myers(
    numbered: &Numbered,
    budget: &mut Budget,
) -> Result<Option<Reduced>, OutOfBudget> {
    let (old, new) = (&numbered.old[..], &numbered.new[..]);
    if !should_scan(old, new) {
        return Ok(None);
    }
    budget.take(old.len() + new.len())?;
    let old_actions = record_actions(old.iter().copied(), old.len(), &numbered.new_counts);
    let new_actions = record_actions(new.iter().map(|id| id.0), new.len(), &numbered.old_counts);
    let (old_values, old_indices) = kept(old, &old_actions, budget)?;
    let (new_values, new_indices) = kept(new, &new_actions, budget)?;
    if old_indices.len() == old.len() && new_indices.len() == new.len() {
        return Ok(None);
    }
    Ok(Some(Reduced {
        old_values,
        old_indices,
        new_values,
        new_indices,
    }))
}

/// Whether `similar` looks for lines to set aside: large enough inputs
/// whose two ends differ.
fn should_scan(old: &[u32], new: &[NewId]) -> bool {
    let (old_len, new_len) = (old.len(), new.len());
    if old_len < DISJOINT_FAST_PATH_MIN_LEN
        || new_len < DISJOINT_FAST_PATH_MIN_LEN
        || old_len.saturating_mul(new_len) < DISJOINT_FAST_PATH_MIN_WORK
    {
        return false;
    }
    let (old_last, new_last) = (old_len - 1, new_len - 1);
    if new[0] == old[0] || new[new_last] == old[old_last] {
        return false;
    }
    let probe_len = old_len
        .min(new_len)
        .min(DISJOINT_FAST_PATH_BOUNDARY_PROBE + 1);
    !(1..probe_len).any(|skip| {
        new[skip] == old[0]
            || new[0] == old[skip]
            || new[new_last - skip] == old[old_last]
            || new[new_last] == old[old_last - skip]
    })
}

/// What to do with each line, from how often it occurs on the other side.
fn record_actions(
    ids: impl Iterator<Item = u32>,
    len: usize,
    other_counts: &[usize],
) -> Vec<RecordAction> {
    let frequency_limit = len.isqrt().clamp(1, MAX_MATCH_FREQUENCY_THRESHOLD);
    ids.map(
        |id| match other_counts.get(id as usize).copied().unwrap_or(0) {
            0 => RecordAction::Discard,
            count if count < frequency_limit => RecordAction::Keep,
            _ => RecordAction::Investigate,
        },
    )
    .collect()
}

/// Lines read around frequent lines between two charges to the budget.
const READS_PER_CHARGE: usize = 4096;

/// The lines kept and where they were.
fn kept<T: Copy>(
    values: &[T],
    actions: &[RecordAction],
    budget: &mut Budget,
) -> Result<(Vec<T>, Vec<usize>), OutOfBudget> {
    let (mut kept, mut indices) = (
        Vec::with_capacity(values.len()),
        Vec::with_capacity(values.len()),
    );
    let mut reads = 0;
    for (offset, &value) in values.iter().enumerate() {
        let keep = match actions[offset] {
            RecordAction::Discard => false,
            RecordAction::Keep => true,
            RecordAction::Investigate => {
                let (discard, read) = discard_confusing_record(actions, offset);
                reads += read;
                if reads >= READS_PER_CHARGE {
                    budget.take(std::mem::take(&mut reads))?;
                }
                !discard
            }
        };
        if keep {
            kept.push(value);
            indices.push(offset);
        }
    }
    budget.take(reads)?;
    Ok((kept, indices))
}

/// Whether a frequent line sits among lines that are set aside (on both
/// sides, and mostly), so that it would only confuse the search.
/// With how many lines it read around it: at most 100 on each side.
fn discard_confusing_record(actions: &[RecordAction], index: usize) -> (bool, usize) {
    let run = |indexes: &mut dyn Iterator<Item = usize>| {
        let (mut discards, mut investigates) = (0usize, 0usize);
        for index in indexes.take(CONFUSING_RECORD_SCAN_WINDOW) {
            match actions[index] {
                RecordAction::Discard => discards += 1,
                RecordAction::Investigate => investigates += 1,
                RecordAction::Keep => break,
            }
        }
        (discards, investigates)
    };
    let (left_discards, left_investigates) = run(&mut (0..index).rev());
    let left = left_discards + left_investigates + 1;
    if left_discards == 0 {
        return (false, left);
    }
    let (right_discards, right_investigates) = run(&mut (index + 1..actions.len()));
    let read = left + right_discards + right_investigates + 1;
    if right_discards == 0 {
        return (false, read);
    }
    let discards = left_discards + right_discards;
    let investigates = left_investigates + right_investigates + 1;
    let discard = investigates.saturating_mul(CONFUSING_RECORD_RATIO) < investigates + discards;
    (discard, read)
}

/// `similar`'s search over reduced lines: equal runs of the reduced lines
/// are the anchors; everything between anchors is deleted and inserted.
pub(super) fn search_reduced<D: DiffHook>(
    d: &mut D,
    numbered: &Numbered,
    reduced: &Reduced,
    budget: &mut Budget,
) -> Result<(), D::Error> {
    let mut hook = ReducedDiffHook {
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
        budget,
    )
}

/// Maps the search over reduced lines back onto all lines (`similar`'s
/// `ReducedDiffHook`).
struct ReducedDiffHook<'a, D> {
    d: &'a mut D,
    old_indices: &'a [usize],
    new_indices: &'a [usize],
    cursor: (usize, usize),
    end: (usize, usize),
}

impl<D: DiffHook> ReducedDiffHook<'_, D> {
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

impl<D: DiffHook> DiffHook for ReducedDiffHook<'_, D> {
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
