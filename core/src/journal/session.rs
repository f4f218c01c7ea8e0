//! `sessions/<session>.<key>`: what one session (a `serve` stream, an MCP
//! connection, a WebSocket connection) has seen of each file
//! (`docs/contract.md#session`): one small file per file the session
//! viewed or wrote, named by the XXH3-128 of the file's name as the
//! envelope gives it, holding the base of the version it viewed (empty
//! after a write of its own, whose version no view showed). Each call
//! reads the one entry it needs and replaces the one it changes, so calls
//! of one session in flight at once never rewrite each other's. The host
//! that drew the session removes its entries when the session ends. One
//! directory for all sessions: the journal's layout stays two levels
//! deep.

use std::io;

use super::Journal;
use super::seen::replace;

/// The sessions' directory.
pub const SESSIONS: &str = "sessions";

impl Journal {
    /// Note that `session` has seen `name`: the version `base` names, or
    /// (`None`) one it wrote itself.
    pub fn session_saw(&self, session: &str, name: &str, base: Option<&str>) -> io::Result<()> {
        let dir = self.dir();
        let at = match dir.open_dir_at(SESSIONS) {
            Ok(at) => at,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                match dir.create_dir_at(SESSIONS) {
                    Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                    _ => {}
                }
                dir.open_dir_at(SESSIONS)?
            }
            Err(e) => return Err(e),
        };
        replace(&at, &key(session, name), base.unwrap_or("").as_bytes())
    }

    /// What `session` has seen of `name`: `None` if nothing; else the base
    /// of the version it viewed, if a view was the last it saw.
    pub fn session_seen(&self, session: &str, name: &str) -> Option<Option<String>> {
        let path = format!("{SESSIONS}/{}", key(session, name));
        let file = self.dir().open_read_at(&path).ok()?;
        let bytes = file.read_capped(64, 64).ok()?;
        let base = String::from_utf8(bytes).ok()?;
        Some((base.len() == 32).then_some(base))
    }
}

/// The entry's name for a session's note of a file: the session, and the
/// XXH3-128 of the file's name, so that no name given reaches anything but
/// an entry.
fn key(session: &str, name: &str) -> String {
    format!(
        "{session}.{:032x}",
        xxhash_rust::xxh3::xxh3_128(name.as_bytes())
    )
}
