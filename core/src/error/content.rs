//! The file not as the call expects it, and content that cannot be
//! written as asked.

use super::{ErrorKind, ToolError};

impl ToolError {
    /// The file on disk differs from the lock values the call gave.
    #[cold]
    pub fn changed(path: &str) -> Self {
        Self::new(
            ErrorKind::Changed,
            format!(
                "File '{path}' changed since it was read (its size, modification time or hash \
                 differ from the lock values given); nothing was written. Read it again, or \
                 dry-run this write: the answer's data.lock holds its current lock values."
            ),
        )
    }

    /// The file is no longer the version a view saw (`base`).
    #[cold]
    pub fn changed_since_viewed(path: &str) -> Self {
        Self::new(
            ErrorKind::StaleBase,
            format!(
                "File '{path}' changed since it was viewed (its content is not the version \
                 the base names); nothing was written. View it again and make the change on \
                 what it holds now."
            ),
        )
    }

    /// With read-first, a write or edit of an existing file the session
    /// has not viewed.
    #[cold]
    pub fn not_viewed(path: &str) -> Self {
        Self::new(
            ErrorKind::InvalidParam,
            format!(
                "File '{path}' exists and has not been viewed in this session: view it first \
                 (the view tool), then make the change on what it holds; or pass the base of \
                 the version you know. Nothing was written."
            ),
        )
    }

    /// A change made on a version since changed whose lines meet the other
    /// writer's: `conflicts` shows where.
    #[cold]
    pub fn merge_conflict(path: &str, count: usize, conflicts: &str) -> Self {
        let places = if count == 1 { "place" } else { "places" };
        Self::new(
            ErrorKind::StaleBase,
            format!(
                "File '{path}' changed since it was viewed, and your change and the other meet \
                 in {count} {places}; nothing was written. Where they meet, the file now \
                 (<<<<<<< now) and your change (>>>>>>> yours):\n{conflicts}\nView it again \
                 and make the change on what it holds now."
            ),
        )
    }

    /// A change made on a version since changed, with too much changed on
    /// either side to merge within the diff's budget.
    #[cold]
    pub fn too_much_to_merge(path: &str) -> Self {
        Self::new(
            ErrorKind::StaleBase,
            format!(
                "File '{path}' changed since it was viewed, and the changes are too large to \
                 merge; nothing was written. View it again and make the change on what it \
                 holds now."
            ),
        )
    }

    /// The lock values describe a file, and there is none.
    #[cold]
    pub fn vanished(path: &str) -> Self {
        Self::new(
            ErrorKind::Vanished,
            format!(
                "File '{path}' no longer exists, though the lock values given describe one; \
                 nothing was written. Write without lock values to create it."
            ),
        )
    }

    /// Lock values for a file with other hard links, which the tool does
    /// not read, so cannot compare.
    #[cold]
    pub fn shared_file_lock(path: &str) -> Self {
        Self::new(
            ErrorKind::SharedFile,
            format!(
                "File '{path}' has other hard links, which may lie beyond the project: the tool \
                 does not read it, so it cannot check lock values against it; nothing was \
                 written. Write without lock values to replace it."
            ),
        )
    }

    /// An edit of a file with other hard links, which the tool does not
    /// read.
    pub fn shared_file_edit(path: &str) -> Self {
        Self::new(
            ErrorKind::SharedFile,
            format!(
                "File '{path}' has other hard links, which may lie beyond the project: the tool \
                 does not read it, so it cannot edit it; nothing was written. Use Write to \
                 replace it whole."
            ),
        )
    }

    /// `create_only`, and the file exists: `len` bytes, when they may be
    /// told.
    #[cold]
    pub fn exists(path: &str, len: Option<u64>) -> Self {
        let size = match len {
            Some(1) => " (1 byte)".to_owned(),
            Some(len) => format!(" ({len} bytes)"),
            None => String::new(),
        };
        Self::new(
            ErrorKind::Exists,
            format!(
                "File '{path}' already exists{size}; create_only refuses to replace it. \
                 Read it first, then write without create_only to replace it, or choose another path."
            ),
        )
    }

    /// The content holds `character`, on its `line` (from 1), which the
    /// file's `encoding` cannot store.
    #[cold]
    pub fn unencodable(encoding: &str, character: char, line: u64) -> Self {
        Self::new(
            ErrorKind::Unencodable,
            format!(
                "The file is {encoding} and '{character}' (U+{:04X}, line {line}) cannot be \
                 written in it; nothing was written. Use characters the encoding has, or pass \
                 keep_format: false to write the file as UTF-8.",
                character as u32
            ),
        )
    }

    /// The call named an encoding the file is not valid text in.
    #[cold]
    pub fn not_in_encoding(encoding: &str) -> Self {
        Self::new(
            ErrorKind::Unencodable,
            format!(
                "The file is not valid {encoding} text, the encoding the call named; nothing was \
                 written. Name the encoding it is in, or leave out encoding to let the tool find it."
            ),
        )
    }

    /// The file's encoding is a guess the content does not settle:
    /// `candidates` are the likeliest, the guess first.
    #[cold]
    pub fn encoding_unsettled(candidates: &[String]) -> Self {
        Self::new(
            ErrorKind::Unencodable,
            format!(
                "The file's encoding is uncertain: it reads as {}, and the content does not tell \
                 which (no line of the file with non-ASCII text is in it unchanged). Nothing was \
                 written. Pass encoding: \"<name>\" naming the file's encoding, or keep_format: \
                 false to write the content as UTF-8.",
                candidates.join(", ")
            ),
        )
    }

    /// An omission placeholder in content that removes lines, refused.
    #[cold]
    pub fn placeholder(line: u64, text: &str) -> Self {
        let text = text.trim();
        Self::new(
            ErrorKind::Placeholder,
            format!(
                "Line {line} of the content looks like an omission placeholder ({:?}) while the \
                 write removes lines; nothing was written. Write the complete file content.",
                &text[..text.floor_char_boundary(80)]
            ),
        )
    }
}
