//! Idempotency keys (`docs/contract.md#idempotency`): a call that changes
//! files may carry a key; its record in the journal keeps the key and a
//! digest of what the call asked. A repeat — same key, same arguments,
//! from this process or another sharing the journal, before or after a
//! kill between the commit and the answer — is answered from that record
//! and changes nothing; the key sent with other arguments is refused.
//!
//! The record is the one place a key is kept: it is written before the
//! commit point and, like the change, finished or voided by recovery, so a
//! key is taken exactly when its change happened. The lookup runs under
//! the journal's lock after recovery, before the call does its work (a
//! repeated edit would otherwise look for text its first run replaced),
//! and again inside the commit, which a twin running alongside may have
//! beaten: that twin's record answers.

use std::time::Instant;

use serde_json::Value;
use write_tool_wire::envelope::{Envelope, Operation, elapsed_ms};

use crate::error::ToolError;
use crate::journal::{Held, Idem, Journal, Kind, Op, Record};
use crate::params::{Call, EditorCommand, Keyed};
use crate::roots::Roots;

use super::checkpoint::recorded;
use super::config::Config;
use super::recover::recover;

/// Whether `call` would change files, so that a key means something: a
/// dry run, a view, a checkpoint or the journal's upkeep is answered as
/// it is, key or not.
pub(super) fn changes(call: &Call) -> bool {
    match call {
        Call::Write(request) | Call::Append(request) => !request.dry_run,
        Call::Edit(edit) => !edit.request.dry_run,
        Call::Many(request) => !request.dry_run,
        Call::Revert(request) => !request.dry_run,
        Call::Patch(request) => !request.dry_run,
        Call::TextEditor(request) => match &request.command {
            EditorCommand::View(_) => false,
            EditorCommand::Create(request) => !request.dry_run,
            EditorCommand::StrReplace(edit) | EditorCommand::Insert(edit) => !edit.request.dry_run,
            EditorCommand::UndoEdit { dry_run, .. } => !dry_run,
        },
        Call::View(_) | Call::Checkpoint(_) | Call::Journal(_) => false,
    }
}

/// Answer a keyed call: from the record of its first run if there is
/// one, else by `run` with the key in its configuration, so that its
/// record keeps it.
pub(super) fn answer(
    roots: &Roots,
    keyed: &Keyed,
    echo: Value,
    config: &Config,
    start: Instant,
    run: impl FnOnce(&Config, Value) -> Envelope,
) -> Envelope {
    let found = (|| {
        let journal = config
            .journal
            .as_ref()
            .ok_or_else(ToolError::no_journal_for_key)?;
        let idem = idem(journal, keyed)?;
        let held = journal.lock().map_err(|e| ToolError::journal_io(&e))?;
        recover(&held, roots, config)?;
        let found = made_with(&held, &idem)?;
        Ok::<_, ToolError>((idem, found))
    })();
    let idem = match found {
        Ok((_, Some(record))) => return repeat(&record, keyed, config, echo, start),
        Ok((idem, None)) => idem,
        Err(err) => return err.into_envelope(elapsed_ms(start), echo, None),
    };
    let keyed_config = Config {
        idempotency: Some(idem.clone()),
        ..config.clone()
    };
    let envelope = run(&keyed_config, echo.clone());
    let recorded = envelope
        .data
        .as_ref()
        .is_some_and(|d| d.change_id.is_some());
    if recorded {
        return envelope;
    }
    // It failed, or found nothing to change: a twin may have committed it
    // meanwhile, which then answers (its change is this call's).
    let journal = config.journal.as_ref().expect("looked up above");
    match journal.lock().map(|held| made_with(&held, &idem)) {
        Ok(Ok(Some(record))) => repeat(&record, keyed, config, echo, start),
        _ => envelope,
    }
}

/// The key and arguments of `keyed` as the journal keeps them.
fn idem(journal: &Journal, keyed: &Keyed) -> Result<Idem, ToolError> {
    let key = journal.key().map_err(|e| ToolError::journal_io(&e))?;
    Ok(Idem {
        key: key.digest(keyed.key.as_bytes()).hex(),
        args: key.digest(&keyed.asked).hex(),
    })
}

