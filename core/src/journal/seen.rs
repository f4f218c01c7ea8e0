//! `seen/<key>`: the versions of files a view showed, by the file's name
//! and the version's base (`docs/contract.md#merge`), so that a write made on a version that has
//! changed since can be merged onto the file as it is now instead of
//! refused. A cache, not a record: not synced, not chained, and bounded —
//! past [`MAX_SEEN`] versions it starts again, and a version lost only
//! means that write is refused as it was before merges. A version read
//! back is the caller's to check against its base.

use std::io;

use super::Journal;
use crate::fs::Dir;

/// The versions' directory.
pub const SEEN: &str = "seen";

/// Most versions kept: more than the files a model looks at in a task.
pub const MAX_SEEN: usize = 128;

/// Largest version kept, in bytes: a file larger is not merged. With
/// [`MAX_SEEN`], at most 256 MiB in all.
pub const MAX_SEEN_BYTES: u64 = 2 << 20;

impl Journal {
    /// Keep `bytes` as the version `base` names of the file `name` names.
    /// A failure is the caller's to ignore: the version is then not merged
    /// onto.
    pub fn remember(&self, name: &str, base: &str, bytes: &[u8]) -> io::Result<()> {
        if bytes.len() as u64 > MAX_SEEN_BYTES {
            return Ok(());
        }
        let key = key(name, base);
        let name = format!("{SEEN}/{key}");
        let dir = self.dir();
        if dir.stat_at(&name).is_ok() {
            return Ok(());
        }
        match dir.create_dir_at(SEEN) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        let seen = dir.open_dir_at(SEEN)?;
        // Past the bound the cache starts again; temp files a killed
        // view left go with it.
        if let Ok(names) = seen.names(|_| true)
            && names.len() >= MAX_SEEN
        {
            for old in names {
                let _ = seen.unlink_at(&old);
            }
        }
        replace(&seen, &key, bytes)
    }

    /// The version `base` names of the file `name` names, if it is kept
    /// and no larger than a kept one may be.
    pub fn seen(&self, name: &str, base: &str) -> Option<Vec<u8>> {
        let file = self
            .dir()
            .open_read_at(&format!("{SEEN}/{}", key(name, base)))
            .ok()?;
        file.read_capped(file.stat().ok()?.len, MAX_SEEN_BYTES).ok()
    }
}

/// Put `bytes` in `dir` as `name`, whole: written under a name of its own,
/// then renamed, so that a reader never finds half of it and two writers
/// of one entry do not meet. Not synced: the entries are caches.
pub(super) fn replace(dir: &Dir, name: &str, bytes: &[u8]) -> io::Result<()> {
    let mut salt = [0u8; 8];
    getrandom::fill(&mut salt).map_err(|e| io::Error::other(e.to_string()))?;
    let temp = format!("{name}.{:016x}.tmp", u64::from_le_bytes(salt));
    let file = dir.create_new_at(&temp)?;
    let written = file.write_all(bytes);
    drop(file);
    match written.and_then(|()| dir.rename_at(&temp, name)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = dir.unlink_at(&temp);
            Err(e)
        }
    }
}

/// A version's entry: the XXH3-128 of the file's name and the base, so
/// that a base is a version of the file it was viewed as, and no name
/// given reaches anything but an entry.
fn key(name: &str, base: &str) -> String {
    format!(
        "{:032x}",
        xxhash_rust::xxh3::xxh3_128(format!("{name}\0{base}").as_bytes())
    )
}
