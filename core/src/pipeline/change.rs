//! Stage 4, **encode and diff**: the new text in the file's format, and
//! the diff of the old text against it.

use std::borrow::Cow;

use crate::diff::{self, DiffLimits, DiffSummary};
use crate::error::ToolError;
use crate::format::{self, LineCodec, Plan, Unencodable};

/// The bytes a write puts on disk, and how they differ from the old ones.
#[derive(Debug)]
pub(super) struct Change<'a> {
    /// The new file, byte for byte.
    pub(super) bytes: Cow<'a, [u8]>,
    /// The new bytes are the old ones: nothing to write.
    pub(super) unchanged: bool,
    /// The diff of the old text against the new.
    pub(super) diff: DiffSummary,
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
        }),
        Some(codec) => keeping(plan, codec, old_bytes, new, display, limits),
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
            })
        }
    }
}

/// A legacy encoding or UTF-16: the diff first, then only the lines it
/// does not keep are encoded; the kept ones are the old file's bytes
/// (`docs/contract.md#format`).
fn keeping<'a>(
    plan: &Plan<'_>,
    codec: LineCodec,
    old: &[u8],
    new: &'a str,
    display: &str,
    limits: &DiffLimits,
) -> Result<Change<'a>, ToolError> {
    let (diff, kept) = diff::diff_keeping(&plan.old_text, new, display, limits);
    let bytes = match format::encode_keeping(new, codec, old, &kept) {
        Some(encoded) => Cow::Owned(encoded.map_err(|e| unencodable(&e))?),
        None => format::encode(new, plan.encoding).map_err(|e| unencodable(&e))?,
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
    })
}

fn unencodable(err: &Unencodable) -> ToolError {
    ToolError::unencodable(&err.encoding, err.character, err.line)
}
