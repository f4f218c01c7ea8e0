//! Parsing a patch: as lenient as the models' own tooling (markers may
//! carry surrounding whitespace, the whole may sit in a `<<'EOF'`
//! heredoc, the first hunk of an update may leave out its `@@`).

use super::types::{
    ADD, BEGIN, DELETE, END, END_OF_FILE, FileOp, Hunk, MOVE, ParseError, Patch, UPDATE, cut,
};

/// Parse patch text.
pub fn parse(text: &str) -> Result<Patch, ParseError> {
    let lines = framed(text)?;
    let body = &lines[1..lines.len() - 1];
    let mut ops = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let line = body[i].trim();
        if line.is_empty() {
            i += 1;
            continue;
        }
        let (op, used) = file_op(body, i, line)?;
        ops.push(op);
        i += used;
    }
    if ops.is_empty() {
        return Err(ParseError::at(1, "The patch changes no file."));
    }
    Ok(Patch { ops })
}

/// The patch's lines, `*** Begin Patch` first and `*** End Patch` last,
/// out of a heredoc the model wrote around it (as for a shell).
fn framed(text: &str) -> Result<Vec<&str>, ParseError> {
    let mut lines: Vec<&str> = text.trim().lines().collect();
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
    Ok(lines)
}

/// The file operation `line` (line `i` of `body`) starts, and how many
/// lines of `body` it takes.
fn file_op(body: &[&str], i: usize, line: &str) -> Result<(FileOp, usize), ParseError> {
    if let Some(path) = line.strip_prefix(ADD) {
        let mut content = String::new();
        let mut used = 1;
        while let Some(added) = body.get(i + used).and_then(|l| l.strip_prefix('+')) {
            content.push_str(added);
            content.push('\n');
            used += 1;
        }
        let path = path.trim().to_owned();
        return Ok((FileOp::Add { path, content }, used));
    }
    if let Some(path) = line.strip_prefix(DELETE) {
        let path = path.trim().to_owned();
        return Ok((FileOp::Delete { path }, 1));
    }
    if let Some(path) = line.strip_prefix(UPDATE) {
        return update(body, i, path.trim());
    }
    Err(ParseError::at(
        i + 2,
        format!(
            "'{}' is not a file operation: each starts with '{ADD}', '{DELETE}' or '{UPDATE}'.",
            cut(line)
        ),
    ))
}

/// The update of `path` whose `*** Update File:` line is line `i` of
/// `body`: its move and its hunks, and how many lines it takes.
fn update(body: &[&str], i: usize, path: &str) -> Result<(FileOp, usize), ParseError> {
    let mut at = i + 1;
    let move_to = body
        .get(at)
        .and_then(|l| l.trim().strip_prefix(MOVE))
        .map(|p| p.trim().to_owned());
    if move_to.is_some() {
        at += 1;
    }
    let mut hunks: Vec<Hunk> = Vec::new();
    while at < body.len() && !is_marker(body[at]) {
        if body[at].trim().is_empty() && !hunks.is_empty() {
            at += 1;
            continue;
        }
        let (hunk, used) = hunk(&body[at..], at + 2, hunks.is_empty())?;
        hunks.push(hunk);
        at += used;
        if body.get(at).map(|l| l.trim()) == Some(END_OF_FILE) {
            if let Some(last) = hunks.last_mut() {
                last.end_of_file = true;
            }
            at += 1;
        }
    }
    if hunks.is_empty() {
        return Err(ParseError::at(
            i + 2,
            format!("'{UPDATE}{path}' has no hunk."),
        ));
    }
    let op = FileOp::Update {
        path: path.to_owned(),
        move_to,
        hunks,
    };
    Ok((op, at - i))
}

/// Whether `line` is one of the patch's markers, whitespace around it
/// forgiven: it ends a hunk. A line of a hunk whose text only starts with
/// `***` (a comment's rule, say) does not, so that every patch the
/// grammar (`apply_patch.lark`) admits parses.
fn is_marker(line: &str) -> bool {
    let line = line.trim();
    line == END
        || line == END_OF_FILE
        || [ADD, DELETE, UPDATE, MOVE]
            .iter()
            .any(|marker| line.starts_with(marker.trim_end()))
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
        if is_marker(line) || line.starts_with("@@") {
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
