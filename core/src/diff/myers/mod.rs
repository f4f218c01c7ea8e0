//! The search itself: Myers' diff as `similar` 3.2.1 runs it
//! (`algorithms::myers`, its `diff_deadline` on inputs it does not reduce),
//! ported rule for rule, with one change: where `similar` looks at a clock,
//! this counts its work against a [`Budget`].
//!
//! Why a port and not the crate: the search's bound must be the same on
//! every machine, so that a change gets the same preview however busy the
//! machine is, and `similar` bounds its search only by wall time. Counting
//! the comparisons from outside (in the lines' `PartialEq`) cannot stop it:
//! its middle-snake search runs tens of millions of comparisons between two
//! calls of a hook (BENCHMARKS.md#the-diffs-budget). With enough budget,
//! the operations are exactly `similar`'s; the tests in `diff/ops.rs` hold
//! the port to `TextDiff` on inputs that take every path here. Names are
//! `similar`'s, so that an upgrade compares mechanically.
//!
//! `similar` is Apache-2.0 licensed, © Armin Ronacher; its Myers is based
//! on Brandon Williams' implementation.
//!
//! Every path of the line diff ends here: `ops` on the lines' numbers (or
//! the lines themselves), `preflight` on what its reduction leaves.

mod shortcuts;
mod snake;

use std::ops::Range;

use similar::algorithms::DiffHook;

use super::limits::Budget;
use shortcuts::{maybe_emit_small_side_exact, try_emit_front_anchor};
use snake::{MyersMode, V, find_middle_snake, max_d};

/// Myers over all of `old` and `new`, in `similar`'s heuristic mode
/// (`similar`'s `diff_deadline_impl`): past the budget, what is left of
/// each range still to search is reported as deleted and inserted.
pub(super) fn search<O, N, D>(
    d: &mut D,
    old: &[O],
    new: &[N],
    budget: &mut Budget,
) -> Result<(), D::Error>
where
    N: PartialEq<O>,
    D: DiffHook,
{
    let prefix = common_prefix_len(old, 0..old.len(), new, 0..new.len(), budget);
    let suffix = common_suffix_len(old, prefix..old.len(), new, prefix..new.len(), budget);
    let old_range = prefix..old.len() - suffix;
    let new_range = prefix..new.len() - suffix;
    if prefix > 0 {
        d.equal(0, 0, prefix)?;
    }
    if old_range.is_empty() && new_range.is_empty() {
        // Nothing to emit.
    } else if old_range.is_empty() {
        d.insert(old_range.start, new_range.start, new_range.len())?;
    } else if new_range.is_empty() {
        d.delete(old_range.start, old_range.len(), new_range.start)?;
    } else {
        let max_d = max_d(old_range.len(), new_range.len());
        let mut search = Search {
            old,
            new,
            vf: V::new(max_d),
            vb: V::new(max_d),
            budget,
        };
        search.conquer(d, old_range, new_range, MyersMode::Heuristic)?;
    }
    if suffix > 0 {
        d.equal(old.len() - suffix, new.len() - suffix, suffix)?;
    }
    d.finish()
}

/// What the recursion shares: the two sides, the furthest-reaching paths
/// (reused by every middle-snake search) and the budget.
struct Search<'a, O, N> {
    old: &'a [O],
    new: &'a [N],
    vf: V,
    vb: V,
    budget: &'a mut Budget,
}

impl<O, N: PartialEq<O>> Search<'_, O, N> {
    /// `similar`'s `conquer`: trim the ranges' common ends, then peel
    /// anchors, solve a small side exactly, or split at a middle snake and
    /// recurse. A range whose search finds no split (the budget ran out)
    /// is deleted and inserted whole.
    fn conquer<D: DiffHook>(
        &mut self,
        d: &mut D,
        mut old_range: Range<usize>,
        mut new_range: Range<usize>,
        mode: MyersMode,
    ) -> Result<(), D::Error> {
        let (old, new) = (self.old, self.new);
        let prefix = common_prefix_len(old, old_range.clone(), new, new_range.clone(), self.budget);
        if prefix > 0 {
            d.equal(old_range.start, new_range.start, prefix)?;
        }
        old_range.start += prefix;
        new_range.start += prefix;
        let suffix = common_suffix_len(old, old_range.clone(), new, new_range.clone(), self.budget);
        let common_suffix = (old_range.end - suffix, new_range.end - suffix);
        old_range.end -= suffix;
        new_range.end -= suffix;

        while !old_range.is_empty() && !new_range.is_empty() {
            let before = (old_range.start, new_range.start);
            try_emit_front_anchor(d, old, &mut old_range, new, &mut new_range, self.budget)?;
            if (old_range.start, new_range.start) == before {
                break;
            }
        }

        if old_range.is_empty() && new_range.is_empty() {
            // Nothing to emit.
        } else if new_range.is_empty() {
            d.delete(old_range.start, old_range.len(), new_range.start)?;
        } else if old_range.is_empty() {
            d.insert(old_range.start, new_range.start, new_range.len())?;
        } else if maybe_emit_small_side_exact(
            d,
            old,
            old_range.clone(),
            new,
            new_range.clone(),
            self.budget,
        )? {
            // The exact fallback emitted the script.
        } else if let Some(split) = find_middle_snake(
            old,
            old_range.clone(),
            new,
            new_range.clone(),
            &mut self.vf,
            &mut self.vb,
            mode,
            self.budget,
        ) {
            let (old_a, old_b) = (
                old_range.start..split.old_index,
                split.old_index..old_range.end,
            );
            let (new_a, new_b) = (
                new_range.start..split.new_index,
                split.new_index..new_range.end,
            );
            self.conquer(d, old_a, new_a, split.left_mode)?;
            self.conquer(d, old_b, new_b, split.right_mode)?;
        } else {
            d.delete(old_range.start, old_range.len(), new_range.start)?;
            d.insert(old_range.start, new_range.start, new_range.len())?;
        }

        if suffix > 0 {
            d.equal(common_suffix.0, common_suffix.1, suffix)?;
        }
        Ok(())
    }
}

/// How many elements of the ranges are equal from their starts.
fn common_prefix_len<O, N: PartialEq<O>>(
    old: &[O],
    old_range: Range<usize>,
    new: &[N],
    new_range: Range<usize>,
    budget: &mut Budget,
) -> usize {
    equal_run(old, new, new_range.zip(old_range), budget)
}

/// How many elements of the ranges are equal from their ends.
fn common_suffix_len<O, N: PartialEq<O>>(
    old: &[O],
    old_range: Range<usize>,
    new: &[N],
    new_range: Range<usize>,
    budget: &mut Budget,
) -> usize {
    equal_run(old, new, new_range.rev().zip(old_range.rev()), budget)
}

/// How many of the `(new, old)` index pairs hold equal elements before the
/// first that does not. Counted, never stopped: the lines it finds are
/// emitted, so over the whole search it costs at most one look at each
/// line and one per range.
fn equal_run<O, N: PartialEq<O>>(
    old: &[O],
    new: &[N],
    pairs: impl Iterator<Item = (usize, usize)>,
    budget: &mut Budget,
) -> usize {
    let len = pairs.take_while(|&(n, o)| new[n] == old[o]).count();
    budget.charge(len + 1);
    len
}

#[cfg(test)]
mod tests;
