//! Where else the journal can be reached: the mounts of this process
//! (`/proc/self/mountinfo`). A bind mount shows a directory at a second
//! place, and walking up from the journal's own path never finds a root
//! that holds such a second place; walking up from every place a mount
//! shows it at does.

use std::path::{Path, PathBuf};

/// One mount: its device, the directory of that device it shows, and
/// where.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mount {
    device: String,
    shows: PathBuf,
    at: PathBuf,
}

/// The mounts of this process; none where the system does not say.
fn mounts() -> Vec<Mount> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|info| info.lines().filter_map(parse).collect())
        .unwrap_or_default()
}

/// A line of `mountinfo`: `id parent major:minor root point …`.
fn parse(line: &str) -> Option<Mount> {
    let mut fields = line.split(' ').skip(2);
    let device = fields.next()?.to_owned();
    let shows = PathBuf::from(unescape(fields.next()?));
    let at = PathBuf::from(unescape(fields.next()?));
    Some(Mount { device, shows, at })
}

/// `mountinfo` writes a space, tab, newline or backslash in a path as
/// `\` and three octal digits.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) => {
                out.push(d.iter().fold(0u8, |n, b| n.wrapping_mul(8) + (b - b'0')));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The device and the path on it of `path` (a real path): through the
/// mount that holds it, the one mounted last (`max_by_key` keeps the last
/// of equals; `mountinfo` lists in mount order) at the longest prefix.
fn on_device<'m>(mounts: &'m [Mount], path: &Path) -> Option<(&'m str, PathBuf)> {
    let mount = mounts
        .iter()
        .filter(|m| path.starts_with(&m.at))
        .max_by_key(|m| m.at.components().count())?;
    let rest = path.strip_prefix(&mount.at).ok()?;
    Some((&mount.device, mount.shows.join(rest)))
}

/// Every place `path` (a real path) or a part of it is shown at: itself,
/// below each mount of its device that shows a directory above it, and
/// each mount that shows a directory below it (one journal, or its
/// `objects`).
pub(super) fn places(path: &Path) -> Vec<PathBuf> {
    places_among(&mounts(), path)
}

fn places_among(mounts: &[Mount], path: &Path) -> Vec<PathBuf> {
    let mut places = vec![path.to_path_buf()];
    let Some((device, inner)) = on_device(mounts, path) else {
        return places;
    };
    for mount in mounts.iter().filter(|m| m.device == device) {
        let place = match inner.strip_prefix(&mount.shows) {
            Ok(rest) => mount.at.join(rest),
            Err(_) if mount.shows.starts_with(&inner) => mount.at.clone(),
            Err(_) => continue,
        };
        if !places.contains(&place) {
            places.push(place);
        }
    }
    places
}

/// Whether `inner` (a real path) lies in `outer` (a real path) on their
/// device, whatever mount shows either.
pub(super) fn lies_in(inner: &Path, outer: &Path) -> bool {
    let mounts = mounts();
    match (on_device(&mounts, inner), on_device(&mounts, outer)) {
        (Some((a, inner)), Some((b, outer))) => a == b && inner.starts_with(outer),
        _ => inner.starts_with(outer),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_shown_by_a_bind_mount_is_found() {
        let info = "\
1 0 8:1 / / rw - ext4 /dev/sda1 rw
2 1 8:1 /home/u/state /home/u/proj/mnt rw - ext4 /dev/sda1 rw
3 1 0:5 / /tmp rw - tmpfs tmpfs rw
4 1 8:1 /home/u/my\\040dir /srv/x rw - ext4 /dev/sda1 rw
5 1 0:6 / /srv/x rw - tmpfs tmpfs rw
6 1 8:1 /home/u/state/journals/0a1b/objects /home/u/proj/o rw - ext4 /dev/sda1 rw";
        let mounts: Vec<Mount> = info.lines().filter_map(parse).collect();
        assert_eq!(mounts[3].shows, Path::new("/home/u/my dir"));
        let journal = Path::new("/home/u/state/journals");
        // Shown above it, and a part of it shown on its own.
        assert_eq!(
            places_among(&mounts, journal),
            [
                journal,
                Path::new("/home/u/proj/mnt/journals"),
                Path::new("/home/u/proj/o")
            ]
        );
        // Seen from its bind mount, the same file system path.
        assert_eq!(
            on_device(&mounts, Path::new("/home/u/proj/mnt/journals")),
            Some(("8:1", journal.to_path_buf()))
        );
        assert_eq!(
            places_among(&mounts, Path::new("/tmp/j")),
            [Path::new("/tmp/j")]
        );
        // A mount over another at one place shows what was mounted last.
        assert_eq!(
            on_device(&mounts, Path::new("/srv/x/a")),
            Some(("0:6", PathBuf::from("/a")))
        );
    }
}
