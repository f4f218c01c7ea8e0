//! Why edits were not applied, in words a model can act on.

use super::canon::Tolerance;
use super::closest::Closest;

/// Why the edits were not applied; none of them was.
#[derive(Debug, Clone, PartialEq)]
pub enum EditError {
    /// An edit's old text is empty.
    EmptyOld(usize),
    /// An edit's old and new text are the same.
    Same(usize),
    /// An edit's old text is nowhere.
    NotFound {
        /// Which edit, from 0.
        index: usize,
        /// The closest region, if any.
        closest: Option<Closest>,
        /// The old text was in the file before an earlier edit changed it.
        consumed: bool,
        /// The old text's line, from 0, that stands for lines left out
        /// (`...`, `// ...`), if one does.
        gap: Option<usize>,
    },
    /// The old text's one exact place lies inside a line while, ignoring
    /// whitespace, it stands as whole lines elsewhere: which was meant is
    /// not clear.
    Disagree {
        /// Which edit, from 0.
        index: usize,
        /// The line of the exact place.
        exact: u64,
        /// The line of the other.
        other: u64,
    },
    /// An edit without `replace_all` matches several places.
    Ambiguous {
        /// Which edit, from 0.
        index: usize,
        /// The rung that found them.
        tolerance: Tolerance,
        /// Their first lines.
        lines: Vec<u64>,
    },
    /// An insert's line is past the text's last.
    InsertLine {
        /// Which edit, from 0.
        index: usize,
        /// The line it named.
        line: u64,
        /// The lines the text has.
        total: u64,
    },
    /// An edit changes text an earlier one wrote.
    Overlap {
        /// Which edit, from 0.
        index: usize,
        /// The earlier edit.
        other: usize,
    },
}

/// Why an old text is nowhere (`who`: "The edit", "Edit 2"), and where
/// to look.
fn not_found(who: &str, path: &str, closest: Option<&Closest>, gap: Option<usize>) -> String {
    if let Some(gap) = gap {
        let mut text = format!(
            "{who}: the old text leaves lines out at its line {} (an ellipsis or a comment \
             standing for them). An edit never guesses what a gap stands for: give the old text \
             whole, as it is in '{path}', or make one edit on each side of the gap. Nothing was \
             changed.",
            gap + 1
        );
        if let Some(c) = closest {
            text.push_str(&format!(
                "\nThe text around the gap: lines {}-{}{}.",
                c.first_line,
                c.last_line,
                also(c)
            ));
        }
        return text;
    }
    // Said in few words: a model pays for every one, and the tolerances
    // tried are in the tool's description (BENCHMARKS.md#what-the-model-reads).
    let mut text = format!(
        "{who}: the old text is not in '{path}', even allowing for whitespace, look-alikes \
         and escapes. Nothing was changed."
    );
    if let Some(c) = closest {
        text.push_str(&closest_region(c));
    }
    if closest.is_none() {
        text.push('\n');
    }
    text.push_str("Copy the old text from the file as it is now.");
    text
}

/// Where the closest region is and how it differs, on lines of its own.
fn closest_region(c: &Closest) -> String {
    format!(
        "\nClosest: lines {}-{} ({:.0}% alike{}), old → file:\n{}",
        c.first_line,
        c.last_line,
        c.similarity * 100.0,
        also(c),
        c.diff
    )
}

/// The other regions as alike, for a sentence: `; as alike: 9-12,
/// 40-43`.
fn also(c: &Closest) -> String {
    if c.also.is_empty() {
        return String::new();
    }
    let ranges: Vec<String> = c.also.iter().map(|(a, b)| format!("{a}-{b}")).collect();
    format!("; as alike: {}", ranges.join(", "))
}

/// Most line numbers an ambiguity lists.
const MAX_LISTED: usize = 20;

/// Whose words a failure is told in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Voice {
    /// The tool's own (`docs/contract.md#edit`).
    #[default]
    Tool,
    /// Those of Anthropic's reference text editor, which models that call
    /// `str_replace_based_edit_tool` know (`docs/contract.md#text-editor`).
    TextEditor,
}

/// Most characters of an old text a failure repeats.
const MAX_QUOTED: usize = 400;

