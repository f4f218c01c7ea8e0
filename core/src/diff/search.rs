//! The search itself: `similar`'s Myers, which every path of the line diff
//! ends in (`ops` on the lines or their numbers, `preflight` on what its
//! reduction leaves).

use std::hash::Hash;
use std::time::Instant;

use similar::algorithms::{DiffHook, myers};

/// `similar`'s Myers over all of `old` and `new`.
pub(super) fn search<O, N, D>(
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
