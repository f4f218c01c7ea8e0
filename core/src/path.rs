//! Lexical path rules (`docs/contract.md#path-rules`, steps 1–4): no I/O
//! here.
//!
//! A path is checked in a fixed order and the first failure decides:
//! empty, control characters, characters that make a path read differently
//! from what it is, backslashes, over-long names, absolute forms, climbing
//! above the root, and finally naming a directory (the root itself or a
//! trailing `/`). What survives is a list of plain names, with `.` and empty
//! segments dropped and `..` applied.

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

use crate::error::ToolError;

/// Longest single name, in bytes.
pub const MAX_NAME_BYTES: usize = 255;
/// Longest path, in bytes.
pub const MAX_PATH_BYTES: usize = 4096;
/// Links followed on one path before it counts as a loop.
pub const MAX_LINKS: usize = 40;

/// A path that passed the lexical rules: root-relative, normalised names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelPath {
    names: Vec<String>,
    /// The path ended in `/`: it can only name a directory, which a write
    /// cannot target. What is actually there decides the message.
    dir_only: bool,
}

impl RelPath {
    /// Check `path` lexically and normalise it.
    pub fn parse(path: &str) -> Result<RelPath, ToolError> {
        check_characters(path)?;
        if is_absolute(path) {
            return Err(ToolError::absolute_path(None, false));
        }
        // A shell expands `~`; this tool does not, and a model that writes
        // `~/notes.txt` means the home directory, not a directory named `~`
        // in the project.
        if path == "~" || path.starts_with("~/") {
            return Err(ToolError::invalid_param(
                "Invalid path: '~' is not expanded to a home directory here, and the tool does \
                 not create a directory named '~'. Give the path relative to the project root.",
            ));
        }
        let names = normalize(path.split('/'))?;
        if names.is_empty() {
            return Err(ToolError::is_directory());
        }
        Ok(RelPath {
            names,
            dir_only: path.ends_with('/'),
        })
    }

    /// A path already split into plain names (no `""`, `.` or `..`), as
    /// [`crate::roots`] produces below an absolute root; `dir_only` when it
    /// was spelled with a final `/`.
    pub(crate) fn from_names(names: Vec<&str>, dir_only: bool) -> RelPath {
        RelPath {
            names: names.into_iter().map(str::to_owned).collect(),
            dir_only,
        }
    }

    /// Whether the path ended in `/`, so that it can only name a directory.
    pub fn dir_only(&self) -> bool {
        self.dir_only
    }

    /// The names, root first.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Consume into the names.
    pub fn into_names(self) -> Vec<String> {
        self.names
    }
}

/// Apply `.` / empty / `..` lexically. Climbing above the root fails.
fn normalize<'a>(segments: impl Iterator<Item = &'a str>) -> Result<Vec<String>, ToolError> {
    let mut names: Vec<String> = Vec::new();
    for seg in segments {
        match seg {
            "" | "." => {}
            ".." => {
                if names.pop().is_none() {
                    return Err(ToolError::outside_root());
                }
            }
            name => names.push(name.to_owned()),
        }
    }
    Ok(names)
}

/// Step 1: characters and lengths.
pub(crate) fn check_characters(path: &str) -> Result<(), ToolError> {
    if path.is_empty() {
        return Err(ToolError::invalid_param("Path cannot be empty."));
    }
    if path.chars().any(is_control) {
        return Err(ToolError::invalid_param(
            "Invalid path: control characters (such as NUL or newline) and line or paragraph \
             separators are not allowed.",
        ));
    }
    if path.chars().any(is_format) {
        return Err(ToolError::invalid_param(
            "Invalid path: invisible format characters (bidirectional controls, zero-width and \
             other format characters) are not allowed.",
        ));
    }
    if let Some(blank) = path.chars().find(|&c| is_blank(c)) {
        return Err(ToolError::invalid_param(format!(
            "Invalid path: U+{:04X} looks like nothing or like a space; names may hold no \
             characters that render as nothing and no space but U+0020.",
            blank as u32
        )));
    }
    // A Windows absolute form also contains a backslash; the absolute
    // message tells the agent more, and the code is the same.
    if path.contains('\\') && !is_absolute(path) {
        return Err(ToolError::invalid_param(
            "Invalid path: Use '/' as the path separator.",
        ));
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(ToolError::invalid_param(format!(
            "Invalid path: longer than {MAX_PATH_BYTES} bytes."
        )));
    }
    if path.split('/').any(|name| name.len() > MAX_NAME_BYTES) {
        return Err(ToolError::invalid_param(format!(
            "Invalid path: a name is longer than {MAX_NAME_BYTES} bytes."
        )));
    }
    Ok(())
}

