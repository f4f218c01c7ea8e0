//! An insert: new text as lines of their own after a line, the place an
//! edit by line number takes (`docs/contract.md#edit`).

use super::error::EditError;
use super::types::Region;

/// The place an insert of `new` after line `line` of `current` takes: the
/// start of the next line, the new text made whole lines (a line break
/// added where the text lacks one and a line follows or the file's last
/// line has one, or put before it where the file's last line has none).
pub(super) fn insert_at(
    current: &str,
    line: u64,
    new: &str,
    index: usize,
) -> Result<Region, EditError> {
    let total = line_count(current);
    if line > total {
        return Err(EditError::InsertLine { index, line, total });
    }
    if new.is_empty() {
        return Err(EditError::Same(index));
    }
    let start = match line {
        0 => 0,
        n => memchr::memchr_iter(b'\n', current.as_bytes())
            .nth((n - 1) as usize)
            .map_or(current.len(), |at| at + 1),
    };
    let mut replacement = String::with_capacity(new.len() + 2);
    if start == current.len() && !current.is_empty() && !current.ends_with('\n') {
        replacement.push_str(first_ending(current));
    }
    replacement.push_str(new);
    // Lines of their own: ended by a break where the file's lines are.
    if !new.ends_with('\n') && (start < current.len() || current.ends_with('\n')) {
        replacement.push_str(first_ending(current));
    }
    Ok(Region {
        start,
        end: start,
        replacement,
        indent_kept: true,
    })
}

/// How many lines `text` has, as a view numbers them: a last line break
/// starts no line.
fn line_count(text: &str) -> u64 {
    let breaks = memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
    breaks + u64::from(!text.is_empty() && !text.ends_with('\n'))
}

/// The line break `text` uses first (`\n` when it has none).
fn first_ending(text: &str) -> &'static str {
    match memchr::memchr(b'\n', text.as_bytes()) {
        Some(at) if at > 0 && text.as_bytes()[at - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}
