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

use clap::Parser;
use write_tool::{Root, WriteTool, ambient_authority};

use cli::commands;
use cli::flags::{Cli, Command};
use cli::output::EXIT_USAGE;

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("write-tool: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Check what can be checked before starting the tool (the roots, the
/// listening address), start it, and hand it to the command.
fn run(cli: Cli) -> Result<u8, String> {
    let (options, limit, pretty) = (cli.options(), cli.request_limit(), cli.pretty);
    if let Command::Component { out } = &cli.command {
        return commands::component(out.as_deref());
    }
    // Without `--root`, `mcp` follows the client's roots, if it offers any.
    let roots_given = !cli.root.is_empty();
    let root = match cli.command {
        Command::Schema => None,
        _ => Some(open_root(cli.root)?),
    };
    let ws = match &cli.command {
        Command::Serve {
            ws: Some(addr),
            ws_allow_remote,
            ..
        } => Some(listen_addrs(addr, *ws_allow_remote)?),
        _ => None,
    };
    let tool = WriteTool::new(options).map_err(|e| format!("cannot start the tool: {e}"))?;
    let Some(root) = root else {
        return commands::schema(&tool, pretty);
    };
    match cli.command {
        Command::Write {
            path,
            dry_run,
            create_only,
            as_given,
            content,
            content_file,
        } => {
            let how = commands::WriteHow {
                dry_run,
                create_only,
                keep_format: !as_given,
            };
            commands::write(&tool, &root, &path, how, content, content_file, pretty)
        }
        Command::Call => commands::call(&tool, &root, limit, pretty),
        Command::Serve { ws_origin, .. } => match ws {
            None => commands::serve(&tool, &root, limit),
            Some(addrs) => commands::serve_ws(tool, root, addrs, ws_origin, limit),
        },
        Command::Mcp => commands::mcp(tool, root, !roots_given, limit),
        Command::Schema | Command::Component { .. } => unreachable!("answered above"),
    }
}

/// The addresses `--ws HOST:PORT` resolves to, all of them loopback ones
/// unless `allow_remote`: a host name that also resolves elsewhere is
/// refused like an address that is not loopback.
fn listen_addrs(addr: &str, allow_remote: bool) -> Result<(String, Vec<SocketAddr>), String> {
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| format!("--ws {addr}: {e} (give HOST:PORT, for example 127.0.0.1:8765)"))?
        .collect();
    if addrs.is_empty() {
        return Err(format!("--ws {addr} resolves to no address"));
    }
    if !allow_remote && !addrs.iter().all(|a| a.ip().is_loopback()) {
        return Err(format!(
            "--ws {addr} is not a loopback address; add --ws-allow-remote to serve it anyway"
        ));
    }
    Ok((addr.to_owned(), addrs))
}

/// The roots `--root` names, or the current directory.
fn open_root(mut roots: Vec<PathBuf>) -> Result<Root, String> {
    if roots.is_empty() {
        roots.push(
            std::env::current_dir()
                .map_err(|e| format!("cannot read the current directory: {e}"))?,
        );
    }
    Root::open_all(&roots, ambient_authority())
        .map_err(|e| format!("a root is not a usable directory: {e}"))
}
