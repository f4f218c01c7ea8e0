//! `view`: a file's lines or a directory's entries, through the write's
//! own first stages (`docs/contract.md#view`) — resolve, the protected
//! places, the hard-link rule, the size limit, the format — and nothing
//! after them: a view changes nothing and records nothing.

use std::time::Instant;

use serde_json::Value;
use write_tool_wire::envelope::{Context, Data, Stats, WriteStats, elapsed_ms};
use write_tool_wire::request::ToolName;
use write_tool_wire::{Envelope, Operation, Status, View, ViewKind};

use crate::error::{ErrorKind, ToolError};
use crate::format::{self, TextEncoding};
use crate::fs::{self, Dir, ReadError, TargetKind, sys::Kind, temps::is_temp_name};
use crate::params::ViewRequest;
use crate::roots::Roots;

use super::config::Config;
use super::lock;
use super::page::{self, Page, PastEnd};
use super::session;
use super::target::{self, Target};

/// Answer a view.
/// A failure is told as `tell` tells it ([`ToolError::as_is`], or a
/// voice's words).
pub(super) fn answer(
    roots: &Roots,
    request: &ViewRequest,
    echo: Value,
    config: &Config,
    start: Instant,
    tell: impl FnOnce(ToolError) -> ToolError,
) -> Envelope {
    let mut resolved = None;
    match run(roots, request, config, &mut resolved).map_err(tell) {
        Ok(shown) => shown.into_envelope(echo, elapsed_ms(start), resolved),
        Err(err) => err.into_envelope(elapsed_ms(start), echo, resolved),
    }
}

/// What a view found.
struct Shown {
    text: String,
    view: View,
    format: Option<(TextEncoding, Option<format::LineEnding>)>,
    lock: Option<write_tool_wire::LockValues>,
    size: u64,
    /// The answer stopped before the end of what was asked.
    cut: bool,
}

impl Shown {
    fn into_envelope(self, echo: Value, time_ms: u64, resolved: Option<String>) -> Envelope {
        let (encoding, line_endings) = self.format.unwrap_or((TextEncoding::PLAIN, None));
        let status = if self.cut {
            Status::Partial
        } else {
            Status::Success
        };
        Envelope::answer(
            status,
            self.text,
            Some(Data {
                encoding: encoding.name(),
                bom: encoding.bom(),
                line_endings: line_endings.map(|e| e.name().to_owned()),
                lock: self.lock,
                view: Some(self.view),
                ..Data::of(Operation::View)
            }),
            Stats {
                time_ms,
                write: Some(WriteStats {
                    bytes_written: 0,
                    original_size: self.size,
                    new_size: self.size,
                    lines_added: 0,
                    lines_removed: 0,
                }),
            },
            Context::of(echo, resolved),
        )
    }
}

/// Resolve, check and show.
fn run(
    roots: &Roots,
    request: &ViewRequest,
    config: &Config,
    resolved: &mut Option<String>,
) -> Result<Shown, ToolError> {
    // A protected place is refused before it is walked: an error of the
    // walk (a parent that is a file, a link that leaves) would tell what
    // is inside it.
    if let Ok(located) = roots.locate(ToolName::WriteFile, &request.path)
        && config.protection.check(located.rel.names(), false).is_err()
    {
        return Err(ToolError::protected());
    }
    let range = (request.first, request.last);
    // Paths as Anthropic's text editor sends them (absolute, under a
    // root) are taken, as `write_file` takes them.
    let target = match target::resolve(roots, ToolName::WriteFile, &request.path) {
        Ok(target) => target,
        Err(err) if err.kind() == ErrorKind::IsDirectory => {
            let Some((dir, prefix)) = roots.root_named(&request.path) else {
                return Err(err);
            };
            let shown = prefix.map_or_else(|| ".".to_owned(), str::to_owned);
            *resolved = Some(shown.clone());
            return directory(dir, dir, &[], prefix, &shown, config, range);
        }
        Err(err) => return Err(err),
    };
    *resolved = Some(target.display.clone());
    target.check_place(config)?;
    let kind = target.resolved.kind;
    let dir_only = target.rel.dir_only();
    match kind {
        TargetKind::Missing => Err(ToolError::nothing_to_view(&target.display)),
        TargetKind::File if dir_only => Err(ToolError::slash_but_a_file()),
        // `resolve` follows every link.
        TargetKind::Other | TargetKind::Link => Err(ToolError::not_regular_file()),
        TargetKind::Directory => walked(target.root, &target.resolved.names, |dir| {
            directory(
                target.root,
                dir,
                &target.resolved.names,
                target.prefix,
                &target.display,
                config,
                range,
            )
        }),
        TargetKind::File => file(&target, request, config),
    }
}

