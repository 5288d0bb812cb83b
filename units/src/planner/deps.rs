//! The dependency index: what each unit's dependencies add up to
//! ([`DepCounts`]), kept current as providers move, so that evaluating a
//! unit costs O(1) however many dependencies it has (a target over a whole
//! fleet of services has thousands). A provider whose [`ProviderFlags`]
//! change updates the counts of its dependents ([`Planner::tell_dependents`]);
//! a unit whose flags change pushes the neighbours that read them
//! ([`Planner::push_neighbours`]). The edges themselves are the graph's
//! ([`crate::graph::Graph::deps`], [`crate::graph::Graph::dependents`]).

use super::record::{NodeKind, Unit};
use super::Planner;
use crate::graph::{Graph, UnitId};
use crate::state::{DepKind, UnitState};
use crate::targets::TargetMode;

/// What the units that depend on a unit read of it. One byte, since it is
/// computed and compared on every evaluation and kept per unit; read
/// through its methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct ProviderFlags(u8);

impl ProviderFlags {
    const ACTIVE: u8 = 1;
    const FAILED: u8 = 2;
    const WAITING: u8 = 4;
    const TO_STOP: u8 = 8;
    const DEGRADED: u8 = 16;
    const BLOCKED: u8 = 32;
    const REQUIRED: u8 = 64;

    pub fn of(u: &Unit) -> ProviderFlags {
        let bit = |on: bool, b: u8| if on { b } else { 0 };
        ProviderFlags(
            bit(u.state.is_active(), Self::ACTIVE)
                | bit(u.state == UnitState::Failed, Self::FAILED)
                | bit(u.state == UnitState::Waiting, Self::WAITING)
                | bit(u.to_stop, Self::TO_STOP)
                | bit(u.degraded, Self::DEGRADED)
                | bit(u.blocked, Self::BLOCKED)
                | bit(u.required, Self::REQUIRED),
        )
    }

    fn active(self) -> bool {
        self.0 & Self::ACTIVE != 0
    }

    fn failed(self) -> bool {
        self.0 & Self::FAILED != 0
    }

    fn waiting(self) -> bool {
        self.0 & Self::WAITING != 0
    }

    fn to_stop(self) -> bool {
        self.0 & Self::TO_STOP != 0
    }

    fn degraded(self) -> bool {
        self.0 & Self::DEGRADED != 0
    }

    fn blocked(self) -> bool {
        self.0 & Self::BLOCKED != 0
    }

    fn required(self) -> bool {
        self.0 & Self::REQUIRED != 0
    }
}

/// What the providers of a unit read of it: whether it still has to stop
/// before them ([`Planner::dependents_block_stop`], which is monotone in
/// each of these: one turning on never releases a provider). One byte, as
/// [`ProviderFlags`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct StopFlags(u8);

impl StopFlags {
    const UP: u8 = 1;
    const ACTIVE: u8 = 2;
    const TO_STOP: u8 = 4;
    const STOPPING: u8 = 8;

    pub fn of(u: &Unit) -> StopFlags {
        let bit = |on: bool, b: u8| if on { b } else { 0 };
        StopFlags(
            bit(u.up(), Self::UP)
                | bit(u.state.is_active(), Self::ACTIVE)
                | bit(u.to_stop, Self::TO_STOP)
                | bit(u.phase.stopping(), Self::STOPPING),
        )
    }

    /// Whether one of these was on and is off in `now`: the only change
    /// that can let a provider stop.
    fn released_by(self, now: StopFlags) -> bool {
        self.0 & !now.0 != 0
    }
}

