//! fleet's scheduler, kept up to date change by change.
//!
//! The rules are docs/fleet-compat.md "Scheduling as fleet did it":
//!
//! 1. *Keep.* A unit that should run (desired state not `inactive`) stays
//!    on its machine while it may still run there. A unit that lands where
//!    a unit it `Replaces` is evicts that unit, which is then placed afresh.
//! 2. *Place.* Units waiting for a machine are taken in name order. A global
//!    unit goes to every machine where it may run. Any other unit goes to
//!    the machine where it may run with the most room left (the smaller of
//!    its free shares of memory and cores, [`fit::room`]), then the
//!    least-loaded (units placed there, global ones included), then the
//!    lowest machine ID; room and load are updated after each decision.
//!    Without reservations every machine has the same room, and this is
//!    fleet's least-loaded rule. A pass repeats for the units that an
//!    earlier decision made placeable (a `MachineOf` follower whose peer
//!    sorts after it, a unit whose obstacle was evicted), as fleet's
//!    repeated passes did.
//!
//! "May run on M" checks, in order: `MachineID`, `MachineMetadata`, every
//! `MachineOf` peer already on M, `Conflicts` globs in both directions
//! against the units on M, no unit on M `Replaces` this one, this one
//! does not replace a unit on M that it follows (through its peers), and
//! its reservation fits in what M has left (nothing is overcommitted: a
//! unit that fits nowhere waits, with its reason, [`Scheduler::why_unscheduled`]).
//! A unit evicted by `Replaces=` takes its followers with it. A machine
//! whose capacity shrinks keeps its units in name order while they fit;
//! the rest wait for a machine.
//!
//! [`Scheduler`] holds the placement and the indexes the checks need, and
//! takes changes one by one ([`Scheduler::set_machine`],
//! [`Scheduler::set_unit`], ...); [`Scheduler::run`] then does only the work
//! those changes call for: the placed units they concern are checked again,
//! and only units waiting for a machine are placed. A unit that cannot be
//! placed is not tried again until something happens that could make room
//! for it (a machine appears or changes, a unit leaves a machine, a unit's
//! requirements change, its `MachineOf` peer is placed). Work per change is
//! proportional to what it concerns, not to the number of units: 10,000
//! units arriving one by one cost 10,000 placements, not 10,000 passes.
//!
//! When a change makes two units on one machine incompatible, the unit that
//! changed is the one that moves. [`schedule`] computes a placement from
//! scratch, keeping what may stay in name order, then placing the rest.

use crate::requirements::Requirements;
use flotilla_units::fleet_api::Resources;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub mod fit;
mod refusal;

/// A machine that is present (its presence key is alive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineInfo {
    /// Its machine ID.
    pub id: String,
    /// Its metadata.
    pub metadata: BTreeMap<String, String>,
    /// What units may reserve there.
    pub capacity: Resources,
}

/// A unit as the scheduler sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitInfo {
    /// Its name.
    pub name: String,
    /// Desired state is `loaded` or `launched` (not `inactive`).
    pub wanted: bool,
    /// Its `[X-Fleet]` requirements.
    pub req: Requirements,
}

/// Where units are: a non-global unit on one machine, a global unit on a set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    /// Non-global unit -> machine.
    pub units: BTreeMap<String, String>,
    /// Global unit -> machines.
    pub global: BTreeMap<String, BTreeSet<String>>,
}

impl Placement {
    /// Every (machine, unit) pair.
    pub fn pairs(&self) -> BTreeSet<(String, String)> {
        let mut out: BTreeSet<(String, String)> = self
            .units
            .iter()
            .map(|(u, m)| (m.clone(), u.clone()))
            .collect();
        for (u, ms) in &self.global {
            out.extend(ms.iter().map(|m| (m.clone(), u.clone())));
        }
        out
    }
}

/// A machine's place in the order of choice: most room, then fewest
/// units (then its ID, in [`Scheduler::by_room`]).
type Rank = (Reverse<u64>, usize);

/// One machine: its metadata and what is placed on it.
#[derive(Debug, Default)]
struct Slot {
    metadata: BTreeMap<String, String>,
    /// What units may reserve.
    capacity: Resources,
    /// The sum of the reservations of the units placed here.
    used: Resources,
    /// Every unit placed here.
    on: BTreeSet<String>,
    /// The units placed here that have `Conflicts=` or `Replaces=`: the only
    /// ones a unit arriving here must be checked against from their side.
    ruled: BTreeSet<String>,
}

/// One known unit.
#[derive(Debug)]
struct Entry {
    wanted: bool,
    req: Requirements,
    /// The machines it is on (at most one unless global).
    on: BTreeSet<String>,
}