/// A file's lines.
fn file(target: &Target<'_>, request: &ViewRequest, config: &Config) -> Result<Shown, ToolError> {
    let display = &target.display;
    if target.resolved.shared() {
        return Err(ToolError::shared_file_view(display));
    }
    let limit = config.max_content_bytes;
    if let Some(len) = target.resolved.len.filter(|&len| len > limit) {
        return Err(ToolError::too_large_to_view(display, len, limit));
    }
    let read = |dir: &Dir| {
        fs::read_viewed(dir, target.resolved.file_name(), limit).map_err(|e| match e {
            ReadError::TooLarge { len } => ToolError::too_large_to_view(display, len, limit),
            ReadError::NotRegular => ToolError::replaced_while_read(),
            ReadError::Walk(e) => fs::walk::error(&e),
            ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
                ToolError::replaced_while_read()
            }
            ReadError::Io(e) => fs::io_error(&e, "reading the file"),
        })
    };
    let existing = walked(target.root, target.resolved.parent(), read)?;
    // Linked meanwhile, perhaps to a file outside the root: not shown.
    if existing.link_count > 1 {
        return Err(ToolError::shared_file_view(display));
    }
    let bytes = &existing.bytes;
    let size = bytes.len() as u64;
    let lock = Some(lock::values(
        bytes,
        existing.modified,
        request.report_sha256,
    ));
    let base = Some(lock::base_of(bytes));
    let plan = format::plan(Some(bytes), true, request.encoding)
        .map_err(|e| ToolError::not_in_encoding(&TextEncoding::Legacy(e.0).name()))?;
    if plan.old_not_text {
        // Seen, though not as text: no version to merge onto.
        session::saw(config, display, None);
        return Ok(Shown {
            text: format!(
                "'{display}' is not text in any encoding the tool knows ({size} bytes); it is \
                 not shown."
            ),
            view: View {
                kind: ViewKind::Binary,
                lines: None,
                total: 0,
                next_line: None,
                base,
                entries: Vec::new(),
            },
            format: None,
            lock,
            size,
            cut: false,
        });
    }
    let page = page::number(&plan.old_text, request.first, request.last).map_err(
        |PastEnd { total }| {
            ToolError::invalid_param(format!(
                "'{display}' has {total} lines; the view starts at line {}. Give a first \
                 line from 1 to {total}.",
                request.first
            ))
        },
    )?;
    let text = file_text(display, &page, plan.encoding, plan.line_endings);
    // The version shown, kept where the journal is, so that a write made
    // on it after it changed can be merged (`docs/contract.md#merge`). A
    // version not kept only means no merge.
    if let (Some(journal), Some(base)) = (config.journal.as_deref(), base.as_deref()) {
        let _ = journal.remember(display, base, bytes);
    }
    session::saw(config, display, base.as_deref());
    Ok(Shown {
        text,
        view: View {
            kind: ViewKind::File,
            lines: page.lines,
            total: page.total,
            next_line: page.next,
            base,
            entries: Vec::new(),
        },
        format: Some((plan.encoding, plan.line_endings)),
        lock,
        size,
        cut: page.next.is_some(),
    })
}

/// A directory's names that are not hidden (a name starting with `.`),
/// not the tool's temp files, and names a request could give.
fn listed(dir: &Dir) -> std::io::Result<Vec<String>> {
    dir.names(|name| {
        !name.starts_with('.') && !is_temp_name(name) && crate::path::check_characters(name).is_ok()
    })
}

/// What a listing leaves out beside hidden names: the places a write may
/// not change.
struct Rules<'a> {
    /// Where the listed directory is below the root.
    names: &'a [String],
    config: &'a Config,
    /// The file system takes names that differ in case for one.
    folds: bool,
    /// What the repositories on the listed directory's path protect,
    /// found once for all its entries.
    guarded: crate::git::Guarded,
}

impl Rules<'_> {
    /// Whether the entry `rel` below the listed directory is left out;
    /// `guarded` is what the repositories on its path protect.
    fn hidden_in(&self, guarded: &crate::git::Guarded, rel: &[&str]) -> bool {
        let mut path = self.names.to_vec();
        path.extend(rel.iter().map(|s| (*s).to_owned()));
        let protection = &self.config.protection;
        protection.check(&path, self.folds).is_err()
            || (protection.protects_git() && guarded.covers(&path))
    }
}

/// Run `then` on the directory `names` below `root`, reached by the walk
/// every read goes through (`fs::walk`): the very place the resolution
/// checked, or a refusal when a name was swapped since.
fn walked<R>(
    root: &Dir,
    names: &[String],
    then: impl FnOnce(&Dir) -> Result<R, ToolError>,
) -> Result<R, ToolError> {
    let dir = fs::walk(root, names).map_err(|e| fs::walk::error(&e))?;
    then(&dir)
}

