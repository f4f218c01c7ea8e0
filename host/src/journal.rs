//! Where the `write-tool` host keeps a root's journal
//! (`docs/contract.md#journal`), how it is trusted, and how the guest
//! gets it.
//!
//! The journal is a directory the guest gets as one more preopen, named
//! [`PREOPEN`] and passed as `WRITE_TOOL_JOURNAL`, which the guest never
//! treats as a root. Each project root has its own, in a directory named
//! after the hash of the root's canonical path, below a base directory:
//! the per-user state directory (`$XDG_STATE_HOME/write-tool/journals`,
//! `~/.local/state/…`, the platform's equivalent) unless `--journal DIR`
//! names another.
//!
//! Whoever can write a journal reads what every change replaced and
//! writes the records an undo follows, so it is trusted as the compile
//! cache is (`crate::trust`): the base and every directory above it
//! safe from other users, the root's directory this user's and private
//! (0700), opened once without following a link, and every use of it —
//! the guest's preopen (`/proc/self/fd/N`), the host's own reads — made
//! through that handle. A journal directory belongs to one root: its
//! `root` file names the root's path and identity (device and inode), and
//! a journal whose root was deleted and made again is another project's
//! history: it is removed, never inherited.

use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

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

/// Why a root's journal cannot be kept: the directory, and what is wrong.
#[derive(Debug)]
pub struct JournalError {
    /// The directory that could not be used.
    pub path: PathBuf,
    /// Why.
    pub why: String,
}

impl std::fmt::Display for JournalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot keep the journal in {}: {}",
            self.path.display(),
            self.why
        )
    }
}

impl std::error::Error for JournalError {}

impl JournalChoice {
    /// Whether journals are kept where no one asked for them (the
    /// per-user state directory).
    pub fn is_default(&self) -> bool {
        *self == JournalChoice::Default
    }

    /// The base directory journals are kept below; `None` when off.
    pub fn base(&self) -> Result<Option<PathBuf>, JournalError> {
        match self {
            JournalChoice::Off => Ok(None),
            JournalChoice::Default => default_base().map(Some).ok_or_else(|| JournalError {
                path: PathBuf::from("~/.local/state/write-tool/journals"),
                why: "there is no per-user state directory (set XDG_STATE_HOME or HOME)".into(),
            }),
            JournalChoice::In(dir) => {
                std::path::absolute(dir)
                    .map(Some)
                    .map_err(|e| JournalError {
                        path: dir.clone(),
                        why: e.to_string(),
                    })
            }
        }
    }
}

/// The base directory of journals when none is named.
fn default_base() -> Option<PathBuf> {
    dirs::state_dir()
        .or_else(dirs::data_local_dir)
        .map(|d| d.join("write-tool").join("journals"))
}

