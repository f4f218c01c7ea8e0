//! Where git runs code from, inside the root (`docs/contract.md#protected-paths`).
//!
//! `.git` is protected by name (`protect`). Git runs hooks from other
//! places too, and a write to one of them runs at the user's next commit:
//!
//! - the directory `core.hooksPath` names (husky sets `.husky/_`, whose
//!   scripts run `.husky/<hook>`; lefthook and others set `.githooks` and
//!   the like), relative to the work tree;
//! - the files git reads its configuration from, which can name such a
//!   directory: the repository's `config`, files it includes (`[include]`,
//!   `[includeIf]`), and where a `.git` that is a link or a file
//!   (`gitdir: …`, as worktrees and submodules have) points;
//! - a git directory that is not named `.git` (a bare repository such as
//!   `srv/repo.git`, or one kept apart from its work tree): its `hooks/`,
//!   its `config` and what that names.
//!
//! For a target, every existing directory on its path is looked at: for a
//! `.git` in it, and for being a git directory itself. What those
//! repositories name is protected. So the root's own repository always
//! counts, and a nested one when the target is in its work tree or its git
//! directory; a nested repository whose configuration points elsewhere in
//! the root (a `hooksPath` beside its work tree) is beyond what one call
//! sees. Names git reads outside the root (an absolute `hooksPath` the
//! tool cannot place, `~`, the user's global configuration) are beyond
//! what the component can see; the capability layer keeps the tool out of
//! them anyway.

use crate::fs::{Dir, TargetKind, resolve};
use crate::path::RelPath;

/// How much of a git configuration file is read.
const CONFIG_MAX_BYTES: u64 = 256 << 10;
/// How deep includes are followed.
const INCLUDE_DEPTH: usize = 5;

/// Whether writing the file at `names` (a resolved root-relative path, of
/// which the first `existing` directories exist) could change what git
/// runs: it is in a hooks directory or a configuration file of a
/// repository on its path.
pub(crate) fn runs_code(root: &Dir, names: &[String], existing: usize) -> bool {
    let deepest = existing.min(names.len().saturating_sub(1));
    Guarded::along(root, &names[..deepest]).covers(names)
}

/// What the repositories on a directory's path protect: found once for
/// the directory, asked of every entry in it (a listing's), where
/// [`runs_code`] would look at the same directories again for each.
#[derive(Debug, Default, Clone)]
pub(crate) struct Guarded(Vec<Vec<String>>);

impl Guarded {
    /// What the repositories at `dir` and at each directory above it
    /// protect.
    pub(crate) fn along(root: &Dir, dir: &[String]) -> Guarded {
        let mut guarded = Vec::new();
        for depth in 0..=dir.len() {
            repositories_at(root, &dir[..depth], &mut guarded);
        }
        Guarded(guarded)
    }

    /// This, and what the repository at `dir` (one level below) protects.
    pub(crate) fn and_at(&self, root: &Dir, dir: &[String]) -> Guarded {
        let mut guarded = self.0.clone();
        repositories_at(root, dir, &mut guarded);
        Guarded(guarded)
    }

    /// Whether writing `names` could change what git runs.
    pub(crate) fn covers(&self, names: &[String]) -> bool {
        self.0.iter().any(|g| names.starts_with(g))
    }
}

/// What the repository whose work tree or bare directory is `dir` protects,
/// added to `guarded` (each a root-relative path, everything below it
/// included).
fn repositories_at(root: &Dir, dir: &[String], guarded: &mut Vec<Vec<String>>) {
    let mut dot_git = dir.to_vec();
    dot_git.push(".git".to_owned());
    if let Some(found) = walk(root, &dot_git) {
        match found.kind {
            TargetKind::Directory => {
                // A `.git` reached through a link protects where it leads.
                guarded.push(found.names.clone());
                configure(root, &found.names, dir, guarded);
            }
            TargetKind::File => {
                guarded.push(found.names.clone());
                if let Some(gitdir) = read(root, &found.names)
                    .as_deref()
                    .and_then(|text| text.strip_prefix("gitdir:"))
                    .map(str::trim)
                    .and_then(|path| walk(root, &joined(dir, path)?))
                    .filter(|g| g.kind == TargetKind::Directory)
                {
                    guarded.push(gitdir.names.clone());
                    configure(root, &gitdir.names, dir, guarded);
                }
            }
            _ => {}
        }
    }
    // A git directory itself: a bare repository (`srv/repo.git`), or one
    // kept apart from its work tree (`git init --separate-git-dir`).
    if !dir.is_empty() && dir.last().is_some_and(|name| name != ".git") && is_git_dir(root, dir) {
        let mut hooks = dir.to_vec();
        hooks.push("hooks".to_owned());
        guarded.push(hooks);
        configure(root, dir, dir, guarded);
    }
}

