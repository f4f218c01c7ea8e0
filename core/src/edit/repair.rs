//! Repairs: the shapes in which a model's old text reaches the tool other
//! than as the file's text (`docs/contract.md#matching`) — copied with a
//! viewer's line numbers, JSON- or HTML-escaped, with a blank line too many
//! at an end — and the new text's last line break fitted to the old one's.
//!
//! A repair is tried only when the old text found no place as it came and
//! shows the repair's mark; the new text is repaired the same way only when
//! it shows the same mark. A repaired edit then goes up the ladder like any
//! other, so it still applies only where it finds exactly one place.

/// One repair. Those of `ORDER` are tried each alone, then all together;
/// [`Repair::LineBreakAtEnd`] always.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repair {
    /// Old text ending in a line break and new text without one (or the
    /// reverse): the new text's end fitted to the old one's, so that no
    /// two lines are joined or one split that the model did not mean to.
    LineBreakAtEnd,
    /// Every line prefixed with a viewer's line number (`cat -n`'s
    /// `    12\t`, or `    12→`): prefixes taken off.
    LineNumbers,
    /// JSON string escapes (`\n`, `\t`, `\"`, `\\`) in place of the
    /// characters: unescaped once.
    JsonEscapes,
    /// HTML entities (`&lt;`, `&amp;`, `&quot;`, `&#39;`…): unescaped once.
    HtmlEntities,
    /// One blank line at an end of both texts: taken off.
    BlankEnds,
}

/// The repairs of the old text, in the order they are tried.
pub(super) const ORDER: [Repair; 4] = [
    Repair::LineNumbers,
    Repair::JsonEscapes,
    Repair::HtmlEntities,
    Repair::BlankEnds,
];

impl Repair {
    /// The name the envelope gives it.
    pub fn name(self) -> &'static str {
        match self {
            Repair::LineBreakAtEnd => "line_break_at_end",
            Repair::LineNumbers => "line_numbers",
            Repair::JsonEscapes => "json_escapes",
            Repair::HtmlEntities => "html_entities",
            Repair::BlankEnds => "blank_ends",
        }
    }

    /// What it did, for a sentence.
    pub fn did(self) -> &'static str {
        match self {
            Repair::LineBreakAtEnd => "the new text's last line break fitted to the old text's",
            Repair::LineNumbers => "line-number prefixes taken off",
            Repair::JsonEscapes => "JSON escapes (\\n, \\\") read as the characters",
            Repair::HtmlEntities => "HTML entities (&lt;, &amp;) read as the characters",
            Repair::BlankEnds => "a blank line at an end taken off",
        }
    }

    /// The old and new text repaired, when the old text shows the mark
    /// and the repair changes it.
    pub(super) fn apply(self, old: &str, new: &str) -> Option<(String, String)> {
        let (old2, new2) = match self {
            Repair::LineBreakAtEnd => return fit_end(old, new).map(|n| (old.to_owned(), n)),
            Repair::LineNumbers => {
                let (old2, from) = strip_numbers(old, None)?;
                // The new text's prefixes come off only when they start
                // where the old text's did: a view's numbers, not a
                // column of the file's own.
                let new2 =
                    strip_numbers(new, Some(from)).map_or_else(|| new.to_owned(), |(n, _)| n);
                (old2, new2)
            }
            Repair::JsonEscapes => {
                let old2 = unescape_json(old, true)?;
                // `\uXXXX` in the new text is read only if the old text
                // had such escapes too.
                let new2 = unescape_json(new, old.contains("\\u"));
                (old2, new2.unwrap_or_else(|| new.to_owned()))
            }
            Repair::HtmlEntities => {
                let all: Vec<&str> = ENTITIES.iter().map(|(e, _)| *e).collect();
                let old2 = unescape_html(old, &all)?;
                // The old text's escaped form is not in the file, so the new
                // text came through the same escaping: its entities are
                // read too, but a non-breaking space only if the old text
                // had one (`&nbsp;` is as often meant as written).
                let read: Vec<&str> = all
                    .into_iter()
                    .filter(|e| *e != "&nbsp;" || old.contains(e))
                    .collect();
                (
                    old2,
                    unescape_html(new, &read).unwrap_or_else(|| new.to_owned()),
                )
            }
            Repair::BlankEnds => {
                // One blank line too many at an end of both texts: one taken
                // off there. One only the old text has is as likely context
                // around a line the model forgot as a slip.
                let (lead, trail) = blank_ends(old);
                let (new_lead, new_trail) = blank_ends(new);
                let lead = usize::from(lead > 0 && new_lead > 0);
                let trail = usize::from(trail > 0 && new_trail > 0);
                if lead + trail == 0 {
                    return None;
                }
                (
                    trim_blank_ends(old, lead, trail),
                    trim_blank_ends(new, lead, trail),
                )
            }
        };
        (old2 != old && !old2.trim().is_empty()).then_some((old2, new2))
    }
}

