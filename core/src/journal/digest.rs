//! The journal's two hashes.
//!
//! A file's content is named by XXH3-128: it is computed on every
//! journaled write, over the old content and the new, inside the
//! component, where SHA-256 of 10 MiB costs about as much as the whole
//! write (BENCHMARKS.md#the-journal). It has to tell two contents apart
//! even when a model chose one of them: with XXH3's public default secret,
//! whoever chooses content can make two different contents share a digest
//! (a person's file would then be "saved" as the model's look-alike, and
//! an undo would restore the model's bytes). So each journal draws its own
//! random secret ([`Key`]), kept in the journal where no call reaches it,
//! and digests are keyed with it: `k` and 32 hex digits. A digest without
//! the `k` was written by a build before keys and is checked unkeyed. The
//! records are chained by SHA-256, which is small work on small lines and
//! is the part an audit relies on.

use sha2::{Digest as _, Sha256};

/// The length of a journal's secret, in bytes: XXH3 takes 136 at least.
pub const KEY_LEN: usize = 192;

/// A journal's secret for XXH3.
#[derive(Clone)]
pub struct Key(Box<[u8; KEY_LEN]>);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(…)")
    }
}

impl Key {
    /// A new secret from the system's random source (WASI's in the
    /// component).
    pub fn random() -> std::io::Result<Key> {
        let mut bytes = Box::new([0u8; KEY_LEN]);
        getrandom::fill(&mut bytes[..]).map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(Key(bytes))
    }

    /// The secret `bytes` hold, if they are one.
    pub fn from_bytes(bytes: &[u8]) -> Option<Key> {
        Some(Key(Box::new(bytes.try_into().ok()?)))
    }

    /// Its bytes, to keep.
    pub fn bytes(&self) -> &[u8] {
        &self.0[..]
    }

    /// The digest of `bytes` under this key.
    pub fn digest(&self, bytes: &[u8]) -> Digest {
        Digest {
            value: xxhash_rust::xxh3::xxh3_128_with_secret(bytes, &self.0[..]),
            keyed: true,
        }
    }

    /// Whether `bytes` have the digest `named`, keyed or (written before
    /// keys) not.
    pub fn matches(&self, named: &str, bytes: &[u8]) -> bool {
        let digest = if named.starts_with(KEYED) {
            self.digest(bytes)
        } else {
            Digest::unkeyed(bytes)
        };
        digest.hex() == named
    }
}

/// How a keyed digest's name starts.
const KEYED: char = 'k';

/// A content digest: XXH3-128, keyed with the journal's secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Digest {
    value: u128,
    keyed: bool,
}

impl Digest {
    /// The digest of `bytes` without a key, as builds before keys named
    /// contents.
    fn unkeyed(bytes: &[u8]) -> Digest {
        Digest {
            value: xxhash_rust::xxh3::xxh3_128(bytes),
            keyed: false,
        }
    }

    /// How records and saved copies name it: `k` and 32 lowercase hex
    /// digits (32 digits alone for an unkeyed one).
    pub fn hex(self) -> String {
        if self.keyed {
            format!("{KEYED}{:032x}", self.value)
        } else {
            format!("{:032x}", self.value)
        }
    }
}

/// SHA-256 of a record's line, lowercase hex.
pub fn chain(line: &[u8]) -> String {
    Sha256::digest(line)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The `prev` of the first record.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

#[cfg(test)]
mod tests {
    use super::*;

    /// A keyed digest is named with `k`; a name without it (a record of a
    /// build before keys) is checked unkeyed; two keys name one content
    /// apart.
    #[test]
    fn keyed_and_older_digests_are_both_checked() {
        let key = Key::random().unwrap();
        let keyed = key.digest(b"content").hex();
        assert!(keyed.starts_with('k') && keyed.len() == 33, "{keyed}");
        assert!(key.matches(&keyed, b"content"));
        assert!(!key.matches(&keyed, b"other"));
        let older = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(b"content"));
        assert!(key.matches(&older, b"content"));
        assert!(!key.matches(&older, b"other"));
        assert_ne!(Key::random().unwrap().digest(b"content").hex(), keyed);
        assert!(Key::from_bytes(key.bytes()).is_some());
        assert!(Key::from_bytes(&key.bytes()[1..]).is_none());
    }
}
