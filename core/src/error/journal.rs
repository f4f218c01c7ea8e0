//! The journal: what it cannot record, and the reverts it refuses.

use std::io;

use super::{ErrorKind, ToolError};

impl ToolError {
    /// The journal could not record the change (`why`): the write is
    /// refused, since a write never goes unrecorded while it is on.
    #[cold]
    pub fn journal(why: &str) -> Self {
        Self::new(
            ErrorKind::Journal,
            format!(
                "The journal could not record this change: {why}. Nothing was written. Free \
                 space in the journal's directory (`write-tool journal gc` drops old changes), \
                 or turn the journal off (`--no-journal`)."
            ),
        )
    }

    /// A change a writer that stopped left half done could not be
    /// finished or rolled back (`why`): this call writes nothing, and the
    /// next one tries again.
    #[cold]
    pub fn unfinished(why: &str) -> Self {
        Self::new(
            ErrorKind::Journal,
            format!(
                "A change another writer left half done (it was stopped while committing) could \
                 not be finished or rolled back ({why}); the next call tries again. Nothing of \
                 this call was written."
            ),
        )
    }

    /// The journal could not record the change because of `err`.
    #[cold]
    pub fn journal_io(err: &io::Error) -> Self {
        use std::io::ErrorKind as K;
        let why = match err.kind() {
            K::StorageFull | K::QuotaExceeded | K::FileTooLarge => {
                "the journal's file system is full or over its quota"
            }
            K::ArgumentListTooLong => "the change is too large for one record of the journal",
            K::WouldBlock => "another writer held the journal for too long",
            K::PermissionDenied | K::ReadOnlyFilesystem => {
                "the journal's directory cannot be written"
            }
            K::OutOfMemory => "the journal is over its size bound even after dropping old changes",
            K::InvalidData => {
                return Self::new(
                    ErrorKind::Journal,
                    "The journal could not record this change: it is damaged (its secret, \
                     which names saved contents, is not the one it made). Nothing was written. \
                     Move the root's journal directory aside to start a new one, or turn the \
                     journal off (`--no-journal`).",
                );
            }
            _ => "the journal could not be written",
        };
        Self::journal(why)
    }

    /// The host keeps no journal: nothing can be undone.
    #[cold]
    pub fn no_journal() -> Self {
        Self::new(
            ErrorKind::HostRefused,
            "This host keeps no journal, so changes cannot be undone: it has to grant the tool \
             a directory for it (WRITE_TOOL_JOURNAL). Nothing was changed.",
        )
    }

    /// `write_many` without a journal: its all-or-nothing rests on it.
    #[cold]
    pub fn no_journal_for_many() -> Self {
        Self::new(
            ErrorKind::HostRefused,
            "write_many needs the journal, which this host does not keep: a crash between two \
             renames could not be rolled back, so the writes would not be all or nothing. \
             Write the files one by one, or grant the tool a journal directory \
             (WRITE_TOOL_JOURNAL). Nothing was written.",
        )
    }

    /// A patch that needs the journal (several files, a delete or a move)
    /// on a host that keeps none.
    #[cold]
    pub fn no_journal_for_patch() -> Self {
        Self::new(
            ErrorKind::HostRefused,
            "This patch changes several files, or deletes or moves one: that needs the journal, \
             which this host does not keep, to be all or nothing and undoable. Apply the files' \
             changes one by one (a patch of one Update or Add File), or grant the tool a \
             journal directory (WRITE_TOOL_JOURNAL). Nothing was written.",
        )
    }

    /// The host does not let calls do `what`.
    #[cold]
    pub fn host_refuses(what: &str) -> Self {
        Self::new(
            ErrorKind::HostRefused,
            format!("The host does not let calls {what}. Nothing was changed."),
        )
    }

