//! Snapshots of a directory tree, for comparing before and after a call.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A snapshot of a directory tree: per entry its kind, bytes, mode, mtime,
/// inode and link target. Symlinks are recorded, not followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree(BTreeMap<PathBuf, Entry>);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    kind: &'static str,
    bytes: Option<Vec<u8>>,
    len: u64,
    link: Option<PathBuf>,
    mode: u32,
    mtime: Option<SystemTime>,
    ino: u64,
}

impl Tree {
    pub fn of(dir: &Path) -> Tree {
        let mut entries = BTreeMap::new();
        walk(dir, dir, true, &mut entries);
        Tree(entries)
    }

    /// The same snapshot without the files' bytes (their size, mtime and
    /// inode still), for trees that hold files too large to read.
    pub fn of_metadata(dir: &Path) -> Tree {
        let mut entries = BTreeMap::new();
        walk(dir, dir, false, &mut entries);
        Tree(entries)
    }

    /// The same snapshot without the entries below `prefix` (relative to
    /// the snapshot's base), for comparing what lies outside the root.
    pub fn without(&self, prefix: &str) -> Tree {
        Tree(
            self.0
                .iter()
                .filter(|(p, _)| !p.starts_with(prefix))
                .map(|(p, e)| (p.clone(), e.clone()))
                .collect(),
        )
    }

    /// The same snapshot with directories' modification times left out:
    /// a write stopped at its commit point has made and removed a temp
    /// file, which changes its directory's time and nothing else.
    pub fn without_directory_times(&self) -> Tree {
        Tree(
            self.0
                .iter()
                .map(|(p, e)| {
                    let mut e = e.clone();
                    if e.kind == "dir" {
                        e.mtime = None;
                    }
                    (p.clone(), e)
                })
                .collect(),
        )
    }

    /// The same snapshot with only what a revert gives back: each entry's
    /// kind, bytes, mode and link, not its times or inode (a restored file
    /// is a new file with the old content).
    pub fn contents_and_modes(&self) -> Tree {
        Tree(
            self.0
                .iter()
                .map(|(p, e)| {
                    let mut e = e.clone();
                    e.mtime = None;
                    e.ino = 0;
                    (p.clone(), e)
                })
                .collect(),
        )
    }

    /// One entry, by its path relative to the snapshot's base.
    pub fn entry(&self, path: &str) -> Option<&Entry> {
        self.0.get(Path::new(path))
    }

    /// Names of temp files the tool may have left.
    pub fn temp_files(&self) -> Vec<&PathBuf> {
        self.0
            .keys()
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(crate::temps::is_tool_temp)
            })
            .collect()
    }
}

fn walk(base: &Path, dir: &Path, contents: bool, out: &mut BTreeMap<PathBuf, Entry>) {
    let mut children: Vec<_> = fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .collect();
    children.sort();
    for path in children {
        let meta = fs::symlink_metadata(&path).expect("lstat");
        let ft = meta.file_type();
        let kind = if ft.is_symlink() {
            "link"
        } else if ft.is_dir() {
            "dir"
        } else if ft.is_file() {
            "file"
        } else {
            "other"
        };
        let entry = Entry {
            kind,
            bytes: (ft.is_file() && contents).then(|| fs::read(&path).expect("read")),
            len: meta.len(),
            link: ft
                .is_symlink()
                .then(|| fs::read_link(&path).expect("readlink")),
            mode: meta.permissions().mode(),
            // A directory's mtime changes when an entry is added or removed,
            // which is exactly what "nothing changed" must rule out.
            mtime: if ft.is_symlink() {
                None
            } else {
                meta.modified().ok()
            },
            ino: meta.ino(),
        };
        out.insert(
            path.strip_prefix(base).expect("prefix").to_path_buf(),
            entry,
        );
        if ft.is_dir() {
            walk(base, &path, contents, out);
        }
    }
}
