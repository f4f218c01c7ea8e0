//! The divide step: the middle snake of a shortest edit path, searched
//! from both corners at once, with `similar`'s Git-style limits on how long
//! the search goes on before it settles for a good split (`similar` 3.2.1,
//! `algorithms::myers::find_middle_snake`), and the budget looked at on
//! every diagonal.

use std::ops::{Index, IndexMut, Range};

use super::super::limits::Budget;

/// Whether a search looks for the shortest path only (`Raw`) or may settle
/// for a good split once it has become expensive (`Heuristic`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MyersMode {
    Heuristic,
    Raw,
}

// `similar`'s constants, after Git/xdiff's practical Myers policy: once the
// search has become expensive, a long diagonal is a useful split even when
// it is not known to lie on a shortest edit path, and a size-dependent cap
// keeps inputs without such a diagonal from making the search quadratic.
const HEURISTIC_MIN_COST: usize = 256;
const HEURISTIC_MIN_SNAKE: usize = 20;
const HEURISTIC_MIN_MAX_COST: usize = 256;
const HEURISTIC_PROGRESS_FACTOR: usize = 4;

/// The endpoints of the furthest-reaching paths, by diagonal `k` (which
/// may be negative): for each, only `x` is kept, as `y` is `x - k`.
#[derive(Debug)]
pub(super) struct V {
    offset: isize,
    v: Vec<usize>,
}

impl V {
    pub(super) fn new(max_d: usize) -> Self {
        Self {
            offset: max_d as isize,
            v: vec![0; 2 * max_d],
        }
    }
}

impl Index<isize> for V {
    type Output = usize;

    fn index(&self, index: isize) -> &usize {
        &self.v[(index + self.offset) as usize]
    }
}

impl IndexMut<isize> for V {
    fn index_mut(&mut self, index: isize) -> &mut usize {
        &mut self.v[(index + self.offset) as usize]
    }
}

/// How many rounds a search of these lengths may take, and so how many
/// diagonals on either side of 0 `V` holds.
pub(super) fn max_d(len1: usize, len2: usize) -> usize {
    (len1 + len2).div_ceil(2) + 1
}

#[derive(Clone, Copy, Debug)]
enum SplitDirection {
    Forward,
    Backward,
}

#[derive(Clone, Copy, Debug)]
struct HeuristicSplit {
    old_index: usize,
    new_index: usize,
    progress: usize,
    direction: SplitDirection,
}

/// Where to split, and how to search each half: an exact split keeps the
/// shortest path in both; a heuristic one searches exactly only the half
/// the search already went through.
#[derive(Clone, Copy, Debug)]
pub(super) struct MiddleSnakeSplit {
    pub(super) old_index: usize,
    pub(super) new_index: usize,
    pub(super) left_mode: MyersMode,
    pub(super) right_mode: MyersMode,
}

impl MiddleSnakeSplit {
    fn exact(old_index: usize, new_index: usize) -> Self {
        Self {
            old_index,
            new_index,
            left_mode: MyersMode::Raw,
            right_mode: MyersMode::Raw,
        }
    }

    fn heuristic(split: HeuristicSplit, old_start: usize, new_start: usize) -> Self {
        let (left_mode, right_mode) = match split.direction {
            SplitDirection::Forward => (MyersMode::Raw, MyersMode::Heuristic),
            SplitDirection::Backward => (MyersMode::Heuristic, MyersMode::Raw),
        };
        Self {
            old_index: old_start + split.old_index,
            new_index: new_start + split.new_index,
            left_mode,
            right_mode,
        }
    }
}

fn update_best_split(best: &mut Option<HeuristicSplit>, candidate: HeuristicSplit) {
    if best
        .as_ref()
        .is_none_or(|current| candidate.progress > current.progress)
    {
        *best = Some(candidate);
    }
}

fn is_interior_split(old_index: usize, new_index: usize, old_len: usize, new_len: usize) -> bool {
    old_index <= old_len
        && new_index <= new_len
        && (old_index != 0 || new_index != 0)
        && (old_index != old_len || new_index != new_len)
}

fn clamp_diagonal_point(
    old_index: usize,
    diagonal: isize,
    old_len: usize,
    new_len: usize,
) -> Option<(usize, usize)> {
    if diagonal < 0 && diagonal.unsigned_abs() > new_len {
        return None;
    }
    let min_old = diagonal.max(0) as usize;
    let max_old = if diagonal >= 0 {
        old_len.min(new_len.saturating_add(diagonal as usize))
    } else {
        old_len.min(new_len.saturating_sub(diagonal.unsigned_abs()))
    };
    if min_old > max_old {
        return None;
    }
    let old_index = old_index.clamp(min_old, max_old);
    Some((old_index, (old_index as isize - diagonal) as usize))
}

fn heuristic_max_cost(old_len: usize, new_len: usize) -> usize {
    old_len
        .saturating_add(new_len)
        .isqrt()
        .max(HEURISTIC_MIN_MAX_COST)
}

