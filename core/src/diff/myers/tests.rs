//! The port against `similar` itself: with budget enough, the same
//! operations on inputs shaped to take each of its paths; with less, a
//! correct script from a bounded amount of work.

use std::cell::Cell;

use proptest::prelude::*;
use similar::DiffOp;
use similar::algorithms::{Capture, myers};

use super::super::limits::Budget;
use super::super::numbering::NewId;
use super::search;

/// The new side as the line diff gives it: a type of its own, so that
/// `similar` does not reduce the input before its search (it reduces only
/// inputs whose sides have one type), as the diff never lets it.
fn new_ids(new: &[u32]) -> Vec<NewId> {
    new.iter().copied().map(NewId).collect()
}

fn ours(old: &[u32], new: &[u32], budget: &mut Budget) -> Vec<DiffOp> {
    let mut capture = Capture::new();
    let Ok(()) = search(&mut capture, old, &new_ids(new), budget);
    capture.into_ops()
}

fn similars(old: &[u32], new: &[u32]) -> Vec<DiffOp> {
    let mut capture = Capture::new();
    let new = new_ids(new);
    let Ok(()) = myers::diff(&mut capture, old, 0..old.len(), &new, 0..new.len());
    capture.into_ops()
}

/// `ops` cover each side in order, and what they call equal is. (A
/// deletion says where the new side is, an insertion where the old side
/// was before the deletion next to it: only the side an operation moves
/// along is checked.)
fn assert_script(ops: &[DiffOp], old: &[u32], new: &[u32]) {
    let (mut o, mut n) = (0, 0);
    for op in ops {
        let (_, old_range, new_range) = op.as_tag_tuple();
        if !matches!(op, DiffOp::Insert { .. }) {
            assert_eq!(old_range.start, o, "{op:?}");
            o = old_range.end;
        }
        if !matches!(op, DiffOp::Delete { .. }) {
            assert_eq!(new_range.start, n, "{op:?}");
            n = new_range.end;
        }
        if let DiffOp::Equal { .. } = op {
            assert_eq!(old[old_range], new[new_range]);
        }
    }
    assert_eq!((o, n), (old.len(), new.len()));
}

/// Values from a small alphabet: many ties for the search to break.
fn few(len: std::ops::Range<usize>) -> impl Strategy<Value = Vec<u32>> {
    proptest::collection::vec(0u32..12, len)
}

/// A side and a copy of it with blocks taken out and others put in: far
/// more changes than the search takes rounds before it settles for the
/// furthest it reached.
fn blocks() -> impl Strategy<Value = (Vec<u32>, Vec<u32>)> {
    edited(400, 1_500..2_500, 40..120, 40)
}

/// A long side and a copy with hundreds of changes of a line or two: long
/// snakes (twenty elements and more) between many changes, the shape on
/// which the search settles for a good split once it has become expensive
/// (only past 256 rounds, and so only when the sides have more than 66,049
/// elements together: before that, the limit on rounds settles first).
fn sparse() -> impl Strategy<Value = (Vec<u32>, Vec<u32>)> {
    edited(20_000, 34_000..36_000, 700..900, 3)
}

/// A side of `len` values below `values`, and a copy with `edits` changes:
/// each takes out fewer than `most` elements and puts as many in.
fn edited(
    values: u32,
    len: std::ops::Range<usize>,
    edits: std::ops::Range<usize>,
    most: usize,
) -> impl Strategy<Value = (Vec<u32>, Vec<u32>)> {
    (
        proptest::collection::vec(0u32..values, len.clone()),
        proptest::collection::vec((0..len.end, 0..most, few(0..most)), edits),
    )
        .prop_map(|(old, edits)| {
            let mut new = old.clone();
            for (at, remove, block) in edits {
                let at = at % (new.len() + 1);
                let end = (at + remove).min(new.len());
                new.splice(at..end, block);
            }
            (old, new)
        })
}

