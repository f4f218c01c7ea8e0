//! Protected paths: places inside the root the tool refuses to write.
//!
//! Writing `.git/config` or `.git/hooks/*` would let a model run code
//! outside the sandbox the next time someone uses git, so `.git` — in any
//! letter case, at any depth — is protected by default. Hosts add their own
//! patterns, and may drop the default.
//!
//! The check runs on the *resolved* path, after every in-root link has been
//! followed, so a link that leads into `.git` is refused like `.git` itself.
//!
//! Pattern rules (gitignore-like):
//! - a pattern without `/` is matched against each name in the path
//!   (`*.pem` protects `a/b/key.pem`; `secrets` protects `x/secrets/y`);
//! - a pattern with `/` is matched against the root-relative path and each
//!   of its ancestors (`config/prod/**` or `config/prod` protect everything
//!   below `config/prod`); a leading `/` is ignored;
//! - `*` and `?` do not cross `/`; `**` does; `[…]` and `{a,b}` work as in
//!   globset.
//!
//! Names are compared the way the root's file system would find them, so
//! that a spelling it takes for the same name is protected too
//! (`docs/contract.md#protected-paths`):
//! - Unicode-normalized (NFC), as a normalizing file system (macOS) sees
//!   `é` and `e` + U+0301 alike;
//! - as Windows reads a name, on every platform (a root may be shared with
//!   one): without a trailing dot or space (`.git.`, `.git `) and without
//!   an alternate data stream (`.git::$INDEX_ALLOCATION`), and `GIT~1`,
//!   the short name Windows gives `.git`, as `.git`;
//! - without regard to case: `.git` always; host patterns when the root's
//!   file system folds case (the caller probes it).

use std::fmt;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::ToolError;

/// A protect pattern that cannot be used (after globset's `Error { glob,
/// kind }`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectError {
    pattern: String,
    kind: ProtectErrorKind,
}

/// What is wrong with a protect pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProtectErrorKind {
    /// Empty, or nothing but slashes: it would protect nothing.
    Empty,
    /// Not a valid glob.
    Glob(globset::Error),
}

impl ProtectError {
    /// The pattern as given.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// What is wrong with it.
    pub fn kind(&self) -> &ProtectErrorKind {
        &self.kind
    }
}

impl fmt::Display for ProtectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ProtectErrorKind::Empty => write!(
                f,
                "protect pattern {:?} is empty: it would protect nothing",
                self.pattern
            ),
            ProtectErrorKind::Glob(err) => {
                write!(f, "protect pattern {:?}: {}", self.pattern, err.kind())
            }
        }
    }
}

impl std::error::Error for ProtectError {}

/// The compiled protection rules.
#[derive(Debug, Clone)]
pub struct Protection {
    default_git: bool,
    names: GlobSet,
    paths: GlobSet,
    /// The same patterns, matched without regard to case.
    names_folded: GlobSet,
    paths_folded: GlobSet,
    empty: bool,
}

impl Default for Protection {
    /// `.git` protected, no other pattern.
    fn default() -> Self {
        Protection {
            default_git: true,
            names: GlobSet::empty(),
            paths: GlobSet::empty(),
            names_folded: GlobSet::empty(),
            paths_folded: GlobSet::empty(),
            empty: true,
        }
    }
}

impl Protection {
    /// Compile `patterns`; with `default_git`, `.git` is protected too.
    pub fn new<S: AsRef<str>>(
        default_git: bool,
        patterns: &[S],
    ) -> Result<Protection, ProtectError> {
        let mut names = GlobSetBuilder::new();
        let mut paths = GlobSetBuilder::new();
        let mut names_folded = GlobSetBuilder::new();
        let mut paths_folded = GlobSetBuilder::new();
        for pattern in patterns {
            let pattern = pattern.as_ref();
            let error = |kind| ProtectError {
                pattern: pattern.to_owned(),
                kind,
            };
            let trimmed = pattern.trim_start_matches('/').trim_end_matches('/');
            if trimmed.is_empty() {
                return Err(error(ProtectErrorKind::Empty));
            }
            let normalized = as_windows_reads_pattern(&nfc(trimmed));
            let glob = compile(&normalized, false).map_err(|e| error(ProtectErrorKind::Glob(e)))?;
            let folded =
                compile(&normalized, true).map_err(|e| error(ProtectErrorKind::Glob(e)))?;
            if trimmed.contains('/') {
                paths.add(glob);
                paths_folded.add(folded);
            } else {
                names.add(glob);
                names_folded.add(folded);
            }
        }
        // Every glob compiled alone above; a set of them fails only as one
        // of them would.
        let build = |b: GlobSetBuilder| {
            b.build().map_err(|e| ProtectError {
                pattern: e.glob().unwrap_or_default().to_owned(),
                kind: ProtectErrorKind::Glob(e),
            })
        };
        Ok(Protection {
            default_git,
            names: build(names)?,
            paths: build(paths)?,
            names_folded: build(names_folded)?,
            paths_folded: build(paths_folded)?,
            empty: patterns.is_empty(),
        })
    }