/// The change made with `idem`'s key and still in the journal (the
/// latest, if a voided one was tried again), under the lock `held`.
pub(super) fn made_with(held: &Held<'_>, idem: &Idem) -> Result<Option<Record>, ToolError> {
    let mut found: Option<Record> = None;
    held.journal()
        .scan(|_, record| {
            let Some(record) = record else {
                return Ok(true);
            };
            if record.kind == Kind::Void && found.as_ref().map(|f| f.seq) == record.of {
                found = None;
            } else if record.idem.as_ref().is_some_and(|i| i.key == idem.key) {
                found = Some(record);
            }
            Ok(true)
        })
        .map_err(|e| ToolError::journal_io(&e))?;
    Ok(found)
}

/// Inside a commit, under the lock: refuse to record a change whose key a
/// record already has (a twin of the call committed it meanwhile, or the
/// key came with other arguments).
pub(super) fn check(held: &Held<'_>, config: &Config) -> Result<(), ToolError> {
    let Some(idem) = &config.idempotency else {
        return Ok(());
    };
    match made_with(held, idem)? {
        None => Ok(()),
        Some(record) if record.idem.as_ref() == Some(idem) => {
            Err(ToolError::key_committed(&record.id))
        }
        Some(record) => Err(ToolError::key_reused(&record.id)),
    }
}

/// The answer to a repeat of the change `record` made, or the refusal of
/// its key with other arguments.
fn repeat(
    record: &Record,
    keyed: &Keyed,
    config: &Config,
    echo: Value,
    start: Instant,
) -> Envelope {
    let time_ms = elapsed_ms(start);
    let same = config
        .journal
        .as_ref()
        .and_then(|journal| idem(journal, keyed).ok())
        .is_some_and(|idem| record.idem.as_ref() == Some(&idem));
    if !same {
        return ToolError::key_reused(&record.id).into_envelope(time_ms, echo, None);
    }
    let operation = match (record.kind, record.files.as_slice()) {
        (Kind::Write, [file]) => match file.op {
            Op::Create => Operation::Create,
            Op::Update => Operation::Update,
            Op::Delete => Operation::Delete,
        },
        _ => Operation::Many,
    };
    let files: Vec<String> = record
        .files
        .iter()
        .map(|f| format!("{} ({})", f.path, op_name(f.op)))
        .collect();
    let text = format!(
        "Already done: this idempotency_key's request was applied as {}: {}. This repeat changed \
         nothing (view a file to see it as it is now).",
        record.id,
        files.join(", ")
    );
    let path_resolved = match record.files.as_slice() {
        [file] => Some(file.path.clone()),
        _ => None,
    };
    recorded(operation, &record.id, text, time_ms, echo, path_resolved)
}

