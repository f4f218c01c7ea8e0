//! Resolution of a path under the root, every link followed by the tool
//! itself (`docs/contract.md#path-rules`, steps 5–7).
//!
//! The walk looks at one name at a time, from the root down. A link is
//! read and its target put in front of the names still to walk; a link
//! that leads outside the root — an absolute target, or one that climbs
//! above the root at any step — is refused, and so is a chain of more than
//! [`MAX_LINKS`] links. The first name that does not exist ends the
//! looking: the rest of the path is applied lexically and will be created.

use std::collections::VecDeque;
use std::io;

use crate::error::ToolError;
use crate::path::{MAX_LINKS, RelPath, link_target_segments};

use super::sys::{Dir, Kind};

/// What the resolved target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// Nothing there yet: the write creates it.
    Missing,
    /// A regular file.
    File,
    /// A directory (or the root itself).
    Directory,
    /// A FIFO, socket, device or anything else that is not a regular file.
    Other,
    /// A symbolic link, left unfollowed as the last name
    /// ([`resolve_unfollowed`]).
    Link,
}

/// A path resolved inside the root, every link followed.
#[derive(Debug)]
pub struct Resolved {
    /// Physical root-relative names of the target.
    pub names: Vec<String>,
    /// How many leading names exist as directories (the rest, except the
    /// last, are directories the write has to create).
    pub existing_dirs: usize,
    /// What the last name is.
    pub kind: TargetKind,
    /// The target's size when it is an existing file, as the walk saw it.
    pub len: Option<u64>,
    /// How many names the target has (hard links), when it is a file.
    pub links: u64,
}

impl Resolved {
    /// Root-relative POSIX form, as reported in `path_resolved`.
    pub fn display(&self) -> String {
        self.names.join("/")
    }

    /// Root-relative POSIX form of the parent directory, `None` for a file
    /// directly in the root.
    pub fn parent_display(&self) -> Option<String> {
        let parent = self.parent();
        (!parent.is_empty()).then(|| parent.join("/"))
    }

    /// The names of the parent directory.
    pub fn parent(&self) -> &[String] {
        &self.names[..self.names.len().saturating_sub(1)]
    }

    /// The target's own name.
    pub fn file_name(&self) -> &str {
        self.names.last().map_or("", String::as_str)
    }

    /// Whether the target is a file with other names (hard links), which
    /// may lie outside the root: the tool does not read it
    /// (`docs/contract.md#hard-links`).
    pub fn shared(&self) -> bool {
        self.links > 1
    }

    /// Whether the write must create parent directories.
    pub fn creates_dirs(&self) -> bool {
        self.existing_dirs + 1 < self.names.len()
    }
}

/// Resolve `rel` under `root`, following links one name at a time.
pub fn resolve(root: &Dir, rel: RelPath) -> Result<Resolved, ToolError> {
    walk(Context::new(root, rel, true))
}

/// [`resolve`], but a last name that is a link is the link itself
/// ([`TargetKind::Link`], its `len` the target's length): what a removal
/// of that name removes, as `rm` does. Links above it are followed.
pub fn resolve_unfollowed(root: &Dir, rel: RelPath) -> Result<Resolved, ToolError> {
    walk(Context::new(root, rel, false))
}

fn walk(mut walk: Context<'_>) -> Result<Resolved, ToolError> {
    while let Some(name) = walk.pending.pop_front() {
        match name.as_str() {
            "" | "." => {}
            ".." => walk.step_up()?,
            _ if walk.missing_from.is_some() => walk.step_into_missing(name),
            _ => walk.step(name)?,
        }
    }
    Ok(walk.finish())
}

/// The state of one walk (after cap-primitives' `fs/manually/open.rs`).
struct Context<'a> {
    root: &'a Dir,
    /// Names still to walk, front first; a link's target goes in front.
    pending: VecDeque<String>,
    /// Names walked so far: root-relative, physical (no links among them).
    resolved: Vec<String>,
    /// The depth from which nothing exists: those names will be created.
    missing_from: Option<usize>,
    /// What the last resolved name is.
    kind: TargetKind,
    /// Links followed so far.
    links: usize,
    /// The size of the last name, when it is a file.
    len: Option<u64>,
    /// Its hard links, when it is a file.
    hard_links: u64,
    /// Whether a link as the last name is followed.
    follow_last: bool,
}

