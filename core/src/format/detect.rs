//! Which encoding an old file is in: UTF-8 (with or without a mark), UTF-16
//! by its mark, ISO-2022-JP by its escape sequences, or the legacy encoding
//! `chardetng` finds most likely (a guess, which `settle` checks against
//! the content the agent sends).

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE};

use super::settle::CANDIDATES;
use super::utf16::decode_utf16;
use super::{BOM_CHAR, Certainty, Decoded, TextEncoding};

/// Read `bytes` as text in the encoding they were written in.
pub fn decode(bytes: &[u8]) -> Decoded<'_> {
    // The common case first: plain UTF-8. simdutf8 checks 16 bytes at a
    // time with WebAssembly SIMD, where std goes a word at a time on wasm32
    // (BENCHMARKS.md#the-utf-8-check-of-the-old-file). It reads the whole
    // file before it answers, so a file whose start shows it is not UTF-8
    // skips it.
    if !visibly_not_utf8(bytes)
        && let Ok(text) = simdutf8::basic::from_utf8(bytes)
    {
        if let Some(jis) = iso_2022_jp(bytes) {
            return jis;
        }
        return match text.strip_prefix(BOM_CHAR) {
            Some(rest) => Decoded {
                text: Cow::Borrowed(rest),
                encoding: Some(TextEncoding::Utf8 { bom: true }),
                certainty: Certainty::Known,
            },
            None => Decoded {
                text: Cow::Borrowed(text),
                encoding: Some(TextEncoding::PLAIN),
                certainty: Certainty::Known,
            },
        };
    }
    let (encoding, body, certainty) = match bytes {
        [0xFF, 0xFE, rest @ ..] => (TextEncoding::Utf16Le, rest, Certainty::Known),
        [0xFE, 0xFF, rest @ ..] => (TextEncoding::Utf16Be, rest, Certainty::Known),
        _ if memchr::memchr(0, bytes).is_some() || damaged_utf8(bytes) => return not_text(bytes),
        _ => {
            let (guess, confident) = detect(bytes);
            if guess == encoding_rs::UTF_8 || guess == UTF_16LE || guess == UTF_16BE {
                return not_text(bytes);
            }
            let certainty = if confident {
                Certainty::Confident
            } else {
                Certainty::Unsure
            };
            (TextEncoding::Legacy(guess), bytes, certainty)
        }
    };
    let text = match encoding {
        TextEncoding::Utf16Le => decode_utf16(body, true),
        TextEncoding::Utf16Be => decode_utf16(body, false),
        TextEncoding::Legacy(codec) => codec
            .decode_without_bom_handling_and_without_replacement(body)
            .map(Cow::into_owned),
        TextEncoding::Utf8 { .. } => unreachable!("UTF-8 was decoded above"),
    };
    match text {
        Some(text) => Decoded {
            text: Cow::Owned(text),
            encoding: Some(encoding),
            certainty,
        },
        // The guess cannot read the file: the first other encoding that
        // can is as good a guess, and no surer.
        None if matches!(encoding, TextEncoding::Legacy(_)) => CANDIDATES
            .iter()
            .find_map(|&candidate| {
                let text = candidate.decode_without_bom_handling_and_without_replacement(bytes)?;
                Some(Decoded {
                    text: Cow::Owned(text.into_owned()),
                    encoding: Some(TextEncoding::Legacy(candidate)),
                    certainty: Certainty::Unsure,
                })
            })
            .unwrap_or_else(|| not_text(bytes)),
        None => not_text(bytes),
    }
}

/// ISO-2022-JP: 7-bit bytes (so valid UTF-8) with the escape sequences
/// that switch to its JIS character sets, read as such when they decode.
/// Its escapes say what it is: no guess.
fn iso_2022_jp(bytes: &[u8]) -> Option<Decoded<'_>> {
    memchr::memchr(0x1B, bytes)?;
    let escapes: [&[u8]; 4] = [b"\x1b$B", b"\x1b$@", b"\x1b(J", b"\x1b(I"];
    if !escapes
        .iter()
        .any(|escape| memchr::memmem::find(bytes, escape).is_some())
    {
        return None;
    }
    let codec = encoding_rs::ISO_2022_JP;
    let text = codec.decode_without_bom_handling_and_without_replacement(bytes)?;
    Some(Decoded {
        text: Cow::Owned(text.into_owned()),
        encoding: Some(TextEncoding::Legacy(codec)),
        certainty: Certainty::Known,
    })
}

