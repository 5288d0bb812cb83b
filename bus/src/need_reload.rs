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

use flotilla_units::load::{files_stamp, mtime_us, needs_reload, NO_FILES};
use flotilla_units::protocol::UnitStatus;
use flotilla_units::systemd::{Definition, ResolvedUnit};
use std::path::Path;

/// Whether the files of the unit `s` changed since the init read them,
/// `now` being what the search path gives it now (`None`: the path could
/// not be read, or the unit is none of its: not known, so not changed).
pub fn need_reload(s: &UnitStatus, now: Option<&ResolvedUnit>) -> bool {
    if s.files_stamp == NO_FILES {
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