/// Protect the configuration of the git directory `gitdir` (whose hooks
/// run in `work_tree`) and the hooks directory it names.
fn configure(root: &Dir, gitdir: &[String], work_tree: &[String], guarded: &mut Vec<Vec<String>>) {
    let mut config = gitdir.to_vec();
    config.push("config".to_owned());
    let mut files = vec![(config, gitdir.to_vec(), 0)];
    while let Some((file, base, depth)) = files.pop() {
        // Protected before it exists too: a model could make it.
        let Some(found) = locate(root, &file) else {
            continue;
        };
        guarded.push(found.names.clone());
        if found.kind != TargetKind::File {
            continue;
        }
        let Some(text) = read(root, &found.names) else {
            continue;
        };
        for (section, key, value) in entries(&text) {
            match (section.as_str(), key.as_str()) {
                ("core", "hookspath") => {
                    // Protected before it exists too: a model could make it.
                    if let Some(hooks) = joined(work_tree, &value).and_then(|h| locate(root, &h)) {
                        // husky runs `.husky/<hook>` from `.husky/_`.
                        if hooks.names.last().map(String::as_str) == Some("_") {
                            guarded.push(hooks.names[..hooks.names.len() - 1].to_vec());
                        }
                        guarded.push(hooks.names);
                    }
                }
                ("include", "path") | ("includeif", "path") if depth < INCLUDE_DEPTH => {
                    // Relative to the file that includes it.
                    let parent = &found.names[..found.names.len() - 1];
                    if let Some(included) = joined(parent, &value) {
                        files.push((included, base.clone(), depth + 1));
                    }
                }
                _ => {}
            }
        }
    }
}

/// Whether `dir` is a git directory: a `HEAD` file and an `objects`
/// directory (or, for a worktree's, a `commondir` file).
fn is_git_dir(root: &Dir, dir: &[String]) -> bool {
    use crate::fs::sys::Kind;
    let kind = |name: &str| {
        let mut path = dir.to_vec();
        path.push(name.to_owned());
        root.stat_at(&path.join("/")).ok().map(|s| s.kind)
    };
    kind("HEAD") == Some(Kind::File)
        && (kind("objects") == Some(Kind::Directory) || kind("commondir") == Some(Kind::File))
}

/// `path` (as git config gives it) below `base`, lexically; `None` for an
/// absolute path, `~`, or one that climbs out of the root.
fn joined(base: &[String], path: &str) -> Option<Vec<String>> {
    if path.is_empty() || path.starts_with('/') || path.starts_with('~') || path.contains('\\') {
        return None;
    }
    let mut names = base.to_vec();
    for name in path.split('/') {
        match name {
            "" | "." => {}
            ".." => {
                names.pop()?;
            }
            name => names.push(name.to_owned()),
        }
    }
    Some(names)
}

/// The walk of `names` under the root, links followed as for a write;
/// what is there, if anything that exists.
fn walk(root: &Dir, names: &[String]) -> Option<crate::fs::Resolved> {
    locate(root, names).filter(|found| found.kind != TargetKind::Missing)
}

/// The walk of `names` under the root, whether or not it exists.
fn locate(root: &Dir, names: &[String]) -> Option<crate::fs::Resolved> {
    let rel = RelPath::parse(&names.join("/")).ok()?;
    resolve(root, rel).ok()
}

/// The regular file at `names`, as text, if it is small enough.
fn read(root: &Dir, names: &[String]) -> Option<String> {
    let path = names.join("/");
    let stat = root.stat_at(&path).ok()?;
    if stat.kind != crate::fs::sys::Kind::File || stat.len > CONFIG_MAX_BYTES {
        return None;
    }
    let existing = crate::fs::read_existing(root, names, CONFIG_MAX_BYTES).ok()?;
    String::from_utf8(existing.bytes).ok()
}

