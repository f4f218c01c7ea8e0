//! What the unit tests of the journal and the pipeline set up alike.

use std::path::Path;
use std::sync::Arc;

use crate::fs::Dir;
use crate::journal::{Bounds, Journal};
use crate::roots::Roots;

use super::config::Config;

/// A root (`dir/root`) and a journal (`dir/journal`) keeping at most
/// `changes` changes, both made; the configuration writes through the
/// journal and may make the host's own requests (`verify`, `gc`).
pub(crate) fn journaled(dir: &Path, changes: u64) -> (Roots, Config) {
    let (root, journal) = (dir.join("root"), dir.join("journal"));
    std::fs::create_dir_all(&root).expect("root");
    std::fs::create_dir_all(&journal).expect("journal");
    let bounds = Bounds {
        max_bytes: 1 << 30,
        max_changes: changes,
        max_age_ms: i64::MAX,
    };
    let journal = Journal::open(Dir::from_path(&journal), bounds, None).expect("open");
    let config = Config {
        journal: Some(Arc::new(journal)),
        admin: true,
        ..Config::default()
    };
    (Roots::single(Dir::from_path(&root)), config)
}
