//! The command line, and its lowering into the library's [`Options`].

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::BoolishValueParser;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::parser::ValueSource;
use clap::{ArgAction, CommandFactory, FromArgMatches, Parser};
use write_tool::wire::settings;
use write_tool::{CompileCache, Durability, JournalChoice, Options};

pub(crate) use super::subcommands::{Command, JournalAction};

/// Write files for AI agents, sandboxed in a WebAssembly component.
#[derive(Debug, Parser)]
#[command(name = "write-tool", version, about, long_about = None)]
pub(crate) struct Cli {
    /// Project root: the only directory the tool can touch (default: the
    /// current directory). Give it again to allow more directories:
    /// relative paths resolve against the first, and `write_file` calls may
    /// name absolute paths inside any of them.
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) root: Vec<PathBuf>,

    /// Pretty-print the envelope.
    #[arg(long, global = true)]
    pub(crate) pretty: bool,

    /// Largest content accepted, in bytes.
    #[arg(long, global = true, value_name = "BYTES", env = settings::MAX_CONTENT_BYTES,
          default_value_t = Options::default().max_content_bytes)]
    max_content_bytes: u64,

    /// Largest request `call` and `serve` read, in bytes (default: four
    /// times --max-content-bytes plus 1 MiB, room for JSON escapes). A longer
    /// request is answered with INVALID_PARAM without being buffered.
    #[arg(long, global = true, value_name = "BYTES", env = settings::MAX_REQUEST_BYTES,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_request_bytes: Option<u64>,

    /// Accept empty content (creates or truncates to an empty file).
    #[arg(long, global = true, env = settings::ALLOW_EMPTY, action = ArgAction::SetTrue,
          value_parser = BoolishValueParser::new())]
    allow_empty: bool,

    /// Wall-time bound on one call, in milliseconds (at least 1).
    #[arg(long, global = true, value_name = "MS", env = settings::TIMEOUT_MS, default_value_t = 30_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: u64,

    /// The diff's budget of work for the largest texts (64 MiB of old and
    /// new content), in milliseconds of 70,000 steps of the search (work,
    /// not time: the same diff on every machine); smaller ones get a
    /// share. Past it the diff is coarser but still correct.
    #[arg(long, global = true, value_name = "MS", env = settings::DIFF_TIMEOUT_MS,
          default_value_t = 1_000)]
    diff_timeout_ms: u64,

    /// Cap on the component's memory, in MiB (at least 8: the component's
    /// memory starts at 8 MiB).
    #[arg(long, global = true, value_name = "MIB", env = settings::MEMORY_LIMIT_MIB, default_value_t = 1024,
          value_parser = clap::value_parser!(u64).range(8..))]
    memory_limit_mib: u64,

    /// Protect paths matching this glob (repeatable): a pattern without '/'
    /// matches any name in the path ('*.pem'), one with '/' matches the path
    /// or an ancestor ('config/prod'). An empty pattern is refused: it would
    /// protect nothing.
    #[arg(long, global = true, value_name = "GLOB", env = settings::PROTECT,
          value_delimiter = '\n', value_parser = pattern)]
    protect: Vec<String>,

    /// Do not protect '.git' and git's hooks (protected by default;
    /// WRITE_TOOL_PROTECT_GIT=false says the same).
    #[arg(long, global = true)]
    no_default_protect: bool,

    /// Preopen the root read-only: every write is refused with
    /// PERMISSION_DENIED; dry runs still work.
    #[arg(long, global = true, env = settings::READ_ONLY, action = ArgAction::SetTrue,
          value_parser = BoolishValueParser::new())]
    read_only: bool,

    /// Refuse an update whose content adds an omission placeholder
    /// ('// ... rest of the code unchanged ...') while it removes lines,
    /// with INVALID_PARAM; by default the envelope warns.
    #[arg(long, global = true, env = settings::REFUSE_PLACEHOLDERS, action = ArgAction::SetTrue,
          value_parser = BoolishValueParser::new())]
    refuse_placeholders: bool,

    /// Which syncs a write makes: 'full' (file and directory), 'file', or
    /// 'none' (tmpfs, CI, scratch trees: atomic but not durable).
    #[arg(long, global = true, value_enum, env = settings::SYNC, default_value_t = Sync::Full)]
    sync: Sync,

    /// Keep compiled code in this directory (default: $WRITE_TOOL_CACHE_DIR,
    /// else $XDG_CACHE_HOME/write-tool, else ~/.cache/write-tool).
    /// --no-cache wins over it.
    #[arg(long, global = true, value_name = "DIR", env = settings::CACHE_DIR)]
    cache_dir: Option<PathBuf>,

    /// Compile the component in this process, without the cache (also:
    /// WRITE_TOOL_CACHE=off).
    #[arg(long, global = true)]
    no_cache: bool,

    /// Keep the journals (every change's record and what it replaced, for
    /// undo) below this directory, one per project root (default: the
    /// per-user state directory, $XDG_STATE_HOME/write-tool/journals or
    /// ~/.local/state/write-tool/journals). 'off' is --no-journal.
    #[arg(long, global = true, value_name = "DIR", env = settings::JOURNAL_DIR)]
    journal: Option<PathBuf>,

    /// Record nothing: changes cannot be undone and write-many is refused.
    #[arg(long, global = true)]
    no_journal: bool,

    /// The journal's bound on its size, in bytes (oldest changes dropped first).
    #[arg(long, global = true, value_name = "BYTES", env = settings::JOURNAL_MAX_BYTES,
          default_value_t = write_tool::wire::defaults::JOURNAL_MAX_BYTES,
          value_parser = clap::value_parser!(u64).range(1..))]
    journal_max_bytes: u64,

    /// The journal's bound on the changes it keeps.
    #[arg(long, global = true, value_name = "N", env = settings::JOURNAL_MAX_CHANGES,
          default_value_t = write_tool::wire::defaults::JOURNAL_MAX_CHANGES,
          value_parser = clap::value_parser!(u64).range(1..))]
    journal_max_changes: u64,

    /// The journal's bound on a change's age, in days.
    #[arg(long, global = true, value_name = "DAYS", env = settings::JOURNAL_MAX_AGE_DAYS,
          default_value_t = write_tool::wire::defaults::JOURNAL_MAX_AGE_DAYS,
          value_parser = clap::value_parser!(u64).range(1..))]
    journal_max_age_days: u64,

    /// Most files one write-many writes.
    #[arg(long, global = true, value_name = "N", env = settings::MANY_MAX_FILES,
          default_value_t = write_tool::wire::defaults::MANY_MAX_FILES,
          value_parser = clap::value_parser!(u64).range(1..))]
    many_max_files: u64,

    /// Most bytes of content one write-many carries in all.
    #[arg(long, global = true, value_name = "BYTES", env = settings::MANY_MAX_BYTES,
          default_value_t = write_tool::wire::defaults::MANY_MAX_BYTES,
          value_parser = clap::value_parser!(u64).range(1..))]
    many_max_bytes: u64,

    /// Let patches (apply_patch) delete files and move them ('*** Delete
    /// File:', '*** Move to:'); off by default, like every new power.
    #[arg(long, global = true, env = settings::ALLOW_DELETE, action = ArgAction::SetTrue,
          value_parser = BoolishValueParser::new())]
    allow_delete: bool,

    /// In a session (`serve`, `mcp`, a WebSocket connection), refuse a
    /// write or edit of an existing file the session has not viewed with
    /// the view tool: for hosts that give the model this tool alone to
    /// read with. Needs the journal.
    #[arg(long, global = true, env = settings::READ_FIRST, action = ArgAction::SetTrue,
          value_parser = BoolishValueParser::new())]
    read_first: bool,

    /// How the per-call log lines on stderr look: 'text' or 'json' (one
    /// object per line). Which lines show is RUST_LOG's choice:
    /// RUST_LOG=write_tool=info shows one line per call; none by default.
    #[arg(long, global = true, value_enum, env = settings::LOG_FORMAT, default_value_t = LogFormat::Text)]
    pub(crate) log_format: LogFormat,

    /// Keep revert and checkpoints from the model: `call`, `serve` and
    /// the servers refuse them and `mcp` does not list them. The `undo`
    /// and `checkpoint` commands still work.
    #[arg(long, global = true)]
    no_model_revert: bool,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Sync {
    Full,
    File,
    None,
}

