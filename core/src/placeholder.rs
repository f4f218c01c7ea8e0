//! Omission placeholders (`docs/contract.md#placeholders`): the comment a
//! model writes where it meant "the rest stays as it is" —
//! `// ... rest of the code unchanged ...`, `# ... existing code ...`,
//! `<!-- rest of file -->` — which, written as the whole file, deletes what
//! it stands for.
//!
//! A line is a placeholder when it is a comment and nothing else (in the
//! comment styles of common languages), its text is short, and it says
//! that code was left out: one of a few unmistakable phrases, or an
//! ellipsis with a word that points at omitted code. The caller asks only
//! about lines the write adds while it removes others, so a file that
//! holds such a comment already never warns when it is rewritten.

/// Comment openers, longest first so that `<!--` wins over `<`, `//` over
/// `/`.
const OPENERS: &[&str] = &[
    "<!--", "{/*", "\"\"\"", "'''", "//", "/*", "(*", "--", "#", ";", "%", "*", "'",
];

/// Comment closers stripped from the end.
const CLOSERS: &[&str] = &["-->", "*/}", "*/", "*)", "\"\"\"", "'''"];

/// Phrases that mean omitted code on their own.
const PHRASES: &[&str] = &[
    "rest of the code",
    "rest of code",
    "rest of the file",
    "rest of file",
    "rest of the function",
    "rest of the method",
    "rest of the class",
    "rest of the implementation",
    "rest of the component",
    "rest of the module",
    "rest of the content",
    "rest of the tests",
    "rest of the config",
    "rest unchanged",
    "existing code",
    "existing content",
    "existing implementation",
    "existing imports",
    "existing methods",
    "existing functions",
    "existing tests",
    "remaining code",
    "remaining methods",
    "remaining functions",
    "code unchanged",
    "unchanged code",
    "code remains the same",
    "omitted for brevity",
    "for brevity",
    "previous code",
    "same as before",
    "keep existing",
];

/// Words that, next to an ellipsis, point at omitted code.
const WITH_ELLIPSIS: &[&str] = &[
    "rest of",
    "existing",
    "unchanged",
    "remain",
    "same",
    "previous",
    "omitted",
    "other ",
    "more ",
];

/// The longest comment text taken for a placeholder: a real comment that
/// merely mentions "the existing code" runs longer.
const MAX_BODY: usize = 80;

/// Whether `line` is an omission placeholder.
pub fn is_placeholder(line: &str) -> bool {
    // Most lines are code: their first byte past the indentation rules
    // them out, before anything costlier (a diff may add 100,000s).
    let first = line.bytes().find(|b| !matches!(b, b' ' | b'\t'));
    if !matches!(
        first,
        Some(b'<' | b'{' | b'"' | b'\'' | b'/' | b'(' | b'-' | b'#' | b';' | b'%' | b'*')
    ) {
        return false;
    }
    let line = line.trim();
    let Some(body) = OPENERS.iter().find_map(|opener| line.strip_prefix(opener)) else {
        return false;
    };
    let mut body = body.trim();
    for closer in CLOSERS {
        if let Some(rest) = body.strip_suffix(closer) {
            body = rest.trim_end();
            break;
        }
    }
    if body.is_empty() || body.len() > MAX_BODY {
        return false;
    }
    let body = body.to_lowercase();
    if PHRASES.iter().any(|phrase| body.contains(phrase)) {
        return true;
    }
    let ellipsis = body.contains("...") || body.contains('\u{2026}');
    ellipsis && WITH_ELLIPSIS.iter().any(|word| body.contains(word))
}

#[cfg(test)]
mod tests {
    use super::is_placeholder;

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
        ] {
            assert!(is_placeholder(line), "{line}");
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
            "/* ... */",
            "// ...",
            "print('... rest of the code ...')",
            "x = 1  # ... existing code ...",
        ] {
            assert!(!is_placeholder(line), "{line}");
        }
    }
}