impl Entry {
    fn ruled(&self) -> bool {
        !self.req.conflicts.is_empty() || !self.req.replaces.is_empty()
    }
}

/// fleet's scheduler with its state; see the module documentation.
#[derive(Debug, Default)]
pub struct Scheduler {
    machines: BTreeMap<String, Slot>,
    /// (room, load, machine ID): the order in which machines are chosen.
    by_room: BTreeSet<(Reverse<u64>, usize, String)>,
    units: BTreeMap<String, Entry>,
    /// `MachineOf` peer -> the units that follow it.
    followers: HashMap<String, BTreeSet<String>>,
    /// Wanted units to place (or, for global units, to spread further).
    pending: BTreeSet<String>,
    /// Wanted units that could not be placed (or spread to every machine)
    /// and wait for a change that could make room.
    blocked: BTreeSet<String>,
    /// Placed units whose placement must be checked again.
    recheck: BTreeSet<String>,
    /// Units whose placement changed since [`Scheduler::take_changed`].
    changed: BTreeSet<String>,
    /// Units tried since [`Scheduler::take_changed`] (their reason to
    /// wait may have changed).
    tried: BTreeSet<String>,
}

impl Scheduler {
    /// An empty scheduler.
    pub fn new() -> Scheduler {
        Scheduler::default()
    }

    /// Adds a machine or changes its metadata or capacity.
    pub fn set_machine(
        &mut self,
        id: &str,
        metadata: &BTreeMap<String, String>,
        capacity: Resources,
    ) {
        match self.machines.get_mut(id) {
            Some(slot) if &slot.metadata == metadata && slot.capacity == capacity => return,
            Some(slot) => {
                if &slot.metadata != metadata {
                    slot.metadata = metadata.clone();
                    self.recheck.extend(slot.on.iter().cloned());
                }
                let resized = slot.capacity != capacity;
                if resized {
                    let before = self.rank(id);
                    if let Some(slot) = self.machines.get_mut(id) {
                        slot.capacity = capacity;
                    }
                    self.rerank(id, before);
                    self.refit(id);
                }
            }
            None => {
                let slot = Slot {
                    metadata: metadata.clone(),
                    capacity,
                    ..Slot::default()
                };
                self.machines.insert(id.to_string(), slot);
                let (room, load) = self.rank(id);
                self.by_room.insert((room, load, id.to_string()));
            }
        }
        self.unblock_all();
        // Global units may go there now.
        let globals: Vec<String> = self
            .units
            .iter()
            .filter(|(_, e)| e.wanted && e.req.global)
            .map(|(n, _)| n.clone())
            .collect();
        self.pending.extend(globals);
    }

    /// Removes a machine (its presence expired): its units wait for another.
    pub fn remove_machine(&mut self, id: &str) {
        let (room, load) = self.rank(id);
        let Some(slot) = self.machines.remove(id) else {
            return;
        };
        self.by_room.remove(&(room, load, id.to_string()));
        for u in &slot.on {
            if let Some(e) = self.units.get_mut(u) {
                e.on.remove(id);
                self.changed.insert(u.clone());
                if e.wanted && !e.req.global {
                    self.pending.insert(u.clone());
                }
            }
        }
        self.unblock_all();
    }

    /// Adds a unit or changes it (its desired state or requirements).
    pub fn set_unit(&mut self, name: &str, wanted: bool, req: &Requirements) {
        if let Some(e) = self.units.get(name) {
            if e.wanted == wanted && &e.req == req {
                return;
            }
            let was_on: Vec<String> = e.on.iter().cloned().collect();
            let old_peers = e.req.machine_of.clone();
            let kind_changed = e.req.global != req.global;
            // Re-index its rules and its peers.
            for m in &was_on {
                if let Some(slot) = self.machines.get_mut(m) {
                    slot.ruled.remove(name);
                }
            }
            self.unfollow(name, &old_peers);
            let e = self.units.get_mut(name).expect("present");
            let old_need = e.req.reservation;
            e.wanted = wanted;
            e.req = req.clone();
            let ruled = e.ruled();
            for m in &was_on {
                let before = self.rank(m);
                if let Some(slot) = self.machines.get_mut(m) {
                    if ruled {
                        slot.ruled.insert(name.to_string());
                    }
                    // What it reserves there is its new reservation (it is
                    // checked again below).
                    slot.used = slot.used.minus(old_need).plus(req.reservation);
                }
                self.rerank(m, before);
            }
            self.follow(name, req);
            self.blocked.remove(name);
            if kind_changed {
                // Global to one machine or back: placed afresh.
                self.unplace_everywhere(name);
                if wanted {
                    self.pending.insert(name.to_string());
                }
            } else if wanted {
                // Check where it is; place it (or spread it) afresh.
                if was_on.is_empty() || req.global {
                    self.pending.insert(name.to_string());
                }
                if !was_on.is_empty() {
                    self.recheck.insert(name.to_string());
                }
            } else {
                self.pending.remove(name);
                self.unplace_everywhere(name);
            }
            // Its old requirements may have kept others away.
            self.unblock_all();
            return;
        }
        self.units.insert(
            name.to_string(),
            Entry {
                wanted,
                req: req.clone(),
                on: BTreeSet::new(),
            },
        );
        self.follow(name, req);
        if wanted {
            self.pending.insert(name.to_string());
        }
    }

