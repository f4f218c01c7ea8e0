//! The forms in which the matching ladder compares text
//! (`docs/contract.md#matching`), and the way back from a place in a form
//! to the same place in the file.
//!
//! Each rung is a canonical form that forgets one more thing a model gets
//! wrong: carriage returns, then trailing whitespace, then indentation,
//! then typographic look-alikes. A form never adds or removes a line
//! break, so line *n* of a form is line *n* of the text it came from.

/// The rungs of the ladder, in the order they are tried; each forgets what
/// the ones before it forget too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tolerance {
    /// Byte for byte.
    Exact,
    /// `\r\n` and `\n` alike.
    LineEndings,
    /// Spaces and tabs at the end of a line ignored.
    TrailingWhitespace,
    /// Indentation shifted by the same amount on every line, or written
    /// with tabs for spaces (or spaces for tabs); the new text is
    /// re-indented the same way.
    Indentation,
    /// Typographic quotes, dashes, Unicode spaces and the ellipsis taken
    /// for their ASCII look-alikes, and characters that render as nothing
    /// (zero-width spaces and joiners, soft hyphens, a byte-order mark)
    /// ignored.
    LookAlikes,
}

impl Tolerance {
    /// Every rung, in order.
    pub const LADDER: [Tolerance; 5] = [
        Tolerance::Exact,
        Tolerance::LineEndings,
        Tolerance::TrailingWhitespace,
        Tolerance::Indentation,
        Tolerance::LookAlikes,
    ];

    /// The name the envelope gives it.
    pub fn name(self) -> &'static str {
        match self {
            Tolerance::Exact => "exact",
            Tolerance::LineEndings => "line_endings",
            Tolerance::TrailingWhitespace => "trailing_whitespace",
            Tolerance::Indentation => "indentation",
            Tolerance::LookAlikes => "look_alikes",
        }
    }

    /// What it forgave, for a sentence.
    pub fn forgave(self) -> &'static str {
        match self {
            Tolerance::Exact => "nothing",
            Tolerance::LineEndings => "line endings (CRLF/LF)",
            Tolerance::TrailingWhitespace => "line endings and trailing whitespace",
            Tolerance::Indentation => "whitespace and indentation",
            Tolerance::LookAlikes => {
                "whitespace, indentation, typographic look-alikes and invisible characters"
            }
        }
    }
}

/// A stretch of a form and where it came from.
#[derive(Debug, Clone, Copy)]
struct Segment {
    /// Where it starts in the form.
    form: usize,
    /// Where it starts in the text.
    text: usize,
    /// `None`: copied byte for byte up to the next segment. `Some(n)`: it
    /// stands for `n` bytes of the text (a look-alike replaced, or
    /// whitespace dropped when the segment is empty).
    stands_for: Option<usize>,
}

/// A text in one canonical form.
#[derive(Debug)]
pub struct Form {
    /// The form.
    pub text: String,
    segments: Vec<Segment>,
}

/// The ASCII a look-alike is taken for, if `c` is one.
fn look_alike(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => "'",
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => "\"",
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => "-",
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => " ",
        '\u{2026}' => "...",
        _ => return None,
    })
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// Whether `c` is blank on the look-alike rung: a space or tab, a Unicode
/// space, or a character that renders as nothing.
fn is_blank_alike(c: char) -> bool {
    is_blank(c) || look_alike(c) == Some(" ") || super::repair::is_invisible(c)
}

/// The new text as the look-alike rung writes it: the invisible characters
/// and Unicode spaces the old text had and the file's `region` does not
/// (the model's, not the file's) taken out or made spaces; any other kept,
/// a joiner in an emoji or a space in a number as the model wrote them.
pub fn plain_like<'a>(new: &'a str, old: &str, region: &str) -> std::borrow::Cow<'a, str> {
    let odd = |c: char| !is_blank(c) && is_blank_alike(c);
    let marks: Vec<char> = old
        .chars()
        .filter(|&c| odd(c) && !region.contains(c))
        .collect();
    if marks.is_empty() || !new.contains(marks.as_slice()) {
        return std::borrow::Cow::Borrowed(new);
    }
    std::borrow::Cow::Owned(
        new.chars()
            .filter(|c| !(marks.contains(c) && super::repair::is_invisible(*c)))
            .map(|c| if marks.contains(&c) { ' ' } else { c })
            .collect(),
    )
}

/// `text` as the look-alike rung reads whitespace: Unicode spaces as
/// spaces, invisible characters gone; borrowed when it has none.
pub fn plain_spaces(text: &str) -> std::borrow::Cow<'_, str> {
    if text.is_ascii() || !text.chars().any(|c| !is_blank(c) && is_blank_alike(c)) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.chars()
            .filter(|&c| !super::repair::is_invisible(c))
            .map(|c| {
                if !is_blank(c) && is_blank_alike(c) {
                    ' '
                } else {
                    c
                }
            })
            .collect(),
    )
}

