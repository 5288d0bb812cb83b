//! A reload by hand, and the units it propagates to (systemd's
//! `ReloadPropagatedFrom=` and `PropagatesReloadTo=`: `systemctl reload
//! postgresql` reloads every cluster of Debian's `postgresql@.service`).

use crate::time::Instant;

use super::{Event, Phase, Planner, ReloadError};
use crate::graph::UnitId;
use crate::state::UnitState;

impl Planner {
    /// Runs a running unit's `exec-reload`: the unit is `reloading` until
    /// the command exits (a `foreground-notified` unit that sends
    /// `RELOADING=1` stays so until `READY=1`), bounded by `start-timeout`.
    pub fn reload_unit(&mut self, name: &str, now: Instant) -> Result<UnitId, ReloadError> {
        self.now = now;
        let id = self
            .graph
            .unit(name)
            .filter(|&i| !self.graph.node(i).ghost)
            .ok_or_else(|| ReloadError::UnknownUnit(name.to_string()))?;
        if !self.reloadable(id) {
            return Err(ReloadError::NotRunning(name.to_string()));
        }
        if self.spec_of(id).extras.exec_reload.is_none() {
            return Err(ReloadError::NoReloadCommand(name.to_string()));
        }
        self.step(id, Event::Reload);
        // systemd's try-reload of the units the reload propagates to: those
        // up, with a reload command.
        for other in self.reloads_propagated_from(id) {
            if self.reloadable(other) && self.spec_of(other).extras.exec_reload.is_some() {
                self.step(other, Event::Reload);
            }
        }
        self.run();
        Ok(id)
    }

    /// Whether `id` is up and staying so (or a oneshot that `exited`, as
    /// systemd reloads an active `RemainAfterExit=` oneshot).
    fn reloadable(&self, id: UnitId) -> bool {
        let u = &self.units[id.index()];
        !u.to_stop
            && (u.phase == Phase::Up || (u.phase == Phase::Idle && u.state == UnitState::Exited))
    }

    /// The units a reload of `id` propagates to: those that name it in
    /// `reload-propagated-from`, and those it names in
    /// `propagates-reload-to`, each once, `id` itself never. A scan of the
    /// unit set, paid by a reload only.
    fn reloads_propagated_from(&self, id: UnitId) -> Vec<UnitId> {
        let g = &self.graph;
        let names_id = |list: &[String]| list.iter().any(|n| g.unit(n) == Some(id));
        let mut out: Vec<UnitId> = self
            .spec_of(id)
            .extras
            .propagates_reload_to
            .iter()
            .filter_map(|n| g.unit(n))
            .collect();
        out.extend(
            g.ids()
                .filter(|&o| names_id(&self.spec_of(o).extras.reload_propagated_from)),
        );
        out.retain(|&o| o != id && !g.node(o).ghost);
        out.sort_unstable();
        out.dedup();
        out
    }
}
