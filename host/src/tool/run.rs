//! How one call runs, and the settings every call carries.

use write_tool_wire::settings::Settings;

use crate::{Cancel, Options, Session};

/// How one call runs: whether it sweeps temp files, the flag that cancels
/// it, the session it is part of, and whose call it is.
#[derive(Clone, Copy)]
pub(super) struct Run<'a> {
    pub(super) sweep: bool,
    pub(super) cancel: Option<&'a Cancel>,
    pub(super) session: Option<&'a Session>,
    pub(super) caller: Caller,
}

impl Run<'_> {
    /// A model's call outside a session, not cancellable.
    pub(super) fn model(sweep: bool) -> Run<'static> {
        Run {
            sweep,
            cancel: None,
            session: None,
            caller: Caller::Model,
        }
    }
}

/// The guest's settings for `options` (the journal is a root's, added per
/// call).
pub(super) fn settings_of(options: &Options) -> Settings {
    Settings {
        max_content_bytes: options.max_content_bytes,
        allow_empty: options.allow_empty,
        diff_timeout_ms: u64::try_from(options.diff_timeout.as_millis()).unwrap_or(u64::MAX),
        protect_git: options.default_protect,
        protect: options.protect.clone(),
        read_only: options.read_only,
        durability: options.durability,
        sweep_temps: true,
        refuse_placeholders: options.refuse_placeholders,
        envelope: options.envelope,
        revert: options.model_revert,
        journal_max_bytes: options.journal_bounds.0,
        journal_max_changes: options.journal_bounds.1,
        journal_max_age_days: options.journal_bounds.2,
        many_max_files: options.many_bounds.0,
        many_max_bytes: options.many_bounds.1,
        allow_delete: options.allow_delete,
        read_first: options.read_first,
        ..Settings::default()
    }
}

/// Who makes a call: a model (through any surface); a person's command
/// that changes files; or the host's own commands, a person's too, which
/// may revert and read the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Caller {
    Model,
    Person,
    Host,
}