/// A unit's dependencies summed up: how many stand in the way of each rule
/// of the evaluation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct DepCounts {
    /// `depends-on`/`depends-ms` whose provider is missing, not active, or
    /// to stop; `requires` whose provider is missing, will not run (failed,
    /// blocked) or is to stop.
    pub hard_bad: u32,
    /// The same, `depends-on` and `requires` only: what keeps a running
    /// unit up.
    pub hold_bad: u32,
    /// `waits-for` whose provider is not settled (active, failed or
    /// blocked), or is to stop.
    pub waits_bad: u32,
    /// Missing `waits-for` targets, and providers not active or degraded
    /// (not over `wants`, `requires`).
    pub degraded: u32,
    /// Hard dependencies that make the unit blocked: missing, or a bad
    /// provider that is failed or blocked itself.
    pub blocking: u32,
    /// Dependencies with a provider that the unit waits on (the bad ones
    /// of `hard_bad` and `waits_bad`): what its status names.
    pub waited: u32,
    /// `waits-for` providers that are missing or not active: a group
    /// target's node has a provider active while this is below its
    /// number of providers.
    pub inactive: u32,
}

impl DepCounts {
    /// What one dependency of `kind` on a provider with `flags` (or on a
    /// missing target) adds.
    pub fn edge(kind: DepKind, flags: Option<ProviderFlags>) -> DepCounts {
        if kind == DepKind::Requisite {
            // `depends-on` on a provider only while something else requires
            // it; one nothing requires counts as missing: it blocks.
            return DepCounts::edge(DepKind::DependsOn, flags.filter(|f| f.required()));
        }
        if kind == DepKind::PartOf {
            // Only the unit's stop (a restart's too) reaches the dependent:
            // it stops, and does not start until the unit is down.
            let stopping = u32::from(flags.is_some_and(ProviderFlags::to_stop));
            return DepCounts {
                hard_bad: stopping,
                hold_bad: stopping,
                waited: stopping,
                ..DepCounts::default()
            };
        }
        let hard = matches!(kind, DepKind::DependsOn | DepKind::DependsMs);
        let hold = kind == DepKind::DependsOn;
        if kind == DepKind::Wants {
            // Pulled in, nothing else: what becomes of it changes nothing
            // for the wanter (not even `degraded`).
            return DepCounts::default();
        }
        if kind == DepKind::Requires {
            // No ordering: only a provider that will not run (missing,
            // failed, blocked, or not required: it lost to a conflict) or
            // that is stopping keeps the requirer from starting, and stops
            // it. Never `degraded`: a requirer is not up without it.
            let wont_run = flags.is_none_or(|f| f.failed() || f.blocked() || !f.required());
            let bad = wont_run || flags.is_some_and(ProviderFlags::to_stop);
            return DepCounts {
                hard_bad: u32::from(bad),
                hold_bad: u32::from(bad),
                blocking: u32::from(wont_run),
                waited: u32::from(bad && flags.is_some()),
                ..DepCounts::default()
            };
        }
        if kind == DepKind::After {
            // Ordering only: a missing unit, or one that is not required,
            // is nothing to wait for; one that is required is waited for
            // until it is settled, as for `waits-for`. It never degrades
            // nor blocks.
            let waits = flags.is_some_and(|f| {
                f.required() && !(f.active() || f.failed() || (f.waiting() && f.blocked()))
            });
            return DepCounts {
                waits_bad: u32::from(waits),
                waited: u32::from(waits),
                ..DepCounts::default()
            };
        }
        let Some(f) = flags else {
            return if hard {
                DepCounts {
                    hard_bad: 1,
                    hold_bad: u32::from(hold),
                    blocking: 1,
                    ..DepCounts::default()
                }
            } else if kind == DepKind::WaitsFor {
                DepCounts {
                    degraded: 1,
                    inactive: 1,
                    ..DepCounts::default()
                }
            } else {
                DepCounts::default()
            };
        };
        if kind == DepKind::Standby {
            // Read by no rule (only by the stop order).
            return DepCounts::default();
        }
        let mut c = DepCounts {
            degraded: u32::from(!f.active() || f.degraded()),
            ..DepCounts::default()
        };
        if hard {
            let bad = !f.active() || f.to_stop();
            c.hard_bad = u32::from(bad);
            c.hold_bad = u32::from(bad && hold);
            // A provider that is not required lost to a conflict: it will
            // not start, so the dependent is blocked by it.
            c.blocking = u32::from(bad && (f.failed() || f.blocked() || !f.required()));
            c.waited = u32::from(bad);
        } else {
            // Settled: active, failed, or blocked (waiting on a failed or
            // missing hard dependency: for ordering, that is a failure), or
            // not required (it lost to a conflict: it will not start).
            let settled = f.active() || f.failed() || (f.waiting() && f.blocked()) || !f.required();
            c.waits_bad = u32::from(!settled || f.to_stop());
            c.waited = c.waits_bad;
            c.inactive = u32::from(!f.active());
        }
        c
    }