impl Form {
    /// `text` in the form of `level`.
    pub fn of(text: &str, level: Tolerance) -> Form {
        let mut form = Form {
            text: String::with_capacity(text.len()),
            segments: vec![Segment {
                form: 0,
                text: 0,
                stands_for: None,
            }],
        };
        if level == Tolerance::Exact {
            form.text.push_str(text);
            return form;
        }
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            let (body, end) = match line.strip_suffix('\n') {
                Some(body) => (body, "\n"),
                None => (line, ""),
            };
            let mut body_end = body.len();
            let mut dropped_end = 0;
            if let Some(stripped) = body.strip_suffix('\r')
                && !end.is_empty()
            {
                body_end = stripped.len();
                dropped_end = 1;
            }
            let mut body = &body[..body_end];
            let mut start = 0;
            // Two calls rather than a function pointer: each is inlined.
            let alike = level >= Tolerance::LookAlikes;
            if level >= Tolerance::TrailingWhitespace {
                let trimmed = if alike {
                    body.trim_end_matches(is_blank_alike)
                } else {
                    body.trim_end_matches(is_blank)
                };
                dropped_end += body.len() - trimmed.len();
                body = trimmed;
            }
            if level >= Tolerance::Indentation {
                let trimmed = if alike {
                    body.trim_start_matches(is_blank_alike)
                } else {
                    body.trim_start_matches(is_blank)
                };
                start = body.len() - trimmed.len();
                body = trimmed;
            }
            if start > 0 {
                form.drop(at, start);
            }
            let body_at = at + start;
            if level >= Tolerance::LookAlikes && !body.is_ascii() {
                form.copy_mapped(body, body_at);
            } else {
                form.copy(body, body_at);
            }
            let after = body_at + body.len();
            if dropped_end > 0 {
                form.drop(after, dropped_end);
            }
            if !end.is_empty() {
                form.copy(end, after + dropped_end);
            }
            at += line.len();
        }
        form
    }

    /// Copy `piece`, which is the text's from `from`.
    fn copy(&mut self, piece: &str, from: usize) {
        if piece.is_empty() {
            return;
        }
        let last = self.segments.last().copied();
        let continues = last
            .is_some_and(|s| s.stands_for.is_none() && s.text + (self.text.len() - s.form) == from);
        if !continues {
            self.segments.push(Segment {
                form: self.text.len(),
                text: from,
                stands_for: None,
            });
        }
        self.text.push_str(piece);
    }

    /// Forget `len` bytes of the text from `from`.
    fn drop(&mut self, from: usize, len: usize) {
        self.segments.push(Segment {
            form: self.text.len(),
            text: from,
            stands_for: Some(len),
        });
        // What follows is copied from after the dropped bytes.
        self.segments.push(Segment {
            form: self.text.len(),
            text: from + len,
            stands_for: None,
        });
    }

    /// Copy `piece` (the text's from `from`), its look-alikes replaced.
    fn copy_mapped(&mut self, piece: &str, from: usize) {
        let mut run = 0;
        for (i, c) in piece.char_indices() {
            let ascii = if super::repair::is_invisible(c) {
                Some("")
            } else {
                look_alike(c)
            };
            if let Some(ascii) = ascii {
                self.copy(&piece[run..i], from + run);
                self.segments.push(Segment {
                    form: self.text.len(),
                    text: from + i,
                    stands_for: Some(c.len_utf8()),
                });
                self.text.push_str(ascii);
                run = i + c.len_utf8();
                self.segments.push(Segment {
                    form: self.text.len(),
                    text: from + run,
                    stands_for: None,
                });
            }
        }
        self.copy(&piece[run..], from + run);
    }

    /// The segment holding byte `at` of the form.
    fn segment(&self, at: usize) -> Segment {
        let i = self.segments.partition_point(|s| s.form <= at);
        self.segments[i.saturating_sub(1)]
    }

    /// Where the text has the form's byte `at`, the first of a match.
    pub fn start_in_text(&self, at: usize) -> usize {
        let s = self.segment(at);
        match s.stands_for {
            None => s.text + (at - s.form),
            Some(_) => s.text,
        }
    }

    /// Where the text ends a match that ends before the form's byte `end`
    /// (`end > 0`).
    pub fn end_in_text(&self, end: usize) -> usize {
        let s = self.segment(end - 1);
        match s.stands_for {
            None => s.text + (end - s.form),
            Some(n) => s.text + n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forms(text: &str) -> Vec<String> {
        Tolerance::LADDER
            .iter()
            .map(|&l| Form::of(text, l).text)
            .collect()
    }

    #[test]
    fn each_rung_forgets_one_more_thing() {
        let text = "  a \u{201C}b\u{201D}  \r\n\tc\u{2014}d\n";
        assert_eq!(
            forms(text),
            [
                text,
                "  a \u{201C}b\u{201D}  \n\tc\u{2014}d\n",
                "  a \u{201C}b\u{201D}\n\tc\u{2014}d\n",
                "a \u{201C}b\u{201D}\nc\u{2014}d\n",
                "a \"b\"\nc-d\n",
            ]
        );
    }

    #[test]
    fn places_in_a_form_lead_back_to_the_text() {
        let text = "x\n  a \u{201C}b\u{201D}  \r\n\tc\u{2026}d\n";
        let form = Form::of(text, Tolerance::LookAlikes);
        let find = |needle: &str| {
            let at = form.text.find(needle).unwrap();
            let (s, e) = (form.start_in_text(at), form.end_in_text(at + needle.len()));
            &text[s..e]
        };
        assert_eq!(find("a \"b\""), "a \u{201C}b\u{201D}");
        assert_eq!(find("\"b\"\nc"), "\u{201C}b\u{201D}  \r\n\tc");
        assert_eq!(find("c..."), "c\u{2026}");
        assert_eq!(find("x\na"), "x\n  a");
    }
}
