//! A running unit whose file is gone at a reload: systemd's `not-found`
//! unit (docs/systemd-units.md, "A running unit whose file is gone").
//!
//! systemd restarts and stops nothing at a daemon-reload: a unit whose
//! file the reload no longer finds is loaded as `not-found` and keeps its
//! processes (a socket its listening sockets) until it stops, by hand or
//! by itself; then nothing holds it and it is gone (`unit_may_gc`). A
//! unit read from a systemd unit file does the same here, whichever
//! reload it is: when it becomes a ghost ([`crate::graph::Node::not_found`])
//! while up (or `exited`), it gets a want of its own by name
//! ([`WantLife::UntilSwitch`], as `systemctl start` of it), which holds
//! it in the required set while it runs, as a ghost that provides
//! nothing and depends on nothing. It is never started again as a ghost:
//! once it is idle it is let go, its want dropped, and it leaves the set
//! at the next reload. A stop by hand drops the want ([`Planner::unwant`]
//! takes a `not-found` unit; a start does not). When its file is back at
//! a later reload, the unit is read from it again and, still up, keeps
//! running with the definition read ([`super::replace::OnChange::Keep`]),
//! held by the same want.
//!
//! A YAML unit, a transient unit and a fleet unit keep the rule of
//! `initctl reload` (docs/contract.md §5): a removed one stops.

use super::record::{Phase, Unit};
use super::wants::WantLife;
use super::Planner;
use crate::graph::{Graph, UnitId};
use crate::state::UnitState;

/// Whether a ghost `unit` runs on: up, or `exited` (a oneshot that
/// remained active, which systemd shows `active` too).
pub(super) fn runs_on(unit: &Unit) -> bool {
    unit.phase != Phase::Idle || unit.state == UnitState::Exited
}

impl Planner {
    /// After a new unit set: each unit that became a `not-found` ghost
    /// while running (not on its way down) gets its want, so that it
    /// runs on (module doc).
    pub(super) fn keep_not_found(&mut self, old: &Graph) {
        let kept: Vec<String> = self
            .graph
            .ids()
            .filter(|&i| self.graph.node(i).not_found())
            .filter(|&i| {
                let u = &self.units[i.index()];
                runs_on(u) && !u.phase.stopping()
            })
            .map(|i| self.graph.node(i).spec.name.clone())
            .filter(|n| old.unit(n).is_some_and(|o| !old.node(o).ghost))
            .collect();
        for name in kept {
            self.add_want(&name, WantLife::UntilSwitch);
        }
    }

    /// Ghost `u` is idle now: it is let go (its want dropped, if it was a
    /// `not-found` unit), never started again as a ghost.
    pub(super) fn let_go(&mut self, u: UnitId) {
        let name = &self.graph.node(u).spec.name;
        self.wants.retain(|(n, _)| n != name);
    }
}