    /// Whether `.git`, and the other places git runs code from, are
    /// protected (the default).
    pub fn protects_git(&self) -> bool {
        self.default_git
    }

    /// Whether host patterns are set (the caller then probes whether the
    /// root's file system folds case).
    pub fn has_patterns(&self) -> bool {
        !self.empty
    }

    /// Refuse `names` (a resolved root-relative path) if it is protected;
    /// `folds_case`: the root's file system takes names that differ in
    /// case for one.
    pub fn check(&self, names: &[String], folds_case: bool) -> Result<(), ToolError> {
        if self.is_protected(names, folds_case) {
            return Err(ToolError::protected());
        }
        Ok(())
    }

    /// Whether `names` is protected (see [`Protection::check`]).
    pub fn is_protected(&self, names: &[String], folds_case: bool) -> bool {
        let composed: Vec<String> = names.iter().map(|n| nfc(n)).collect();
        let read: Vec<String> = composed.iter().map(|n| as_windows_reads(n)).collect();
        if self.default_git && read.iter().any(|n| is_git(n)) {
            return true;
        }
        if self.empty {
            return false;
        }
        // As written and as Windows reads them: a pattern protects the
        // name it spells (`.env.*` protects `.env.`) and every spelling
        // that opens it.
        self.matches(&read, folds_case) || (composed != read && self.matches(&composed, folds_case))
    }

    fn matches(&self, names: &[String], folds_case: bool) -> bool {
        let (by_name, by_path) = if folds_case {
            (&self.names_folded, &self.paths_folded)
        } else {
            (&self.names, &self.paths)
        };
        if names.iter().any(|n| by_name.is_match(n)) {
            return true;
        }
        (1..=names.len()).any(|depth| by_path.is_match(names[..depth].join("/")))
    }
}

fn compile(pattern: &str, fold_case: bool) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .case_insensitive(fold_case)
        .build()
}

/// `name` in Unicode's composed form (NFC).
fn nfc(name: &str) -> String {
    icu_normalizer::ComposingNormalizerBorrowed::new_nfc()
        .normalize(name)
        .into_owned()
}

/// The name Windows would open for `name`: an alternate data stream
/// (`name:stream`, `name::$DATA`) dropped, then trailing dots and spaces.
fn as_windows_reads(name: &str) -> String {
    let name = name.split(':').next().unwrap_or(name);
    name.trim_end_matches(['.', ' ']).to_owned()
}