    /// Removes a unit (destroyed).
    pub fn remove_unit(&mut self, name: &str) {
        if !self.units.contains_key(name) {
            return;
        }
        self.unplace_everywhere(name);
        if let Some(e) = self.units.remove(name) {
            self.unfollow(name, &e.req.machine_of);
        }
        self.pending.remove(name);
        self.blocked.remove(name);
        self.recheck.remove(name);
        self.unblock_all();
    }

    /// Places a unit where it already is (a stored placement, when the
    /// engine starts), if it may run there; in name order, as [`schedule`].
    fn keep(&mut self, name: &str, machine: &str) {
        let Some(e) = self.units.get(name) else {
            return;
        };
        if !e.wanted || e.on.contains(machine) || (!e.req.global && !e.on.is_empty()) {
            return;
        }
        if self.may_run(name, machine) {
            self.place(name, machine);
        }
    }

    /// Does what the changes since the last call call for.
    pub fn run(&mut self) {
        // 1. Placed units whose machine or neighbours changed.
        self.settle();
        // 2. Units waiting for a machine, in name order, in passes.
        let mut todo = std::mem::take(&mut self.pending);
        let mut passes = 0;
        while !todo.is_empty() && passes <= self.units.len() + 1 {
            passes += 1;
            let mut next = BTreeSet::new();
            while let Some(u) = todo.pop_first() {
                self.try_place(&u);
                // A unit this decision evicted leaves its followers behind.
                self.settle();
                // What this decision made placeable (an evicted unit, units
                // it made room for, followers of a placed peer): later names
                // in this pass, earlier ones in the next, as fleet's passes.
                for r in std::mem::take(&mut self.pending) {
                    if r > u {
                        todo.insert(r);
                    } else {
                        next.insert(r);
                    }
                }
            }
            todo = next;
        }
        // Anything left after the bound waits for the next change.
        self.blocked.extend(todo);
    }

    /// Takes the units to check again off machines where they may no
    /// longer run; they wait for a machine.
    fn settle(&mut self) {
        while let Some(u) = self.recheck.pop_first() {
            let on: Vec<String> = match self.units.get(&u) {
                Some(e) if e.wanted => e.on.iter().cloned().collect(),
                _ => continue,
            };
            for m in on {
                if self.may_run(&u, &m) {
                    // It stays, and what it replaces (now) leaves.
                    self.evict_replaced(&u, &m);
                } else {
                    self.unplace(&u, &m);
                    self.pending.insert(u.clone());
                }
            }
        }
    }

    /// Moves the units that `u` replaces off `m`; they wait for a machine.
    fn evict_replaced(&mut self, u: &str, m: &str) {
        let Some(e) = self.units.get(u).filter(|e| !e.req.replaces.is_empty()) else {
            return;
        };
        let evicted: Vec<String> = self
            .machines
            .get(m)
            .into_iter()
            .flat_map(|slot| slot.on.iter())
            .filter(|o| *o != u && e.req.replaces_unit(o) && !self.replaced_back(o, u))
            .cloned()
            .collect();
        for o in evicted {
            self.unplace(&o, m);
            self.pending.insert(o);
        }
    }

    /// The units whose placement changed since the last call, and those
    /// tried (whose reason to wait may have changed).
    pub fn take_changed(&mut self) -> BTreeSet<String> {
        let mut out = std::mem::take(&mut self.changed);
        out.append(&mut self.tried);
        out
    }

    /// The machines a unit is placed on.
    pub fn placed_on(&self, name: &str) -> impl Iterator<Item = &String> {
        self.units.get(name).into_iter().flat_map(|e| e.on.iter())
    }

    /// The number of units placed on a machine (global ones included).
    pub fn load(&self, machine: &str) -> usize {
        self.machines.get(machine).map_or(0, |s| s.on.len())
    }

