//! The journal's bounds (`docs/contract.md#journal`): oldest records
//! dropped first, with the saved contents only they referred to.
//!
//! A writer looks at the bounds when the journal would grow past its size
//! bound, and every 64th record for the count and the age; `write-tool
//! journal gc` looks at once. A change that would not fit even in an
//! otherwise empty journal is refused.

use std::collections::{HashMap, HashSet};
use std::io;

use crate::journal::{Held, Kind, Record, now_ms};

use super::config::Config;

/// How often a writer applies the count and age bounds.
const EVERY: u64 = 64;

/// Make room for a change that adds `added` bytes: drop old records if
/// the journal would pass a bound. Fails (`OutOfMemory`) when it would
/// still be over its size bound.
pub(super) fn make_room(held: &mut Held<'_>, added: u64, _config: &Config) -> io::Result<()> {
    let bounds = held.journal().bounds;
    let (total, seq) = match held.last()? {
        Some((last, _)) => (last.total, last.seq),
        None => (0, 0),
    };
    let over = total.saturating_add(added) > bounds.max_bytes;
    if !over && (seq + 1) % EVERY != 0 {
        return Ok(());
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

/// Drop the oldest records until the journal is within its bounds with
/// room for `reserve` more bytes; remove saved contents no kept record
/// refers to.
pub fn collect(held: &mut Held<'_>, reserve: u64) -> io::Result<Collected> {
    let bounds = held.journal().bounds;
    let lines = held.journal().lines()?;
    let records: Vec<Option<Record>> = lines
        .iter()
        .map(|line| crate::journal::from_json(line).ok())
        .collect();
    // Each saved content: its size and the last record that refers to it.
    let mut objects: HashMap<String, (u64, usize)> = HashMap::new();
    for (i, record) in records.iter().enumerate() {
        for file in record.iter().flat_map(|r| &r.files) {
            if let Some(old) = &file.old {
                objects.insert(old.digest.clone(), (old.size, i));
            }
        }
    }
    // Suffix sums: what the records from `i` on hold.
    let n = lines.len();
    let mut changes_from = vec![0u64; n + 1];
    let mut size_from = vec![0u64; n + 1];
    let mut saved_by_last = vec![0u64; n];
    for (size, last) in objects.values() {
        saved_by_last[*last] += size;
    }
    for i in (0..n).rev() {
        let is_change = records[i].as_ref().is_some_and(Record::is_change);
        changes_from[i] = changes_from[i + 1] + u64::from(is_change);
        size_from[i] = size_from[i + 1] + lines[i].len() as u64 + 1 + saved_by_last[i];
    }
    let oldest_ms = now_ms().saturating_sub(bounds.max_age_ms);
    let mut keep_from = 0;
    while keep_from < lines.len() {
        let too_old = records[keep_from]
            .as_ref()
            .is_some_and(|r| r.time_ms < oldest_ms);
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
    let dropped_through = records[..keep_from]
        .iter()
        .rev()
        .flatten()
        .map(|r| r.seq)
        .next()
        .unwrap_or(0);
    held.rewrite_log(&lines[keep_from..])?;
    let keep: HashSet<String> = objects
        .iter()
        .filter(|(_, (_, last))| *last >= keep_from)
        .map(|(digest, _)| digest.clone())
        .collect();
    held.prune_objects(&keep)?;
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
