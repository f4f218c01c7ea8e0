//! The commands, and what each takes.

use std::path::PathBuf;

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Write one file. Content comes from --content, --content-file, or stdin.
    Write {
        /// Path relative to the root, with '/' separators.
        path: String,
        /// Compute the diff, change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Only create: refuse (CONFLICT) if the file exists.
        #[arg(long, conflicts_with = "append")]
        create_only: bool,
        /// Add the content at the end of the file instead (creating it),
        /// on a line of its own: the `append` tool.
        #[arg(long)]
        append: bool,
        /// Write the content exactly as given, in UTF-8, instead of keeping
        /// the file's encoding, byte-order mark and line endings.
        #[arg(long)]
        as_given: bool,
        /// The content, given inline (it may start with '-').
        #[arg(long, conflicts_with = "content_file", allow_hyphen_values = true)]
        content: Option<String>,
        /// Read the content from this file.
        #[arg(long, value_name = "FILE")]
        content_file: Option<PathBuf>,
    },
    /// Edit an existing file: replace --old with --new (exactly one place,
    /// or every one with --replace-all), insert --new after line
    /// --insert-after, or, with --edits-json, several edits read from
    /// stdin as a JSON array ([{"old_string": ..., "new_string": ...},
    /// {"insert_line": ..., "new_string": ...}, ...]), in order, all or
    /// none.
    Edit {
        /// Path relative to the root, with '/' separators.
        path: String,
        /// The text to replace (it may start with '-').
        #[arg(
            long,
            allow_hyphen_values = true,
            required_unless_present_any = ["edits_json", "insert_after"],
            requires = "new",
            conflicts_with_all = ["edits_json", "insert_after"]
        )]
        old: Option<String>,
        /// The text to put in its place, or to insert (it may start with
        /// '-').
        #[arg(long, allow_hyphen_values = true, conflicts_with = "edits_json")]
        new: Option<String>,
        /// Insert --new as lines of their own after this line (0: at the
        /// top) instead of replacing.
        #[arg(
            long,
            value_name = "LINE",
            requires = "new",
            conflicts_with = "edits_json"
        )]
        insert_after: Option<u64>,
        /// Replace every place --old is.
        #[arg(long, requires = "old", conflicts_with = "insert_after")]
        replace_all: bool,
        /// Read the edits from stdin as a JSON array.
        #[arg(long)]
        edits_json: bool,
        /// Compute the diff, change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Show a file's lines, numbered as `cat -n` numbers them, or a
    /// directory's entries two levels deep; change nothing.
    View {
        /// Path relative to the root ('.' for the root itself).
        path: String,
        /// The first line to show, from 1.
        #[arg(long, value_name = "LINE", value_parser = clap::value_parser!(u64).range(1..))]
        from: Option<u64>,
        /// The last line to show (default: to the end, at most 2,000 lines
        /// per answer).
        #[arg(long, value_name = "LINE", value_parser = clap::value_parser!(u64).range(1..))]
        to: Option<u64>,
    },
    /// Apply a patch read from stdin ('*** Begin Patch' ... '*** End
    /// Patch', the apply_patch format), all files or none.
    Patch {
        /// Compute every diff, change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Run one tool call read from stdin: the arguments object, or
    /// {"name": "Write", "arguments": {...}}.
    Call,
    /// Answer one JSON request per stdin line with one envelope per stdout
    /// line, until end of input; or, with --ws, one request per WebSocket
    /// text message.
    Serve {
        /// Serve WebSocket connections on this address instead of stdin
        /// (for example 127.0.0.1:8765 or localhost:8765; port 0 picks a
        /// free port, printed on stderr).
        #[arg(long, value_name = "HOST:PORT")]
        ws: Option<String>,
        /// Allow --ws on an address that is not loopback. It needs
        /// --ws-token-file too: without a token anyone who can reach it
        /// could write files under the roots.
        #[arg(long, requires = "ws")]
        ws_allow_remote: bool,
        /// Ask every request on the --ws port but the health probes (the
        /// WebSocket handshake, /mcp, /v1/*, /quiesce, /resume) for the
        /// token in this file, as `Authorization: Bearer TOKEN`: at least
        /// 32 visible ASCII characters (`openssl rand -hex 32`). A
        /// Kubernetes Secret mounted as a file serves (deploy/).
        #[arg(long, value_name = "FILE", requires = "ws")]
        ws_token_file: Option<PathBuf>,
        /// Ask /quiesce and /resume for the token in this file instead, so
        /// that a client that may write cannot pause every writer.
        #[arg(long, value_name = "FILE", requires = "ws")]
        ws_quiesce_token_file: Option<PathBuf>,
        /// Take OAuth access tokens on the --ws port too, as a resource
        /// server: JWTs issued by this authorization server (their `iss`),
        /// checked against its keys in --oauth-jwks-file. The port serves
        /// its protected-resource metadata (RFC 9728) naming it.
        #[arg(long, value_name = "URL", requires_all = ["ws", "oauth_resource", "oauth_jwks_file"])]
        oauth_issuer: Option<String>,
        /// This server's resource identifier, the URL clients reach /mcp
        /// by (https://sandbox.example.com/mcp): a token's `aud` must name
        /// it.
        #[arg(long, value_name = "URL", requires = "oauth_issuer")]
        oauth_resource: Option<String>,
        /// The authorization server's keys, its JWKS document, as a file
        /// (read at start, never fetched).
        #[arg(long, value_name = "FILE", requires = "oauth_issuer")]
        oauth_jwks_file: Option<PathBuf>,
        /// A scope every access token must carry (repeatable).
        #[arg(long, value_name = "SCOPE", requires = "oauth_issuer")]
        oauth_scope: Vec<String>,
        /// Accept browser connections from this origin too (repeatable;
        /// loopback origins are always accepted), for example
        /// https://tool.example.com.
        #[arg(long, value_name = "ORIGIN", requires = "ws")]
        ws_origin: Vec<String>,
        /// Drop a connection that has not finished its WebSocket handshake
        /// within this many milliseconds.
        #[arg(long, value_name = "MS", default_value_t = 10_000, requires = "ws",
              value_parser = clap::value_parser!(u64).range(1..))]
        ws_handshake_timeout_ms: u64,
        /// Close a connection that sends nothing for this many
        /// milliseconds between requests (a call in flight is never cut).
        #[arg(long, value_name = "MS", default_value_t = 300_000, requires = "ws",
              value_parser = clap::value_parser!(u64).range(1..))]
        ws_idle_timeout_ms: u64,
        /// Drop a connection that leaves an answer unread this many
        /// milliseconds, or whose HTTP request body has not arrived in
        /// full within it (either would hold its slot, and a drain).
        #[arg(long, value_name = "MS", default_value_t = 30_000, requires = "ws",
              value_parser = clap::value_parser!(u64).range(1..))]
        ws_write_timeout_ms: u64,
        /// Serve at most this many connections at once. Each may hold a
        /// request of up to --max-request-bytes: with the memory limit,
        /// this bounds the process's memory (deploy/README.md).
        #[arg(long, value_name = "N", default_value_t = 64, requires = "ws",
              value_parser = clap::value_parser!(u64).range(1..=4096))]
        ws_max_connections: u64,
        /// Answer the health probes (GET /healthz, GET /readyz) and, with
        /// --metrics, GET /metrics on this address too: a port of their
        /// own, so that --ws can stay on loopback where probes and a
        /// scraper must reach the pod by its address.
        #[arg(long, value_name = "HOST:PORT", requires = "ws")]
        probe_listen: Option<String>,
        /// Answer GET /metrics on the --ws port with Prometheus metrics of
        /// the calls (by surface, status and code; bytes; latency; in
        /// flight; timeouts).
        #[arg(long, requires = "ws")]
        metrics: bool,
    },
    /// Serve the tool over the Model Context Protocol on stdin/stdout
    /// (tools `Write`, `write_file`, `Edit`, `edit_file`, `apply_patch`,
    /// `view`, and the journal's). Without --root, the client's roots are the allowed
    /// roots when it offers some.
    Mcp,
    /// Write the WebAssembly component this binary runs, for other hosts
    /// (wasmtime, wasmtime-py, jco).
    Component {
        /// Write it to this file instead of stdout.
        #[arg(long, short, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Print the tool definition (name, description, parameter schema);
    /// with --provider, the tools as that API's `tools` list takes them.
    Schema {
        /// anthropic (Messages), openai (Responses) or openai-chat (Chat
        /// Completions).
        #[arg(long, value_name = "PROVIDER")]
        provider: Option<write_tool::providers::Provider>,
    },
    /// Run the tool calls of a model's turn read on stdin — the API's whole
    /// response, its assistant message, or its blocks or items — and print
    /// what goes back to the API: Anthropic's user message of tool_result
    /// blocks, OpenAI's function_call_output items, or Chat Completions'
    /// tool messages.
    Turn {
        /// anthropic (Messages), openai (Responses) or openai-chat (Chat
        /// Completions).
        #[arg(long, value_name = "PROVIDER")]
        provider: write_tool::providers::Provider,
    },
    /// Write several files, all or none: a JSON array of write arguments
    /// ([{"path": ..., "content": ...}, ...]) on stdin, recorded as one
    /// change.
    WriteMany {
        /// Compute every diff, change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Undo a change (the latest when no ID is given), or every change
    /// since a checkpoint (--to NAME). A file changed since is not
    /// reverted unless --force.
    Undo {
        /// The change id, as a write's data.change_id and `history` give it.
        #[arg(conflicts_with = "to")]
        id: Option<String>,
        /// Undo every change after this checkpoint.
        #[arg(long, value_name = "NAME")]
        to: Option<String>,
        /// Revert files changed since, losing those changes.
        #[arg(long)]
        force: bool,
        /// Show what would be restored, change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Mark a point that `undo --to NAME` goes back to.
    Checkpoint {
        /// Its name.
        name: String,
    },
    /// List the recorded changes, newest first (of PATH only, if given).
    History {
        /// Only changes of this path (as the envelopes' path_resolved).
        path: Option<String>,
        /// Print the records as JSON, for an audit.
        #[arg(long)]
        json: bool,
    },
    /// Check or maintain the journal.
    Journal {
        #[command(subcommand)]
        action: JournalAction,
    },
}

/// What `write-tool journal` does.
#[derive(Debug, Clone, Copy, Subcommand)]
pub(crate) enum JournalAction {
    /// Check the chain of records; report the first that was altered,
    /// removed or reordered, and the head to keep for later audits.
    Verify,
    /// Drop old changes now, as the bounds say.
    Gc,
}
