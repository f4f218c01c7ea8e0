//! The commit point, where a cancelled call is stopped and the mode rule
//! is applied (`docs/contract.md#writing`, `#cancellation`).
//!
//! A file becomes visible in one system call: the rename of its synced
//! temp file over the target (or, for a create, its link to the target's
//! name). Before the first such call of a call nothing a caller can see
//! has changed; after it the change is done. So a call that its client
//! cancels is stopped there and nowhere else: the host's `rename-at` and
//! `link-at` into a root, and its `unlink-file-at` of a file that is not
//! a temp file (a removal placed), look at the call's cancel flag first
//! and, when it is set and the call has placed no file yet, refuse with
//! `interrupted`, which the component reports as a cancelled call after
//! removing its temp files. Once one file is placed, the rest of the change goes
//! through whatever the client says: a change of several files is all or
//! nothing under cancellation too. Stopping the guest anywhere else (its
//! time bound's trap) could land after the commit, with the write done
//! and the caller told it failed.
//!
//! The journal's own operations (its lock, its saved contents, its log)
//! are never gated: they are not a change of the caller's files, and a
//! cancel must not leave the journal half written. The gate tells them
//! apart by the destination's descriptor: the journal's directory, known
//! by its device and inode.
//!
//! The functions shadow wasmtime-wasi's own in the linker and call them.
//! They also note that the call passed its commit point, so that a guest
//! stopped after it is reported as a change done, not as nothing written;
//! and that the call holds the journal's lock, so that the host can
//! release a lock whose holder trapped (`crate::tool`).

use std::os::fd::AsFd;

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::filesystem::{Descriptor as Open, WasiFilesystemView};
use wasmtime_wasi::p2::bindings::sync::filesystem::types::{
    Descriptor, ErrorCode, Host, HostDescriptor, PathFlags,
};

use write_tool_wire::temps::is_temp_name;

use crate::state::HostState;

/// The interface the component imports its file system from.
const FILESYSTEM_TYPES: &str = "wasi:filesystem/types@0.2.12";

/// The name of the journal's lock (`core::journal::LOCK`).
const LOCK: &str = "lock";

/// Whether the descriptor `dir` is the journal's directory.
fn is_journal(store: &mut StoreContextMut<'_, HostState>, dir: &Resource<Descriptor>) -> bool {
    let Some(journal) = store.data().journal_id else {
        return false;
    };
    let view = store.data_mut().filesystem();
    match view.table.get(dir) {
        Ok(Open::Dir(d)) => {
            rustix::fs::fstat(d.dir.as_fd()).is_ok_and(|s| (s.st_dev, s.st_ino) == journal)
        }
        _ => false,
    }
}

/// Apply the mode rule to the temp file `old` in `dir` before it replaces
/// `new` in `new_dir` (`crate::modes`).
fn carry_over(
    store: &mut StoreContextMut<'_, HostState>,
    dir: &Resource<Descriptor>,
    old: &str,
    new_dir: &Resource<Descriptor>,
    new: &str,
) {
    let state = store.data_mut();
    let journal_links = std::mem::take(&mut state.journal_links);
    let view = state.filesystem();
    if let (Ok(Open::Dir(from)), Ok(Open::Dir(to))) = (view.table.get(dir), view.table.get(new_dir))
    {
        crate::modes::carry_over(from.dir.as_fd(), old, to.dir.as_fd(), new, &journal_links);
    }
    store.data_mut().journal_links = journal_links;
}

/// The file (device, inode) `name` in `dir` names, not following a link.
fn identity(
    store: &mut StoreContextMut<'_, HostState>,
    dir: &Resource<Descriptor>,
    name: &str,
) -> Option<(u64, u64)> {
    let view = store.data_mut().filesystem();
    let Ok(Open::Dir(d)) = view.table.get(dir) else {
        return None;
    };
    rustix::fs::statat(d.dir.as_fd(), name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
        .ok()
        .map(|s| (s.st_dev, s.st_ino))
}

/// Refuse a call's first commit once it was cancelled.
fn refused(store: &StoreContextMut<'_, HostState>) -> bool {
    store.data().cancelled() && !store.data().committed
}

/// Put the gated `rename-at`, `link-at` and `unlink-file-at` in `linker`,
/// over wasmtime-wasi's.
pub(crate) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut types = linker.instance(FILESYSTEM_TYPES)?;
    types.func_wrap(
        "[method]descriptor.rename-at",
        |mut store: StoreContextMut<'_, HostState>,
         (dir, old, new_dir, new): (Resource<Descriptor>, String, Resource<Descriptor>, String)| {
            let journal = is_journal(&mut store, &new_dir);
            if !journal {
                if refused(&store) {
                    return Ok((Err(ErrorCode::Interrupted),));
                }
                carry_over(&mut store, &dir, &old, &new_dir, &new);
            }
            let mut view = store.data_mut().filesystem();
            let result = match HostDescriptor::rename_at(&mut view, dir, old, new_dir, new) {
                Ok(()) => Ok(()),
                Err(err) => Err(Host::convert_error_code(&mut view, err)?),
            };
            store.data_mut().committed |= !journal && result.is_ok();
            Ok((result,))
        },
    )?;
    types.func_wrap(
        "[method]descriptor.link-at",
        |mut store: StoreContextMut<'_, HostState>,
         (dir, flags, old, new_dir, new): (
            Resource<Descriptor>,
            PathFlags,
            String,
            Resource<Descriptor>,
            String,
        )| {
            let journal = is_journal(&mut store, &new_dir);
            if !journal && refused(&store) {
                return Ok((Err(ErrorCode::Interrupted),));
            }
            let locking = journal && new == LOCK;
            // A replaced file saved into the journal: its link there.
            let saved = if journal && !locking {
                identity(&mut store, &dir, &old)
            } else {
                None
            };
            let mut view = store.data_mut().filesystem();
            let result = match HostDescriptor::link_at(&mut view, dir, flags, old, new_dir, new) {
                Ok(()) => Ok(()),
                Err(err) => Err(Host::convert_error_code(&mut view, err)?),
            };
            let state = store.data_mut();
            state.committed |= !journal && result.is_ok();
            state.holds_lock |= locking && result.is_ok();
            if let Some(saved) = saved.filter(|_| result.is_ok()) {
                state.journal_links.push(saved);
            }
            Ok((result,))
        },
    )?;
    types.func_wrap(
        "[method]descriptor.unlink-file-at",
        |mut store: StoreContextMut<'_, HostState>, (dir, path): (Resource<Descriptor>, String)| {
            let journal = is_journal(&mut store, &dir);
            let unlocking = journal && path == LOCK;
            // A file's removal places a change (a delete, a revert of a
            // create); a temp file's is clean-up, which a cancel must not
            // stop.
            let places = !journal && !is_temp_name(&path);
            if places && refused(&store) {
                return Ok((Err(ErrorCode::Interrupted),));
            }
            let mut view = store.data_mut().filesystem();
            let result = match HostDescriptor::unlink_file_at(&mut view, dir, path) {
                Ok(()) => Ok(()),
                Err(err) => Err(Host::convert_error_code(&mut view, err)?),
            };
            let state = store.data_mut();
            state.committed |= places && result.is_ok();
            if unlocking && result.is_ok() {
                state.holds_lock = false;
            }
            Ok((result,))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}
