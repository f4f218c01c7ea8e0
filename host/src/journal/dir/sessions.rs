//! What the component kept for sessions (`sessions/` in the journal,
//! `docs/contract.md#session`), removed when a session ends.

use rustix::fs::{AtFlags, Mode, OFlags};

use super::{JournalDir, names};

impl JournalDir {
    /// Remove what the component kept for session `id`
    /// (`sessions/<id>.…`), and for sessions of processes that are gone.
    pub(crate) fn remove_session(&self, id: &str) {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let Ok(sessions) = rustix::fs::openat(&self.fd, "sessions", flags, Mode::empty()) else {
            return;
        };
        for name in names(&sessions) {
            let of = name.split('.').next().unwrap_or_default();
            if of == id || crate::session::Session::is_dead(of) {
                let _ = rustix::fs::unlinkat(&sessions, name.as_str(), AtFlags::empty());
            }
        }
    }
}
