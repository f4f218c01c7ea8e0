//! The roots a call may reach (`docs/contract.md#several-roots`), found
//! among the directories the host preopened.
//!
//! The project root is the preopen named `.` if there is one, else the
//! first: relative paths resolve against it. Every preopen a host grants is
//! a directory the tool may write under; preopens of the same directory are
//! one root under several names. A preopen's absolute name (`/srv/data`) is
//! what a `write_file` call may name a file in that root by. Names are
//! matched lexically, longest first; they never route a path by themselves:
//! every access goes through the matched preopen's handle.

use std::cell::OnceCell;

use write_tool_wire::request::ToolName;
use write_tool_wire::roots;

use crate::error::ToolError;
use crate::fs::Dir;
use crate::path::{self, RelPath};

/// The name of the preopen that is the project root when there is one.
pub const PROJECT_PREOPEN: &str = ".";

/// The roots of one call: the host's preopens.
#[derive(Debug)]
pub struct Roots {
    preopens: Vec<(Dir, String)>,
    /// Which preopen is the project root.
    project: usize,
    /// For each preopen, the first preopen of the same directory: worked
    /// out only when a call needs it (it asks the host about each pair).
    same_as: OnceCell<Vec<usize>>,
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
    /// The roots the host preopened, in its order; `None` when it preopened
    /// nothing.
    pub fn from_preopens(preopens: Vec<(Dir, String)>) -> Option<Roots> {
        let project = preopens
            .iter()
            .position(|(_, name)| name == PROJECT_PREOPEN)
            .or_else(|| (!preopens.is_empty()).then_some(0))?;
        Some(Roots {
            preopens,
            project,
            same_as: OnceCell::new(),
        })
    }

    /// The project root alone, preopened as `.`.
    pub fn single(dir: Dir) -> Roots {
        Roots {
            preopens: vec![(dir, PROJECT_PREOPEN.to_owned())],
            project: 0,
            same_as: OnceCell::new(),
        }
    }

    /// The project root.
    pub fn project(&self) -> &Dir {
        &self.preopens[self.project].0
    }

    fn same_as(&self) -> &[usize] {
        self.same_as.get_or_init(|| {
            let mut same_as: Vec<usize> = Vec::with_capacity(self.preopens.len());
            for (i, (dir, _)) in self.preopens.iter().enumerate() {
                let first = (0..i)
                    .find(|&j| same_as[j] == j && self.preopens[j].0.is_same(dir))
                    .unwrap_or(i);
                same_as.push(first);
            }
            same_as
        })
    }

    /// Whether preopen `i` is (a name of) the project root.
    fn is_project(&self, i: usize) -> bool {
        let same_as = self.same_as();
        same_as[i] == same_as[self.project]
    }

    /// Every preopen's absolute name, with the preopen's index.
    fn absolute_names(&self) -> impl Iterator<Item = (usize, &str)> {
        self.preopens
            .iter()
            .enumerate()
            .filter(|(_, (_, name))| name.starts_with('/'))
            .map(|(i, (_, name))| (i, name.as_str()))
    }

    /// The first absolute name of the root preopen `i` belongs to.
    fn display_name(&self, i: usize) -> Option<&str> {
        let same_as = self.same_as();
        self.absolute_names()
            .find(|&(j, _)| same_as[j] == same_as[i])
            .map(|(_, name)| name.trim_end_matches('/'))
    }

    /// The root `path` names itself (`.`, or a root's absolute name), and
    /// the name its entries are shown under (`None` for the project root);
    /// `None` when `path` names no root.
    pub fn root_named(&self, path: &str) -> Option<(&Dir, Option<&str>)> {
        if !path::is_absolute(path) {
            let names_nothing = matches!(
                RelPath::parse(path),
                Err(e) if e.kind() == crate::error::ErrorKind::IsDirectory
            );
            return names_nothing.then(|| (self.project(), None));
        }
        let (i, rest) = roots::locate(path, self.absolute_names())?;
        if !rest.is_empty() {
            return None;
        }
        let prefix = if self.is_project(i) {
            None
        } else {
            self.display_name(i)
        };
        Some((&self.preopens[i].0, prefix))
    }

