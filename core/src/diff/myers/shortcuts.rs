//! `similar`'s exactness-preserving shortcuts inside the recursion
//! (`similar` 3.2.1, `algorithms::myers`): peeling an anchor off the front
//! of a large shift, and solving a range with a small side by a table of
//! common-subsequence lengths. Each counts its work against the budget and
//! gives up (emitting nothing) when the budget runs out.

use std::cmp::Reverse;
use std::ops::Range;

use similar::algorithms::DiffHook;

use super::super::limits::Budget;

const SMALL_SIDE_EXACT_MAX: usize = 64;
const SMALL_SIDE_EXACT_MIN_LARGE: usize = 512;
const SMALL_SIDE_EXACT_MAX_WORK: usize = 64_000_000;
/// How many elements an anchor's run compares between two looks at the
/// budget (`similar`'s `FRONT_ANCHOR_DEADLINE_CHECK_INTERVAL`).
const FRONT_ANCHOR_CHECK_INTERVAL: usize = 1024;

/// Where one side has at most 64 elements and the other at least 512,
/// emit the exact script from a table of common-subsequence lengths and
/// say `true`; otherwise (or when the budget runs out while the table is
/// filled) emit nothing and say `false`.
pub(super) fn maybe_emit_small_side_exact<O, N: PartialEq<O>, D: DiffHook>(
    d: &mut D,
    old: &[O],
    old_range: Range<usize>,
    new: &[N],
    new_range: Range<usize>,
    budget: &mut Budget,
) -> Result<bool, D::Error> {
    if budget.exhausted() {
        return Ok(false);
    }
    let (old_len, new_len) = (old_range.len(), new_range.len());
    let small = old_len.min(new_len);
    let large = old_len.max(new_len);
    if small == 0
        || small > SMALL_SIDE_EXACT_MAX
        || large < SMALL_SIDE_EXACT_MIN_LARGE
        || old_len.saturating_mul(new_len) > SMALL_SIDE_EXACT_MAX_WORK
    {
        return Ok(false);
    }
    // The table's rows run over the small side (`similar`'s
    // `emit_small_old_exact` and `emit_small_new_exact`, which are each
    // other's mirror image): `first` is the small side, `second` the other.
    let first_is_old = old_len <= new_len;
    let table = Table {
        first_is_old,
        old_start: old_range.start,
        new_start: new_range.start,
        n: small,
        m: large,
    };
    let same = |i: usize, j: usize| {
        let (o, n) = table.real(i, j);
        new[n] == old[o]
    };
    let Some(dp) = table.fill(&same, budget) else {
        return Ok(false);
    };
    table.walk(d, &dp, &same)?;
    Ok(true)
}

/// A table of common-subsequence lengths between the small side (`first`,
/// `n` elements, the rows) and the other (`second`, `m` elements).
struct Table {
    first_is_old: bool,
    old_start: usize,
    new_start: usize,
    n: usize,
    m: usize,
}

impl Table {
    /// The old and new index of the table's `(i, j)`.
    fn real(&self, i: usize, j: usize) -> (usize, usize) {
        if self.first_is_old {
            (self.old_start + i, self.new_start + j)
        } else {
            (self.old_start + j, self.new_start + i)
        }
    }

    /// `dp[i][j]`: the length of the longest common subsequence of
    /// `first[i..]` and `second[j..]`; `None` when the budget does not
    /// cover its cells (looked at before the table is made: it may be 64 MB).
    fn fill(&self, same: &impl Fn(usize, usize) -> bool, budget: &mut Budget) -> Option<Vec<u8>> {
        let (n, m, width) = (self.n, self.m, self.m + 1);
        if !budget.spend(n * m) {
            return None;
        }
        let mut dp = vec![0u8; (n + 1) * width];
        for i in (0..n).rev() {
            let (row, next_row) = (i * width, (i + 1) * width);
            for j in (0..m).rev() {
                dp[row + j] = if same(i, j) {
                    dp[next_row + j + 1] + 1
                } else {
                    dp[next_row + j].max(dp[row + j + 1])
                };
            }
        }
        Some(dp)
    }

    /// Emit the script the table gives, preferring (as `similar` does) to
    /// move along the small side where both ways keep the longest common
    /// subsequence.
    fn walk<D: DiffHook>(
        &self,
        d: &mut D,
        dp: &[u8],
        same: &impl Fn(usize, usize) -> bool,
    ) -> Result<(), D::Error> {
        let (n, m, width) = (self.n, self.m, self.m + 1);
        let on_path =
            |i: usize, j: usize| same(i, j) && dp[i * width + j] == dp[(i + 1) * width + j + 1] + 1;
        let first_way = |i: usize, j: usize| dp[(i + 1) * width + j] >= dp[i * width + j + 1];
        let (mut i, mut j) = (0, 0);
        while i < n && j < m {
            if on_path(i, j) {
                let start = (i, j);
                while i < n && j < m && on_path(i, j) {
                    i += 1;
                    j += 1;
                }
                let (o, nw) = self.real(start.0, start.1);
                d.equal(o, nw, i - start.0)?;
            } else if first_way(i, j) {
                let start = i;
                while i < n && !on_path(i, j) && first_way(i, j) {
                    i += 1;
                }
                self.along_first(d, start, i - start, j)?;
            } else {
                let start = j;
                while j < m && !on_path(i, j) && !first_way(i, j) {
                    j += 1;
                }
                self.along_second(d, i, start, j - start)?;
            }
        }
        let (o, nw) = self.real(i, j);
        let (old_left, new_left) = if self.first_is_old {
            (n - i, m - j)
        } else {
            (m - j, n - i)
        };
        if old_left > 0 {
            d.delete(o, old_left, nw)?;
        }
        if new_left > 0 {
            d.insert(o, nw, new_left)?;
        }
        Ok(())
    }

