//! What a read of the unit search path saw, so that a later read can be
//! skipped when it would see the same (docs/systemd-units.md, "Unit files
//! read again when asked for"): every directory the read listed, with
//! its modification time and a digest of its entries' names and
//! modification times, and every file it read outside those directories.
//! The reader takes each directory's time before listing it and each
//! entry's before reading anything, so a change made during the read
//! shows the next time.
//!
//! A file written since shows as a changed directory time (a new or
//! removed entry, a link replaced) or a changed entry time (an edit in
//! place). Modification times are as coarse as their file system (a
//! clock tick; a second on some, two on FAT): a stamp holding a time
//! close to when it was taken may have missed a second change within the
//! same tick, so it never counts as unchanged ([`PathStamp::settled`]).
//!
//! The stamp keeps a digest per directory rather than each entry's path
//! and time: its size is that of the directories, not of the units
//! (docs/performance.md, "Memory budget").

use serde::{Deserialize, Serialize};

/// How far before the stamp was taken every time it holds must be for
/// the stamp to be trusted: the coarsest timestamps of the file systems
/// a search path is on (FAT keeps two seconds).
pub const SETTLE_US: u64 = 2_000_000;

/// One directory the read listed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DirStamp {
    /// Its path.
    pub path: String,
    /// Its modification time in µs; `None`: it did not exist.
    pub mtime_us: Option<u64>,
    /// [`entries_digest`] of its entries.
    pub entries: u64,
}

/// What one read of the search path saw. See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PathStamp {
    /// The wall clock when the read began, in µs since the epoch; 0 for
    /// no stamp (a load from before stamps, or without them), which is
    /// never settled.
    pub taken_at_us: u64,
    /// Every directory the read listed, in the order it listed them.
    pub dirs: Vec<DirStamp>,
    /// Every file it read outside those directories (a unit file that a
    /// link points to elsewhere, `system.conf`), and its modification
    /// time (`None`: there was none).
    pub files: Vec<(String, Option<u64>)>,
    /// The newest modification time it holds.
    pub newest_us: u64,
    /// Whether the read watched each directory and file before it listed
    /// or read it (the init's `pathstamp::Seen::watched`): every change
    /// since then shows on that watch, so the stamp is trusted with it
    /// however new its times are.
    #[serde(default)]
    pub watched: bool,
}

impl PathStamp {
    /// An empty stamp of a read that began at `taken_at_us`.
    pub fn new(taken_at_us: u64) -> PathStamp {
        PathStamp {
            taken_at_us,
            ..PathStamp::default()
        }
    }

    /// Records a directory listed.
    pub fn add_dir(&mut self, path: &str, mtime_us: Option<u64>, entries: Entries) {
        self.saw(mtime_us);
        self.saw(entries.newest_us);
        self.dirs.push(DirStamp {
            path: path.to_string(),
            mtime_us,
            entries: entries.digest,
        });
    }

    /// Records a file read outside the directories listed.
    pub fn add_file(&mut self, path: &str, mtime_us: Option<u64>) {
        self.saw(mtime_us);
        self.files.push((path.to_string(), mtime_us));
    }

    /// Whether a directory at `path` was listed.
    pub fn has_dir(&self, path: &str) -> bool {
        self.dirs.iter().any(|d| d.path == path)
    }

    /// Whether every time it holds is old enough to trust
    /// ([`SETTLE_US`]): a stamp that is not says "changed" whatever the
    /// times are now.
    pub fn settled(&self) -> bool {
        self.taken_at_us != 0 && self.newest_us.saturating_add(SETTLE_US) <= self.taken_at_us
    }

    fn saw(&mut self, mtime_us: Option<u64>) {
        self.newest_us = self.newest_us.max(mtime_us.unwrap_or(0));
    }
}

/// The entries of one directory, summed up: [`Entries::add`] each in
/// any order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Entries {
    /// The digest of every entry's name and modification time.
    pub digest: u64,
    /// The newest of those times.
    pub newest_us: Option<u64>,
}

impl Entries {
    /// Adds the entry `name` modified at `mtime_us` (`None`: gone, or a
    /// link to nothing). The digest is a sum of each entry's hash, so the
    /// order a listing gives does not matter.
    pub fn add(&mut self, name: &[u8], mtime_us: Option<u64>) {
        self.digest = self.digest.wrapping_add(entry_hash(name, mtime_us));
        self.newest_us = self.newest_us.max(mtime_us);
    }
}

/// FNV-1a of the name, a separator and the time, mixed (splitmix64's
/// finalizer: FNV alone is linear enough that sums of two entries with
/// their times swapped agree): fixed, so that the loader and the init
/// (which may be another build after an upgrade) agree on it, and the
/// bus with both (`files_stamp.rs`).
pub(super) fn entry_hash(name: &[u8], mtime_us: Option<u64>) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let fold = |h: u64, b: &u8| (h ^ u64::from(*b)).wrapping_mul(PRIME);
    let h = name.iter().chain(&[0u8]).fold(OFFSET, fold);
    let h = match mtime_us {
        Some(t) => t.to_le_bytes().iter().fold(fold(h, &1), fold),
        None => fold(h, &0),
    };
    let h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(list: &[(&str, Option<u64>)]) -> Entries {
        let mut e = Entries::default();
        for (name, t) in list {
            e.add(name.as_bytes(), *t);
        }
        e
    }

    #[test]
    fn the_digest_is_of_names_and_times_in_any_order() {
        let a = entries(&[("a.service", Some(10)), ("b.service", Some(20))]);
        let same = entries(&[("b.service", Some(20)), ("a.service", Some(10))]);
        assert_eq!(a, same);
        assert_eq!(a.newest_us, Some(20));
        // An edit in place, a new entry, a name swapped for another, a
        // time moved from one entry to the other: each a new digest.
        for other in [
            entries(&[("a.service", Some(11)), ("b.service", Some(20))]),
            entries(&[
                ("a.service", Some(10)),
                ("b.service", Some(20)),
                ("c", None),
            ]),
            entries(&[("a.service", Some(10)), ("c.service", Some(20))]),
            entries(&[("a.service", Some(20)), ("b.service", Some(10))]),
            entries(&[("a.service", Some(10)), ("b.service", None)]),
        ] {
            assert_ne!(a.digest, other.digest, "{other:?}");
        }
        // The hash is fixed: the loader and the init agree across builds.
        assert_eq!(entries(&[]).digest, 0);
        assert_eq!(entry_hash(b"", None), 8_917_707_823_322_109_644);
    }

    #[test]
    fn a_stamp_is_trusted_only_when_its_times_are_old_enough() {
        let mut s = PathStamp::new(10_000_000);
        s.add_dir("/etc/systemd/system", Some(1_000_000), entries(&[]));
        s.add_dir("/run/systemd/system", None, Entries::default());
        s.add_file("/opt/app/app.service", Some(8_000_000));
        assert!(s.settled());
        assert!(s.has_dir("/run/systemd/system"));
        assert!(!s.has_dir("/opt/app"));
        // A file modified less than SETTLE_US before: a second write in
        // its tick would not show.
        s.add_dir(
            "/etc/systemd/system/a.service.d",
            Some(1),
            entries(&[("x.conf", Some(8_000_001))]),
        );
        assert!(!s.settled());
        // No stamp at all (an old loader's output).
        assert!(!PathStamp::default().settled());
    }
}
