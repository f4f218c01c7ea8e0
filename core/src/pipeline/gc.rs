//! The journal's bounds (`docs/contract.md#journal`): oldest records
//! dropped first, with the saved contents only they referred to.
//!
//! A writer looks at the bounds when the journal would grow past its size
//! bound, and every 64th record for the count and the age — from the
//! first record alone, unless something is to be dropped; `write-tool
//! journal gc` looks at once. A change that would not fit even in an
//! otherwise empty journal is refused. The log is read line by line: the
//! upkeep keeps a few numbers per record and one per saved content, never
//! the records themselves.

use std::collections::HashMap;
use std::io;

use crate::journal::{Held, Kind, Record, now_ms, on_disk};

use super::config::Config;

/// How often a writer applies the count and age bounds.
const EVERY: u64 = 64;

/// Make room for a change that adds `added` bytes: drop old records if
/// the journal would pass a bound. Fails (`OutOfMemory`) when it would
/// still be over its size bound.
pub(super) fn make_room(held: &mut Held<'_>, added: u64, _config: &Config) -> io::Result<()> {
    let bounds = held.journal().bounds;
    let (total, seq) = (held.total()?, held.seq()?);
    let over = total.saturating_add(added) > bounds.max_bytes;
    if !over && (seq + 1) % EVERY != 0 {
        return Ok(());
    }
    if !over {
        // The count and the age, judged by the first record: nothing to
        // drop unless it is too old or the records since it too many.
        let Some(first) = held.journal().first()? else {
            return Ok(());
        };
        let oldest_ms = now_ms().saturating_sub(bounds.max_age_ms);
        if first.time_ms >= oldest_ms && seq + 1 - first.seq < bounds.max_changes {
            return Ok(());
        }
    }
    let total = collect(held, added)?.total;
    if total.saturating_add(added) > bounds.max_bytes {
        return Err(io::Error::from(io::ErrorKind::OutOfMemory));
    }
    Ok(())
}

/// What a collection did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Collected {
    /// Records dropped.
    pub dropped: u64,
    /// Bytes freed.
    pub freed: u64,
    /// The journal's size after it.
    pub total: u64,
}

/// What the upkeep keeps of one line of the log.
#[derive(Debug, Clone, Copy)]
struct Line {
    len: u64,
    time_ms: Option<i64>,
    seq: Option<u64>,
    is_change: bool,
}

/// The log, summed up in one pass: each line, and each saved content's
/// size on disk and the last line that refers to it.
/// Each saved content's digest: its size on disk, and the last line that
/// refers to it.
type Objects = HashMap<u128, (u64, usize)>;

fn summary(held: &Held<'_>) -> io::Result<(Vec<Line>, Objects)> {
    let mut lines = Vec::new();
    let mut objects = Objects::new();
    held.journal().scan(|line, record: Option<Record>| {
        let i = lines.len();
        if let Some(record) = &record {
            for old in record.files.iter().filter_map(|f| f.old.as_ref()) {
                if let Ok(digest) = u128::from_str_radix(&old.digest, 16) {
                    objects.insert(digest, (on_disk(old.size), i));
                }
            }
        }
        lines.push(Line {
            len: line.len() as u64 + 1,
            time_ms: record.as_ref().map(|r| r.time_ms),
            seq: record.as_ref().map(|r| r.seq),
            is_change: record.as_ref().is_some_and(Record::is_change),
        });
        Ok(true)
    })?;
    Ok((lines, objects))
}

/// Drop the oldest records until the journal is within its bounds with
/// room for `reserve` more bytes; remove saved contents no kept record
/// refers to.
pub fn collect(held: &mut Held<'_>, reserve: u64) -> io::Result<Collected> {
    let bounds = held.journal().bounds;
    let (lines, objects) = summary(held)?;
    // Suffix sums: what the records from `i` on hold.
    let n = lines.len();
    let mut changes_from = vec![0u64; n + 1];
    let mut size_from = vec![0u64; n + 1];
    let mut saved_by_last = vec![0u64; n];
    for (size, last) in objects.values() {
        saved_by_last[*last] += size;
    }
    for i in (0..n).rev() {
        changes_from[i] = changes_from[i + 1] + u64::from(lines[i].is_change);
        size_from[i] = size_from[i + 1] + lines[i].len + saved_by_last[i];
    }
    let oldest_ms = now_ms().saturating_sub(bounds.max_age_ms);
    let mut keep_from = 0;
    while keep_from < n {
        let too_old = lines[keep_from].time_ms.is_some_and(|t| t < oldest_ms);
        let too_many = changes_from[keep_from] > bounds.max_changes;
        let too_big = size_from[keep_from].saturating_add(reserve) > bounds.max_bytes;
        if !(too_old || too_many || too_big) {
            break;
        }
        keep_from += 1;
    }
    let before = size_from[0];
    if keep_from == 0 {
        return Ok(Collected {
            dropped: 0,
            freed: 0,
            total: before,
        });
    }
    let dropped_through = lines[..keep_from]
        .iter()
        .rev()
        .find_map(|l| l.seq)
        .unwrap_or(0);
    held.drop_first_lines(keep_from)?;
    held.prune_objects(|name| {
        u128::from_str_radix(name, 16)
            .ok()
            .and_then(|d| objects.get(&d))
            .is_some_and(|(_, last)| *last >= keep_from)
    })?;
    let after = size_from[keep_from];
    let mut gc = Record::new(Kind::Gc);
    gc.dropped_through = Some(dropped_through);
    gc.total = after;
    held.append(gc, true)?;
    Ok(Collected {
        dropped: keep_from as u64,
        freed: before.saturating_sub(after),
        total: after,
    })
}
