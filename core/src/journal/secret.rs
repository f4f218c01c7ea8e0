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
            Err(e) if e.kind() == io::ErrorKind::NotFound => self.make_key()?,
            other => other?,
        };
        Ok(self.key.get_or_init(|| key))
    }

    fn read_key(&self) -> io::Result<Key> {
        let file = self.dir.open_read_at(SECRET)?;
        let bytes = file.read_all(KEY_LEN as u64 + 1)?;
        Key::from_bytes(&bytes).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "the journal's secret is damaged",
            )
        })
    }

    /// A new secret, written whole before it is given its name, so that
    /// no process reads half of one; where another process named its own
    /// first, that one.
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
            Ok(()) => Ok(key),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => self.read_key(),
            Err(e) => Err(e),
        }
    }
}
