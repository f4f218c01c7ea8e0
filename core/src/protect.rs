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
//!   globset. Matching is case-sensitive.

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
    empty: bool,
}

impl Default for Protection {
    /// `.git` protected, no other pattern.
    fn default() -> Self {
        Protection {
            default_git: true,
            names: GlobSet::empty(),
            paths: GlobSet::empty(),
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
            let glob = compile(trimmed).map_err(|e| error(ProtectErrorKind::Glob(e)))?;
            if trimmed.contains('/') {
                paths.add(glob);
            } else {
                names.add(glob);
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
            empty: patterns.is_empty(),
        })
    }

    /// Whether `.git`, and the other places git runs code from, are
    /// protected (the default).
    pub fn protects_git(&self) -> bool {
        self.default_git
    }

    /// Refuse `names` (a resolved root-relative path) if it is protected.
    pub fn check(&self, names: &[String]) -> Result<(), ToolError> {
        if self.is_protected(names) {
            return Err(ToolError::protected());
        }
        Ok(())
    }

    /// Whether `names` is protected.
    pub fn is_protected(&self, names: &[String]) -> bool {
        if self.default_git && names.iter().any(|n| n.eq_ignore_ascii_case(".git")) {
            return true;
        }
        if self.empty {
            return false;
        }
        if names.iter().any(|n| self.names.is_match(n)) {
            return true;
        }
        (1..=names.len()).any(|depth| self.paths.is_match(names[..depth].join("/")))
    }
}

fn compile(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern).literal_separator(true).build()
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
            assert!(p.is_protected(&names(path)), "{path}");
        }
        for path in [
            "git/config",
            ".github/workflows/ci.yml",
            ".gitignore",
            "a.git",
        ] {
            assert!(!p.is_protected(&names(path)), "{path}");
        }
        let off = Protection::new::<&str>(false, &[]).unwrap();
        assert!(!off.is_protected(&names(".git/config")));
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
            assert!(p.is_protected(&names(path)), "{path}");
        }
        for path in [
            "key.pem.txt",
            "config/dev/db.yml",
            "secretsx",
            "deploy/other",
            "x/deploy/keys",
        ] {
            assert!(!p.is_protected(&names(path)), "{path}");
        }
        let bad = Protection::new(true, &["ok", "a["]).unwrap_err();
        assert_eq!(bad.pattern(), "a[");
        assert!(matches!(bad.kind(), ProtectErrorKind::Glob(_)), "{bad}");
        for empty in ["", "/", "//"] {
            let err = Protection::new(true, &[empty]).unwrap_err();
            assert_eq!(err.kind(), &ProtectErrorKind::Empty, "{empty:?}");
        }
    }
}