    /// Place the path of a call to `tool`: relative paths resolve against
    /// the project root; absolute ones are refused for `Write` (with the
    /// relative form, when they lie in the project root), and for
    /// `write_file` resolve against the preopen whose name holds them.
    pub fn locate(&self, tool: ToolName, path: &str) -> Result<Located<'_>, ToolError> {
        if !path::is_absolute(path) {
            return Ok(Located {
                dir: self.project(),
                prefix: None,
                rel: RelPath::parse(path)?,
            });
        }
        path::check_characters(path)?;
        let found = roots::locate(path, self.absolute_names());
        if tool == ToolName::Write {
            let relative = found
                .as_ref()
                .filter(|(i, rest)| !rest.is_empty() && self.is_project(*i))
                .map(|(_, rest)| rest.join("/"));
            let elsewhere = found.as_ref().is_some_and(|(i, _)| !self.is_project(*i));
            return Err(ToolError::absolute_path(relative.as_deref(), elsewhere));
        }
        let (i, rest) = found.ok_or_else(|| ToolError::not_allowed(path))?;
        if rest.is_empty() {
            return Err(ToolError::is_directory());
        }
        let rel = RelPath::from_names(rest, path.ends_with('/'));
        let prefix = if self.is_project(i) {
            None
        } else {
            self.display_name(i)
        };
        Ok(Located {
            dir: &self.preopens[i].0,
            prefix,
            rel,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::error::ErrorCode;

    /// `base/proj` (also named `/home/u/proj`), `base/data` (named
    /// `/srv/data/` and `/data`), `base/proj/vendor` (named
    /// `/home/u/proj/vendor`).
    fn roots(base: &Path) -> Roots {
        for dir in ["proj/vendor", "data"] {
            std::fs::create_dir_all(base.join(dir)).unwrap();
        }
        let dir = |rel: &str| Dir::from_path(base.join(rel));
        Roots::from_preopens(vec![
            (dir("proj"), ".".into()),
            (dir("proj"), "/home/u/proj".into()),
            (dir("data"), "/srv/data/".into()),
            (dir("data"), "/data".into()),
            (dir("proj/vendor"), "/home/u/proj/vendor".into()),
        ])
        .unwrap()
    }

    /// Where a path lands: the I/O directory below `base`, the display
    /// prefix, the names.
    type Placed = (String, Option<String>, Vec<String>);

    fn place(tool: ToolName, path: &str) -> Result<Placed, (ErrorCode, String)> {
        let base = tempfile::tempdir().unwrap();
        let roots = roots(base.path());
        roots
            .locate(tool, path)
            .map(|l| {
                let dir = l.dir.path().strip_prefix(base.path()).unwrap();
                (
                    dir.display().to_string(),
                    l.prefix.map(str::to_owned),
                    l.rel.into_names(),
                )
            })
            .map_err(|e| (e.code(), e.message().to_owned()))
    }

    fn write_file(path: &str) -> Result<Placed, (ErrorCode, String)> {
        place(ToolName::WriteFile, path)
    }

    #[test]
    fn the_project_root_is_dot_or_else_the_first() {
        let base = tempfile::tempdir().unwrap();
        let dir = |name: &str| Dir::from_path(base.path().join(name));
        let roots =
            Roots::from_preopens(vec![(dir("a"), "/a".into()), (dir("b"), ".".into())]).unwrap();
        assert_eq!(roots.project().path(), base.path().join("b"));
        let roots =
            Roots::from_preopens(vec![(dir("a"), "/a".into()), (dir("b"), "b".into())]).unwrap();
        assert_eq!(roots.project().path(), base.path().join("a"));
        assert!(Roots::from_preopens(Vec::new()).is_none());
    }

    #[test]
    fn relative_paths_stay_in_the_project() {
        assert_eq!(
            write_file("a/b").unwrap(),
            ("proj".into(), None, vec!["a".into(), "b".into()])
        );
        // A relative path that spells another root's name is a project path.
        assert_eq!(
            write_file("srv/data/x").unwrap(),
            (
                "proj".into(),
                None,
                vec!["srv".into(), "data".into(), "x".into()]
            )
        );
        assert_eq!(write_file("../x").unwrap_err().0, ErrorCode::AccessDenied);
    }

    #[test]
    fn absolute_paths_find_the_longest_root() {
        assert_eq!(
            write_file("/home/u/proj/src/x").unwrap(),
            ("proj".into(), None, vec!["src".into(), "x".into()])
        );
        assert_eq!(
            write_file("/home/u/proj/vendor/x").unwrap(),
            (
                "proj/vendor".into(),
                Some("/home/u/proj/vendor".into()),
                vec!["x".into()]
            )
        );
        for (path, name) in [("/data/./a/../b", "b"), ("//srv/data/x", "x")] {
            assert_eq!(
                write_file(path).unwrap(),
                ("data".into(), Some("/srv/data".into()), vec![name.into()]),
                "{path}"
            );
        }
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
            let (code, message) = write_file(path).unwrap_err();
            assert_eq!(code, ErrorCode::AccessDenied, "{path}");
            assert_eq!(
                message,
                format!("path '{path}' is not in allowed directories")
            );
        }
    }

    #[test]
    fn write_names_the_relative_form_of_an_absolute_path_in_the_project() {
        let write = |path: &str| place(ToolName::Write, path).unwrap_err();
        assert_eq!(
            write("/home/u/proj/src/a.py"),
            (
                ErrorCode::InvalidParam,
                "Absolute path not allowed. Use relative path: 'src/a.py'.".into()
            )
        );
        for path in ["/etc/passwd", "/home/u/proj", "C:\\x"] {
            assert_eq!(
                write(path),
                (
                    ErrorCode::InvalidParam,
                    "Absolute path not allowed. Use relative path.".into()
                ),
                "{path}"
            );
        }
        // In another root, which only `write_file` reaches.
        assert_eq!(
            write("/data/x"),
            (
                ErrorCode::InvalidParam,
                "Absolute path not allowed. Use relative path. The path is in another allowed \
                 directory: write_file takes it by its absolute path."
                    .into()
            ),
        );
    }

    #[test]
    fn a_root_itself_is_a_directory() {
        for path in ["/home/u/proj", "/srv/data/"] {
            assert_eq!(
                write_file(path).unwrap_err().0,
                ErrorCode::IsDirectory,
                "{path}"
            );
        }
        let base = tempfile::tempdir().unwrap();
        let roots = roots(base.path());
        let below = roots.locate(ToolName::WriteFile, "/data/x/").unwrap();
        assert!(below.rel.dir_only(), "decided once the path is resolved");
    }

    #[test]
    fn characters_are_checked_before_roots() {
        for path in ["/data/a\u{202e}b", "/data/a\nb"] {
            assert_eq!(write_file(path).unwrap_err().0, ErrorCode::InvalidParam);
        }
    }
}
