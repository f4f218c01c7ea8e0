//! A single write committed through the journal (`journaled.rs`): staged,
//! recorded, renamed.

use std::time::SystemTime;

use crate::error::ToolError;
use crate::fs::{Existing, Unchanged};
use crate::journal::{Digest, Journal, Kind, State};
use crate::roots::Roots;

use super::commit::{self, Committed};
use super::config::Config;
use super::journaled::{self, Extra, Seen, Staged};
use super::target::Target;

/// Write `bytes` over `target` as one recorded change; returns what the
/// commit left and the change's id. `expect_unchanged` as in
/// [`commit::commit`]; `shared`: the target has other hard links and was
/// not read.
#[allow(clippy::too_many_arguments, reason = "the stages' outputs, one each")]
pub(super) fn commit_one(
    roots: &Roots,
    journal: &Journal,
    target: &Target<'_>,
    old: Option<&Existing>,
    bytes: &[u8],
    expect_unchanged: bool,
    shared: bool,
    started: SystemTime,
    config: &Config,
) -> Result<(Committed, String), ToolError> {
    let unchanged = expect_unchanged.then_some(match old {
        None => Unchanged::Missing,
        Some(old) => Unchanged::File {
            len: old.bytes.len() as u64,
            modified: old.modified,
        },
    });
    let (dir, temp, created, stat) = journaled::stage(target, bytes, started, config)
        .map_err(|err| commit::refine(target, err))?;
    let seen = old.map(|old| Seen {
        bytes: Some(&old.bytes),
        size: old.bytes.len() as u64,
        modified: old.modified,
    });
    let staged = Staged {
        target,
        dir,
        temp: Some(temp),
        new: Some(State {
            digest: Digest::of(bytes).hex(),
            size: bytes.len() as u64,
            mtime_ms: stat.modified.map(journaled::ms),
        }),
        created,
        unchanged,
        seen,
        shared,
    };
    let record = journaled::commit(
        roots,
        journal,
        Kind::Write,
        vec![staged],
        Extra::default(),
        config,
    )
    .map_err(|err| commit::refine(target, err))?;
    Ok((
        Committed {
            modified: stat.modified,
            created_dir: commit::created_dir(target),
        },
        record.id,
    ))
}
