//! The journal while a writer holds its lock: the log's end, appends, and
//! the saved contents.

use std::cell::{Cell, OnceCell, RefCell};
use std::io;

use super::{
    Digest, GENESIS, Head, Journal, LOCK, LOG, MAX_RECORD_BYTES, Mark, OBJECTS, Record, chain,
    from_json, id_of, now_ms,
};
use crate::fs::Dir;
use crate::fs::sys::File;

/// The journal, locked by this writer: what must happen in the order of
/// the changes happens through it. Unlocked when dropped.
#[derive(Debug)]
pub struct Held<'a> {
    pub(super) journal: &'a Journal,
    /// The log, opened for reading and appending once per hold.
    log: OnceCell<File>,
    /// The pending file, opened once per hold.
    pub(super) pending: OnceCell<File>,
    /// The last record and its hash, and where the complete lines end:
    /// read once per hold, then kept up to date by `append`.
    tail: RefCell<Option<Tail>>,
    /// What `pending` holds, read once per hold.
    pub(super) mark: RefCell<Option<Mark>>,
    /// The length of the pending file.
    pub(super) mark_len: Cell<u64>,
}

/// The end of the log.
#[derive(Debug, Clone)]
struct Tail {
    /// The last record's seq (0: there is none), the SHA-256 of its line
    /// (what the next record chains to) and the journal's size after it.
    seq: u64,
    hash: String,
    total: u64,
    /// Where the last record's line starts.
    start: u64,
    /// Where its complete lines end.
    end: u64,
    /// The log's length: more than `end` where room was written ahead
    /// (zeros) or a crash cut a line short.
    len: u64,
    /// What lies between `end` and `len` is all zeros: room an append
    /// writes into without the file growing.
    room: bool,
}

/// The room written ahead at the log's end, in zeros: an append that
/// does not fit in it writes its line and zeros to the next multiple of
/// this.
const ROOM: u64 = 16 << 10;

/// Bytes of `log` first read back to find its last line; doubled while
/// no line is found, up to the longest record.
const TAIL_CHUNK: u64 = 4 << 10;

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let _ = self.journal.dir().unlink_at(LOCK);
    }
}

