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

use crate::diff::Keeping;

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
    // the component, BENCHMARKS.md item 13). It reads the whole file before
    // it answers, so a file whose start shows it is not UTF-8 skips it.
    if !visibly_not_utf8(bytes)
        && let Ok(text) = simdutf8::basic::from_utf8(bytes)
    {
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
            let guess = detect(bytes);
            if guess == encoding_rs::UTF_8 || guess == UTF_16LE || guess == UTF_16BE {
                return not_text(bytes);
            }
            (TextEncoding::Legacy(guess), bytes)
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
        },
        None => not_text(bytes),
    }
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

/// `bytes` (UTF-16 after its mark) as text; `None` when they are not
/// UTF-16 (an odd length, a lone surrogate).
///
/// A piece at a time through `encoding_rs`'s `mem` converters, whose ASCII
/// path takes a word at a time; its UTF-16 decoder takes a byte at a time.
fn decode_utf16(bytes: &[u8], little: bool) -> Option<String> {
    let (pairs, []) = bytes.as_chunks::<2>() else {
        return None;
    };
    let unit = |pair: &[u8; 2]| {
        if little {
            u16::from_le_bytes(*pair)
        } else {
            u16::from_be_bytes(*pair)
        }
    };
    let mut text = String::with_capacity(pairs.len());
    let mut units = [0u16; UTF16_PIECE];
    // Room for a piece at the most UTF-8 bytes a unit makes.
    let mut piece_text = "\0".repeat(3 * UTF16_PIECE);
    let mut rest = pairs;
    while !rest.is_empty() {
        let mut len = rest.len().min(UTF16_PIECE);
        // A surrogate pair is never split between pieces.
        if len < rest.len() && (0xD800..0xDC00).contains(&unit(&rest[len - 1])) {
            len -= 1;
        }
        let (piece, tail) = rest.split_at(len);
        for (unit_slot, pair) in units.iter_mut().zip(piece) {
            *unit_slot = unit(pair);
        }
        let units = &units[..len];
        if encoding_rs::mem::utf16_valid_up_to(units) != len {
            return None;
        }
        let written = encoding_rs::mem::convert_utf16_to_str(units, &mut piece_text);
        text.push_str(&piece_text[..written]);
        rest = tail;
    }
    Some(text)
}

/// How much the detector reads at most: it costs time in proportion to
/// what it reads (BENCHMARKS.md, "Files that keep their format").
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
fn detect(bytes: &[u8]) -> &'static Encoding {
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
    detector.guess(None, false)
}

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
/// call's time bound (an epoch check): with a step of one vector those
/// checks took three quarters of [`damaged_utf8`]'s time (BENCHMARKS.md,
/// "Files that keep their format").
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

/// Append `text` in UTF-16 to `out`, a piece at a time.
fn push_utf16(out: &mut Vec<u8>, text: &str, little: bool) {
    let mut units = [0u16; UTF16_PIECE + 1];
    let mut rest = text;
    while !rest.is_empty() {
        let (piece, tail) = rest.split_at(rest.floor_char_boundary(UTF16_PIECE));
        let len = encoding_rs::mem::convert_str_to_utf16(piece, &mut units);
        push_units(out, &units[..len], little);
        rest = tail;
    }
}

/// Append `units` to `out` in little- or big-endian order.
fn push_units(out: &mut Vec<u8>, units: &[u16], little: bool) {
    let start = out.len();
    out.resize(start + 2 * units.len(), 0);
    let pairs = out[start..].chunks_exact_mut(2).zip(units);
    // One loop per order, so that each compiles to plain stores.
    if little {
        pairs.for_each(|(pair, unit)| pair.copy_from_slice(&unit.to_le_bytes()));
    } else {
        pairs.for_each(|(pair, unit)| pair.copy_from_slice(&unit.to_be_bytes()));
    }
}

/// How many bytes of text [`encode`] converts to UTF-16 at a time.
const UTF16_PIECE: usize = 4096;

fn encode_legacy<'a>(text: &str, codec: &'static Encoding) -> Result<Cow<'a, [u8]>, Unencodable> {
    let mut out = Vec::new();
    push_legacy(&mut out, text, 0, codec).map_err(|at| unencodable(text, at, codec))?;
    Ok(Cow::Owned(out))
}

