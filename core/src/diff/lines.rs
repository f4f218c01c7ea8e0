//! Lines, as `similar`'s `TextDiff::diff_lines` sees them.

/// `text` split into lines, each keeping its terminator: exactly
/// `similar`'s `tokenize_lines` (`\n`, `\r\n` and a lone `\r` end a line),
/// found with `memchr`'s vectorised search.
pub(super) fn lines(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut lines = Vec::with_capacity(bytes.len() / 32 + 1);
    let mut start = 0;
    if memchr::memchr(b'\r', bytes).is_none() {
        // The common case, and a cheaper search: only `\n` ends lines.
        for at in memchr::memchr_iter(b'\n', bytes) {
            lines.push(&text[start..=at]);
            start = at + 1;
        }
    } else {
        let mut skip_lf_at = None;
        for at in memchr::memchr2_iter(b'\r', b'\n', bytes) {
            if skip_lf_at == Some(at) {
                continue;
            }
            let end = if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') {
                skip_lf_at = Some(at + 1);
                at + 2
            } else {
                at + 1
            };
            lines.push(&text[start..end]);
            start = end;
        }
    }
    if start < bytes.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// Whether `a` and `b` hold the same bytes, compared 8 at a time.
///
/// Not `==`: on slices that calls `memcmp`, and WASI's libc (which the
/// component links) compares a byte at a time
/// (BENCHMARKS.md#byte-loops-in-the-guest).
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let ((a_words, a_rest), (b_words, b_rest)) = (a.as_chunks::<8>(), b.as_chunks::<8>());
    a_words.iter().zip(b_words).all(|(x, y)| x == y)
        && a_rest.iter().zip(b_rest).all(|(x, y)| x == y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn same_bytes_is_equality(
            a in proptest::collection::vec(0u8..3, 0..40),
            b in proptest::collection::vec(0u8..3, 0..40),
        ) {
            prop_assert_eq!(same_bytes(&a, &b), a == b);
            prop_assert!(same_bytes(&a, &a.clone()));
        }
    }

    #[test]
    fn lines_are_similars_lines() {
        use similar::DiffableStr;
        for text in ["", "a", "a\n", "a\r\nb\rc\n", "\r\r\n\n", "x\ny"] {
            assert_eq!(lines(text), text.tokenize_lines(), "{text:?}");
        }
    }
}