    /// The whole placement.
    pub fn placement(&self) -> Placement {
        let mut p = Placement::default();
        for (n, e) in &self.units {
            if e.req.global {
                if !e.on.is_empty() {
                    p.global.insert(n.clone(), e.on.clone());
                }
            } else if let Some(m) = e.on.first() {
                p.units.insert(n.clone(), m.clone());
            }
        }
        p
    }

    fn try_place(&mut self, u: &str) {
        let Some(e) = self.units.get(u) else { return };
        if !e.wanted {
            return;
        }
        self.tried.insert(u.to_string());
        if e.req.global {
            let missing: Vec<String> = self
                .machines
                .keys()
                .filter(|m| !e.on.contains(*m))
                .cloned()
                .collect();
            let mut complete = true;
            for m in missing {
                if self.may_run(u, &m) {
                    self.place(u, &m);
                } else {
                    complete = false;
                }
            }
            if !complete {
                self.blocked.insert(u.to_string());
            }
            return;
        }
        if !e.on.is_empty() {
            return;
        }
        let choice = self
            .by_room
            .iter()
            .map(|(_, _, m)| m)
            .find(|m| self.may_run(u, m))
            .cloned();
        match choice {
            Some(m) => self.place(u, &m),
            None => {
                self.blocked.insert(u.to_string());
            }
        }
    }

