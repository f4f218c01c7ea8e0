//! Multi-file patches in the format OpenAI's models emit for
//! `apply_patch` (`docs/contract.md#patch`):
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path          then every line `+text`
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path       (optional, right after Update)
//! @@ optional context line    then lines ` context`, `-old`, `+new`
//! *** End of File             (optional: the hunk ends the file)
//! *** End Patch
//! ```
//!
//! Parsing is as lenient as the models' own tooling: markers may carry
//! surrounding whitespace, the whole may sit in a `<<'EOF'` heredoc, and
//! the first hunk of an update may leave out its `@@`. Hunks of a file
//! apply in order, each after the one before; a hunk's old lines are
//! taken at their first place, byte for byte, after that point (the
//! format's own rule), else on a tolerant rung of the ladder only where
//! that rung finds exactly one place.

use std::time::Instant;

use super::{Edit, EditError, Edited, Matched, Tolerance, line_numbers, locate};

/// A parsed patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The file operations, in order.
    pub ops: Vec<FileOp>,
}

/// One file's operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// Create a file with this content.
    Add {
        /// Where.
        path: String,
        /// Its content.
        content: String,
    },
    /// Remove a file.
    Delete {
        /// Which.
        path: String,
    },
    /// Change a file, and perhaps move it.
    Update {
        /// Which.
        path: String,
        /// Where it goes, if it moves.
        move_to: Option<String>,
        /// Its hunks, in file order.
        hunks: Vec<Hunk>,
    },
}

impl FileOp {
    /// The path the operation names first.
    pub fn path(&self) -> &str {
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path } | FileOp::Update { path, .. } => {
                path
            }
        }
    }
}

/// One hunk of an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// The `@@` line's text: a line to find first (a function, a class).
    pub context: Option<String>,
    /// The lines the hunk replaces: its context and `-` lines.
    pub old: Vec<String>,
    /// The lines it puts there: its context and `+` lines.
    pub new: Vec<String>,
    /// The hunk ends the file (`*** End of File`).
    pub end_of_file: bool,
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

/// Why a patch did not parse: the message and the patch's line, from 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// What is wrong.
    pub message: String,
    /// Where, from 1.
    pub line: usize,
}

impl ParseError {
    fn at(line: usize, message: impl Into<String>) -> Self {
        ParseError {
            message: message.into(),
            line,
        }
    }
}

/// Parse patch text.
pub fn parse(text: &str) -> Result<Patch, ParseError> {
    let mut lines: Vec<&str> = text.trim().lines().collect();
    // A heredoc the model wrote around it, as for a shell.
    if lines.len() >= 4
        && matches!(lines[0].trim(), "<<EOF" | "<<'EOF'" | "<<\"EOF\"")
        && lines[lines.len() - 1].trim() == "EOF"
    {
        lines = lines[1..lines.len() - 1].to_vec();
    }
    if lines.first().map(|l| l.trim()) != Some(BEGIN) {
        return Err(ParseError::at(
            1,
            format!("The first line must be '{BEGIN}'."),
        ));
    }
    if lines.len() < 2 || lines[lines.len() - 1].trim() != END {
        return Err(ParseError::at(
            lines.len(),
            format!("The last line must be '{END}'."),
        ));
    }
    let body = &lines[1..lines.len() - 1];
    let mut ops = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let n = i + 2;
        let line = body[i].trim();
        if line.is_empty() {
            i += 1;
            continue;
        }
        if let Some(path) = line.strip_prefix(ADD) {
            i += 1;
            let mut content = String::new();
            while let Some(added) = body.get(i).and_then(|l| l.strip_prefix('+')) {
                content.push_str(added);
                content.push('\n');
                i += 1;
            }
            ops.push(FileOp::Add {
                path: path.trim().to_owned(),
                content,
            });
        } else if let Some(path) = line.strip_prefix(DELETE) {
            i += 1;
            ops.push(FileOp::Delete {
                path: path.trim().to_owned(),
            });
        } else if let Some(path) = line.strip_prefix(UPDATE) {
            i += 1;
            let move_to = body
                .get(i)
                .and_then(|l| l.trim().strip_prefix(MOVE))
                .map(|p| p.trim().to_owned());
            if move_to.is_some() {
                i += 1;
            }
            let mut hunks = Vec::new();
            while i < body.len() && !body[i].trim_start().starts_with("***") {
                if body[i].trim().is_empty() && !hunks.is_empty() {
                    i += 1;
                    continue;
                }
                let (hunk, used) = hunk(&body[i..], i + 2, hunks.is_empty())?;
                hunks.push(hunk);
                i += used;
                if body.get(i).map(|l| l.trim()) == Some(END_OF_FILE) {
                    if let Some(last) = hunks.last_mut() {
                        last.end_of_file = true;
                    }
                    i += 1;
                }
            }
            if hunks.is_empty() {
                return Err(ParseError::at(
                    n,
                    format!("'{UPDATE}{}' has no hunk.", path.trim()),
                ));
            }
            ops.push(FileOp::Update {
                path: path.trim().to_owned(),
                move_to,
                hunks,
            });
        } else {
            return Err(ParseError::at(
                n,
                format!(
                    "'{}' is not a file operation: each starts with '{ADD}', '{DELETE}' or \
                     '{UPDATE}'.",
                    cut(line)
                ),
            ));
        }
    }
    if ops.is_empty() {
        return Err(ParseError::at(1, "The patch changes no file."));
    }
    Ok(Patch { ops })
}

