//! Seed-004 mode (SPEC §9): several allowed roots, and absolute paths.
//!
//! A `Write` call names a file relative to the project root and nothing
//! else. A `write_file` call may also name it by an absolute path inside
//! any allowed root: the project root (under one of its absolute
//! spellings) or another root the host opened. The host says which
//! spellings address which root; the guest matches the path against them
//! lexically, longest root first, and never learns more about the host's
//! file system than those names.

use std::path::{Path, PathBuf};

use write_tool_wire::roots::{self, absolute_names};

use crate::error::ToolError;
use crate::path::{self, RelPath};

/// Another directory `write_file` calls may write under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedRoot {
    /// Where the I/O goes. Inside the component this is the name of the
    /// root's own preopen, which starts with `../` (see [`AllowedRoots`]).
    pub dir: PathBuf,
    /// Absolute spellings that address this root (`/srv/data`). The first
    /// one prefixes this root's files in `path_resolved`.
    pub names: Vec<String>,
}

/// The roots a call may reach besides the project root itself.
///
/// Inside the component every root is its own preopen. wasi-libc maps a
/// path to the preopen whose name is its longest prefix, after stripping a
/// leading `/` or `./`; the project root is the preopen `.`. A preopen named
/// `/srv/data` would therefore also catch the project-relative path
/// `srv/data/x`. Names beginning with `../` cannot be caught that way: the
/// guest never builds a project path whose first name is `..`. That is why
/// [`AllowedRoots::check`] insists on them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedRoots {
    /// Absolute spellings of the project root. Empty (the default): no
    /// absolute path is accepted.
    pub project: Vec<String>,
    /// The other roots, in the order the host gave them.
    pub others: Vec<AllowedRoot>,
}

/// Where a path lands.
#[derive(Debug)]
pub struct Located<'a> {
    /// The directory the I/O is relative to.
    pub dir: &'a Path,
    /// `None` for the project root; the root's first absolute name for
    /// another root (it prefixes `path_resolved`).
    pub prefix: Option<&'a str>,
    /// The path below that directory.
    pub rel: RelPath,
}

impl AllowedRoots {
    /// Refuse a configuration the guest could not route safely: a name that
    /// is not an absolute POSIX path, a root without names, or a preopen
    /// whose name does not start with `../`.
    pub fn check(&self) -> Result<(), String> {
        for root in &self.others {
            let dir = root.dir.to_str().unwrap_or_default();
            let ok = dir.starts_with("../")
                && dir[3..].split('/').all(|n| !matches!(n, "" | "." | ".."));
            if !ok {
                return Err(format!(
                    "root preopen '{dir}' must be named '../<name>' with plain names after it"
                ));
            }
            if root.names.is_empty() {
                return Err(format!("root preopen '{dir}' has no absolute name"));
            }
        }
        let names = self
            .project
            .iter()
            .chain(self.others.iter().flat_map(|r| &r.names));
        for name in names {
            if absolute_names(name).is_none() {
                return Err(format!("root name '{name}' is not an absolute POSIX path"));
            }
        }
        Ok(())
    }