/// How the answer names what a change did to a file.
fn op_name(op: Op) -> &'static str {
    match op {
        Op::Create => "created",
        Op::Update => "updated",
        Op::Delete => "deleted",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use write_tool_wire::envelope::Status;

    use super::*;
    use crate::journal::Kind;
    use crate::pipeline::testing::journaled;

    fn call(roots: &Roots, config: &Config, args: Value) -> Envelope {
        super::super::call(roots, args.to_string(), config)
    }

    /// The records of the journal's log, oldest first.
    fn records(config: &Config) -> Vec<Record> {
        let mut all = Vec::new();
        let journal = config.journal.as_ref().unwrap();
        journal
            .scan(|_, record| {
                all.extend(record);
                Ok(true)
            })
            .unwrap();
        all
    }

    /// A repeat of a write and of an edit is answered from the first's
    /// record: its change id, nothing written, no record added — where a
    /// second run of the edit would have found its old text gone.
    #[test]
    fn a_repeat_answers_the_first_change_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, config) = journaled(dir.path(), 1000);
        let file = dir.path().join("root/a.txt");
        let write = json!({"path": "a.txt", "content": "one\ntwo\n", "idempotency_key": "w-1"});
        let first = call(&roots, &config, write.clone());
        assert_eq!(first.status, Status::Success, "{}", first.text);
        let id = first.data.as_ref().unwrap().change_id.clone().unwrap();
        std::fs::write(&file, "changed by hand\n").unwrap();
        let again = call(&roots, &config, write);
        assert_eq!(again.status, Status::Success, "{}", again.text);
        assert_eq!(
            again.data.as_ref().unwrap().change_id.as_deref(),
            Some(&*id)
        );
        assert!(again.text.contains("Already done"), "{}", again.text);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "changed by hand\n");
        std::fs::write(&file, "one\ntwo\n").unwrap();
        let edit = json!({"name": "Edit", "arguments": {"file_path": "a.txt",
            "old_string": "two", "new_string": "three", "idempotency_key": "e-1"}});
        let first = call(&roots, &config, edit.clone());
        assert_eq!(first.status, Status::Success, "{}", first.text);
        let count = records(&config).len();
        let again = call(&roots, &config, edit);
        assert_eq!(again.status, Status::Success, "{}", again.text);
        assert_eq!(
            again.data.as_ref().unwrap().change_id,
            first.data.unwrap().change_id
        );
        assert_eq!(records(&config).len(), count, "a repeat adds no record");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "one\nthree\n");
    }

    /// The key with other arguments is refused and changes nothing; the
    /// same arguments in another order, or asking another form of answer,
    /// are a repeat.
    #[test]
    fn a_key_with_other_arguments_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, config) = journaled(dir.path(), 1000);
        let file = dir.path().join("root/a.txt");
        let first = call(
            &roots,
            &config,
            json!({"path": "a.txt", "content": "one\n", "idempotency_key": "k"}),
        );
        assert_eq!(first.status, Status::Success);
        let count = records(&config).len();
        let other = call(
            &roots,
            &config,
            json!({"path": "a.txt", "content": "two\n", "idempotency_key": "k"}),
        );
        assert_eq!(other.status, Status::Error);
        assert_eq!(
            other.error.as_ref().unwrap().code,
            write_tool_wire::ErrorCode::Conflict
        );
        assert!(
            other.text.contains("a key names one request"),
            "{}",
            other.text
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "one\n");
        assert_eq!(records(&config).len(), count);
        let reordered = call(
            &roots,
            &config,
            json!({"envelope": "full", "content": "one\n", "idempotency_key": "k", "path": "a.txt"}),
        );
        assert!(
            reordered.text.contains("Already done"),
            "{}",
            reordered.text
        );
    }

    /// A dry run with a key is a dry run: nothing recorded, and the
    /// change it previews is still made by the key's first real call.
    #[test]
    fn a_dry_run_takes_no_key() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, config) = journaled(dir.path(), 1000);
        let dry = call(
            &roots,
            &config,
            json!({"path": "a.txt", "content": "one\n", "dry_run": true, "idempotency_key": "k"}),
        );
        assert_ne!(dry.status, Status::Error, "{}", dry.text);
        assert!(records(&config).is_empty());
        let real = call(
            &roots,
            &config,
            json!({"path": "a.txt", "content": "one\n", "idempotency_key": "k"}),
        );
        assert!(!real.text.contains("Already done"), "{}", real.text);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("root/a.txt")).unwrap(),
            "one\n"
        );
    }

    /// Without a journal a key cannot be kept: refused, nothing written.
    #[test]
    fn a_key_without_a_journal_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, mut config) = journaled(dir.path(), 1000);
        config.journal = None;
        let env = call(
            &roots,
            &config,
            json!({"path": "a.txt", "content": "one\n", "idempotency_key": "k"}),
        );
        assert_eq!(env.status, Status::Error);
        assert!(env.text.contains("keeps no journal"), "{}", env.text);
        assert!(!dir.path().join("root/a.txt").exists());
    }

    /// A twin that commits while the call does its work: the call's commit
    /// finds the key taken, writes nothing, and answers the twin's change.
    /// The twin runs inside the call, after its parse and before its
    /// prepare; the files are then put back as they were, so that the call
    /// plans its change as if it had read them before the twin's commit.
    #[test]
    fn a_twin_committed_meanwhile_answers() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, config) = journaled(dir.path(), 1000);
        let root = dir.path().join("root");
        let args = json!({"writes": [{"path": "a.txt", "content": "1\n"}, {"path": "b.txt", "content": "2\n"}],
            "idempotency_key": "twin"});
        let parsed = crate::params::parse_any(&args.to_string());
        let keyed = parsed.keyed.clone().unwrap();
        let request = parsed.call.unwrap();
        let mut twin = None;
        let env = answer(
            &roots,
            &keyed,
            parsed.echo,
            &config,
            Instant::now(),
            |keyed_config, echo| {
                twin = Some(call(&roots, &config, args.clone()));
                std::fs::remove_file(root.join("a.txt")).unwrap();
                std::fs::remove_file(root.join("b.txt")).unwrap();
                super::super::dispatch(&roots, request, echo, keyed_config, Instant::now())
            },
        );
        let twin = twin.unwrap();
        assert_eq!(twin.status, Status::Success, "{}", twin.text);
        assert!(!twin.text.contains("Already done"), "{}", twin.text);
        assert_eq!(env.status, Status::Success, "{}", env.text);
        assert!(env.text.contains("Already done"), "{}", env.text);
        assert_eq!(env.data.unwrap().change_id, twin.data.unwrap().change_id);
        let changes = records(&config)
            .iter()
            .filter(|r| r.kind == Kind::Many)
            .count();
        assert_eq!(changes, 1, "the change was made once");
        assert!(
            !root.join("a.txt").exists() && !root.join("b.txt").exists(),
            "the call wrote nothing"
        );
    }

    /// The commit's own look: a key a record has, with the same arguments
    /// or others, is not recorded again.
    #[test]
    fn the_commit_refuses_a_key_a_record_has() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, config) = journaled(dir.path(), 1000);
        let env = call(
            &roots,
            &config,
            json!({"path": "a.txt", "content": "1\n", "idempotency_key": "c"}),
        );
        let recorded = records(&config).pop().unwrap().idem.unwrap();
        let journal = config.journal.as_ref().unwrap();
        let mut keyed = Config {
            idempotency: Some(recorded.clone()),
            ..config.clone()
        };
        let err = check(&journal.lock().unwrap(), &keyed).unwrap_err();
        assert!(err.message().contains("committed as"), "{err}");
        keyed.idempotency = Some(Idem {
            args: "other".into(),
            ..recorded
        });
        let err = check(&journal.lock().unwrap(), &keyed).unwrap_err();
        assert!(err.message().contains("a key names one request"), "{err}");
        keyed.idempotency = Some(Idem {
            key: "fresh".into(),
            args: "x".into(),
        });
        assert!(check(&journal.lock().unwrap(), &keyed).is_ok());
        assert!(env.data.unwrap().change_id.is_some());
    }

    /// A change recovery voided (its writer died before the commit point
    /// could be finished) does not hold its key: the call is made again.
    #[test]
    fn a_voided_change_frees_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, config) = journaled(dir.path(), 1000);
        let args = json!({"path": "a.txt", "content": "one\n", "idempotency_key": "v"});
        assert_eq!(call(&roots, &config, args.clone()).status, Status::Success);
        let journal = config.journal.as_ref().unwrap();
        let held = journal.lock().unwrap();
        let seq = held.seq().unwrap();
        let mut void = Record::new(Kind::Void);
        void.of = Some(seq);
        held.append(void, false).unwrap();
        drop(held);
        std::fs::remove_file(dir.path().join("root/a.txt")).unwrap();
        let again = call(&roots, &config, args);
        assert_eq!(again.status, Status::Success, "{}", again.text);
        assert!(!again.text.contains("Already done"), "{}", again.text);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("root/a.txt")).unwrap(),
            "one\n"
        );
    }
}