/// `pattern` with each component read as Windows reads a name
/// ([`as_windows_reads`]), as the names it is matched against are: a
/// pattern `secret.` must still protect `secret.`, which is checked as
/// `secret`. An escaped trailing dot (`\.`) goes with its escape; a
/// component that would be left empty is kept as given.
fn as_windows_reads_pattern(pattern: &str) -> String {
    pattern
        .split('/')
        .map(|component| {
            // A wildcard, class or brace stays as written: what it spells
            // is matched as written too, and `*.` read as `*` would
            // protect every name.
            if component.contains(['*', '?', '[', '{']) {
                return component.to_owned();
            }
            let mut read = component.split(':').next().unwrap_or(component).to_owned();
            while read.ends_with(['.', ' ']) {
                read.pop();
                if read.ends_with('\\') {
                    read.pop();
                }
            }
            if read.is_empty() {
                component.to_owned()
            } else {
                read
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// `.git` in any case, or `GIT~<n>`, the short name Windows gives it.
fn is_git(name: &str) -> bool {
    name.eq_ignore_ascii_case(".git")
        || name
            .get(..4)
            .is_some_and(|head| head.eq_ignore_ascii_case("git~"))
            && name.len() > 4
            && name[4..].bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(path: &str) -> Vec<String> {
        path.split('/').map(str::to_owned).collect()
    }

    #[test]
    fn git_is_protected_in_any_case_at_any_depth() {
        let p = Protection::default();
        for path in [
            ".git",
            ".git/config",
            ".GIT/hooks/pre-commit",
            "sub/.Git/HEAD",
        ] {
            assert!(p.is_protected(&names(path), false), "{path}");
        }
        for path in [
            "git/config",
            ".github/workflows/ci.yml",
            ".gitignore",
            "a.git",
        ] {
            assert!(!p.is_protected(&names(path), false), "{path}");
        }
        let off = Protection::new::<&str>(false, &[]).unwrap();
        assert!(!off.is_protected(&names(".git/config"), false));
    }

    #[test]
    fn host_patterns() {
        let p = Protection::new(
            false,
            &["*.pem", "secrets", "config/prod/**", "/deploy/keys"],
        )
        .unwrap();
        for path in [
            "key.pem",
            "a/b/key.pem",
            "secrets",
            "x/secrets/y.txt",
            "config/prod/db.yml",
            "deploy/keys/k",
        ] {
            assert!(p.is_protected(&names(path), false), "{path}");
        }
        for path in [
            "key.pem.txt",
            "config/dev/db.yml",
            "secretsx",
            "deploy/other",
            "x/deploy/keys",
        ] {
            assert!(!p.is_protected(&names(path), false), "{path}");
        }
        let bad = Protection::new(true, &["ok", "a["]).unwrap_err();
        assert_eq!(bad.pattern(), "a[");
        assert!(matches!(bad.kind(), ProtectErrorKind::Glob(_)), "{bad}");
        for empty in ["", "/", "//"] {
            let err = Protection::new(true, &[empty]).unwrap_err();
            assert_eq!(err.kind(), &ProtectErrorKind::Empty, "{empty:?}");
        }
    }

    #[test]
    fn spellings_a_file_system_takes_for_git_are_git() {
        let p = Protection::default();
        for alias in [
            ".git.",
            ".git ",
            ".git. . ",
            ".git::$INDEX_ALLOCATION",
            ".git:stream",
            "GIT~1",
            "git~12",
            ".GIT",
        ] {
            assert!(
                p.is_protected(&names(&format!("{alias}/config")), false),
                "{alias:?}"
            );
        }
        for fine in [".github", "git~", "git~x", ".gitignore", "a.git"] {
            assert!(!p.is_protected(&names(fine), false), "{fine:?}");
        }
    }

    #[test]
    fn host_patterns_follow_the_file_systems_case_and_normalization() {
        let p = Protection::new(false, &["Secrets", "config/prod/**", "caf\u{e9}.txt"]).unwrap();
        // A file system that keeps case: only the spelling given.
        assert!(p.is_protected(&names("Secrets/k"), false));
        assert!(!p.is_protected(&names("secrets/k"), false));
        assert!(!p.is_protected(&names("CONFIG/PROD/db.yml"), false));
        // One that folds it (Windows, macOS by default): every case.
        assert!(p.is_protected(&names("secrets/k"), true));
        assert!(p.is_protected(&names("CONFIG/PROD/db.yml"), true));
        // Composed or decomposed, the same name.
        assert!(p.is_protected(&names("cafe\u{301}.txt"), false));
        // And as Windows reads names, always.
        assert!(p.is_protected(&names("Secrets./k"), false));
        assert!(p.is_protected(&names("Secrets::$DATA"), false));
    }

    /// A pattern is read as the names it is matched against are: one with
    /// a trailing dot or space, or a stream, still protects what it names
    /// in every spelling.
    #[test]
    fn patterns_are_read_as_windows_reads_names() {
        let p = Protection::new(false, &["secret.", "state. /j ", "x:s/**", "e\\."]).unwrap();
        for protected in [
            "secret.",
            "secret",
            "secret::$DATA",
            "state./j/log",
            "state/j/log",
            "x/y",
            "e.",
        ] {
            assert!(p.is_protected(&names(protected), false), "{protected:?}");
        }
        for fine in ["secrets", "state/k", "y/x"] {
            assert!(!p.is_protected(&names(fine), false), "{fine:?}");
        }
        // Folding case, the same reading.
        assert!(p.is_protected(&names("SECRET::$DATA"), true));
        assert!(p.is_protected(&names("State/J/log"), true));
        // Wildcards stay as written, and match names as written too.
        let p = Protection::new(false, &[".env.*", "[:]", "a?"]).unwrap();
        for protected in [".env.", ".env. ", ".env.local", ":", "a.", "ab"] {
            assert!(p.is_protected(&names(protected), false), "{protected:?}");
        }
        for fine in [".env", "x", "a"] {
            assert!(!p.is_protected(&names(fine), false), "{fine:?}");
        }
    }
}
