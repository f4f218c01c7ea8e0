//! `write-tool`: the Write tool from the command line
//! (`docs/contract.md#cli`).
//!
//! Stdout carries only envelopes (one JSON document per line, or pretty with
//! `--pretty`). Exit status: 0 for `success` and `partial`, 1 for an `error`
//! envelope, 2 for a usage or host failure (message on stderr, no envelope).

mod cli;

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use write_tool::auth::{OAuth, OAuthConfig, Token, Tokens};
use write_tool::mcp::RootsError;
use write_tool::{Options, Root, WriteTool, ambient_authority};

use cli::flags::{Cli, Command};
use cli::output::EXIT_USAGE;
use cli::{commands, journal, serving};

/// The per-call log on stderr (`write_tool::log`): what `RUST_LOG` asks
/// for (`RUST_LOG=write_tool=info`: a line per call), nothing without it,
/// so that stderr keeps only the tool's own messages by default.
///
/// Only the tool's own events pass, whatever `RUST_LOG` says
/// (`RUST_LOG=debug` included): the libraries below it (the MCP SDK, the
/// WebSocket stack, wasmtime) log what they carry, which is the content
/// of the calls, and content is never logged (`docs/contract.md#log`).
fn init_log(format: cli::flags::LogFormat) {
    use tracing_subscriber::EnvFilter;
    use tracing_subscriber::filter::filter_fn;
    use tracing_subscriber::prelude::*;
    let Ok(filter) = EnvFilter::try_from_default_env() else {
        return;
    };
    let own = filter_fn(|meta| meta.target().starts_with("write_tool"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let layer = tracing_subscriber::fmt::layer()
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    let registry = tracing_subscriber::registry();
    let _ = match format {
        cli::flags::LogFormat::Text => registry
            .with(layer.with_filter(filter).with_filter(own))
            .try_init(),
        cli::flags::LogFormat::Json => registry
            .with(
                layer
                    .json()
                    .flatten_event(true)
                    .with_filter(filter)
                    .with_filter(own),
            )
            .try_init(),
    };
}

fn main() -> ExitCode {
    match run(cli::flags::parse()) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            // The chain of contexts, outermost first, as ripgrep prints it.
            eprintln!("write-tool: {err:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Check what can be checked before starting the tool (the roots, the
/// listening address), start it, and hand it to the command.
fn run(cli: Cli) -> anyhow::Result<u8> {
    init_log(cli.log_format);
    let (options, limit, pretty) = (cli.options(), cli.request_limit(), cli.pretty);
    if let Command::Component { out } = &cli.command {
        return commands::component(out.as_deref());
    }
    if let Command::Mcp = cli.command {
        // An MCP server starts whatever its roots: it tells the client.
        let roots = mcp_roots(cli.root, &options);
        let tool = WriteTool::new(options)
            .map_err(anyhow::Error::from)
            .context("cannot start the tool")?;
        return serving::mcp(tool, roots, limit);
    }
    let root = match cli.command {
        Command::Schema { .. } => None,
        _ => Some(open_root(cli.root, &options)?),
    };
    let ws = match &cli.command {
        Command::Serve {
            ws: Some(addr),
            ws_allow_remote,
            ws_token_file,
            oauth_issuer,
            ..
        } => Some(listen_addrs(
            addr,
            *ws_allow_remote,
            ws_token_file.is_some() || oauth_issuer.is_some(),
        )?),
        _ => None,
    };
    let tool = WriteTool::new(options)
        .map_err(anyhow::Error::from)
        .context("cannot start the tool")?;
    let Some(root) = root else {
        let Command::Schema { provider } = cli.command else {
            unreachable!("only schema runs without a root");
        };
        return commands::schema(&tool, provider, pretty);
    };
    dispatch(cli.command, tool, root, ws, limit, pretty)
}

/// The command, on a root and with a tool made for it.
fn dispatch(
    command: Command,
    tool: WriteTool,
    root: Root,
    ws: Option<(String, Vec<SocketAddr>)>,
    limit: usize,
    pretty: bool,
) -> anyhow::Result<u8> {
    match command {
        Command::Write {
            path,
            dry_run,
            create_only,
            append,
            as_given,
            content,
            content_file,
        } => {
            let how = commands::WriteHow {
                dry_run,
                create_only,
                append,
                keep_format: !as_given,
            };
            commands::write(&tool, &root, &path, how, content, content_file, pretty)
        }
        Command::Edit {
            path,
            old,
            new,
            replace_all,
            insert_after,
            edits_json: _,
            dry_run,
        } => {
            let single = match (old, insert_after) {
                (Some(old), _) => new.map(|new| commands::OneEdit::Replace(old, new, replace_all)),
                (None, Some(line)) => new.map(|new| commands::OneEdit::Insert(line, new)),
                (None, None) => None,
            };
            commands::edit(&tool, &root, &path, single, dry_run, limit, pretty)
        }
        Command::View { path, from, to } => commands::view(&tool, &root, &path, from, to, pretty),
        Command::Patch { dry_run } => commands::patch(&tool, &root, dry_run, limit, pretty),
        Command::Call => commands::call(&tool, &root, limit, pretty),
        Command::Turn { provider } => commands::turn(&tool, &root, provider, limit, pretty),
        serve @ Command::Serve { .. } => serve_command(serve, tool, root, ws, limit),
        Command::WriteMany { dry_run } => journal::write_many(&tool, &root, dry_run, limit, pretty),
        Command::Undo {
            id,
            to,
            force,
            dry_run,
        } => journal::undo(&tool, &root, id, to, force, dry_run, pretty),
        Command::Checkpoint { name } => journal::checkpoint(&tool, &root, &name, pretty),
        Command::History { path, json } => journal::history(&tool, &root, path, json),
        Command::Journal { action } => journal::journal(&tool, &root, action),
        Command::Schema { .. } | Command::Component { .. } | Command::Mcp => {
            unreachable!("answered above")
        }
    }
}

/// `serve`: JSON lines on stdio, or WebSocket on the addresses `--ws`
/// resolved to.
fn serve_command(
    command: Command,
    tool: WriteTool,
    root: Root,
    ws: Option<(String, Vec<SocketAddr>)>,
    limit: usize,
) -> anyhow::Result<u8> {
    let Command::Serve {
        ws_origin,
        ws_handshake_timeout_ms,
        ws_idle_timeout_ms,
        ws_write_timeout_ms,
        ws_max_connections,
        probe_listen,
        metrics,
        ws_token_file,
        ws_quiesce_token_file,
        oauth_issuer,
        oauth_resource,
        oauth_jwks_file,
        oauth_scope,
        ..
    } = command
    else {
        unreachable!("called for serve");
    };
    let Some(addrs) = ws else {
        return serving::serve(&tool, &root, limit);
    };
    if metrics {
        write_tool::metrics::enable();
    }
    let read = |file: Option<PathBuf>| file.as_deref().map(Token::read).transpose();
    let oauth = match (oauth_issuer, oauth_resource, oauth_jwks_file) {
        (Some(issuer), Some(resource), Some(jwks)) => Some(std::sync::Arc::new(OAuth::new(
            OAuthConfig::read(issuer, resource, &jwks, oauth_scope)?,
        ))),
        _ => None,
    };
    let tokens = Tokens {
        port: read(ws_token_file)?,
        quiesce: read(ws_quiesce_token_file)?,
        oauth,
    };
    let options = write_tool::ws::WsOptions {
        tokens,
        max_message_bytes: limit,
        allowed_origins: ws_origin,
        handshake_timeout: std::time::Duration::from_millis(ws_handshake_timeout_ms),
        idle_timeout: std::time::Duration::from_millis(ws_idle_timeout_ms),
        write_timeout: std::time::Duration::from_millis(ws_write_timeout_ms),
        max_connections: usize::try_from(ws_max_connections).unwrap_or(64),
    };
    serving::serve_ws(tool, root, addrs, options, probe_listen)
}

/// The addresses `--ws HOST:PORT` resolves to, all of them loopback ones
/// unless `allow_remote` and `token` (a port beyond loopback is never
/// open to whoever reaches it): a host name that also resolves elsewhere
/// is refused like an address that is not loopback.
fn listen_addrs(
    addr: &str,
    allow_remote: bool,
    token: bool,
) -> anyhow::Result<(String, Vec<SocketAddr>)> {
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .with_context(|| format!("--ws {addr} (give HOST:PORT, for example 127.0.0.1:8765)"))?
        .collect();
    if addrs.is_empty() {
        bail!("--ws {addr} resolves to no address");
    }
    if !addrs.iter().all(|a| a.ip().is_loopback()) {
        if !allow_remote {
            bail!(
                "--ws {addr} is not a loopback address; add --ws-allow-remote (and \
                 --ws-token-file) to serve it anyway"
            );
        }
        if !token {
            bail!(
                "--ws {addr} is not a loopback address: it is served only with a token \
                 (--ws-token-file FILE) or an authorization server's (--oauth-issuer URL), \
                 never open to whoever reaches it"
            );
        }
    }
    Ok((addr.to_owned(), addrs))
}

/// The roots of `mcp`: those `--root` names, or the client's with the
/// current directory for a client that offers none.
fn mcp_roots(roots: Vec<PathBuf>, options: &Options) -> serving::McpRoots {
    if !roots.is_empty() {
        let shown = roots
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        return match options.root(&roots, ambient_authority()) {
            Ok(root) => serving::McpRoots::Given(root),
            Err(e) => serving::McpRoots::Broken(RootsError::Configured {
                roots: shown,
                reason: e.to_string(),
            }),
        };
    }
    // A desktop client starts its servers in `/`: that is no project.
    let own = std::env::current_dir()
        .ok()
        .filter(|cwd| cwd.parent().is_some())
        .and_then(|cwd| options.root([cwd], ambient_authority()).ok())
        .ok_or(RootsError::NoProject);
    serving::McpRoots::FollowClient(own)
}

/// The roots `--root` names, or the current directory, with the journal
/// the options choose.
///
/// The current directory is no project when it is `/`: a write would land
/// at the top of the file system (`docs/contract.md#cli`). A journal no one
/// asked for (the per-user state directory's) that cannot be kept — a
/// home that is not writable, in a container or a CI job — is left out,
/// said once on stderr; one asked for (`--journal DIR`) stops the CLI.
fn open_root(mut roots: Vec<PathBuf>, options: &Options) -> anyhow::Result<Root> {
    if roots.is_empty() {
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        if cwd.parent().is_none() {
            bail!(
                "the current directory is {}, which is no project: pass --root DIR (or run \
                 write-tool in the project's directory)",
                cwd.display()
            );
        }
        roots.push(cwd);
    }
    let root =
        Root::open_all(&roots, ambient_authority()).context("a root is not a usable directory")?;
    match options.attach_journal(root) {
        Ok(root) => {
            // Only a base this root may use is swept: a refused one is
            // left as it was.
            write_tool::journal_sweep(&options.journal);
            Ok(root)
        }
        Err(e) if options.journal.is_default() => {
            eprintln!(
                "write-tool: {e}; going on without it, so changes cannot be undone (pass \
                 --journal DIR to keep it elsewhere, or --no-journal to say so)"
            );
            let root = Root::open_all(&roots, ambient_authority())
                .context("a root is not a usable directory")?;
            Ok(root)
        }
        Err(e) => bail!("{e} (pass --journal DIR to keep it elsewhere, or --no-journal)"),
    }
}