/// The search's state within one round: the splits it may settle for.
#[derive(Default)]
struct Round {
    good: Option<HeuristicSplit>,
    forward: Option<HeuristicSplit>,
    backward: Option<HeuristicSplit>,
}

/// What does not change while one middle snake is searched.
struct Sweep<'a, O, N> {
    old: &'a [O],
    old_range: Range<usize>,
    new: &'a [N],
    new_range: Range<usize>,
    n: usize,
    m: usize,
    delta: isize,
    odd: bool,
}

/// What a diagonal of a round found.
enum Found {
    /// The two directions met: the exact split.
    Split(MiddleSnakeSplit),
    /// The budget refused the diagonal's steps.
    OutOfBudget,
}

/// The middle snake of `old_range` against `new_range` (both non-empty),
/// or `None` when the budget ran out first. Each diagonal followed costs
/// one step and one per element its snake compares.
#[allow(
    clippy::too_many_arguments,
    reason = "similar's signature, plus the budget"
)]
pub(super) fn find_middle_snake<O, N: PartialEq<O>>(
    old: &[O],
    old_range: Range<usize>,
    new: &[N],
    new_range: Range<usize>,
    vf: &mut V,
    vb: &mut V,
    mode: MyersMode,
    budget: &mut Budget,
) -> Option<MiddleSnakeSplit> {
    let (n, m) = (old_range.len(), new_range.len());
    // By Lemma 1 of the paper, the shortest edit script's length is odd or
    // even as `delta` is.
    let delta = n as isize - m as isize;
    let sweep = Sweep {
        old,
        old_range,
        new,
        new_range,
        n,
        m,
        delta,
        odd: delta & 1 == 1,
    };
    vf[1] = 0;
    vb[1] = 0;
    let max_cost = match mode {
        MyersMode::Heuristic => heuristic_max_cost(n, m),
        MyersMode::Raw => usize::MAX,
    };
    for d in 0..max_d(n, m) as isize {
        if budget.exhausted() {
            break;
        }
        let mut round = Round::default();
        // The furthest-reaching splits are consulted only once the work
        // limit is hit, and good long snakes are accepted only after the
        // search has become expensive: no bookkeeping before then.
        let limit = mode == MyersMode::Heuristic && d as usize >= max_cost;
        let good = mode == MyersMode::Heuristic && d as usize > HEURISTIC_MIN_COST;
        match sweep.forward(d, vf, vb, budget, &mut round, (limit, good)) {
            Some(Found::Split(split)) => return Some(split),
            Some(Found::OutOfBudget) => return None,
            None => {}
        }
        match sweep.backward(d, vf, vb, budget, &mut round, (limit, good)) {
            Some(Found::Split(split)) => return Some(split),
            Some(Found::OutOfBudget) => return None,
            None => {}
        }
        if let Some(split) = round.good {
            return Some(sweep.heuristic(split));
        }
        if d as usize >= max_cost {
            let split = match (round.forward, round.backward) {
                (Some(forward), Some(backward)) => {
                    if forward.progress > backward.progress {
                        forward
                    } else {
                        backward
                    }
                }
                (Some(split), None) | (None, Some(split)) => split,
                (None, None) => break,
            };
            return Some(sweep.heuristic(split));
        }
    }
    // The budget ran out (or the search found no split) first.
    None
}

