//! The journal (`docs/contract.md#journal`): a record of every applied
//! change, with the content each one replaced, so that any change can be
//! taken back.
//!
//! It lives in a directory the host preopens for it and names with
//! `WRITE_TOOL_JOURNAL`, which is never a root: no path a call gives can
//! reach it. Its layout:
//!
//! - `log`: one JSON line per record ([`Record`]), appended, each holding
//!   the SHA-256 of the line before it, then zeros: room written ahead
//!   for the next records, so that their syncs commit no metadata;
//! - `objects/<digest>`: the content a change replaced, once per distinct
//!   content, named by its [`Digest`] (keyed with `secret`): the replaced
//!   file itself (a hard link to it, taken before the rename detaches it
//!   from its name) where the file system allows, else a copy;
//! - `pending`: the chain's head (the last record's seq and hash, which
//!   anchors it) and the commit in progress, if any (its seq, temp files
//!   and the directories it made), which the next journaled call finishes
//!   or rolls back if the writer died (commits hold the lock, so there is
//!   one at most) ([`Mark`]);
//! - `secret`: the key of the content digests, drawn when the first is
//!   needed ([`Key`]);
//! - `lock`: held while a writer reads the log's end, appends and commits,
//!   so that records chain in the order the changes were made, across
//!   processes: a second name of the holder's file (`holder-…`), linked
//!   and unlinked (see [`Journal::lock`]).
//!
//! A record is appended and synced before its change's first rename: one
//! more sync per write, and no change lands unrecorded. Nothing here ever
//! holds the whole log in memory: it is read line by line ([`Journal::scan`]),
//! and a record is bounded ([`MAX_RECORD_BYTES`]).

mod digest;
mod held;
mod lock;
mod mark;
mod record;
mod scan;
mod seal;
mod secret;
mod seen;
mod session;

use std::io;
use std::sync::OnceLock;
use std::time::SystemTime;

pub use digest::{Digest, GENESIS, Key, chain};
pub use held::{Held, on_disk};
pub use mark::{Head, Mark, Pending};
pub use record::{By, FileChange, Idem, Kind, Op, Record, State, id_of, seq_of};
pub use scan::MAX_RECORD_BYTES;
pub use seal::{SEAL, Seal, Sealed};
pub use secret::SECRET;
pub use seen::{MAX_SEEN, SEEN};
pub use session::SESSIONS;

use crate::fs::Dir;

/// The records, appended.
pub const LOG: &str = "log";
/// Saved contents.
pub const OBJECTS: &str = "objects";
/// The chain's head and the commit in progress.
pub const PENDING: &str = "pending";
/// Held while a writer appends and commits.
pub const LOCK: &str = "lock";
/// The start of the name of a holder's file, which `lock` links to.
pub const HOLDER_PREFIX: &str = "holder-";

/// What the journal keeps, at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Its size, saved contents and records together, in bytes.
    pub max_bytes: u64,
    /// The changes it keeps.
    pub max_changes: u64,
    /// A change's age, in milliseconds.
    pub max_age_ms: i64,
}

/// The journal directory.
#[derive(Debug)]
pub struct Journal {
    dir: Dir,
    /// What it keeps.
    pub bounds: Bounds,
    /// Who holds the lock when this process does (`WRITE_TOOL_HOLDER`).
    holder: Option<String>,
    /// Its secret, once read ([`Journal::key`]).
    key: OnceLock<Key>,
}

impl Journal {
    /// The journal in `dir` (its layout is made as it is first written).
    pub fn open(dir: Dir, bounds: Bounds, holder: Option<String>) -> io::Result<Journal> {
        Ok(Journal {
            dir,
            bounds,
            holder,
            key: OnceLock::new(),
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Every complete record, oldest first, handed to `each` one at a time
    /// with its line (for its hash); a line that is not a record is handed
    /// as `None`. A last line cut short by a crash is left out. `each`
    /// stops the scan by returning `false`.
    pub fn scan(
        &self,
        mut each: impl FnMut(&[u8], Option<Record>) -> io::Result<bool>,
    ) -> io::Result<()> {
        let file = match self.dir.open_read_at(LOG) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        let len = file.stat()?.len;
        scan::lines(&file, len, |line| {
            let record = if line.len() > MAX_RECORD_BYTES {
                None
            } else {
                from_json(line).ok()
            };
            each(line, record)
        })
    }

    /// The first complete record, if any: what the age and count bounds
    /// are checked against without reading the log.
    pub fn first(&self) -> io::Result<Option<Record>> {
        let mut first = None;
        self.scan(|_, record| {
            first = record;
            Ok(false)
        })?;
        Ok(first)
    }

    /// The saved content `digest` names, if it is there and still has that
    /// digest: a saved file with other names could have been written in
    /// place since.
    pub fn object(&self, digest: &str) -> Result<Vec<u8>, ObjectError> {
        let file = self
            .dir
            .open_read_at(&format!("{OBJECTS}/{digest}"))
            .map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => ObjectError::Missing,
                _ => ObjectError::Io(e),
            })?;
        let len = file.stat().map_err(ObjectError::Io)?.len;
        let bytes = file.read_all(len).map_err(ObjectError::Io)?;
        if !self.key().map_err(ObjectError::Io)?.matches(digest, &bytes) {
            return Err(ObjectError::Altered);
        }
        Ok(bytes)
    }
}

/// Why a saved content cannot be restored.
#[derive(Debug)]
pub enum ObjectError {
    /// It is not in the journal (dropped, or never made durable).
    Missing,
    /// Its bytes no longer have their digest.
    Altered,
    /// It could not be read.
    Io(io::Error),
}

/// Parse the JSON `bytes` hold, the way a request is parsed: from `&str`
/// into a `Value`, then into `T`. Neither `from_slice` (a second reader
/// type) nor a typed parse of the text (which skips unknown fields with
/// code of its own) is used: each adds a caller to the string scanning
/// the request's parse shares, which the compiler then stops inlining,
/// and every call's content goes through it (BENCHMARKS.md#the-journal).
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> io::Result<T> {
    let invalid = |e: serde_json::Error| io::Error::new(io::ErrorKind::InvalidData, e);
    let text =
        std::str::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    let value: serde_json::Value = serde_json::from_str(text).map_err(invalid)?;
    serde_json::from_value(value).map_err(invalid)
}

/// Now, in ms since the epoch.
pub fn now_ms() -> i64 {
    ms(SystemTime::now())
}

/// A time in ms since the epoch.
pub fn ms(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
