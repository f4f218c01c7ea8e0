//! The journal while a writer holds its lock: the log's end, appends, and
//! the saved contents.

use std::cell::{OnceCell, RefCell};
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
}

/// The end of the log.
#[derive(Debug, Clone)]
struct Tail {
    last: Option<(Record, String)>,
    /// Where its complete lines end.
    end: u64,
    /// The log's length: more than `end` after a crash cut a line short.
    len: u64,
}

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

    /// The end of the log, read once.
    fn tail(&self) -> io::Result<Tail> {
        if let Some(tail) = self.tail.borrow().as_ref() {
            return Ok(tail.clone());
        }
        let file = self.log()?;
        let len = file.stat()?.len;
        let (line, end) = last_line(file, len)?;
        let last = match line {
            None => None,
            Some(line) => {
                let record = from_json(&line)?;
                Some((record, chain(&line)))
            }
        };
        let tail = Tail { last, end, len };
        *self.tail.borrow_mut() = Some(tail.clone());
        Ok(tail)
    }

    /// The last complete record, and its hash: what the next one chains
    /// to.
    pub fn last(&self) -> io::Result<Option<(Record, String)>> {
        Ok(self.tail()?.last)
    }

    /// The head: the last record's seq and hash.
    pub fn head(&self) -> io::Result<Option<Head>> {
        Ok(self.last()?.map(|(record, hash)| Head {
            seq: record.seq,
            hash,
        }))
    }

    /// Append `record`, numbered and chained after the last one, with the
    /// journal's size; synced unless `sync` is false. Returns it as
    /// written. A record longer than [`MAX_RECORD_BYTES`] is refused
    /// (`ArgumentListTooLong`: too much for one record, which a file
    /// system that is full is not).
    pub fn append(&self, mut record: Record, sync: bool) -> io::Result<Record> {
        let tail = self.tail()?;
        let (seq, prev, total) = match &tail.last {
            Some((r, hash)) => (r.seq + 1, hash.clone(), r.total),
            None => (1, GENESIS.to_owned(), 0),
        };
        record.seq = seq;
        record.id = id_of(seq);
        record.time_ms = now_ms();
        record.prev = prev;
        // The line's own length counts in the total: twice, since the
        // total's digits are part of it.
        let mut line = Vec::new();
        for _ in 0..2 {
            record.total = match record.kind {
                super::Kind::Gc => record.total,
                _ => total + record.bytes + line.len() as u64 + 1,
            };
            line = serde_json::to_vec(&record)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        }
        if line.len() > MAX_RECORD_BYTES {
            return Err(io::Error::from(io::ErrorKind::ArgumentListTooLong));
        }
        let hash = chain(&line);
        line.push(b'\n');
        let file = self.log()?;
        // A line cut short by a crash is overwritten.
        file.write_at(&line, tail.end)?;
        let end = tail.end + line.len() as u64;
        if tail.len > end {
            file.set_len(end)?;
        }
        if sync {
            file.sync_data()?;
        }
        *self.tail.borrow_mut() = Some(Tail {
            last: Some((record.clone(), hash)),
            end,
            len: end,
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