/// `new` with its end fitted to `old`'s: a line break added when the old
/// text ends in one and the new text does not, taken off in the reverse
/// case; `None` when the ends agree, or when the break is plainly meant:
/// the new text is empty (a deletion) or nothing but the break, the side
/// without the break ends in a space or tab (a break put in a space's
/// place, or a space in a break's: a join or a split the model wrote), or
/// the break is all the edit changes.
pub(super) fn fit_end(old: &str, new: &str) -> Option<String> {
    // A last line that ends in a space after text on it (`a, `) is a join
    // or a split the model wrote; one that is only spaces is a blank line's.
    let meant = |body: &str| {
        let last = body.rsplit('\n').next().unwrap_or(body);
        body.is_empty() || (last.ends_with([' ', '\t']) && !last.trim().is_empty())
    };
    let fitted = match (line_break_at_end(old), line_break_at_end(new)) {
        (Some(b), None) if !meant(new) => format!("{new}{b}"),
        (None, Some(b)) => {
            let body = &new[..new.len() - b.len()];
            if meant(body) || meant(old) {
                return None;
            }
            body.to_owned()
        }
        _ => return None,
    };
    (fitted != old).then_some(fitted)
}

fn line_break_at_end(text: &str) -> Option<&'static str> {
    if text.ends_with("\r\n") {
        Some("\r\n")
    } else if text.ends_with('\n') {
        Some("\n")
    } else {
        None
    }
}

/// The lines of `text` without their breaks, and the breaks.
fn lines(text: &str) -> impl Iterator<Item = (&str, &str)> {
    text.split_inclusive('\n').map(split_line)
}

/// A line split from its break: its text (no `\r\n` or `\n`) and the break.
pub(super) fn split_line(line: &str) -> (&str, &str) {
    if let Some(body) = line.strip_suffix("\r\n") {
        (body, "\r\n")
    } else if let Some(body) = line.strip_suffix('\n') {
        (body, "\n")
    } else {
        (line, "")
    }
}

/// A viewer's line-number prefix of `line`: its number and its length.
/// `cat -n` writes the number right-aligned in six columns and a tab;
/// Claude Code's Read the same with `→`.
fn number_prefix(line: &str) -> Option<(u64, usize)> {
    let digits_at = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[digits_at..];
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 9 {
        return None;
    }
    let number: u64 = rest[..digits].parse().ok()?;
    let after = &rest[digits..];
    let mark = ['\t', '→']
        .into_iter()
        .find(|m| after.starts_with(*m))?
        .len_utf8();
    Some((number, digits_at + digits + mark))
}

/// `text` without the line-number prefix its lines carry, and the first
/// number; `None` when a line has none. Without `from` (the old text) the
/// numbers must count up by one from any start; with it (the new text) the
/// first must be `from`, any after it may be anything (added lines), and a
/// blank line may go without.
fn strip_numbers(text: &str, from: Option<u64>) -> Option<(String, u64)> {
    let mut out = String::with_capacity(text.len());
    let mut first = None;
    let mut last: Option<u64> = None;
    for (body, end) in lines(text) {
        if body.is_empty() && end.is_empty() {
            continue;
        }
        let Some((number, len)) = number_prefix(body) else {
            if from.is_some() && first.is_some() && body.trim().is_empty() {
                out.push_str(body);
                out.push_str(end);
                continue;
            }
            return None;
        };
        match (from, first) {
            (Some(from), None) if number != from => return None,
            (None, _) if last.is_some_and(|l| l + 1 != number) => return None,
            _ => {}
        }
        first.get_or_insert(number);
        last = Some(number);
        out.push_str(&body[len..]);
        out.push_str(end);
    }
    Some((out, first?))
}

/// `text` with JSON's string escapes read once; `None` when it has none.
/// An escape JSON does not know is kept as written.
fn unescape_json(text: &str, unicode: bool) -> Option<String> {
    // An escaped text is one line: a text with a real line break that
    // shows `\n` has it in a string of its own.
    if text.contains('\n')
        || !["\\n", "\\t", "\\\"", "\\\\", "\\r"]
            .iter()
            .any(|e| text.contains(e))
    {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('/') => out.push('/'),
            Some('u') if unicode => {
                let hex: String = chars.clone().skip(1).take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) if hex.len() == 4 => {
                        out.push(ch);
                        for _ in 0..4 {
                            chars.next();
                        }
                    }
                    _ => {
                        out.push('\\');
                        continue;
                    }
                }
            }
            _ => {
                out.push('\\');
                continue;
            }
        }
        chars.next();
    }
    Some(out)
}