/// A root's directory name: the first 128 bits of the SHA-256 of its path.
pub(crate) fn key(root: &Path) -> String {
    Sha256::digest(root.as_os_str().as_encoded_bytes())[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether `name` is a journal's directory name ([`key`]).
fn is_key(name: &str) -> bool {
    name.len() == 32 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Why a journal's base that is a root is refused.
pub(crate) const IS_A_ROOT: &str = "it is a root: a call could write the journal";

/// Why a root that lies in the journals' base is refused: a call could
/// write the journals, and a root named as a journal could be swept.
pub(crate) const ROOT_IN_JOURNAL: &str =
    "a root lies in it: a call could write the journals, which hold only journals";

/// Where `guarded` (a real path) lies inside one of the roots, known by
/// their identities (device, inode): found by identity, not by spelling,
/// so that a root reached through a link, or spelled otherwise, still
/// finds it, and from every place a mount shows `guarded` at (a bind
/// mount inside a root). Each directory above each place is looked at;
/// `Err` when `guarded` is a root itself (nothing of it could then be
/// told from the journal).
fn inside_roots(guarded: &Path, roots: &[(u64, u64)]) -> Result<Vec<PathBuf>, &'static str> {
    let mut found = Vec::new();
    for place in places(guarded) {
        for rel in inside_roots_from(&place, roots)? {
            if !found.contains(&rel) {
                found.push(rel);
            }
        }
    }
    Ok(found)
}

/// Where the journals' base `guarded` (a real path) lies inside the
/// roots (`roots`: their identities and real paths), as
/// [`inside_roots`] finds it; `Err` when it is a root or holds one (a call
/// could write the journals, and the base holds only journals).
pub(crate) fn place_among_roots(
    guarded: &Path,
    roots: (&[(u64, u64)], &[&Path]),
) -> Result<Vec<PathBuf>, &'static str> {
    let (identities, paths) = roots;
    let inside = inside_roots(guarded, identities)?;
    if paths.iter().any(|root| lies_in_journal(root, guarded)) {
        return Err(ROOT_IN_JOURNAL);
    }
    Ok(inside)
}

/// Whether a root (a real path) lies in the journals' base `guarded`,
/// whatever mount shows either.
fn lies_in_journal(root: &Path, guarded: &Path) -> bool {
    #[cfg(target_os = "linux")]
    return mounts::lies_in(root, guarded);
    #[cfg(not(target_os = "linux"))]
    return root.starts_with(guarded);
}

fn places(guarded: &Path) -> Vec<PathBuf> {
    #[cfg(target_os = "linux")]
    return mounts::places(guarded);
    #[cfg(not(target_os = "linux"))]
    return vec![guarded.to_path_buf()];
}

fn inside_roots_from(guarded: &Path, roots: &[(u64, u64)]) -> Result<Vec<PathBuf>, &'static str> {
    let mut found = Vec::new();
    for dir in guarded.ancestors() {
        let Ok(meta) = std::fs::metadata(dir) else {
            continue;
        };
        if !roots.contains(&identity(&meta)) {
            continue;
        }
        let rel = guarded.strip_prefix(dir).unwrap_or(guarded);
        if rel.as_os_str().is_empty() {
            return Err(IS_A_ROOT);
        }
        found.push(rel.to_path_buf());
    }
    Ok(found)
}

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn identity(_: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

/// The globs that protect what lies at `rels` (root-relative paths) in
/// the roots: the guest then refuses to write into it as into `.git`.
pub(crate) fn protect_globs(rels: &[PathBuf]) -> Vec<String> {
    rels.iter()
        .filter_map(|rel| rel.to_str())
        .map(escape)
        .flat_map(|rel| [rel.clone(), format!("{rel}/**")])
        .collect()
}

/// `text` as a glob that matches it alone: a name may hold `*`, `[` or
/// `{`. The guest's globs take `\` as an escape, as globset does where `/`
/// is the only separator.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '?' | '*' | '[' | ']' | '{' | '}' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
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

/// When process `pid` started, in clock ticks since boot (`/proc`), if it
/// runs: a process that exited and was not yet reaped (a zombie) no longer
/// holds anything.
pub(crate) fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name, which may hold spaces and parentheses.
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?;
    if matches!(state, "Z" | "X" | "x") {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

/// Whether `holder` (as [`holder`] writes it) names a `write-tool`
/// process that is gone: no running process of that id started at that
/// time.
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

#[cfg(unix)]
mod dir;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(unix)]
pub(crate) use dir::{JournalDir, sweep_orphans};

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the identity of a directory above it, whatever its
    /// spelling; a journal that is a root is refused.
    #[test]
    fn a_journal_inside_a_root_is_found_by_identity() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().join("home/.local/state/journals");
        std::fs::create_dir_all(&base).expect("mkdir");
        let id = |p: &Path| identity(&std::fs::metadata(p).expect("stat"));
        let home = id(&dir.path().join("home"));
        let rels = inside_roots(&base, &[home, (0, 1)]).expect("inside");
        assert_eq!(rels, [PathBuf::from(".local/state/journals")]);
        assert_eq!(
            protect_globs(&rels),
            [".local/state/journals", ".local/state/journals/**"]
        );
        // Nested roots: the journal protected in each.
        let local = id(&dir.path().join("home/.local"));
        let rels = inside_roots(&base, &[home, local]).expect("inside");
        assert_eq!(
            rels,
            [
                PathBuf::from("state/journals"),
                PathBuf::from(".local/state/journals")
            ]
        );
        assert_eq!(inside_roots(&base, &[(0, 1)]), Ok(Vec::new()));
        assert!(inside_roots(&base, &[id(&base)]).is_err());
    }

    /// The names are matched as themselves, by globs built as the guest
    /// builds them.
    #[test]
    fn glob_characters_in_the_journal_path_match_themselves() {
        let odd = "[x]*{a,b}?\\q";
        let globs = protect_globs(&[Path::new(odd).join("j")]);
        let glob = |g: &str| {
            globset::GlobBuilder::new(g)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .expect("a glob")
                .compile_matcher()
        };
        assert!(glob(&globs[0]).is_match(format!("{odd}/j")));
        assert!(glob(&globs[1]).is_match(format!("{odd}/j/log")));
        assert!(!glob(&globs[0]).is_match("x/j"));
        assert!(!glob(&globs[1]).is_match("xa/j/log"));
    }

    /// A process that exited but was not reaped holds no lock: its
    /// `/proc` entry says so.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_zombie_is_dead() {
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        // Exited, not reaped: wait for the state to show it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            !s[s.rfind(')').unwrap_or(0) + 1..]
                .trim_start()
                .starts_with('Z')
        }) {
            assert!(
                std::time::Instant::now() < deadline,
                "the child never exited"
            );
            std::thread::yield_now();
        }
        let holder = format!("write-tool {pid} 1");
        assert!(is_dead(&holder));
        assert_eq!(start_time(pid), None);
        let me = holder_of_self();
        assert!(!is_dead(&me), "{me}");
        child.wait().expect("reap");
    }

    #[cfg(target_os = "linux")]
    fn holder_of_self() -> String {
        holder().expect("/proc")
    }
}
