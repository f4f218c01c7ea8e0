//! The commit point, where a cancelled call is stopped
//! (`docs/contract.md#writing`).
//!
//! A write becomes visible in one system call: the rename of its synced
//! temp file over the target (or, for `create_only`, its link to the
//! target's name). Before it nothing a caller can see has changed; after
//! it the write is done. So a call that its client cancels is stopped
//! there and nowhere else: the host's `rename-at` and `link-at` look at the
//! call's cancel flag first and, when it is set, refuse with
//! `interrupted`, which the component reports as a cancelled call after
//! removing its temp file; once either has run, the call goes on to its
//! end. Stopping the guest anywhere else (its time bound's trap) could
//! land after the commit, with the write done and the caller told it
//! failed.
//!
//! The two functions shadow wasmtime-wasi's own in the linker and call
//! them when the flag is clear. They also note that the call passed its
//! commit point, so that a guest stopped after it (its time bound) is
//! reported as a write done, not as nothing written.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::filesystem::WasiFilesystemView;
use wasmtime_wasi::p2::bindings::sync::filesystem::types::{
    Descriptor, ErrorCode, Host, HostDescriptor, PathFlags,
};

use crate::state::HostState;

/// The interface the component imports its file system from.
const FILESYSTEM_TYPES: &str = "wasi:filesystem/types@0.2.12";

/// A call's cancel flag: set by whoever cancels, read at the commit point.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A flag that is clear.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Cancel the call: it stops at its commit point if it has not passed
    /// it yet.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Put the gated `rename-at` and `link-at` in `linker`, over
/// wasmtime-wasi's.
pub(crate) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut types = linker.instance(FILESYSTEM_TYPES)?;
    types.func_wrap(
        "[method]descriptor.rename-at",
        |mut store: StoreContextMut<'_, HostState>,
         (dir, old, new_dir, new): (Resource<Descriptor>, String, Resource<Descriptor>, String)| {
            if store.data().cancelled() {
                return Ok((Err(ErrorCode::Interrupted),));
            }
            let mut view = store.data_mut().filesystem();
            let result = match HostDescriptor::rename_at(&mut view, dir, old, new_dir, new) {
                Ok(()) => Ok(()),
                Err(err) => Err(Host::convert_error_code(&mut view, err)?),
            };
            store.data_mut().committed |= result.is_ok();
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
            if store.data().cancelled() {
                return Ok((Err(ErrorCode::Interrupted),));
            }
            let mut view = store.data_mut().filesystem();
            let result = match HostDescriptor::link_at(&mut view, dir, flags, old, new_dir, new) {
                Ok(()) => Ok(()),
                Err(err) => Err(Host::convert_error_code(&mut view, err)?),
            };
            store.data_mut().committed |= result.is_ok();
            Ok((result,))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}