/// A file's answer: a first line naming what is shown (and the format,
/// where it is not plain UTF-8 with `\n`), the numbered lines, and a last
/// one on how to see more.
fn file_text(
    display: &str,
    page: &Page,
    encoding: TextEncoding,
    endings: Option<format::LineEnding>,
) -> String {
    let mut notes = Vec::new();
    if encoding != TextEncoding::PLAIN {
        notes.push(encoding.name());
        if encoding.bom() {
            notes.push("byte-order mark".to_owned());
        }
    }
    if let Some(endings) = endings.filter(|e| *e != format::LineEnding::Lf) {
        notes.push(endings.name().to_ascii_uppercase());
    }
    let format = if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join(", "))
    };
    let mut text = match page.lines {
        None => format!("'{display}' is empty{format}.\n"),
        Some([first, last]) => format!(
            "'{display}', lines {first}-{last} of {}{format}:\n",
            page.total
        ),
    };
    text.push_str(&page.body);
    if let Some(more) = page::more(page) {
        text.push_str(&more);
    }
    text.truncate(text.trim_end_matches('\n').len());
    text
}

/// A directory's entries, two levels deep: hidden ones (a name starting
/// with `.`), names no request could give (a control character, say, which
/// could forge a line of the answer), the protected places, the places git
/// runs code from and the tool's temp files left out, and only real
/// directories entered (a link to one is listed, not followed). `dir` is
/// the directory `names` below `root`.
///
/// Paged by its own (first-level) entries, as a file is by lines: the
/// request's `first` to `last` of them, each with its children, as many
/// as fit in [`page::MAX_ENTRIES`] lines and [`page::MAX_CHARS`]; the
/// answer says where the next page starts. Nothing past the page is
/// looked at beyond its name, so a directory of 60,000 files costs one
/// page's `stat`s, not 60,000.
fn directory(
    root: &Dir,
    dir: &Dir,
    names: &[String],
    prefix: Option<&str>,
    display: &str,
    config: &Config,
    range: (u64, Option<u64>),
) -> Result<Shown, ToolError> {
    let mut top = listed(dir).map_err(|e| fs::io_error(&e, "listing the directory"))?;
    top.sort();
    let rules = Rules {
        names,
        config,
        folds: config.protection.has_patterns()
            && top
                .iter()
                .find(|n| n.bytes().any(|b| b.is_ascii_alphabetic()))
                .is_some_and(|n| fs::folds_case(dir, std::slice::from_ref(n), 1)),
        guarded: if config.protection.protects_git() {
            crate::git::Guarded::along(root, names)
        } else {
            crate::git::Guarded::default()
        },
    };
    top.retain(|name| !rules.hidden_in(&rules.guarded, &[name]));
    let total = top.len() as u64;
    let (first, last) = range;
    if first > total && total > 0 {
        return Err(ToolError::invalid_param(format!(
            "'{display}' has {total} entries; the view starts at entry {first}. Give an offset \
             from 1 to {total}."
        )));
    }
    let until = last.map_or(total, |last| last.min(total));
    let shown_path = |rel: &[&str]| {
        let mut path: Vec<&str> = names.iter().map(String::as_str).collect();
        path.extend_from_slice(rel);
        let joined = path.join("/");
        prefix.map_or_else(|| joined.clone(), |p| format!("{p}/{joined}"))
    };
    // The directory's own entries on this page, for the full form (the
    // file API lists them).
    let mut own = Vec::new();
    let mut page = page::Entries::default();
    let wanted = usize::try_from(first - 1).unwrap_or(usize::MAX)
        ..usize::try_from(until).unwrap_or(usize::MAX);
    for (at, name) in (first..).zip(top.get(wanted).unwrap_or_default()) {
        let is_dir = dir.stat_at(name).is_ok_and(|s| s.kind == Kind::Directory);
        let mut group = vec![if is_dir {
            format!("{}/", shown_path(&[name]))
        } else {
            shown_path(&[name])
        }];
        if let Some(sub) = is_dir.then(|| dir.open_dir_at(name).ok()).flatten() {
            let mut inner = listed(&sub).unwrap_or_default();
            inner.sort();
            let mut below = names.to_vec();
            below.push(name.clone());
            let guarded = if config.protection.protects_git() {
                rules.guarded.and_at(root, &below)
            } else {
                crate::git::Guarded::default()
            };
            // Only the children that can be on this page are looked at;
            // the rest are counted by name, for the answer's "more".
            let room = page.room();
            for child in inner {
                if rules.hidden_in(&guarded, &[name, &child]) {
                    continue;
                }
                let shown = group.len() < room
                    && sub.stat_at(&child).is_ok_and(|s| s.kind == Kind::Directory);
                let slash = if shown { "/" } else { "" };
                group.push(format!("{}{slash}", shown_path(&[name, &child])));
            }
        }
        if !page.take(group, at) {
            break;
        }
        own.push(if is_dir {
            format!("{name}/")
        } else {
            name.clone()
        });
    }
    let shown = own.len() as u64;
    let text = page.text(display, [first, shown, until, total]);
    Ok(Shown {
        text,
        view: View {
            kind: ViewKind::Directory,
            lines: (shown > 0).then(|| [first, first + shown - 1]),
            total,
            next_line: page.next,
            base: None,
            entries: own,
        },
        format: None,
        lock: None,
        size: 0,
        cut: page.next.is_some() || page.inside.is_some(),
    })
}