    /// Place a `write_file` path: relative paths resolve against the project
    /// root, absolute ones against the allowed root that holds them.
    pub fn locate_write_file<'a>(
        &'a self,
        project: &'a Path,
        path: &str,
    ) -> Result<Located<'a>, ToolError> {
        if !path::is_absolute(path) {
            return Ok(Located {
                dir: project,
                prefix: None,
                rel: RelPath::parse(path)?,
            });
        }
        path::check_characters(path)?;
        let project_names = self.project.iter().map(|n| (None, n.as_str()));
        let other_names = self
            .others
            .iter()
            .flat_map(|root| root.names.iter().map(move |n| (Some(root), n.as_str())));
        let (root, rest) = roots::locate(path, project_names.chain(other_names))
            .ok_or_else(|| ToolError::not_allowed(path))?;
        if rest.is_empty() || path.ends_with('/') {
            return Err(ToolError::is_directory());
        }
        let rel = RelPath::from_names(rest);
        Ok(match root {
            None => Located {
                dir: project,
                prefix: None,
                rel,
            },
            Some(root) => Located {
                dir: &root.dir,
                prefix: root.names.first().map(|n| n.trim_end_matches('/')),
                rel,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn roots() -> AllowedRoots {
        AllowedRoots {
            project: vec!["/home/u/proj".into()],
            others: vec![
                AllowedRoot {
                    dir: "../roots/1".into(),
                    names: vec!["/srv/data/".into(), "/data".into()],
                },
                AllowedRoot {
                    dir: "../roots/2".into(),
                    names: vec!["/home/u/proj/vendor".into()],
                },
            ],
        }
    }

    /// Where a path lands: the I/O directory, the display prefix, the names.
    type Placed = (String, Option<String>, Vec<String>);

    fn place(path: &str) -> Result<Placed, (ErrorCode, String)> {
        let roots = roots();
        roots
            .locate_write_file(Path::new("."), path)
            .map(|l| {
                (
                    l.dir.display().to_string(),
                    l.prefix.map(str::to_owned),
                    l.rel.into_names(),
                )
            })
            .map_err(|e| (e.code, e.message))
    }

    #[test]
    fn relative_paths_stay_in_the_project() {
        assert_eq!(
            place("a/b").unwrap(),
            (".".into(), None, vec!["a".into(), "b".into()])
        );
        assert_eq!(place("../x").unwrap_err().0, ErrorCode::AccessDenied);
    }

    #[test]
    fn absolute_paths_find_the_longest_root() {
        assert_eq!(
            place("/home/u/proj/src/x").unwrap(),
            (".".into(), None, vec!["src".into(), "x".into()])
        );
        assert_eq!(
            place("/home/u/proj/vendor/x").unwrap(),
            (
                "../roots/2".into(),
                Some("/home/u/proj/vendor".into()),
                vec!["x".into()]
            )
        );
        assert_eq!(
            place("/data/./a/../b").unwrap(),
            (
                "../roots/1".into(),
                Some("/srv/data".into()),
                vec!["b".into()]
            )
        );
        assert_eq!(
            place("//srv/data/x").unwrap(),
            (
                "../roots/1".into(),
                Some("/srv/data".into()),
                vec!["x".into()]
            )
        );
    }

    #[test]
    fn absolute_paths_outside_every_root_use_seed_004_wording() {
        for path in [
            "/etc/passwd",
            "/home/u/projx/a",
            "/home/u/proj/../other/x",
            "C:\\x",
            "C:/x",
        ] {
            let (code, message) = place(path).unwrap_err();
            assert_eq!(code, ErrorCode::AccessDenied, "{path}");
            assert_eq!(
                message,
                format!("path '{path}' is not in allowed directories")
            );
        }
    }

    #[test]
    fn a_root_itself_is_a_directory() {
        for path in ["/home/u/proj", "/srv/data/", "/data/x/"] {
            assert_eq!(place(path).unwrap_err().0, ErrorCode::IsDirectory, "{path}");
        }
    }

    #[test]
    fn characters_are_checked_before_roots() {
        assert_eq!(
            place("/data/a\u{202e}b").unwrap_err().0,
            ErrorCode::InvalidParam
        );
        assert_eq!(place("/data/a\nb").unwrap_err().0, ErrorCode::InvalidParam);
    }

    #[test]
    fn configurations_that_could_misroute_are_refused() {
        assert!(roots().check().is_ok());
        let mut bad = roots();
        bad.others[0].dir = "/srv/data".into();
        assert!(bad.check().is_err());
        let mut bad = roots();
        bad.others[0].dir = "../../x".into();
        assert!(bad.check().is_err());
        let mut bad = roots();
        bad.project = vec!["relative".into()];
        assert!(bad.check().is_err());
        let mut bad = roots();
        bad.others[1].names.clear();
        assert!(bad.check().is_err());
    }
}
