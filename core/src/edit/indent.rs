//! The indentation rung: how the old text's indentation relates to the
//! file's, and the new text given the file's.
//!
//! A match is accepted on this rung only when one rule turns the
//! indentation of every non-blank line of the old text into the file's:
//! tabs written as spaces (or spaces as tabs) at a width of 2, 4 or 8,
//! then the same prefix added to every line or taken from every line.
//! Anything less uniform (one line deeper than the rest) is no match: the
//! model's text would otherwise land with a structure it did not have.
//!
//! A file that mixes tabs and spaces line by line (one line `\t`, the next
//! eight spaces) has no one spelling: there the rule is read in columns
//! instead, tabs at a width of 8, 4 or 2, every line shifted by the same
//! number of columns, and new lines spelled as the file spells its own
//! (tabs for whole widths when it uses tabs).

/// How indentation is spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spelling {
    /// As written.
    AsIs,
    /// Runs of this many columns of spaces as tabs.
    Tabs(usize),
    /// Tabs as this many spaces.
    Spaces(usize),
}

const SPELLINGS: [Spelling; 7] = [
    Spelling::AsIs,
    Spelling::Tabs(4),
    Spelling::Tabs(8),
    Spelling::Tabs(2),
    Spelling::Spaces(4),
    Spelling::Spaces(8),
    Spelling::Spaces(2),
];

/// The shift after the respelling.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shift {
    /// The file's lines are deeper by this prefix.
    Add(String),
    /// The old text's lines are deeper by this prefix.
    Remove(String),
}

/// A rule from the old text's indentation to the file's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reindent {
    spelling: Spelling,
    shift: Shift,
    /// In columns instead (a file that mixes tabs and spaces).
    columns: Option<Columns>,
}

/// A shift counted in columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Columns {
    /// A tab's width.
    width: usize,
    /// Columns the file's lines are deeper by (less than 0: shallower).
    delta: isize,
    /// Whether the file's lines use tabs.
    tabs: bool,
}

/// The columns `indent` takes with tabs `width` wide.
fn columns(indent: &str, width: usize) -> usize {
    indent.chars().fold(0, |col, c| {
        if c == '\t' {
            (col / width + 1) * width
        } else {
            col + 1
        }
    })
}

