//! The old file's format, kept (`docs/contract.md#format`): its encoding,
//! its byte-order mark and its line endings are read from the old bytes,
//! the content is diffed as text, and the new text is written back in the
//! same form.
//!
//! - UTF-8, with or without a BOM; UTF-16 LE/BE with their BOM; any other
//!   encoding `chardetng` recognises, decoded and encoded by `encoding_rs`.
//! - Line endings: when every line of the old file ends in CRLF, the
//!   content's bare LFs become CRLF; when every line ends in a bare LF, the
//!   content's CRLFs become LF. Mixed endings, lone CRs or an old file of
//!   one line say nothing, and the content's endings are kept as given.
//! - An old file that is not text (a NUL byte outside UTF-16, or bytes its
//!   detected encoding cannot decode) is shown lossily in the diff and
//!   replaced by the content as UTF-8, as given.

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE};

/// The UTF-8 byte-order mark.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
/// U+FEFF, the byte-order mark as a character.
const BOM_CHAR: char = '\u{FEFF}';

/// How a file's text is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEncoding {
    /// UTF-8, with or without a byte-order mark.
    Utf8 {
        /// Whether the file starts with `EF BB BF`.
        bom: bool,
    },
    /// UTF-16 little-endian, with its byte-order mark.
    Utf16Le,
    /// UTF-16 big-endian, with its byte-order mark.
    Utf16Be,
    /// Another encoding (never UTF-8 or UTF-16), without a byte-order mark.
    Legacy(&'static Encoding),
}

impl TextEncoding {
    /// The encoding's name as the envelope reports it: WHATWG's canonical
    /// name, lowercase (`utf-8`, `utf-16le`, `windows-1252`, `shift_jis`).
    pub fn name(self) -> String {
        match self {
            TextEncoding::Utf8 { .. } => "utf-8".to_owned(),
            TextEncoding::Utf16Le => "utf-16le".to_owned(),
            TextEncoding::Utf16Be => "utf-16be".to_owned(),
            TextEncoding::Legacy(encoding) => encoding.name().to_ascii_lowercase(),
        }
    }

    /// Whether the file starts with a byte-order mark.
    pub fn bom(self) -> bool {
        match self {
            TextEncoding::Utf8 { bom } => bom,
            TextEncoding::Utf16Le | TextEncoding::Utf16Be => true,
            TextEncoding::Legacy(_) => false,
        }
    }

    /// Plain UTF-8 without a mark: the content's own form.
    pub const PLAIN: TextEncoding = TextEncoding::Utf8 { bom: false };
}

/// The old file read as text.
#[derive(Debug)]
pub struct Decoded<'a> {
    /// The text, without its byte-order mark.
    pub text: Cow<'a, str>,
    /// How it was stored; `None` when the file is not text.
    pub encoding: Option<TextEncoding>,
}

/// Read `bytes` as text in the encoding they were written in.
pub fn decode(bytes: &[u8]) -> Decoded<'_> {
    // The common case first: plain UTF-8 (simdutf8: WebAssembly SIMD in
    // the component, BENCHMARKS.md item 13).
    if let Ok(text) = simdutf8::basic::from_utf8(bytes) {
        return match text.strip_prefix(BOM_CHAR) {
            Some(rest) => Decoded {
                text: Cow::Borrowed(rest),
                encoding: Some(TextEncoding::Utf8 { bom: true }),
            },
            None => Decoded {
                text: Cow::Borrowed(text),
                encoding: Some(TextEncoding::PLAIN),
            },
        };
    }
    let (encoding, body) = match bytes {
        [0xFF, 0xFE, rest @ ..] => (TextEncoding::Utf16Le, rest),
        [0xFE, 0xFF, rest @ ..] => (TextEncoding::Utf16Be, rest),
        _ if memchr::memchr(0, bytes).is_some() || damaged_utf8(bytes) => return not_text(bytes),
        _ => {
            let mut detector = chardetng::EncodingDetector::new();
            detector.feed(detection_sample(bytes), true);
            let guess = detector.guess(None, false);
            if guess == encoding_rs::UTF_8 || guess == UTF_16LE || guess == UTF_16BE {
                return not_text(bytes);
            }
            (TextEncoding::Legacy(guess), bytes)
        }
    };
    let codec = match encoding {
        TextEncoding::Utf16Le => UTF_16LE,
        TextEncoding::Utf16Be => UTF_16BE,
        TextEncoding::Legacy(codec) => codec,
        TextEncoding::Utf8 { .. } => unreachable!("UTF-8 was decoded above"),
    };
    match codec.decode_without_bom_handling_and_without_replacement(body) {
        Some(text) => Decoded {
            text: Cow::Owned(text.into_owned()),
            encoding: Some(encoding),
        },
        None => not_text(bytes),
    }
}

/// How much text around the first non-ASCII byte the detector reads: it
/// costs time in proportion to what it reads (BENCHMARKS.md), and 16 KiB of a file's own
/// language decide its encoding as well as the whole file does.
const DETECTION_SAMPLE: usize = 16 << 10;