/// How the per-call log lines look (`write_tool::log`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LogFormat {
    Text,
    Json,
}

/// The flags of `write` itself, which a person may put before the
/// command by mistake.
const WRITE_FLAGS: [&str; 5] = [
    "--content",
    "--content-file",
    "--dry-run",
    "--create-only",
    "--as-given",
];

/// A `--protect` pattern: not blank, which would protect nothing.
fn pattern(value: &str) -> Result<String, String> {
    if value.trim().trim_matches('/').is_empty() {
        return Err("an empty pattern protects nothing".to_owned());
    }
    Ok(value.to_owned())
}

/// The command line, parsed, with the `WRITE_TOOL_*` variables of the
/// environment as the host's settings (a flag wins over its variable). A
/// usage error ends the process the way clap ends it, except where clap's
/// hint would mislead: `write-tool --content x write f` is told to put
/// `--content` after the command, not pointed to `--max-content-bytes`.
/// An unknown or malformed variable of the tool's prefix ends it too: a
/// misspelt `WRITE_TOOL_READ_ONLY` must not leave a root writable.
pub(crate) fn parse() -> Cli {
    if let Err(message) = check_environment(std::env::vars_os()) {
        #[allow(clippy::print_stderr, reason = "a usage error, as clap reports it")]
        {
            eprintln!("error: {message}");
        }
        std::process::exit(2);
    }
    let parsed = Cli::command()
        .try_get_matches()
        .and_then(|matches| Ok((Cli::from_arg_matches(&matches)?, matches)));
    match parsed {
        Ok((mut cli, matches)) => {
            let given = matches.value_source("cache_dir") == Some(ValueSource::CommandLine);
            cli.apply_environment(given);
            cli
        }
        Err(err) => {
            if err.kind() == ErrorKind::UnknownArgument
                && let Some(ContextValue::String(arg)) = err.get(ContextKind::InvalidArg)
                && let Some(flag) = WRITE_FLAGS
                    .iter()
                    .find(|flag| arg.split('=').next() == Some(**flag))
            {
                #[allow(clippy::print_stderr, reason = "a usage error, as clap reports it")]
                {
                    eprintln!(
                        "error: {flag} belongs to the write command: put it after the command\n\n  \
                         write-tool [OPTIONS] write PATH {flag} …\n\nFor more information, try \
                         'write-tool write --help'."
                    );
                }
                std::process::exit(2);
            }
            err.exit()
        }
    }
}

