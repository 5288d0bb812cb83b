//! `upholds` (systemd's `Upholds=`) on a unit that is not running: while
//! an upholding unit is active, an upheld unit that failed for good, or
//! that waits blocked by a hard dependency that failed, is started again,
//! and so is that dependency, as systemd enqueues a fresh start job for an
//! upheld unit each time it is inactive (a start that failed on its
//! dependency included). The restart of an upheld unit that *ends* is its
//! restart policy's ([`Planner::upheld`]). Bounded as systemd bounds it: at
//! most [`UPHOLD_BURST`] such starts of one unit in [`UPHOLD_INTERVAL`],
//! then one more when the window is over (see docs/units.md, `upholds`).

use super::record::{count_in_window, Phase, Timer};
use super::Planner;
use crate::graph::UnitId;
use crate::state::{DepKind, UnitState};
use std::time::Duration;

/// The window of the bound on starts of an upheld unit (systemd's
/// automatic start/stop rate limit, 16 in 10 s, not configurable).
pub(super) const UPHOLD_INTERVAL: Duration = Duration::from_secs(10);

/// The starts of an upheld unit allowed in [`UPHOLD_INTERVAL`].
pub(super) const UPHOLD_BURST: u32 = 16;

impl Planner {
    /// Starts upheld unit `u` again if it failed for good or is blocked by
    /// a hard dependency that failed for good (one it pulls in: not
    /// `requisite`): that dependency gets a fresh start too. Returns
    /// whether it did; past the bound, it arms the unit's timer for the end
    /// of the window instead ([`Planner::restart_due`] looks again then).
    pub(super) fn uphold_again(&mut self, u: UnitId) -> bool {
        let i = u.index();
        let own = self.units[i].state == UnitState::Failed;
        if own && (self.units[i].restart_ready || self.records[i].restart_due) {
            // Its own restart comes first.
            return false;
        }
        let failed: Vec<UnitId> = self
            .graph
            .deps(u)
            .iter()
            .filter(|e| {
                matches!(
                    e.kind,
                    DepKind::DependsOn | DepKind::DependsMs | DepKind::Requires
                )
            })
            .filter_map(|e| e.provider)
            .filter(|&p| self.failed_for_good(p))
            .collect();
        if (!own && failed.is_empty()) || !self.upheld(u) {
            return false;
        }
        let now = self.now;
        let window = &mut self.records[i].rare_mut().upholds;
        if count_in_window(window, now, UPHOLD_INTERVAL) > UPHOLD_BURST {
            let end = window.map_or(now, |(since, _)| since.after(UPHOLD_INTERVAL));
            if self.records[i].timer.is_none() {
                self.set_timer(u, end.since(now), Timer::Restart);
            }
            return false;
        }
        if own {
            self.reset_failed(u);
            self.set_state(u, UnitState::Waiting, "upheld: started again");
        }
        let name = self.graph.node(u).spec.name.clone();
        for p in failed {
            self.reset_failed(p);
            self.set_state(
                p,
                UnitState::Waiting,
                format!("started again for upheld {name}"),
            );
        }
        true
    }

    /// Idle and failed with no restart pending.
    fn failed_for_good(&self, p: UnitId) -> bool {
        let unit = &self.units[p.index()];
        unit.phase == Phase::Idle
            && unit.state == UnitState::Failed
            && !unit.restart_ready
            && !self.records[p.index()].restart_due
    }
}
