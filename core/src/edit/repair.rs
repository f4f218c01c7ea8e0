//! Repairs: the shapes in which a model's old text reaches the tool other
//! than as the file's text (`docs/contract.md#matching`) — copied with a
//! viewer's line numbers, JSON- or HTML-escaped, with a blank line too many
//! at an end — and the new text's last line break fitted to the old one's.
//!
//! A repair is tried only when the old text found no place as it came and
//! shows the repair's mark; the new text is repaired the same way only when
//! it shows the same mark. A repaired edit then goes up the ladder like any
//! other, so it still applies only where it finds exactly one place.

/// One repair, in the order they are tried (each on top of the ones
/// before it that applied).
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
    /// Blank lines at the start or end of the old text: taken off.
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
            Repair::BlankEnds => "blank lines at its ends taken off",
        }
    }

    /// The old and new text repaired, when the old text shows the mark
    /// and the repair changes it.
    pub(super) fn apply(self, old: &str, new: &str) -> Option<(String, String)> {
        let (old2, new2) = match self {
            Repair::LineBreakAtEnd => return fit_end(old, new).map(|n| (old.to_owned(), n)),
            Repair::LineNumbers => {
                let old2 = strip_numbers(old, true)?;
                (
                    old2,
                    strip_numbers(new, false).unwrap_or_else(|| new.to_owned()),
                )
            }
            Repair::JsonEscapes => {
                let old2 = unescape_json(old)?;
                (old2, unescape_json(new).unwrap_or_else(|| new.to_owned()))
            }
            Repair::HtmlEntities => {
                let old2 = unescape_html(old)?;
                (old2, unescape_html(new).unwrap_or_else(|| new.to_owned()))
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
/// case; `None` when the ends agree (or the new text is empty: a
/// deletion).
pub(super) fn fit_end(old: &str, new: &str) -> Option<String> {
    if new.is_empty() {
        return None;
    }
    let old_break = line_break_at_end(old);
    let new_break = line_break_at_end(new);
    match (old_break, new_break) {
        (Some(b), None) => Some(format!("{new}{b}")),
        (None, Some(b)) => Some(new[..new.len() - b.len()].to_owned()),
        _ => None,
    }
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
    text.split_inclusive('\n').map(|l| {
        if let Some(b) = l.strip_suffix("\r\n") {
            (b, "\r\n")
        } else if let Some(b) = l.strip_suffix('\n') {
            (b, "\n")
        } else {
            (l, "")
        }
    })
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

/// `text` without the line-number prefix every line carries; `None` when
/// some line has none. `consecutive`: the numbers must count up by one (the
/// old text's, copied from a view); the new text's added lines may carry
/// any.
fn strip_numbers(text: &str, consecutive: bool) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut last: Option<u64> = None;
    for (body, end) in lines(text) {
        if body.is_empty() && end.is_empty() {
            continue;
        }
        let (number, len) = number_prefix(body)?;
        if consecutive && last.is_some_and(|l| l + 1 != number) {
            return None;
        }
        last = Some(number);
        out.push_str(&body[len..]);
        out.push_str(end);
    }
    Some(out)
}

/// `text` with JSON's string escapes read once; `None` when it has none.
/// An escape JSON does not know is kept as written.
fn unescape_json(text: &str) -> Option<String> {
    if !["\\n", "\\t", "\\\"", "\\\\", "\\r"]
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
            Some('u') => {
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

/// `text` with HTML's character references read once; `None` when it has
/// none of the common ones.
fn unescape_html(text: &str) -> Option<String> {
    const NAMED: [(&str, &str); 7] = [
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&quot;", "\""),
        ("&apos;", "'"),
        ("&nbsp;", "\u{A0}"),
        ("&#39;", "'"),
        ("&#x27;", "'"),
    ];
    if !NAMED.iter().any(|(e, _)| text.contains(e)) && !text.contains("&amp;") {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let found = NAMED
            .iter()
            .chain(&[("&amp;", "&")])
            .find(|(e, _)| rest.starts_with(e));
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
