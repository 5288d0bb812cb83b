//! `ready-bus-name` (systemd's `Type=dbus`): the D-Bus names owned on the
//! system bus, as `flotilla-busd` reports them, and the units whose start
//! waits for theirs. The init cannot watch the bus itself (the D-Bus side
//! is busd's, docs/dbus.md); it keeps the names it was told, so that a unit
//! whose name is already owned when its main process starts is up at once,
//! as systemd checks the name's owner at that moment.

use super::lifecycle::Event;
use super::record::Phase;
use super::Planner;
use crate::graph::UnitId;

impl Planner {
    /// Takes a report of names owned and released; each unit waiting for
    /// a name now owned is ready, each running unit whose name is gone is
    /// stopped ([`Event::BusNameLost`]). A whole report (busd started, or
    /// on a new bus) is every name owned: a running unit whose name it
    /// leaves out has lost it, whether the init was told of the name
    /// before or not (a re-exec of an init older than the names' carry).
    pub(super) fn bus_names(&mut self, owned: Vec<String>, released: Vec<String>, whole: bool) {
        if whole {
            self.bus_names.clear();
        }
        for name in &released {
            self.bus_names.remove(name);
        }
        let lost: Vec<UnitId> = self
            .graph
            .ids()
            .filter(|u| self.units[u.index()].phase == Phase::Up)
            .filter(|&u| {
                self.spec_of(u)
                    .extras
                    .ready_bus_name
                    .as_ref()
                    .is_some_and(|n| released.contains(n) || (whole && !owned.contains(n)))
            })
            .collect();
        for u in lost {
            self.step(u, Event::BusNameLost);
        }
        let mut taken = Vec::new();
        for name in owned {
            if self.bus_names.insert(name.clone()) || whole {
                taken.push(name);
            }
        }
        for u in self.units_named(Phase::Main, &taken) {
            self.step(u, Event::BusName);
        }
    }

    /// The names owned, carried across a re-exec (`Snapshot::bus_names`):
    /// busd tells the new image only what changes afterwards.
    pub fn carry_bus_names(&self) -> Vec<String> {
        self.bus_names.iter().cloned().collect()
    }

    /// The names the image before the re-exec was told.
    pub fn resume_bus_names(&mut self, names: Vec<String>) {
        self.bus_names = names.into_iter().collect();
    }

    /// The units in `phase` whose `ready-bus-name` is one of `names`.
    fn units_named(&self, phase: Phase, names: &[String]) -> Vec<UnitId> {
        if names.is_empty() {
            return Vec::new();
        }
        self.graph
            .ids()
            .filter(|u| self.units[u.index()].phase == phase)
            .filter(|&u| {
                self.spec_of(u)
                    .extras
                    .ready_bus_name
                    .as_ref()
                    .is_some_and(|n| names.contains(n))
            })
            .collect()
    }

    /// Whether unit `u`'s `ready-bus-name` is owned now.
    pub(super) fn bus_name_owned(&self, u: UnitId) -> bool {
        self.spec_of(u)
            .extras
            .ready_bus_name
            .as_ref()
            .is_some_and(|n| self.bus_names.contains(n))
    }
}
