//! Where the `write-tool` host keeps a root's journal
//! (`docs/contract.md#journal`), and how the guest gets it.
//!
//! The journal is a directory the guest gets as one more preopen, named
//! [`PREOPEN`] and passed as `WRITE_TOOL_JOURNAL`, which the guest never
//! treats as a root. Each project root has its own, in a directory named
//! after the hash of the root's canonical path, below a base directory:
//! the per-user state directory (`$XDG_STATE_HOME/write-tool/journals`,
//! `~/.local/state/…`, the platform's equivalent) unless `--journal DIR`
//! names another. It is created private to the user (0700): it holds the
//! content every change replaced.

use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::Root;
use crate::sandbox::ModeSnapshot;

/// The preopen name the guest finds the journal under. Not absolute and not
/// `.`: no path a call gives can name it.
pub const PREOPEN: &str = "write-tool-journal";

/// Whether and where a host keeps journals.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum JournalChoice {
    /// No journal: changes cannot be undone (the library's default; the
    /// CLI's is [`JournalChoice::Default`]).
    #[default]
    Off,
    /// Below the per-user state directory.
    Default,
    /// Below this directory.
    In(PathBuf),
}

impl JournalChoice {
    /// The journal directory of the project root at `root` (a canonical
    /// path), created if missing; `None` when off.
    pub fn dir_for(&self, root: &Path) -> io::Result<Option<PathBuf>> {
        let base = match self {
            JournalChoice::Off => return Ok(None),
            JournalChoice::Default => default_base().ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    "no per-user state directory (set XDG_STATE_HOME or HOME, or pass --journal DIR)",
                )
            })?,
            JournalChoice::In(dir) => std::path::absolute(dir)?,
        };
        let dir = base.join(key(root));
        create_private(&dir)?;
        remove_dead_holders(&dir);
        // For a person looking at the directory: which root it is for.
        let note = dir.join("root");
        if !note.exists() {
            let _ = std::fs::write(&note, format!("{}\n", root.display()));
        }
        Ok(Some(dir))
    }
}

/// The base directory of journals when none is named.
fn default_base() -> Option<PathBuf> {
    dirs::state_dir()
        .or_else(dirs::data_local_dir)
        .map(|d| d.join("write-tool").join("journals"))
}

/// A root's directory name: the first 128 bits of the SHA-256 of its path.
fn key(root: &Path) -> String {
    Sha256::digest(root.as_os_str().as_encoded_bytes())[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Create `dir` and its missing parents, the last private to the user.
fn create_private(dir: &Path) -> io::Result<()> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    match builder.create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(e),
    }
}

/// Who this process is, as the guest writes it into the journal's lock:
/// `write-tool <pid> <start time>` where `/proc` tells them, else `None`.
pub(crate) fn holder() -> Option<String> {
    static HOLDER: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    HOLDER
        .get_or_init(|| {
            let pid = std::process::id();
            start_time(pid).map(|start| format!("write-tool {pid} {start}"))
        })
        .clone()
}

/// When process `pid` started, in clock ticks since boot (`/proc`).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name, which may hold spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Remove the journal's lock if a `write-tool` process that died holds
/// it (it was killed in the middle of a commit): the next call need not
/// wait for the lock to grow stale. A lock of a live process, or of
/// another host, is left alone.
pub(crate) fn clear_dead_lock(journal: &Path) {
    let lock = journal.join("lock");
    let Ok(holder) = std::fs::read_to_string(&lock) else {
        return;
    };
    if is_dead(&holder) && std::fs::read_to_string(&lock).is_ok_and(|again| again == holder) {
        let _ = std::fs::remove_file(&lock);
    }
}

