//! The journal's records: one JSON line each in `log`
//! (`docs/contract.md#journal`).

use serde::{Deserialize, Serialize};

/// What a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// One file written.
    Write,
    /// Several files written together (`write_many`).
    Many,
    /// Changes undone.
    Revert,
    /// A named point to revert to.
    Checkpoint,
    /// A change recorded whose commit did not happen (`of`).
    Void,
    /// Old records dropped (`dropped_through`).
    Gc,
}

/// What a change did to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// The file did not exist.
    Create,
    /// The file was replaced.
    Update,
    /// The file was removed (a revert of its creation).
    Delete,
}

/// A file's content as the journal knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// Its digest ([`super::Digest`]), which names the saved copy.
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its modification time, ms since the epoch, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtime_ms: Option<i64>,
    /// It is a symbolic link, not a file: the saved copy holds the link's
    /// target, `size` its length (a link removed, or made again).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub link: bool,
}

/// One file of a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// The file as the envelope's `path_resolved` names it: root-relative
    /// in the project root, absolute in another root.
    pub path: String,
    /// What happened to it.
    pub op: Op,
    /// The content before (saved in `objects/`); `None`: no file.
    pub old: Option<State>,
    /// The content after; `None`: no file.
    pub new: Option<State>,
    /// The outermost directory the change created for it (records of
    /// earlier versions list every one, outermost first): a revert removes
    /// it and those between it and the file, when empty. One name, not
    /// the chain, so that a record stays small however deep the path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirs: Vec<String>,
    /// The old file had other hard links: a revert answers without its
    /// content.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared: bool,
    /// The old file had other hard links, so the tool never read it and
    /// nothing of it was saved (`old` holds no digest): the change cannot
    /// be reverted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unsaved: bool,
}

impl FileChange {
    /// Whether the change removed a link or made one again: its path names
    /// the link itself, never what it points to.
    pub fn is_link(&self) -> bool {
        self.old.iter().chain(&self.new).any(|s| s.link)
    }
}

/// Who made a change: a person (the host's own commands) or a model (any
/// tool call). A model may not undo a person's change, nor find a
/// person's checkpoint by its name (`docs/contract.md#journal`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum By {
    /// A person. Records of earlier versions, which do not say, count as
    /// a person's: the safe side.
    #[default]
    Person,
    /// A model.
    Model,
}

/// A change's idempotency key and the arguments it came with, each as a
/// digest under the journal's key: the journal keeps neither a caller's
/// key nor a hash of its content that could be checked against a guess.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Idem {
    /// The key's digest.
    pub key: String,
    /// The digest of the call's tool name and arguments, less the key and
    /// the answer's form.
    pub args: String,
}

/// One line of `log`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Its place in the journal, from 1, one more than the record before.
    pub seq: u64,
    /// The change id callers use: `c` and `seq`.
    pub id: String,
    /// When it was made, ms since the epoch.
    pub time_ms: i64,
    /// What it is.
    pub kind: Kind,
    /// SHA-256 of the line before it (64 zeros for the first).
    pub prev: String,
    /// The files a change touched, in the order it wrote them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileChange>,
    /// A revert: the change it undid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverts: Option<String>,
    /// A revert to a checkpoint: its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// A revert: the seqs of the changes it undid.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undoes: Vec<u64>,
    /// Who made it.
    #[serde(default)]
    pub by: By,
    /// A checkpoint: its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A void record: the record whose commit did not happen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<u64>,
    /// A gc record: the last record it dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_through: Option<u64>,
    /// The idempotency key of the call that made it, and what that call
    /// asked (`docs/contract.md#idempotency`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idem: Option<Idem>,
    /// Bytes this record added to the journal (saved contents and itself).
    pub bytes: u64,
    /// The journal's size after it, in bytes.
    pub total: u64,
}

impl Record {
    /// A record of `kind`, to be numbered and chained by
    /// [`super::Held::append`].
    pub fn new(kind: Kind) -> Record {
        Record {
            seq: 0,
            id: String::new(),
            time_ms: 0,
            kind,
            prev: String::new(),
            files: Vec::new(),
            reverts: None,
            to: None,
            undoes: Vec::new(),
            by: By::Person,
            name: None,
            of: None,
            dropped_through: None,
            idem: None,
            bytes: 0,
            total: 0,
        }
    }

    /// Whether it changed files (and so can be reverted).
    pub fn is_change(&self) -> bool {
        matches!(self.kind, Kind::Write | Kind::Many | Kind::Revert)
    }
}

/// The id of record `seq`.
pub fn id_of(seq: u64) -> String {
    format!("c{seq}")
}

/// The seq an id names: `c12` or `12`.
pub fn seq_of(id: &str) -> Option<u64> {
    id.strip_prefix('c').unwrap_or(id).parse().ok()
}
