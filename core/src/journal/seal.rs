//! The seal a quiesce leaves in the journal (`docs/contract.md#quiesce`):
//! the chain's head and what the files of the last change hold, synced, so
//! that a start after a suspend, or a snapshot's restore, can tell whether
//! the journal and those files are still what they were.

use std::io;

use serde::{Deserialize, Serialize};

use super::{Head, Journal, from_json};

/// The seal's file in the journal directory.
pub const SEAL: &str = "seal";

/// What a quiesce sealed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seal {
    /// The chain's head; `None` in a journal with no record.
    pub head: Option<Head>,
    /// The files the last change wrote, as it left them.
    pub files: Vec<Sealed>,
    /// When, ms since the epoch.
    pub time_ms: i64,
}

/// One file as a seal knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sealed {
    /// As the record names it.
    pub path: String,
    /// The digest of what the change left there; `None`: no file.
    pub digest: Option<String>,
    /// Whether the file held it when sealed.
    pub held: bool,
    /// What the change left is a symbolic link (`digest` its target's).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub link: bool,
}

impl Journal {
    /// Leave `seal`, whole and synced.
    pub fn write_seal(&self, seal: &Seal) -> io::Result<()> {
        let bytes = serde_json::to_vec(seal).map_err(io::Error::other)?;
        let temp = format!("{SEAL}.tmp");
        // A seal left half written by a kill is replaced whole.
        let _ = self.dir().unlink_at(&temp);
        let file = self.dir().create_new_at(&temp)?;
        let written = file.write_all(&bytes).and_then(|()| file.sync());
        drop(file);
        match written.and_then(|()| self.dir().rename_at(&temp, SEAL)) {
            Ok(()) => self.dir().sync(),
            Err(e) => {
                let _ = self.dir().unlink_at(&temp);
                Err(e)
            }
        }
    }

    /// The seal left, if any.
    pub fn read_seal(&self) -> io::Result<Option<Seal>> {
        let file = match self.dir().open_read_at(SEAL) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let bytes = file.read_capped(file.stat()?.len, 1 << 20)?;
        from_json(&bytes).map(Some)
    }

    /// Take the seal away: it was checked, and the journal moves on.
    pub fn remove_seal(&self) -> io::Result<()> {
        match self.dir().unlink_at(SEAL) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}
