//! The agent's content as evidence of the old file's encoding
//! (`docs/contract.md#format`).
//!
//! A legacy encoding is a guess: `chardetng` reads the bytes and picks the
//! likeliest, and a short text or a rare one can fool it (GBK read as
//! EUC-JP, x-mac-cyrillic as windows-1251). Written back on a wrong guess,
//! every line the agent did not touch would be garbage in the file's real
//! encoding. But the content the agent sends is evidence: the lines it
//! left alone are the file's lines, decoded right. So the guess stands
//! when at least one line of the old file that holds non-ASCII text comes
//! back unchanged in the content under it (the diff keeps it), or when
//! every such line does. Otherwise each other encoding is tried on those
//! lines, and the one under which the most of them appear in the content
//! settles it. When none does, the guess stands only if the choice cannot
//! matter (everything the write encodes is ASCII) or the detector was
//! sure; else the write is refused, naming the candidates.

use std::collections::HashSet;
use std::ops::Range;

use encoding_rs::Encoding;

use crate::diff::Keeping;

/// What the evidence says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// The guess stands.
    Guess,
    /// Another encoding explains the content: the file is in it.
    Other(&'static Encoding),
    /// Nothing settles it: the likeliest encodings the file may be in,
    /// the guess first.
    Unsettled(Vec<&'static Encoding>),
}

/// Legacy encodings a file may be in, each able to be read a line at a
/// time (ISO-2022-JP, whose escapes carry over lines, is found by them
/// instead), in the order a tie between them is broken.
pub const CANDIDATES: [&Encoding; 33] = [
    encoding_rs::WINDOWS_1252,
    encoding_rs::ISO_8859_15,
    encoding_rs::WINDOWS_1250,
    encoding_rs::ISO_8859_2,
    encoding_rs::WINDOWS_1251,
    encoding_rs::KOI8_U,
    encoding_rs::KOI8_R,
    encoding_rs::IBM866,
    encoding_rs::ISO_8859_5,
    encoding_rs::X_MAC_CYRILLIC,
    encoding_rs::WINDOWS_1253,
    encoding_rs::ISO_8859_7,
    encoding_rs::WINDOWS_1254,
    encoding_rs::WINDOWS_1255,
    encoding_rs::ISO_8859_8,
    encoding_rs::WINDOWS_1256,
    encoding_rs::ISO_8859_6,
    encoding_rs::WINDOWS_1257,
    encoding_rs::ISO_8859_13,
    encoding_rs::ISO_8859_4,
    encoding_rs::WINDOWS_1258,
    encoding_rs::WINDOWS_874,
    encoding_rs::ISO_8859_3,
    encoding_rs::ISO_8859_10,
    encoding_rs::ISO_8859_14,
    encoding_rs::ISO_8859_16,
    encoding_rs::MACINTOSH,
    encoding_rs::SHIFT_JIS,
    encoding_rs::EUC_JP,
    encoding_rs::GBK,
    encoding_rs::GB18030,
    encoding_rs::BIG5,
    encoding_rs::EUC_KR,
];

/// How many of the old file's non-ASCII lines the other encodings are
/// tried on: enough to tell encodings apart, a bound on the time a file of
/// many such lines costs.
const SAMPLE_LINES: usize = 512;

/// How many candidates a refusal names.
const NAMED: usize = 4;

/// Settle the guess `guess` for `old` (the old file's bytes, split into
/// lines at `starts` as `keep::line_starts` splits them), given `new` (the
/// content) and the lines the diff of the guess's text against it kept.
/// `sure`: the detector was confident.
pub fn settle(
    old: &[u8],
    starts: &[usize],
    guess: &'static Encoding,
    sure: bool,
    new: &str,
    kept: &Keeping,
) -> Settled {
    let line = |i: usize| starts[i]..starts[i + 1];
    let non_ascii = |i: usize| {
        let bytes = &old[line(i)];
        Encoding::ascii_valid_up_to(bytes) < bytes.len()
    };
    // The lines the diff did not keep (usually few), and then, only if one
    // of them holds non-ASCII text, whether any kept line does: both stop
    // early, so that a large file with a few lines changed costs little.
    let line_count = starts.len() - 1;
    let mut changed_non_ascii = Vec::new();
    let mut at = 0;
    for run in kept
        .runs
        .iter()
        .map(|r| r.old_lines.clone())
        .chain(std::iter::once(line_count..line_count))
    {
        changed_non_ascii.extend((at..run.start).filter(|&i| non_ascii(i)).map(line));
        at = run.end;
    }
    if changed_non_ascii.is_empty()
        || kept
            .runs
            .iter()
            .any(|run| run.old_lines.clone().any(non_ascii))
    {
        return Settled::Guess;
    }
    // No line with non-ASCII text came back unchanged under the guess:
    // look for an encoding under which some do.
    let sample = &changed_non_ascii[..changed_non_ascii.len().min(SAMPLE_LINES)];
    let new_lines: HashSet<&str> = new.split_inclusive('\n').collect();
    let mut explaining: Vec<(&'static Encoding, usize)> = Vec::new();
    let mut readable = vec![guess];
    for &candidate in CANDIDATES.iter().filter(|&&c| c != guess) {
        let Some(found) = appearing(old, sample, candidate, &new_lines) else {
            continue;
        };
        readable.push(candidate);
        if found > 0 {
            explaining.push((candidate, found));
        }
    }
    // The one that explains the most lines, and reads the whole file.
    explaining.sort_by_key(|&(_, found)| std::cmp::Reverse(found));
    if let Some(&(encoding, _)) = explaining.iter().find(|(encoding, _)| {
        encoding
            .decode_without_bom_handling_and_without_replacement(old)
            .is_some()
    }) {
        return Settled::Other(encoding);
    }
    if sure || encodes_only_ascii(new, kept) {
        return Settled::Guess;
    }
    readable.truncate(NAMED);
    // Where every candidate a refusal would name writes the same bytes,
    // the choice cannot matter: 'café' written into a windows-1252 file is
    // the same bytes in iso-8859-15, windows-1250 and iso-8859-2.
    if writes_alike(new, kept, &readable) {
        return Settled::Guess;
    }
    Settled::Unsettled(readable)
}

/// Whether every encoding of `candidates` encodes what the write encodes
/// of `new` (what the diff did not keep) to the same bytes, none of them
/// lacking a character. The kept lines are the old file's own bytes
/// whatever the encoding.
fn writes_alike(new: &str, kept: &Keeping, candidates: &[&'static Encoding]) -> bool {
    let Some((&first, others)) = candidates.split_first() else {
        return true;
    };
    let mut at = 0;
    let mut pieces: Vec<&str> = Vec::new();
    for run in &kept.runs {
        pieces.push(&new[at..run.new_bytes.start]);
        at = run.new_bytes.end;
    }
    pieces.push(&new[at..]);
    pieces.iter().filter(|p| !p.is_ascii()).all(|piece| {
        let (bytes, _, unmappable) = first.encode(piece);
        !unmappable
            && others.iter().all(|other| {
                let (theirs, _, lacking) = other.encode(piece);
                !lacking && theirs == bytes
            })
    })
}

/// How many of `lines` (ranges of `old`) are, decoded in `encoding`, lines
/// of the content; `None` when `encoding` cannot decode one of them.
fn appearing(
    old: &[u8],
    lines: &[Range<usize>],
    encoding: &'static Encoding,
    new_lines: &HashSet<&str>,
) -> Option<usize> {
    let mut found = 0;
    for line in lines {
        let text =
            encoding.decode_without_bom_handling_and_without_replacement(&old[line.clone()])?;
        // A line of the content ends as the file's lines do; the last may
        // end without a newline on either side.
        if new_lines.contains(&*text) {
            found += 1;
        }
    }
    Some(found)
}

/// Whether every byte of `new` that the write would encode (what the diff
/// did not keep) is ASCII: then every candidate writes the same bytes.
fn encodes_only_ascii(new: &str, kept: &Keeping) -> bool {
    let mut at = 0;
    let ascii = |from: usize, to: usize| new.as_bytes()[from..to].is_ascii();
    for run in &kept.runs {
        if !ascii(at, run.new_bytes.start) {
            return false;
        }
        at = run.new_bytes.end;
    }
    ascii(at, new.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{DiffLimits, diff_keeping};
    use crate::format::keep::line_starts;

    fn settled(
        old_text: &str,
        file: &'static Encoding,
        guess: &'static Encoding,
        sure: bool,
        new: &str,
    ) -> Settled {
        let (old, _, unmappable) = file.encode(old_text);
        assert!(!unmappable, "{old_text:?} in {}", file.name());
        let decoded = guess.decode_without_bom_handling(&old).0;
        let (_, kept) = diff_keeping(&decoded, new, "f", &DiffLimits::default());
        settle(&old, &line_starts(&old), guess, sure, new, &kept)
    }

    #[test]
    fn a_kept_line_under_the_guess_settles_it() {
        let text = "// Привет, мир\nfn main() {}\n// конец\n";
        let edited = "// Привет, мир\nfn main() { run(); }\n// конец\n";
        let w1251 = encoding_rs::WINDOWS_1251;
        assert_eq!(settled(text, w1251, w1251, false, edited), Settled::Guess);
    }

    #[test]
    fn the_content_names_the_encoding_a_wrong_guess_missed() {
        // GBK read as EUC-JP; x-mac-cyrillic as windows-1251; Shift_JIS as
        // windows-1250: the unchanged lines appear only under the truth.
        let cases = [
            (
                "let 数据 = 1;\nlet b = 2;\n",
                "let 数据 = 1;\nlet b = 3;\n",
                encoding_rs::GBK,
                encoding_rs::EUC_JP,
            ),
            (
                "// Привет, мир\nfn main() {}\n",
                "// Привет, мир\nfn main() { run(); }\n",
                encoding_rs::X_MAC_CYRILLIC,
                encoding_rs::WINDOWS_1251,
            ),
            (
                "// 日本語\nx = 1\n",
                "// 日本語\nx = 2\n",
                encoding_rs::SHIFT_JIS,
                encoding_rs::WINDOWS_1250,
            ),
        ];
        for (old, new, truth, guess) in cases {
            assert_eq!(
                settled(old, truth, guess, false, new),
                Settled::Other(truth),
                "{old:?}"
            );
        }
    }

    #[test]
    fn nothing_settles_a_content_that_rewrote_every_non_ascii_line() {
        let w1251 = encoding_rs::WINDOWS_1251;
        let old = "// Привет\nx = 1\n";
        let new = "// Пока\nx = 1\n";
        match settled(old, w1251, w1251, false, new) {
            Settled::Unsettled(named) => {
                assert_eq!(named[0], w1251);
                assert!(named.len() > 1 && named.len() <= NAMED, "{named:?}");
            }
            other => panic!("{other:?}"),
        }
        // Sure of its guess, the detector's word stands; so it does when
        // what the write encodes is ASCII, or the same bytes in every
        // candidate a refusal would name.
        assert_eq!(settled(old, w1251, w1251, true, new), Settled::Guess);
        assert_eq!(
            settled(old, w1251, w1251, false, "// hello\nx = 1\n"),
            Settled::Guess
        );
    }

    /// 'café' into a windows-1252 file whose only non-ASCII line is the
    /// one changed: every named candidate writes 0xE9, so the write goes
    /// through; a character the candidates write differently is refused.
    #[test]
    fn candidates_that_write_the_same_bytes_settle_it() {
        let w1252 = encoding_rs::WINDOWS_1252;
        let old = "name = \"Zoë\"\nx = 1\n";
        assert_eq!(
            settled(old, w1252, w1252, false, "name = \"café\"\nx = 1\n"),
            Settled::Guess
        );
        // '€' is 0x80 in windows-1252 and 0xA4 in iso-8859-15.
        assert!(matches!(
            settled(old, w1252, w1252, false, "name = \"€\"\nx = 1\n"),
            Settled::Unsettled(_)
        ));
    }
}
