//! The format of the new file, decided once per write from the old file's
//! bytes and the request's `keep_format` (`docs/contract.md#format`).

use std::borrow::Cow;

use super::TextEncoding;
use super::detect::decode;
use super::encode::strip_bom;
use super::endings::{LineEnding, convert_endings, line_endings};

/// What one write keeps of the old file's format.
#[derive(Debug)]
pub struct Plan<'a> {
    /// The old file's text (lossy when it is not text): what the diff
    /// compares against. Empty when there is no old file.
    pub old_text: Cow<'a, str>,
    /// The encoding the new file is written in.
    pub encoding: TextEncoding,
    /// The old file's uniform line ending, given to the content.
    pub line_endings: Option<LineEnding>,
    /// Whether the old file's format is kept: an old text file, and
    /// `keep_format` not turned off.
    pub keep: bool,
    /// The old file is not text in any encoding the tool knows.
    pub old_not_text: bool,
    /// `keep_format: false` over a file of another encoding: the one it
    /// had.
    pub converted_from: Option<TextEncoding>,
}

/// The content as the new file will hold it.
#[derive(Debug)]
pub struct NewText<'a> {
    /// The text, without a byte-order mark its encoding writes itself, and
    /// with the file's line endings.
    pub text: Cow<'a, str>,
    /// Whether its line endings were changed to the file's.
    pub endings_converted: bool,
}

/// The plan for replacing `old` (the old file's bytes, `None` when there is
/// none), keeping its format unless `keep_format` is false.
pub fn plan(old: Option<&[u8]>, keep_format: bool) -> Plan<'_> {
    let Some(old) = old else {
        return Plan {
            old_text: Cow::Borrowed(""),
            encoding: TextEncoding::PLAIN,
            line_endings: None,
            keep: false,
            old_not_text: false,
            converted_from: None,
        };
    };
    let decoded = decode(old);
    let keep = keep_format && decoded.encoding.is_some();
    let encoding = match decoded.encoding {
        Some(encoding) if keep => encoding,
        _ => TextEncoding::PLAIN,
    };
    let line_endings = if keep {
        line_endings(&decoded.text)
    } else {
        None
    };
    Plan {
        converted_from: decoded
            .encoding
            .filter(|&was| !keep_format && was != TextEncoding::PLAIN),
        old_not_text: decoded.encoding.is_none(),
        old_text: decoded.text,
        encoding,
        line_endings,
        keep,
    }
}

impl Plan<'_> {
    /// `content` as the new file will hold it: a byte-order mark its
    /// encoding writes itself taken off, and its line endings made the
    /// file's.
    pub fn text_of<'c>(&self, content: &'c str) -> NewText<'c> {
        let body = if self.keep {
            strip_bom(content, self.encoding)
        } else {
            content
        };
        let text = match self.line_endings {
            Some(ending) => convert_endings(body, ending),
            None => Cow::Borrowed(body),
        };
        NewText {
            endings_converted: matches!(text, Cow::Owned(_)),
            text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_is_plain_utf8_as_given() {
        let plan = plan(None, true);
        assert_eq!(plan.encoding, TextEncoding::PLAIN);
        assert!(!plan.keep);
        let text = plan.text_of("\u{feff}a\r\nb\n");
        assert_eq!(text.text, "\u{feff}a\r\nb\n");
        assert!(!text.endings_converted);
    }

    #[test]
    fn a_crlf_file_with_a_mark_keeps_both() {
        let plan = plan(Some(b"\xEF\xBB\xBFa\r\nb\r\n"), true);
        assert_eq!(plan.encoding, TextEncoding::Utf8 { bom: true });
        assert_eq!(plan.line_endings, Some(LineEnding::Crlf));
        let text = plan.text_of("\u{feff}x\ny\n");
        assert_eq!(text.text, "x\r\ny\r\n");
        assert!(text.endings_converted);
    }

    #[test]
    fn keep_format_false_writes_as_given_and_says_what_the_file_was() {
        let plan = plan(Some(b"caf\xE9 cr\xE8me br\xFBl\xE9e\r\n"), false);
        assert_eq!(plan.encoding, TextEncoding::PLAIN);
        assert_eq!(plan.line_endings, None);
        assert_eq!(
            plan.converted_from.map(TextEncoding::name).as_deref(),
            Some("windows-1252")
        );
        assert_eq!(plan.text_of("a\n").text, "a\n");
    }

    #[test]
    fn an_old_file_that_is_not_text_is_replaced_as_given() {
        let plan = plan(Some(b"\x00\x01\xFF\xFE\x80"), true);
        assert!(plan.old_not_text);
        assert!(!plan.keep);
        assert_eq!(plan.encoding, TextEncoding::PLAIN);
    }
}
