//! Which directories this tool has already swept of leftover temp files.
//!
//! Before a write the guest can remove the temp files a killed writer left
//! in the target's directory (`sweep-temps` in the WIT config). That lists
//! the directory, which costs time in proportion to its entries (wasmtime-
//! wasi reads the metadata of every entry it lists): beside 2,000 files a
//! 1 KiB write took 3.7 ms instead of 0.3 ms. Leftovers appear only when a
//! writer dies mid-write, so a long-lived host sweeps the first write to
//! each directory, and again after any call that failed (its guest may
//! have died with a temp file open). A process that starts after a crash
//! sweeps each directory on its first write there.

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
    /// sweep: true the first time its directory is seen. Different
    /// spellings of one directory are different keys, which only costs an
    /// extra sweep.
    pub(crate) fn first(&self, root: &Path, path: &str) -> bool {
        let mut swept = self.swept.lock().unwrap_or_else(|e| e.into_inner());
        if swept.len() >= MAX_REMEMBERED {
            swept.clear();
        }
        swept.insert(key(root, path))
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
    fn first_write_per_directory_and_root() {
        let sweeps = Sweeps::default();
        let (a, b) = (Path::new("/a"), Path::new("/b"));
        assert!(sweeps.first(a, "src/x.rs"));
        assert!(!sweeps.first(a, "src/y.rs"));
        assert!(sweeps.first(a, "src/deeper/y.rs"));
        assert!(sweeps.first(a, "top.txt"));
        assert!(!sweeps.first(a, "other.txt"));
        assert!(sweeps.first(b, "src/x.rs"), "another root");
        sweeps.forget(a, "src/z.rs");
        assert!(sweeps.first(a, "src/x.rs"), "again after a failure");
        assert!(!sweeps.first(a, "src/x.rs"));
    }

    #[test]
    fn the_set_is_bounded() {
        let sweeps = Sweeps::default();
        let root = Path::new("/r");
        for i in 0..MAX_REMEMBERED {
            assert!(sweeps.first(root, &format!("{i}/f")));
        }
        assert_eq!(sweeps.swept.lock().expect("lock").len(), MAX_REMEMBERED);
        // Full: everything is forgotten before the next one is remembered.
        assert!(sweeps.first(root, "0/f"));
        assert_eq!(sweeps.swept.lock().expect("lock").len(), 1);
        assert!(sweeps.first(root, "1/f"));
        assert!(!sweeps.first(root, "0/f"));
    }
}
