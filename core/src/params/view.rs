//! `view` (and Claude Code's `Read`): its arguments (`docs/contract.md#view`).

use serde_json::{Map, Value};

use crate::error::ToolError;

use super::fields::{either_path, encoding, flag, wrong_type};

/// A look at one file or directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewRequest {
    /// The path as given; absolute paths under a root are taken, as
    /// Anthropic's text editor sends them.
    pub path: String,
    /// The first line to show, from 1.
    pub first: u64,
    /// The last line to show; `None`: to the end.
    pub last: Option<u64>,
    /// The encoding the caller says the file is in: replaces detection.
    pub encoding: Option<&'static encoding_rs::Encoding>,
    /// Report the file's SHA-256 in its lock values too.
    pub report_sha256: bool,
}

impl ViewRequest {
    /// A view of `path` from line `first` (0 is 1) to `last`, as the
    /// typed interface takes it.
    pub fn new(path: String, first: u64, last: Option<u64>) -> Self {
        ViewRequest {
            path,
            first: first.max(1),
            last,
            encoding: None,
            report_sha256: false,
        }
    }
}

/// `view`'s arguments: `path` (or `file_path`), and the lines as
/// Anthropic's `view_range` (`[first, last]`, `last` -1 for the end) or
/// as Claude Code's `offset` (the first line) and `limit` (how many).
pub(super) fn view(args: &Map<String, Value>) -> Result<ViewRequest, ToolError> {
    let path = either_path(args, "path")?;
    let (first, last) = match (
        args.get("view_range"),
        args.get("offset"),
        args.get("limit"),
    ) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            return Err(ToolError::invalid_param(
                "Give 'view_range', or 'offset' and 'limit', not both.",
            ));
        }
        (Some(range), None, None) => range_of(range)?,
        (None, offset, limit) => {
            let first = match offset {
                None | Some(Value::Null) => 1,
                Some(v) => v
                    .as_u64()
                    .ok_or_else(|| wrong_type("offset", "a line number (from 1)"))?
                    .max(1),
            };
            let last = match limit {
                None | Some(Value::Null) => None,
                Some(v) => match v.as_u64() {
                    Some(n) if n > 0 => Some(first.saturating_add(n - 1)),
                    _ => return Err(wrong_type("limit", "a positive number of lines")),
                },
            };
            (first, last)
        }
    };
    Ok(ViewRequest {
        path,
        first,
        last,
        encoding: encoding(args)?,
        report_sha256: flag(args, "report_sha256", false)?,
    })
}

/// `view_range`: `[first, last]`, lines from 1, `last` -1 for the end.
fn range_of(range: &Value) -> Result<(u64, Option<u64>), ToolError> {
    let bad = || {
        ToolError::invalid_param(
            "Parameter 'view_range' must be two line numbers [first, last], from 1, with \
             last -1 for the end of the file (as [11, 12] or [100, -1]).",
        )
    };
    let Some([first, last]) = range.as_array().map(Vec::as_slice) else {
        return Err(bad());
    };
    let first = first.as_u64().filter(|&n| n >= 1).ok_or_else(bad)?;
    let last = match last.as_i64() {
        Some(-1) => None,
        Some(n) if n >= 1 => Some(n.unsigned_abs()),
        _ => match last.as_u64() {
            Some(n) if n >= 1 => Some(n),
            _ => return Err(bad()),
        },
    };
    if last.is_some_and(|last| last < first) {
        return Err(ToolError::invalid_param(format!(
            "Parameter 'view_range' ends before it starts ([{first}, {}]): give [first, last] \
             with last at least first, or -1 for the end.",
            last.unwrap_or_default()
        )));
    }
    Ok((first, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: Value) -> Result<ViewRequest, String> {
        match args {
            Value::Object(map) => view(&map).map_err(|e| e.message().to_owned()),
            _ => unreachable!("an object"),
        }
    }

    #[test]
    fn ranges_in_every_shape() {
        let r = parse(serde_json::json!({"path": "a", "view_range": [11, 12]})).unwrap();
        assert_eq!((r.first, r.last), (11, Some(12)));
        let r = parse(serde_json::json!({"path": "a", "view_range": [100, -1]})).unwrap();
        assert_eq!((r.first, r.last), (100, None));
        let r = parse(serde_json::json!({"file_path": "a", "offset": 5, "limit": 3})).unwrap();
        assert_eq!((r.path.as_str(), r.first, r.last), ("a", 5, Some(7)));
        let r = parse(serde_json::json!({"file_path": "a", "limit": 3})).unwrap();
        assert_eq!((r.first, r.last), (1, Some(3)));
        let r = parse(serde_json::json!({"path": "a"})).unwrap();
        assert_eq!((r.first, r.last), (1, None));
    }

    #[test]
    fn bad_ranges_are_named() {
        for bad in [
            serde_json::json!({"path": "a", "view_range": [0, 3]}),
            serde_json::json!({"path": "a", "view_range": [3]}),
            serde_json::json!({"path": "a", "view_range": [1, -2]}),
            serde_json::json!({"path": "a", "view_range": "1-3"}),
        ] {
            let e = parse(bad.clone()).expect_err(&bad.to_string());
            assert!(e.contains("view_range"), "{e}");
        }
        let e = parse(serde_json::json!({"path": "a", "view_range": [5, 2]})).unwrap_err();
        assert!(e.contains("ends before it starts"), "{e}");
        let e = parse(serde_json::json!({"path": "a", "limit": 0})).unwrap_err();
        assert!(e.contains("'limit'"), "{e}");
        let e = parse(serde_json::json!({"path": "a", "view_range": [1, 2], "offset": 1}));
        assert!(e.unwrap_err().contains("not both"));
        let e = parse(serde_json::json!({"path": "a", "file_path": "b"})).unwrap_err();
        assert!(e.contains("not two different paths"), "{e}");
        assert_eq!(
            parse(serde_json::json!({"view_range": [1, 2]})).unwrap_err(),
            "Missing required parameter 'path'."
        );
    }
}