fn cut(line: &str) -> &str {
    &line[..line.floor_char_boundary(80)]
}

/// One hunk at the start of `lines` (line `n` of the patch), and how many
/// lines it took.
fn hunk(lines: &[&str], n: usize, first: bool) -> Result<(Hunk, usize), ParseError> {
    let mut used = 0;
    let header = lines[0].trim_end();
    let context = if header == "@@" {
        used = 1;
        None
    } else if let Some(context) = header.strip_prefix("@@ ") {
        used = 1;
        Some(context.to_owned())
    } else if first {
        None
    } else {
        return Err(ParseError::at(
            n,
            format!("A hunk starts with '@@', not '{}'.", cut(header)),
        ));
    };
    let mut hunk = Hunk {
        context,
        old: Vec::new(),
        new: Vec::new(),
        end_of_file: false,
    };
    for line in &lines[used..] {
        if line.trim() == END_OF_FILE
            || line.trim_start().starts_with("***")
            || line.starts_with("@@")
        {
            break;
        }
        match line.chars().next() {
            None => {
                hunk.old.push(String::new());
                hunk.new.push(String::new());
            }
            Some(' ') => {
                hunk.old.push(line[1..].to_owned());
                hunk.new.push(line[1..].to_owned());
            }
            Some('-') => hunk.old.push(line[1..].to_owned()),
            Some('+') => hunk.new.push(line[1..].to_owned()),
            Some(_) => {
                return Err(ParseError::at(
                    n + used,
                    format!(
                        "'{}' in a hunk: each line starts with ' ' (context), '-' (removed) or \
                         '+' (added).",
                        cut(line)
                    ),
                ));
            }
        }
        used += 1;
    }
    if hunk.old.is_empty() && hunk.new.is_empty() {
        return Err(ParseError::at(n, "A hunk has no lines."));
    }
    Ok((hunk, used))
}

/// Why a hunk did not apply.
#[derive(Debug, Clone, PartialEq)]
pub enum HunkError {
    /// The `@@` line is nowhere after the hunks before.
    ContextNotFound {
        /// Which hunk, from 0.
        index: usize,
        /// The `@@` line.
        context: String,
    },
    /// The old lines did not apply, as an edit's would not.
    Lines(EditError),
}

impl HunkError {
    /// The message, for the file shown as `path`, of a patch of `count`
    /// hunks for it.
    pub fn message(&self, path: &str, count: usize) -> String {
        match self {
            HunkError::ContextNotFound { index, context } => format!(
                "Hunk {} of '{path}': its '@@ {}' line is not in the file after the hunks before \
                 it. Nothing was changed.",
                index + 1,
                cut(context)
            ),
            HunkError::Lines(err) => err
                .message(path, count)
                .replacen("The edit", "The hunk", 1)
                .replacen("Edit ", "Hunk ", 1)
                .replace("old text was", "old lines were")
                .replace("old text is", "old lines are")
                .replace("old text", "old lines"),
        }
    }
}

