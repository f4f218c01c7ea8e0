//! How much of a diff is shown, and how much work it may take.

/// Lines of context around each change.
pub const CONTEXT_LINES: usize = 3;
/// Most lines a preview holds, headers included.
pub const MAX_PREVIEW_LINES: usize = 100;
/// Most bytes a preview holds (UTF-8, newlines included), headers included.
pub const MAX_PREVIEW_BYTES: usize = 10_240;
/// Appended (on its own line, not counted) to a preview that was cut.
pub const TRUNCATION_MARK: &str = "... (truncated)";

/// Old and new text together from which the diff gets its whole budget;
/// smaller texts get a share in proportion (see [`DiffLimits::work_for`]).
pub const FULL_BUDGET_BYTES: usize = 64 << 20;
/// The least share of the budget any text gets: 1/32.
pub const MIN_BUDGET_SHARE: u64 = 32;
/// Steps (a diagonal followed, a line compared, a cell of a table filled)
/// that one millisecond of the budget stands for: about what the component
/// does in a millisecond on the machine of BENCHMARKS.md, so that the
/// setting, once a time, still reads as one (BENCHMARKS.md#the-diffs-budget).
pub const STEPS_PER_MS: u64 = 70_000;
/// What numbering a line costs where it is hashed and looked up, in
/// steps: about its time in the component, where numbering is the larger
/// part of a diff of many short lines (BENCHMARKS.md#the-diffs-budget).
/// More than the 57 ns a line of W7 takes, whose thousand distinct lines
/// fit in the cache, because a table of millions of distinct lines does
/// not.
pub const NUMBERING_STEPS_HASHED: usize = 8;
/// What numbering a line costs where the old line on its diagonal is the
/// same (one comparison, no hashing).
pub const NUMBERING_STEPS_COMPARED: usize = 2;
/// Bytes of a line for a step more of numbering it.
pub const NUMBERING_BYTES_PER_STEP: usize = 16;

/// Bounds on the preview and on the work the diff may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffLimits {
    /// Most lines in the preview.
    pub max_lines: usize,
    /// Most bytes in the preview.
    pub max_bytes: usize,
    /// The work the diff may do on the largest texts, in milliseconds of
    /// `STEPS_PER_MS` (70,000) steps each; see [`work_for`](Self::work_for).
    pub budget_ms: u64,
}

impl Default for DiffLimits {
    fn default() -> Self {
        DiffLimits {
            max_lines: MAX_PREVIEW_LINES,
            max_bytes: MAX_PREVIEW_BYTES,
            budget_ms: write_tool_wire::defaults::DIFF_TIMEOUT_MS,
        }
    }
}

impl DiffLimits {
    /// How many steps the search may take on `bytes` of old and new text
    /// together: the share of [`budget_ms`](Self::budget_ms) that `bytes`
    /// is of 64 MiB (`FULL_BUDGET_BYTES`), at least 1/32 of it
    /// (`MIN_BUDGET_SHARE`), at most all of it, `STEPS_PER_MS` steps a
    /// millisecond.
    ///
    /// Work, not time, so that the same change gets the same diff on any
    /// machine however busy. A share in proportion to the text, because an
    /// ordinary diff (a few scattered edits, or every line rewritten) takes
    /// work in proportion to it: the share leaves such a diff an order of
    /// magnitude more than it needs, while content built to be hard for the
    /// diff is cut short after the work of a few ordinary calls of its size
    /// (BENCHMARKS.md#the-diffs-budget). Past the budget the diff is coarser
    /// (whole regions replaced) and still correct, and the counts are those
    /// of the diff given. One number scales it all: a host that wants exact
    /// diffs at any cost raises it.
    pub fn work_for(&self, bytes: usize) -> u64 {
        let all = u128::from(self.budget_ms) * u128::from(STEPS_PER_MS);
        let share = all
            .saturating_mul(bytes as u128)
            .div_ceil(FULL_BUDGET_BYTES as u128);
        let share = share.max(all / u128::from(MIN_BUDGET_SHARE)).min(all);
        u64::try_from(share).unwrap_or(u64::MAX)
    }
}

/// The budget refused a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct OutOfBudget;

/// The steps a search may still take. Once a step is refused, every search
/// still to run gives up at its first look, so where the diff turns coarse
/// depends only on the texts.
#[derive(Debug)]
pub(super) struct Budget {
    left: u64,
    refused: bool,
}

impl Budget {
    pub(super) fn new(steps: u64) -> Budget {
        Budget {
            left: steps,
            refused: false,
        }
    }

    /// Take `steps` if they are left, and say whether they were.
    #[inline]
    pub(super) fn spend(&mut self, steps: usize) -> bool {
        match self.left.checked_sub(steps as u64) {
            Some(left) if !self.refused => {
                self.left = left;
                true
            }
            _ => {
                self.refused = true;
                false
            }
        }
    }

    /// Count `steps` of work that is done whatever is left (work that
    /// never runs far: each line at most once over the whole search).
    #[inline]
    pub(super) fn charge(&mut self, steps: usize) {
        self.left = self.left.saturating_sub(steps as u64);
    }

    /// [`spend`](Self::spend), as a `Result`.
    pub(super) fn take(&mut self, steps: usize) -> Result<(), OutOfBudget> {
        if self.spend(steps) {
            Ok(())
        } else {
            Err(OutOfBudget)
        }
    }

    /// Whether a step was refused: the diff is coarse.
    pub(super) fn exhausted(&self) -> bool {
        self.refused
    }

    #[cfg(test)]
    pub(super) fn left(&self) -> u64 {
        self.left
    }
}