impl<'a> Held<'a> {
    pub(super) fn new(journal: &'a Journal) -> Held<'a> {
        Held {
            journal,
            log: OnceCell::new(),
            pending: OnceCell::new(),
            tail: RefCell::new(None),
            mark: RefCell::new(None),
            mark_len: Cell::new(0),
        }
    }

    /// The journal.
    pub fn journal(&self) -> &Journal {
        self.journal
    }

    /// The log, opened (created if missing) for reading and appending.
    fn log(&self) -> io::Result<&File> {
        if let Some(file) = self.log.get() {
            return Ok(file);
        }
        let file = self.journal.dir().open_write_at(LOG, true)?;
        Ok(self.log.get_or_init(|| file))
    }

    /// The end of the log, found once per hold: from the mark, where the
    /// line it says ends the log's records is there with the head's hash
    /// and only room follows it, else from the log's last whole line.
    fn tail(&self) -> io::Result<Tail> {
        if let Some(tail) = self.tail.borrow().as_ref() {
            return Ok(tail.clone());
        }
        let mark = self.mark()?;
        let file = self.log()?;
        let len = file.stat()?.len;
        let tail = match at_mark(file, len, &mark)? {
            Some(tail) => tail,
            None => {
                let (line, start, end) = last_whole_line(file, len)?;
                let room = file.read_at(end, len - end)?.iter().all(|&b| b == 0);
                let (seq, hash, total) = match line {
                    None => (0, GENESIS.to_owned(), 0),
                    Some(line) => {
                        let record: Record = from_json(&line)?;
                        // The head's own record, changed since it was
                        // written: the next one chains to it as written,
                        // so that `verify` finds the change.
                        let hash = match mark.head {
                            Some(head) if head.seq == record.seq => head.hash,
                            _ => chain(&line),
                        };
                        (record.seq, hash, record.total)
                    }
                };
                Tail {
                    seq,
                    hash,
                    total,
                    start,
                    end,
                    len,
                    room,
                }
            }
        };
        *self.tail.borrow_mut() = Some(tail.clone());
        Ok(tail)
    }

    /// The last complete record, and its hash: what the next one chains
    /// to. Read from the log: most callers need only [`Held::seq`] and
    /// [`Held::total`], which do not read it.
    pub fn last(&self) -> io::Result<Option<(Record, String)>> {
        let len = self.tail()?.len;
        match last_whole_line(self.log()?, len)?.0 {
            None => Ok(None),
            Some(line) => Ok(Some((from_json(&line)?, chain(&line)))),
        }
    }

    /// The last record's seq (0: the log holds none).
    pub fn seq(&self) -> io::Result<u64> {
        Ok(self.tail()?.seq)
    }

    /// The journal's size after its last record.
    pub fn total(&self) -> io::Result<u64> {
        Ok(self.tail()?.total)
    }

    /// The head: the last record's seq and hash.
    pub fn head(&self) -> io::Result<Option<Head>> {
        let tail = self.tail()?;
        Ok((tail.seq > 0).then_some(Head {
            seq: tail.seq,
            hash: tail.hash,
        }))
    }

    /// Where the last record's line starts and where the log's complete
    /// lines end, and the journal's size: what the mark keeps beside the
    /// head.
    pub(super) fn ends(&self) -> io::Result<(u64, u64, u64)> {
        let tail = self.tail()?;
        Ok((tail.start, tail.end, tail.total))
    }

    /// Append `record`, numbered and chained after the last one, with the
    /// journal's size; synced unless `sync` is false. Returns it as
    /// written. A record longer than [`MAX_RECORD_BYTES`] is refused
    /// (`ArgumentListTooLong`: too much for one record, which a file
    /// system that is full is not).
    pub fn append(&self, mut record: Record, sync: bool) -> io::Result<Record> {
        let tail = self.tail()?;
        let (seq, prev, total) = (tail.seq + 1, tail.hash.clone(), tail.total);
        record.seq = seq;
        record.id = id_of(seq);
        record.time_ms = now_ms();
        record.prev = prev;
        // The line's own length counts in the total, and the total's
        // digits in the line: serialized until the two agree, from the
        // length of the line before it (most records are about as long).
        let mut guess = (tail.end - tail.start).saturating_sub(1);
        let mut line = Vec::new();
        for _ in 0..4 {
            if record.kind != super::Kind::Gc {
                record.total = total + record.bytes + guess + 1;
            }
            line = serde_json::to_vec(&record)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            // Four passes at most: a total one digit off at a power of
            // ten would do no harm.
            if record.kind == super::Kind::Gc || line.len() as u64 == guess {
                break;
            }
            guess = line.len() as u64;
        }
        if line.len() > MAX_RECORD_BYTES {
            return Err(io::Error::from(io::ErrorKind::ArgumentListTooLong));
        }
        let hash = chain(&line);
        line.push(b'\n');
        let file = self.log()?;
        let end = tail.end + line.len() as u64;
        let mut len = tail.len;
        if !tail.room {
            // A line a crash cut short goes.
            file.set_len(tail.end)?;
            len = tail.end;
        }
        if end > len {
            // Room for the records after this one, written now: their
            // syncs then write into blocks the file has, with no metadata
            // to commit (BENCHMARKS.md#the-floor).
            len = end.next_multiple_of(ROOM);
            line.resize(usize::try_from(len - tail.end).unwrap_or(usize::MAX), 0);
        }
        file.write_at(&line, tail.end)?;
        if sync {
            file.sync_data()?;
        }
        *self.tail.borrow_mut() = Some(Tail {
            seq,
            hash,
            total: record.total,
            start: tail.end,
            end,
            len,
            room: true,
        });
        // The record is durable either way; a head not moved now is moved
        // by the next append or commit.
        let _ = self.head_moved();
        Ok(record)
    }

    /// Save the file `name` of `dir` as the content `digest`, by linking
    /// it into `objects/`; where that fails (another file system, a host
    /// without links), by writing `bytes`, or the file's bytes read now.
    /// Returns the bytes the journal grew by (0 when the content was there
    /// already).
    pub fn save(
        &self,
        dir: &Dir,
        name: &str,
        digest: Digest,
        size: u64,
        bytes: Option<&[u8]>,
        sync: bool,
    ) -> io::Result<u64> {
        let object = format!("{OBJECTS}/{}", digest.hex());
        let link = || dir.link_into(name, self.journal.dir(), &object);
        let linked = match link() {
            // The first content saved: the directory is made now.
            Err(e) if e.kind() == io::ErrorKind::NotFound && self.objects_missing() => {
                self.make_objects()?;
                link()
            }
            other => other,
        };
        match linked {
            Ok(()) => return Ok(on_disk(size)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(0),
            Err(_) => {}
        }
        let read;
        let bytes = match bytes {
            Some(bytes) => bytes,
            None => {
                let file = dir.open_read_at(name)?;
                read = file.read_all(size)?;
                &read
            }
        };
        self.put(&object, bytes, sync)?;
        Ok(on_disk(bytes.len() as u64))
    }

    /// Save `bytes` as the content `digest` by writing a copy, never by a
    /// link: what a symbolic link's target says (a link linked into
    /// `objects/` would be a link there, not the text). Returns the bytes
    /// the journal grew by, as [`Held::save`] does.
    pub fn save_copy(&self, digest: Digest, bytes: &[u8], sync: bool) -> io::Result<u64> {
        let object = format!("{OBJECTS}/{}", digest.hex());
        if self.journal.dir().stat_at(&object).is_ok() {
            return Ok(0);
        }
        self.put(&object, bytes, sync)?;
        Ok(on_disk(bytes.len() as u64))
    }

    fn objects_missing(&self) -> bool {
        self.journal
            .dir()
            .stat_at(OBJECTS)
            .is_err_and(|e| e.kind() == io::ErrorKind::NotFound)
    }

    fn make_objects(&self) -> io::Result<()> {
        match self.journal.dir().create_dir_at(OBJECTS) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(e),
            _ => Ok(()),
        }
    }

    fn put(&self, object: &str, bytes: &[u8], sync: bool) -> io::Result<()> {
        self.make_objects()?;
        let dir = self.journal.dir();
        let temp = format!("{object}.tmp");
        let _ = dir.unlink_at(&temp);
        let file = dir.create_new_at(&temp)?;
        let written = file
            .write_all(bytes)
            .and_then(|()| if sync { file.sync() } else { Ok(()) });
        drop(file);
        match written.and_then(|()| dir.rename_at(&temp, object)) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = dir.unlink_at(&temp);
                Err(e)
            }
        }
    }

    /// Remove the saved contents whose digest `keep` does not accept;
    /// returns the bytes freed.
    pub fn prune_objects(&self, keep: impl Fn(&str) -> bool) -> io::Result<u64> {
        let objects = match self.journal.dir().open_dir_at(OBJECTS) {
            Ok(dir) => dir,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(e),
        };
        let mut freed = 0;
        for name in objects.names(|n| !keep(n))? {
            let len = objects.stat_at(&name).map(|s| s.len).unwrap_or(0);
            if objects.unlink_at(&name).is_ok() {
                freed += len;
            }
        }
        Ok(freed)
    }

    /// Replace the log with its lines from the `skip`-th on (counting
    /// complete lines from 0), copied line by line into a new file, synced
    /// and renamed over it.
    pub fn drop_first_lines(&mut self, skip: usize) -> io::Result<()> {
        let temp = ".log.tmp";
        let journal = self.journal;
        let dir = journal.dir();
        let _ = dir.unlink_at(temp);
        let file = dir.create_new_at(temp)?;
        let mut at = 0u64;
        let mut n = 0usize;
        let mut buffer: Vec<u8> = Vec::new();
        let copied = journal.scan(|line, _| {
            n += 1;
            if n > skip {
                buffer.extend_from_slice(line);
                buffer.push(b'\n');
                if buffer.len() >= 1 << 20 {
                    file.write_at(&buffer, at)?;
                    at += buffer.len() as u64;
                    buffer.clear();
                }
            }
            Ok(true)
        });
        let written = copied
            .and_then(|()| file.write_at(&buffer, at))
            .and_then(|()| file.sync());
        drop(file);
        if let Err(e) = written.and_then(|()| dir.rename_at(temp, LOG)) {
            let _ = dir.unlink_at(temp);
            return Err(e);
        }
        // The handle and the end read before are the old file's.
        self.log.take();
        *self.tail.get_mut() = None;
        dir.sync()
    }
}

