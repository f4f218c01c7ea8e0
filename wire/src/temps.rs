//! The names of the component's temp files. The host's commit gate tells
//! a temp file's removal (clean-up, never gated) from a file's (a change
//! placed) by them.

/// Prefix of the tool's temp files; the full name is
/// `.wt-<16 hex digits>.tmp`, short and fixed-length so that a 255-byte
/// target name still works.
pub const TEMP_PREFIX: &str = ".wt-";
/// Suffix of the tool's temp files.
pub const TEMP_SUFFIX: &str = ".tmp";

/// Whether `name` is one of the tool's temp-file names.
pub fn is_temp_name(name: &str) -> bool {
    name.len() == TEMP_PREFIX.len() + 16 + TEMP_SUFFIX.len()
        && name.starts_with(TEMP_PREFIX)
        && name.ends_with(TEMP_SUFFIX)
        && name[TEMP_PREFIX.len()..TEMP_PREFIX.len() + 16]
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
