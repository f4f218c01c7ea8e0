//! Omission placeholders (`docs/contract.md#placeholders`): the comment a
//! model writes where it meant "the rest stays as it is" —
//! `// ... rest of the code unchanged ...`, `# ... existing code ...`,
//! `<!-- rest of file -->`, or a bare `/* ... */` — which, written as the
//! whole file, deletes what it stands for.
//!
//! [`classify`] reads one line: a comment and nothing else (in the comment
//! styles of common languages), short, that either *says* code was left
//! out or is a *bare* ellipsis. What it says is read from words, not from
//! fixed phrases: a word for the part left out (`rest`, `existing`,
//! `other`, …) with a word for leaving it (`unchanged`, `omitted`, `same`,
//! `here`, …), or either of them (or a word for code) beside an ellipsis
//! that stands on its own. The diff then asks for the shape of the change
//! too (`diff::summary`): a line that says so counts where the write
//! removes lines beside it, a bare ellipsis only where a block of old
//! lines disappeared in its place. Both figures, on a corpus of what
//! models write and of real comments in eleven languages, are in
//! BENCHMARKS.md#omission-placeholders.

/// How a line reads as an omission placeholder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placeholder {
    /// The comment says code was left out.
    Says,
    /// The comment is an ellipsis and nothing else.
    Bare,
}

/// Comment openers, longest first so that `<!--` wins over `<`, `///`
/// over `//`, `/*` over `/`.
const OPENERS: &[&str] = &[
    "<!--", "\"\"\"", "'''", "{/*", "///", "//!", "REM ", "rem ", "//", "/*", "(*", "{#", "@*",
    "--", ";;", "#", ";", "%", "*", "'", "!",
];

/// Comment closers stripped from the end.
const CLOSERS: &[&str] = &["-->", "*/}", "*/", "*)", "#}", "*@", "\"\"\"", "'''"];

/// Words for the part left out.
const SCOPE: &[&str] = &[
    "rest",
    "remaining",
    "existing",
    "other",
    "others",
    "previous",
    "prior",
    "original",
    "more",
    "everything",
];

/// Words for leaving it as it was.
const OMIT: &[&str] = &[
    "unchanged",
    "omitted",
    "omit",
    "elided",
    "snip",
    "snipped",
    "same",
    "remain",
    "remains",
    "stay",
    "stays",
    "untouched",
    "identical",
    "keep",
    "kept",
    "preserved",
    "retained",
    "before",
    "here",
    "brevity",
    "etc",
    "so",
];

/// The words of [`OMIT`] that mean it on their own, in a comment of a few
/// words (`// (omitted)`, `# unchanged`, `// etc.`).
const OMIT_ALONE: &[&str] = &[
    "unchanged",
    "omitted",
    "elided",
    "snip",
    "snipped",
    "untouched",
    "etc",
];

/// Words for code, which beside a lone ellipsis stand for what was left
/// out (`/* ... full function ... */`).
const CODE: &[&str] = &[
    "code",
    "implementation",
    "logic",
    "function",
    "functions",
    "method",
    "methods",
    "class",
    "classes",
    "component",
    "components",
    "module",
    "imports",
    "fields",
    "props",
    "handlers",
    "routes",
    "tests",
    "cases",
    "styles",
    "rules",
    "markup",
    "content",
    "lines",
    "definitions",
    "statements",
    "columns",
    "settings",
    "config",
    "configuration",
    "blocks",
    "hooks",
    "tasks",
    "clauses",
    "instances",
    "jsx",
    "file",
    "page",
    "script",
    "template",
    "document",
    "stylesheet",
    "docstring",
    "proof",
    "reducer",
    "state",
    "effects",
    "query",
    "migration",
    "sections",
    "useeffect",
];

/// Words that fill out a placeholder's sentence ("the rest *of the* code
/// *is as it was*") without taking it anywhere else: a comment with more
/// than a word or two outside these and the sets above is prose, not a
/// placeholder.
const FILLER: &[&str] = &[
    "the", "a", "an", "of", "to", "for", "in", "on", "at", "by", "with", "and", "or", "as", "is",
    "are", "be", "been", "will", "was", "were", "it", "its", "they", "this", "that", "these",
    "those", "all", "any", "else", "below", "above", "there", "from", "your", "our", "goes", "go",
    "still", "just", "full", "whole", "current",
];

/// The longest comment text taken for a placeholder: a real comment that
/// merely mentions "the existing code" runs longer.
const MAX_BODY: usize = 80;
/// The most words in one.
const MAX_WORDS: usize = 12;

