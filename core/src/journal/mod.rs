//! The journal (`docs/contract.md#journal`): a record of every applied
//! change, with the content each one replaced, so that any change can be
//! taken back.
//!
//! It lives in a directory the host preopens for it and names with
//! `WRITE_TOOL_JOURNAL`, which is never a root: no path a call gives can
//! reach it. Its layout:
//!
//! - `log`: one JSON line per record ([`Record`]), appended, each holding
//!   the SHA-256 of the line before it;
//! - `objects/<digest>`: the content a change replaced, once per distinct
//!   content, named by its [`Digest`]: the replaced file itself (a hard
//!   link to it, taken before the rename detaches it from its name) where
//!   the file system allows, else a copy;
//! - `pending`: the commit in progress (its seq and temp files), which the
//!   next journaled call finishes or rolls back if the writer died (commits
//!   hold the lock, so there is one at most); empty between commits;
//! - `lock`: held while a writer reads the log's end, appends and commits,
//!   so that records chain in the order the changes were made, across
//!   processes: a second name of the holder's file (`holder-…`), linked
//!   and unlinked (see [`Journal::lock`]).
//!
//! A record is appended and synced before its change's first rename: one
//! more sync per write, and no change lands unrecorded.

mod digest;
mod record;

use std::io;
use std::time::{Duration, Instant, SystemTime};

pub use digest::{Digest, GENESIS, chain};
pub use record::{FileChange, Kind, Op, Record, State, id_of, seq_of};

use crate::fs::Dir;

/// The records, appended.
pub const LOG: &str = "log";
/// Saved contents.
pub const OBJECTS: &str = "objects";
/// The commit in progress.
pub const PENDING: &str = "pending";
/// Held while a writer appends and commits.
pub const LOCK: &str = "lock";
/// The start of the name of a holder's file, which `lock` links to.
pub const HOLDER_PREFIX: &str = "holder-";

/// How long a writer waits for the lock before it gives up.
const LOCK_WAIT: Duration = Duration::from_secs(20);
/// A lock older than this was left by a writer that died: it is taken
/// over. A writer holds it for the time of a few syncs and renames. A host
/// that writes who holds it (`WRITE_TOOL_HOLDER`) can remove the lock of a
/// holder that died at once (`write-tool` does).
const LOCK_STALE: Duration = Duration::from_secs(60);
/// Bytes of `log` first read back to find its last line; doubled while
/// no line is found, up to `TAIL_CHUNK_MAX`.
const TAIL_CHUNK: u64 = 4 << 10;
/// Most bytes of `log` read back at once.
const TAIL_CHUNK_MAX: u64 = 1 << 20;

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
}

/// The journal, locked by this writer: what must happen in the order of
/// the changes happens through it. Unlocked when dropped.
#[derive(Debug)]
pub struct Held<'a> {
    journal: &'a Journal,
    /// The log, opened for reading and appending once per hold.
    log: std::cell::OnceCell<crate::fs::sys::File>,
    /// The pending mark, opened once per hold.
    pending: std::cell::OnceCell<crate::fs::sys::File>,
    /// The last record and its hash, and where the complete lines end:
    /// read once per hold, then kept up to date by `append`.
    tail: std::cell::RefCell<Option<Tail>>,
}

/// The end of the log.
#[derive(Debug, Clone)]
struct Tail {
    last: Option<(Record, String)>,
    /// Where its complete lines end.
    end: u64,
    /// The log's length: more than `end` after a crash cut a line short.
    len: u64,
}

