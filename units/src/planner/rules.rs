//! The rules of the module documentation, applied to one unit at a time
//! ([`Planner::evaluate`]), through a work list: a unit is evaluated when
//! something it reads may have changed ([`Planner::run`]). The rules decide
//! *that* a unit starts or stops; what a start or stop does is the
//! lifecycle's ([`super::lifecycle`]).

use super::deps::DepCounts;
use super::lifecycle::Event;
use super::record::{NodeKind, Phase, Status};
use super::Planner;
use crate::graph::UnitId;
use crate::state::UnitState;

/// Units to evaluate, each at most once in the list.
#[derive(Debug, Default)]
pub(super) struct WorkList {
    list: Vec<UnitId>,
    listed: Vec<bool>,
}

impl WorkList {
    /// An empty list for `n` units.
    pub fn new(n: usize) -> WorkList {
        WorkList {
            list: Vec::new(),
            listed: vec![false; n],
        }
    }

    /// Adds `u` unless it is listed already.
    pub fn push(&mut self, u: UnitId) {
        if let Some(f) = self.listed.get_mut(u.index()) {
            if !*f {
                *f = true;
                self.list.push(u);
            }
        }
    }

    fn pop(&mut self) -> Option<UnitId> {
        let u = self.list.pop()?;
        self.listed[u.index()] = false;
        Some(u)
    }

    fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// The units whose state or status changed since the init last asked, each
/// once, in the order they changed.
#[derive(Debug, Default)]
pub(super) struct Changed {
    pub list: Vec<UnitId>,
    pub listed: Vec<bool>,
}

impl Changed {
    /// Adds `u` unless it is listed already.
    pub fn push(&mut self, u: UnitId) {
        if let Some(f) = self.listed.get_mut(u.index()) {
            if !*f {
                *f = true;
                self.list.push(u);
            }
        }
    }

    /// Takes the list.
    pub fn take(&mut self) -> Vec<UnitId> {
        for &u in &self.list {
            if let Some(f) = self.listed.get_mut(u.index()) {
                *f = false;
            }
        }
        std::mem::take(&mut self.list)
    }
}

impl Planner {
    pub(super) fn push(&mut self, id: UnitId) {
        self.work.push(id);
    }

    pub(super) fn push_all(&mut self) {
        for i in (0..self.units.len()).rev() {
            self.work.push(UnitId(i as u32));
        }
    }

    /// Evaluates until nothing is left to evaluate, handing out start
    /// slots as they free up.
    pub(super) fn run(&mut self) {
        loop {
            while let Some(u) = self.work.pop() {
                self.evaluate(u);
            }
            // Start slots freed: let queued units try again, in name order.
            let cap = self.opts.max_concurrent_starts.unwrap_or(usize::MAX);
            let mut progressed = false;
            while self.starting < cap {
                let Some(u) = self.start_queue.pop_first() else {
                    break;
                };
                self.units[u.index()].queued = false;
                self.units[u.index()].queued_turn = true;
                progressed = true;
                self.evaluate(u);
                self.units[u.index()].queued_turn = false;
            }
            if !progressed && self.work.is_empty() {
                // Triggered units that settled leave T (which may stop
                // what they pulled in).
                if !self.triggered.is_empty() && self.settle_triggered() {
                    continue;
                }
                break;
            }
        }
        if self.target_active_at.is_none()
            && self
                .target_provider
                .is_some_and(|p| self.state(p).is_active())
        {
            self.target_active_at = Some(self.now);
        }
    }

