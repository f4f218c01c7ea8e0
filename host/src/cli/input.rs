//! Reading content and requests from the command line's inputs.

use std::io::{self, BufRead, IsTerminal, Read};
use std::path::PathBuf;

use anyhow::Context;
use write_tool::request_too_long;
use write_tool::wire::{Envelope, ErrorCode, Form};

/// The content of `write`: given inline, read from a file, or read from
/// stdin.
pub(crate) fn content(inline: Option<String>, file: Option<PathBuf>) -> anyhow::Result<String> {
    let bytes = match (inline, file) {
        (Some(content), _) => return Ok(content),
        (None, Some(file)) => {
            std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?
        }
        (None, None) => {
            let stdin = io::stdin();
            if stdin.is_terminal() {
                // Not a hang: a person at a terminal is told what it waits for.
                eprintln!(
                    "write-tool: reading the content from stdin until end of input \
                     (Ctrl-D; or give --content or --content-file)"
                );
            }
            let mut bytes = Vec::new();
            io::stdin()
                .read_to_end(&mut bytes)
                .context("cannot read stdin")?;
            bytes
        }
    };
    String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("content is not valid UTF-8; the tool writes UTF-8 text"))
}

/// A request as read from stdin.
pub(crate) enum Request {
    Complete(Vec<u8>),
    /// Longer than the limit (given): skipped, not buffered.
    TooLong(usize),
}

/// Read up to and excluding the next `\n` (or end of input), keeping at most
/// `limit` bytes. `None` at end of input.
pub(crate) fn request(
    input: &mut impl BufRead,
    limit: usize,
    until_newline: bool,
) -> anyhow::Result<Option<Request>> {
    let mut buffer = Vec::new();
    let mut too_long = false;
    let mut any = false;
    loop {
        let chunk = input.fill_buf().context("cannot read stdin")?;
        if chunk.is_empty() {
            break;
        }
        any = true;
        let (take, done) = match until_newline
            .then(|| memchr::memchr(b'\n', chunk))
            .flatten()
        {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if !too_long && buffer.len() + take <= limit {
            buffer.extend_from_slice(&chunk[..take]);
        } else {
            too_long = true;
            buffer = Vec::new();
        }
        input.consume(if done { take + 1 } else { take });
        if done {
            break;
        }
    }
    if !any {
        return Ok(None);
    }
    if too_long {
        return Ok(Some(Request::TooLong(limit)));
    }
    if until_newline && buffer.last() == Some(&b'\r') {
        buffer.pop();
    }
    Ok(Some(Request::Complete(buffer)))
}

/// Let large requests through a stdin pipe in fewer, larger pieces. A pipe
/// holds 64 KiB by default, so a 1 MiB request wakes this process and its
/// writer 16 times; 1 MiB is the most an unprivileged process may ask for.
/// Nothing changes when stdin is not a pipe or the system says no.
#[cfg(target_os = "linux")]
pub(crate) fn widen_stdin_pipe() {
    let _ = rustix::pipe::fcntl_setpipe_size(io::stdin(), 1 << 20);
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn widen_stdin_pipe() {}

/// The envelope of a request made from all of stdin by `make`, which says
/// why the bytes are no such request when they are not; `empty` is the
/// message when stdin held nothing. A person's command: its own refusals
/// come in the full form, as the component's answers to it do.
pub(crate) fn from_stdin(
    limit: usize,
    empty: &str,
    make: impl FnOnce(Vec<u8>) -> Result<String, &'static str>,
) -> anyhow::Result<String> {
    let refused = |message: &str| {
        Envelope::refused(ErrorCode::InvalidParam, message)
            .in_form(Form::Full)
            .to_json()
    };
    Ok(match request(&mut io::stdin().lock(), limit, false)? {
        Some(Request::Complete(bytes)) => make(bytes).unwrap_or_else(&refused),
        Some(Request::TooLong(limit)) => refused(&request_too_long(limit)),
        None => refused(empty),
    })
}
