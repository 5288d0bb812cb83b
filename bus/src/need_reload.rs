//! `NeedDaemonReload` of a unit the init has: whether its unit file or
//! drop-ins changed on disk since the init read them (edited, added,
//! removed), on which Debian's `systemctl` warns at `status`, `start`,
//! `stop` and `restart` (docs/dbus.md, "NeedDaemonReload").
//!
//! The init says what it read (the unit's `files_stamp`,
//! `flotilla_units::load::files_stamp`); the bus takes the same stamp of
//! the files the search path gives the unit now and compares. It is done
//! here rather than by the init because only a property asked for needs
//! it, and what it needs now (the search path listed to find the unit's
//! drop-ins, a stat of each file) the bus has at hand: it lists the path
//! for `DropInPaths` in the same answer, and runs in the same root as the
//! init. PID 1's loop does no file system work for it, and nothing is
//! watched or kept while nobody asks.

use flotilla_systemd::load::mtime_us;
use flotilla_systemd::{Definition, ResolvedUnit};
use flotilla_units::load::{files_stamp, needs_reload, NO_FILES};
use flotilla_units::protocol::UnitStatus;
use std::path::Path;

/// Whether the files of the unit `s` changed since the init read them,
/// `now` being what the search path gives it now (`None`: the path could
/// not be read, or the unit is none of its: not known, so not changed).
pub fn need_reload(s: &UnitStatus, now: Option<&ResolvedUnit>) -> bool {
    // A `not-found` unit has no file to have changed (systemd's
    // `unit_need_daemon_reload` without a fragment).
    if s.files_stamp == NO_FILES || s.not_found {
        return false;
    }
    // Not known (the path could not be listed): no warning rather than
    // a wrong one. A unit whose file is gone is `NotFound` below.
    let Some(r) = now else {
        return false;
    };
    let fragment = match &r.definition {
        Definition::File(p) | Definition::Masked(p) => Some((p.as_str(), mtime(p))),
        Definition::NotFound => None,
    };
    let dropins = r.dropins.iter().map(|d| (d.as_str(), mtime(d)));
    needs_reload(s.files_stamp, files_stamp(fragment, dropins))
}

/// `path`'s modification time, links followed, as the loader takes it
/// (`Sys::file_mtime_us`); `None` when there is none to be had.
fn mtime(path: &str) -> Option<u64> {
    let m = std::fs::metadata(Path::new(path)).ok()?;
    m.modified().ok().map(mtime_us)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    fn resolved(file: &Path, dropins: &[&Path]) -> ResolvedUnit {
        ResolvedUnit {
            name: "a.service".into(),
            id: "a.service".into(),
            definition: Definition::File(file.display().to_string()),
            template: None,
            via: vec![],
            aliases: vec![],
            hides: vec![],
            dropins: dropins.iter().map(|d| d.display().to_string()).collect(),
            wants: vec![],
            requires: vec![],
        }
    }

    fn set_mtime(path: &Path, t: SystemTime) {
        let f = std::fs::File::options().write(true).open(path).unwrap();
        f.set_modified(t).unwrap();
    }

    /// The status the init gives a unit read from `file` alone, stamped
    /// as the loader stamps it.
    fn loaded_from(file: &Path) -> UnitStatus {
        let f = file.display().to_string();
        UnitStatus {
            unit: "a.service".into(),
            files_stamp: files_stamp(Some((f.as_str(), mtime(&f))), []),
            ..UnitStatus::default()
        }
    }

    #[test]
    fn the_files_now_against_the_stamp_the_init_read_them_with() {
        let tmp = tempfile::tempdir().unwrap();
        let (file, dropin) = (tmp.path().join("a.service"), tmp.path().join("x.conf"));
        std::fs::write(&file, "[Service]\nExecStart=/bin/a\n").unwrap();
        std::fs::write(&dropin, "[Service]\nNice=5\n").unwrap();
        let old = SystemTime::now() - Duration::from_secs(3600);
        set_mtime(&file, old);
        let s = loaded_from(&file);
        assert!(!need_reload(&s, Some(&resolved(&file, &[]))));
        // A drop-in on the path now that was not read.
        assert!(need_reload(&s, Some(&resolved(&file, &[&dropin]))));
        // Edited; gone.
        set_mtime(&file, old + Duration::from_secs(1));
        assert!(need_reload(&s, Some(&resolved(&file, &[]))));
        std::fs::remove_file(&file).unwrap();
        assert!(need_reload(&s, Some(&resolved(&file, &[]))));
        let mut gone = resolved(&file, &[]);
        gone.definition = Definition::NotFound;
        assert!(need_reload(&s, Some(&gone)));
        // Not known, or not read from a file: no warning.
        assert!(!need_reload(&s, None));
        let unstamped = UnitStatus::default();
        assert!(!need_reload(&unstamped, Some(&gone)));
    }
}