    /// The rules of the module documentation, for one unit.
    fn evaluate(&mut self, u: UnitId) {
        let i = u.index();
        if self.units[i].kind == NodeKind::Alternative {
            self.failover(u);
            self.wake_chosen(u);
        }
        let unit = &self.units[i];
        // A ghost is required only as a `not-found` unit held by its want
        // while it runs on (`not_found.rs`); others have no want.
        let required = self.required[i]
            && !self.shutting_down
            && !unit.masked
            && (!unit.ghost || super::not_found::runs_on(unit));

        // What its dependencies add up to, from the index: O(1) however
        // many there are; what blocks it and what it waits on are looked
        // up only when it is waiting.
        let c = self.index.counts[i];
        debug_assert_eq!(c, self.scan_counts(u), "dependency counts of {u:?}");
        let hold_ok = c.hold_bad == 0; // depends-on providers still fine for staying up

        let unit = &self.units[i];
        let degraded = c.degraded > 0 && unit.state.is_active();
        // A group target's node stays up while one of its providers is.
        let group_down = unit.kind == NodeKind::Group && self.no_provider_active(u, c);
        let unit = &self.units[i];
        let to_stop = unit.up()
            && (!required || unit.restart_requested || unit.spec_changed || !hold_ok || group_down);
        let degraded_changed = unit.degraded != degraded;
        let mut changed = degraded_changed || unit.to_stop != to_stop;
        let unit = &mut self.units[i];
        unit.degraded = degraded;
        unit.to_stop = to_stop;
        self.tell_dependents(u);
        // `degraded` is part of what a unit's status reports: watchers
        // (subscribe) hear of it like a state change.
        if degraded_changed {
            self.mark_changed(u);
        }

        let mut blocked_moved = false;
        match self.units[i].phase {
            Phase::Idle => {
                let (moved, blocked) = self.evaluate_idle(u, required, c);
                changed |= moved;
                blocked_moved = blocked;
            }
            Phase::Check
            | Phase::Condition(_)
            | Phase::Pre(_)
            | Phase::Main
            | Phase::Up
            | Phase::Reloading => {
                // Dependents stop first.
                if to_stop && !self.dependents_block_stop(u) {
                    let unit = &self.units[i];
                    let why = if !required {
                        if self.shutting_down {
                            "shutting down"
                        } else {
                            "not required"
                        }
                    } else if unit.spec_changed {
                        "definition changed"
                    } else if unit.restart_requested {
                        "restart requested"
                    } else if group_down {
                        "no provider active"
                    } else {
                        "dependency not active"
                    };
                    self.step(u, Event::Stop(why));
                    changed = true;
                }
            }
            Phase::Stopping | Phase::StopPost(_) => {}
        }
        self.tell_dependents(u);
        if changed {
            self.push_neighbours(u, blocked_moved);
        }
    }