impl<O, N: PartialEq<O>> Sweep<'_, O, N> {
    fn heuristic(&self, split: HeuristicSplit) -> MiddleSnakeSplit {
        MiddleSnakeSplit::heuristic(split, self.old_range.start, self.new_range.start)
    }

    /// Round `d` of the forward search, from the top left corner.
    /// `track` says whether to note the furthest split (`.0`) and good
    /// snakes (`.1`).
    fn forward(
        &self,
        d: isize,
        vf: &mut V,
        vb: &V,
        budget: &mut Budget,
        round: &mut Round,
        track: (bool, bool),
    ) -> Option<Found> {
        let (n, m, delta) = (self.n, self.m, self.delta);
        let mut k = d;
        while k >= -d {
            let mut x = if k == -d || (k != d && vf[k - 1] < vf[k + 1]) {
                vf[k + 1]
            } else {
                vf[k - 1] + 1
            };
            let y = (x as isize - k) as usize;
            let (x0, y0) = (x, y);
            if x < n && y < m {
                x += common_prefix_len_at(
                    self.old,
                    self.old_range.start + x,
                    self.old_range.end,
                    self.new,
                    self.new_range.start + y,
                    self.new_range.end,
                );
            }
            let snake_len = x - x0;
            if !budget.spend(snake_len + 1) {
                return Some(Found::OutOfBudget);
            }
            vf[k] = x;
            // The forward search meets the backward one only when N - M is
            // odd and a diagonal of the other direction reaches this one.
            if self.odd && (k - delta).abs() <= (d - 1) && vf[k] + vb[-(k - delta)] >= n {
                return Some(Found::Split(MiddleSnakeSplit::exact(
                    x0 + self.old_range.start,
                    y0 + self.new_range.start,
                )));
            }
            if track.0
                && let Some((split_old, split_new)) = clamp_diagonal_point(x, k, n, m)
                && is_interior_split(split_old, split_new, n, m)
            {
                update_best_split(
                    &mut round.forward,
                    HeuristicSplit {
                        old_index: split_old,
                        new_index: split_new,
                        progress: split_old.saturating_add(split_new),
                        direction: SplitDirection::Forward,
                    },
                );
            }
            if track.1 && snake_len >= HEURISTIC_MIN_SNAKE && x < n && y < m {
                let useful_progress = x.saturating_add(y).saturating_sub(k.unsigned_abs());
                if useful_progress > HEURISTIC_PROGRESS_FACTOR.saturating_mul(d as usize)
                    && is_interior_split(x0, y0, n, m)
                {
                    update_best_split(
                        &mut round.good,
                        HeuristicSplit {
                            old_index: x0,
                            new_index: y0,
                            progress: useful_progress,
                            direction: SplitDirection::Forward,
                        },
                    );
                }
            }
            k -= 2;
        }
        None
    }

    /// Round `d` of the backward search, from the bottom right corner.
    fn backward(
        &self,
        d: isize,
        vf: &V,
        vb: &mut V,
        budget: &mut Budget,
        round: &mut Round,
        track: (bool, bool),
    ) -> Option<Found> {
        let (n, m, delta) = (self.n, self.m, self.delta);
        let mut k = d;
        while k >= -d {
            let mut x = if k == -d || (k != d && vb[k - 1] < vb[k + 1]) {
                vb[k + 1]
            } else {
                vb[k - 1] + 1
            };
            let mut y = (x as isize - k) as usize;
            let x0 = x;
            if x < n && y < m {
                let advance = common_suffix_len_at(
                    self.old,
                    self.old_range.start,
                    self.old_range.start + n - x,
                    self.new,
                    self.new_range.start,
                    self.new_range.start + m - y,
                );
                x += advance;
                y += advance;
            }
            let snake_len = x - x0;
            if !budget.spend(snake_len + 1) {
                return Some(Found::OutOfBudget);
            }
            vb[k] = x;
            if !self.odd && (k - delta).abs() <= d && vb[k] + vf[-(k - delta)] >= n {
                return Some(Found::Split(MiddleSnakeSplit::exact(
                    n - x + self.old_range.start,
                    m - y + self.new_range.start,
                )));
            }
            if track.0
                && let Some((distance_old, distance_new)) = clamp_diagonal_point(x, k, n, m)
            {
                let (split_old, split_new) = (n - distance_old, m - distance_new);
                if is_interior_split(split_old, split_new, n, m) {
                    update_best_split(
                        &mut round.backward,
                        HeuristicSplit {
                            old_index: split_old,
                            new_index: split_new,
                            progress: distance_old.saturating_add(distance_new),
                            direction: SplitDirection::Backward,
                        },
                    );
                }
            }
            if track.1 && snake_len >= HEURISTIC_MIN_SNAKE && x <= n && y <= m {
                let (split_old, split_new) = (n - x, m - y);
                let useful_progress = x.saturating_add(y).saturating_sub(k.unsigned_abs());
                if split_old > 0
                    && split_new > 0
                    && useful_progress > HEURISTIC_PROGRESS_FACTOR.saturating_mul(d as usize)
                {
                    update_best_split(
                        &mut round.good,
                        HeuristicSplit {
                            old_index: split_old,
                            new_index: split_new,
                            progress: useful_progress,
                            direction: SplitDirection::Backward,
                        },
                    );
                }
            }
            k -= 2;
        }
        None
    }
}

/// How many elements are equal from `old_start` and `new_start` on, up to
/// the ends: a snake. Not counted here: the caller counts it with the
/// diagonal it follows.
#[inline(always)]
fn common_prefix_len_at<O, N: PartialEq<O>>(
    old: &[O],
    old_start: usize,
    old_end: usize,
    new: &[N],
    new_start: usize,
    new_end: usize,
) -> usize {
    let max_len = (old_end - old_start).min(new_end - new_start);
    let mut matched = 0;
    while matched < max_len && new[new_start + matched] == old[old_start + matched] {
        matched += 1;
    }
    matched
}

/// How many elements are equal backwards from `old_end` and `new_end`, down
/// to the starts.
#[inline(always)]
fn common_suffix_len_at<O, N: PartialEq<O>>(
    old: &[O],
    old_start: usize,
    old_end: usize,
    new: &[N],
    new_start: usize,
    new_end: usize,
) -> usize {
    let max_len = (old_end - old_start).min(new_end - new_start);
    let mut matched = 0;
    while matched < max_len && new[new_end - 1 - matched] == old[old_end - 1 - matched] {
        matched += 1;
    }
    matched
}