/// Whether `c` is a character that must not be in text shown to a person
/// as a name: a control (C0, DEL, C1, line and paragraph separators), a
/// format character (bidirectional controls, zero-width characters), or
/// one that looks like nothing or like a space other than U+0020.
pub fn is_unprintable(c: char) -> bool {
    is_control(c) || is_format(c) || is_blank(c)
}

/// C0, DEL and C1 controls.
fn is_control(c: char) -> bool {
    matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    )
}

/// Format characters (Unicode's `Cf`): invisible, they make a path read
/// differently from what it is. The bidirectional controls (LRM, RLM, ALM,
/// the embeddings, overrides and isolates) and the zero-width characters
/// are all of them; the category, not a list, decides, so that characters
/// a list would miss are refused too.
fn is_format(c: char) -> bool {
    c.general_category() == GeneralCategory::Format
}

/// Characters that look like nothing or like a space, so that two names
/// that read alike differ: Unicode's `Default_Ignorable_Code_Point` (the
/// Hangul fillers U+3164, U+115F, U+1160, U+FFA0, the combining grapheme
/// joiner U+034F, variation selectors, and whatever later versions add)
/// and the space separators (`Zs`) other than U+0020 (U+00A0, U+2000 to
/// U+200A, U+3000, …), plus U+2800, the blank Braille pattern, which
/// renders as a space without being either. By property, not a list of
/// our own, but for that last one.
fn is_blank(c: char) -> bool {
    use icu_properties::CodePointSetData;
    use icu_properties::props::DefaultIgnorableCodePoint;
    CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || (c != ' ' && c.general_category() == GeneralCategory::SpaceSeparator)
        || c == '\u{2800}'
}

/// `/x`, `C:\x`, `C:/x`, `C:`, `\\server\x`, `//server/x`.
pub fn is_absolute(path: &str) -> bool {
    let bytes = path.as_bytes();
    if matches!(bytes.first(), Some(b'/' | b'\\')) {
        return true;
    }
    matches!(bytes, [drive, b':', rest @ ..]
        if drive.is_ascii_alphabetic() && matches!(rest.first(), None | Some(b'/' | b'\\')))
}