    /// The rules for a unit with no process: start, leave `exited`, become
    /// `disabled`, or wait (and say on what). Returns whether it changed,
    /// and whether what blocks it changed.
    fn evaluate_idle(&mut self, u: UnitId, required: bool, c: DepCounts) -> (bool, bool) {
        let i = u.index();
        let hold_ok = c.hold_bad == 0;
        let state = self.units[i].state;
        if !required && self.units[i].ghost {
            self.let_go(u);
        }
        let restart = self.units[i].restart_requested;
        // One evaluation's: a start at once that cannot start now (up,
        // failed, stopping first) does not wait for its dependencies later.
        let at_once = std::mem::take(&mut self.units[i].start_at_once);
        let leaving_exited = state == UnitState::Exited && (!required || !hold_ok || restart);
        if leaving_exited && self.dependents_block_stop(u) {
            // Dependents first.
            return (false, false);
        }
        // Only an exited unit that is leaving looks at its stop commands
        // (the spec is not read on every evaluation).
        if leaving_exited && {
            let spec = self.spec_of(u);
            spec.exec_stop.is_some() || !spec.extras.exec_stop_post.is_empty()
        } {
            // An exited oneshot with stop commands: "stopping" runs them.
            let why = if !required {
                "not required"
            } else if restart {
                "restart requested"
            } else {
                "dependency not active"
            };
            self.step(u, Event::Stop(why));
            return (true, false);
        }
        if !required {
            // A triggered unit that failed keeps showing so, but not
            // through a shutdown, which ends with every unit disabled.
            if state == UnitState::Disabled
                || (state == UnitState::Failed && self.units[i].kept_failed && !self.shutting_down)
            {
                return (false, false);
            }
            self.clear_timer(u);
            self.units[i].restart_ready = false;
            self.set_blocked(i, None);
            self.set_state(u, UnitState::Disabled, "not required");
            // A oneshot that remained active becomes inactive now.
            if state == UnitState::Exited && self.spec_of(u).remain_after_exit() {
                self.start_on_success(u);
            }
            return (true, false);
        }
        if state == UnitState::Exited {
            if hold_ok {
                return (false, false);
            }
            self.set_state(u, UnitState::Waiting, "dependency not active");
            self.push(u);
            return (true, false);
        }
        if self.units[i].kind == NodeKind::Group {
            let none_active = self.no_provider_active(u, c);
            if state == UnitState::Failed && !none_active {
                // A provider is active again: the target is up again.
                self.set_blocked(i, None);
                self.step(u, Event::Start);
                return (true, false);
            }
            if c.waits_bad == 0 && none_active && state != UnitState::Failed {
                // Every provider has settled and none is active.
                self.set_blocked(i, None);
                self.set_state(u, UnitState::Failed, "no provider is active");
                return (true, false);
            }
        }
        if state == UnitState::Failed && !self.units[i].restart_ready {
            // Stays failed until its restart timer or a reset, unless it
            // is upheld.
            return (self.uphold_again(u), false);
        }
        let ready = c.hard_bad == 0 && c.waits_bad == 0;
        if ready && !at_once {
            if let Some(old) = self.old_provider_going(u) {
                let why = format!("waiting for {} to stop", self.graph.node(old).spec.name);
                return self.wait_with(u, state, why);
            }
        }
        if at_once || ready {
            // With a cap, every start goes through the queue so that slots
            // are handed out in name order (but one asked to start at once).
            let capped = self.opts.max_concurrent_starts.is_some() && !at_once;
            let unit = &mut self.units[i];
            if !unit.is_virtual && capped && !unit.queued_turn {
                if !unit.queued {
                    unit.queued = true;
                    self.start_queue.insert(u);
                }
                if state == UnitState::Waiting {
                    return (false, false);
                }
                self.set_state(u, UnitState::Waiting, "waiting for a start slot");
                return (true, false);
            }
            unit.queued_turn = false;
            self.set_blocked(i, None);
            self.step(u, Event::Start);
            return (true, false);
        }
        if c.blocking > 0 && self.uphold_again(u) {
            // Upheld: what failed under it starts again.
            return (true, false);
        }
        self.wait(u, state, c)
    }

    /// Whether none of the providers of the group target `u` is active.
    fn no_provider_active(&self, u: UnitId, c: DepCounts) -> bool {
        c.inactive as usize >= self.graph.deps(u).len()
    }

    /// A required unit that cannot start yet: `waiting`, with what it
    /// waits on (or what blocks it) as its status.
    fn wait(&mut self, u: UnitId, state: UnitState, c: DepCounts) -> (bool, bool) {
        let i = u.index();
        let blocked = if c.blocking > 0 {
            self.first_blocked(u)
        } else {
            None
        };
        let waited = if blocked.is_none() && c.waited > 0 {
            self.first_waited_on(u)
        } else {
            None
        };
        // The flag says whether there is a name to compare.
        let blocked_changed = (self.units[i].blocked || blocked.is_some())
            && self.records[i].rare().blocked_by != blocked;
        // The status, compared before it is formatted: most evaluations of
        // a waiting unit leave it as it is.
        let new = match (&blocked, waited) {
            (Some(b), _) => Status::Text(format!("blocked by {b}")),
            (None, Some(j)) => Status::WaitingFor(j as u32),
            (None, None) => Status::Fixed("waiting"),
        };
        let why = (!self.status_same(u, &new)).then_some(new);
        if state != UnitState::Waiting && state != UnitState::Failed {
            let why = why.unwrap_or_else(|| self.records[i].status.clone());
            self.set_blocked(i, blocked);
            self.set_state(u, UnitState::Waiting, why);
            return (true, blocked_changed);
        }
        let mut changed = false;
        if blocked_changed {
            self.set_blocked(i, blocked);
            self.mark_changed(u);
            changed = true;
        }
        // What it waits for changes as its dependencies start: the status
        // says what it waits for now.
        if state == UnitState::Waiting {
            if let Some(why) = why {
                self.records[i].status = why;
                self.mark_changed(u);
            }
        }
        (changed, blocked_changed)
    }

