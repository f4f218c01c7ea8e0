//! Several roots (`docs/contract.md#several-roots`), and absolute paths.
//!
//! A `Write` call names a file relative to the project root and nothing
//! else. A `write_file` call may also name it by an absolute path inside
//! any allowed root: the project root (under one of its absolute
//! spellings) or another root the host opened. The host says which
//! spellings address which root; the guest matches the path against them
//! lexically, longest root first, and never learns more about the host's
//! file system than those names.

use write_tool_wire::request::ToolName;
use write_tool_wire::roots::{self, absolute_names};

use crate::error::ToolError;
use crate::fs::Dir;
use crate::path::{self, RelPath};

/// A directory calls may write under, and the absolute spellings that
/// address it (`/srv/data`). The first spelling prefixes the root's files
/// in `path_resolved` when it is not the project root.
#[derive(Debug)]
pub struct AllowedRoot {
    /// The handle every access goes through.
    pub dir: Dir,
    /// Absolute spellings of the root; empty when it has none (then no
    /// absolute path reaches it).
    pub names: Vec<String>,
}

/// The roots one call may reach.
#[derive(Debug)]
pub struct Roots {
    /// The project root: relative paths resolve against it.
    pub project: AllowedRoot,
    /// The other roots, reachable by `write_file` calls that name an
    /// absolute path inside them.
    pub others: Vec<AllowedRoot>,
}

/// Where a path lands.
#[derive(Debug)]
pub struct Located<'a> {
    /// The directory the I/O is relative to.
    pub dir: &'a Dir,
    /// `None` for the project root; the root's first absolute name for
    /// another root (it prefixes `path_resolved`).
    pub prefix: Option<&'a str>,
    /// The path below that directory.
    pub rel: RelPath,
}

impl Roots {
    /// The project root alone, with no absolute names.
    pub fn single(dir: Dir) -> Roots {
        Roots {
            project: AllowedRoot {
                dir,
                names: Vec::new(),
            },
            others: Vec::new(),
        }
    }

    /// Place the path of a call to `tool`: relative paths resolve against
    /// the project root; absolute ones are refused for `Write`, and for
    /// `write_file` resolve against the allowed root that holds them.
    pub fn locate(&self, tool: ToolName, path: &str) -> Result<Located<'_>, ToolError> {
        if tool == ToolName::Write || !path::is_absolute(path) {
            return Ok(Located {
                dir: &self.project.dir,
                prefix: None,
                rel: RelPath::parse(path)?,
            });
        }
        path::check_characters(path)?;
        let names = std::iter::once(&self.project)
            .chain(&self.others)
            .enumerate()
            .flat_map(|(i, root)| root.names.iter().map(move |n| (i, n.as_str())));
        let (index, rest) =
            roots::locate(path, names).ok_or_else(|| ToolError::not_allowed(path))?;
        if rest.is_empty() {
            return Err(ToolError::is_directory());
        }
        let rel = RelPath::from_names(rest, path.ends_with('/'));
        Ok(
            match index.checked_sub(1).and_then(|i| self.others.get(i)) {
                None => Located {
                    dir: &self.project.dir,
                    prefix: None,
                    rel,
                },
                Some(root) => Located {
                    dir: &root.dir,
                    prefix: root.names.first().map(|n| n.trim_end_matches('/')),
                    rel,
                },
            },
        )
    }
}

/// Refuse root names the component could not route safely: a name that is
/// not an absolute POSIX path, another root without names, or a preopen
/// name for another root that does not start with `../`.
///
/// wasi-libc routes a path to the preopen whose name is its longest prefix,
/// after stripping a leading `/` or `./`, and the project root is the
/// preopen `.`: a preopen named `/srv/data` would also catch the
/// project-relative path `srv/data/x` in a program that opens files by
/// path. Names beginning with `../` cannot be caught that way, since no
/// project path starts with `..`.
pub fn check_names<'a>(
    project: &[String],
    others: impl IntoIterator<Item = (&'a str, &'a [String])>,
) -> Result<(), String> {
    let mut names: Vec<&String> = project.iter().collect();
    for (preopen, root_names) in others {
        let ok = preopen.starts_with("../")
            && preopen[3..]
                .split('/')
                .all(|n| !matches!(n, "" | "." | ".."));
        if !ok {
            return Err(format!(
                "root preopen '{preopen}' must be named '../<name>' with plain names after it"
            ));
        }
        if root_names.is_empty() {
            return Err(format!("root preopen '{preopen}' has no absolute name"));
        }
        names.extend(root_names);
    }
    for name in names {
        if absolute_names(name).is_none() {
            return Err(format!("root name '{name}' is not an absolute POSIX path"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn roots() -> Roots {
        Roots {
            project: AllowedRoot {
                dir: Dir::from_path("."),
                names: vec!["/home/u/proj".into()],
            },
            others: vec![
                AllowedRoot {
                    dir: Dir::from_path("../roots/1"),
                    names: vec!["/srv/data/".into(), "/data".into()],
                },
                AllowedRoot {
                    dir: Dir::from_path("../roots/2"),
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
            .locate(ToolName::WriteFile, path)
            .map(|l| {
                (
                    l.dir.path().display().to_string(),
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
    fn absolute_paths_outside_every_root_use_write_files_wording() {
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
        for path in ["/home/u/proj", "/srv/data/"] {
            assert_eq!(place(path).unwrap_err().0, ErrorCode::IsDirectory, "{path}");
        }
        let roots = roots();
        let below = roots.locate(ToolName::WriteFile, "/data/x/").unwrap();
        assert!(below.rel.dir_only(), "decided once the path is resolved");
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
        let project = vec!["/home/u/proj".to_owned()];
        let data = ["/srv/data/".to_owned(), "/data".to_owned()];
        let none: Vec<String> = Vec::new();
        assert!(check_names(&project, [("../roots/1", &data[..])]).is_ok());
        assert!(check_names(&project, [("/srv/data", &data[..])]).is_err());
        assert!(check_names(&project, [("../../x", &data[..])]).is_err());
        assert!(check_names(&["relative".to_owned()], []).is_err());
        assert!(check_names(&project, [("../roots/1", &none[..])]).is_err());
    }
}
