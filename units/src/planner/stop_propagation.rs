//! `stop-propagated-from` and `propagates-stop-to` (systemd's
//! `StopPropagatedFrom=` and `PropagatesStopTo=`): when a unit ends for
//! good (stopped, ended by itself, failed with no restart pending), the
//! units the stop propagates to are stopped as a stop by hand stops them
//! (held out of the required set until they are started again), as systemd
//! enqueues a stop job for each when the unit becomes inactive.
//! The translator gives each `BindsTo=` name this rule too (systemd's
//! `unit_check_binds_to` stops a bound unit whose unit went inactive, a
//! clean exit included): docs/systemd-units.md.

use super::Planner;
use crate::graph::UnitId;

impl Planner {
    /// Unit `u` ended for good: the units its stop propagates to that are
    /// up stop. A scan of the unit set, paid by an end only, and not
    /// during a shutdown (everything stops then).
    pub(super) fn propagate_stop(&mut self, u: UnitId) {
        if self.shutting_down {
            return;
        }
        let g = &self.graph;
        let names_u = |list: &[String]| list.iter().any(|n| g.unit(n) == Some(u));
        let mut to: Vec<UnitId> = self
            .spec_of(u)
            .extras
            .propagates_stop_to
            .iter()
            .filter_map(|n| g.unit(n))
            .collect();
        to.extend(
            g.ids()
                .filter(|&o| names_u(&self.spec_of(o).extras.stop_propagated_from)),
        );
        let mut held = false;
        for o in to {
            let unit = &self.units[o.index()];
            if o == u || g.node(o).ghost || !(unit.up() || unit.state.is_active()) {
                continue;
            }
            let name = &g.node(o).spec.name;
            if self.is_required(o) && !self.held.iter().any(|n| n == name) {
                self.held.push(name.clone());
                held = true;
            }
        }
        if held {
            // A failed unit that the held units alone pulled in leaves the
            // required set with them; it keeps showing failed, as systemd's
            // does, until it is reset or started again.
            if self.units[u.index()].state == crate::state::UnitState::Failed {
                self.units[u.index()].kept_failed = true;
            }
            self.update_required();
        }
    }
}
