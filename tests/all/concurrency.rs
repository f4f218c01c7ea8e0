//! One host, many threads: every final file is one writer's complete
//! content, no temp file remains, every envelope is well-formed.

use std::collections::HashSet;

use crate::support::Project;

const THREADS: usize = 8;
const WRITES: usize = 500;

/// Writer `w`'s content for round `i`: several lines, so that a torn write
/// would show.
fn content(w: usize, i: usize) -> String {
    (0..40)
        .map(|line| format!("writer {w} round {i} line {line} {}\n", "x".repeat(80)))
        .collect()
}

fn parse_owner(text: &str) -> (usize, usize) {
    let mut words = text.split_whitespace().skip(1);
    let w = words.next().and_then(|n| n.parse().ok()).expect("writer");
    let i = words.nth(1).and_then(|n| n.parse().ok()).expect("round");
    (w, i)
}

#[test]
fn many_threads_write_the_same_file() {
    let p = Project::new();
    let statuses: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|w| {
                let p = &p;
                scope.spawn(move || {
                    (0..WRITES)
                        .map(|i| p.put("shared/same.txt", &content(w, i)).status)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("writer thread"))
            .collect()
    });
    assert_eq!(statuses.len(), THREADS * WRITES);
    let unexpected: Vec<_> = statuses
        .iter()
        .filter(|s| *s != "success" && *s != "partial")
        .collect();
    assert!(
        unexpected.is_empty(),
        "{} calls did not succeed",
        unexpected.len()
    );
    let text = p.read_string("shared/same.txt");
    let (w, i) = parse_owner(&text);
    assert_eq!(
        text,
        content(w, i),
        "the file is not one writer's complete content"
    );
    assert!(
        p.tree().temp_files().is_empty(),
        "{:?}",
        p.tree().temp_files()
    );
}

#[test]
fn many_threads_write_different_files() {
    let p = Project::new();
    std::thread::scope(|scope| {
        for w in 0..THREADS {
            let p = &p;
            scope.spawn(move || {
                for i in 0..WRITES {
                    let env = p.put(
                        &format!("dir{}/file{w}_{}.txt", i % 4, i % 25),
                        &content(w, i),
                    );
                    assert_eq!(env.code(), None, "{}", env.text);
                }
            });
        }
    });
    let mut seen = HashSet::new();
    for w in 0..THREADS {
        for n in 0..25 {
            let last = (0..WRITES).rev().find(|i| i % 25 == n).expect("round");
            let name = format!("dir{}/file{w}_{n}.txt", last % 4);
            assert_eq!(p.read_string(&name), content(w, last), "{name}");
            seen.insert(name);
        }
    }
    assert!(p.tree().temp_files().is_empty());
}