/// The text's line break: its first one's.
fn line_break(text: &str) -> &'static str {
    match memchr::memchr(b'\n', text.as_bytes()) {
        Some(at) if at > 0 && text.as_bytes()[at - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// `hunks` applied to `text` in order.
pub fn apply_hunks(text: &str, hunks: &[Hunk], deadline: Instant) -> Result<Edited, HunkError> {
    let mut current = text.to_owned();
    let mut pos = 0;
    let mut matches = Vec::with_capacity(hunks.len());
    for (index, hunk) in hunks.iter().enumerate() {
        if let Some(context) = &hunk.context {
            pos = after_context(&current, pos, context).ok_or_else(|| {
                HunkError::ContextNotFound {
                    index,
                    context: context.clone(),
                }
            })?;
        }
        let join = |lines: &[String]| -> String {
            lines.iter().map(|l| format!("{l}\n")).collect::<String>()
        };
        if hunk.old.is_empty() {
            // Lines added after the `@@` line, or at the end of the file.
            let at = if hunk.context.is_some() {
                pos
            } else {
                current.len()
            };
            let lb = line_break(&current);
            let mut added: String = hunk.new.iter().map(|l| format!("{l}{lb}")).collect();
            if at == current.len() && !current.is_empty() && !current.ends_with('\n') {
                added.insert_str(0, lb);
            }
            let line = line_numbers(&current, std::iter::once(at))[0];
            current.insert_str(at, &added);
            pos = at + added.len();
            matches.push(Matched {
                tolerance: Tolerance::Exact,
                lines: vec![line],
            });
            continue;
        }
        let edit = Edit {
            old: join(&hunk.old),
            new: join(&hunk.new),
            replace_all: false,
        };
        let edit = if !current.ends_with('\n') && hunk.end_of_file {
            // The file's last line has no break: neither has the hunk's.
            Edit {
                old: edit.old.trim_end_matches('\n').to_owned(),
                new: edit.new.trim_end_matches('\n').to_owned(),
                replace_all: false,
            }
        } else {
            edit
        };
        let found = locate(&current[pos..], &edit, index, true).map_err(|e| {
            HunkError::Lines(match e {
                // Lines of the rest of the file, counted from `pos`.
                EditError::Ambiguous {
                    index,
                    tolerance,
                    lines,
                } => {
                    let base = line_numbers(&current, std::iter::once(pos))[0] - 1;
                    EditError::Ambiguous {
                        index,
                        tolerance,
                        lines: lines.into_iter().map(|l| l + base).collect(),
                    }
                }
                other => other,
            })
        })?;
        let Some((tolerance, regions)) = found else {
            return Err(HunkError::Lines(EditError::NotFound {
                index,
                closest: super::closest::find(&current, &edit.old, deadline),
                consumed: false,
            }));
        };
        let region = &regions[0];
        let (start, end) = (pos + region.start, pos + region.end);
        let line = line_numbers(&current, std::iter::once(start))[0];
        current.replace_range(start..end, &region.replacement);
        pos = start + region.replacement.len();
        matches.push(Matched {
            tolerance,
            lines: vec![line],
        });
    }
    Ok(Edited {
        text: current,
        matches,
    })
}

/// Just after the first line at or after `pos` that is `context`, exactly
/// or once trimmed.
fn after_context(text: &str, pos: usize, context: &str) -> Option<usize> {
    let want = context.trim();
    // From the start of the line `pos` is in.
    let mut at = text[..pos].rfind('\n').map_or(0, |nl| nl + 1);
    for line in text[at..].split_inclusive('\n') {
        let end = at + line.len();
        if line.trim() == want && end > pos {
            return Some(end);
        }
        at = end;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(1)
    }

    #[test]
    fn the_models_patch_parses_into_file_operations() {
        let patch = "*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n*** Update File: src/app.py\n*** Move to: src/main.py\n@@ def greet():\n-print(\"Hi\")\n+print(\"Hello, world!\")\n*** Delete File: obsolete.txt\n*** End Patch\n";
        let parsed = parse(patch).unwrap();
        assert_eq!(
            parsed.ops,
            [
                FileOp::Add {
                    path: "hello.txt".into(),
                    content: "Hello world\n".into()
                },
                FileOp::Update {
                    path: "src/app.py".into(),
                    move_to: Some("src/main.py".into()),
                    hunks: vec![Hunk {
                        context: Some("def greet():".into()),
                        old: vec!["print(\"Hi\")".into()],
                        new: vec!["print(\"Hello, world!\")".into()],
                        end_of_file: false,
                    }],
                },
                FileOp::Delete {
                    path: "obsolete.txt".into()
                },
            ]
        );
        let heredoc = format!("<<'EOF'\n{patch}EOF\n");
        assert_eq!(parse(&heredoc).unwrap(), parsed);
    }

    #[test]
    fn malformed_patches_say_where() {
        assert_eq!(parse("hello").unwrap_err().line, 1);
        let err = parse("*** Begin Patch\n*** Frobnicate: x\n*** End Patch").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("not a file operation"), "{err:?}");
        let err = parse("*** Begin Patch\n*** Update File: a\n*** End Patch").unwrap_err();
        assert!(err.message.contains("no hunk"), "{err:?}");
        let err =
            parse("*** Begin Patch\n*** Update File: a\n@@\n-x\n?y\n*** End Patch").unwrap_err();
        assert_eq!(err.line, 5);
    }

    fn hunk(context: Option<&str>, old: &[&str], new: &[&str]) -> Hunk {
        Hunk {
            context: context.map(str::to_owned),
            old: old.iter().map(|s| (*s).to_owned()).collect(),
            new: new.iter().map(|s| (*s).to_owned()).collect(),
            end_of_file: false,
        }
    }

    #[test]
    fn hunks_apply_in_order_after_their_context() {
        let text = "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\n";
        let done = apply_hunks(
            text,
            &[hunk(Some("fn b() {"), &["    x();"], &["    y();"])],
            soon(),
        )
        .unwrap();
        assert_eq!(done.text, "fn a() {\n    x();\n}\nfn b() {\n    y();\n}\n");
        assert_eq!(done.matches[0].lines, [5]);
        // Without context, the first place after the hunks before.
        let done = apply_hunks(
            text,
            &[
                hunk(None, &["    x();"], &["    one();"]),
                hunk(None, &["    x();"], &["    two();"]),
            ],
            soon(),
        )
        .unwrap();
        assert_eq!(
            done.text,
            "fn a() {\n    one();\n}\nfn b() {\n    two();\n}\n"
        );
    }

    #[test]
    fn a_hunk_that_does_not_apply_shows_the_closest_region() {
        let text = "alpha\nbeta\ngamma\ndelta\n";
        let err = apply_hunks(
            text,
            &[hunk(None, &["beta", "gamma!", "delta"], &["x"])],
            soon(),
        )
        .unwrap_err();
        let message = err.message("f.txt", 1);
        assert!(message.starts_with("The hunk: the old lines"), "{message}");
        assert!(
            !message.contains("lines was") && !message.contains("lines is "),
            "{message}"
        );
        assert!(message.contains("Closest: lines 2-4"), "{message}");
        let err = apply_hunks(text, &[hunk(Some("omega"), &["beta"], &["b"])], soon());
        assert!(matches!(err, Err(HunkError::ContextNotFound { .. })));
    }

    #[test]
    fn pure_additions_go_after_their_context_or_at_the_end() {
        let text = "a\r\nb\r\n";
        let done = apply_hunks(text, &[hunk(Some("a"), &[], &["new"])], soon()).unwrap();
        assert_eq!(done.text, "a\r\nnew\r\nb\r\n");
        let done = apply_hunks(text, &[hunk(None, &[], &["z"])], soon()).unwrap();
        assert_eq!(done.text, "a\r\nb\r\nz\r\n");
    }
}
