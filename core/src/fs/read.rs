//! Reading the file a write replaces.

use std::io;
use std::time::SystemTime;

use super::sys::{Dir, Kind};

/// The existing file's bytes and what the optimistic lock compares.
#[derive(Debug)]
pub struct Existing {
    /// The file's content.
    pub bytes: Vec<u8>,
    /// Its modification time, read from the open handle.
    pub modified: Option<SystemTime>,
    /// Number of hard links to it.
    pub link_count: u64,
}

/// Read the regular file `rel` under `root`. The caller has checked it is
/// one: a FIFO is never opened, since opening it would block. Should it
/// have become something else since, the read fails with `InvalidInput`.
pub fn read_existing(root: &Dir, rel: &str) -> io::Result<Existing> {
    let file = root.open_read_at(rel)?;
    let stat = file.stat()?;
    if stat.kind != Kind::File {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    Ok(Existing {
        bytes: file.read_all(stat.len)?,
        modified: stat.modified,
        link_count: stat.link_count,
    })
}
