//! New text in the file's encoding, its byte-order mark included.

use std::borrow::Cow;

use encoding_rs::Encoding;

use super::utf16::{push_units, push_utf16};
use super::{BOM_CHAR, TextEncoding, UTF8_BOM};

/// The content holds a character the file's encoding has no code for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unencodable {
    /// The encoding's name.
    pub encoding: String,
    /// The first character that does not fit.
    pub character: char,
    /// Its line in the content, from 1.
    pub line: u64,
}

/// `text` (without a byte-order mark) in `encoding`, the mark included.
pub fn encode(text: &str, encoding: TextEncoding) -> Result<Cow<'_, [u8]>, Unencodable> {
    match encoding {
        TextEncoding::Utf8 { bom: false } => Ok(Cow::Borrowed(text.as_bytes())),
        TextEncoding::Utf8 { bom: true } => {
            let mut out = Vec::with_capacity(UTF8_BOM.len() + text.len());
            out.extend_from_slice(UTF8_BOM);
            out.extend_from_slice(text.as_bytes());
            Ok(Cow::Owned(out))
        }
        // encoding_rs encodes UTF-16 as UTF-8 (the WHATWG rule for the
        // web), so UTF-16 is written with its `mem` converter, a piece at a
        // time through a small buffer: the whole text as `u16`s would be
        // one more file-sized buffer to fill and copy.
        TextEncoding::Utf16Le | TextEncoding::Utf16Be => {
            let little = encoding == TextEncoding::Utf16Le;
            // Every UTF-8 byte makes at most one unit.
            let mut out = Vec::with_capacity(2 * (text.len() + 1));
            push_units(&mut out, &[0xFEFF], little);
            push_utf16(&mut out, text, little);
            Ok(Cow::Owned(out))
        }
        TextEncoding::Legacy(codec) => encode_legacy(text, codec),
    }
}

fn encode_legacy<'a>(text: &str, codec: &'static Encoding) -> Result<Cow<'a, [u8]>, Unencodable> {
    let mut out = Vec::new();
    push_legacy(&mut out, text, 0, codec).map_err(|at| unencodable(text, at, codec))?;
    Ok(Cow::Owned(out))
}

/// Append `text[from..]` in `codec` to `out`; `Err` holds where in `text`
/// the first character `codec` cannot encode starts.
pub(super) fn push_legacy(
    out: &mut Vec<u8>,
    text: &str,
    from: usize,
    codec: &'static Encoding,
) -> Result<(), usize> {
    use encoding_rs::EncoderResult;
    let mut encoder = codec.new_encoder();
    let rest = &text[from..];
    out.reserve(
        encoder
            .max_buffer_length_from_utf8_without_replacement(rest.len())
            .unwrap_or(rest.len()),
    );
    let mut read = 0;
    loop {
        let (result, consumed) =
            encoder.encode_from_utf8_to_vec_without_replacement(&rest[read..], out, true);
        read += consumed;
        match result {
            EncoderResult::InputEmpty => return Ok(()),
            EncoderResult::OutputFull => out.reserve(rest.len() - read + 16),
            EncoderResult::Unmappable(character) => {
                return Err(from + read - character.len_utf8());
            }
        }
    }
}

/// The error for the character of `text` at byte `at`.
pub(super) fn unencodable(text: &str, at: usize, codec: &'static Encoding) -> Unencodable {
    let before = &text.as_bytes()[..at];
    Unencodable {
        encoding: TextEncoding::Legacy(codec).name(),
        character: text[at..]
            .chars()
            .next()
            .unwrap_or(char::REPLACEMENT_CHARACTER),
        line: memchr::memchr_iter(b'\n', before).count() as u64 + 1,
    }
}

/// `content` without a leading U+FEFF, when the file's encoding writes its
/// own byte-order mark (the mark is the file's, not a character of text).
pub(super) fn strip_bom(content: &str, encoding: TextEncoding) -> &str {
    if encoding.bom() {
        content.strip_prefix(BOM_CHAR).unwrap_or(content)
    } else {
        content
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::detect::decode;
    use crate::format::*;

    #[test]
    fn utf8_with_and_without_bom() {
        let plain = decode(b"a\nb\n");
        assert_eq!(plain.encoding, Some(TextEncoding::PLAIN));
        assert_eq!(plain.text, "a\nb\n");
        let marked = decode(b"\xEF\xBB\xBFa\n");
        assert_eq!(marked.encoding, Some(TextEncoding::Utf8 { bom: true }));
        assert_eq!(marked.text, "a\n");
        assert_eq!(
            encode("a\n", TextEncoding::Utf8 { bom: true }).unwrap(),
            &b"\xEF\xBB\xBFa\n"[..]
        );
    }
}