/// Whether the start of `bytes` shows they are not UTF-8: the first
/// non-ASCII byte in the first 4 KiB starts no valid UTF-8 sequence (a
/// UTF-16 mark, `FF FE` or `FE FF`, is such a byte; so is an accented
/// letter in most legacy encodings). `false` says nothing.
fn visibly_not_utf8(bytes: &[u8]) -> bool {
    const HEAD: usize = 4096;
    let first = Encoding::ascii_valid_up_to(&bytes[..bytes.len().min(HEAD)]);
    let character = &bytes[first..bytes.len().min(first + 4)];
    matches!(std::str::from_utf8(character), Err(e) if e.valid_up_to() == 0 && e.error_len().is_some())
}

/// How much the detector reads at most: it costs time in proportion to
/// what it reads (BENCHMARKS.md#files-that-keep-their-format).
const DETECTION_BYTES: usize = 16 << 10;

/// After how many non-ASCII bytes the detector has read enough: a
/// paragraph of accented or Cyrillic text, a hundred CJK characters.
const DETECTION_NON_ASCII: usize = 256;

/// How far before a line's first non-ASCII byte the detector starts
/// reading, at most.
const DETECTION_CONTEXT: usize = 256;

/// Whether `byte` ends a word for the detector: a space, a digit or
/// punctuation. No encoding it knows uses such a byte inside a double-byte
/// character, so a piece may start after one or end with one.
fn word_break(byte: u8) -> bool {
    byte < 0x40
}

/// The legacy encoding `bytes` (not UTF-8) are most likely in.
///
/// The detector reads only the lines that hold non-ASCII bytes, wherever
/// they are in the file, and of each such line only the words from the
/// first non-ASCII byte's to the last one's: pairs of ASCII bytes tell it
/// nothing (it scores a pair only when one byte is not ASCII, and starts
/// each word afresh), so a file of code with a few accented comments is
/// judged on all of them rather than on the first few, and the ASCII rest
/// of a line costs no time. A piece cut short by [`DETECTION_BYTES`] ends
/// after a word break.
///
/// Also whether the detector is sure: it found the guess likelier than
/// some other encoding, on at least [`SURE_NON_ASCII`] non-ASCII bytes (a
/// word or two of Chinese, or a few accents, fit several encodings alike).
fn detect(bytes: &[u8]) -> (&'static Encoding, bool) {
    let mut detector = chardetng::EncodingDetector::new();
    let (mut fed, mut non_ascii, mut at) = (0, 0, 0);
    while fed < DETECTION_BYTES && non_ascii < DETECTION_NON_ASCII {
        // Everything from `at` to `hit` is ASCII: any byte there starts a
        // character.
        let hit = at + Encoding::ascii_valid_up_to(&bytes[at..]);
        if hit == bytes.len() {
            break;
        }
        let line_start = memchr::memrchr(b'\n', &bytes[at..hit]).map_or(at, |i| at + i + 1);
        let word_start = bytes[line_start..hit]
            .iter()
            .rposition(|&b| word_break(b))
            .map_or(line_start, |i| line_start + i + 1);
        let start = word_start.max(hit.saturating_sub(DETECTION_CONTEXT));
        let line_end = memchr::memchr(b'\n', &bytes[hit..]).map_or(bytes.len(), |i| hit + i + 1);
        let last = hit
            + bytes[hit..line_end]
                .iter()
                .rposition(|b| !b.is_ascii())
                .expect("the byte at `hit` is not ASCII");
        let word_end = bytes[last..line_end]
            .iter()
            .position(|&b| word_break(b))
            .map_or(line_end, |i| last + i + 1);
        let mut end = word_end.min(start + (DETECTION_BYTES - fed));
        if end <= hit {
            break;
        }
        if end < word_end {
            end = bytes[hit..end]
                .iter()
                .rposition(|&b| word_break(b))
                .map_or(end, |i| hit + i + 1);
        }
        let piece = &bytes[start..end];
        detector.feed(piece, false);
        fed += piece.len();
        non_ascii += count_non_ascii(piece);
        at = line_end;
    }
    detector.feed(&[], true);
    let (guess, likelier) = detector.guess_assess(None, false);
    (guess, likelier && non_ascii >= SURE_NON_ASCII)
}

