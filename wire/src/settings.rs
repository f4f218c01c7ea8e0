//! The host's settings (`docs/contract.md#host-config`), as the environment
//! variables that carry them to the component.
//!
//! A model that calls the tool's exports cannot set environment variables,
//! so settings that loosen protections (empty files, no `.git` protection,
//! a larger content limit) stay the host's. A host that sets nothing gets
//! [`Settings::default`]. A malformed value, or an unknown variable of the
//! tool's prefix (a misspelt `WRITE_TOOL_READ_ONLY` must not leave a root
//! writable), is an error: the component then refuses every call rather
//! than fall back to defaults that may be looser than the host meant.

use std::fmt;

use crate::defaults;

/// What every setting's variable name starts with.
pub const PREFIX: &str = "WRITE_TOOL_";
/// Largest `content` accepted, in bytes.
pub const MAX_CONTENT_BYTES: &str = "WRITE_TOOL_MAX_CONTENT_BYTES";
/// Accept empty content.
pub const ALLOW_EMPTY: &str = "WRITE_TOOL_ALLOW_EMPTY";
/// The diff's time bound for the largest texts, in milliseconds.
pub const DIFF_TIMEOUT_MS: &str = "WRITE_TOOL_DIFF_TIMEOUT_MS";
/// Protect `.git`.
pub const PROTECT_GIT: &str = "WRITE_TOOL_PROTECT_GIT";
/// More protected globs, one per line.
pub const PROTECT: &str = "WRITE_TOOL_PROTECT";
/// Refuse every write.
pub const READ_ONLY: &str = "WRITE_TOOL_READ_ONLY";
/// Which syncs a write makes: `full`, `file` or `none`.
pub const SYNC: &str = "WRITE_TOOL_SYNC";
/// Sweep the tool's leftover temp files before a write.
pub const SWEEP_TEMPS: &str = "WRITE_TOOL_SWEEP_TEMPS";
/// The envelope's form when a call does not ask: `compact` or `full`
/// (`docs/contract.md#envelope`).
pub const ENVELOPE: &str = "WRITE_TOOL_ENVELOPE";
/// Refuse content with omission placeholders instead of warning.
pub const REFUSE_PLACEHOLDERS: &str = "WRITE_TOOL_REFUSE_PLACEHOLDERS";
/// The name of the preopen that holds the journal (`docs/contract.md#journal`).
pub const JOURNAL: &str = "WRITE_TOOL_JOURNAL";
/// The journal's bound on its size, in bytes.
pub const JOURNAL_MAX_BYTES: &str = "WRITE_TOOL_JOURNAL_MAX_BYTES";
/// The journal's bound on the changes it keeps.
pub const JOURNAL_MAX_CHANGES: &str = "WRITE_TOOL_JOURNAL_MAX_CHANGES";
/// The journal's bound on a change's age, in days.
pub const JOURNAL_MAX_AGE_DAYS: &str = "WRITE_TOOL_JOURNAL_MAX_AGE_DAYS";
/// Whether calls may revert changes and set checkpoints.
pub const REVERT: &str = "WRITE_TOOL_REVERT";
/// Whether calls may read and maintain the journal (`history`, `verify`,
/// `gc`): the host's own commands, never a model's.
pub const ADMIN: &str = "WRITE_TOOL_ADMIN";
/// The calls are a person's own commands at the `write-tool` command
/// line: the journal records them as a person's (which a model may not
/// undo), and messages name the command line's flags rather than the
/// settings a model's host would set.
pub const PERSON: &str = "WRITE_TOOL_PERSON";
/// Who the host is, written into the journal's lock while a call holds
/// it, so that a host can tell a lock whose holder died.
pub const HOLDER: &str = "WRITE_TOOL_HOLDER";
/// The session a call is part of (a `serve` stream, an MCP connection, a
/// WebSocket connection): 32 hex digits the host draws, under which the
/// journal keeps what the session has seen (`docs/contract.md#session`).
pub const SESSION: &str = "WRITE_TOOL_SESSION";
/// Refuse a write or edit of an existing file the session has not viewed.
pub const READ_FIRST: &str = "WRITE_TOOL_READ_FIRST";
/// Whether patches may delete and move files (`docs/contract.md#patch`).
pub const ALLOW_DELETE: &str = "WRITE_TOOL_ALLOW_DELETE";
/// Most files one `write_many` writes.
pub const MANY_MAX_FILES: &str = "WRITE_TOOL_MANY_MAX_FILES";
/// Most bytes of content one `write_many` carries in all.
pub const MANY_MAX_BYTES: &str = "WRITE_TOOL_MANY_MAX_BYTES";