/// Whether `line` is an omission placeholder, and of which kind.
pub fn classify(line: &str) -> Option<Placeholder> {
    // Most lines are code: their first byte past the indentation rules
    // them out, before anything costlier (a diff may add 100,000s).
    let first = line.bytes().find(|b| !matches!(b, b' ' | b'\t'));
    if !matches!(
        first,
        Some(
            b'<' | b'{'
                | b'"'
                | b'\''
                | b'/'
                | b'('
                | b'-'
                | b'#'
                | b';'
                | b'%'
                | b'*'
                | b'!'
                | b'@'
                | b'R'
                | b'r'
        )
    ) {
        return None;
    }
    let body = comment_body(line.trim())?;
    // A comment inside a comment is an example or code commented out.
    if body.starts_with("//") || body.starts_with("/*") || body.starts_with('#') {
        return None;
    }
    if body.is_empty() || body.len() > MAX_BODY || body.contains("://") {
        return None;
    }
    let body = body
        .to_lowercase()
        .replace('\u{2026}', "...")
        .replace(". . .", "...");
    let ellipsis = has_lone_ellipsis(&body);
    if ellipsis
        && body
            .chars()
            .all(|c| c == '.' || c.is_whitespace() || "()[]{}".contains(c))
    {
        return Some(Placeholder::Bare);
    }
    let words = words(&body);
    if words.is_empty() || words.len() > MAX_WORDS {
        return None;
    }
    let is = |set: &[&str], w: &str| set.contains(&w);
    // "same" says it only as "the same" ("remains the same"); "same for
    // the other methods" is prose.
    let omit = |i: usize| {
        let w = words[i];
        is(OMIT, w) && (w != "same" || (i > 0 && words[i - 1] == "the"))
    };
    let scope = words.iter().any(|w| is(SCOPE, w));
    let omits = (0..words.len()).any(omit);
    let code = words.iter().any(|w| is(CODE, w));
    let prose = (0..words.len())
        .filter(|&i| {
            let w = words[i];
            !(is(SCOPE, w)
                || omit(i)
                || is(CODE, w)
                || is(FILLER, w)
                || w.bytes().all(|b| b.is_ascii_digit()))
        })
        .count();
    let says = words.iter().any(|w| is(&["snip", "snipped", "brevity"], w))
        || (scope && omits && prose <= 1)
        || (ellipsis && (scope || omits) && prose <= 2)
        || (ellipsis && code && prose == 0)
        || (words[0] == "rest" && prose <= 1)
        || (words.len() <= 4
            && words.iter().any(|w| is(OMIT_ALONE, w))
            && prose == 0
            && !is(FILLER, words[0]))
        || matches!(&words[..], ["same", "as", "before" | "above"]);
    says.then_some(Placeholder::Says)
}

/// The text of `line` (trimmed) if it is a comment and nothing else.
fn comment_body(line: &str) -> Option<&str> {
    let body = OPENERS
        .iter()
        .find_map(|opener| line.strip_prefix(opener))?
        .trim();
    Some(
        CLOSERS
            .iter()
            .find_map(|closer| body.strip_suffix(closer))
            .map_or(body, str::trim_end),
    )
}

/// Whether `body` holds an ellipsis that stands on its own (`... rest`,
/// `(...)`, or one at either end), not one inside the text or a call
/// (`foo(...) but`).
fn has_lone_ellipsis(body: &str) -> bool {
    let bytes = body.as_bytes();
    let mut from = 0;
    while let Some(at) = body[from..].find("...") {
        let start = from + at;
        let mut end = start + 3;
        while bytes.get(end) == Some(&b'.') {
            end += 1;
        }
        // An opening bracket before the dots counts as space if space (or
        // the start) is before it.
        let mut before = start.checked_sub(1).map(|i| bytes[i]);
        if matches!(before, Some(b'(' | b'[' | b'{')) {
            before = start.checked_sub(2).map(|i| bytes[i]);
        }
        let after = bytes.get(end).copied();
        let open = before.is_none_or(|b| b.is_ascii_whitespace());
        let close = after.is_none_or(|b| b.is_ascii_whitespace() || b")]},;:".contains(&b));
        // At either end of the comment it stands on its own whatever it
        // touches on the other side (`...existing code...`).
        if (open && close) || start == 0 || end == bytes.len() {
            return true;
        }
        from = end;
    }
    false
}

/// The words of `body`: runs of letters, digits, `-`, `_` and `'`, with
/// `-` and `'` trimmed from their ends (`content-type` is one word).
fn words(body: &str) -> Vec<&str> {
    body.split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '\'')))
        .map(|w| w.trim_matches(|c| c == '-' || c == '\''))
        .filter(|w| !w.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{Placeholder, classify};

    #[test]
    fn what_models_write_is_found_in_every_comment_style() {
        for line in [
            "// ... rest of the code unchanged ...",
            "    // ... existing code ...",
            "# ... existing code ...",
            "# rest of the file unchanged",
            "<!-- rest of file -->",
            "<!-- ... existing content ... -->",
            "/* ... rest of implementation ... */",
            "{/* ... existing JSX ... */}",
            "-- ... rest of the query unchanged ...",
            "; ... other settings ...",
            "% ... rest of the document ...",
            " * ... remaining methods ...",
            "(* ... existing definitions ... *)",
            "' ... rest of the module unchanged",
            "// (rest of the function remains the same)",
            "// … previous code …",
            "// Existing code omitted for brevity",
            "# ... more tests ...",
            "\"\"\" ... rest of docstring unchanged ... \"\"\"",
            "// ... snip ...",
            "<!-- rest of the page stays the same -->",
            "/* Rest of styles unchanged */",
            "-- (other statements omitted)",
            "# Keep the rest as is",
        ] {
            assert_eq!(classify(line), Some(Placeholder::Says), "{line}");
        }
        for line in ["/* ... */", "// ...", "<!-- ... -->", "# [...]", "// …"] {
            assert_eq!(classify(line), Some(Placeholder::Bare), "{line}");
        }
    }

    #[test]
    fn ordinary_comments_and_code_are_not() {
        for line in [
            "...",
            "    ...",
            "// TODO: handle the rest",
            "// Keep this in sync with the rest of the parser, which reads the same table.",
            "# This function is unchanged from the upstream version because the upstream maintainers asked us to keep it.",
            "let rest = &code[..];",
            "args = [...]",
            "// see https://example.com/...",
            "# -*- coding: utf-8 -*-",
            "//! Module documentation.",
            "print('... rest of the code ...')",
            "x = 1  # ... existing code ...",
            "# Replace the existing Content-Type header with the one the caller gave.",
            "    \"\"\"Same as foo(...), but returns the bytes.\"\"\"",
            "/// // ...",
            "// the subtask...",
        ] {
            assert_eq!(classify(line), None, "{line}");
        }
    }
}