    fn add(&mut self, o: DepCounts) {
        self.hard_bad += o.hard_bad;
        self.hold_bad += o.hold_bad;
        self.waits_bad += o.waits_bad;
        self.degraded += o.degraded;
        self.blocking += o.blocking;
        self.waited += o.waited;
        self.inactive += o.inactive;
    }

    fn sub(&mut self, o: DepCounts) {
        self.hard_bad -= o.hard_bad;
        self.hold_bad -= o.hold_bad;
        self.waits_bad -= o.waits_bad;
        self.degraded -= o.degraded;
        self.blocking -= o.blocking;
        self.waited -= o.waited;
        self.inactive -= o.inactive;
    }
}

/// The index, one entry per unit of the graph.
#[derive(Debug, Default)]
pub(super) struct DepIndex {
    /// Its dependencies summed up.
    pub counts: Vec<DepCounts>,
    /// The flags its dependents' counts were last computed with.
    counted: Vec<ProviderFlags>,
    /// The flags its neighbours were last pushed for.
    pushed: Vec<(ProviderFlags, StopFlags)>,
    /// A dependency index before which no dependency is waited on: where
    /// the search for the one its status names starts.
    waited_from: Vec<u32>,
    /// The same for the dependencies that block it.
    blocked_from: Vec<u32>,
}

impl DepIndex {
    /// The index of `graph` with its units as they are now.
    pub fn new(graph: &Graph, units: &[Unit]) -> DepIndex {
        let counted: Vec<ProviderFlags> = units.iter().map(ProviderFlags::of).collect();
        let counts = graph
            .node_ids()
            .map(|u| {
                let mut c = DepCounts::default();
                for e in graph.deps(u) {
                    c.add(DepCounts::edge(
                        e.kind,
                        e.provider.and_then(|p| counted.get(p.index()).copied()),
                    ));
                }
                c
            })
            .collect();
        DepIndex {
            counts,
            pushed: units
                .iter()
                .map(|u| (ProviderFlags::of(u), StopFlags::of(u)))
                .collect(),
            counted,
            waited_from: vec![0; units.len()],
            blocked_from: vec![0; units.len()],
        }
    }
}

impl Planner {
    /// Rebuilds the dependency index from scratch (a new graph), and the
    /// graph's facts every evaluation reads (ghost, virtual, masked, what
    /// kind of node) into the units.
    pub(super) fn index_graph(&mut self) {
        for (id, u) in self.graph.node_ids().zip(&mut self.units) {
            let node = self.graph.node(id);
            u.ghost = node.ghost;
            u.masked = node.masked;
            u.is_virtual = node.spec.kind.row().runs == crate::spec::Runs::Nothing;
            u.kind = match self.graph.target_info(id).map(|t| t.mode) {
                None => NodeKind::Unit,
                Some(TargetMode::Group) => NodeKind::Group,
                Some(TargetMode::Alternative) => NodeKind::Alternative,
            };
            u.required = self.required.get(id.index()).copied().unwrap_or(false);
        }
        self.index = DepIndex::new(&self.graph, &self.units);
    }

    /// Counts `u`'s dependencies again from scratch (its edges changed:
    /// an alternative's choice moved).
    pub(super) fn recount(&mut self, u: UnitId) {
        let c = self.scan_counts(u);
        let i = u.index();
        if let Some(slot) = self.index.counts.get_mut(i) {
            *slot = c;
        }
        if let Some(w) = self.index.waited_from.get_mut(i) {
            *w = 0;
        }
        if let Some(b) = self.index.blocked_from.get_mut(i) {
            *b = 0;
        }
    }

