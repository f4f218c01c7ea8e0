//! The journal's lock: one writer at a time, across processes, so that
//! records chain in the order the changes were made.

use std::io;
use std::time::{Duration, Instant, SystemTime};

use super::{HOLDER_PREFIX, Held, Journal, LOCK};

/// How long a writer waits for the lock before it gives up.
const LOCK_WAIT: Duration = Duration::from_secs(20);
/// A lock older than this was left by a writer that died: it is taken
/// over. A writer holds it for the time of a few syncs and renames. A host
/// that writes who holds it (`WRITE_TOOL_HOLDER`) can remove the lock of a
/// holder that died at once (`write-tool` does).
const LOCK_STALE: Duration = Duration::from_secs(60);
/// How long a lock found stale is looked at again before it is taken over:
/// longer than a writer takes between linking it and touching it.
const STALE_CONFIRM: Duration = Duration::from_millis(500);

impl Journal {
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
                Ok(()) => {
                    // The lock's age is its modification time: linking
                    // changes none, and WASI tells no status-change time
                    // (wasmtime gives the birth time of the holder's file,
                    // made once per process).
                    let _ = self.dir.touch_at(LOCK);
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    // Stale twice, a moment apart: a writer that has just
                    // linked it and not yet touched it is not taken for a
                    // dead one.
                    if self.lock_is_stale() && {
                        std::thread::sleep(STALE_CONFIRM);
                        self.lock_is_stale()
                    } {
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
        Ok(Held::new(self))
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
    /// died. A writer touches it as it takes it.
    fn lock_is_stale(&self) -> bool {
        self.dir
            .stat_at(LOCK)
            .ok()
            .and_then(|s| s.modified)
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age > LOCK_STALE)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::fs::Dir;
    use crate::journal::Bounds;

    fn journal(path: &std::path::Path, holder: &str) -> Journal {
        let bounds = Bounds {
            max_bytes: 1 << 30,
            max_changes: 1000,
            max_age_ms: i64::MAX,
        };
        Journal::open(Dir::from_path(path), bounds, Some(holder.to_owned())).expect("journal")
    }

    /// A lock is as old as its last taking, not as its holder's file (made
    /// once per process, and what WASI reports as the status-change
    /// time): a live lock of a long-running holder is not taken over, and
    /// one left by a dead holder is, once found stale twice.
    #[test]
    fn a_lock_is_as_old_as_its_taking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = journal(dir.path(), "a");
        drop(a.lock().expect("made"));
        let base = dir.path().join(format!("{HOLDER_PREFIX}a"));
        let long_ago = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&base)
            .expect("base")
            .set_modified(long_ago)
            .expect("age it");
        let held = a.lock().expect("taken again");
        assert!(!a.lock_is_stale(), "a lock just taken is not stale");
        drop(held);
        // A holder that died an hour after it took the lock.
        let dead = journal(dir.path(), "dead");
        std::mem::forget(dead.lock().expect("taken"));
        let lock = dir.path().join(LOCK);
        std::fs::File::options()
            .write(true)
            .open(&lock)
            .expect("lock")
            .set_modified(long_ago)
            .expect("age it");
        let b = journal(dir.path(), "b");
        drop(b.lock().expect("a dead holder's lock is taken over"));
    }
}