/// The `WRITE_TOOL_*` variables the CLI reads: the component's settings
/// (but the per-call sweep, which the host decides) and the host's own.
const READ_BY_THE_CLI: [&str; 23] = [
    settings::MAX_CONTENT_BYTES,
    settings::ALLOW_EMPTY,
    settings::DIFF_TIMEOUT_MS,
    settings::PROTECT_GIT,
    settings::PROTECT,
    settings::READ_ONLY,
    settings::SYNC,
    settings::REFUSE_PLACEHOLDERS,
    settings::CACHE,
    settings::CACHE_DIR,
    settings::TIMEOUT_MS,
    settings::MEMORY_LIMIT_MIB,
    settings::MAX_REQUEST_BYTES,
    settings::ROOT,
    settings::JOURNAL_DIR,
    settings::JOURNAL_MAX_BYTES,
    settings::JOURNAL_MAX_CHANGES,
    settings::JOURNAL_MAX_AGE_DAYS,
    settings::MANY_MAX_FILES,
    settings::MANY_MAX_BYTES,
    settings::LOG_FORMAT,
    settings::ALLOW_DELETE,
    settings::READ_FIRST,
];

/// Refuse a `WRITE_TOOL_*` variable the CLI does not read, and the two it
/// reads by hand when their value is not one it understands. (clap checks
/// the others as it reads them.)
fn check_environment(vars: impl Iterator<Item = (OsString, OsString)>) -> Result<(), String> {
    for (name, value) in vars {
        let Some(name) = name.to_str() else { continue };
        if !name.starts_with(settings::PREFIX) {
            continue;
        }
        if !READ_BY_THE_CLI.contains(&name) {
            return Err(format!(
                "{name} is not a setting of write-tool (its settings: {})",
                READ_BY_THE_CLI.join(", ")
            ));
        }
        let value = value.to_string_lossy();
        if (name == settings::CACHE || name == settings::PROTECT_GIT)
            && !settings::is_off(&value)
            && !settings::is_on(&value)
        {
            return Err(format!(
                "{name} must be on or off (true, false, yes, no, 1, 0), not {value:?}"
            ));
        }
    }
    Ok(())
}