/// The part of `bytes` the detector reads: from a little before the first
/// non-ASCII byte (ASCII tells nothing), [`DETECTION_SAMPLE`] bytes.
fn detection_sample(bytes: &[u8]) -> &[u8] {
    let first = bytes.iter().position(|b| !b.is_ascii()).unwrap_or(0);
    let start = first.saturating_sub(1024);
    &bytes[start..bytes.len().min(start + DETECTION_SAMPLE)]
}

/// Whether `bytes` (not valid UTF-8) hold valid multi-byte UTF-8 all the
/// same: UTF-8 with a few damaged bytes, not a legacy encoding, which
/// almost never forms such sequences by chance. Written back in a legacy
/// encoding it would turn every such character into mojibake.
fn damaged_utf8(bytes: &[u8]) -> bool {
    bytes.utf8_chunks().any(|chunk| !chunk.valid().is_ascii())
}

/// Bytes that are not text: shown lossily, replaced as given.
fn not_text(bytes: &[u8]) -> Decoded<'_> {
    Decoded {
        text: String::from_utf8_lossy(bytes),
        encoding: None,
    }
}

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
        // web), so UTF-16 is written with std's own encoder.
        TextEncoding::Utf16Le | TextEncoding::Utf16Be => {
            let little = encoding == TextEncoding::Utf16Le;
            let mut units = vec![0u16; text.len() + 2];
            units[0] = 0xFEFF;
            let len = 1 + encoding_rs::mem::convert_str_to_utf16(text, &mut units[1..]);
            let mut out = vec![0u8; 2 * len];
            for (pair, unit) in out.chunks_exact_mut(2).zip(&units[..len]) {
                pair.copy_from_slice(&if little {
                    unit.to_le_bytes()
                } else {
                    unit.to_be_bytes()
                });
            }
            Ok(Cow::Owned(out))
        }
        TextEncoding::Legacy(codec) => encode_legacy(text, codec),
    }
}

fn encode_legacy<'a>(text: &str, codec: &'static Encoding) -> Result<Cow<'a, [u8]>, Unencodable> {
    use encoding_rs::EncoderResult;
    let mut encoder = codec.new_encoder();
    let mut out = Vec::with_capacity(
        encoder
            .max_buffer_length_from_utf8_without_replacement(text.len())
            .unwrap_or(text.len()),
    );
    let mut read = 0;
    loop {
        let (result, consumed) =
            encoder.encode_from_utf8_to_vec_without_replacement(&text[read..], &mut out, true);
        read += consumed;
        match result {
            EncoderResult::InputEmpty => return Ok(Cow::Owned(out)),
            EncoderResult::OutputFull => out.reserve(text.len() - read + 16),
            EncoderResult::Unmappable(character) => {
                let before = &text.as_bytes()[..read];
                return Err(Unencodable {
                    encoding: TextEncoding::Legacy(codec).name(),
                    character,
                    line: memchr::memchr_iter(b'\n', before).count() as u64 + 1,
                });
            }
        }
    }
}

/// `content` without a leading U+FEFF, when the file's encoding writes its
/// own byte-order mark (the mark is the file's, not a character of text).
pub fn strip_bom(content: &str, encoding: TextEncoding) -> &str {
    if encoding.bom() {
        content.strip_prefix(BOM_CHAR).unwrap_or(content)
    } else {
        content
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn utf16_round_trips_with_its_bom() {
        for encoding in [TextEncoding::Utf16Le, TextEncoding::Utf16Be] {
            let bytes = encode("h\u{e9}llo \u{1F600}\r\n", encoding).unwrap();
            let decoded = decode(&bytes);
            assert_eq!(decoded.encoding, Some(encoding));
            assert_eq!(decoded.text, "h\u{e9}llo \u{1F600}\r\n");
        }
        assert_eq!(
            encode("A", TextEncoding::Utf16Le).unwrap(),
            &b"\xFF\xFEA\x00"[..]
        );
        assert_eq!(
            encode("A", TextEncoding::Utf16Be).unwrap(),
            &b"\xFE\xFF\x00A"[..]
        );
    }

    #[test]
    fn legacy_text_is_detected_and_written_back() {
        let bytes = b"caf\xE9 cr\xE8me br\xFBl\xE9e, na\xEFve fa\xE7ade\n";
        let decoded = decode(bytes);
        let encoding = decoded.encoding.expect("text");
        assert_eq!(encoding.name(), "windows-1252");
        assert_eq!(decoded.text, "café crème brûlée, naïve façade\n");
        assert_eq!(encode(&decoded.text, encoding).unwrap(), &bytes[..]);
        let err = encode("ok\nstill ok\n\u{142}\n", encoding).unwrap_err();
        assert_eq!(
            err,
            Unencodable {
                encoding: "windows-1252".into(),
                character: '\u{142}',
                line: 3
            }
        );
    }

    #[test]
    fn binary_and_damaged_utf8_are_not_text() {
        assert_eq!(decode(b"\x00\x01\xFF\xFE\x80").encoding, None);
        assert_eq!(
            decode("café \u{20ac}\n".as_bytes()).encoding,
            Some(TextEncoding::PLAIN)
        );
        assert_eq!(decode(b"caf\xC3\xA9 \xFF\n").encoding, None);
        assert_eq!(decode(b"PK\x03\x04\x00\x00\xC3\x28").encoding, None);
    }

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
