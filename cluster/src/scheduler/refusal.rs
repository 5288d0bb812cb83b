//! Why a unit may not run on a machine, checked in order (the first
//! check that fails is the refusal), and the text that tells a user why a
//! unit that should run is placed nowhere.

use super::fit::{self, Refusal};
use super::Scheduler;

impl Scheduler {
    /// Why `u` may not run on `m` (the first check that fails), if it may not.
    pub(super) fn refusal(&self, u: &str, m: &str) -> Option<Refusal> {
        let (Some(e), Some(slot)) = (self.units.get(u), self.machines.get(m)) else {
            return Some(Refusal::Gone);
        };
        let r = &e.req;
        if !r.id_matches(m) {
            return Some(Refusal::MachineId);
        }
        if !r.metadata_matches(&slot.metadata) {
            return Some(Refusal::Metadata);
        }
        if !r.machine_of.iter().all(|peer| slot.on.contains(peer)) {
            return Some(Refusal::Peer);
        }
        if !r.conflicts.is_empty() && slot.on.iter().any(|o| o != u && r.conflicts_with(o)) {
            return Some(Refusal::Conflicts);
        }
        if slot.ruled.iter().any(|o| {
            o != u
                && self
                    .units
                    .get(o)
                    .is_some_and(|oe| oe.req.conflicts_with(u) || oe.req.replaces_unit(u))
        }) {
            return Some(Refusal::Conflicts);
        }
        // Landing here must not evict a unit it follows (through its peers):
        // it would have to leave with it.
        if !r.replaces.is_empty() {
            let peers = self.peers_of(u);
            if slot
                .on
                .iter()
                .any(|o| o != u && r.replaces_unit(o) && peers.contains(o))
            {
                return Some(Refusal::EvictsPeer);
            }
            // Nor evict a unit that replaces it in turn: within a cycle of
            // `Replaces=` the unit there stays (see `replaced_back`).
            if slot
                .on
                .iter()
                .any(|o| o != u && r.replaces_unit(o) && self.replaced_back(o, u))
            {
                return Some(Refusal::Conflicts);
            }
        }
        // Its reservation fits in what is left (its own counted once when
        // it is here already).
        let need = r.reservation;
        if !need.is_zero() {
            let others = if e.on.contains(m) {
                slot.used.minus(need)
            } else {
                slot.used
            };
            if !slot.capacity.covers(&others.plus(need)) {
                return Some(Refusal::Room);
            }
        }
        None
    }

    /// Why a unit that should run is not placed (for a global unit: on
    /// some machine where only its reservation keeps it away); `None` when
    /// it is placed, or not wanted.
    pub fn why_unscheduled(&self, name: &str) -> Option<String> {
        let e = self.units.get(name).filter(|e| e.wanted)?;
        if !e.req.global && !e.on.is_empty() {
            return None;
        }
        let mut refusals = Vec::new();
        for m in self.machines.keys().filter(|m| !e.on.contains(*m)) {
            match self.refusal(name, m) {
                Some(r) if e.req.global && r != Refusal::Room => {}
                Some(r) => refusals.push(r),
                None => {}
            }
        }
        let unplaced_peers: Vec<&str> = e
            .req
            .machine_of
            .iter()
            .filter(|p| self.units.get(*p).is_none_or(|pe| pe.on.is_empty()))
            .map(String::as_str)
            .collect();
        fit::reason(
            e.req.global,
            self.machines.len(),
            &refusals,
            e.req.reservation,
            &unplaced_peers,
        )
    }
}
