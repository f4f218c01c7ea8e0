//! Line endings: read from the old text, given to the content.

use std::borrow::Cow;

/// A file's line endings, where they are uniform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    /// Every line ends in `\n` alone.
    Lf,
    /// Every line ends in `\r\n`.
    Crlf,
}

impl LineEnding {
    /// How the envelope names it.
    pub fn name(self) -> &'static str {
        match self {
            LineEnding::Lf => "lf",
            LineEnding::Crlf => "crlf",
        }
    }
}

/// The line endings of `text`, when it has line breaks and they are all of
/// one kind (and no CR stands alone).
pub fn line_endings(text: &str) -> Option<LineEnding> {
    let bytes = text.as_bytes();
    // The common case in one pass that stops early: no CR at all.
    if memchr::memchr(b'\r', bytes).is_none() {
        return memchr::memchr(b'\n', bytes).map(|_| LineEnding::Lf);
    }
    let newlines = memchr::memchr_iter(b'\n', bytes).count();
    let crs = memchr::memchr_iter(b'\r', bytes).count();
    let crlfs = memchr::memmem::find_iter(bytes, b"\r\n").count();
    (crlfs == newlines && crs == crlfs).then_some(LineEnding::Crlf)
}

/// `content` with its line endings made `to`: bare LFs become CRLF, or
/// CRLFs become LF. Lone CRs stay. Borrowed when nothing changes.
pub fn convert_endings(content: &str, to: LineEnding) -> Cow<'_, str> {
    let bytes = content.as_bytes();
    match to {
        LineEnding::Crlf => {
            let bare = memchr::memchr_iter(b'\n', bytes)
                .filter(|&i| i == 0 || bytes[i - 1] != b'\r')
                .count();
            if bare == 0 {
                return Cow::Borrowed(content);
            }
            let mut out = String::with_capacity(content.len() + bare);
            let mut start = 0;
            for i in memchr::memchr_iter(b'\n', bytes) {
                if i == 0 || bytes[i - 1] != b'\r' {
                    out.push_str(&content[start..i]);
                    out.push_str("\r\n");
                    start = i + 1;
                }
            }
            out.push_str(&content[start..]);
            Cow::Owned(out)
        }
        LineEnding::Lf => {
            // No CR, no CRLF: one `memchr` pass, cheaper than `memmem`.
            if memchr::memchr(b'\r', bytes).is_none()
                || memchr::memmem::find(bytes, b"\r\n").is_none()
            {
                return Cow::Borrowed(content);
            }
            Cow::Owned(content.replace("\r\n", "\n"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_endings_are_read_only_when_uniform() {
        assert_eq!(line_endings("a\r\nb\r\n"), Some(LineEnding::Crlf));
        assert_eq!(line_endings("a\r\nb"), Some(LineEnding::Crlf));
        assert_eq!(line_endings("a\nb\n"), Some(LineEnding::Lf));
        assert_eq!(line_endings("a\r\nb\n"), None);
        assert_eq!(line_endings("a\rb\n"), None);
        assert_eq!(line_endings("a\rb\r"), None);
        assert_eq!(line_endings("one line"), None);
    }

    #[test]
    fn endings_convert_both_ways_and_lone_crs_stay() {
        assert_eq!(
            convert_endings("a\nb\r\nc\rd\n", LineEnding::Crlf),
            "a\r\nb\r\nc\rd\r\n"
        );
        assert_eq!(convert_endings("\n", LineEnding::Crlf), "\r\n");
        assert_eq!(convert_endings("a\r\nb\nc\r", LineEnding::Lf), "a\nb\nc\r");
        assert!(matches!(
            convert_endings("a\r\n", LineEnding::Crlf),
            Cow::Borrowed(_)
        ));
        assert!(matches!(
            convert_endings("a\n", LineEnding::Lf),
            Cow::Borrowed(_)
        ));
    }
}