/// Whether `holder` (as [`holder`] writes it) names a `write-tool`
/// process that is gone: no process of that id started at that time.
fn is_dead(holder: &str) -> bool {
    let mut parts = holder.split_whitespace();
    let (Some("write-tool"), Some(pid), Some(start)) = (parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else {
        return false;
    };
    start_time(pid) != Some(start)
}

/// Remove the holder files (which the lock links to, one per process
/// that took it) of `write-tool` processes that are gone.
fn remove_dead_holders(journal: &Path) {
    let Ok(entries) = std::fs::read_dir(journal) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_str().is_some_and(|n| n.starts_with("holder-")) {
            continue;
        }
        let path = entry.path();
        if std::fs::read_to_string(&path).is_ok_and(|holder| is_dead(&holder)) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// After a change of several files that the journal recorded as
/// `change_id` (a `write_many` or a revert): give each file it replaced or
/// restored the permission bits of the file the journal saved — for a
/// `write_many` the file it replaced, for a revert the file whose content
/// it put back —, which the guest cannot set (WASI has no chmod). Best
/// effort: the change is made either way.
pub(crate) fn restore_modes(root: &Root, journal: &Path, change_id: &str) {
    let Some(record) = last_record(&journal.join("log")) else {
        return;
    };
    if record["id"] != change_id {
        return;
    }
    let side = match record["kind"].as_str() {
        Some("many") => "old",
        Some("revert") => "new",
        _ => return,
    };
    let Some(files) = record["files"].as_array() else {
        return;
    };
    for file in files {
        // A file a write_many created, or a revert removed, has no saved
        // file to take a mode from.
        let (Some(path), Some(digest)) = (file["path"].as_str(), file[side]["digest"].as_str())
        else {
            continue;
        };
        if digest.len() != 32 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let saved = journal.join("objects").join(digest);
        if let Some(mode) = ModeSnapshot::of_file(&saved) {
            let _ = mode.restore(root, path);
        }
    }
}

/// The last complete record of the log at `log`.
fn last_record(log: &Path) -> Option<serde_json::Value> {
    use std::io::{Read, Seek, SeekFrom};
    // A record of many files is tens of KiB; the bound keeps a damaged log
    // from being read whole.
    const MAX: u64 = 4 << 20;
    let mut file = std::fs::File::open(log).ok()?;
    let len = file.metadata().ok()?.len();
    let from = len.saturating_sub(MAX);
    file.seek(SeekFrom::Start(from)).ok()?;
    let mut tail = Vec::new();
    file.take(MAX).read_to_end(&mut tail).ok()?;
    let end = tail.iter().rposition(|&b| b == b'\n')?;
    let start = tail[..end]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    serde_json::from_slice(&tail[start..end]).ok()
}

/// The globs that protect `journal` where it lies inside one of `roots`
/// (a root below the per-user state directory, say the home directory):
/// the guest then refuses to write into it as into `.git`.
pub(crate) fn protect_globs<'a>(
    journal: &Path,
    roots: impl Iterator<Item = &'a Path>,
) -> Vec<String> {
    roots
        .filter_map(|root| journal.strip_prefix(root).ok())
        .filter_map(Path::to_str)
        .filter(|rel| !rel.is_empty())
        .flat_map(|rel| [rel.to_owned(), format!("{rel}/**")])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_root_has_its_own_private_journal() {
        let base = tempfile::tempdir().expect("tempdir");
        let choice = JournalChoice::In(base.path().to_path_buf());
        let a = choice.dir_for(Path::new("/srv/a")).expect("a").expect("on");
        let b = choice.dir_for(Path::new("/srv/b")).expect("b").expect("on");
        assert_ne!(a, b);
        assert_eq!(
            choice.dir_for(Path::new("/srv/a")).expect("again"),
            Some(a.clone())
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&a).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        assert_eq!(
            JournalChoice::Off
                .dir_for(Path::new("/srv/a"))
                .expect("off"),
            None
        );
    }

    #[test]
    fn a_journal_inside_a_root_is_protected_there() {
        let globs = protect_globs(
            Path::new("/home/u/.local/state/write-tool/journals/abc"),
            [Path::new("/home/u"), Path::new("/srv/other")].into_iter(),
        );
        assert_eq!(
            globs,
            [
                ".local/state/write-tool/journals/abc",
                ".local/state/write-tool/journals/abc/**"
            ]
        );
    }
}
