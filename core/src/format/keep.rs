//! Kept lines keep their bytes: the lines the diff keeps are copied from
//! the old file, and only the rest is encoded.

use encoding_rs::Encoding;

use super::TextEncoding;
use super::encode::{Unencodable, push_legacy, unencodable};
use super::utf16::push_utf16;
use crate::diff::Keeping;

/// An encoding in which every line of a file can be encoded on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineCodec {
    /// A legacy encoding, but not ISO-2022-JP (whose escape sequences carry
    /// a state from one line to the next): `\n` and `\r` are the bytes 0x0A
    /// and 0x0D, and no other byte or part of a character is.
    Legacy(&'static Encoding),
    /// UTF-16, after its byte-order mark: `\n` and `\r` are the units
    /// 0x000A and 0x000D, and no other unit is.
    Utf16 {
        /// Little-endian.
        little: bool,
    },
}

/// How `encoding`'s files are encoded a line at a time, if they can be:
/// their bytes then split into the same lines as their text.
pub fn line_by_line(encoding: TextEncoding) -> Option<LineCodec> {
    match encoding {
        TextEncoding::Legacy(codec) if codec != encoding_rs::ISO_2022_JP => {
            Some(LineCodec::Legacy(codec))
        }
        TextEncoding::Utf16Le => Some(LineCodec::Utf16 { little: true }),
        TextEncoding::Utf16Be => Some(LineCodec::Utf16 { little: false }),
        _ => None,
    }
}

/// Where each line of the old file `old`, in `codec`, starts (after its
/// byte-order mark, whose length comes first), and its length last.
pub fn old_lines(codec: LineCodec, old: &[u8]) -> Option<(usize, Vec<usize>)> {
    Some(match codec {
        LineCodec::Legacy(_) => (0, line_starts(old)),
        LineCodec::Utf16 { little } => (2, unit_line_starts(old.get(2..)?, little)),
    })
}

/// `new` in `codec`, with the runs of lines in `kept` copied from `old`
/// (the old file, in `codec`, its lines numbered from 0 and split as
/// [`old_lines`] says) instead of being encoded again: the lines the
/// content leaves as they were keep their bytes, and only the rest is
/// converted. `None` when `old` does not split into as many lines as the
/// diff's old text.
pub fn encode_keeping(
    new: &str,
    codec: LineCodec,
    old: &[u8],
    (mark, starts): (usize, &[usize]),
    kept: &Keeping,
) -> Option<Result<Vec<u8>, Unencodable>> {
    if starts.len() - 1 != kept.old_line_count {
        return None;
    }
    let mut out = Vec::with_capacity(2 * old.len().max(new.len()));
    out.extend_from_slice(&old[..mark]);
    // Encode `new[from..to]`.
    let push = |out: &mut Vec<u8>, from: usize, to: usize| match codec {
        LineCodec::Legacy(codec) => {
            push_legacy(out, &new[..to], from, codec).map_err(|bad| unencodable(new, bad, codec))
        }
        LineCodec::Utf16 { little } => {
            push_utf16(out, &new[from..to], little);
            Ok(())
        }
    };
    let mut at = 0;
    for run in &kept.runs {
        let bytes =
            mark + *starts.get(run.old_lines.start)?..mark + *starts.get(run.old_lines.end)?;
        if let Err(err) = push(&mut out, at, run.new_bytes.start) {
            return Some(Err(err));
        }
        out.extend_from_slice(old.get(bytes)?);
        at = run.new_bytes.end;
    }
    Some(push(&mut out, at, new.len()).map(|()| out))
}

/// Where each line of `bytes` starts, and its length last: lines end as
/// the diff ends them (`\n`, `\r\n`, a lone `\r`).
pub(super) fn line_starts(bytes: &[u8]) -> Vec<usize> {
    starts_from_breaks(
        memchr::memchr2_iter(b'\r', b'\n', bytes).map(|at| (at, bytes[at] == b'\r')),
        1,
        bytes.len(),
    )
}

/// [`line_starts`] of UTF-16 `bytes` (without the mark), in bytes.
fn unit_line_starts(bytes: &[u8], little: bool) -> Vec<usize> {
    let unit = |at: usize| {
        let pair = [bytes[at], bytes[at + 1]];
        if little {
            u16::from_le_bytes(pair)
        } else {
            u16::from_be_bytes(pair)
        }
    };
    // Each byte 0x0A or 0x0D, as the start of the unit it is part of; a
    // unit holding two is seen twice.
    let mut last = None;
    let breaks = memchr::memchr2_iter(b'\r', b'\n', bytes).filter_map(move |at| {
        let start = at & !1;
        if last == Some(start) || start + 1 >= bytes.len() {
            return None;
        }
        last = Some(start);
        match unit(start) {
            0x0A => Some((start, false)),
            0x0D => Some((start, true)),
            _ => None,
        }
    });
    starts_from_breaks(breaks, 2, bytes.len())
}

