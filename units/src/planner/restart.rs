//! A restart and a reset of failed units by hand (`systemctl restart`,
//! `systemctl reset-failed`): a required unit stopped and started again,
//! and failed units that forget their failure.

use crate::time::Instant;

use super::{Phase, Planner, RestartError, WantLife};
use crate::graph::UnitId;
use crate::state::UnitState;

impl Planner {
    /// Restarts one required unit: stops it (dependents that hard-depend on
    /// it stop first and come back after it) and starts it again; a failed or
    /// waiting unit gets a fresh start.
    pub fn restart(&mut self, name: &str, now: Instant) -> Result<UnitId, RestartError> {
        self.now = now;
        let id = self
            .graph
            .unit(name)
            .ok_or_else(|| RestartError::UnknownUnit(name.to_string()))?;
        if self.shutting_down {
            return Err(RestartError::ShuttingDown);
        }
        if !self.is_required(id) {
            return Err(RestartError::NotRequired(name.to_string()));
        }
        let u = &mut self.units[id.index()];
        if u.up() {
            u.restart_requested = true;
            self.records[id.index()].attempt = 0;
        } else if u.phase == Phase::Idle {
            self.reset_failed(id);
            if self.units[id.index()].state == UnitState::Exited {
                // A oneshot that remained active runs its stop commands
                // first (a mount unit unmounts, then mounts again), as
                // systemd restarts it.
                // One its condition skipped never ran; one that does not
                // remain after its exit has ended already.
                let spec = self.spec_of(id);
                let stops = spec.exec_stop.is_some() || !spec.extras.exec_stop_post.is_empty();
                if stops && spec.remain_after_exit() && !self.records[id.index()].rare().skipped {
                    self.units[id.index()].restart_requested = true;
                } else {
                    self.set_state(id, UnitState::Waiting, "restart requested");
                }
            }
        }
        self.push(id);
        self.run();
        Ok(id)
    }

    /// `systemctl reset-failed`: unit `name` (or, without one, every unit)
    /// that failed and is idle forgets its failure: its restart attempts, a
    /// pending restart, its start limit's count, and the want of a start by
    /// hand that failed (`systemctl start`: the failed start is over). One
    /// the target does not require is then `disabled`; one it requires
    /// gets a fresh start, as at a switch of the target (flotilla runs what
    /// the target requires). Returns how many were reset; `None` when there
    /// is no unit `name`.
    pub fn reset_failed_units(&mut self, name: Option<&str>, now: Instant) -> Option<usize> {
        self.now = now;
        let ids: Vec<UnitId> = match name {
            Some(n) => vec![self.graph.unit(n)?],
            None => self.graph.ids().collect(),
        };
        let failed: Vec<UnitId> = ids
            .into_iter()
            .filter(|id| {
                let u = &self.units[id.index()];
                u.state == UnitState::Failed && u.phase == Phase::Idle
            })
            .collect();
        let graph = &self.graph;
        self.wants.retain(|(n, life)| {
            *life != WantLife::UntilSwitch || !graph.unit(n).is_some_and(|i| failed.contains(&i))
        });
        self.update_required();
        let reset = failed.len();
        for id in failed {
            self.reset_failed(id);
            self.records[id.index()].rare_reset(|r| r.starts = None);
            if !self.is_required(id) || self.shutting_down {
                self.set_state(id, UnitState::Disabled, "reset");
            }
            self.push(id);
        }
        self.run();
        Some(reset)
    }

    /// A failed unit's fresh start: no restart pending, no attempts counted.
    pub(super) fn reset_failed(&mut self, u: UnitId) {
        self.clear_timer(u);
        let i = u.index();
        self.units[i].restart_ready = false;
        self.units[i].kept_failed = false;
        self.records[i].attempt = 0;
        self.records[i].rare_reset(|r| r.failure = None);
        if self.units[i].state == UnitState::Failed {
            self.set_state(u, UnitState::Waiting, "reset");
        }
    }
}
