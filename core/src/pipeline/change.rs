//! Stage 4, **encode and diff**: the new text in the file's format, and
//! the diff of the old text against it.

use std::borrow::Cow;

use crate::diff::{self, DiffLimits, DiffSummary, Keeping};
use crate::error::ToolError;
use crate::format::{self, Certainty, LineCodec, Plan, Settled, TextEncoding, Unencodable};

/// The bytes a write puts on disk, and how they differ from the old ones.
#[derive(Debug)]
pub(super) struct Change<'a> {
    /// The new file, byte for byte.
    pub(super) bytes: Cow<'a, [u8]>,
    /// The new bytes are the old ones: nothing to write.
    pub(super) unchanged: bool,
    /// The diff of the old text against the new.
    pub(super) diff: DiffSummary,
    /// The encoding the bytes are in: the plan's, or the one the content
    /// settled a guess to.
    pub(super) encoding: TextEncoding,
}

/// `new` (the content as the file will hold it) in the format `plan`
/// chose, against `old` (the old file's bytes, `None` when there is none),
/// diffed for the file shown as `display`.
pub(super) fn build<'a>(
    plan: &Plan<'_>,
    old: Option<&'a [u8]>,
    new: &'a str,
    display: &str,
    limits: &DiffLimits,
) -> Result<Change<'a>, ToolError> {
    let old_bytes = old.unwrap_or_default();
    match format::line_by_line(plan.encoding).filter(|_| plan.keep) {
        Some(_) if diff::same_bytes(plan.old_text.as_bytes(), new.as_bytes()) => Ok(Change {
            bytes: Cow::Borrowed(old_bytes),
            unchanged: true,
            diff: DiffSummary::default(),
            encoding: plan.encoding,
        }),
        Some(codec) => {
            let (diff, kept) = diff::diff_keeping(&plan.old_text, new, display, limits);
            let lines = format::old_lines(codec, old_bytes);
            let lines = lines.as_ref().map(|(mark, starts)| (*mark, &starts[..]));
            match settled(plan, codec, old_bytes, lines, new, &kept)? {
                None => keeping(plan.encoding, codec, old_bytes, lines, new, diff, &kept),
                // The content says the file is in another encoding (which
                // `settle` read the whole file in): its text in that one,
                // diffed again.
                Some(other) => match format::replan(old_bytes, other, true) {
                    Some(plan) => {
                        let codec = LineCodec::Legacy(other);
                        let (diff, kept) = diff::diff_keeping(&plan.old_text, new, display, limits);
                        keeping(plan.encoding, codec, old_bytes, lines, new, diff, &kept)
                    }
                    None => keeping(plan.encoding, codec, old_bytes, lines, new, diff, &kept),
                },
            }
        }
        None => {
            let bytes = format::encode(new, plan.encoding).map_err(|e| unencodable(&e))?;
            let unchanged = old.is_some_and(|old| diff::same_bytes(old, &bytes));
            let diff = if unchanged {
                DiffSummary::default()
            } else {
                diff::diff(&plan.old_text, new, display, limits)
            };
            Ok(Change {
                bytes,
                unchanged,
                diff,
                encoding: plan.encoding,
            })
        }
    }
}

/// `raw`, bytes a call gives to be written as they are, against `old`;
/// `text` is theirs when they are UTF-8, which alone is diffed.
pub(super) fn bytes<'a>(
    plan: &Plan<'_>,
    old: Option<&[u8]>,
    raw: &'a [u8],
    text: Option<&str>,
    display: &str,
    limits: &DiffLimits,
) -> Change<'a> {
    let unchanged = old.is_some_and(|old| diff::same_bytes(old, raw));
    let diff = match text {
        Some(new) if !unchanged => diff::diff(&plan.old_text, new, display, limits),
        _ => DiffSummary::default(),
    };
    Change {
        bytes: Cow::Borrowed(raw),
        unchanged,
        diff,
        encoding: TextEncoding::Utf8 {
            bom: raw.starts_with(format::UTF8_BOM),
        },
    }
}

/// What the content says of a guessed legacy encoding: `None` when the
/// guess stands, the encoding it settles to otherwise; refused when
/// nothing settles it (`format::settle`).
fn settled(
    plan: &Plan<'_>,
    codec: LineCodec,
    old: &[u8],
    lines: Option<(usize, &[usize])>,
    new: &str,
    kept: &Keeping,
) -> Result<Option<&'static encoding_rs::Encoding>, ToolError> {
    let (LineCodec::Legacy(guess), Some((_, starts))) = (codec, lines) else {
        return Ok(None);
    };
    if starts.len() - 1 != kept.old_line_count {
        return Ok(None);
    }
    let confident = match plan.certainty {
        Certainty::Known => return Ok(None),
        Certainty::Confident => true,
        Certainty::Unsure => false,
    };
    match format::settle(old, starts, guess, confident, new, kept) {
        Settled::Guess => Ok(None),
        Settled::Other(encoding) => Ok(Some(encoding)),
        Settled::Unsettled(candidates) => {
            let names: Vec<String> = candidates
                .iter()
                .map(|c| TextEncoding::Legacy(c).name())
                .collect();
            Err(ToolError::encoding_unsettled(&names))
        }
    }
}

/// A legacy encoding or UTF-16: the diff first, then only the lines it
/// does not keep are encoded; the kept ones are the old file's bytes
/// (`docs/contract.md#format`).
fn keeping<'a>(
    encoding: TextEncoding,
    codec: LineCodec,
    old: &[u8],
    lines: Option<(usize, &[usize])>,
    new: &'a str,
    diff: DiffSummary,
    kept: &Keeping,
) -> Result<Change<'a>, ToolError> {
    let encoded = lines.and_then(|lines| format::encode_keeping(new, codec, old, lines, kept));
    let bytes = match encoded {
        Some(encoded) => Cow::Owned(encoded.map_err(|e| unencodable(&e))?),
        None => format::encode(new, encoding).map_err(|e| unencodable(&e))?,
    };
    // Different text can encode to the same bytes (Shift_JIS writes U+00A5
    // as the byte of `\`): the file stays as it is.
    let unchanged = diff::same_bytes(old, &bytes);
    Ok(Change {
        bytes,
        unchanged,
        diff: if unchanged {
            DiffSummary::default()
        } else {
            diff
        },
        encoding,
    })
}

fn unencodable(err: &Unencodable) -> ToolError {
    ToolError::unencodable(&err.encoding, err.character, err.line)
}
