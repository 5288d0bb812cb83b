//! Whether a unit's files changed on disk since the init read them:
//! systemd's `NeedDaemonReload`, on which Debian's `systemctl` warns
//! "The unit file, source configuration file or drop-ins of X changed on
//! disk" (docs/dbus.md, "NeedDaemonReload").
//!
//! A load stamps each unit read from a systemd unit file with
//! [`files_stamp`] of its files as the read saw them: the file that
//! defines it and its drop-ins in the order they apply, each with its
//! modification time (`Origin::files`). Asked later, the same is taken
//! of the files the search path gives the unit now; another stamp
//! ([`needs_reload`]) means an edit, a drop-in added or removed, the
//! file removed or hidden by a new one.
//!
//! systemd keeps the times themselves and says "changed" only for a
//! time later than the one read; the stamp says it for any other time,
//! so a file put back with an older time (`cp -p`, a package's files
//! carry their build's times) shows too. It is 32 bits so that it fits
//! in room the origin has unused (docs/performance.md, "Memory budget"):
//! a change goes unseen once in 2³² edits.

pub use crate::spec::NO_FILES;

/// The stamp of a unit's files: `files` is the file that defines it
/// (`None`: none) then its drop-ins, in the order they apply, each with
/// its modification time in µs (`None`: there is none). The order
/// counts; never [`NO_FILES`].
pub fn files_stamp<'a>(
    fragment: Option<(&'a str, Option<u64>)>,
    dropins: impl IntoIterator<Item = (&'a str, Option<u64>)>,
) -> u32 {
    // The fragment's slot is marked whether it is there or not, so that
    // a lone drop-in never stamps like a fragment of the same path.
    let first = match fragment {
        Some((path, t)) => super::stamp::entry_hash(path.as_bytes(), t),
        None => super::stamp::entry_hash(b"", None).rotate_left(1),
    };
    let h = dropins.into_iter().fold(first, |h, (path, t)| {
        h.rotate_left(7) ^ super::stamp::entry_hash(path.as_bytes(), t)
    });
    let folded = (h ^ (h >> 32)) as u32;
    folded.max(1)
}

/// Whether a unit stamped `loaded` when read, whose files stamp `now`
/// now, needs a reload to take them.
pub fn needs_reload(loaded: u32, now: u32) -> bool {
    loaded != NO_FILES && loaded != now
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNIT: &str = "/etc/systemd/system/a.service";
    const D1: &str = "/etc/systemd/system/a.service.d/x.conf";
    const D2: &str = "/etc/systemd/system/a.service.d/y.conf";

    fn stamp(fragment: Option<u64>, dropins: &[(&'static str, Option<u64>)]) -> u32 {
        files_stamp(Some((UNIT, fragment)), dropins.iter().copied())
    }

    #[test]
    fn an_edit_a_drop_in_added_or_removed_or_the_file_gone_is_a_change() {
        let loaded = stamp(Some(10), &[(D1, Some(20))]);
        assert!(!needs_reload(loaded, stamp(Some(10), &[(D1, Some(20))])));
        for now in [
            // The file edited; put back with an older time.
            stamp(Some(11), &[(D1, Some(20))]),
            stamp(Some(9), &[(D1, Some(20))]),
            // A drop-in edited, added, removed.
            stamp(Some(10), &[(D1, Some(21))]),
            stamp(Some(10), &[(D1, Some(20)), (D2, Some(5))]),
            stamp(Some(10), &[]),
            // The file removed; another file defining the unit now.
            stamp(None, &[(D1, Some(20))]),
            files_stamp(
                Some(("/run/systemd/system/a.service", Some(10))),
                [(D1, Some(20))],
            ),
        ] {
            assert!(needs_reload(loaded, now), "{now}");
        }
    }

    #[test]
    fn the_order_of_the_drop_ins_counts_and_the_fragment_is_not_a_drop_in() {
        let a = stamp(Some(1), &[(D1, Some(2)), (D2, Some(3))]);
        assert_ne!(a, stamp(Some(1), &[(D2, Some(3)), (D1, Some(2))]));
        // A unit made of drop-ins alone (a slice).
        assert_ne!(
            files_stamp(None, [(UNIT, Some(1))]),
            files_stamp(Some((UNIT, Some(1))), [])
        );
    }

    #[test]
    fn a_unit_not_read_from_a_file_never_needs_a_reload() {
        assert_ne!(stamp(None, &[]), NO_FILES);
        assert!(!needs_reload(NO_FILES, stamp(Some(1), &[])));
    }
}