/// A side, and the same side shifted by up to four new elements and
/// followed by as much again: the front-anchor shortcut's shape.
fn shifted() -> impl Strategy<Value = (Vec<u32>, Vec<u32>)> {
    (
        proptest::collection::vec(20u32..1_000, 97..400),
        few(1..5),
        proptest::collection::vec(0u32..1_000, 400..800),
    )
        .prop_map(|(old, head, tail)| {
            let mut new = head;
            new.extend(&old);
            new.extend(tail);
            (old, new)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn the_same_operations_as_similar_on_many_ties(old in few(0..300), new in few(0..300)) {
        prop_assert_eq!(ours(&old, &new, &mut Budget::new(u64::MAX)), similars(&old, &new));
    }

    /// One side of at most 64 elements, the other of at least 512: the
    /// table of common-subsequence lengths.
    #[test]
    fn the_same_operations_as_similar_with_a_small_side(
        small in few(1..65),
        large in few(512..900),
        small_is_old: bool,
    ) {
        let (old, new) = if small_is_old { (small, large) } else { (large, small) };
        prop_assert_eq!(ours(&old, &new, &mut Budget::new(u64::MAX)), similars(&old, &new));
    }

    #[test]
    fn the_same_operations_as_similar_on_a_shift((old, new) in shifted(), swap: bool) {
        let (old, new) = if swap { (new, old) } else { (old, new) };
        prop_assert_eq!(ours(&old, &new, &mut Budget::new(u64::MAX)), similars(&old, &new));
    }

    /// Far more changes than the search takes rounds before it settles.
    #[test]
    fn the_same_operations_as_similar_on_many_changes((old, new) in blocks()) {
        prop_assert_eq!(ours(&old, &new, &mut Budget::new(u64::MAX)), similars(&old, &new));
    }

    #[test]
    fn the_same_operations_as_similar_on_sparse_changes((old, new) in sparse()) {
        prop_assert_eq!(ours(&old, &new, &mut Budget::new(u64::MAX)), similars(&old, &new));
    }

    /// The budget is counted exactly: what a search took, given as its
    /// budget, gives the same search; half of it, a coarser one that is
    /// still a correct script.
    #[test]
    fn the_work_a_search_takes_is_the_budget_it_needs((old, new) in blocks()) {
        let mut unlimited = Budget::new(u64::MAX);
        let exact = ours(&old, &new, &mut unlimited);
        let needed = u64::MAX - unlimited.left();
        let mut just = Budget::new(needed);
        prop_assert_eq!(ours(&old, &new, &mut just), exact.clone());
        prop_assert!(!just.exhausted());
        let mut short = Budget::new(needed / 2);
        let coarse = ours(&old, &new, &mut short);
        prop_assert!(short.exhausted());
        prop_assert_ne!(&coarse, &exact);
        assert_script(&coarse, &old, &new);
    }
}

thread_local! {
    static COMPARED: Cell<u64> = const { Cell::new(0) };
}

/// A value that counts how often it is compared.
#[derive(Debug)]
struct Counted(u32);

impl PartialEq for Counted {
    fn eq(&self, other: &Counted) -> bool {
        COMPARED.with(|c| c.set(c.get() + 1));
        self.0 == other.0
    }
}

/// Myers' worst case: the same values in two orders.
fn hard(len: usize) -> (Vec<u32>, Vec<u32>) {
    let side = |step: usize| (0..len).map(|i| (i * step % 1_000) as u32).collect();
    (side(7), side(11))
}

#[test]
fn a_search_compares_at_most_its_budget_and_a_little_more() {
    let (old, new) = hard(20_000);
    let (counted_old, counted_new): (Vec<Counted>, Vec<Counted>) = (
        old.iter().copied().map(Counted).collect(),
        new.iter().copied().map(Counted).collect(),
    );
    for steps in [0, 1_000, 100_000, 2_000_000] {
        COMPARED.with(|c| c.set(0));
        let mut budget = Budget::new(steps);
        let mut capture = Capture::new();
        let Ok(()) = search(&mut capture, &counted_old, &counted_new, &mut budget);
        assert!(budget.exhausted(), "{steps} steps do not finish it");
        let compared = COMPARED.with(Cell::get);
        // Past the budget: at most the snake that refused it (a side's
        // length) and the common ends of the ranges still to search.
        let slack = 2 * (old.len() + new.len()) as u64;
        assert!(
            compared <= steps + slack,
            "{compared} comparisons for {steps} steps"
        );
        let ops = capture.into_ops();
        assert_script(&ops, &old, &new);
        // The same texts and budget, the same operations.
        assert_eq!(ours(&old, &new, &mut Budget::new(steps)), ops);
    }
}

/// Every comparison is paid for on the shortcuts' paths too (a small side's
/// table, an anchor peeled off a shift), but for the table's walk, which
/// looks at most twice at each element.
#[test]
fn comparisons_are_paid_on_every_path() {
    let shapes: Vec<(Vec<u32>, Vec<u32>)> = vec![
        (
            (0..64).map(|i| i * 7 % 13).collect(),
            (0..2_000).map(|i| i * 11 % 13).collect(),
        ),
        (
            (0..3_000).collect(),
            [9_000, 9_001]
                .into_iter()
                .chain(0..3_000)
                .chain(5_000..12_000)
                .collect(),
        ),
    ];
    for (old, new) in shapes {
        let (counted_old, counted_new): (Vec<Counted>, Vec<Counted>) = (
            old.iter().copied().map(Counted).collect(),
            new.iter().copied().map(Counted).collect(),
        );
        COMPARED.with(|c| c.set(0));
        let mut budget = Budget::new(u64::MAX);
        let mut capture = Capture::new();
        let Ok(()) = search(&mut capture, &counted_old, &counted_new, &mut budget);
        let spent = u64::MAX - budget.left();
        let compared = COMPARED.with(Cell::get);
        let walk = 2 * (old.len() + new.len()) as u64;
        assert!(
            compared <= spent + walk,
            "{compared} compared, {spent} spent"
        );
    }
}

/// Once a step is refused, every later step is refused too, however few
/// steps it asks: where the diff turns coarse depends only on the texts.
#[test]
fn a_refused_budget_stays_refused() {
    let mut budget = Budget::new(10);
    assert!(!budget.spend(11));
    assert!(budget.exhausted());
    assert!(!budget.spend(1));
}

/// An anchor of more than 768 equal elements ends the anchor search at
/// once (`similar`'s early break), which the shifted shapes above are too
/// short to reach.
#[test]
fn the_same_operations_as_similar_on_a_long_anchor() {
    let old: Vec<u32> = std::iter::repeat_n(1, 850)
        .chain([9])
        .chain(std::iter::repeat_n(1, 200))
        .collect();
    let new: Vec<u32> = [8]
        .into_iter()
        .chain(std::iter::repeat_n(1, 851))
        .chain([9])
        .chain(std::iter::repeat_n(1, 200))
        .chain(std::iter::repeat_n(7, 1_200))
        .collect();
    for (old, new) in [(&old, &new), (&new, &old)] {
        assert_eq!(
            ours(old, new, &mut Budget::new(u64::MAX)),
            similars(old, new)
        );
    }
}