/// The `write-tool` host's compile cache: `off` turns it off.
pub const CACHE: &str = "WRITE_TOOL_CACHE";
/// The `write-tool` host's compile cache directory.
pub const CACHE_DIR: &str = "WRITE_TOOL_CACHE_DIR";
/// The `write-tool` host's bound on one call, in milliseconds.
pub const TIMEOUT_MS: &str = "WRITE_TOOL_TIMEOUT_MS";
/// The `write-tool` host's cap on the component's memory, in MiB.
pub const MEMORY_LIMIT_MIB: &str = "WRITE_TOOL_MEMORY_LIMIT_MIB";
/// The `write-tool` host's bound on one request, in bytes.
pub const MAX_REQUEST_BYTES: &str = "WRITE_TOOL_MAX_REQUEST_BYTES";
/// The `write-tool` CLI's roots when no `--root` is given (a `PATH`-style
/// list).
pub const ROOT: &str = "WRITE_TOOL_ROOT";
/// The `write-tool` host's journal directory (`off`: no journal).
pub const JOURNAL_DIR: &str = "WRITE_TOOL_JOURNAL_DIR";
/// The `write-tool` host's per-call log lines: `text` or `json`.
pub const LOG_FORMAT: &str = "WRITE_TOOL_LOG_FORMAT";

/// Whether `value` turns something off, in the spellings people write:
/// `off`, `false`, `no` or `0`, in any case.
pub fn is_off(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "off" | "false" | "no" | "0"
    )
}

/// Whether `value` turns something on: `on`, `true`, `yes` or `1`, in any
/// case.
pub fn is_on(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "on" | "true" | "yes" | "1"
    )
}

/// Variables of the tool's prefix that are the `write-tool` host's own,
/// not the component's. The component takes them for known and ignores
/// them: hosts that hand the component their whole environment (jco's
/// preview2-shim does) pass them on from a user's shell.
pub const HOST_ONLY: [&str; 8] = [
    CACHE,
    CACHE_DIR,
    TIMEOUT_MS,
    MEMORY_LIMIT_MIB,
    MAX_REQUEST_BYTES,
    ROOT,
    JOURNAL_DIR,
    LOG_FORMAT,
];

/// How hard a write works to survive a power cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Sync the file before the rename and the directory after it: once the
    /// call answers, the new content survives a crash.
    #[default]
    Full,
    /// Sync the file only: the content is never torn, but the rename itself
    /// may be lost in a crash.
    File,
    /// No syncs (tmpfs, CI, scratch trees): still atomic for every reader,
    /// not durable.
    None,
}

impl Durability {
    /// The setting's value: `full`, `file` or `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Full => "full",
            Durability::File => "file",
            Durability::None => "none",
        }
    }
}

