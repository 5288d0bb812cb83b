//! Wants: units the required set holds besides the target's. A want names
//! a unit; the required set is the target's and everything reachable from
//! each wanted unit. A want lasts until the next target switch
//! ([`WantLife::UntilSwitch`], what `systemctl start` means on a running
//! target), or until it is dropped or its unit leaves the unit set
//! ([`WantLife::Kept`], the transient units of `initctl run` and `initctl
//! add`). A switch gives a fresh start only to the failed units of the new
//! target's own set: a wanted unit that ran and failed stays as it ended.

use super::Planner;
use crate::graph::UnitId;
use crate::time::Instant;

/// How long a want lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WantLife {
    /// Until the next `set-target`.
    UntilSwitch,
    /// Until it is dropped, or its unit leaves the unit set.
    Kept,
}

/// Why a unit cannot be wanted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WantError {
    /// No unit by that name.
    UnknownUnit(String),
    /// It is masked.
    Masked(String),
    /// The system is shutting down.
    ShuttingDown,
    /// Its unit says it may not be started by hand (`RefuseManualStart=`).
    RefusedManualStart(String),
    /// Its unit says it may not be stopped by hand (`RefuseManualStop=`).
    RefusedManualStop(String),
    /// It is not wanted (only the target requires what it requires).
    NotWanted(String),
}

impl Planner {
    /// Wants unit `name` for `life` (a unit wanted already keeps the
    /// longer of the two lives). Returns its id.
    pub fn want(&mut self, name: &str, life: WantLife, now: Instant) -> Result<UnitId, WantError> {
        self.now = now;
        let id = self
            .graph
            .unit(name)
            .filter(|&i| !self.graph.node(i).ghost)
            .ok_or_else(|| WantError::UnknownUnit(name.to_string()))?;
        if self.graph.node(id).masked {
            return Err(WantError::Masked(name.to_string()));
        }
        if self.shutting_down {
            return Err(WantError::ShuttingDown);
        }
        if life == WantLife::UntilSwitch
            && self.graph.node(id).spec.extras.refuse_manual_start == Some(true)
        {
            return Err(WantError::RefusedManualStart(name.to_string()));
        }
        self.add_want(name, life);
        self.update_required();
        self.run();
        Ok(id)
    }

    /// Records a want of `name` for `life`; a unit wanted already keeps
    /// the longer of the two lives.
    pub(super) fn add_want(&mut self, name: &str, life: WantLife) {
        match self.wants.iter_mut().find(|(n, _)| n == name) {
            Some((_, l)) => {
                if life == WantLife::Kept {
                    *l = WantLife::Kept;
                }
            }
            None => self.wants.push((name.to_string(), life)),
        }
    }

    /// Drops the want of unit `name`: refused when there is none, or when
    /// its unit may not be stopped by hand (a switch of the target still
    /// drops it, [`Planner::prune_wants`]).
    pub fn unwant(&mut self, name: &str, now: Instant) -> Result<(), WantError> {
        self.now = now;
        let Some(at) = self.wants.iter().position(|(n, _)| n == name) else {
            return Err(WantError::NotWanted(name.to_string()));
        };
        let refused = self
            .graph
            .unit(name)
            .is_some_and(|i| self.graph.node(i).spec.extras.refuse_manual_stop == Some(true));
        if refused {
            return Err(WantError::RefusedManualStop(name.to_string()));
        }
        self.wants.remove(at);
        self.update_required();
        self.run();
        Ok(())
    }

    /// The wanted units, by name, with how long each want lasts.
    pub fn wants(&self) -> impl Iterator<Item = (&str, WantLife)> {
        self.wants.iter().map(|(n, l)| (n.as_str(), *l))
    }

    /// The ids of the wanted units in the current graph (wants of names
    /// that are gone are left out).
    pub(super) fn want_roots(&self) -> Vec<UnitId> {
        self.wants
            .iter()
            .filter_map(|(n, _)| self.graph.unit(n))
            .filter(|&i| {
                let n = self.graph.node(i);
                !n.ghost && !n.masked
            })
            .collect()
    }

    /// Drops the wants of units the graph no longer has (after a new unit
    /// set) and those that last until a switch (at a switch).
    pub(super) fn prune_wants(&mut self, switching: bool) {
        let graph = &self.graph;
        self.wants.retain(|(n, life)| {
            let present = graph.unit(n).is_some_and(|i| !graph.node(i).ghost);
            present && !(switching && *life == WantLife::UntilSwitch)
        });
    }

    /// The required set as it is now: the target's and the wants'.
    pub(super) fn required_now(&self) -> Vec<bool> {
        let mut roots = self.want_roots();
        roots.extend(self.target_provider);
        roots.extend(self.triggered_roots());
        self.graph.reachable(&roots)
    }

    /// Moves to the required set as it is now: the units whose flag
    /// changes are evaluated.
    pub(super) fn update_required(&mut self) {
        let req = self.required_now();
        self.set_required(req);
    }
}