    /// An idempotency key with no journal to keep it in.
    #[cold]
    pub fn no_journal_for_key() -> Self {
        Self::new(
            ErrorKind::HostRefused,
            "This call carries an idempotency_key, and this host keeps no journal, where keys are \
             kept: a repeat could not be told from a new call. Nothing was changed. Send it \
             without the key, or grant the tool a journal directory (WRITE_TOOL_JOURNAL).",
        )
    }

    /// The idempotency key of the change `id`, sent with other arguments.
    #[cold]
    pub fn key_reused(id: &str) -> Self {
        Self::new(
            ErrorKind::KeyUsed,
            format!(
                "This idempotency_key was used by change {id}, whose arguments were not these: a \
                 key names one request. Nothing was changed. Send this request with a new key."
            ),
        )
    }

    /// A twin of the call, with its idempotency key, committed `id` while
    /// it ran.
    #[cold]
    pub fn key_committed(id: &str) -> Self {
        Self::new(
            ErrorKind::KeyUsed,
            format!(
                "A call with this idempotency_key was committed as {id} while this one ran; this \
                 one changed nothing."
            ),
        )
    }

    /// A model asked to undo a change a person made.
    #[cold]
    pub fn persons_change(id: &str) -> Self {
        Self::new(
            ErrorKind::HostRefused,
            format!(
                "{id} was made by a person, not by a model: a model may not undo it. Nothing \
                 was changed."
            ),
        )
    }

    /// A model's revert would take back a person's later change of `path`
    /// (the change `id`), which no model may do, forced or not.
    #[cold]
    pub fn changed_by_a_person_since(path: &str, id: &str) -> Self {
        Self::new(
            ErrorKind::HostRefused,
            format!(
                "'{path}' was changed by a person after that change ({id}): a model may not undo \
                 over a person's change, even with 'force'. Nothing was changed. To go on, write \
                 the file as it should be now (view it first), or ask the person to revert."
            ),
        )
    }

    /// A revert would put back the content of a file the tool never read
    /// (it had other hard links), which the journal therefore never saved.
    #[cold]
    pub fn unrevertable(path: &str, id: &str) -> Self {
        Self::new(
            ErrorKind::InvalidParam,
            format!(
                "{id} cannot be reverted: '{path}' had other hard links when {id} replaced it, so \
                 the tool never read it and the journal holds nothing to put back. Nothing was \
                 changed."
            ),
        )
    }

    /// A model's revert would remove a file it did not create as it is
    /// now, on a host that does not let calls remove files.
    #[cold]
    pub fn revert_would_delete(path: &str) -> Self {
        Self::new(
            ErrorKind::HostRefused,
            format!(
                "Reverting would remove '{path}', which changed since it was created, and the \
                 host does not let calls remove files (WRITE_TOOL_ALLOW_DELETE). Nothing was \
                 changed."
            ),
        )
    }

    /// No change or checkpoint of that name in the journal.
    #[cold]
    pub fn no_such_change(what: &str) -> Self {
        Self::new(
            ErrorKind::NoSuchChange,
            format!(
                "The journal has no {what} (it may have been dropped by the journal's bounds). \
                 Nothing was changed."
            ),
        )
    }

    /// A revert would lose changes made since the ones it undoes.
    #[cold]
    pub fn revert_conflict(paths: &[String], lost: &str) -> Self {
        Self::new(
            ErrorKind::RevertConflict,
            format!(
                "{} changed since the change being reverted: {}. Nothing was changed. Reverting \
                 anyway ('force': true) loses what this diff shows:\n{lost}",
                if paths.len() == 1 { "A file" } else { "Files" },
                paths
                    .iter()
                    .map(|p| format!("'{p}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    }

    /// The content the journal saved for `path` cannot be restored.
    #[cold]
    pub fn saved_altered(path: &str, missing: bool) -> Self {
        Self::new(
            ErrorKind::SavedAltered,
            if missing {
                format!("The journal's saved content of '{path}' is gone; nothing was changed.")
            } else {
                format!(
                    "The journal's saved content of '{path}' was changed since it was saved (its \
                     digest differs); it is not restored, and nothing was changed."
                )
            },
        )
    }
}
