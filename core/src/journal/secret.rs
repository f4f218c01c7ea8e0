//! The journal's secret (`secret`): the key of its content digests
//! ([`Key`]), drawn once, when a digest is first needed, and kept.

use std::io;

use super::Journal;
use super::digest::{KEY_LEN, Key};

/// The secret's file in the journal.
pub const SECRET: &str = "secret";

impl Journal {
    /// The journal's secret, read once per call, made if there is none.
    pub fn key(&self) -> io::Result<&Key> {
        if let Some(key) = self.key.get() {
            return Ok(key);
        }
        let key = match self.read_key() {
            Err(e) if e.kind() == io::ErrorKind::NotFound && !self.holds_keyed_objects() => {
                self.make_key()?
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(damaged()),
            other => other?,
        };
        Ok(self.key.get_or_init(|| key))
    }

    /// The secret: a regular file of its length, read no further.
    fn read_key(&self) -> io::Result<Key> {
        let stat = self.dir.stat_at(SECRET)?;
        if stat.kind != crate::fs::sys::Kind::File || stat.len != KEY_LEN as u64 {
            return Err(damaged());
        }
        let bytes = self.dir.open_read_at(SECRET)?.read_at(0, KEY_LEN as u64)?;
        Key::from_bytes(&bytes).ok_or_else(damaged)
    }

    /// Whether contents saved under the secret are kept: a secret gone
    /// then is not drawn again, which would leave every one of them
    /// unreadable without a word. What cannot be listed (but is there)
    /// counts as kept.
    fn holds_keyed_objects(&self) -> bool {
        let names = self
            .dir
            .open_dir_at(super::OBJECTS)
            .and_then(|objects| objects.names(|name| name.starts_with('k')));
        match names {
            Ok(names) => !names.is_empty(),
            Err(e) => e.kind() != io::ErrorKind::NotFound,
        }
    }

    /// A new secret, written whole before it is given its name, so that
    /// no process reads half of one; where another process named its own
    /// first, that one. Its name is made durable before any content is
    /// saved under it: a crash must not keep the saved contents and lose
    /// their key.
    fn make_key(&self) -> io::Result<Key> {
        let key = Key::random()?;
        let temp = crate::fs::temps::temp_name(0);
        let file = self.dir.create_new_at(&temp)?;
        let written = file
            .write_all(key.bytes())
            .and_then(|()| file.sync())
            .and_then(|()| self.dir.link_at(&temp, SECRET));
        let _ = self.dir.unlink_at(&temp);
        match written {
            Ok(()) => {
                // As a commit does: a host that cannot sync a directory
                // (some WASI hosts) loses only the name's durability.
                let _ = self.dir.sync();
                Ok(key)
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => self.read_key(),
            Err(e) => Err(e),
        }
    }
}

/// The secret is not what the journal made: another file, another length,
/// or gone while contents saved under it are kept.
fn damaged() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "the journal's secret is damaged or gone",
    )
}