/// The settings, typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Largest `content` accepted, in bytes.
    pub max_content_bytes: u64,
    /// Accept empty content.
    pub allow_empty: bool,
    /// The diff's time bound for the largest texts, in milliseconds.
    pub diff_timeout_ms: u64,
    /// Protect `.git`, in any letter case, at any depth.
    pub protect_git: bool,
    /// More protected globs.
    pub protect: Vec<String>,
    /// Refuse every write (dry runs still work).
    pub read_only: bool,
    /// Which syncs a write makes.
    pub durability: Durability,
    /// Sweep the tool's leftover temp files before a write.
    pub sweep_temps: bool,
    /// Refuse (`INVALID_PARAM`) an update whose content adds an omission
    /// placeholder while it removes lines, instead of warning.
    pub refuse_placeholders: bool,
    /// The envelope's form when a call does not ask; `None`: full for a
    /// person's commands, compact for a model's calls.
    pub envelope: Option<crate::Form>,
    /// The preopen that holds the journal; `None`: no journal, no undo.
    pub journal: Option<String>,
    /// The journal's bounds.
    pub journal_max_bytes: u64,
    /// The journal's bound on the changes it keeps.
    pub journal_max_changes: u64,
    /// The journal's bound on a change's age, in days.
    pub journal_max_age_days: u64,
    /// Calls may revert changes and set checkpoints.
    pub revert: bool,
    /// Calls may read and maintain the journal.
    pub admin: bool,
    /// The calls are a person's own commands ([`PERSON`]).
    pub person: bool,
    /// Who the host is, for the journal's lock.
    pub holder: Option<String>,
    /// Most files one `write_many` writes.
    pub many_max_files: u64,
    /// Most bytes of content one `write_many` carries in all.
    pub many_max_bytes: u64,
    /// Patches may delete and move files.
    pub allow_delete: bool,
    /// The session the calls are part of ([`SESSION`]).
    pub session: Option<String>,
    /// Refuse a write of an existing file the session has not viewed.
    pub read_first: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_content_bytes: defaults::MAX_CONTENT_BYTES,
            allow_empty: false,
            diff_timeout_ms: defaults::DIFF_TIMEOUT_MS,
            protect_git: true,
            protect: Vec::new(),
            read_only: false,
            durability: Durability::Full,
            sweep_temps: true,
            refuse_placeholders: false,
            envelope: None,
            journal: None,
            journal_max_bytes: defaults::JOURNAL_MAX_BYTES,
            journal_max_changes: defaults::JOURNAL_MAX_CHANGES,
            journal_max_age_days: defaults::JOURNAL_MAX_AGE_DAYS,
            revert: true,
            admin: false,
            person: false,
            holder: None,
            many_max_files: defaults::MANY_MAX_FILES,
            many_max_bytes: defaults::MANY_MAX_BYTES,
            allow_delete: false,
            session: None,
            read_first: false,
        }
    }
}

/// A setting the component cannot use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError(String);

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SettingsError {}