/// What a saved content of `size` bytes takes on disk: whole blocks of
/// the size most file systems allocate, so that the journal's size bound
/// holds for the disk it uses, small contents included.
pub fn on_disk(size: u64) -> u64 {
    const BLOCK: u64 = 4096;
    size.div_ceil(BLOCK) * BLOCK
}

/// The log's end as the mark says it is, if it still is: the line from
/// `start` to `end` is there whole, with the head's hash, and only room
/// (zeros) follows it up to `len`. A mark older than the log (a record
/// appended without it, a log rewritten by the bounds since, a power loss
/// that kept one and not the other) fails one of these.
fn at_mark(file: &File, len: u64, mark: &Mark) -> io::Result<Option<Tail>> {
    let (Some(head), Some(start), Some(end), Some(total)) =
        (&mark.head, mark.start, mark.end, mark.total)
    else {
        return Ok(None);
    };
    if start >= end || end > len || len - start > MAX_RECORD_BYTES as u64 + 2 * ROOM {
        return Ok(None);
    }
    let bytes = file.read_at(start, len - start)?;
    let line_len = usize::try_from(end - start).unwrap_or(usize::MAX);
    let whole = bytes.len() as u64 == len - start
        && bytes[line_len - 1] == b'\n'
        && chain(&bytes[..line_len - 1]) == head.hash
        && bytes[line_len..].iter().all(|&b| b == 0);
    Ok(whole.then(|| Tail {
        seq: head.seq,
        hash: head.hash.clone(),
        total,
        start,
        end,
        len,
        room: true,
    }))
}