/// Split a symlink target into segments for the resolver: `None` when the
/// target is absolute (the guest cannot know where the root sits on the host,
/// so an absolute target counts as leading outside).
pub fn link_target_segments(target: &str) -> Option<Vec<String>> {
    if target.is_empty() || target.starts_with('/') {
        return None;
    }
    Some(target.split('/').map(str::to_owned).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn code(path: &str) -> Result<Vec<String>, (ErrorCode, String)> {
        RelPath::parse(path)
            .map(RelPath::into_names)
            .map_err(|e| (e.code(), e.message().to_owned()))
    }

    #[test]
    fn normalises_dots_and_empty_segments() {
        assert_eq!(code("a//b/./c").unwrap(), ["a", "b", "c"]);
        assert_eq!(code("./a/../b").unwrap(), ["b"]);
        assert_eq!(code("a/b/../../c").unwrap(), ["c"]);
        assert_eq!(code("ünï/cödé.txt").unwrap(), ["ünï", "cödé.txt"]);
    }

    #[test]
    fn lexical_matrix() {
        use ErrorCode::*;
        let cases: &[(&str, ErrorCode, &str)] = &[
            ("", InvalidParam, "Path cannot be empty."),
            ("a\0b", InvalidParam, "control"),
            ("a\nb", InvalidParam, "control"),
            ("a\u{7f}", InvalidParam, "control"),
            ("a\u{85}", InvalidParam, "control"),
            ("a\u{202e}txt.exe", InvalidParam, "bidirectional"),
            ("a\u{200b}b", InvalidParam, "zero-width"),
            ("\u{feff}a", InvalidParam, "zero-width"),
            ("a\\b", InvalidParam, "Use '/' as the path separator."),
            ("/etc/passwd", InvalidParam, "Absolute path not allowed."),
            ("C:\\x", InvalidParam, "Absolute path not allowed."),
            ("C:/x", InvalidParam, "Absolute path not allowed."),
            ("//server/x", InvalidParam, "Absolute path not allowed."),
            ("\\\\server\\x", InvalidParam, "Absolute path not allowed."),
            ("..", AccessDenied, "Path must be within project root."),
            ("../x", AccessDenied, "Path must be within project root."),
            (
                "a/../../x",
                AccessDenied,
                "Path must be within project root.",
            ),
            ("./..", AccessDenied, "Path must be within project root."),
            (".", IsDirectory, "Target path is a directory."),
            ("./", IsDirectory, "Target path is a directory."),
            ("a/..", IsDirectory, "Target path is a directory."),
        ];
        for (path, want, msg) in cases {
            let (got, message) = code(path).expect_err(path);
            assert_eq!(got, *want, "{path:?}");
            assert!(message.contains(msg), "{path:?}: {message}");
        }
    }

    #[test]
    fn a_home_directory_tilde_is_refused_and_names_with_a_tilde_are_not() {
        for home in ["~", "~/notes.txt", "~/.bashrc"] {
            let (code, message) = code(home).unwrap_err();
            assert_eq!(code, ErrorCode::InvalidParam);
            assert!(message.contains("'~' is not expanded"), "{message}");
        }
        assert_eq!(code("a/~/b").unwrap(), ["a", "~", "b"]);
        assert_eq!(code("~backup.txt").unwrap(), ["~backup.txt"]);
        assert_eq!(code("~$report.docx").unwrap(), ["~$report.docx"]);
    }

    #[test]
    fn a_final_slash_is_remembered_for_after_resolution() {
        let path = RelPath::parse("a/b/").unwrap();
        assert!(path.dir_only());
        assert_eq!(path.names(), ["a", "b"]);
        assert!(!RelPath::parse("a/b").unwrap().dir_only());
    }

    /// Every control, line or paragraph separator, and format character,
    /// wherever it stands in a name: the whole class, from the Unicode
    /// tables, not a sample.
    #[test]
    fn every_invisible_or_control_character_is_refused() {
        let mut refused = 0;
        for c in (0..=0x10_ffff).filter_map(char::from_u32) {
            let class = c.general_category();
            if !matches!(
                class,
                GeneralCategory::Control
                    | GeneralCategory::Format
                    | GeneralCategory::LineSeparator
                    | GeneralCategory::ParagraphSeparator
            ) {
                continue;
            }
            for path in [format!("{c}a"), format!("a{c}"), format!("dir/a{c}b.txt")] {
                let (code, message) = code(&path).expect_err(&format!("{:04x}", c as u32));
                assert_eq!(code, ErrorCode::InvalidParam, "{:04x}", c as u32);
                assert!(message.starts_with("Invalid path: "), "{message}");
            }
            refused += 1;
        }
        // C0, DEL and C1 (65), LS and PS, and Unicode 18's format characters.
        assert!(refused > 65 + 2 + 150, "{refused}");
        for named in [
            '\u{200e}', '\u{200f}', '\u{061c}', '\u{206a}', '\u{206f}', '\u{00ad}',
        ] {
            assert!(code(&format!("x{named}")).is_err(), "{:04x}", named as u32);
        }
        // Visible characters, letters of every script, pass.
        for fine in ["caf\u{e9}", "\u{65e5}\u{672c}", "\u{ff0e}\u{ff0e}", "a b"] {
            assert!(code(fine).is_ok(), "{fine}");
        }
    }

    #[test]
    fn characters_that_look_like_nothing_or_a_space_are_refused() {
        for blank in [
            '\u{3164}',
            '\u{115F}',
            '\u{1160}',
            '\u{FFA0}',
            '\u{2800}',
            '\u{00A0}',
            '\u{034F}',
            '\u{2003}',
            '\u{3000}',
            '\u{FE0F}',
            '\u{E0100}',
        ] {
            let (code, message) =
                code(&format!("a{blank}b")).expect_err(&format!("{:04x}", blank as u32));
            assert_eq!(code, ErrorCode::InvalidParam);
            assert!(
                message.contains(&format!("U+{:04X}", blank as u32)),
                "{message}"
            );
        }
        // Every space separator but U+0020, found by the property.
        let spaces = (0..=0x10_ffff)
            .filter_map(char::from_u32)
            .filter(|c| c.general_category() == GeneralCategory::SpaceSeparator && *c != ' ');
        for c in spaces {
            assert!(code(&format!("x{c}y")).is_err(), "{:04x}", c as u32);
        }
        // Letters of scripts that use U+3164's neighbours stay fine.
        assert!(code("\u{314F}\u{3131}").is_ok());
        assert!(code("a b").is_ok());
    }

    #[test]
    fn length_limits() {
        let name = "n".repeat(MAX_NAME_BYTES);
        assert!(code(&name).is_ok());
        assert_eq!(
            code(&format!("{name}n")).unwrap_err().0,
            ErrorCode::InvalidParam
        );
        let long = vec!["d"; MAX_PATH_BYTES / 2 + 1].join("/");
        assert_eq!(code(&long).unwrap_err().0, ErrorCode::InvalidParam);
    }

    #[test]
    fn drive_like_names_that_are_relative() {
        assert_eq!(code("C:x").unwrap(), ["C:x"]);
        assert_eq!(code("1:/x").unwrap(), ["1:", "x"]);
    }
}
