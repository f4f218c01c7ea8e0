//! Idempotency keys as a retrying platform uses them
//! (`docs/contract.md#idempotency`): the repeat of a call that committed is
//! answered from the journal by another process, after the first was
//! killed before its answer too, and changes nothing.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::server::{Server, inode};

/// A root and a journal in one temp dir, and the flags that name them.
struct Place {
    _dir: tempfile::TempDir,
    root: PathBuf,
    journal: PathBuf,
}

impl Place {
    fn new() -> Place {
        let dir = tempfile::tempdir().expect("tempdir");
        let (root, journal) = (dir.path().join("root"), dir.path().join("journal"));
        fs::create_dir(&root).expect("mkdir root");
        Place {
            _dir: dir,
            root,
            journal,
        }
    }

    fn server(&self) -> Server {
        Server::start(&[
            "--root",
            self.root.to_str().expect("UTF-8 path"),
            "--journal",
            self.journal.to_str().expect("UTF-8 path"),
        ])
    }

    /// The journal's changes that carry a key and were not voided. The
    /// journal keeps each root's log in a folder of its own.
    fn keyed_changes(&self) -> usize {
        let log = fs::read_dir(&self.journal)
            .into_iter()
            .flatten()
            .filter_map(|entry| fs::read_to_string(entry.ok()?.path().join("log")).ok())
            .collect::<String>();
        let records: Vec<Value> = log
            .lines()
            // The log keeps room after its records, zeros written ahead.
            .map(|l| l.trim_matches('\0'))
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_str(l).expect("a record"))
            .collect();
        let voided: HashSet<u64> = records.iter().filter_map(|r| r["of"].as_u64()).collect();
        records
            .iter()
            .filter(|r| r.get("idem").is_some())
            .filter(|r| !voided.contains(&r["seq"].as_u64().expect("seq")))
            .count()
    }
}

fn repeated(env: &Value) -> bool {
    env["text"]
        .as_str()
        .is_some_and(|t| t.starts_with("Already done"))
}

/// Two processes share the journal: the second answers the first's write
/// and edit from it, with the same change id and nothing written, even
/// after the file was changed since; the key with other arguments is
/// refused there and writes nothing.
#[test]
fn another_process_answers_a_repeat_from_the_journal() {
    let place = Place::new();
    let file = place.root.join("a.txt");
    let write = json!({"path": "a.txt", "content": "one\ntwo\n", "idempotency_key": "run-7/write"});
    let edit = json!({"name": "Edit", "arguments": {"file_path": "a.txt", "old_string": "two",
        "new_string": "three", "idempotency_key": "run-7/edit"}});
    let mut first = place.server();
    let wrote = first.call(&write);
    let edited = first.call(&edit);
    assert_eq!(wrote["status"], "success", "{wrote}");
    assert_eq!(edited["status"], "success", "{edited}");
    drop(first);
    let mut second = place.server();
    for (request, answer) in [(&write, &wrote), (&edit, &edited)] {
        let again = second.call(request);
        assert_eq!(again["status"], "success", "{again}");
        assert!(repeated(&again), "{again}");
        assert_eq!(again["data"]["change_id"], answer["data"]["change_id"]);
    }
    assert_eq!(fs::read_to_string(&file).unwrap(), "one\nthree\n");
    assert_eq!(place.keyed_changes(), 2);
    let mut other = write.clone();
    other["content"] = json!("something else\n");
    let refused = second.call(&other);
    assert_eq!(refused["error"]["code"], "CONFLICT", "{refused}");
    assert_eq!(fs::read_to_string(&file).unwrap(), "one\nthree\n");
    assert_eq!(place.keyed_changes(), 2);
}

/// Rounds of a keyed five-file `write_many` killed without its answer
/// read: after one, two, three or four of its renames (recovery finishes
/// or rolls it back), or after all five (between the commit and the
/// answer). A new process is sent the same request, as a platform retries
/// it: the files end all new, the change is in the journal once, and where
/// the kill came after the commit the retry is answered from the journal.
/// The rounds go on until `AFTER` kills landed after the last rename.
#[test]
fn a_retry_after_a_kill_between_the_commit_and_the_answer_changes_nothing() {
    const FILES: usize = 5;
    const AFTER: usize = 4;
    const MAX_ROUNDS: usize = 60;
    let place = Place::new();
    let names: Vec<String> = (0..FILES).map(|i| format!("f{i}.txt")).collect();
    for name in &names {
        fs::write(place.root.join(name), "start\n").expect("seed file");
    }
    let (mut after, mut answered_from_journal, mut rounds) = (0, 0, 0);
    while after < AFTER {
        assert!(
            rounds < MAX_ROUNDS,
            "only {after} of {rounds} kills came after the commit"
        );
        let round = rounds;
        rounds += 1;
        let contents: Vec<String> = (0..FILES)
            .map(|i| format!("round {round} file {i}\n"))
            .collect();
        let writes: Vec<Value> = names
            .iter()
            .zip(&contents)
            .map(|(n, c)| json!({"path": n, "content": c}))
            .collect();
        let request = json!({"writes": writes, "idempotency_key": format!("round-{round}")});
        let before: Vec<u64> = names.iter().map(|n| inode(&place.root.join(n))).collect();
        let mut server = place.server();
        server.send(&request);
        let k = 1 + round % FILES;
        server.kill_after_renames(&place.root, &names, &before, k);
        let at_kill = renamed(&place.root, &names, &contents);
        let mut retry = place.server();
        let answer = retry.call(&request);
        assert_eq!(answer["status"], "success", "round {round}: {answer}");
        assert_eq!(
            renamed(&place.root, &names, &contents),
            FILES,
            "round {round}: {answer}"
        );
        assert_eq!(
            place.keyed_changes(),
            round + 1,
            "round {round}: a change made twice or lost"
        );
        if at_kill == FILES {
            after += 1;
            assert!(
                repeated(&answer),
                "round {round}: committed, yet made again: {answer}"
            );
        }
        answered_from_journal += usize::from(repeated(&answer));
    }
    eprintln!(
        "keyed write_many kills: {rounds}; after the commit: {after}; retries answered from the journal: {answered_from_journal}"
    );
}

/// How many of `names` in `root` hold their `contents`.
fn renamed(root: &Path, names: &[String], contents: &[String]) -> usize {
    names
        .iter()
        .zip(contents)
        .filter(|(n, c)| fs::read_to_string(root.join(n)).ok().as_deref() == Some(c.as_str()))
        .count()
}
