//! What a host chooses for every call a [`WriteTool`](crate::WriteTool)
//! runs.

use std::time::Duration;

use write_tool_wire::defaults;

use crate::{CompileCache, Durability, JournalChoice};

/// The smallest [`Options::memory_limit_bytes`]: the component's linear
/// memory starts at 8 MiB (`guest/build.rs`), and below that it cannot be
/// instantiated at all.
pub const MIN_MEMORY_LIMIT_BYTES: usize = 8 << 20;

/// Limits and switches for every call a [`WriteTool`](crate::WriteTool)
/// runs. Each limit is there because a model chooses the arguments: it
/// bounds what one hostile or mistaken call can cost the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Largest `content` accepted, in bytes (default 16 MiB). Larger content
    /// is refused with `INVALID_PARAM` naming the limit.
    pub max_content_bytes: u64,
    /// Accept empty content (default false: `INVALID_PARAM`), which
    /// truncates a file to nothing.
    pub allow_empty: bool,
    /// Cap on the guest's linear memory, in bytes (default 1 GiB), so that
    /// no call can exhaust the host's memory. It must hold the arguments,
    /// the old file, the new content and the diff, and be at least
    /// [`MIN_MEMORY_LIMIT_BYTES`].
    pub memory_limit_bytes: usize,
    /// Wall-time bound on one call (default 30 s), so that no call keeps a
    /// server busy for good.
    pub timeout: Duration,
    /// The diff's budget of work for the largest texts (default 1 s), in
    /// milliseconds of 70,000 steps of the search: work, not time, so that
    /// a change gets the same diff on every machine (the name stays for
    /// the hosts that set it). Smaller texts get a share of it
    /// (`docs/contract.md#diff`). Past it the diff is coarser but still
    /// correct.
    pub diff_timeout: Duration,
    /// Bytes of guest stderr kept per call (default 64 KiB).
    pub stderr_capacity: usize,
    /// Refuse `.git` in any letter case, also through links (default true).
    pub default_protect: bool,
    /// More protected paths, as globs (`docs/contract.md#protected-paths`).
    pub protect: Vec<String>,
    /// Preopen the root read-only: every write is refused with
    /// `PERMISSION_DENIED` and nothing changes (default false).
    pub read_only: bool,
    /// Refuse an update whose content adds an omission placeholder (`//
    /// ... rest of the code unchanged ...`) while it removes lines, with
    /// `INVALID_PARAM`, instead of warning (default false).
    pub refuse_placeholders: bool,
    /// The envelope's form for calls that do not ask
    /// (`docs/contract.md#envelope`); default `None`: compact for
    /// [`WriteTool::call`](crate::WriteTool::call), full for a person's
    /// commands.
    pub envelope: Option<write_tool_wire::Form>,
    /// Which syncs a write makes (default [`Durability::Full`]: file and
    /// directory).
    pub durability: Durability,
    /// Where compiled code is kept between processes (default: what the
    /// environment says, see [`CompileCache::from_env`]).
    pub cache: CompileCache,
    /// Calls this tool runs at the same time (default 100). Each has a
    /// memory slot reserved up front; a call beyond them fails with
    /// `EXECUTION_ERROR` rather than wait. A process that makes one call at
    /// a time (the CLI) needs only a couple.
    pub max_concurrent_calls: u32,
    /// Reserve the instance slots up front and reuse them (default true):
    /// a call then finds its memory mapped and its last pages resident. A
    /// process that makes one call (`write-tool write`, `call`) has nothing
    /// to reuse; without the pool it maps only what its call needs, and it
    /// maps the cached compiled component instead of copying it in (a
    /// server copies it once: its calls run faster from the copy;
    /// BENCHMARKS.md#start-up).
    pub pool_instances: bool,
    /// Where journals are kept (`docs/contract.md#journal`): a root gets
    /// one when it is opened through [`Options::root`] (default: off; the
    /// CLI's default is on).
    pub journal: JournalChoice,
    /// The journal's bounds: size in bytes, changes, age in days
    /// (defaults 1 GiB, 10,000, 30).
    pub journal_bounds: (u64, u64, u64),
    /// `write_many`'s bounds: files, bytes of content (defaults 100, 64 MiB).
    pub many_bounds: (u64, u64),
    /// Let calls revert changes and set checkpoints (default true). Off,
    /// `call` refuses them and the MCP server does not list them: only the
    /// host's own commands ([`WriteTool::call_as_host`](crate::WriteTool::call_as_host)) can.
    pub model_revert: bool,
    /// Let patches delete and move files (default false;
    /// `docs/contract.md#patch`).
    pub allow_delete: bool,
    /// In a session ([`WriteTool::call_in`](crate::WriteTool::call_in)),
    /// refuse a write or edit of an existing file the session has not
    /// viewed (default false; `docs/contract.md#session`).
    pub read_first: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_content_bytes: defaults::MAX_CONTENT_BYTES,
            allow_empty: false,
            memory_limit_bytes: 1 << 30,
            timeout: Duration::from_millis(defaults::CALL_TIMEOUT_MS),
            diff_timeout: Duration::from_millis(defaults::DIFF_TIMEOUT_MS),
            stderr_capacity: 64 * 1024,
            default_protect: true,
            protect: Vec::new(),
            read_only: false,
            refuse_placeholders: false,
            envelope: None,
            durability: Durability::Full,
            cache: CompileCache::from_env(),
            max_concurrent_calls: 100,
            pool_instances: true,
            journal: JournalChoice::Off,
            journal_bounds: (
                defaults::JOURNAL_MAX_BYTES,
                defaults::JOURNAL_MAX_CHANGES,
                defaults::JOURNAL_MAX_AGE_DAYS,
            ),
            many_bounds: (defaults::MANY_MAX_FILES, defaults::MANY_MAX_BYTES),
            model_revert: true,
            allow_delete: false,
            read_first: false,
        }
    }
}

impl Options {
    /// Open `paths` as roots (the first the project root), with the journal
    /// these options choose attached (`docs/contract.md#journal`).
    ///
    /// # Ambient Authority
    ///
    /// As [`Root::open_all`](crate::Root::open_all).
    pub fn root<P: AsRef<std::path::Path>>(
        &self,
        paths: impl IntoIterator<Item = P>,
        ambient: cap_std::AmbientAuthority,
    ) -> std::io::Result<crate::Root> {
        let root = crate::Root::open_all(paths, ambient)?;
        self.attach_journal(root)
    }

    /// `root` with the journal these options choose for it: opened and
    /// checked (`crate::journal`). Fails with the directory and why.
    pub fn attach_journal(&self, root: crate::Root) -> std::io::Result<crate::Root> {
        use std::os::fd::AsFd;
        let journal = crate::journal::JournalDir::open(
            &self.journal,
            root.path(),
            root.dir().as_fd(),
            (&root.identities()?, &root.paths().collect::<Vec<_>>()),
        )
        .map_err(|e| std::io::Error::other(e.to_string()))?;
        match journal {
            Some(dir) => root.with_journal_dir(dir),
            None => Ok(root),
        }
    }
}
