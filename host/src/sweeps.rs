//! Which directories this tool has already swept of leftover temp files.
//!
//! Before a write the guest can remove the temp files a killed writer left
//! in the target's directory (`sweep-temps` in the WIT config). That lists
//! the directory, which costs time in proportion to its entries: wasmtime-
//! wasi reads the metadata of every entry it lists
//! (BENCHMARKS.md#the-directory-sweep).
//! Leftovers appear only when a writer dies mid-write, so a long-lived host
//! asks each write to sweep until one has written to that directory, and
//! again after any call that failed (its guest may have died with a temp
//! file open). A process that starts after a crash sweeps each directory on
//! its first write there.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;

/// Most directories remembered; past it, all are forgotten (and swept
/// again), so a long session cannot grow the set without bound.
const MAX_REMEMBERED: usize = 4096;

#[derive(Debug, Default)]
pub(crate) struct Sweeps {
    swept: Mutex<HashSet<String>>,
}

impl Sweeps {
    /// Whether a write to `path` (the call's argument) under `root` should
    /// sweep: until a write there has. Different spellings of one directory
    /// are different keys, which only costs an extra sweep.
    pub(crate) fn needed(&self, root: &Path, path: &str) -> bool {
        let swept = self.swept.lock().unwrap_or_else(|e| e.into_inner());
        !swept.contains(&key(root, path))
    }

    /// A write to `path` that was asked to sweep has written (so it swept).
    pub(crate) fn done(&self, root: &Path, path: &str) {
        let mut swept = self.swept.lock().unwrap_or_else(|e| e.into_inner());
        if swept.len() >= MAX_REMEMBERED {
            swept.clear();
        }
        swept.insert(key(root, path));
    }

    /// Sweep the directory of `path` again on the next write there.
    pub(crate) fn forget(&self, root: &Path, path: &str) {
        let mut swept = self.swept.lock().unwrap_or_else(|e| e.into_inner());
        swept.remove(&key(root, path));
    }
}

fn key(root: &Path, path: &str) -> String {
    let dir = path.rsplit_once(['/', '\\']).map_or("", |(dir, _)| dir);
    format!("{}\0{dir}", root.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn until_a_write_per_directory_and_root() {
        let sweeps = Sweeps::default();
        let (a, b) = (Path::new("/a"), Path::new("/b"));
        assert!(sweeps.needed(a, "src/x.rs"));
        assert!(sweeps.needed(a, "src/x.rs"), "nothing written yet");
        sweeps.done(a, "src/x.rs");
        assert!(!sweeps.needed(a, "src/y.rs"));
        assert!(sweeps.needed(a, "src/deeper/y.rs"));
        assert!(sweeps.needed(a, "top.txt"));
        assert!(sweeps.needed(b, "src/x.rs"), "another root");
        sweeps.forget(a, "src/z.rs");
        assert!(sweeps.needed(a, "src/x.rs"), "again after a failure");
    }

    #[test]
    fn the_set_is_bounded() {
        let sweeps = Sweeps::default();
        let root = Path::new("/r");
        for i in 0..MAX_REMEMBERED {
            sweeps.done(root, &format!("{i}/f"));
        }
        assert!(!sweeps.needed(root, "0/f"));
        // Full: everything is forgotten before the next one is remembered.
        sweeps.done(root, "new/f");
        assert!(sweeps.needed(root, "0/f"));
        assert!(!sweeps.needed(root, "new/f"));
    }
}