/// Line starts from the line breaks of a text `len` bytes long, each
/// (where it starts, whether it is a CR), given in order, each `width`
/// bytes long. A CR followed at once by an LF ends one line.
fn starts_from_breaks(
    breaks: impl Iterator<Item = (usize, bool)>,
    width: usize,
    len: usize,
) -> Vec<usize> {
    let mut starts = vec![0];
    let mut after_cr = None;
    for (at, cr) in breaks {
        if !cr && after_cr == Some(at) {
            // The LF of a CRLF: the line ends after it instead.
            *starts.last_mut().expect("a CR's line end") = at + width;
        } else {
            starts.push(at + width);
        }
        after_cr = cr.then_some(at + width);
    }
    if starts.last() != Some(&len) {
        starts.push(len);
    }
    starts
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::detect::decode;
    use crate::format::*;

    /// The old file's bytes and the content's text, through the diff and
    /// [`encode_keeping`].
    fn keeping(old: &[u8], codec: &'static Encoding, new: &str) -> Result<Vec<u8>, Unencodable> {
        let text = codec
            .decode_without_bom_handling_and_without_replacement(old)
            .expect("decodes");
        let limits = crate::diff::DiffLimits::default();
        let (_, kept) = crate::diff::diff_keeping(&text, new, "f", &limits);
        let codec = LineCodec::Legacy(codec);
        let (mark, starts) = old_lines(codec, old).unwrap();
        encode_keeping(new, codec, old, (mark, &starts), &kept)
            .expect("the old bytes split like the text")
    }

    #[test]
    fn utf16_kept_lines_are_copied_and_the_rest_encoded() {
        for encoding in [TextEncoding::Utf16Le, TextEncoding::Utf16Be] {
            // Units whose bytes include 0x0A or 0x0D but are no line break:
            // U+0A0D, U+0D0A, U+010A.
            let old_text = "a\u{A0D}\r\n\u{D0A}\u{10A}\rb\nc\n\u{1F600}";
            let new_text = "a\u{A0D}\r\nchanged\rb\nc\n\u{1F600}\nmore";
            let old = encode(old_text, encoding).unwrap();
            let decoded = decode(&old);
            assert_eq!(decoded.text, old_text);
            let (_, kept) = crate::diff::diff_keeping(
                old_text,
                new_text,
                "f",
                &crate::diff::DiffLimits::default(),
            );
            let codec = line_by_line(encoding).unwrap();
            let (mark, starts) = old_lines(codec, &old).unwrap();
            let written = encode_keeping(new_text, codec, &old, (mark, &starts), &kept)
                .unwrap()
                .unwrap();
            assert_eq!(written, encode(new_text, encoding).unwrap().into_owned());
            // UTF-16 has one encoding per character, so the output above
            // cannot tell copied lines from encoded ones. Hand it old bytes
            // whose kept lines hold other text (marked in capitals): what
            // comes out for them is what was in `old`, so it was copied.
            let marked_old =
                encode("A\u{A0D}\r\n\u{D0A}\u{10A}\rB\nC\n\u{1F600}", encoding).unwrap();
            let (mark, starts) = old_lines(codec, &marked_old).unwrap();
            let written = encode_keeping(new_text, codec, &marked_old, (mark, &starts), &kept)
                .unwrap()
                .unwrap();
            let copied = encode("A\u{A0D}\r\nchanged\rB\nC\n\u{1F600}\nmore", encoding).unwrap();
            assert_eq!(written, copied.into_owned(), "{encoding:?}");
        }
        let le = |text: &str| encode(text, TextEncoding::Utf16Le).unwrap()[2..].to_vec();
        assert_eq!(
            unit_line_starts(&le("\u{A0D}\r\n\u{D0A}\rb\n"), true),
            [0, 6, 10, 14]
        );
    }

    #[test]
    fn kept_lines_keep_their_bytes_and_changed_lines_are_encoded() {
        // 0xEEEF (NEC-selected IBM extensions) and 0xFA40 (IBM extensions)
        // both decode to U+2170; encoding U+2170 gives 0xFA40.
        let sjis = encoding_rs::SHIFT_JIS;
        assert_eq!(sjis.decode_without_bom_handling(b"\xEE\xEF").0, "\u{2170}");
        assert_eq!(&*sjis.encode("\u{2170}").0, b"\xFA\x40");
        let old = b"one\r\n\xEE\xEF two\rthree\nfour\n";
        let written = keeping(old, sjis, "one\r\n\u{2170} two\rTHREE \u{2170}\nfour\n").unwrap();
        assert_eq!(written, b"one\r\n\xEE\xEF two\rTHREE \xFA\x40\nfour\n");
        // Lines added at either end, a last line without a newline.
        let written = keeping(b"b\nc", sjis, "a\nb\nc\nd").unwrap();
        assert_eq!(written, b"a\nb\nc\nd");
        assert_eq!(keeping(b"x\n", sjis, "").unwrap(), b"");
        assert_eq!(keeping(b"", sjis, "y\n").unwrap(), b"y\n");
    }

    #[test]
    fn a_changed_line_that_cannot_be_encoded_is_named_by_its_line_in_the_content() {
        let old = b"caf\xE9\nb\nc\n";
        let err =
            keeping(old, encoding_rs::WINDOWS_1252, "caf\u{e9}\nb\nc \u{2603}\n").unwrap_err();
        assert_eq!(err.character, '\u{2603}');
        assert_eq!(err.line, 3);
        assert_eq!(err.encoding, "windows-1252");
    }

    #[test]
    fn line_starts_end_lines_where_the_diff_does() {
        assert_eq!(line_starts(b""), [0]);
        assert_eq!(line_starts(b"a"), [0, 1]);
        assert_eq!(line_starts(b"a\n"), [0, 2]);
        assert_eq!(
            line_starts(b"a\r\nb\rc\n\r\r\n\nd"),
            [0, 3, 5, 7, 8, 10, 11, 12]
        );
    }
}
