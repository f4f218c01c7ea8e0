//! Which root an absolute path lies in (`docs/contract.md#several-roots`).
//!
//! A `write_file` call may name a file by an absolute path inside any
//! allowed root. The component matches the path against each root's
//! absolute names, lexically; the host must place the path in the same root
//! when it looks at the file around the call (permission bits). Both use
//! [`locate`].

/// The names of a POSIX absolute path after lexical normalisation: `.` and
/// empty names dropped, `..` applied, `..` at `/` staying at `/` (as Go's
/// `filepath.Clean` does). `None` for anything that is not a POSIX absolute
/// path, Windows forms included.
pub fn absolute_names(path: &str) -> Option<Vec<&str>> {
    let rest = path.strip_prefix('/')?;
    let mut names = Vec::new();
    for name in rest.split('/') {
        match name {
            "" | "." => {}
            ".." => {
                names.pop();
            }
            name => names.push(name),
        }
    }
    Some(names)
}

/// The root holding the absolute `path`, and the names of `path` below it.
///
/// `names` gives each root's absolute names as `(root, name)` pairs; the
/// root whose name is the longest prefix of `path` (name by name, not byte
/// by byte: `/srv/data` does not hold `/srv/database`) wins, so that nested
/// roots work. `None` when no name is a prefix of `path`, or `path` is not
/// a POSIX absolute path.
pub fn locate<'p, 'n, R>(
    path: &'p str,
    names: impl IntoIterator<Item = (R, &'n str)>,
) -> Option<(R, Vec<&'p str>)> {
    let wanted = absolute_names(path)?;
    let mut best: Option<(usize, R)> = None;
    for (root, name) in names {
        let Some(prefix) = absolute_names(name) else {
            continue;
        };
        if wanted.starts_with(&prefix) && best.as_ref().is_none_or(|(len, _)| prefix.len() > *len) {
            best = Some((prefix.len(), root));
        }
    }
    let (len, root) = best?;
    Some((root, wanted[len..].to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation() {
        assert_eq!(absolute_names("/a//b/./c/"), Some(vec!["a", "b", "c"]));
        assert_eq!(absolute_names("/../a/../../b"), Some(vec!["b"]));
        assert_eq!(absolute_names("/"), Some(vec![]));
        assert_eq!(absolute_names("a/b"), None);
        assert_eq!(absolute_names("C:/x"), None);
    }

    #[test]
    fn the_longest_name_wins() {
        let names = [
            (0, "/home/u/proj"),
            (1, "/srv/data/"),
            (1, "/data"),
            (2, "/home/u/proj/vendor"),
        ];
        assert_eq!(
            locate("/home/u/proj/src/x", names),
            Some((0, vec!["src", "x"]))
        );
        assert_eq!(locate("/home/u/proj/vendor/x", names), Some((2, vec!["x"])));
        assert_eq!(locate("/data/./a/../b", names), Some((1, vec!["b"])));
        assert_eq!(locate("/srv/data", names), Some((1, vec![])));
        assert_eq!(locate("/srv/database/x", names), None);
        assert_eq!(locate("/home/u/projx/a", names), None);
        assert_eq!(locate("relative/x", names), None);
    }
}
