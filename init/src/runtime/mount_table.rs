//! Mount units follow the mount table (docs/systemd-units.md, "Mount
//! units"), as systemd's do: once the unit set has a mount unit (a
//! `[Mount]` file's, `extras.mount`), the init watches
//! `/proc/self/mountinfo`, which the kernel wakes at each change of the
//! table (nothing is polled), and after each change, and each new set of
//! mount units, tells the planner of each mount unit whether its place is
//! mounted ([`Fact::MountTable`]). What that moves (a place mounted by
//! hand makes its unit active, one unmounted by hand makes it inactive)
//! is the planner's (`flotilla_units::planner`, `mount_table.rs`).

use super::Runtime;
use crate::sys::{mountinfo, Sys, Token, MOUNTINFO_MAX};
use flotilla_units::planner::Fact;
use std::collections::HashSet;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// The mount table watch's token.
pub(super) const MOUNT_TOKEN: Token = Token(4);

/// Where the init reads its mount table.
const TABLE: &str = "/proc/self/mountinfo";

/// The mount table watch, opened with the first mount unit and kept.
#[derive(Default)]
pub(super) struct MountTable {
    watch: Option<OwnedFd>,
}

impl<S: Sys> Runtime<S> {
    /// After the unit set got mount units (at start, after a re-exec, at a
    /// load or a transient set that added or changed one): watches the
    /// table, and tells the planner what it says now.
    pub(super) fn follow_mount_table(&mut self) {
        let g = self.planner.graph();
        if !g.ids().any(|id| g.node(id).spec.extras.mount.is_some()) {
            return;
        }
        if self.mount_table.watch.is_none() {
            match self.read_watched(self.sys.mount_table_watch(), MOUNT_TOKEN) {
                Ok(fd) => self.mount_table.watch = Some(fd),
                Err(e) => {
                    self.sys.console(&format!(
                        "init: {e}: mount units do not follow the mount table"
                    ));
                    return;
                }
            }
        }
        self.on_mount_table();
    }

    /// The mount table changed: each mount unit's place, mounted or not,
    /// told to the planner (which ignores what moves nothing).
    pub(super) fn on_mount_table(&mut self) {
        let text = match self.sys.read_file_limited(Path::new(TABLE), MOUNTINFO_MAX) {
            Ok(t) => t,
            Err(e) => {
                self.sys.console(&format!("init: {e}"));
                return;
            }
        };
        let mounted: HashSet<PathBuf> = mountinfo::entries(&text).map(|e| e.mount_point).collect();
        let g = self.planner.graph();
        let facts: Vec<Fact> = g
            .ids()
            .filter_map(|unit| {
                let place = &g.node(unit).spec.extras.mount.as_deref()?.place;
                // The root's unit is systemd's perpetual one: found
                // mounted at its start, it is never unmounted by a stop.
                if place == "/" {
                    return None;
                }
                let mounted = mounted.contains(Path::new(place));
                Some(Fact::MountTable { unit, mounted })
            })
            .collect();
        let now = self.now();
        for f in facts {
            self.planner.fact(f, now);
        }
    }
}