    /// Takes `req` as the required set, telling the units ordered after
    /// the units that joined or left it (before any of them is evaluated,
    /// so that none reads a stale flag).
    pub(super) fn set_required(&mut self, req: Vec<bool>) {
        for (i, (&new, &old)) in req.iter().zip(&self.required).enumerate() {
            if new != old {
                self.work.push(UnitId(i as u32));
            }
        }
        self.required = req;
        for i in 0..self.units.len() {
            let new = self.required.get(i).copied().unwrap_or(false);
            if self.units[i].required != new {
                self.units[i].required = new;
                self.tell_dependents(UnitId(i as u32));
                self.push_neighbours(UnitId(i as u32), false);
            }
        }
    }

    /// `u`'s counts as a scan of its dependencies finds them now (to check
    /// the index in debug builds).
    pub(super) fn scan_counts(&self, u: UnitId) -> DepCounts {
        let mut c = DepCounts::default();
        for e in self.graph.deps(u) {
            c.add(DepCounts::edge(
                e.kind,
                e.provider
                    .map(|p| ProviderFlags::of(&self.units[p.index()])),
            ));
        }
        c
    }

    /// Tells `u`'s dependents that its [`ProviderFlags`] changed, if they
    /// did. Called wherever a unit's state, `to_stop`, `degraded` or
    /// `blocked` may have moved, so that the counts are always current:
    /// O(1) when nothing changed, O(dependents) when something did.
    pub(super) fn tell_dependents(&mut self, u: UnitId) {
        let i = u.index();
        let new = ProviderFlags::of(&self.units[i]);
        let DepIndex {
            counts,
            counted,
            waited_from,
            blocked_from,
            ..
        } = &mut self.index;
        let Some(told) = counted.get_mut(i) else {
            return;
        };
        let old = std::mem::replace(told, new);
        if old == new {
            return;
        }
        for d in self.graph.dependents(u) {
            let (was, now) = (
                DepCounts::edge(d.kind, Some(old)),
                DepCounts::edge(d.kind, Some(new)),
            );
            let k = d.unit.index();
            if let Some(c) = counts.get_mut(k) {
                c.sub(was);
                c.add(now);
            }
            if now.waited > was.waited {
                if let Some(w) = waited_from.get_mut(k) {
                    *w = (*w).min(d.index);
                }
            }
            if now.blocking > was.blocking {
                if let Some(b) = blocked_from.get_mut(k) {
                    *b = (*b).min(d.index);
                }
            }
        }
    }

    /// Pushes the neighbours of `id` that read something of it that
    /// changed since they were last pushed for it: its dependents when its
    /// [`ProviderFlags`] moved (or `blocked_moved`: they show its
    /// `blocked_by`); its providers on their way down when one of its
    /// [`StopFlags`] went off (a provider waits for its dependents to
    /// stop). A neighbour that reads nothing new would evaluate to what it
    /// is, so it is not pushed: a fact's work stays proportional to what it
    /// changes, even around a unit with thousands of neighbours.
    pub(super) fn push_neighbours(&mut self, id: UnitId, blocked_moved: bool) {
        let i = id.index();
        let Some(u) = self.units.get(i) else {
            return;
        };
        let now = (ProviderFlags::of(u), StopFlags::of(u));
        let was = match self.index.pushed.get_mut(i) {
            Some(s) => std::mem::replace(s, now),
            None => return,
        };
        if was.0 != now.0 || blocked_moved {
            for d in self.graph.dependents(id) {
                self.work.push(d.unit);
            }
        }
        if was.1.released_by(now.1) {
            // Only a provider on its way down (to stop, or an exited unit
            // that may leave) waits for its dependents, and only for those
            // ordered after it.
            let ordered = self.graph.deps(id).iter().filter(|e| e.kind.orders());
            for p in ordered.filter_map(|e| e.provider) {
                if self
                    .units
                    .get(p.index())
                    .is_some_and(|r| r.to_stop || r.state == UnitState::Exited)
                {
                    self.work.push(p);
                }
            }
            // An alternative's new provider waits for the old one to be
            // down (`targets.rs`): the nodes it stands by for look again.
            let standby = self
                .graph
                .dependents(id)
                .iter()
                .filter(|d| d.kind == DepKind::Standby);
            for d in standby {
                self.work.push(d.unit);
            }
        }
    }

