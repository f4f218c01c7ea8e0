//! Reading the file a write replaces.

use std::io;
use std::time::SystemTime;

use super::sys::{Dir, File, Kind};

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

/// Why the existing file was not read.
#[derive(Debug)]
pub enum ReadError {
    /// It is no longer a regular file.
    NotRegular,
    /// It is larger than the caller reads.
    TooLarge {
        /// Its size in bytes.
        len: u64,
    },
    /// A directory of the path did not open as the walk opens it
    /// ([`moved`](super::walk::moved) tells whether it was swapped).
    Walk(io::Error),
    /// The system's error.
    Io(io::Error),
}

impl From<io::Error> for ReadError {
    fn from(err: io::Error) -> Self {
        ReadError::Io(err)
    }
}

/// Read the regular file `names` under `root` through the walk
/// ([`walk`](super::walk())), if it is at most `max_len` bytes: the whole
/// old file is held in memory to be diffed, so its size is bounded the way
/// the new content's is (a huge file in the root must not exhaust the
/// component's memory). The caller has checked it is a regular file: a
/// FIFO is never opened, since opening it would block.
pub fn read_existing(root: &Dir, names: &[String], max_len: u64) -> Result<Existing, ReadError> {
    let (file_name, parent) = names.split_last().ok_or(ReadError::NotRegular)?;
    let dir = super::walk(root, parent).map_err(ReadError::Walk)?;
    existing(&dir.open_read_at(file_name)?, max_len)
}

/// The regular file `name` of `dir` (a directory the walk opened), read
/// for `view`: opened read-only (a look must not look like a write), at
/// most `max_len` bytes.
pub fn read_viewed(dir: &Dir, name: &str, max_len: u64) -> Result<Existing, ReadError> {
    existing(&dir.open_read_only_at(name)?, max_len)
}

/// What `file` holds, if it is a regular file of at most `max_len` bytes —
/// also once read, should it have grown meanwhile.
fn existing(file: &File, max_len: u64) -> Result<Existing, ReadError> {
    let stat = file.stat()?;
    if stat.kind != Kind::File {
        return Err(ReadError::NotRegular);
    }
    if stat.len > max_len {
        return Err(ReadError::TooLarge { len: stat.len });
    }
    let bytes = file.read_capped(stat.len, max_len)?;
    if bytes.len() as u64 > max_len {
        return Err(ReadError::TooLarge {
            len: bytes.len() as u64,
        });
    }
    Ok(Existing {
        bytes,
        modified: stat.modified,
        link_count: stat.link_count,
    })
}
