//! The journal's two hashes.
//!
//! A file's content is named by XXH3-128: it is computed on every
//! journaled write, over the old content and the new, inside the
//! component, where SHA-256 of 10 MiB costs about as much as the whole
//! write (BENCHMARKS.md#the-journal). It has to catch a saved copy changed
//! by accident (a hard link written in place) and tell two contents apart,
//! not resist someone who can write the journal: such a person can rewrite
//! the records too. The records are chained by SHA-256, which is small work
//! on small lines and is the part an audit relies on.

use sha2::{Digest as _, Sha256};

/// A content digest: XXH3-128.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Digest(u128);

impl Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        Digest(xxhash_rust::xxh3::xxh3_128(bytes))
    }

    /// Lowercase hex, 32 digits: how records and saved copies name it.
    pub fn hex(self) -> String {
        format!("{:032x}", self.0)
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