/// The last whole line of the log (`len` bytes), where it starts and
/// where the complete lines end. A line with a zero byte in it is not
/// whole: a record written into room whose first page a power loss kept
/// out (its sync had not returned, so its change was never made).
fn last_whole_line(file: &File, len: u64) -> io::Result<(Option<Vec<u8>>, u64, u64)> {
    let mut upto = len;
    loop {
        let (line, end) = last_line(file, upto)?;
        match line {
            Some(line) if line.contains(&0) => upto = end - line.len() as u64 - 1,
            Some(line) => {
                let start = end - line.len() as u64 - 1;
                return Ok((Some(line), start, end));
            }
            None => return Ok((None, 0, end)),
        }
    }
}

/// The last complete line of the log (`len` bytes) and where the complete
/// lines end.
fn last_line(file: &File, len: u64) -> io::Result<(Option<Vec<u8>>, u64)> {
    // `buf` holds the log's bytes from `from` to its end.
    let mut from = len;
    let mut buf: Vec<u8> = Vec::new();
    // Most records are a few hundred bytes; one of many files is longer.
    let mut chunk_len = TAIL_CHUNK;
    loop {
        let start = from.saturating_sub(chunk_len);
        chunk_len = (chunk_len * 2).min(MAX_RECORD_BYTES as u64 + 1);
        let mut chunk = file.read_at(start, from - start)?;
        chunk.extend_from_slice(&buf);
        buf = chunk;
        from = start;
        if buf.len() > 2 * MAX_RECORD_BYTES + 2 {
            // No record is this long: the log's end is not one.
            return Err(io::Error::from(io::ErrorKind::InvalidData));
        }
        match buf.iter().rposition(|&b| b == b'\n') {
            Some(nl) => {
                let end = from + nl as u64 + 1;
                match buf[..nl].iter().rposition(|&b| b == b'\n') {
                    Some(begin) => return Ok((Some(buf[begin + 1..nl].to_vec()), end)),
                    None if from == 0 => return Ok((Some(buf[..nl].to_vec()), end)),
                    None => {}
                }
            }
            None if from == 0 => return Ok((None, 0)),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes with a journal in `dir`, and the journal's `verify`.
    fn journaled(dir: &std::path::Path) -> (crate::Roots, crate::Config) {
        crate::pipeline::testing::journaled(dir, 1000)
    }

    fn write(roots: &crate::Roots, config: &crate::Config, content: &str) {
        let request = serde_json::json!({"path": "a.txt", "content": content}).to_string();
        let envelope = crate::pipeline::call(roots, request, config);
        assert!(envelope.error.is_none(), "{}", envelope.text);
    }

    fn verified(roots: &crate::Roots, config: &crate::Config) -> serde_json::Value {
        let request = r#"{"journal": "verify"}"#.to_owned();
        let envelope = crate::pipeline::call(roots, request, config);
        let answer: serde_json::Value = serde_json::from_str(&envelope.text).unwrap();
        answer["verify"].clone()
    }

    /// A writer reads nothing of the log when it ends where the mark
    /// says: a last record rewritten in place at the same length is
    /// chained to as it was written, and `verify` finds it.
    #[test]
    fn a_record_rewritten_in_place_is_chained_to_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, config) = journaled(dir.path());
        write(&roots, &config, "one\n");
        write(&roots, &config, "two\n");
        let log = dir.path().join("journal").join(LOG);
        let text = std::fs::read_to_string(&log).unwrap();
        let at = text.rfind("\"time_ms\":").unwrap() + "\"time_ms\":".len();
        let mut bytes = text.into_bytes();
        bytes[at] = if bytes[at] == b'1' { b'2' } else { b'1' };
        std::fs::write(&log, bytes).unwrap();
        write(&roots, &config, "three\n");
        let verify = verified(&roots, &config);
        assert_eq!(verify["ok"], false, "{verify}");
        assert_eq!(verify["records"], 3, "{verify}");
    }

    /// The bytes after the log's last newline.
    fn after_last_line(log: &std::path::Path) -> Vec<u8> {
        let bytes = std::fs::read(log).unwrap();
        let end = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        bytes[end..].to_vec()
    }

    /// The log keeps room at its end, zeros written ahead: the next
    /// records are written into it without the file growing, and a line a
    /// crash cut short in it is cleared by the next append.
    #[test]
    fn records_are_written_into_room_kept_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, config) = journaled(dir.path());
        let log = dir.path().join("journal").join(LOG);
        write(&roots, &config, "one\n");
        let len = std::fs::metadata(&log).unwrap().len();
        assert_eq!(len % ROOM, 0, "the room reaches a multiple of {ROOM}");
        let room = after_last_line(&log);
        assert!(!room.is_empty() && room.iter().all(|&b| b == 0));
        write(&roots, &config, "two\n");
        assert_eq!(
            std::fs::metadata(&log).unwrap().len(),
            len,
            "written into the room"
        );
        let pending = std::fs::read(dir.path().join("journal").join(super::super::PENDING));
        assert!(
            pending.unwrap().ends_with(b" "),
            "the cleared mark is padded, not cut"
        );
        // A line a crash cut short, at the complete lines' end, longer
        // than the record written over its start.
        let end = len - after_last_line(&log).len() as u64;
        let file = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
        let cut = format!("{{\"seq\":3,\"id\":\"{}", "x".repeat(2000));
        std::os::unix::fs::FileExt::write_all_at(&file, cut.as_bytes(), end).unwrap();
        drop(file);
        write(&roots, &config, "three\n");
        assert!(
            after_last_line(&log).iter().all(|&b| b == 0),
            "the cut line is gone"
        );
        let verify = verified(&roots, &config);
        assert_eq!(verify["ok"], true, "{verify}");
        assert_eq!(verify["records"], 3, "{verify}");
        // Each record's total is the one before it, what it saved, and its
        // own line: the size the mark carries from hold to hold.
        let text = std::fs::read_to_string(&log).unwrap();
        let mut total = 0;
        for line in text.trim_end_matches('\0').lines() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            total += record["bytes"].as_u64().unwrap() + line.len() as u64 + 1;
            assert_eq!(record["total"], total, "{line}");
        }
    }

    /// A mark much shorter than the one before it (after a change of
    /// many files) cuts the file rather than pad it.
    #[test]
    fn a_much_shorter_mark_cuts_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, config) = journaled(dir.path());
        let writes: Vec<_> = (0..60)
            .map(|i| serde_json::json!({"path": format!("{i:0>100}.txt"), "content": "x\n"}))
            .collect();
        let request = serde_json::json!({ "writes": writes }).to_string();
        let envelope = crate::pipeline::call(&roots, request, &config);
        assert!(envelope.error.is_none(), "{}", envelope.text);
        let pending = dir.path().join("journal").join(super::super::PENDING);
        let len = std::fs::metadata(&pending).unwrap().len();
        assert!(len < 1024, "the mark of 60 files is gone: {len} bytes");
    }

    /// A mark written before the bounds rewrote the log (a writer killed
    /// after `journal gc`'s rewrite and before its mark moved, or a power
    /// loss that kept the log and not the mark) names a line that is not
    /// there any more: the next record follows the log's real last one.
    #[test]
    fn a_mark_from_before_the_bounds_rewrote_the_log_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, config) = crate::pipeline::testing::journaled(dir.path(), 2);
        for i in 0..5 {
            write(&roots, &config, &format!("{i}\n"));
        }
        let pending = dir.path().join("journal").join(super::super::PENDING);
        let old_mark = std::fs::read(&pending).unwrap();
        let gc = crate::pipeline::call(&roots, r#"{"journal": "gc"}"#.to_owned(), &config);
        assert!(gc.error.is_none(), "{}", gc.text);
        std::fs::write(&pending, old_mark).unwrap();
        write(&roots, &config, "after\n");
        let verify = verified(&roots, &config);
        assert_eq!(verify["ok"], true, "{verify}");
        assert_eq!(verify["head"]["seq"], 7, "the gc record is 6: {verify}");
    }

    /// A last record whose bytes a power loss kept out (zeros, or its
    /// first page zeros and the rest there) while the mark naming it was
    /// kept: it is not a record, and the next one takes its place.
    #[test]
    fn a_record_a_power_loss_kept_out_is_written_over() {
        for kept in [0, 40] {
            let dir = tempfile::tempdir().unwrap();
            let (roots, config) = journaled(dir.path());
            write(&roots, &config, "one\n");
            write(&roots, &config, "two\n");
            let log = dir.path().join("journal").join(LOG);
            let mut bytes = std::fs::read(&log).unwrap();
            let end = bytes.iter().rposition(|&b| b == b'\n').unwrap();
            let start = bytes[..end].iter().rposition(|&b| b == b'\n').unwrap() + 1;
            // The line's bytes gone but its last `kept` and the newline.
            let gone = if kept == 0 { end + 1 } else { end - kept };
            bytes[start..gone].fill(0);
            std::fs::write(&log, bytes).unwrap();
            write(&roots, &config, "three\n");
            let verify = verified(&roots, &config);
            assert_eq!(verify["ok"], true, "kept {kept}: {verify}");
            assert_eq!(verify["records"], 2, "kept {kept}: {verify}");
            assert!(after_last_line(&log).iter().all(|&b| b == 0), "kept {kept}");
        }
    }

    /// A mark older than the log (not synced, it can be after a power
    /// loss) names an end the log has passed: the writer reads the log's
    /// last record and chains to it.
    #[test]
    fn a_mark_behind_the_log_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, config) = journaled(dir.path());
        write(&roots, &config, "one\n");
        let pending = dir.path().join("journal").join(super::super::PENDING);
        let old_mark = std::fs::read(&pending).unwrap();
        write(&roots, &config, "two\n");
        std::fs::write(&pending, old_mark).unwrap();
        write(&roots, &config, "three\n");
        let verify = verified(&roots, &config);
        assert_eq!(verify["ok"], true, "{verify}");
        assert_eq!(verify["records"], 3, "{verify}");
        assert_eq!(verify["head"]["seq"], 3, "{verify}");
    }

    /// The last complete line is found whatever its length against the
    /// chunks read back, and a line a crash cut short is not one.
    #[test]
    fn the_last_line_is_found_across_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let root = Dir::from_path(dir.path());
        let long = |n: usize| "x".repeat(n);
        for (lines, cut) in [
            (vec![long(10)], ""),
            (vec![long(10), long(20)], ""),
            (vec![long(10), long(5000)], ""),
            (vec![long(5000), long(300_000)], "{\"seq\":"),
            (vec![long(2_000_000)], "partial"),
            (vec![], "partial"),
        ] {
            let mut log = String::new();
            for line in &lines {
                log.push_str(line);
                log.push('\n');
            }
            let end = log.len() as u64;
            log.push_str(cut);
            std::fs::write(dir.path().join(LOG), &log).unwrap();
            let file = root.open_read_at(LOG).unwrap();
            let (last, at) = last_line(&file, log.len() as u64).unwrap();
            assert_eq!(last.map(|l| l.len()), lines.last().map(String::len));
            assert_eq!(at, end);
        }
    }
}