impl Settings {
    /// The settings the environment `vars` gives; variables without the
    /// tool's prefix are not the tool's and are ignored.
    pub fn from_env<K, V>(vars: impl IntoIterator<Item = (K, V)>) -> Result<Settings, SettingsError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut settings = Settings::default();
        for (name, value) in vars {
            let (name, value) = (name.as_ref(), value.as_ref());
            if !name.starts_with(PREFIX) {
                continue;
            }
            match name {
                MAX_CONTENT_BYTES => settings.max_content_bytes = number(name, value)?,
                ALLOW_EMPTY => settings.allow_empty = boolean(name, value)?,
                DIFF_TIMEOUT_MS => settings.diff_timeout_ms = number(name, value)?,
                PROTECT_GIT => settings.protect_git = boolean(name, value)?,
                PROTECT => {
                    settings.protect = value
                        .lines()
                        .filter(|line| !line.trim().is_empty())
                        .map(str::to_owned)
                        .collect();
                    // Set, yet naming nothing: a host meant to protect
                    // something and would not.
                    if settings.protect.is_empty() {
                        return Err(invalid(name, value, "one or more globs, one per line"));
                    }
                }
                READ_ONLY => settings.read_only = boolean(name, value)?,
                SYNC => {
                    settings.durability = match value {
                        "full" => Durability::Full,
                        "file" => Durability::File,
                        "none" => Durability::None,
                        _ => return Err(invalid(name, value, "full, file or none")),
                    }
                }
                SWEEP_TEMPS => settings.sweep_temps = boolean(name, value)?,
                REFUSE_PLACEHOLDERS => settings.refuse_placeholders = boolean(name, value)?,
                ENVELOPE => {
                    settings.envelope = Some(
                        crate::Form::from_name(value)
                            .ok_or_else(|| invalid(name, value, "compact or full"))?,
                    );
                }
                JOURNAL => {
                    if value.is_empty() {
                        return Err(invalid(name, value, "the name of a preopened directory"));
                    }
                    settings.journal = Some(value.to_owned());
                }
                JOURNAL_MAX_BYTES => settings.journal_max_bytes = positive(name, value)?,
                JOURNAL_MAX_CHANGES => settings.journal_max_changes = positive(name, value)?,
                JOURNAL_MAX_AGE_DAYS => settings.journal_max_age_days = positive(name, value)?,
                REVERT => settings.revert = boolean(name, value)?,
                ADMIN => settings.admin = boolean(name, value)?,
                PERSON => settings.person = boolean(name, value)?,
                HOLDER => settings.holder = Some(value.to_owned()),
                MANY_MAX_FILES => settings.many_max_files = positive(name, value)?,
                MANY_MAX_BYTES => settings.many_max_bytes = positive(name, value)?,
                ALLOW_DELETE => settings.allow_delete = boolean(name, value)?,
                SESSION => {
                    if value.len() != 32 || !value.bytes().all(|b| b.is_ascii_hexdigit()) {
                        return Err(invalid(name, value, "32 hex digits"));
                    }
                    settings.session = Some(value.to_ascii_lowercase());
                }
                READ_FIRST => settings.read_first = boolean(name, value)?,
                _ if HOST_ONLY.contains(&name) => {}
                _ => {
                    return Err(SettingsError(format!(
                        "{} is not a setting of the tool",
                        shown(name)
                    )));
                }
            }
        }
        Ok(settings)
    }

    /// The variables that carry these settings: only those that differ
    /// from the defaults.
    pub fn to_env(&self) -> Vec<(&'static str, String)> {
        let default = Settings::default();
        let mut vars = Vec::new();
        let flag = |b: bool| if b { "true" } else { "false" }.to_owned();
        if self.max_content_bytes != default.max_content_bytes {
            vars.push((MAX_CONTENT_BYTES, self.max_content_bytes.to_string()));
        }
        if self.allow_empty != default.allow_empty {
            vars.push((ALLOW_EMPTY, flag(self.allow_empty)));
        }
        if self.diff_timeout_ms != default.diff_timeout_ms {
            vars.push((DIFF_TIMEOUT_MS, self.diff_timeout_ms.to_string()));
        }
        if self.protect_git != default.protect_git {
            vars.push((PROTECT_GIT, flag(self.protect_git)));
        }
        if !self.protect.is_empty() {
            vars.push((PROTECT, self.protect.join("\n")));
        }
        if self.read_only != default.read_only {
            vars.push((READ_ONLY, flag(self.read_only)));
        }
        if self.durability != default.durability {
            vars.push((SYNC, self.durability.as_str().to_owned()));
        }
        if self.sweep_temps != default.sweep_temps {
            vars.push((SWEEP_TEMPS, flag(self.sweep_temps)));
        }
        if self.refuse_placeholders != default.refuse_placeholders {
            vars.push((REFUSE_PLACEHOLDERS, flag(self.refuse_placeholders)));
        }
        if let Some(form) = self.envelope {
            vars.push((ENVELOPE, form.as_str().to_owned()));
        }
        if let Some(journal) = &self.journal {
            vars.push((JOURNAL, journal.clone()));
        }
        let numbers = [
            (
                JOURNAL_MAX_BYTES,
                self.journal_max_bytes,
                default.journal_max_bytes,
            ),
            (
                JOURNAL_MAX_CHANGES,
                self.journal_max_changes,
                default.journal_max_changes,
            ),
            (
                JOURNAL_MAX_AGE_DAYS,
                self.journal_max_age_days,
                default.journal_max_age_days,
            ),
            (MANY_MAX_FILES, self.many_max_files, default.many_max_files),
            (MANY_MAX_BYTES, self.many_max_bytes, default.many_max_bytes),
        ];
        for (name, value, default) in numbers {
            if value != default {
                vars.push((name, value.to_string()));
            }
        }
        if self.revert != default.revert {
            vars.push((REVERT, flag(self.revert)));
        }
        if self.admin != default.admin {
            vars.push((ADMIN, flag(self.admin)));
        }
        if self.person != default.person {
            vars.push((PERSON, flag(self.person)));
        }
        if self.allow_delete != default.allow_delete {
            vars.push((ALLOW_DELETE, flag(self.allow_delete)));
        }
        if let Some(holder) = &self.holder {
            vars.push((HOLDER, holder.clone()));
        }
        if let Some(session) = &self.session {
            vars.push((SESSION, session.clone()));
        }
        if self.read_first != default.read_first {
            vars.push((READ_FIRST, flag(self.read_first)));
        }
        vars
    }
}