/// Append `text[from..]` in `codec` to `out`; `Err` holds where in `text`
/// the first character `codec` cannot encode starts.
fn push_legacy(
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
fn unencodable(text: &str, at: usize, codec: &'static Encoding) -> Unencodable {
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

/// `new` in `codec`, with the runs of lines in `kept` copied from `old`
/// (the old file, in `codec`, its lines numbered from 0) instead of being
/// encoded again: the lines the content leaves as they were keep their
/// bytes, and only the rest is converted. `None` when `old` does not split
/// into as many lines as the diff's old text.
pub fn encode_keeping(
    new: &str,
    codec: LineCodec,
    old: &[u8],
    kept: &Keeping,
) -> Option<Result<Vec<u8>, Unencodable>> {
    // The byte-order mark, then the lines.
    let (mark, starts) = match codec {
        LineCodec::Legacy(_) => (0, line_starts(old)),
        LineCodec::Utf16 { little } => (2, unit_line_starts(old.get(2..)?, little)),
    };
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
fn line_starts(bytes: &[u8]) -> Vec<usize> {
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
    fn long_utf16_matches_std_across_pieces() {
        // Characters of every UTF-8 length, so that some straddle the
        // pieces the encoder converts at a time.
        let text = "ab\u{e9}\u{20ac}\u{1F600}\n".repeat(3 * UTF16_PIECE / 7);
        let units = std::iter::once(0xFEFF).chain(text.encode_utf16());
        let le: Vec<u8> = units.clone().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = units.flat_map(u16::to_be_bytes).collect();
        assert_eq!(encode(&text, TextEncoding::Utf16Le).unwrap(), &le[..]);
        assert_eq!(encode(&text, TextEncoding::Utf16Be).unwrap(), &be[..]);
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
        assert_eq!(detect(&bytes), encoding_rs::WINDOWS_1251);
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

    /// The old file's bytes and the content's text, through the diff and
    /// [`encode_keeping`].
    fn keeping(old: &[u8], codec: &'static Encoding, new: &str) -> Result<Vec<u8>, Unencodable> {
        let text = codec
            .decode_without_bom_handling_and_without_replacement(old)
            .expect("decodes");
        let limits = crate::diff::DiffLimits::default();
        let (_, kept) = crate::diff::diff_keeping(&text, new, "f", &limits);
        encode_keeping(new, LineCodec::Legacy(codec), old, &kept)
            .expect("the old bytes split like the text")
    }

    #[test]
    fn utf16_decodes_as_encoding_rs_does_across_pieces() {
        // A surrogate pair at every position around the pieces' boundary,
        // in both byte orders, against encoding_rs's own decoder.
        for before in UTF16_PIECE - 3..UTF16_PIECE + 2 {
            let text = format!("{}\u{1F600}é\n", "a".repeat(before));
            for (encoding, codec) in [
                (TextEncoding::Utf16Le, UTF_16LE),
                (TextEncoding::Utf16Be, UTF_16BE),
            ] {
                let bytes = encode(&text, encoding).unwrap();
                let little = encoding == TextEncoding::Utf16Le;
                let expected = codec
                    .decode_without_bom_handling_and_without_replacement(&bytes[2..])
                    .unwrap();
                assert_eq!(decode_utf16(&bytes[2..], little).unwrap(), expected);
            }
        }
        // Not UTF-16: an odd length, a lone high or low surrogate anywhere.
        assert_eq!(decode_utf16(b"a\0b", true), None);
        for units in [
            &[0x61, 0xD83D][..],
            &[0xD83D, 0x61],
            &[0xDE00, 0x61],
            &[0x61, 0xDE00],
        ] {
            let mut bytes: Vec<u8> = units.iter().flat_map(|u: &u16| u.to_le_bytes()).collect();
            assert_eq!(decode_utf16(&bytes, true), None, "{units:x?}");
            // The same past the first piece.
            bytes.splice(
                0..0,
                "a".repeat(UTF16_PIECE)
                    .encode_utf16()
                    .flat_map(u16::to_le_bytes),
            );
            assert_eq!(decode_utf16(&bytes, true), None, "{units:x?} after a piece");
        }
        let mut bytes = vec![0xFF, 0xFE];
        bytes.extend(
            "a".repeat(UTF16_PIECE - 1)
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        );
        bytes.extend(0xD83D_u16.to_le_bytes());
        assert!(
            decode(&bytes).encoding.is_none(),
            "a lone surrogate at the end"
        );
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
            let written = encode_keeping(new_text, codec, &old, &kept)
                .unwrap()
                .unwrap();
            assert_eq!(written, encode(new_text, encoding).unwrap().into_owned());
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