impl Journal {
    /// The journal in `dir` (its layout is made as it is first written).
    pub fn open(dir: Dir, bounds: Bounds, holder: Option<String>) -> io::Result<Journal> {
        Ok(Journal {
            dir,
            bounds,
            holder,
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Take the lock, waiting for another writer to finish.
    ///
    /// The lock is a second name, `lock`, linked to a file of the holder's
    /// (`holder-…`, holding who it is, made once): a link is made or
    /// refused atomically, and unlike a file created and removed at every
    /// call it allocates no inode, which on ext4 grows costly when inodes
    /// are freed and taken at this rate (BENCHMARKS.md#the-journal). Where
    /// the file system makes no links, the lock is a file created
    /// exclusively.
    pub fn lock(&self) -> io::Result<Held<'_>> {
        let start = Instant::now();
        let mut pause = Duration::from_micros(100);
        let base = self.lock_base();
        loop {
            let taken = match self.dir.link_at(&base, LOCK) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    self.make_lock_base(&base)?;
                    self.dir.link_at(&base, LOCK)
                }
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => self.lock_file(),
                other => other,
            };
            match taken {
                Ok(()) => break,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    if self.lock_is_stale() {
                        let _ = self.dir.unlink_at(LOCK);
                        continue;
                    }
                    if start.elapsed() > LOCK_WAIT {
                        return Err(io::Error::new(
                            io::ErrorKind::WouldBlock,
                            "another writer holds the journal",
                        ));
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(5));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(Held {
            journal: self,
            log: std::cell::OnceCell::new(),
            pending: std::cell::OnceCell::new(),
            tail: std::cell::RefCell::new(None),
        })
    }

    /// The file `lock` is linked to: one per holder a host names, so that
    /// reading `lock` tells who holds it; one for all where none is named.
    fn lock_base(&self) -> String {
        match &self.holder {
            Some(holder) => {
                let name: String = holder
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                    .take(100)
                    .collect();
                format!("{HOLDER_PREFIX}{name}")
            }
            None => format!("{LOCK}.base"),
        }
    }

    fn make_lock_base(&self, base: &str) -> io::Result<()> {
        match self.dir.create_new_at(base) {
            // Best effort: a host that can tell its dead processes reads
            // it through `lock` (`write-tool`).
            Ok(file) => {
                if let Some(holder) = &self.holder {
                    let _ = file.write_all(holder.as_bytes());
                }
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The lock as a file of its own, where no link can be made.
    fn lock_file(&self) -> io::Result<()> {
        let file = self.dir.create_new_at(LOCK)?;
        if let Some(holder) = &self.holder {
            let _ = file.write_all(holder.as_bytes());
        }
        Ok(())
    }

    /// The lock was taken longer ago than a writer holds it: by one that
    /// died. Linking changes a file's status time, creating it both times.
    fn lock_is_stale(&self) -> bool {
        self.dir
            .stat_at(LOCK)
            .ok()
            .and_then(|s| s.changed.or(s.modified))
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age > LOCK_STALE)
    }

    /// Every record, oldest first. A last line cut short by a crash is
    /// left out.
    pub fn records(&self) -> io::Result<Vec<Record>> {
        Ok(self
            .lines()?
            .iter()
            .filter_map(|line| from_json(line).ok())
            .collect())
    }

    /// The log's complete lines.
    pub fn lines(&self) -> io::Result<Vec<Vec<u8>>> {
        let bytes = match self.dir.open_read_at(LOG) {
            Ok(file) => {
                let len = file.stat()?.len;
                file.read_all(len)?
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        };
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        Ok(bytes[..complete]
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .map(<[u8]>::to_vec)
            .collect())
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
        if Digest::of(&bytes).hex() != digest {
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

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let _ = self.journal.dir.unlink_at(LOCK);
    }
}

impl Held<'_> {
    /// The journal.
    pub fn journal(&self) -> &Journal {
        self.journal
    }

    /// The log, opened (created if missing) for reading and appending.
    fn log(&self) -> io::Result<&crate::fs::sys::File> {
        if let Some(file) = self.log.get() {
            return Ok(file);
        }
        let file = self.journal.dir.open_write_at(LOG, true)?;
        Ok(self.log.get_or_init(|| file))
    }

    /// The end of the log, read once.
    fn tail(&self) -> io::Result<Tail> {
        if let Some(tail) = self.tail.borrow().as_ref() {
            return Ok(tail.clone());
        }
        let file = self.log()?;
        let len = file.stat()?.len;
        let (line, end) = last_line(file, len)?;
        let last = match line {
            None => None,
            Some(line) => {
                let record = from_json(&line)?;
                Some((record, chain(&line)))
            }
        };
        let tail = Tail { last, end, len };
        *self.tail.borrow_mut() = Some(tail.clone());
        Ok(tail)
    }

    /// The last complete record, and its hash: what the next one chains
    /// to.
    pub fn last(&self) -> io::Result<Option<(Record, String)>> {
        Ok(self.tail()?.last)
    }

    /// Append `record`, numbered and chained after the last one, with the
    /// journal's size; synced unless `sync` is false. Returns it as
    /// written.
    pub fn append(&self, mut record: Record, sync: bool) -> io::Result<Record> {
        let tail = self.tail()?;
        let (seq, prev, total) = match &tail.last {
            Some((r, hash)) => (r.seq + 1, hash.clone(), r.total),
            None => (1, GENESIS.to_owned(), 0),
        };
        record.seq = seq;
        record.id = id_of(seq);
        record.time_ms = now_ms();
        record.prev = prev;
        // The line's own length counts in the total: twice, since the
        // total's digits are part of it.
        let mut line = Vec::new();
        for _ in 0..2 {
            record.total = match record.kind {
                Kind::Gc => record.total,
                _ => total + record.bytes + line.len() as u64 + 1,
            };
            line = serde_json::to_vec(&record)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        }
        let hash = chain(&line);
        line.push(b'\n');
        let file = self.log()?;
        // A line cut short by a crash is overwritten.
        file.write_at(&line, tail.end)?;
        let end = tail.end + line.len() as u64;
        if tail.len > end {
            file.set_len(end)?;
        }
        if sync {
            file.sync_data()?;
        }
        *self.tail.borrow_mut() = Some(Tail {
            last: Some((record.clone(), hash)),
            end,
            len: end,
        });
        Ok(record)
    }

    /// Save the file `name` of `dir` as the content `digest`, by linking
    /// it into `objects/`; where that fails (another file system, a host
    /// without links), by writing `bytes`, or the file's bytes read now.
    /// Returns the bytes the journal grew by (0 when the content was there
    /// already).
    pub fn save(
        &self,
        dir: &Dir,
        name: &str,
        digest: Digest,
        size: u64,
        bytes: Option<&[u8]>,
        sync: bool,
    ) -> io::Result<u64> {
        let object = format!("{OBJECTS}/{}", digest.hex());
        let link = || dir.link_into(name, &self.journal.dir, &object);
        let linked = match link() {
            // The first content saved: the directory is made now.
            Err(e) if e.kind() == io::ErrorKind::NotFound && self.objects_missing() => {
                self.make_objects()?;
                link()
            }
            other => other,
        };
        match linked {
            Ok(()) => return Ok(size),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(0),
            Err(_) => {}
        }
        let read;
        let bytes = match bytes {
            Some(bytes) => bytes,
            None => {
                let file = dir.open_read_at(name)?;
                read = file.read_all(size)?;
                &read
            }
        };
        self.put(&object, bytes, sync)?;
        Ok(bytes.len() as u64)
    }

    fn objects_missing(&self) -> bool {
        self.journal
            .dir
            .stat_at(OBJECTS)
            .is_err_and(|e| e.kind() == io::ErrorKind::NotFound)
    }

    fn make_objects(&self) -> io::Result<()> {
        match self.journal.dir.create_dir_at(OBJECTS) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(e),
            _ => Ok(()),
        }
    }

    /// Save `bytes` as the content `digest` (a copy).
    pub fn save_bytes(&self, digest: Digest, bytes: &[u8], sync: bool) -> io::Result<u64> {
        let object = format!("{OBJECTS}/{}", digest.hex());
        if self.journal.dir.stat_at(&object).is_ok() {
            return Ok(0);
        }
        self.make_objects()?;
        self.put(&object, bytes, sync)?;
        Ok(bytes.len() as u64)
    }

    fn put(&self, object: &str, bytes: &[u8], sync: bool) -> io::Result<()> {
        self.make_objects()?;
        let dir = &self.journal.dir;
        let temp = format!("{object}.tmp");
        let _ = dir.unlink_at(&temp);
        let file = dir.create_new_at(&temp)?;
        let written = file
            .write_all(bytes)
            .and_then(|()| if sync { file.sync() } else { Ok(()) });
        drop(file);
        match written.and_then(|()| dir.rename_at(&temp, object)) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = dir.unlink_at(&temp);
                Err(e)
            }
        }
    }

    /// The pending mark, opened (made if missing) once per hold. It stays
    /// between commits, empty when none is in progress: a file made and
    /// removed at every commit costs more (see [`Journal::lock`]).
    fn pending_file(&self) -> io::Result<&crate::fs::sys::File> {
        if let Some(file) = self.pending.get() {
            return Ok(file);
        }
        let dir = &self.journal.dir;
        let file = match dir.open_write_at(PENDING, true) {
            // The layout of the first builds with a journal: a directory
            // of marks, empty unless a writer died. An empty one gives
            // way to the file.
            Err(e) if e.kind() == io::ErrorKind::IsADirectory => {
                dir.remove_dir_at(PENDING)?;
                dir.open_write_at(PENDING, true)?
            }
            other => other?,
        };
        Ok(self.pending.get_or_init(|| file))
    }

    /// Mark commit `seq` as in progress, with what it has staged.
    pub fn mark_pending(&self, staged: &Pending) -> io::Result<()> {
        let json = serde_json::to_vec(staged)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let file = self.pending_file()?;
        // `recover` emptied it under this lock.
        file.write_at(&json, 0)?;
        file.set_len(json.len() as u64)
    }

    /// The commit in progress is done.
    pub fn clear_pending(&self) {
        if let Ok(file) = self.pending_file() {
            let _ = file.set_len(0);
        }
    }

    /// The commit a writer that died left in progress, if any.
    pub fn pending(&self) -> io::Result<Option<Pending>> {
        let file = self.pending_file()?;
        let len = file.stat()?.len;
        if len == 0 {
            return Ok(None);
        }
        let bytes = file.read_at(0, len)?;
        match from_json(&bytes) {
            Ok(staged) => Ok(Some(staged)),
            // Cut short before its record was appended: nothing was
            // renamed; its temp files are swept like any leftover.
            Err(_) => {
                self.clear_pending();
                Ok(None)
            }
        }
    }

    /// Remove the saved contents no record in `keep` refers to.
    pub fn prune_objects(&self, keep: &std::collections::HashSet<String>) -> io::Result<u64> {
        let objects = match self.journal.dir.open_dir_at(OBJECTS) {
            Ok(dir) => dir,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e),
        };
        let mut freed = 0;
        for name in objects.names(|n| !keep.contains(n))? {
            let len = objects.stat_at(&name).map(|s| s.len).unwrap_or(0);
            if objects.unlink_at(&name).is_ok() {
                freed += len;
            }
        }
        Ok(freed)
    }

    /// Replace the log with `lines` (each without its newline), synced.
    pub fn rewrite_log(&mut self, lines: &[Vec<u8>]) -> io::Result<()> {
        let temp = ".log.tmp";
        let dir = &self.journal.dir;
        let _ = dir.unlink_at(temp);
        let file = dir.create_new_at(temp)?;
        let mut bytes = Vec::new();
        for line in lines {
            bytes.extend_from_slice(line);
            bytes.push(b'\n');
        }
        file.write_all(&bytes)?;
        file.sync()?;
        drop(file);
        dir.rename_at(temp, LOG)?;
        // The handle and the end read before are the old file's.
        self.log.take();
        *self.tail.get_mut() = None;
        dir.sync()
    }
}

/// The last complete line of the log (`len` bytes) and where the complete
/// lines end.
fn last_line(file: &crate::fs::sys::File, len: u64) -> io::Result<(Option<Vec<u8>>, u64)> {
    // `buf` holds the log's bytes from `from` to its end.
    let mut from = len;
    let mut buf: Vec<u8> = Vec::new();
    // Most records are a few hundred bytes; one of many files is longer.
    let mut chunk_len = TAIL_CHUNK;
    loop {
        let start = from.saturating_sub(chunk_len);
        chunk_len = (chunk_len * 2).min(TAIL_CHUNK_MAX);
        let mut chunk = file.read_at(start, from - start)?;
        chunk.extend_from_slice(&buf);
        buf = chunk;
        from = start;
        match buf.iter().rposition(|&b| b == b'\n') {
            Some(nl) => {
                let end = from + nl as u64 + 1;
                match buf[..nl].iter().rposition(|&b| b == b'\n') {
                    Some(begin) => return Ok((Some(buf[begin + 1..nl].to_vec()), end)),
                    None if from == 0 => return Ok((Some(buf[..nl].to_vec()), end)),
                    None => {}
                }
            }
            None if from == 0 => return Ok((None, 0)),
            None => {}
        }
    }
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

/// A commit in progress: its record's seq, and where its temp files are.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Pending {
    /// The seq its record has (or would have had).
    pub seq: u64,
    /// Per file, in the record's order: its path (as recorded) and the temp
    /// file staged beside it, if any (a removal stages none).
    pub temps: Vec<(String, Option<String>)>,
}

/// Now, in ms since the epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The last complete line is found whatever its length against the
    /// chunks read back, and a line a crash cut short is not one.
    #[test]
    fn the_last_line_is_found_across_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let root = Dir::from_path(dir.path());
        let long = |n: usize| "x".repeat(n);
        for (lines, cut) in [
            (vec![long(10)], ""),
            (vec![long(10), long(20)], ""),
            (vec![long(10), long(5000)], ""),
            (vec![long(5000), long(300_000)], "{\"seq\":"),
            (vec![long(2_000_000)], "partial"),
            (vec![], "partial"),
        ] {
            let mut log = String::new();
            for line in &lines {
                log.push_str(line);
                log.push('\n');
            }
            let end = log.len() as u64;
            log.push_str(cut);
            std::fs::write(dir.path().join(LOG), &log).unwrap();
            let file = root.open_read_at(LOG).unwrap();
            let (last, at) = last_line(&file, log.len() as u64).unwrap();
            assert_eq!(last.map(|l| l.len()), lines.last().map(String::len));
            assert_eq!(at, end);
        }
    }
}
