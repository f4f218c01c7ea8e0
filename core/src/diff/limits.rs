//! How much of a diff is shown, and how long it may take.

use std::time::{Duration, Instant};

/// Lines of context around each change.
pub const CONTEXT_LINES: usize = 3;
/// Most lines a preview holds, headers included.
pub const MAX_PREVIEW_LINES: usize = 100;
/// Most bytes a preview holds (UTF-8, newlines included), headers included.
pub const MAX_PREVIEW_BYTES: usize = 10_240;
/// Appended (on its own line, not counted) to a preview that was cut.
pub const TRUNCATION_MARK: &str = "... (truncated)";

/// Old and new text together from which the diff gets its whole timeout;
/// smaller texts get a share in proportion (see [`DiffLimits::time_for`]).
pub const FULL_TIMEOUT_BYTES: usize = 64 << 20;
/// The least share of the timeout any text gets: 1/32.
pub const MIN_TIMEOUT_SHARE: u32 = 32;

/// Bounds on the preview and on the time the diff may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffLimits {
    /// Most lines in the preview.
    pub max_lines: usize,
    /// Most bytes in the preview.
    pub max_bytes: usize,
    /// Most time the diff algorithm may take, on the largest texts; see
    /// [`time_for`](Self::time_for).
    pub timeout: Duration,
}

impl Default for DiffLimits {
    fn default() -> Self {
        DiffLimits {
            max_lines: MAX_PREVIEW_LINES,
            max_bytes: MAX_PREVIEW_BYTES,
            timeout: Duration::from_millis(write_tool_wire::defaults::DIFF_TIMEOUT_MS),
        }
    }
}

impl DiffLimits {
    /// How long the diff algorithm may take on `bytes` of old and new text
    /// together: the share of [`timeout`](Self::timeout) that `bytes` is of
    /// 64 MiB (`FULL_TIMEOUT_BYTES`), at least 1/32 of it (`MIN_TIMEOUT_SHARE`), at
    /// most all of it.
    ///
    /// A share in proportion to the text, because an ordinary diff (a few
    /// scattered edits, or every line rewritten) takes time in proportion
    /// to it: the share leaves such a diff an order of magnitude more than
    /// it needs, while content built to be hard for the diff is cut short
    /// after the time of a few ordinary calls of its size instead of
    /// running to the timeout (BENCHMARKS.md#the-diff-deadline). Past the deadline
    /// the diff is coarser (whole regions replaced) and still correct, and
    /// the counts are those of the diff given. One number, the timeout,
    /// scales it all: a host that wants exact diffs at any cost raises it.
    pub fn time_for(&self, bytes: usize) -> Duration {
        let share = self
            .timeout
            .as_nanos()
            .saturating_mul(bytes as u128)
            .div_ceil(FULL_TIMEOUT_BYTES as u128);
        let share = Duration::from_nanos(u64::try_from(share).unwrap_or(u64::MAX));
        share
            .max(self.timeout / MIN_TIMEOUT_SHARE)
            .min(self.timeout)
    }
}

/// Whether the deadline has passed.
pub(super) fn deadline_exceeded(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|deadline| Instant::now() > deadline)
}