impl<'a> Context<'a> {
    fn new(root: &'a Dir, rel: RelPath, follow_last: bool) -> Context<'a> {
        Context {
            root,
            pending: rel.into_names().into(),
            resolved: Vec::new(),
            missing_from: None,
            kind: TargetKind::Directory,
            links: 0,
            len: None,
            hard_links: 0,
            follow_last,
        }
    }

    /// Whether no name is left to walk but `.` and empty ones.
    fn at_last(&self) -> bool {
        self.pending
            .iter()
            .all(|rest| rest.is_empty() || rest == ".")
    }

    /// `..`: back to the parent, never above the root.
    fn step_up(&mut self) -> Result<(), ToolError> {
        if self.resolved.pop().is_none() {
            return Err(ToolError::outside_root());
        }
        if self
            .missing_from
            .is_some_and(|depth| self.resolved.len() <= depth)
        {
            self.missing_from = None;
        }
        self.kind = if self.missing_from.is_some() {
            TargetKind::Missing
        } else {
            TargetKind::Directory
        };
        Ok(())
    }

    /// A name below one that does not exist: taken as it is.
    fn step_into_missing(&mut self, name: String) {
        self.resolved.push(name);
    }

    /// Look at `name` below what is resolved so far.
    fn step(&mut self, name: String) -> Result<(), ToolError> {
        let mut path = self.resolved.join("/");
        if !path.is_empty() {
            path.push('/');
        }
        path.push_str(&name);
        let stat = match self.root.stat_at(&path) {
            Ok(stat) => stat,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.missing_from = Some(self.resolved.len());
                self.resolved.push(name);
                self.kind = TargetKind::Missing;
                return Ok(());
            }
            Err(e) => return Err(super::io_error(&e, "resolving the path")),
        };
        let kind = stat.kind;
        match kind {
            Kind::Symlink if !self.follow_last && self.at_last() => {
                self.resolved.push(name);
                self.kind = TargetKind::Link;
                self.len = Some(stat.len);
                self.hard_links = stat.link_count;
                Ok(())
            }
            Kind::Symlink => self.follow(&path),
            Kind::Directory => {
                self.resolved.push(name);
                self.kind = TargetKind::Directory;
                Ok(())
            }
            Kind::File | Kind::Other => {
                if !self.at_last() {
                    return Err(ToolError::parent_not_directory());
                }
                self.resolved.push(name);
                self.kind = if kind == Kind::File {
                    self.len = Some(stat.len);
                    self.hard_links = stat.link_count;
                    TargetKind::File
                } else {
                    TargetKind::Other
                };
                Ok(())
            }
        }
    }

    /// Follow the link at root-relative `path`: its target's names go in
    /// front of the names still to walk. The one place links are counted.
    fn follow(&mut self, path: &str) -> Result<(), ToolError> {
        self.links += 1;
        if self.links > MAX_LINKS {
            return Err(ToolError::link_loop());
        }
        let target = self
            .root
            .read_link_at(path)
            .map_err(|e| super::io_error(&e, "resolving the path"))?;
        // An absolute target, or one that is not text, leads outside as far
        // as the tool can tell: it cannot know where the root sits.
        let segments = target
            .as_deref()
            .and_then(link_target_segments)
            .ok_or_else(ToolError::outside_root)?;
        for segment in segments.into_iter().rev() {
            self.pending.push_front(segment);
        }
        Ok(())
    }

    fn finish(self) -> Resolved {
        let existing_dirs = match self.kind {
            TargetKind::Missing => self.missing_from.unwrap_or(0),
            _ => self.resolved.len().saturating_sub(1),
        };
        Resolved {
            names: self.resolved,
            existing_dirs,
            len: if matches!(self.kind, TargetKind::File | TargetKind::Link) {
                self.len
            } else {
                None
            },
            links: if matches!(self.kind, TargetKind::File | TargetKind::Link) {
                self.hard_links
            } else {
                0
            },
            kind: self.kind,
        }
    }
}
