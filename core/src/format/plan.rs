//! The format of the new file, decided once per write from the old file's
//! bytes and the request's `keep_format` (`docs/contract.md#format`).

use std::borrow::Cow;

use encoding_rs::Encoding;

use super::detect::decode;
use super::encode::strip_bom;
use super::endings::{LineEnding, convert_endings, line_endings};
use super::{BOM_CHAR, Certainty, Decoded, TextEncoding};

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
    /// How the encoding was found: a guess is settled by the content
    /// (`settle`).
    pub certainty: Certainty,
}

/// The call named an encoding the old file is not valid text in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotIn(pub &'static Encoding);

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
/// none), keeping its format unless `keep_format` is false. `named` is the
/// encoding the call says the file is in, which replaces detection.
pub fn plan<'a>(
    old: Option<&'a [u8]>,
    keep_format: bool,
    named: Option<&'static Encoding>,
) -> Result<Plan<'a>, NotIn> {
    let Some(old) = old else {
        return Ok(Plan {
            old_text: Cow::Borrowed(""),
            encoding: TextEncoding::PLAIN,
            line_endings: None,
            keep: false,
            old_not_text: false,
            converted_from: None,
            certainty: Certainty::Known,
        });
    };
    let decoded = match named {
        Some(encoding) => decode_as(old, encoding).ok_or(NotIn(encoding))?,
        None => decode(old),
    };
    Ok(planned(decoded, keep_format))
}

/// The plan for `old` read in `encoding`, which the content settled
/// (`settle`); `None` when `old` is not valid text in it.
pub fn replan<'a>(
    old: &'a [u8],
    encoding: &'static Encoding,
    keep_format: bool,
) -> Option<Plan<'a>> {
    decode_as(old, encoding).map(|decoded| planned(decoded, keep_format))
}

fn planned(decoded: Decoded<'_>, keep_format: bool) -> Plan<'_> {
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
        certainty: decoded.certainty,
        old_text: decoded.text,
        encoding,
        line_endings,
        keep,
    }
}

/// `bytes` read in `encoding`, known: UTF-8 (with or without its mark),
/// UTF-16 (its mark, if there, dropped), or a legacy encoding.
fn decode_as<'a>(bytes: &'a [u8], encoding: &'static Encoding) -> Option<Decoded<'a>> {
    let (text, encoding) = if encoding == encoding_rs::UTF_8 {
        let text = std::str::from_utf8(bytes).ok()?;
        let bom = text.starts_with(BOM_CHAR);
        let text = text.strip_prefix(BOM_CHAR).unwrap_or(text);
        (Cow::Borrowed(text), TextEncoding::Utf8 { bom })
    } else if encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE {
        let little = encoding == encoding_rs::UTF_16LE;
        let mark: &[u8] = if little { b"\xFF\xFE" } else { b"\xFE\xFF" };
        let body = bytes.strip_prefix(mark).unwrap_or(bytes);
        let text = super::utf16::decode_utf16(body, little)?;
        let encoding = if little {
            TextEncoding::Utf16Le
        } else {
            TextEncoding::Utf16Be
        };
        (Cow::Owned(text), encoding)
    } else {
        let text = encoding.decode_without_bom_handling_and_without_replacement(bytes)?;
        (
            Cow::Owned(text.into_owned()),
            TextEncoding::Legacy(encoding),
        )
    };
    Some(Decoded {
        text,
        encoding: Some(encoding),
        certainty: Certainty::Known,
    })
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
    fn a_named_encoding_replaces_detection_and_must_read_the_file() {
        let bytes = b"caf\xE9\n";
        let planned = plan(Some(bytes), true, Some(encoding_rs::WINDOWS_1250)).unwrap();
        assert_eq!(
            planned.encoding,
            TextEncoding::Legacy(encoding_rs::WINDOWS_1250)
        );
        assert_eq!(planned.certainty, Certainty::Known);
        assert_eq!(
            plan(Some(bytes), true, Some(encoding_rs::UTF_8)).unwrap_err(),
            NotIn(encoding_rs::UTF_8)
        );
        let utf16 = plan(Some(b"\xFF\xFEa\x00"), true, Some(encoding_rs::UTF_16LE)).unwrap();
        assert_eq!(
            (utf16.encoding, &*utf16.old_text),
            (TextEncoding::Utf16Le, "a")
        );
    }

    #[test]
    fn a_new_file_is_plain_utf8_as_given() {
        let plan = plan(None, true, None).unwrap();
        assert_eq!(plan.encoding, TextEncoding::PLAIN);
        assert!(!plan.keep);
        let text = plan.text_of("\u{feff}a\r\nb\n");
        assert_eq!(text.text, "\u{feff}a\r\nb\n");
        assert!(!text.endings_converted);
    }

    #[test]
    fn a_crlf_file_with_a_mark_keeps_both() {
        let plan = plan(Some(b"\xEF\xBB\xBFa\r\nb\r\n"), true, None).unwrap();
        assert_eq!(plan.encoding, TextEncoding::Utf8 { bom: true });
        assert_eq!(plan.line_endings, Some(LineEnding::Crlf));
        let text = plan.text_of("\u{feff}x\ny\n");
        assert_eq!(text.text, "x\r\ny\r\n");
        assert!(text.endings_converted);
    }

    #[test]
    fn keep_format_false_writes_as_given_and_says_what_the_file_was() {
        let plan = plan(Some(b"caf\xE9 cr\xE8me br\xFBl\xE9e\r\n"), false, None).unwrap();
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
        let plan = plan(Some(b"\x00\x01\xFF\xFE\x80"), true, None).unwrap();
        assert!(plan.old_not_text);
        assert!(!plan.keep);
        assert_eq!(plan.encoding, TextEncoding::PLAIN);
    }
}
