//! The log read line by line, in chunks: the journal's upkeep never holds
//! more of it than one chunk and one record (`docs/contract.md#journal`).

use std::io;

use crate::fs::sys::File;

/// The longest record line: a change of the most files a host allows,
/// each with two paths of the longest length a path may have, fits many
/// times over. A change whose record would be longer is refused, so that
/// no record can make the journal's upkeep need memory out of proportion
/// (`docs/contract.md#journal`).
pub const MAX_RECORD_BYTES: usize = 4 << 20;

/// Bytes read at once.
const CHUNK: u64 = 64 << 10;

/// Hand each complete line of the first `len` bytes of `file` (without
/// its newline, never empty) to `each`, in order, until it returns
/// `false`. A line longer than [`MAX_RECORD_BYTES`] is handed cut to one
/// byte more than that, so that it is seen to be too long without being
/// held whole. What follows the last newline (a line a crash cut short)
/// is not a line.
pub(super) fn lines(
    file: &File,
    len: u64,
    mut each: impl FnMut(&[u8]) -> io::Result<bool>,
) -> io::Result<()> {
    let mut line: Vec<u8> = Vec::new();
    let mut oversized = false;
    let mut at = 0;
    while at < len {
        let chunk = file.read_at(at, CHUNK.min(len - at))?;
        if chunk.is_empty() {
            break;
        }
        at += chunk.len() as u64;
        let mut rest = &chunk[..];
        while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
            if !oversized {
                let room = (MAX_RECORD_BYTES + 1).saturating_sub(line.len());
                line.extend_from_slice(&rest[..nl.min(room)]);
            }
            let keep_going = line.is_empty() || each(&line)?;
            line.clear();
            oversized = false;
            if !keep_going {
                return Ok(());
            }
            rest = &rest[nl + 1..];
        }
        if !oversized {
            let room = (MAX_RECORD_BYTES + 1).saturating_sub(line.len());
            line.extend_from_slice(&rest[..rest.len().min(room)]);
            oversized = line.len() > MAX_RECORD_BYTES;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::Dir;

    fn collect(log: &[u8]) -> Vec<usize> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("log"), log).unwrap();
        let file = Dir::from_path(dir.path()).open_read_at("log").unwrap();
        let mut found = Vec::new();
        lines(&file, log.len() as u64, |line| {
            found.push(line.len());
            Ok(true)
        })
        .unwrap();
        found
    }

    /// Lines across chunk boundaries, a long line cut to one byte past the
    /// bound, and a last line without its newline are each handled.
    #[test]
    fn lines_are_found_across_chunks_and_bounded() {
        let mut log = Vec::new();
        for len in [10, 70_000, 5, 200_000] {
            log.extend(std::iter::repeat_n(b'x', len));
            log.push(b'\n');
        }
        assert_eq!(collect(&log), [10, 70_000, 5, 200_000]);
        let mut long = vec![b'y'; MAX_RECORD_BYTES + 10];
        long.push(b'\n');
        long.extend_from_slice(b"ok\ncut short");
        assert_eq!(collect(&long), [MAX_RECORD_BYTES + 1, 2]);
        assert_eq!(collect(b""), Vec::<usize>::new());
        assert_eq!(collect(b"\n\nz\n"), [1]);
    }
}