/// How many non-ASCII bytes the detector must have read to be sure.
const SURE_NON_ASCII: usize = 32;

/// Whether `bytes` (not valid UTF-8) are UTF-8 with damaged bytes rather
/// than text in a legacy encoding: they hold at least as many valid
/// multi-byte UTF-8 characters as stray non-ASCII bytes. Written back in a
/// legacy encoding, such a file would have every character turned into
/// mojibake. Legacy text forms such characters only by chance: rarely in
/// single-byte encodings, now and then in double-byte ones (Shift_JIS
/// `です` holds one), never in the majority.
///
/// A first pass per block looks only for a lead byte followed by a
/// continuation byte, a test on byte pairs that compiles to SIMD; only
/// blocks where one occurs are read character by character.
fn damaged_utf8(bytes: &[u8]) -> bool {
    const BLOCK: usize = 4096;
    let (mut characters, mut character_bytes, mut non_ascii) = (0, 0, 0);
    let mut start = 0;
    while start < bytes.len() {
        let end = (start + BLOCK).min(bytes.len());
        non_ascii += count_non_ascii(&bytes[start..end]);
        // The pairs whose first byte is in this block.
        let leads = &bytes[start..end.min(bytes.len() - 1)];
        let nexts = &bytes[start + 1..(end + 1).min(bytes.len())];
        if any_utf8_pair(leads, nexts) {
            for at in start..start + leads.len() {
                if utf8_pair(bytes[at], bytes[at + 1]) != 0
                    && let Some(len) = character_at(bytes, at)
                {
                    characters += 1;
                    character_bytes += len;
                }
            }
        }
        start = end;
    }
    characters > 0 && characters >= non_ascii - character_bytes
}

/// How many bytes the loops over a whole file take per step. A loop over a
/// fixed-size piece is unrolled into straight SIMD code with no loop
/// back-edge inside, and in the component every back-edge checks the
/// call's time bound (an epoch check): with a step of one vector, those
/// checks, not the test itself, were most of [`damaged_utf8`]'s time
/// (BENCHMARKS.md#files-that-keep-their-format).
const PIECE: usize = 64;

/// 1 when `lead` and `next` can start a multi-byte UTF-8 character.
fn utf8_pair(lead: u8, next: u8) -> u8 {
    u8::from(lead >= 0xC2) & u8::from(next & 0xC0 == 0x80)
}

/// Whether any `leads[i]`, `nexts[i]` can start a multi-byte UTF-8
/// character.
fn any_utf8_pair(leads: &[u8], nexts: &[u8]) -> bool {
    let any = |leads: &[u8], nexts: &[u8]| {
        leads
            .iter()
            .zip(nexts)
            .fold(0, |any, (&l, &n)| any | utf8_pair(l, n))
    };
    let ((lead_pieces, lead_rest), (next_pieces, next_rest)) =
        (leads.as_chunks::<PIECE>(), nexts.as_chunks::<PIECE>());
    lead_pieces
        .iter()
        .zip(next_pieces)
        .fold(0, |found, (l, n)| found | any(l, n))
        | any(lead_rest, next_rest)
        != 0
}

/// The bytes of `bytes` that are not ASCII, counted a piece at a time in a
/// byte-wide count (a `usize` count per byte widens every SIMD lane).
fn count_non_ascii(bytes: &[u8]) -> usize {
    let (pieces, rest) = bytes.as_chunks::<PIECE>();
    let in_pieces: usize = pieces
        .iter()
        .map(|piece| usize::from(piece.iter().fold(0u8, |n, &b| n + (b >> 7))))
        .sum();
    in_pieces + rest.iter().filter(|b| !b.is_ascii()).count()
}