    /// Whether `from` replaces `to`, directly or through a chain of
    /// units each replacing the next (a unit and its `MachineOf=` peers and
    /// followers move together, so they count as one): `to` replacing
    /// `from` then closes a cycle. fleet accepted such units and ignored a
    /// replacement both ways (docs/fleet-compat.md "Scheduling as fleet did
    /// it"); here no unit of a cycle evicts another, and none lands where
    /// another of it is, so a cycle never moves round: the unit placed
    /// first stays, the others go elsewhere or wait. Only wanted units make
    /// a chain: a unit that should not run is placed nowhere and evicts
    /// nothing, so a chain through it (a replaces unwanted b, b replaces g)
    /// is no cycle, and g, which replaces a, takes a's machine by fleet's
    /// rule (the replacer wins) instead of being kept off it.
    fn replaced_back(&self, from: &str, to: &str) -> bool {
        let mut seen = BTreeSet::from([from.to_string()]);
        let mut todo = vec![from.to_string()];
        while let Some(n) = todo.pop() {
            let Some(e) = self.units.get(&n).filter(|e| e.wanted) else {
                continue;
            };
            if e.req.replaces_unit(to) {
                return true;
            }
            let replaced = self
                .units
                .keys()
                .filter(|o| !e.req.replaces.is_empty() && e.req.replaces_unit(o));
            let group = e
                .req
                .machine_of
                .iter()
                .chain(self.followers.get(&n).into_iter().flatten());
            for next in replaced.chain(group) {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        false
    }

    fn may_run(&self, u: &str, m: &str) -> bool {
        self.refusal(u, m).is_none()
    }

    /// A machine's rank now (the room and load of a machine not there are
    /// none).
    fn rank(&self, m: &str) -> Rank {
        self.machines.get(m).map_or((Reverse(0), 0), |s| {
            (Reverse(fit::room(s.capacity, s.used)), s.on.len())
        })
    }

    /// Moves `m` in [`Scheduler::by_room`] from its rank `before`.
    fn rerank(&mut self, m: &str, before: Rank) {
        let after = self.rank(m);
        if after != before {
            self.by_room.remove(&(before.0, before.1, m.to_string()));
            self.by_room.insert((after.0, after.1, m.to_string()));
        }
    }

    /// After `m`'s capacity changed: its units stay in name order while
    /// they fit; the rest wait for a machine. More room lets waiting
    /// units try again.
    fn refit(&mut self, m: &str) {
        let Some(slot) = self.machines.get(m) else {
            return;
        };
        let mut sum = Resources::ZERO;
        let mut out = Vec::new();
        for u in &slot.on {
            let need = self
                .units
                .get(u)
                .map_or(Resources::ZERO, |e| e.req.reservation);
            if need.is_zero() {
                continue;
            }
            if slot.capacity.covers(&sum.plus(need)) {
                sum = sum.plus(need);
            } else {
                out.push(u.clone());
            }
        }
        for u in out {
            self.unplace(&u, m);
            if self.units.get(&u).is_some_and(|e| e.wanted) {
                self.pending.insert(u);
            }
        }
        self.unblock_all();
    }

    /// The units `u` must share a machine with: its `MachineOf` peers,
    /// theirs, and so on.
    fn peers_of(&self, u: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut todo = vec![u.to_string()];
        while let Some(n) = todo.pop() {
            for p in self
                .units
                .get(&n)
                .map(|e| &e.req.machine_of)
                .into_iter()
                .flatten()
            {
                if out.insert(p.clone()) {
                    todo.push(p.clone());
                }
            }
        }
        out
    }

    fn place(&mut self, u: &str, m: &str) {
        self.evict_replaced(u, m);
        let before = self.rank(m);
        let Some(e) = self.units.get_mut(u) else {
            return;
        };
        e.on.insert(m.to_string());
        let ruled = e.ruled();
        let need = e.req.reservation;
        self.blocked.remove(u);
        let slot = self
            .machines
            .get_mut(m)
            .expect("placing on a known machine");
        if slot.on.insert(u.to_string()) {
            slot.used = slot.used.plus(need);
        }
        if ruled {
            slot.ruled.insert(u.to_string());
        }
        self.rerank(m, before);
        self.changed.insert(u.to_string());
        // Its followers that wait may follow it now.
        if let Some(f) = self.followers.get(u) {
            let waiting: Vec<String> = f
                .iter()
                .filter(|n| self.blocked.contains(*n))
                .cloned()
                .collect();
            for n in waiting {
                self.blocked.remove(&n);
                self.pending.insert(n);
            }
        }
    }

    /// Takes `u` off `m`. Its followers there are checked again, and units
    /// that waited may find room.
    fn unplace(&mut self, u: &str, m: &str) {
        let before = self.rank(m);
        let need = match self.units.get_mut(u) {
            Some(e) => {
                e.on.remove(m);
                e.req.reservation
            }
            None => Resources::ZERO,
        };
        if let Some(slot) = self.machines.get_mut(m) {
            if slot.on.remove(u) {
                slot.used = slot.used.minus(need);
            }
            slot.ruled.remove(u);
            if let Some(f) = self.followers.get(u) {
                self.recheck
                    .extend(f.iter().filter(|n| slot.on.contains(*n)).cloned());
            }
        }
        self.rerank(m, before);
        self.changed.insert(u.to_string());
        self.unblock_all();
    }

    fn unplace_everywhere(&mut self, u: &str) {
        let on: Vec<String> = self.placed_on(u).cloned().collect();
        for m in on {
            self.unplace(u, &m);
        }
    }

    fn unblock_all(&mut self) {
        let b = std::mem::take(&mut self.blocked);
        self.pending.extend(b);
    }

    fn follow(&mut self, name: &str, req: &Requirements) {
        for p in &req.machine_of {
            self.followers
                .entry(p.clone())
                .or_default()
                .insert(name.to_string());
        }
    }

    fn unfollow(&mut self, name: &str, peers: &[String]) {
        for p in peers {
            if let Some(f) = self.followers.get_mut(p) {
                f.remove(name);
                if f.is_empty() {
                    self.followers.remove(p);
                }
            }
        }
    }
}

/// Computes a placement from scratch: what may stay of `current` stays
/// (checked in name order), the rest is placed. Deterministic: the same
/// input gives the same output whatever the order of `machines` and
/// `units`.
pub fn schedule(machines: &[MachineInfo], units: &[UnitInfo], current: &Placement) -> Placement {
    let mut s = Scheduler::new();
    for m in machines {
        s.set_machine(&m.id, &m.metadata, m.capacity);
    }
    for u in units {
        s.set_unit(&u.name, u.wanted, &u.req);
    }
    s.resume(current);
    s.placement()
}

impl Scheduler {
    /// Starts from a stored placement (the engine's leader taking over):
    /// given the machines and units already, keeps what may stay of
    /// `current` (checked in name order) and places the rest, as
    /// [`schedule`] does.
    pub fn resume(&mut self, current: &Placement) {
        self.pending.clear();
        let names: Vec<String> = self.units.keys().cloned().collect();
        for n in &names {
            let on: Vec<String> = match self.units.get(n) {
                Some(e) if e.req.global => current
                    .global
                    .get(n)
                    .into_iter()
                    .flatten()
                    .cloned()
                    .collect(),
                _ => current.units.get(n).cloned().into_iter().collect(),
            };
            for m in on {
                self.keep(n, &m);
            }
        }
        // Every wanted unit gets its turn in the first pass (placed ones,
        // and global ones already everywhere, are passed over).
        self.recheck.clear();
        self.blocked.clear();
        self.pending = self
            .units
            .iter()
            .filter(|(_, e)| e.wanted)
            .map(|(n, _)| n.clone())
            .collect();
        self.run();
    }
}

#[cfg(test)]
mod fit_tests;
#[cfg(test)]
mod replaces_tests;
#[cfg(test)]
mod tests;