fn number(name: &str, value: &str) -> Result<u64, SettingsError> {
    value
        .parse()
        .map_err(|_| invalid(name, value, "a whole number"))
}

/// A whole number above zero: a bound of zero would refuse everything.
fn positive(name: &str, value: &str) -> Result<u64, SettingsError> {
    match number(name, value)? {
        0 => Err(invalid(name, value, "a whole number above zero")),
        n => Ok(n),
    }
}

fn boolean(name: &str, value: &str) -> Result<bool, SettingsError> {
    match value {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(invalid(name, value, "true or false")),
    }
}

fn invalid(name: &str, value: &str, want: &str) -> SettingsError {
    SettingsError(format!("{name} must be {want}, not {}", shown(value)))
}

/// A value as a message shows it: quoted, and cut if long (a setting is
/// the host's, but a message should stay a line).
fn shown(value: &str) -> String {
    let cut: String = value.chars().take(64).collect();
    if cut.len() < value.len() {
        format!("{cut:?}…")
    } else {
        format!("{cut:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_variables_are_the_defaults() {
        let none: [(&str, &str); 0] = [];
        assert_eq!(Settings::from_env(none), Ok(Settings::default()));
        assert!(Settings::default().to_env().is_empty());
        let others = [("PATH", "/bin"), ("WRITE_TOOLX", "1")];
        assert_eq!(Settings::from_env(others), Ok(Settings::default()));
    }

    #[test]
    fn every_setting_round_trips() {
        let settings = Settings {
            max_content_bytes: 100,
            allow_empty: true,
            diff_timeout_ms: 5,
            protect_git: false,
            protect: vec!["*.pem".into(), "config/{a,b}".into()],
            read_only: true,
            durability: Durability::None,
            sweep_temps: false,
            refuse_placeholders: true,
            envelope: Some(crate::Form::Full),
            journal: Some("write-tool-journal".into()),
            journal_max_bytes: 1,
            journal_max_changes: 2,
            journal_max_age_days: 3,
            revert: false,
            admin: true,
            person: true,
            holder: Some("42".into()),
            many_max_files: 4,
            many_max_bytes: 5,
            allow_delete: true,
            session: Some("0123456789abcdef0123456789abcdef".into()),
            read_first: true,
        };
        let vars = settings.to_env();
        assert_eq!(vars.len(), 23);
        assert_eq!(Settings::from_env(vars), Ok(settings));
    }

    #[test]
    fn a_bad_value_or_an_unknown_name_is_an_error() {
        for (name, value, message) in [
            (
                READ_ONLY,
                "yes",
                "WRITE_TOOL_READ_ONLY must be true or false, not \"yes\"",
            ),
            (
                SYNC,
                "always",
                "WRITE_TOOL_SYNC must be full, file or none, not \"always\"",
            ),
            (MAX_CONTENT_BYTES, "-1", "must be a whole number"),
            (
                "WRITE_TOOL_READONLY",
                "true",
                "\"WRITE_TOOL_READONLY\" is not a setting of the tool",
            ),
        ] {
            let err = Settings::from_env([(name, value)]).expect_err(name);
            assert!(err.to_string().contains(message), "{err}");
        }
    }

    #[test]
    fn the_hosts_own_variables_are_known_and_ignored() {
        let settings = Settings::from_env([(CACHE_DIR, "/x"), (CACHE, "off")]).expect("known");
        assert_eq!(settings, Settings::default());
    }
}
