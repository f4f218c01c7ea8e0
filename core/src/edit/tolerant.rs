//! The tolerant rungs of the ladder (`docs/contract.md#matching`): where
//! an old text matches the file once its slips are forgiven, and the new
//! text fitted to the lines it matched — lines the model left as they were
//! keep the file's bytes, changed lines get the file's indentation and
//! line breaks.

use similar::{Algorithm, DiffOp};

use super::canon::{self, Form, Tolerance};
use super::indent::{self, Reindent};
use super::repair::split_line;
use super::types::{Edit, Region};

/// The places the old text's `needle` form has in the text's `form` on
/// rung `level`, each accepted only if its lines pair up with the old
/// text's under the rung's rules.
pub(super) fn tolerant(
    text: &str,
    edit: &Edit,
    form: &Form,
    needle: &str,
    level: Tolerance,
) -> Vec<Region> {
    let mut regions = Vec::new();
    let mut next = 0;
    let text_break = match memchr::memchr(b'\n', text.as_bytes()) {
        Some(at) if at > 0 && text.as_bytes()[at - 1] == b'\r' => "\r\n",
        _ => "\n",
    };
    for at in memchr::memmem::find_iter(form.text.as_bytes(), needle.as_bytes()) {
        if at < next {
            continue;
        }
        let mut start = form.start_in_text(at);
        let end = form.end_in_text(at + needle.len());
        // An old text whose first line is blank on this rung starts a
        // line: its break is not the end of a line with text on it.
        if needle.starts_with('\n') && at > 0 && form.text.as_bytes()[at - 1] != b'\n' {
            continue;
        }
        if level >= Tolerance::Indentation {
            // Indentation is compared whole: the match starts a line.
            if at > 0 && form.text.as_bytes()[at - 1] != b'\n' {
                continue;
            }
            start = text[..start].rfind('\n').map_or(0, |n| n + 1);
        }
        if !text.is_char_boundary(start) || !text.is_char_boundary(end) || start >= end {
            continue;
        }
        let region = &text[start..end];
        // On the look-alike rung Unicode spaces and invisible characters
        // in the old text are taken as the file has them, and the new
        // text's copies of those the file lacks here are the same slip
        // (`canon::plain_like`).
        let (old, new) = if level == Tolerance::LookAlikes {
            (
                canon::plain_spaces(&edit.old),
                canon::plain_like(&edit.new, &edit.old, region),
            )
        } else {
            (edit.old.as_str().into(), edit.new.as_str().into())
        };
        let Some((replacement, indent_kept)) = fit(region, &old, &new, level, text_break) else {
            continue;
        };
        next = at + needle.len();
        regions.push(Region {
            start,
            end,
            replacement,
            indent_kept,
        });
    }
    regions
}

/// The new text fitted to the file's `region`, which the old text matched
/// on rung `level`, and whether the old text's indentation is the
/// region's as written; `None` when it does not relate to the region's by
/// one rule.
fn fit(
    region: &str,
    old: &str,
    new: &str,
    level: Tolerance,
    text_break: &str,
) -> Option<(String, bool)> {
    let file: Vec<(&str, &str)> = region.split_inclusive('\n').map(split_line).collect();
    let olds: Vec<(&str, &str)> = old.split_inclusive('\n').map(split_line).collect();
    if file.len() != olds.len() {
        return None;
    }
    let rule = if level >= Tolerance::Indentation {
        let pairs: Vec<(&str, &str)> = olds
            .iter()
            .zip(&file)
            .map(|((o, _), (f, _))| (o.trim_end(), f.trim_end()))
            .collect();
        Some(Reindent::find(&pairs)?).filter(|r| !r.is_identity())
    } else {
        None
    };
    let indent_kept = rule.is_none();
    let key = |line: &str| Form::of(line, level).text;
    let old_keys: Vec<String> = olds.iter().map(|(l, _)| key(l)).collect();
    let news: Vec<(&str, &str)> = new.split_inclusive('\n').map(split_line).collect();
    let new_keys: Vec<String> = news.iter().map(|(l, _)| key(l)).collect();
    // Changed lines get the region's line break (its first line's can be
    // a bare `\n` whose `\r` lies before the region), else the file's.
    let default_break = if file.iter().any(|(_, b)| *b == "\r\n") {
        "\r\n"
    } else if file.iter().any(|(_, b)| *b == "\n") {
        "\n"
    } else {
        text_break
    };
    let mut out = String::with_capacity(new.len() + region.len() / 8);
    let ops = similar::capture_diff_slices(Algorithm::Myers, &old_keys, &new_keys);
    for op in ops {
        match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => {
                for t in 0..len {
                    let (body, own_break) = file[old_index + t];
                    let (new_body, new_break) = news[new_index + t];
                    // A line the model left as it was keeps the file's
                    // bytes; one it indented anew is a changed line.
                    let (old_body, _) = olds[old_index + t];
                    if indent::indentation(old_body) == indent::indentation(new_body) {
                        out.push_str(body);
                    } else {
                        match &rule {
                            Some(rule) => out.push_str(&rule.line(new_body)),
                            None => out.push_str(new_body),
                        }
                    }
                    if !new_break.is_empty() {
                        out.push_str(if own_break.is_empty() {
                            default_break
                        } else {
                            own_break
                        });
                    }
                }
            }
            DiffOp::Delete { .. } => {}
            DiffOp::Insert {
                new_index, new_len, ..
            }
            | DiffOp::Replace {
                new_index, new_len, ..
            } => {
                for (body, new_break) in &news[new_index..new_index + new_len] {
                    match &rule {
                        Some(rule) => out.push_str(&rule.line(body)),
                        None => out.push_str(body),
                    }
                    if !new_break.is_empty() {
                        out.push_str(default_break);
                    }
                }
            }
        }
    }
    Some((out, indent_kept))
}
