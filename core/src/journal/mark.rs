//! The `pending` file: the chain's head, and the commit in progress.
//!
//! The head — the last record's seq and the hash of its line — anchors
//! the chain: every record is covered by the hash the next one holds,
//! but nothing follows the last, so without it an edit of the last record,
//! or records cut off the end, would leave a chain that still verifies.
//! It is rewritten after every append outside a commit, and when a commit
//! is done; like the commit mark it is not synced (`docs/contract.md#journal`
//! says what that leaves after a power loss).
//!
//! The file is made once and kept: a file created and removed at every
//! call costs more (see [`super::Journal::lock`]).

use std::io;

use serde::{Deserialize, Serialize};

use super::{Held, PENDING, from_json};

/// The most spaces a mark is padded with (see `Held::write_mark`).
const MAX_PAD: u64 = 4 << 10;

/// The last record as the journal knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    /// Its seq.
    pub seq: u64,
    /// The SHA-256 of its line.
    pub hash: String,
}

/// A commit in progress: its record's seq, its temp files and the
/// directories it made for them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// The seq its record has (or would have had).
    pub seq: u64,
    /// Per file, in the record's order: its path (as recorded) and the temp
    /// file staged beside it, if any (a removal stages none).
    pub temps: Vec<(String, Option<String>)>,
    /// The directories its staging made or will make, root-relative as
    /// shown (outermost first): removed when empty if it never commits.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirs: Vec<String>,
}

/// What `pending` holds. The commit's fields sit at the top level, where
/// the journals of earlier versions kept a commit alone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    /// The chain's head; `None` in a journal no version with a head has
    /// written yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<Head>,
    /// Where the head's line starts and where the log's complete lines
    /// ended when the head was written: a writer that finds that line
    /// there, with the head's hash, and only room after it reads nothing
    /// else of the log to append (`None` in a mark an earlier version
    /// wrote).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<u64>,
    /// See `start`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<u64>,
    /// The journal's size after the head's record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// The commit in progress: its seq.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// The commit in progress: its temp files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub temps: Vec<(String, Option<String>)>,
    /// The commit in progress: its directories.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirs: Vec<String>,
}

impl Mark {
    /// The commit in progress, if any.
    pub fn commit(&self) -> Option<Pending> {
        self.seq.map(|seq| Pending {
            seq,
            temps: self.temps.clone(),
            dirs: self.dirs.clone(),
        })
    }

    fn set_commit(&mut self, pending: Option<&Pending>) {
        self.seq = pending.map(|p| p.seq);
        self.temps = pending.map(|p| p.temps.clone()).unwrap_or_default();
        self.dirs = pending.map(|p| p.dirs.clone()).unwrap_or_default();
    }
}

impl Held<'_> {
    /// The pending file, opened (made if missing) once per hold.
    pub(super) fn pending_file(&self) -> io::Result<&crate::fs::sys::File> {
        if let Some(file) = self.pending.get() {
            return Ok(file);
        }
        let dir = self.journal.dir();
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

    /// What `pending` holds, read once per hold. Unreadable content (a
    /// mark cut short before its commit's record) counts as none: nothing
    /// of that commit was renamed, and its temp files are swept like any
    /// leftover.
    pub fn mark(&self) -> io::Result<Mark> {
        if let Some(mark) = self.mark.borrow().as_ref() {
            return Ok(mark.clone());
        }
        let file = self.pending_file()?;
        let len = file.stat()?.len;
        let mark = if len == 0 || len > super::MAX_RECORD_BYTES as u64 {
            Mark::default()
        } else {
            from_json(&file.read_at(0, len)?).unwrap_or_default()
        };
        self.mark_len.set(len);
        *self.mark.borrow_mut() = Some(mark.clone());
        Ok(mark)
    }

    /// Write `mark` over what `pending` holds. A shorter one is padded
    /// with spaces, which JSON reads past, rather than the file cut: one
    /// system call instead of two, twice a commit. A mark much shorter
    /// than the file (after a change of many files) cuts it.
    fn write_mark(&self, mark: Mark) -> io::Result<()> {
        let mut json =
            serde_json::to_vec(&mark).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let file = self.pending_file()?;
        let len = self.mark_len.get();
        let shorter = len > json.len() as u64;
        let cut = shorter && len - json.len() as u64 > MAX_PAD;
        if shorter && !cut {
            json.resize(usize::try_from(len).unwrap_or(usize::MAX), b' ');
        }
        file.write_at(&json, 0)?;
        if cut {
            file.set_len(json.len() as u64)?;
        }
        self.mark_len.set(json.len() as u64);
        *self.mark.borrow_mut() = Some(mark);
        Ok(())
    }

    /// Mark a commit as in progress, with what it has staged or will.
    pub fn mark_pending(&self, pending: &Pending) -> io::Result<()> {
        let mut mark = self.mark()?;
        mark.set_commit(Some(pending));
        self.write_mark(mark)
    }

    /// The commit in progress is done (or undone): the mark names none,
    /// and the head is the last record.
    pub fn clear_pending(&self) -> io::Result<()> {
        let mut mark = self.mark()?;
        mark.set_commit(None);
        mark.head = self.head()?;
        let (start, end, total) = self.ends()?;
        (mark.start, mark.end, mark.total) = (Some(start), Some(end), Some(total));
        self.write_mark(mark)
    }

    /// The commit a writer that died left in progress, if any.
    pub fn pending(&self) -> io::Result<Option<Pending>> {
        Ok(self.mark()?.commit())
    }

    /// After an append: the head moves to the new record, now if no commit
    /// is in progress, else when it is done.
    pub(super) fn head_moved(&self) -> io::Result<()> {
        let mark = self.mark()?;
        if mark.seq.is_some() {
            return Ok(());
        }
        self.clear_pending()
    }
}