impl EditError {
    /// The message for `edits` on `path`, in `voice`'s words.
    pub fn told(&self, path: &str, edits: &[super::types::Edit], voice: Voice) -> String {
        if voice == Voice::TextEditor
            && let Some(words) = self.as_text_editor_says(path, edits)
        {
            return words;
        }
        self.message(path, edits.len())
    }

    /// Anthropic's reference text editor's words for a `str_replace` that
    /// did not apply, where it has them, and the closest region after them
    /// (the reference has none).
    fn as_text_editor_says(&self, path: &str, edits: &[super::types::Edit]) -> Option<String> {
        let quoted = |index: usize| {
            let old = edits.get(index).map_or("", |e| e.old.as_str());
            match old.char_indices().nth(MAX_QUOTED) {
                Some((end, _)) => format!("{}…", &old[..end]),
                None => old.to_owned(),
            }
        };
        match self {
            EditError::NotFound {
                index,
                closest,
                gap: None,
                ..
            } => {
                let mut text = format!(
                    "No replacement was performed, old_str `{}` did not appear verbatim in {path}.",
                    quoted(*index)
                );
                if let Some(c) = closest {
                    text.push_str(&closest_region(c));
                }
                Some(text)
            }
            EditError::Ambiguous { index, lines, .. } => {
                // Each line once, as the reference lists them.
                let mut lines = lines.clone();
                lines.dedup();
                let listed: Vec<String> =
                    lines.iter().take(MAX_LISTED).map(u64::to_string).collect();
                Some(format!(
                    "No replacement was performed. Multiple occurrences of old_str `{}` in lines \
                     [{}]. Please ensure it is unique",
                    quoted(*index),
                    listed.join(", ")
                ))
            }
            _ => None,
        }
    }

    /// The message for a call of `count` edits on `path`.
    pub fn message(&self, path: &str, count: usize) -> String {
        let who = |i: usize| {
            if count == 1 {
                "The edit".to_owned()
            } else {
                format!("Edit {}", i + 1)
            }
        };
        match self {
            EditError::EmptyOld(i) => format!(
                "{}: the old text is empty. An edit replaces text that is in the file; to create \
                 a file or replace all of it, use Write.",
                who(*i)
            ),
            EditError::Same(i) => format!(
                "{}: the old and new text are the same; nothing would change.",
                who(*i)
            ),
            EditError::NotFound {
                index,
                consumed: true,
                ..
            } => format!(
                "{}: the old text is no longer in '{path}' once the edits before it are made \
                 (edits apply in order, each to the result of the one before). Nothing was \
                 changed.",
                who(*index)
            ),
            EditError::NotFound {
                index,
                closest,
                gap,
                ..
            } => not_found(&who(*index), path, closest.as_ref(), *gap),
            EditError::Ambiguous {
                index,
                tolerance,
                lines,
            } => {
                let mut listed: Vec<String> =
                    lines.iter().take(MAX_LISTED).map(u64::to_string).collect();
                if lines.len() > MAX_LISTED {
                    listed.push("…".to_owned());
                }
                let how = match tolerance {
                    Tolerance::Exact => String::new(),
                    other => format!(" (ignoring {})", other.forgave()),
                };
                format!(
                    "{}: the old text matches {} places in '{path}'{how}, at lines {}. Add \
                     surrounding lines to make it unique, or set replace_all to change every one. \
                     Nothing was changed.",
                    who(*index),
                    lines.len(),
                    listed.join(", ")
                )
            }
            EditError::Disagree {
                index,
                exact,
                other,
            } => format!(
                "{}: the old text is in '{path}' exactly once, inside line {exact}, but it is \
                 also whole lines at line {other} when whitespace is ignored; which one is meant \
                 is not clear. Add surrounding lines to make it unique. Nothing was changed.",
                who(*index)
            ),
            // The words of Anthropic's reference text editor, which a
            // model knows (`docs/contract.md#text-editor`).
            EditError::InsertLine { index, line, total } => format!(
                "{}: invalid `insert_line` parameter: {line}. It should be within the range of \
                 lines of the file: [0, {total}]. Nothing was changed.",
                who(*index)
            ),
            EditError::Overlap { index, other } => format!(
                "{} overlaps edit {}: it changes text that edit wrote. Make them one edit. \
                 Nothing was changed.",
                who(*index),
                other + 1
            ),
        }
    }
}