/// Calls the network servers (`mcp`, `serve --ws`) run at once; more wait.
const SERVER_CALLS: u32 = 8;

impl Cli {
    /// Settings only a variable gives (their flags say one way only):
    /// `WRITE_TOOL_PROTECT_GIT=false` is `--no-default-protect`,
    /// `WRITE_TOOL_CACHE=off` is `--no-cache`. A flag given wins.
    fn apply_environment(&mut self, cache_dir_given: bool) {
        let off = |name: &str| {
            std::env::var(name)
                .ok()
                .is_some_and(|value| settings::is_off(&value))
        };
        if off(settings::PROTECT_GIT) {
            self.no_default_protect = true;
        }
        if off(settings::CACHE) && !cache_dir_given {
            self.no_cache = true;
        }
        if self.root.is_empty()
            && let Some(root) = std::env::var_os(settings::ROOT).filter(|r| !r.is_empty())
        {
            self.root = std::env::split_paths(&root).collect();
        }
    }

    /// The library options the flags ask for.
    pub(crate) fn options(&self) -> Options {
        Options {
            max_content_bytes: self.max_content_bytes,
            allow_empty: self.allow_empty,
            memory_limit_bytes: usize::try_from(self.memory_limit_mib.saturating_mul(1024 * 1024))
                .unwrap_or(usize::MAX),
            timeout: Duration::from_millis(self.timeout_ms),
            diff_timeout: Duration::from_millis(self.diff_timeout_ms),
            default_protect: !self.no_default_protect,
            protect: self.protect.clone(),
            read_only: self.read_only,
            refuse_placeholders: self.refuse_placeholders,
            durability: match self.sync {
                Sync::Full => Durability::Full,
                Sync::File => Durability::File,
                Sync::None => Durability::None,
            },
            cache: match (self.no_cache, &self.cache_dir) {
                (true, _) => CompileCache::Disabled,
                (false, Some(dir)) => CompileCache::Dir(dir.clone()),
                (false, None) => CompileCache::from_env(),
            },
            // `write`, `call` and `serve` make one call at a time (plus the
            // start-up check); the network servers take a few at once.
            max_concurrent_calls: match self.command {
                Command::Mcp | Command::Serve { ws: Some(_), .. } => SERVER_CALLS,
                _ => 2,
            },
            pool_instances: !matches!(
                self.command,
                Command::Write { .. }
                    | Command::Edit { .. }
                    | Command::View { .. }
                    | Command::Call
                    | Command::WriteMany { .. }
                    | Command::Patch { .. }
                    | Command::Undo { .. }
                    | Command::Checkpoint { .. }
                    | Command::History { .. }
                    | Command::Journal { .. }
            ),
            journal: self.journal_choice(),
            journal_bounds: (
                self.journal_max_bytes,
                self.journal_max_changes,
                self.journal_max_age_days,
            ),
            many_bounds: (self.many_max_files, self.many_max_bytes),
            allow_delete: self.allow_delete,
            read_first: self.read_first,
            model_revert: !self.no_model_revert,
            ..Options::default()
        }
    }

    /// Where journals are kept: on by default.
    fn journal_choice(&self) -> JournalChoice {
        match &self.journal {
            _ if self.no_journal => JournalChoice::Off,
            Some(dir) if dir.to_str().is_some_and(settings::is_off) => JournalChoice::Off,
            Some(dir) => JournalChoice::In(dir.clone()),
            None => JournalChoice::Default,
        }
    }

    /// The longest request `call`, `serve` and the servers read.
    pub(crate) fn request_limit(&self) -> usize {
        let limit = self.max_request_bytes.unwrap_or_else(|| {
            self.max_content_bytes
                .saturating_mul(4)
                .saturating_add(1 << 20)
        });
        usize::try_from(limit).unwrap_or(usize::MAX)
    }
}