    /// `len` elements of the small side from `i`, at `j` of the other: the
    /// small side's elements are the ones deleted (old) or inserted (new).
    fn along_first<D: DiffHook>(
        &self,
        d: &mut D,
        i: usize,
        len: usize,
        j: usize,
    ) -> Result<(), D::Error> {
        let (o, n) = self.real(i, j);
        if self.first_is_old {
            d.delete(o, len, n)
        } else {
            d.insert(o, n, len)
        }
    }

    /// `len` elements of the large side from `j`, at `i` of the small one.
    fn along_second<D: DiffHook>(
        &self,
        d: &mut D,
        i: usize,
        j: usize,
        len: usize,
    ) -> Result<(), D::Error> {
        let (o, n) = self.real(i, j);
        if self.first_is_old {
            d.insert(o, n, len)
        } else {
            d.delete(o, len, n)
        }
    }
}

/// Where one range is at least twice the other and both have more than 96
/// elements, look for a long run of equal elements after skipping up to 4
/// elements of the larger side; emit the skip and the run and move the
/// ranges past them (`similar`'s `try_emit_front_anchor`).
pub(super) fn try_emit_front_anchor<O, N: PartialEq<O>, D: DiffHook>(
    d: &mut D,
    old: &[O],
    old_range: &mut Range<usize>,
    new: &[N],
    new_range: &mut Range<usize>,
    budget: &mut Budget,
) -> Result<(), D::Error> {
    const MAX_SKIP: usize = 4;
    const MIN_ANCHOR_COMMON: usize = 96;

    let (old_len, new_len) = (old_range.len(), new_range.len());
    if old_len <= MIN_ANCHOR_COMMON || new_len <= MIN_ANCHOR_COMMON {
        return Ok(());
    }
    // Most profitable when one side is much larger than the other (large
    // appends and prepends); on similar sizes the scan costs more than it
    // saves.
    let small = old_len.min(new_len);
    let large = old_len.max(new_len);
    if large < small.saturating_mul(2) {
        return Ok(());
    }
    let max_old_skip = old_len.saturating_sub(1).min(MAX_SKIP);
    let max_new_skip = new_len.saturating_sub(1).min(MAX_SKIP);
    let prefer_insert_anchor = new_len > old_len;
    let prefer_delete_anchor = old_len > new_len;

    let mut best: Option<(usize, usize, usize)> = None;
    'search: for old_skip in 0..=max_old_skip {
        for new_skip in 0..=max_new_skip {
            if budget.exhausted() {
                return Ok(());
            }
            // Exactness-preserving only when peeling one-sided shifts from
            // the larger side: on repetitive inputs, the other ways can
            // commit to a locally long but globally worse alignment.
            let one_sided = (old_skip == 0) != (new_skip == 0);
            let from_larger = if old_skip == 0 {
                !prefer_delete_anchor
            } else {
                !prefer_insert_anchor
            };
            if !one_sided || !from_larger {
                continue;
            }
            budget.charge(1);
            if new[new_range.start + new_skip] != old[old_range.start + old_skip] {
                continue;
            }
            let Some(common) = run_within_budget(
                old,
                old_range.start + old_skip..old_range.end,
                new,
                new_range.start + new_skip..new_range.end,
                budget,
            ) else {
                return Ok(());
            };
            if common >= MIN_ANCHOR_COMMON {
                if common >= MIN_ANCHOR_COMMON * 8 {
                    best = Some((old_skip, new_skip, common));
                    break 'search;
                }
                let candidate = (common, Reverse(old_skip.max(new_skip)), old_skip, new_skip);
                let better = best.is_none_or(|(best_old, best_new, best_common)| {
                    candidate
                        > (
                            best_common,
                            Reverse(best_old.max(best_new)),
                            best_old,
                            best_new,
                        )
                });
                if better {
                    best = Some((old_skip, new_skip, common));
                }
            }
        }
    }

    let Some((old_skip, new_skip, common)) = best else {
        return Ok(());
    };
    match (old_skip, new_skip) {
        (0, 0) => {}
        (0, new_skip) => d.insert(old_range.start, new_range.start, new_skip)?,
        (old_skip, 0) => d.delete(old_range.start, old_skip, new_range.start)?,
        (old_skip, new_skip) => d.replace(old_range.start, old_skip, new_range.start, new_skip)?,
    }
    d.equal(
        old_range.start + old_skip,
        new_range.start + new_skip,
        common,
    )?;
    old_range.start += old_skip + common;
    new_range.start += new_skip + common;
    Ok(())
}

/// How many elements are equal from the ranges' starts, or `None` when the
/// budget runs out first (looked at every [`FRONT_ANCHOR_CHECK_INTERVAL`]
/// elements, as `similar` looks at its clock).
fn run_within_budget<O, N: PartialEq<O>>(
    old: &[O],
    old_range: Range<usize>,
    new: &[N],
    new_range: Range<usize>,
    budget: &mut Budget,
) -> Option<usize> {
    let max_len = old_range.len().min(new_range.len());
    let mut matched = 0;
    while matched < max_len {
        if matched.is_multiple_of(FRONT_ANCHOR_CHECK_INTERVAL)
            && !budget.spend(FRONT_ANCHOR_CHECK_INTERVAL.min(max_len - matched))
        {
            return None;
        }
        if new[new_range.start + matched] != old[old_range.start + matched] {
            break;
        }
        matched += 1;
    }
    Some(matched)
}
