//! `seen/<base>`: the versions of files a view showed, by their base
//! (`docs/contract.md#merge`), so that a write made on a version that has
//! changed since can be merged onto the file as it is now instead of
//! refused. A cache, not a record: not synced, not chained, and bounded —
//! past [`MAX_SEEN`] versions it starts again, and a version lost only
//! means that write is refused as it was before merges. A version read
//! back is the caller's to check against its base.

use std::io;

use super::Journal;

/// The versions' directory.
pub const SEEN: &str = "seen";

/// Most versions kept: more than the files a model looks at in a task.
pub const MAX_SEEN: usize = 256;

/// Largest version kept, in bytes: a file larger is not merged.
pub const MAX_SEEN_BYTES: u64 = 4 << 20;

impl Journal {
    /// Keep `bytes` as the version `base` names. A failure is the
    /// caller's to ignore: the version is then not merged onto.
    pub fn remember(&self, base: &str, bytes: &[u8]) -> io::Result<()> {
        if bytes.len() as u64 > MAX_SEEN_BYTES || !is_base(base) {
            return Ok(());
        }
        let name = format!("{SEEN}/{base}");
        let dir = self.dir();
        if dir.stat_at(&name).is_ok() {
            return Ok(());
        }
        match dir.create_dir_at(SEEN) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        let seen = dir.open_dir_at(SEEN)?;
        if let Ok(names) = seen.names(|_| true)
            && names.len() >= MAX_SEEN
        {
            for old in names {
                let _ = seen.unlink_at(&old);
            }
        }
        // Written under a name of its own, then renamed: a reader never
        // finds half of it, and two writers of one version do not meet.
        let mut salt = [0u8; 8];
        getrandom::fill(&mut salt).map_err(|e| io::Error::other(e.to_string()))?;
        let temp = format!("{base}.{:016x}.tmp", u64::from_le_bytes(salt));
        let file = seen.create_new_at(&temp)?;
        let written = file.write_all(bytes);
        drop(file);
        match written.and_then(|()| seen.rename_at(&temp, base)) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = seen.unlink_at(&temp);
                Err(e)
            }
        }
    }

    /// The version `base` names, if it is kept and no larger than a kept
    /// one may be.
    pub fn seen(&self, base: &str) -> Option<Vec<u8>> {
        if !is_base(base) {
            return None;
        }
        let file = self.dir().open_read_at(&format!("{SEEN}/{base}")).ok()?;
        file.read_capped(file.stat().ok()?.len, MAX_SEEN_BYTES).ok()
    }
}

/// A base's form: 32 lowercase hex digits, so that no name given reaches
/// anything but a version.
fn is_base(base: &str) -> bool {
    base.len() == 32 && base.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