    /// What blocks `u`: the first missing hard target, failed hard
    /// provider, or hard provider's own `blocked_by`, in dependency order.
    /// Searched from where the last search ended, as
    /// [`Planner::first_waited_on`].
    pub(super) fn first_blocked(&mut self, u: UnitId) -> Option<String> {
        let i = u.index();
        let from = self.index.blocked_from.get(i).copied().unwrap_or(0) as usize;
        let deps = self.graph.deps(u);
        let found = deps.iter().enumerate().skip(from).find(|(_, e)| {
            let f = e
                .provider
                .map(|p| ProviderFlags::of(&self.units[p.index()]));
            DepCounts::edge(e.kind, f).blocking > 0
        });
        if let Some(b) = self.index.blocked_from.get_mut(i) {
            *b = found.map_or(deps.len(), |(j, _)| j) as u32;
        }
        let (j, e) = found?;
        match e.provider {
            // A requisite nothing requires: the requisite is what blocks.
            Some(p)
                if e.kind == DepKind::Requisite
                    && !ProviderFlags::of(&self.units[p.index()]).required() =>
            {
                Some(self.graph.dep_target(u, j as u32).to_string())
            }
            Some(p) if self.units[p.index()].state != UnitState::Failed => {
                self.records[p.index()].rare().blocked_by.clone()
            }
            // A declared target's provider failed: the target is what fails
            // for what depends on it.
            Some(_) if self.graph.is_target(u) => Some(self.graph.node(u).spec.name.clone()),
            Some(_) => Some(self.graph.dep_target(u, j as u32).to_string()),
            None => {
                let target = self.graph.dep_target(u, j as u32);
                Some(match self.graph.masked_provider(target) {
                    Some(_) => crate::mask::BLOCKED_BY_MASKED.to_string(),
                    None => target.to_string(),
                })
            }
        }
    }

    /// The index of the first dependency (in order) that `u` still waits
    /// on. The search starts where the last one ended
    /// ([`Planner::tell_dependents`] moves that point back when an earlier
    /// dependency is waited on again), so a unit waiting on thousands of
    /// dependencies costs O(1) amortized per evaluation.
    pub(super) fn first_waited_on(&mut self, u: UnitId) -> Option<usize> {
        let i = u.index();
        let from = self.index.waited_from.get(i).copied().unwrap_or(0) as usize;
        let deps = self.graph.deps(u);
        let found = deps.iter().enumerate().skip(from).find_map(|(j, e)| {
            let f = ProviderFlags::of(&self.units[e.provider?.index()]);
            (DepCounts::edge(e.kind, Some(f)).waited > 0).then_some(j)
        });
        if let Some(w) = self.index.waited_from.get_mut(i) {
            *w = found.unwrap_or(deps.len()) as u32;
        }
        found
    }

    /// Whether some dependent of `u` is still up (or active) and will stop,
    /// so that `u` must wait: dependents stop before their dependencies.
    /// A dependent's own flag may be stale here (it may be evaluated later),
    /// so this anticipates: hard dependents always go first, and so does
    /// anything that is no longer required. A dependent that is not
    /// ordered after `u` (`wants`, `requires`) stops alongside it.
    pub(super) fn dependents_block_stop(&self, u: UnitId) -> bool {
        let mut ordered = self.graph.dependents(u).iter().filter(|d| d.kind.orders());
        ordered.any(|d| {
            let k = d.unit.index();
            let du = &self.units[k];
            let will_stop = du.to_stop
                || matches!(d.kind, DepKind::DependsOn | DepKind::Requisite)
                || !self.required[k]
                || self.shutting_down;
            ((du.up() || du.state.is_active()) && will_stop) || du.phase.stopping()
        })
    }
}
