//! Mount units follow the mount table, as systemd's do (docs/systemd-units.md,
//! "Mount units"): the init watches the table and tells
//! [`super::Fact::MountTable`] for each mount unit whose place changed.
//!
//! - A place mounted by someone else (mount(8) from a shell, a helper)
//!   makes its idle unit `exited` (active) without running its `mount`,
//!   and wanted as `systemctl start` would ([`WantLife::Kept`]), so the
//!   required set holds it whatever the target: a stop of it then
//!   unmounts it. So does a unit whose start was skipped because its
//!   place was mounted already, when that is its only condition.
//! - A place unmounted by someone else makes its exited unit inactive
//!   without running its `umount`, held out of the required set as a stop
//!   by hand is: it is not mounted again until asked (systemd starts no
//!   job for it either). What is bound to it stops with it.
//! - While the unit's own `mount` or `umount` runs, the table says nothing
//!   new: that command's exit decides, as for any unit.

use super::record::Phase;
use super::wants::WantLife;
use super::Planner;
use crate::graph::UnitId;
use crate::state::UnitState;

impl Planner {
    /// The mount table says `u`'s place is `mounted` or not.
    pub(super) fn mount_table(&mut self, u: UnitId, mounted: bool) {
        let i = u.index();
        let Some(unit) = self.units.get(i) else {
            return;
        };
        if unit.phase != Phase::Idle {
            return;
        }
        let state = unit.state;
        let name = self.graph.node(u).spec.name.clone();
        match (mounted, state) {
            // Found mounted at its start (its `mount` skipped): it is the
            // mount's unit now, and its stop unmounts.
            (true, UnitState::Exited)
                if self.records[i].rare().skipped && self.only_place_condition(u) =>
            {
                self.records[i].rare_reset(|r| r.skipped = false);
                self.set_state(u, UnitState::Exited, "mounted");
                let _ = self.want(&name, WantLife::Kept, self.now);
            }
            (true, UnitState::Disabled | UnitState::Waiting | UnitState::Failed) => {
                if self.shutting_down || self.graph.node(u).masked {
                    return;
                }
                self.clear_timer(u);
                let spec = self.graph.node(u).spec.clone();
                let rec = &mut self.records[i];
                rec.running_spec = Some(spec);
                rec.exit_ok = true;
                rec.attempt = 0;
                rec.rare_reset(|r| {
                    r.failure = None;
                    r.skipped = false;
                });
                self.units[i].kept_failed = false;
                self.set_state(u, UnitState::Exited, "mounted");
                // Refused only for a unit not to be started by hand, which
                // is then stopped (unmounted) as outside the required set.
                let _ = self.want(&name, WantLife::Kept, self.now);
            }
            // A unit skipped by a condition (`ConditionCapability=` in a
            // container) mounted nothing: nothing of it went.
            (false, UnitState::Exited) if !self.records[i].rare().skipped => {
                self.wants.retain(|(n, _)| *n != name);
                self.update_required();
                if self.is_required(u) && !self.held.contains(&name) {
                    self.held.push(name);
                    self.update_required();
                }
                let rec = &mut self.records[i];
                rec.running_spec = None;
                rec.exit_ok = false;
                rec.rare_reset(|r| r.skipped = false);
                self.set_state(u, UnitState::Disabled, "unmounted");
                self.propagate_stop(u);
            }
            _ => {}
        }
    }

    /// Whether `u`'s only condition is the one its place gives (mounted
    /// already: `ConditionPathIsMountPoint=!WHERE`), so that a skip of it
    /// means the place was mounted. A unit with others (Debian's
    /// `dev-mqueue.mount`, `ConditionCapability=CAP_SYS_ADMIN`, skipped in
    /// a container whose engine mounted the place) stays skipped: its stop
    /// unmounts nothing, and a container's shutdown tries no umount it
    /// may not do (systemd stops no such mount at shutdown either).
    fn only_place_condition(&self, u: UnitId) -> bool {
        let conditions = &self.graph.node(u).spec.extras.conditions;
        conditions
            .iter()
            .all(|c| c.kind == "PathIsMountPoint" && c.negate && !c.assert)
    }
}