/// The leading spaces and tabs of `line`.
pub fn indentation(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

fn respell(indent: &str, spelling: Spelling) -> String {
    match spelling {
        Spelling::AsIs => indent.to_owned(),
        Spelling::Tabs(width) => {
            if indent.contains('\t') {
                return indent.to_owned();
            }
            let n = indent.len();
            let mut out = "\t".repeat(n / width);
            out.push_str(&" ".repeat(n % width));
            out
        }
        Spelling::Spaces(width) => {
            let mut out = String::with_capacity(indent.len() * width);
            for c in indent.chars() {
                if c == '\t' {
                    out.push_str(&" ".repeat(width));
                } else {
                    out.push(c);
                }
            }
            out
        }
    }
}

impl Reindent {
    /// The rule that takes each old line's indentation to the paired file
    /// line's, if there is one. `pairs` are (old line, file line), their
    /// line breaks and trailing whitespace already gone.
    pub fn find(pairs: &[(&str, &str)]) -> Option<Reindent> {
        let lines: Vec<(&str, &str)> = pairs
            .iter()
            .filter(|(old, file)| !old.trim().is_empty() && !file.trim().is_empty())
            .map(|(old, file)| (indentation(old), indentation(file)))
            .collect();
        let (first_old, first_file) = *lines.first()?;
        let spelled = SPELLINGS.iter().find_map(|&spelling| {
            let old = respell(first_old, spelling);
            let shift = if let Some(extra) = first_file.strip_suffix(old.as_str()) {
                Shift::Add(extra.to_owned())
            } else if let Some(extra) = old.strip_suffix(first_file) {
                Shift::Remove(extra.to_owned())
            } else {
                return None;
            };
            let rule = Reindent {
                spelling,
                shift,
                columns: None,
            };
            lines
                .iter()
                .all(|(old, file)| rule.apply_indent(old).as_deref() == Some(*file))
                .then_some(rule)
        });
        spelled.or_else(|| {
            let tabs = lines.iter().any(|(_, file)| file.contains('\t'));
            [8, 4, 2].into_iter().find_map(|width| {
                let delta =
                    columns(first_file, width) as isize - columns(first_old, width) as isize;
                // Mixed spelling and a shift at once would accept rules
                // too loose to trust.
                if delta != 0 {
                    return None;
                }
                lines
                    .iter()
                    .all(|(old, file)| {
                        columns(old, width) as isize + delta == columns(file, width) as isize
                    })
                    .then_some(Reindent {
                        spelling: Spelling::AsIs,
                        shift: Shift::Add(String::new()),
                        columns: Some(Columns { width, delta, tabs }),
                    })
            })
        })
    }

    /// `indent` under the rule; `None` when it cannot lose the prefix the
    /// rule takes away.
    fn apply_indent(&self, indent: &str) -> Option<String> {
        if let Some(c) = self.columns {
            let n = usize::try_from(columns(indent, c.width) as isize + c.delta).ok()?;
            return Some(if c.tabs {
                format!("{}{}", "\t".repeat(n / c.width), " ".repeat(n % c.width))
            } else {
                " ".repeat(n)
            });
        }
        let spelled = respell(indent, self.spelling);
        match &self.shift {
            Shift::Add(extra) => Some(format!("{extra}{spelled}")),
            Shift::Remove(extra) => spelled.strip_prefix(extra.as_str()).map(str::to_owned),
        }
    }

    /// A line of the new text, indented the file's way. A line shallower
    /// than the prefix the rule takes away loses its indentation.
    pub fn line(&self, line: &str) -> String {
        if line.trim().is_empty() {
            return line.to_owned();
        }
        let indent = indentation(line);
        let indent = self.apply_indent(indent).unwrap_or_default();
        format!("{indent}{}", &line[indentation(line).len()..])
    }

    /// Whether the rule changes nothing.
    pub fn is_identity(&self) -> bool {
        self.columns.is_none()
            && self.spelling == Spelling::AsIs
            && matches!(&self.shift, Shift::Add(e) | Shift::Remove(e) if e.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uniform_shift_is_found_and_applied() {
        let rule = Reindent::find(&[("if x:", "    if x:"), ("    y()", "        y()")]).unwrap();
        assert_eq!(rule.line("    z()"), "        z()");
        let rule =
            Reindent::find(&[("        a", "    a"), ("            b", "        b")]).unwrap();
        assert_eq!(rule.line("        c"), "    c");
        assert_eq!(rule.line("  d"), "d");
    }

    #[test]
    fn spaces_for_tabs_are_respelled() {
        let rule = Reindent::find(&[("    a", "\ta"), ("        b", "\t\tb")]).unwrap();
        assert_eq!(rule.line("            c"), "\t\t\tc");
        let rule = Reindent::find(&[("\ta", "  a"), ("\t\tb", "    b")]).unwrap();
        assert_eq!(rule.line("\t\t\tc"), "      c");
    }

    #[test]
    fn a_file_that_mixes_tabs_and_spaces_is_read_in_columns() {
        // The file indents eight columns with a tab on one line and with
        // spaces on another; the old text with spaces only.
        let pairs = [
            ("        if (x) {", "\tif (x) {"),
            ("            y();", "\t    y();"),
            ("        }", "        }"),
        ];
        let rule = Reindent::find(&pairs).unwrap();
        assert_eq!(rule.line("            z();"), "\t    z();");
        assert_eq!(rule.line("                w();"), "\t\tw();");
        assert!(!rule.is_identity());
    }

    #[test]
    fn a_shift_that_is_not_uniform_is_no_rule() {
        assert_eq!(Reindent::find(&[("a", "  a"), ("  b", "  b")]), None);
        assert_eq!(Reindent::find(&[("  a", "\ta"), ("b", "  b")]), None);
    }
}
