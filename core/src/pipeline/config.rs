//! What the host chooses for every call.

use std::sync::Arc;

use write_tool_wire::defaults;
use write_tool_wire::settings::Settings;

use crate::diff::DiffLimits;
use crate::fs::Durability;
use crate::journal::{By, Idem, Journal};
use crate::protect::{ProtectError, Protection};

/// Host-chosen limits and switches.
#[derive(Debug, Clone)]
pub struct Config {
    /// Largest content accepted, in bytes.
    pub max_content_bytes: u64,
    /// Accept empty content.
    pub allow_empty: bool,
    /// Preview size and the diff's budget of work.
    pub diff: DiffLimits,
    /// Paths the tool refuses to write.
    pub protection: Protection,
    /// The root is read-only: every write that would proceed is refused
    /// with `PERMISSION_DENIED` (dry runs still work).
    pub read_only: bool,
    /// Which syncs a write makes.
    pub durability: Durability,
    /// Before a write, remove the tool's temp files that a killed writer
    /// left in the target's directory (`docs/contract.md#writing`).
    /// Default true. Listing a directory costs time in proportion to its
    /// entries, so a host that makes many writes may sweep only the first
    /// write to each directory (the wasmtime host does).
    pub sweep_temps: bool,
    /// Refuse an update that adds an omission placeholder while removing
    /// lines (`INVALID_PARAM`), instead of warning.
    pub refuse_placeholders: bool,
    /// The envelope's form when a call does not ask; `None`: full for a
    /// person, compact for a model (`docs/contract.md#envelope`).
    pub form: Option<write_tool_wire::Form>,
    /// The journal every applied change is recorded in; `None`: no record,
    /// no undo (`docs/contract.md#journal`).
    pub journal: Option<Arc<Journal>>,
    /// Calls may revert changes and set checkpoints.
    pub revert: bool,
    /// Calls may read and maintain the journal (the host's own commands).
    pub admin: bool,
    /// Who makes the calls: the journal records it, a model may not undo
    /// a person's change, and a person's messages name the command line's
    /// flags.
    pub by: By,
    /// Most files one `write_many` writes.
    pub many_max_files: u64,
    /// Most bytes of content one `write_many` carries in all.
    pub many_max_bytes: u64,
    /// Patches may delete and move files (`docs/contract.md#patch`).
    pub allow_delete: bool,
    /// The session the call is part of, under which the journal keeps what
    /// it has seen (`docs/contract.md#session`); `None`: no session.
    pub session: Option<String>,
    /// Refuse a write or edit of an existing file the session has not
    /// viewed.
    pub read_first: bool,
    /// The idempotency key of the call, which its record keeps
    /// (`docs/contract.md#idempotency`): set by [`super::call`] for a call
    /// that carries one; a host leaves it `None`.
    pub idempotency: Option<Idem>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_content_bytes: defaults::MAX_CONTENT_BYTES,
            allow_empty: false,
            diff: DiffLimits::default(),
            protection: Protection::default(),
            read_only: false,
            durability: Durability::Full,
            sweep_temps: true,
            refuse_placeholders: false,
            form: None,
            journal: None,
            revert: true,
            admin: false,
            by: By::Model,
            many_max_files: defaults::MANY_MAX_FILES,
            many_max_bytes: defaults::MANY_MAX_BYTES,
            allow_delete: false,
            session: None,
            read_first: false,
            idempotency: None,
        }
    }
}

impl Config {
    /// The configuration the host's settings ask for; fails when a protect
    /// pattern is empty or not a valid glob.
    pub fn from_settings(settings: &Settings) -> Result<Config, ProtectError> {
        Ok(Config {
            max_content_bytes: settings.max_content_bytes,
            allow_empty: settings.allow_empty,
            protection: Protection::new(settings.protect_git, &settings.protect)?,
            read_only: settings.read_only,
            durability: settings.durability,
            sweep_temps: settings.sweep_temps,
            refuse_placeholders: settings.refuse_placeholders,
            form: settings.envelope,
            revert: settings.revert,
            admin: settings.admin,
            by: if settings.person {
                By::Person
            } else {
                By::Model
            },
            many_max_files: settings.many_max_files,
            many_max_bytes: settings.many_max_bytes,
            allow_delete: settings.allow_delete,
            session: settings.session.clone(),
            read_first: settings.read_first,
            ..Config::default()
        }
        .with_diff_budget_ms(settings.diff_timeout_ms))
    }

    /// Set the diff's budget, in milliseconds of work (see
    /// [`DiffLimits::work_for`]).
    pub fn with_diff_budget_ms(mut self, ms: u64) -> Self {
        self.diff.budget_ms = ms;
        self
    }
}