/// The `(section, key, value)` entries of a git configuration file:
/// section and key lowercased (git compares them so), the subsection
/// dropped, the value unquoted and its comment removed.
fn entries(text: &str) -> Vec<(String, String, String)> {
    let mut section = String::new();
    let mut found = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let rest = if let Some(header) = line.strip_prefix('[') {
            let Some((name, after)) = header.split_once(']') else {
                continue;
            };
            section = name
                .split(|c: char| c.is_whitespace() || c == '"' || c == '.')
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            after.trim()
        } else {
            line
        };
        if rest.is_empty() {
            continue;
        }
        let (key, value) = rest.split_once('=').unwrap_or((rest, "true"));
        found.push((
            section.clone(),
            key.trim().to_ascii_lowercase(),
            unquoted(value),
        ));
    }
    found
}

/// A git config value: quotes removed, escapes applied, a comment cut.
fn unquoted(value: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = value.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            },
            '#' | ';' if !quoted => break,
            c => out.push(c),
        }
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(path: &str) -> Vec<String> {
        path.split('/').map(str::to_owned).collect()
    }

    #[test]
    fn config_entries_as_git_reads_them() {
        let text = "[core]\n\trepositoryformatversion = 0\n\thooksPath = \".husky/_\" # husky\n[Include]\n    path = ../shared.gitconfig\n[includeIf \"gitdir:~/work/\"]\n  path=work.inc ; why\n[remote \"origin\"]\nurl = x\n";
        let found = entries(text);
        assert!(found.contains(&("core".into(), "hookspath".into(), ".husky/_".into())));
        assert!(found.contains(&(
            "include".into(),
            "path".into(),
            "../shared.gitconfig".into()
        )));
        assert!(found.contains(&("includeif".into(), "path".into(), "work.inc".into())));
    }

    #[test]
    fn paths_from_config_stay_in_the_root() {
        assert_eq!(joined(&names("a/b"), "../c"), Some(names("a/c")));
        assert_eq!(joined(&[], ".husky/_"), Some(names(".husky/_")));
        assert_eq!(joined(&[], "../x"), None);
        assert_eq!(joined(&[], "/etc/hooks"), None);
        assert_eq!(joined(&[], "~/hooks"), None);
    }

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mk = |p: &str| std::fs::create_dir_all(root.join(p)).unwrap();
        let put = |p: &str, s: &str| std::fs::write(root.join(p), s).unwrap();
        mk(".git/hooks");
        mk(".husky/_");
        mk("tools/githooks");
        put(
            ".git/config",
            "[core]\n\thooksPath = .husky/_\n[include]\n\tpath = ../tools/extra.gitconfig\n",
        );
        put(
            "tools/extra.gitconfig",
            "[core]\n\thooksPath = tools/githooks\n",
        );
        mk("sub");
        put("sub/.git", "gitdir: ../.git/modules/sub\n");
        mk(".git/modules/sub");
        put(
            ".git/modules/sub/config",
            "[core]\nhooksPath=hooks-of-sub\n",
        );
        mk("srv/repo.git/objects");
        mk("srv/repo.git/hooks");
        put("srv/repo.git/HEAD", "ref: refs/heads/main\n");
        put("srv/repo.git/config", "[core]\nbare = true\n");
        mk("gd/objects");
        put("gd/HEAD", "ref: refs/heads/main\n");
        dir
    }

    #[test]
    fn hooks_and_config_git_reads_are_found() {
        let dir = tree();
        let root = Dir::from_path(dir.path());
        let guarded = |path: &str| {
            let n = names(path);
            runs_code(&root, &n, n.len() - 1)
        };
        for path in [
            ".husky/_/pre-commit",
            ".husky/pre-commit",
            "tools/extra.gitconfig",
            "tools/githooks/pre-push",
            "sub/.git",
            "sub/hooks-of-sub/pre-commit",
            "srv/repo.git/hooks/update",
            "srv/repo.git/config",
            "gd/hooks/pre-commit",
            "gd/config",
        ] {
            assert!(guarded(path), "{path}");
        }
        for path in [
            "src/main.rs",
            "tools/build.sh",
            "husky/x",
            "srv/repo.git/description",
            "sub/src/a.rs",
        ] {
            assert!(!guarded(path), "{path}");
        }
    }
}