    /// A required unit whose dependencies are ready that waits all the
    /// same, for `why` (an alternative's old provider to stop).
    fn wait_with(&mut self, u: UnitId, state: UnitState, why: String) -> (bool, bool) {
        let i = u.index();
        let new = Status::Text(why);
        if state == UnitState::Waiting && self.status_same(u, &new) {
            return (false, false);
        }
        self.set_blocked(i, None);
        self.set_state(u, UnitState::Waiting, new);
        (true, false)
    }

    /// Whether unit `u`'s status says the same as `new`, compared without
    /// formatting either: two `waiting for` dependencies with different
    /// providers name different targets (a target's provider is looked up
    /// by its name), so only the edges are read for them.
    fn status_same(&self, u: UnitId, new: &Status) -> bool {
        fn text(s: &Status) -> Option<&str> {
            match s {
                Status::Fixed(t) => Some(t),
                Status::Text(t) => Some(t.as_str()),
                Status::WaitingFor(_) => None,
            }
        }
        let cur = &self.records[u.index()].status;
        let g = &self.graph;
        match (cur, new) {
            (Status::WaitingFor(a), Status::WaitingFor(b)) => {
                let prov = |j: u32| g.deps(u).get(j as usize).map(|e| e.provider);
                a == b || (prov(*a) == prov(*b) && g.dep_target(u, *a) == g.dep_target(u, *b))
            }
            (Status::WaitingFor(j), other) | (other, Status::WaitingFor(j)) => text(other)
                .and_then(|t| t.strip_prefix("waiting for "))
                .is_some_and(|t| t == g.dep_target(u, *j)),
            (x, y) => text(x) == text(y),
        }
    }

    /// Moves unit `u` to `state` with `status`, and tells whoever reads it.
    pub(super) fn set_state(&mut self, u: UnitId, state: UnitState, status: impl Into<Status>) {
        let now = self.now;
        let i = u.index();
        let unit = &mut self.units[i];
        let rec = &mut self.records[i];
        let moved = unit.state != state;
        if moved {
            rec.since = now;
            if state.is_active() && !unit.state.is_active() {
                rec.active_at = Some(now);
            }
            if matches!(state, UnitState::Failed | UnitState::Disabled)
                && unit.state != UnitState::Waiting
            {
                rec.end_at = Some(now);
            }
            // Inactive again: what a trigger told it is over (systemd
            // drops a unit's activation details so).
            if matches!(state, UnitState::Failed | UnitState::Disabled) {
                rec.rare_reset(|r| r.activated = None);
            }
        }
        unit.state = state;
        rec.status = status.into();
        self.tell_dependents(u);
        self.mark_changed(u);
        if moved {
            self.push(u);
            self.push_neighbours(u, false);
        }
    }

    /// Sets what blocks unit `i` (in its rare part) and its flag.
    pub(super) fn set_blocked(&mut self, i: usize, b: Option<String>) {
        if self.units[i].blocked || b.is_some() {
            self.units[i].blocked = b.is_some();
            if b.is_some() {
                self.records[i].rare_mut().blocked_by = b;
            } else {
                self.records[i].rare_reset(|r| r.blocked_by = None);
            }
        }
    }

    pub(super) fn mark_changed(&mut self, u: UnitId) {
        self.changed.push(u);
    }
}
