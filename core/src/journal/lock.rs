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
    /// died. Linking changes a file's status time, creating it both times.
    fn lock_is_stale(&self) -> bool {
        self.dir
            .stat_at(LOCK)
            .ok()
            .and_then(|s| s.changed.or(s.modified))
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age > LOCK_STALE)
    }
}
