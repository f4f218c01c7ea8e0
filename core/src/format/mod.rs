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
//!
//! One concern per file: `detect` reads the old bytes as text,
//! `endings` finds and converts line endings, `encode` writes text in an
//! encoding, `keep` copies the lines a diff keeps from the old bytes,
//! `utf16` converts UTF-16 a piece at a time, and `plan` decides, for one
//! write, what the new file's format will be.

mod detect;
mod encode;
mod endings;
mod keep;
mod plan;
mod settle;
mod utf16;

use std::borrow::Cow;

use encoding_rs::Encoding;

pub use encode::{Unencodable, encode};
pub use endings::LineEnding;
pub use keep::{LineCodec, encode_keeping, line_by_line, old_lines};
pub use plan::{NewText, Plan, plan, replan};
pub use settle::{Settled, settle};

/// The UTF-8 byte-order mark.
pub(crate) const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";
/// U+FEFF, the byte-order mark as a character.
const BOM_CHAR: char = '\u{FEFF}';

/// The text of bytes written as given, without a byte-order mark, as a
/// diff compares it; `None` when they are not UTF-8.
pub fn bytes_text(raw: &[u8]) -> Option<&str> {
    let text = simdutf8::basic::from_utf8(raw).ok()?;
    Some(text.strip_prefix(BOM_CHAR).unwrap_or(text))
}

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
    /// How the encoding was found.
    pub certainty: Certainty,
}

/// How an old file's encoding was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Certainty {
    /// Known: valid UTF-8, a byte-order mark, ISO-2022-JP's escapes, or
    /// named by the call.
    Known,
    /// A guess the detector was confident of.
    Confident,
    /// A guess it was not (a few words of text fit several encodings).
    Unsure,
}