/// HTML's character references the repair reads, and what they stand for.
const ENTITIES: [(&str, &str); 8] = [
    ("&lt;", "<"),
    ("&gt;", ">"),
    ("&quot;", "\""),
    ("&apos;", "'"),
    ("&nbsp;", "\u{A0}"),
    ("&#39;", "'"),
    ("&#x27;", "'"),
    ("&amp;", "&"),
];

/// `text` with the character references of `read` (of [`ENTITIES`]) read
/// once; `None` when it has none of them.
fn unescape_html(text: &str, read: &[&str]) -> Option<String> {
    if !read.iter().any(|e| text.contains(e)) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let found = ENTITIES
            .iter()
            .find(|(e, _)| read.contains(e) && rest.starts_with(e));
        match found {
            Some((e, c)) => {
                out.push_str(c);
                rest = &rest[e.len()..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    Some(out)
}

/// How many blank lines `text` has at its start, and past its last line
/// of text at its end.
fn blank_ends(text: &str) -> (usize, usize) {
    let all: Vec<(&str, &str)> = lines(text).collect();
    let blank = |(b, _): &&(&str, &str)| b.trim().is_empty();
    let lead = all.iter().take_while(blank).count();
    if lead == all.len() {
        return (0, 0);
    }
    // "a\n\n" is a line and a blank one; "a\n" is a line.
    let trail = all.iter().rev().take_while(blank).count();
    (lead, trail)
}

fn trim_blank_ends(text: &str, lead: usize, trail: usize) -> String {
    let all: Vec<(&str, &str)> = lines(text).collect();
    if lead + trail >= all.len() {
        return text.to_owned();
    }
    let kept = &all[lead..all.len() - trail];
    let mut out: String = kept.iter().flat_map(|(b, e)| [*b, *e]).collect();
    // The last kept line keeps a break when a blank line followed it.
    if trail > 0
        && let Some((_, e)) = kept.last()
        && e.is_empty()
    {
        out.push_str(all[all.len() - trail - 1].1);
    }
    out
}

/// Whether `c` renders as nothing: Unicode's Default_Ignorable_Code_Point,
/// which holds U+200B, U+200C, U+200D, U+00AD, U+2060 and U+FEFF.
pub(super) fn is_invisible(c: char) -> bool {
    use icu_properties::CodePointSetData;
    use icu_properties::props::DefaultIgnorableCodePoint;
    !c.is_ascii() && CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
}

/// Whether `line` stands for lines left out: an ellipsis alone, or a
/// comment that says code was left out (`// ...`, `# rest unchanged`).
pub(super) fn is_elision(line: &str) -> bool {
    let t = line.trim();
    matches!(t, "..." | "\u{2026}" | "[...]" | "(...)")
        || crate::placeholder::classify(line).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viewer_line_numbers_come_off_both_texts() {
        let old = "    12\tfn a() {\n    13\t    b();\n    14\t}\n";
        let new = "    12\tfn a() {\n    13\t    c();\n    14\t}\n";
        let (o, n) = Repair::LineNumbers.apply(old, new).unwrap();
        assert_eq!(o, "fn a() {\n    b();\n}\n");
        assert_eq!(n, "fn a() {\n    c();\n}\n");
        let arrows = "     7→x = 1\n     8→\n     9→y = 2";
        let (o, n) = Repair::LineNumbers.apply(arrows, "x = 1\ny = 3").unwrap();
        assert_eq!(o, "x = 1\n\ny = 2");
        assert_eq!(n, "x = 1\ny = 3", "a new text without numbers is kept");
        // Numbers that do not count up are not a view's.
        assert_eq!(Repair::LineNumbers.apply("1\ta\n3\tb\n", "x"), None);
        assert_eq!(Repair::LineNumbers.apply("1\ta\nb\n", "x"), None);
    }

    #[test]
    fn json_escapes_are_read_once_and_the_new_text_only_when_it_has_them() {
        let (o, n) = Repair::JsonEscapes
            .apply(
                r#"if (a) {\n\tputs(\"x\\n\");\n}"#,
                r#"if (a) {\n\tputs(\"y\\n\");\n}"#,
            )
            .unwrap();
        assert_eq!(o, "if (a) {\n\tputs(\"x\\n\");\n}");
        assert_eq!(n, "if (a) {\n\tputs(\"y\\n\");\n}");
        assert_eq!(Repair::JsonEscapes.apply("a\nb", "c"), None);
    }

    #[test]
    fn html_entities_are_read_once() {
        let (o, n) = Repair::HtmlEntities
            .apply("if (a &lt; b &amp;&amp; c)", "if (a &lt;= b)")
            .unwrap();
        assert_eq!((o.as_str(), n.as_str()), ("if (a < b && c)", "if (a <= b)"));
        let (o, _) = Repair::HtmlEntities.apply("x &amp;lt; y", "z").unwrap();
        assert_eq!(o, "x &lt; y", "read once, not twice");
    }

    #[test]
    fn one_blank_line_at_an_end_of_both_texts_comes_off() {
        let (o, n) = Repair::BlankEnds.apply("\na\nb\n\n", "\na\nc\n\n").unwrap();
        assert_eq!((o.as_str(), n.as_str()), ("a\nb\n", "a\nc\n"));
        assert_eq!(Repair::BlankEnds.apply("a\nb\n", "c"), None);
        // Only the old text's: context around a forgotten line.
        assert_eq!(Repair::BlankEnds.apply("a\nb\n\n", "a\nc\n"), None);
        // One at a time.
        let (o, n) = Repair::BlankEnds.apply("a\n\n\n", "c\n\n\n").unwrap();
        assert_eq!((o.as_str(), n.as_str()), ("a\n\n", "c\n\n"));
    }

    #[test]
    fn the_new_text_ends_as_the_old_one_does() {
        assert_eq!(fit_end("a\n", "b").as_deref(), Some("b\n"));
        assert_eq!(fit_end("a\r\n", "b").as_deref(), Some("b\r\n"));
        assert_eq!(fit_end("a", "b\n").as_deref(), Some("b"));
        assert_eq!(fit_end("a\n", "b\n"), None);
        assert_eq!(fit_end("a\n", ""), None, "a deletion stays one");
        // A break plainly meant: a split in a space's place, a join, a
        // break alone, or the break all the edit changes.
        assert_eq!(fit_end("; ", ";\n"), None);
        assert_eq!(fit_end("a,\n", "a, "), None);
        assert_eq!(fit_end("<br>", "\n"), None);
        assert_eq!(fit_end("a;", "a;\n"), None);
        // A blank line's indentation is no join.
        assert_eq!(
            fit_end("a\n    \n", "b\n    ").as_deref(),
            Some("b\n    \n")
        );
    }

    #[test]
    fn a_new_texts_numbers_come_off_only_when_they_start_where_the_old_texts_do() {
        // A file of tab-separated rows: the new text's `1\t` is a column.
        let (o, n) = Repair::LineNumbers
            .apply("     2\t1\tred\n", "1\tblue\n")
            .unwrap();
        assert_eq!((o.as_str(), n.as_str()), ("1\tred\n", "1\tblue\n"));
        // A blank line the model added without a number.
        let (_, n) = Repair::LineNumbers
            .apply("     2\tx = 1\n     3\ty\n", "     2\tx = 2\n\n     3\ty\n")
            .unwrap();
        assert_eq!(n, "x = 2\n\ny\n");
    }

    #[test]
    fn the_new_text_is_unescaped_only_as_far_as_the_old_text_was() {
        // `&nbsp;` only where the old text had one.
        let (_, n) = Repair::HtmlEntities
            .apply("a &lt; b", "a &lt;= b &amp;&amp; c&nbsp;")
            .unwrap();
        assert_eq!(n, "a <= b && c&nbsp;");
        // `\uXXXX` only where the old text had such escapes.
        let (_, n) = Repair::JsonEscapes
            .apply(r#"f(\"a\")"#, r#"f(\"\u200b\")"#)
            .unwrap();
        assert_eq!(n, "f(\"\\u200b\")");
        // A text with real line breaks is not an escaped one.
        assert_eq!(
            Repair::JsonEscapes.apply("printf(\"hi\\n\");\nx", "y"),
            None
        );
    }

    #[test]
    fn invisibles_are_the_default_ignorables() {
        for c in [
            '\u{200B}', '\u{200C}', '\u{200D}', '\u{00AD}', '\u{2060}', '\u{FEFF}',
        ] {
            assert!(is_invisible(c), "{c:?}");
        }
        assert!(!is_invisible('a') && !is_invisible('\u{00A0}'));
    }

    #[test]
    fn elisions_are_ellipses_or_comments_that_say_so() {
        for line in [
            "...",
            "    // ...",
            "# ... rest unchanged",
            "/* ... */",
            "\u{2026}",
        ] {
            assert!(is_elision(line), "{line}");
        }
        for line in ["foo(...)", "x = 1", "// compute the sum"] {
            assert!(!is_elision(line), "{line}");
        }
    }
}