/// The length of the valid multi-byte UTF-8 character at `at`, if one is
/// there.
fn character_at(bytes: &[u8], at: usize) -> Option<usize> {
    let len = match bytes[at] {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return None,
    };
    let character = bytes.get(at..at + len)?;
    std::str::from_utf8(character).is_ok().then_some(len)
}

/// Bytes that are not text: shown lossily, replaced as given.
fn not_text(bytes: &[u8]) -> Decoded<'_> {
    Decoded {
        text: String::from_utf8_lossy(bytes),
        encoding: None,
        certainty: Certainty::Known,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::*;

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

    /// `text` in `encoding`, which can encode all of it.
    fn legacy(text: &str, encoding: &'static Encoding) -> Vec<u8> {
        let (bytes, _, unmappable) = encoding.encode(text);
        assert!(!unmappable);
        bytes.into_owned()
    }

    #[test]
    fn detection_reads_every_line_with_non_ascii_bytes() {
        // A copyright sign in the header, then more than a detection
        // budget of plain code before the Russian comments: a window after
        // the first non-ASCII byte would see only the sign.
        let mut text = String::from("// \u{a9} 2024\n");
        for i in 0..2000 {
            text.push_str(&format!("let value_{i} = compute({i});\n"));
            if i >= 1000 && i % 50 == 49 {
                text.push_str("// \u{41f}\u{440}\u{438}\u{432}\u{435}\u{442}, \u{43c}\u{438}\u{440}: \u{44d}\u{442}\u{43e} \u{43f}\u{440}\u{43e}\u{432}\u{435}\u{440}\u{43a}\u{430} \u{43a}\u{43e}\u{434}\u{438}\u{440}\u{43e}\u{432}\u{43a}\u{438}\n");
            }
        }
        assert!(text.find('\u{41f}').expect("comments") > DETECTION_BYTES + 1024);
        // chardetng names KOI8-R by its superset KOI8-U, which decodes
        // Russian the same.
        for (encoding, detected) in [
            (encoding_rs::WINDOWS_1251, encoding_rs::WINDOWS_1251),
            (encoding_rs::KOI8_R, encoding_rs::KOI8_U),
        ] {
            let bytes = legacy(&text, encoding);
            let decoded = decode(&bytes);
            assert_eq!(decoded.encoding, Some(TextEncoding::Legacy(detected)));
            assert_eq!(decoded.text, text);
        }
    }

    #[test]
    fn detection_reads_the_words_around_non_ascii_bytes_not_whole_lines() {
        // Long lines of code, each with one copyright sign in the middle,
        // then Russian comments: whole lines would spend the detector's
        // budget on the ASCII around the signs before the comments.
        let mut text = String::new();
        for _ in 0..40 {
            text.push_str(&format!("{} \u{a9} {}\n", "x".repeat(600), "y".repeat(600)));
        }
        assert!(text.len() > 2 * DETECTION_BYTES);
        for _ in 0..10 {
            text.push_str("// \u{41f}\u{440}\u{438}\u{432}\u{435}\u{442}, \u{43c}\u{438}\u{440}: \u{44d}\u{442}\u{43e} \u{43f}\u{440}\u{43e}\u{432}\u{435}\u{440}\u{43a}\u{430}\n");
        }
        let bytes = legacy(&text, encoding_rs::WINDOWS_1251);
        assert_eq!(detect(&bytes).0, encoding_rs::WINDOWS_1251);
    }

    #[test]
    fn a_long_line_is_cut_between_characters() {
        // One line of Japanese longer than the detector reads, with a
        // space now and then: cut inside a double-byte character, the
        // right encoding would look invalid.
        let text = "\u{65e5}\u{672c}\u{8a9e}\u{306e}\u{6587}\u{7ae0}\u{3067}\u{3059}\u{3002} "
            .repeat(2000)
            + "\n";
        assert!(text.len() > 2 * DETECTION_BYTES);
        for encoding in [encoding_rs::SHIFT_JIS, encoding_rs::EUC_JP] {
            let bytes = legacy(&text, encoding);
            let decoded = decode(&bytes);
            assert_eq!(decoded.encoding, Some(TextEncoding::Legacy(encoding)));
        }
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
    fn damaged_utf8_is_told_from_legacy_text_by_majority() {
        // Legacy bytes first, one UTF-8 character far after them (past a
        // detection sample, and at the very end, cut or whole).
        let mut legacy = b"caf\xE9 cr\xE8me\n".repeat(4000);
        assert!(!damaged_utf8(&legacy));
        assert!(!damaged_utf8(b"\xE2\x82"));
        assert!(!damaged_utf8(b"\xC3\x28\xA9"));
        // A UTF-8 character by chance among legacy bytes.
        legacy.extend_from_slice("\u{20ac}".as_bytes());
        assert!(!damaged_utf8(&legacy));
        // UTF-8 text with a stray byte, wherever it is.
        let mut utf8 = "caf\u{e9} cr\u{e8}me\n".repeat(4000).into_bytes();
        utf8.push(0xE9);
        assert!(damaged_utf8(&utf8));
        utf8.rotate_right(1);
        assert!(damaged_utf8(&utf8));
        assert!(damaged_utf8(b"x\xFF\xC3\xA9"));
        assert!(damaged_utf8(b"\xFF\xF0\x9F\x98\x80!"));
        assert!(!damaged_utf8(b"\xFF\xFE\xC3\xA9"));
    }

    proptest::proptest! {
        // Lengths across several pieces, bytes from the classes that
        // matter (ASCII, continuation, lead, neither).
        #[test]
        fn piecewise_scans_agree_with_byte_by_byte(
            bytes in proptest::collection::vec(
                proptest::sample::select(vec![b'a', 0x80, 0xBF, 0xC2, 0xE9, 0xFF]),
                0..3 * PIECE + 5,
            ),
        ) {
            let naive = bytes.iter().filter(|b| !b.is_ascii()).count();
            proptest::prop_assert_eq!(count_non_ascii(&bytes), naive);
            if !bytes.is_empty() {
                let (leads, nexts) = (&bytes[..bytes.len() - 1], &bytes[1..]);
                let naive = leads.iter().zip(nexts).any(|(&l, &n)| utf8_pair(l, n) != 0);
                proptest::prop_assert_eq!(any_utf8_pair(leads, nexts), naive);
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn visibly_not_utf8_only_for_what_is_not_utf8(
            head in proptest::collection::vec(
                proptest::sample::select(vec![b'a', b'\n', 0x80, 0xA9, 0xC3, 0xE2, 0xF0, 0xFE, 0xFF]),
                0..12,
            ),
            ascii in 0..4200usize,
        ) {
            let mut bytes = vec![b'a'; ascii];
            bytes.extend_from_slice(&head);
            if visibly_not_utf8(&bytes) {
                proptest::prop_assert!(std::str::from_utf8(&bytes).is_err());
            }
        }
    }

    #[test]
    fn what_starts_visibly_not_utf8() {
        assert!(visibly_not_utf8(b"\xFF\xFEa\0"));
        assert!(visibly_not_utf8(b"\xFE\xFF\0a"));
        assert!(visibly_not_utf8(b"caf\xE9 cr\xE8me\n"));
        assert!(!visibly_not_utf8(b"caf\xC3\xA9 \xF0\x9F\x98\x80 \xFF"));
        assert!(!visibly_not_utf8(b""));
        assert!(!visibly_not_utf8(b"caf\xC3"));
        let mut late = vec![b'a'; 5000];
        late.extend_from_slice(b"\xE9t\n");
        assert!(!visibly_not_utf8(&late));
        late.drain(..1000);
        assert!(visibly_not_utf8(&late));
    }

    #[test]
    fn a_character_across_a_piece_boundary_is_found() {
        for at in [PIECE - 2, PIECE - 1, PIECE, 4095, 4096] {
            let mut bytes = vec![b'a'; 4200];
            bytes[at..at + 2].copy_from_slice("\u{e9}".as_bytes());
            bytes[100] = 0xFF;
            assert!(damaged_utf8(&bytes), "at {at}");
        }
    }
}
