//! A frozen copy of the planner as it was before the third optimisation
//! pass (branch `perf-planner`, from main at dbc7438), without its public
//! types (it uses the crate's): the reference of `planner_differential.rs`,
//! which feeds it and the current planner the same random scenarios and
//! requires identical actions, views, change sets and deadlines.
//!
//! It is a test oracle for work that must not change behaviour (the
//! planner's speed passes): it is not edited to follow the planner. A change
//! that alters a rule on purpose makes the same change here in the same
//! commit, or re-freezes this file from the new planner, and says so in
//! its message. Its actions follow the crate's `Action`: a spawn carries
//! its words, a kill says whom it signals (`push_kill`).
#![allow(dead_code, unused_imports, clippy::all)]

use flotilla_units::graph::{Graph, UnitId};
use flotilla_units::protocol::Applied;
use flotilla_units::spec::{defaults, Command, Origin, RestartPolicy, Signal, UnitSpec, UnitType};
use flotilla_units::state::{DepKind, UnitState};
use flotilla_units::time::Instant;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use flotilla_units::planner::{
    Action, ExitStatus, Fact, Notify, PlannerOptions, ReloadError, RestartError, Role, UnitView,
    UnknownTarget, Whom, MIN_RESTART_DELAY,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Pre(u16),
    Main,
    Up,
    Reloading,
    Stopping { killed: bool },
    StopPost(u16),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timer {
    Start,
    ReadyWait,
    Reload,
    Stop,
    Abandon,
    Restart,
    /// Read the pidfile again (it was not there yet).
    Pidfile,
}

/// The run-time record of a unit.
#[derive(Debug, Clone)]
struct Rt {
    phase: Phase,
    state: UnitState,
    since: Instant,
    /// The main process.
    main_pid: Option<i32>,
    /// A helper process (pre, stop, stop-post, reload) and its role.
    aux: Option<(Role, Option<i32>)>,
    /// The definition the current processes run with.
    active: Option<Arc<UnitSpec>>,
    timer: Option<(Instant, Timer)>,
    timer_gen: u64,
    /// Why the current stop happens, when it is a failure.
    failure: Option<String>,
    /// Exit status of the main process, to decide on restarts.
    restart_due: bool,
    /// The next restart attempt is allowed (the restart timer fired).
    restart_ready: bool,
    restart_requested: bool,
    spec_changed: bool,
    to_stop: bool,
    degraded: bool,
    blocked_by: Option<String>,
    queued: bool,
    /// Evaluated because the queue gave it a start slot.
    queued_turn: bool,
    attempt: u32,
    restarts: u32,
    status: String,
    /// What `status` was last written as by the waiting rule: 1 for
    /// `waiting`, `j + 2` for `waiting for` dependency `j`; 0 when unknown.
    /// Every other write of `status` resets it.
    status_key: u32,
    notify_status: Option<String>,
    start_at: Option<Instant>,
    active_at: Option<Instant>,
    end_at: Option<Instant>,
    ready_seen: bool,
    /// The main process exited 0 by itself (the unit is `exited` after stop-post).
    exit_ok: bool,
    /// The unit said `STOPPING=1`: it is stopping by itself, so its exit
    /// is judged as an exit while `Up`, not as a stop the init asked for.
    self_stop: bool,
    /// The main process that just ended, whose process group (every spawn
    /// leads one; a forking daemon's `setsid` makes one) is SIGKILLed once
    /// the unit is down, so that nothing it left behind keeps running.
    dead_leader: Option<i32>,
    /// The process group a `background-scripted` start script left behind
    /// (its PID: it led the group); what a stop signals when there is no
    /// main process.
    script_group: Option<i32>,
    /// Reads of the pidfile that found no usable PID in this start.
    pidfile_tries: u32,
    /// The start-timeout deadline while the pidfile is awaited (the retry
    /// timer takes the unit's one timer slot).
    pidfile_deadline: Option<Instant>,
}

impl Rt {
    fn new(now: Instant) -> Rt {
        Rt {
            phase: Phase::Idle,
            state: UnitState::Disabled,
            since: now,
            main_pid: None,
            aux: None,
            active: None,
            timer: None,
            timer_gen: 0,
            failure: None,
            restart_due: false,
            restart_ready: false,
            restart_requested: false,
            spec_changed: false,
            to_stop: false,
            degraded: false,
            blocked_by: None,
            queued: false,
            queued_turn: false,
            attempt: 0,
            restarts: 0,
            status: String::new(),
            status_key: 0,
            notify_status: None,
            start_at: None,
            active_at: None,
            end_at: None,
            ready_seen: false,
            exit_ok: false,
            self_stop: false,
            dead_leader: None,
            script_group: None,
            pidfile_tries: 0,
            pidfile_deadline: None,
        }
    }

    fn up(&self) -> bool {
        matches!(
            self.phase,
            Phase::Pre(_) | Phase::Main | Phase::Up | Phase::Reloading
        )
    }

    fn starting(&self) -> bool {
        matches!(self.phase, Phase::Pre(_) | Phase::Main)
    }
}

/// The planner: see the module documentation.
#[derive(Debug)]
pub struct Planner {
    graph: Graph,
    rt: Vec<Rt>,
    target: String,
    /// `graph.provider(&target)`, looked up when either changes (not
    /// hashed on every `run`).
    target_provider: Option<UnitId>,
    required: Vec<bool>,
    shutting_down: bool,
    opts: PlannerOptions,
    now: Instant,
    work: Vec<UnitId>,
    in_work: Vec<bool>,
    ready_queue: BTreeSet<UnitId>,
    starting: usize,
    heap: BinaryHeap<Reverse<(Instant, u32, u64)>>,
    pids: HashMap<i32, (UnitId, Role), BuildHasherDefault<PidHasher>>,
    actions: Vec<Action>,
    /// The words of each `Action::Spawn` in `actions`, in order.
    changed: Vec<UnitId>,
    changed_flag: Vec<bool>,
    target_set_at: Instant,
    target_active_at: Option<Instant>,
    /// Per unit, what its dependencies add up to ([`DepCounts`]), kept
    /// current as providers change, so that evaluating a unit does not walk
    /// its dependencies.
    counts: Vec<DepCounts>,
    /// Per unit, the [`dep_flags`] its dependents' counts were last told.
    told: Vec<u8>,
    /// Per provider, its dependents with the index of the dependency in
    /// their list and its kind: the edges [`Planner::sync`] updates, in the
    /// order of [`flotilla_units::graph::Node::dependents`]. Flat: provider `p`'s
    /// are `rdeps[rdep_at[p]..rdep_at[p + 1]]` (no pointer to chase, no
    /// allocation per unit).
    rdeps: Vec<(UnitId, u32, DepKind)>,
    rdep_at: Vec<u32>,
    /// Per unit, its dependencies' providers and kinds, in the order of
    /// [`flotilla_units::graph::Node::deps`], flat like `rdeps`: what the hot paths
    /// read of a dependency, without the 40-byte [`flotilla_units::graph::Dep`].
    fdeps: Vec<(Option<UnitId>, DepKind)>,
    fdep_at: Vec<u32>,
    /// Per unit, [`U_GHOST`] and [`U_VIRTUAL`]: read on every evaluation,
    /// kept here so that it does not touch the graph node and the spec.
    ukind: Vec<u8>,
    /// Per unit, a dependency index before which no dependency is waited
    /// on: where the search for the one its status names starts.
    waited_from: Vec<u32>,
    /// Per unit, the same for the dependencies that block it.
    blocked_from: Vec<u32>,
    /// Per unit, the [`dep_flags`] and [`stop_flags`] its neighbours were
    /// last pushed for ([`Planner::push_neighbours`]).
    seen: Vec<(u8, u8)>,
}

impl Planner {
    /// A planner for `graph` with nothing running yet. It starts reaching
    /// `target` at once if some unit provides it; otherwise every unit stays
    /// `disabled` until [`Planner::set_target`] names a known target.
    pub fn new(graph: Graph, target: &str, now: Instant, opts: PlannerOptions) -> Planner {
        let n = graph.len();
        let mut p = Planner {
            rt: (0..n).map(|_| Rt::new(now)).collect(),
            required: vec![false; n],
            graph,
            target: target.to_string(),
            target_provider: None,
            shutting_down: false,
            opts,
            now,
            work: Vec::new(),
            in_work: vec![false; n],
            ready_queue: BTreeSet::new(),
            starting: 0,
            heap: BinaryHeap::new(),
            pids: HashMap::default(),
            actions: Vec::new(),
            changed: Vec::new(),
            changed_flag: vec![false; n],
            target_set_at: now,
            target_active_at: None,
            counts: Vec::new(),
            told: Vec::new(),
            rdeps: Vec::new(),
            rdep_at: Vec::new(),
            fdeps: Vec::new(),
            fdep_at: Vec::new(),
            ukind: Vec::new(),
            waited_from: Vec::new(),
            blocked_from: Vec::new(),
            seen: Vec::new(),
        };
        p.recount();
        p.target_provider = p.graph.provider(target);
        p.required = p.required_set(target).unwrap_or_else(|| vec![false; n]);
        p.push_all();
        p.run();
        p
    }

    // ----- queries -------------------------------------------------------

    /// The graph.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The current target.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Whether the system is shutting down.
    pub fn shutting_down(&self) -> bool {
        self.shutting_down
    }

    /// Whether `id` is required by the current target.
    pub fn is_required(&self, id: UnitId) -> bool {
        self.required.get(id.index()).copied().unwrap_or(false)
    }

    /// The state of unit `id`.
    pub fn state(&self, id: UnitId) -> UnitState {
        self.rt.get(id.index()).map(|r| r.state).unwrap_or_default()
    }

    /// The full view of unit `id`.
    pub fn view(&self, id: UnitId) -> Option<UnitView> {
        let r = self.rt.get(id.index())?;
        let restart_at = match r.timer {
            Some((t, Timer::Restart)) => Some(t),
            _ => None,
        };
        let status = if let Some(s) = r.notify_status.as_ref().filter(|_| r.up()) {
            s.clone()
        } else if let Some(t) = restart_at {
            let d = t.since(self.now);
            format!("{}; restart in {}", r.status, short(d))
        } else {
            r.status.clone()
        };
        Some(UnitView {
            state: r.state,
            since: r.since,
            pid: r.main_pid,
            degraded: r.degraded,
            blocked_by: r.blocked_by.clone(),
            restarts: r.restarts,
            status,
            restart_at,
            required: self.is_required(id),
            start_at: r.start_at,
            active_at: r.active_at,
            end_at: r.end_at,
        })
    }

    /// The state of the current target (its provider's), or `None` if no
    /// unit provides it.
    pub fn target_state(&self) -> Option<UnitState> {
        self.graph.provider(&self.target).map(|p| self.state(p))
    }

    /// Whether anything in the required set is not active, or the target's
    /// provider is degraded.
    pub fn degraded(&self) -> bool {
        match self.graph.provider(&self.target) {
            Some(p) => self.rt[p.index()].degraded || !self.rt[p.index()].state.is_active(),
            None => true,
        }
    }

    /// When the target was last set, and when it last became active.
    pub fn target_times(&self) -> (Instant, Option<Instant>) {
        (self.target_set_at, self.target_active_at)
    }

    /// The targets of `id` that are up only because another of its targets
    /// is required.
    pub fn coincidental(&self, id: UnitId) -> Vec<String> {
        let Some(node) = self.graph.get(id) else {
            return Vec::new();
        };
        if self.state(id) == UnitState::Disabled || node.ghost {
            return Vec::new();
        }
        node.spec
            .provides
            .iter()
            .filter(|t| {
                **t != self.target
                    && !self.graph.dependents(id).iter().any(|d| {
                        self.is_required(d.unit)
                            && self.graph.named_deps(d.unit).any(|dep| dep.target == **t)
                    })
            })
            .cloned()
            .collect()
    }

    /// Whether the target is settled: `Some(true)` when its provider is
    /// active, `Some(false)` when it failed or is blocked, `None` while it is
    /// still on its way (or the target is unknown).
    pub fn target_settled(&self) -> Option<bool> {
        let p = self.graph.provider(&self.target)?;
        let r = &self.rt[p.index()];
        if r.state.is_active() {
            Some(true)
        } else if r.state == UnitState::Failed
            || (r.state == UnitState::Waiting && r.blocked_by.is_some())
        {
            Some(false)
        } else {
            None
        }
    }

    /// The required units that are failed.
    pub fn failed_units(&self) -> Vec<UnitId> {
        self.graph
            .ids()
            .filter(|&i| self.is_required(i) && self.state(i) == UnitState::Failed)
            .collect()
    }

    /// Whether every unit is idle and disabled (after shutdown).
    pub fn drained(&self) -> bool {
        self.rt
            .iter()
            .all(|r| r.phase == Phase::Idle && r.state == UnitState::Disabled)
    }

    /// The unit and role a PID belongs to, if any.
    pub fn owner(&self, pid: i32) -> Option<(UnitId, Role)> {
        self.pids.get(&pid).copied()
    }

    /// The earliest pending deadline: the init's poll timeout.
    pub fn next_deadline(&mut self) -> Option<Instant> {
        while let Some(Reverse((t, u, gen))) = self.heap.peek().copied() {
            let live = self
                .rt
                .get(u as usize)
                .is_some_and(|r| r.timer_gen == gen && r.timer.is_some());
            if live {
                return Some(t);
            }
            self.heap.pop();
        }
        None
    }

    /// Takes the actions decided so far.
    pub fn take_actions(&mut self) -> Vec<Action> {
        std::mem::take(&mut self.actions)
    }

    /// Takes the units whose state (or status) changed since the last call.
    pub fn take_changed(&mut self) -> Vec<UnitId> {
        for &u in &self.changed {
            if let Some(f) = self.changed_flag.get_mut(u.index()) {
                *f = false;
            }
        }
        std::mem::take(&mut self.changed)
    }

    // ----- inputs --------------------------------------------------------

    /// Switches to `target`. Units outside its required set stop (dependents
    /// first); failed units inside it get a fresh start.
    pub fn set_target(&mut self, target: &str, now: Instant) -> Result<(), UnknownTarget> {
        self.now = now;
        let req = self
            .required_set(target)
            .ok_or_else(|| UnknownTarget(target.to_string()))?;
        if self.shutting_down {
            return Ok(());
        }
        self.target = target.to_string();
        self.target_provider = self.graph.provider(target);
        self.target_set_at = now;
        self.target_active_at = None;
        let flipped: Vec<UnitId> = (0..req.len())
            .filter(|&i| req[i] != self.required[i])
            .map(|i| UnitId(i as u32))
            .collect();
        for u in flipped {
            self.push(u);
        }
        self.required = req;
        for i in 0..self.rt.len() {
            if self.required[i]
                && self.rt[i].state == UnitState::Failed
                && self.rt[i].phase == Phase::Idle
            {
                self.reset_failed(UnitId(i as u32));
            }
        }
        self.run();
        Ok(())
    }

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
        let r = &mut self.rt[id.index()];
        if r.up() {
            r.restart_requested = true;
            r.attempt = 0;
        } else if r.phase == Phase::Idle {
            self.reset_failed(id);
            if self.rt[id.index()].state == UnitState::Exited {
                self.set_state(id, UnitState::Waiting, "restart requested");
            }
        }
        self.push(id);
        self.run();
        Ok(id)
    }

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
        let i = id.index();
        if self.rt[i].phase != Phase::Up || self.rt[i].to_stop {
            return Err(ReloadError::NotRunning(name.to_string()));
        }
        let spec = self.rt[i]
            .active
            .clone()
            .unwrap_or_else(|| self.graph.node(id).spec.clone());
        let Some(cmd) = spec.exec_reload.clone() else {
            return Err(ReloadError::NoReloadCommand(name.to_string()));
        };
        self.rt[i].phase = Phase::Reloading;
        self.set_timer(id, spec.start_timeout, Timer::Reload);
        self.set_state(id, UnitState::Reloading, "reloading");
        self.spawn(id, Role::Reload, &cmd);
        self.run();
        Ok(id)
    }

    /// Begins an orderly shutdown: every unit stops, dependents first.
    pub fn shutdown(&mut self, now: Instant) {
        self.now = now;
        self.shutting_down = true;
        self.push_all();
        self.run();
    }

    /// Feeds one fact.
    pub fn fact(&mut self, fact: Fact, now: Instant) {
        self.now = now;
        match fact {
            Fact::Spawned { unit, role, pid } => self.on_spawned(unit, role, pid),
            Fact::SpawnFailed { unit, role, error } => self.on_spawn_failed(unit, role, error),
            Fact::Exited { pid, status } => {
                if let Some((unit, role)) = self.pids.remove(&pid) {
                    self.on_exit(unit, role, pid, status);
                }
            }
            Fact::Notify { unit, msg } => self.on_notify(unit, msg),
            Fact::ReadyLine { unit } => {
                if self
                    .rt
                    .get(unit.index())
                    .is_some_and(|r| r.phase == Phase::Main)
                {
                    self.become_up(unit, "ready (output matched)");
                }
            }
            Fact::Pidfile { unit, result } => self.on_pidfile(unit, result),
        }
        self.run();
    }

    /// Handles every deadline up to `now`.
    pub fn tick(&mut self, now: Instant) {
        self.now = now;
        while let Some(Reverse((t, u, gen))) = self.heap.peek().copied() {
            if t > now {
                break;
            }
            self.heap.pop();
            let Some(r) = self.rt.get(u as usize) else {
                continue;
            };
            if r.timer_gen != gen {
                continue;
            }
            let Some((_, kind)) = r.timer else { continue };
            self.rt[u as usize].timer = None;
            self.on_timer(UnitId(u), kind);
        }
        self.run();
    }

    /// Replaces the unit set (reload, transient units). Unchanged units keep
    /// their processes; changed ones that are up restart with the new
    /// definition; removed ones that are up stop (as "ghosts" that provide
    /// nothing). With `strict`, any error refuses the whole set and nothing
    /// changes. Returns what changed, the warnings, and for each old unit id
    /// its new id.
    pub fn replace_units(
        &mut self,
        units: Vec<(UnitSpec, Origin)>,
        strict: bool,
        now: Instant,
    ) -> Result<(Applied, Vec<Option<UnitId>>), Vec<flotilla_units::diag::Diagnostic>> {
        self.now = now;
        let ghosts: Vec<(Arc<UnitSpec>, Origin)> = self
            .graph
            .ids()
            .filter(|&i| self.rt[i.index()].phase != Phase::Idle)
            .filter(|&i| {
                let name = &self.graph.node(i).spec.name;
                self.graph.node(i).ghost || !units.iter().any(|(s, _)| &s.name == name)
            })
            .map(|i| {
                let n = self.graph.node(i);
                (
                    self.rt[i.index()]
                        .active
                        .clone()
                        .unwrap_or_else(|| n.spec.clone()),
                    n.origin.clone(),
                )
            })
            .collect();
        let built = if strict {
            Graph::build_with_ghosts(units, ghosts)
        } else {
            let (g, d) = {
                let (g, d) = Graph::build(units);
                // Lenient: rebuild with ghosts from the surviving units.
                let survivors: Vec<(UnitSpec, Origin)> =
                    g.units().map(|(s, o)| ((**s).clone(), o.clone())).collect();
                match Graph::build_with_ghosts(survivors, ghosts) {
                    Ok((g2, _)) => (g2, d),
                    Err(_) => (g, d),
                }
            };
            Ok((g, d))
        };
        let (graph, diags) = built?;
        let mut applied = Applied {
            warnings: diags
                .iter()
                .filter(|d| !d.is_error())
                .map(|d| d.to_string())
                .collect(),
            ..Applied::default()
        };
        let old = std::mem::replace(&mut self.graph, graph);
        self.target_provider = self.graph.provider(&self.target);
        let mut old_rt = std::mem::take(&mut self.rt);
        let n = self.graph.len();
        let mut map: Vec<Option<UnitId>> = vec![None; old.len()];
        let mut rt = Vec::with_capacity(n);
        for id in self.graph.ids() {
            let node = self.graph.node(id);
            match old.unit(&node.spec.name) {
                Some(oid) => {
                    map[oid.index()] = Some(id);
                    let mut r = std::mem::replace(&mut old_rt[oid.index()], Rt::new(now));
                    let onode = old.node(oid);
                    if !node.ghost && (onode.spec != node.spec || onode.ghost) {
                        if !onode.ghost {
                            applied.changed.push(node.spec.name.clone());
                        } else {
                            applied.added.push(node.spec.name.clone());
                        }
                        if r.up() {
                            r.spec_changed = true;
                        }
                        r.attempt = 0;
                        if r.phase == Phase::Idle && r.state == UnitState::Failed {
                            r.state = UnitState::Waiting;
                            r.timer = None;
                            r.failure = None;
                        }
                    } else if !node.ghost {
                        applied.unchanged += 1;
                    }
                    rt.push(r);
                }
                None => {
                    applied.added.push(node.spec.name.clone());
                    rt.push(Rt::new(now));
                }
            }
        }
        for oid in old.ids() {
            let onode = old.node(oid);
            if !onode.ghost
                && self
                    .graph
                    .unit(&onode.spec.name)
                    .is_none_or(|i| self.graph.node(i).ghost)
            {
                applied.removed.push(onode.spec.name.clone());
            }
        }
        self.rt = rt;
        for r in &mut self.rt {
            r.queued = false;
            // The dependency indices may have moved.
            r.status_key = 0;
        }
        self.pids = self
            .pids
            .drain()
            .filter_map(|(pid, (u, role))| {
                map.get(u.index())
                    .copied()
                    .flatten()
                    .map(|nu| (pid, (nu, role)))
            })
            .collect();
        self.heap.clear();
        for (i, r) in self.rt.iter().enumerate() {
            if let Some((t, _)) = r.timer {
                self.heap.push(Reverse((t, i as u32, r.timer_gen)));
            }
        }
        self.ready_queue.clear();
        self.starting = self.rt.iter().filter(|r| r.starting()).count();
        self.in_work = vec![false; n];
        self.work.clear();
        self.changed_flag = vec![false; n];
        self.changed = self
            .changed
            .iter()
            .filter_map(|u| map.get(u.index()).copied().flatten())
            .collect();
        for &u in &self.changed {
            self.changed_flag[u.index()] = true;
        }
        self.actions = std::mem::take(&mut self.actions)
            .into_iter()
            .filter_map(|a| remap_action(a, &map))
            .collect();
        self.recount();
        self.required = self
            .required_set(&self.target)
            .unwrap_or_else(|| vec![false; n]);
        self.push_all();
        self.run();
        Ok((applied, map))
    }

    /// [`Graph::required_set`], walked over the flat dependency lists
    /// (the same set, without touching every graph node).
    fn required_set(&self, target: &str) -> Option<Vec<bool>> {
        let root = self.graph.provider(target)?;
        let mut req = vec![false; self.rt.len()];
        let mut work = vec![root];
        req[root.index()] = true;
        while let Some(u) = work.pop() {
            for &(p, _) in edges_of(&self.fdep_at, &self.fdeps, u.index()) {
                if let Some(p) = p {
                    if !req[p.index()] {
                        req[p.index()] = true;
                        work.push(p);
                    }
                }
            }
        }
        Some(req)
    }

    // ----- the work list ---------------------------------------------------

    fn push(&mut self, id: UnitId) {
        if let Some(f) = self.in_work.get_mut(id.index()) {
            if !*f {
                *f = true;
                self.work.push(id);
            }
        }
    }

    fn push_all(&mut self) {
        for i in (0..self.rt.len()).rev() {
            self.push(UnitId(i as u32));
        }
    }

    /// Pushes the neighbours of `id` that read something of it that
    /// changed since they were last pushed for it: its dependents when its
    /// [`dep_flags`] moved (or `blocked_moved`: they show its `blocked_by`);
    /// its providers on their way down when one of its [`stop_flags`] went
    /// off (a provider waits for its dependents to stop). A neighbour that
    /// reads nothing new would evaluate to what it is, so it is not pushed:
    /// a fact's work stays proportional to what it changes, even around a
    /// unit with thousands of neighbours.
    fn push_neighbours(&mut self, id: UnitId) {
        self.push_neighbours_or_blocked(id, false);
    }

    fn push_neighbours_or_blocked(&mut self, id: UnitId, blocked_moved: bool) {
        let i = id.index();
        let Some(r) = self.rt.get(i) else {
            return;
        };
        let now = (dep_flags(r), stop_flags(r));
        let was = match self.seen.get_mut(i) {
            Some(s) => std::mem::replace(s, now),
            None => return,
        };
        let Planner {
            in_work,
            work,
            rt,
            rdeps,
            rdep_at,
            fdeps,
            fdep_at,
            ..
        } = self;
        let mut push = |u: UnitId| {
            if let Some(f) = in_work.get_mut(u.index()) {
                if !*f {
                    *f = true;
                    work.push(u);
                }
            }
        };
        if was.0 != now.0 || blocked_moved {
            for &(d, _, _) in edges_of(rdep_at, rdeps, i) {
                push(d);
            }
        }
        // Whether a dependent still holds its providers' stop back is
        // monotone in these flags: only a flag going off can release one,
        // and only a provider on its way down (to stop, or an exited unit
        // that may leave) waits for that.
        if was.1 & !now.1 != 0 {
            for p in edges_of(fdep_at, fdeps, i).iter().filter_map(|d| d.0) {
                if rt
                    .get(p.index())
                    .is_some_and(|r| r.to_stop || r.state == UnitState::Exited)
                {
                    push(p);
                }
            }
        }
    }

    fn run(&mut self) {
        loop {
            while let Some(u) = self.work.pop() {
                self.in_work[u.index()] = false;
                self.evaluate(u);
            }
            // Start slots freed: let queued units try again, in name order.
            let cap = self.opts.max_concurrent_starts.unwrap_or(usize::MAX);
            let mut progressed = false;
            while self.starting < cap {
                let Some(u) = self.ready_queue.pop_first() else {
                    break;
                };
                self.rt[u.index()].queued = false;
                self.rt[u.index()].queued_turn = true;
                progressed = true;
                self.evaluate(u);
                self.rt[u.index()].queued_turn = false;
            }
            if !progressed && self.work.is_empty() {
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
        let ghost = self.ukind[i] & U_GHOST != 0;
        let required = self.required[i] && !self.shutting_down && !ghost;

        // Hard dependencies: all active (and not leaving)? Read from the
        // running counts, so that a unit with thousands of dependencies (a
        // target over a whole fleet of services) costs O(1) here; what blocks
        // it and what it waits on are looked up only when it is waiting.
        let c = self.counts[i];
        debug_assert_eq!(c, self.scan_counts(u), "dependency counts of {u:?}");
        let hard_ok = c.hard_bad == 0;
        let hold_ok = c.hold_bad == 0; // depends-on providers still fine for staying up
        let waits_ok = c.waits_bad == 0;
        let degraded = c.degraded > 0;

        let r = &self.rt[i];
        let degraded = degraded && r.state.is_active();
        let to_stop = r.up() && (!required || r.restart_requested || r.spec_changed || !hold_ok);
        let mut changed = false;
        let mut blocked_moved = false;
        let degraded_changed = r.degraded != degraded;
        if degraded_changed || r.to_stop != to_stop {
            changed = true;
        }
        {
            let r = &mut self.rt[i];
            r.degraded = degraded;
            r.to_stop = to_stop;
        }
        self.sync(u);
        // `degraded` is part of what a unit's status reports: watchers
        // (subscribe) hear of it like a state change. It used to change
        // silently.
        if degraded_changed {
            self.mark_changed(u);
        }

        match self.rt[i].phase {
            Phase::Idle => {
                let state = self.rt[i].state;
                let leaving_exited = state == UnitState::Exited && (!required || !hold_ok);
                // Only an exited unit that is leaving looks at its stop
                // commands (the spec is not read on every evaluation).
                let has_stop = leaving_exited && {
                    let sp = self.rt[i]
                        .active
                        .as_ref()
                        .unwrap_or(&self.graph.node(u).spec);
                    sp.exec_stop.is_some() || !sp.exec_stop_post.is_empty()
                };
                if leaving_exited && self.dependents_block_stop(u) {
                    // Dependents first.
                } else if leaving_exited && has_stop {
                    // An exited oneshot with exec-stop: "stopping" runs it.
                    let why = if required {
                        "dependency not active"
                    } else {
                        "not required"
                    };
                    self.stop_exited(u, why);
                    changed = true;
                } else if !required {
                    if state != UnitState::Disabled {
                        self.clear_timer(u);
                        self.rt[i].restart_ready = false;
                        self.rt[i].blocked_by = None;
                        self.set_state(u, UnitState::Disabled, "not required");
                        changed = true;
                    }
                } else if state == UnitState::Exited {
                    if !hold_ok {
                        self.set_state(u, UnitState::Waiting, "dependency not active");
                        changed = true;
                        self.push(u);
                    }
                } else if state == UnitState::Failed && !self.rt[i].restart_ready {
                    // Stays failed until its restart timer or a reset.
                } else if hard_ok && waits_ok {
                    // With a cap, every start goes through the queue so that
                    // slots are handed out in name order.
                    let capped = self.opts.max_concurrent_starts.is_some();
                    if self.ukind[i] & U_VIRTUAL == 0 && capped && !self.rt[i].queued_turn {
                        if !self.rt[i].queued {
                            self.rt[i].queued = true;
                            self.ready_queue.insert(u);
                        }
                        if state != UnitState::Waiting {
                            self.set_state(u, UnitState::Waiting, "waiting for a start slot");
                            changed = true;
                        }
                    } else {
                        self.rt[i].queued_turn = false;
                        self.rt[i].blocked_by = None;
                        self.begin_start(u);
                        changed = true;
                    }
                } else {
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
                    let blocked_changed = self.rt[i].blocked_by != blocked;
                    blocked_moved = blocked_changed;
                    // The status, compared before it is formatted: most
                    // evaluations of a waiting unit leave it as it is.
                    // The status as a key ([`Rt::status_key`]): when it is
                    // the one the status was last written for, the text is
                    // the same and neither it nor the target name is read.
                    let key = match (&blocked, waited) {
                        (Some(_), _) => 0,
                        (None, Some(j)) => j as u32 + 2,
                        (None, None) => 1,
                    };
                    let why = if key != 0 && self.rt[i].status_key == key {
                        None
                    } else {
                        let (prefix, name) = match (&blocked, waited) {
                            (Some(b), _) => ("blocked by ", b.as_str()),
                            (None, Some(j)) => ("waiting for ", self.graph.dep_target(u, j as u32)),
                            (None, None) => ("waiting", ""),
                        };
                        let status = &self.rt[i].status;
                        let same = status.len() == prefix.len() + name.len()
                            && status.starts_with(prefix)
                            && status.ends_with(name);
                        if same {
                            None
                        } else {
                            Some(format!("{prefix}{name}"))
                        }
                    };
                    if state != UnitState::Waiting && state != UnitState::Failed {
                        let why = why.unwrap_or_else(|| self.rt[i].status.clone());
                        self.rt[i].blocked_by = blocked;
                        self.set_state(u, UnitState::Waiting, &why);
                        self.rt[i].status_key = key;
                        changed = true;
                    } else {
                        if blocked_changed {
                            self.rt[i].blocked_by = blocked;
                            self.mark_changed(u);
                            changed = true;
                        }
                        // What it waits for changes as its dependencies
                        // start: the status says what it waits for now
                        // (it used to keep naming the first one).
                        if state == UnitState::Waiting {
                            if let Some(why) = why {
                                self.rt[i].status = why;
                                self.mark_changed(u);
                            }
                            self.rt[i].status_key = key;
                        }
                    }
                }
            }
            Phase::Pre(_) | Phase::Main | Phase::Up | Phase::Reloading => {
                if to_stop {
                    // Dependents stop first.
                    if !self.dependents_block_stop(u) {
                        let why = if !required {
                            if self.shutting_down {
                                "shutting down"
                            } else {
                                "not required"
                            }
                        } else if self.rt[i].spec_changed {
                            "definition changed"
                        } else if self.rt[i].restart_requested {
                            "restart requested"
                        } else {
                            "dependency not active"
                        };
                        self.begin_stop(u, why);
                        changed = true;
                    }
                }
            }
            Phase::Stopping { .. } | Phase::StopPost(_) => {}
        }
        self.sync(u);
        if changed {
            self.push_neighbours_or_blocked(u, blocked_moved);
        }
    }

    // ----- dependency counts -----------------------------------------------

    /// Recomputes every unit's [`DepCounts`] from scratch (a new graph).
    fn recount(&mut self) {
        let n = self.rt.len();
        self.told = self.rt.iter().map(dep_flags).collect();
        self.seen = self
            .rt
            .iter()
            .map(|r| (dep_flags(r), stop_flags(r)))
            .collect();
        self.counts = self.graph.ids().map(|u| self.scan_counts(u)).collect();
        self.waited_from = vec![0; n];
        self.blocked_from = vec![0; n];
        // Flat edge lists, by counting: same order as the graph's lists.
        let mut fdep_at = Vec::with_capacity(n + 1);
        let mut fdeps = Vec::new();
        let mut rdep_at = vec![0u32; n + 1];
        let mut ukind = Vec::with_capacity(n);
        for u in self.graph.ids() {
            let node = self.graph.node(u);
            fdep_at.push(fdeps.len() as u32);
            let mut k = 0;
            if node.ghost {
                k |= U_GHOST;
            }
            if node.spec.kind == UnitType::Virtual {
                k |= U_VIRTUAL;
            }
            ukind.push(k);
            for d in self.graph.deps(u) {
                fdeps.push((d.provider, d.kind));
                if let Some(c) = d.provider.and_then(|p| rdep_at.get_mut(p.index() + 1)) {
                    *c += 1;
                }
            }
        }
        fdep_at.push(fdeps.len() as u32);
        for i in 0..n {
            rdep_at[i + 1] += rdep_at[i];
        }
        let mut fill: Vec<u32> = rdep_at[..n].to_vec();
        let mut rdeps = vec![(UnitId(0), 0u32, DepKind::DependsOn); rdep_at[n] as usize];
        for u in self.graph.ids() {
            let (a, b) = (fdep_at[u.index()] as usize, fdep_at[u.index() + 1] as usize);
            for (j, &(prov, kind)) in fdeps[a..b].iter().enumerate() {
                if let Some(p) = prov {
                    if let Some(f) = fill.get_mut(p.index()) {
                        rdeps[*f as usize] = (u, j as u32, kind);
                        *f += 1;
                    }
                }
            }
        }
        self.rdeps = rdeps;
        self.rdep_at = rdep_at;
        self.fdeps = fdeps;
        self.fdep_at = fdep_at;
        self.ukind = ukind;
    }

    /// `u`'s counts as a scan of its dependencies finds them now.
    fn scan_counts(&self, u: UnitId) -> DepCounts {
        let mut c = DepCounts::default();
        for d in self.graph.deps(u) {
            c.add(DepCounts::edge(
                d.kind,
                d.provider.map(|p| dep_flags(&self.rt[p.index()])),
            ));
        }
        c
    }

    /// Tells `u`'s dependents that its [`dep_flags`] changed, if they did.
    /// Called wherever a unit's state, `to_stop`, `degraded` or
    /// `blocked_by` may have moved, so that the counts are always current:
    /// O(1) when nothing changed, O(dependents) when something did.
    fn sync(&mut self, u: UnitId) {
        let i = u.index();
        let new = dep_flags(&self.rt[i]);
        let Some(told) = self.told.get_mut(i) else {
            return;
        };
        let old = std::mem::replace(told, new);
        if old == new {
            return;
        }
        let Planner {
            rdeps,
            rdep_at,
            counts,
            waited_from,
            blocked_from,
            ..
        } = self;
        for &(d, j, kind) in edges_of(rdep_at, rdeps, i) {
            let (was, now) = (
                DepCounts::edge(kind, Some(old)),
                DepCounts::edge(kind, Some(new)),
            );
            if let Some(c) = counts.get_mut(d.index()) {
                c.sub(was);
                c.add(now);
            }
            if now.waited > was.waited {
                if let Some(w) = waited_from.get_mut(d.index()) {
                    *w = (*w).min(j);
                }
            }
            if now.blocking > was.blocking {
                if let Some(b) = blocked_from.get_mut(d.index()) {
                    *b = (*b).min(j);
                }
            }
        }
    }

    /// What blocks `u`: the first missing hard target, failed hard
    /// provider, or hard provider's own `blocked_by`, in dependency order.
    /// Searched from where the last search ended, as
    /// [`Planner::first_waited_on`].
    fn first_blocked(&mut self, u: UnitId) -> Option<String> {
        let i = u.index();
        let from = self.blocked_from.get(i).copied().unwrap_or(0) as usize;
        let deps: Vec<_> = self.graph.named_deps(u).collect();
        let found = deps.iter().enumerate().skip(from).find(|(_, d)| {
            let f = d.provider.map(|p| dep_flags(&self.rt[p.index()]));
            DepCounts::edge(d.kind, f).blocking > 0
        });
        if let Some(b) = self.blocked_from.get_mut(i) {
            *b = found.map_or(deps.len(), |(j, _)| j) as u32;
        }
        let (_, d) = found?;
        match d.provider {
            Some(p) if self.rt[p.index()].state != UnitState::Failed => {
                self.rt[p.index()].blocked_by.clone()
            }
            _ => Some(d.target.to_string()),
        }
    }

    /// The index of the first dependency (in order) that `u` still waits
    /// on. The search starts where the last one ended ([`Planner::sync`]
    /// moves that point back when an earlier dependency is waited on
    /// again), so a unit waiting on thousands of dependencies costs O(1)
    /// amortized per evaluation.
    fn first_waited_on(&mut self, u: UnitId) -> Option<usize> {
        let i = u.index();
        let from = self.waited_from.get(i).copied().unwrap_or(0) as usize;
        let deps = edges_of(&self.fdep_at, &self.fdeps, i);
        let found = deps
            .iter()
            .enumerate()
            .skip(from)
            .find_map(|(j, &(p, kind))| {
                let f = dep_flags(&self.rt[p?.index()]);
                (DepCounts::edge(kind, Some(f)).waited > 0).then_some(j)
            });
        if let Some(w) = self.waited_from.get_mut(i) {
            *w = found.unwrap_or(deps.len()) as u32;
        }
        found
    }

    /// Whether some dependent of `u` is still up (or active) and will stop,
    /// so that `u` must wait: dependents stop before their dependencies.
    /// A dependent's own flag may be stale here (it may be evaluated later),
    /// so this anticipates: hard dependents always go first, and so does
    /// anything that is no longer required.
    fn dependents_block_stop(&self, u: UnitId) -> bool {
        edges_of(&self.rdep_at, &self.rdeps, u.index())
            .iter()
            .any(|&(d, _, kind)| {
                let dr = &self.rt[d.index()];
                let will_stop = dr.to_stop
                    || kind == DepKind::DependsOn
                    || !self.required[d.index()]
                    || self.shutting_down;
                ((dr.up() || dr.state.is_active()) && will_stop)
                    || matches!(dr.phase, Phase::Stopping { .. } | Phase::StopPost(_))
            })
    }

    // ----- transitions -----------------------------------------------------

    fn set_state(&mut self, u: UnitId, state: UnitState, status: &str) {
        let now = self.now;
        let moved = self.rt[u.index()].state != state;
        let r = &mut self.rt[u.index()];
        if moved {
            r.since = now;
            if state.is_active() && !r.state.is_active() {
                r.active_at = Some(now);
            }
            if matches!(state, UnitState::Failed | UnitState::Disabled)
                && r.state != UnitState::Waiting
            {
                r.end_at = Some(now);
            }
        }
        r.state = state;
        if r.status != status {
            r.status.clear();
            r.status.push_str(status);
        }
        r.status_key = 0;
        self.sync(u);
        self.mark_changed(u);
        if moved {
            self.push(u);
            self.push_neighbours(u);
        }
    }

    fn mark_changed(&mut self, u: UnitId) {
        if let Some(f) = self.changed_flag.get_mut(u.index()) {
            if !*f {
                *f = true;
                self.changed.push(u);
            }
        }
    }

    fn set_timer(&mut self, u: UnitId, after: Duration, kind: Timer) {
        let t = self.now.after(after);
        let r = &mut self.rt[u.index()];
        r.timer_gen += 1;
        r.timer = Some((t, kind));
        self.heap.push(Reverse((t, u.0, r.timer_gen)));
    }

    fn clear_timer(&mut self, u: UnitId) {
        let r = &mut self.rt[u.index()];
        if r.timer.is_some() {
            r.timer = None;
            r.timer_gen += 1;
        }
    }

    fn reset_failed(&mut self, u: UnitId) {
        self.clear_timer(u);
        let r = &mut self.rt[u.index()];
        r.restart_ready = false;
        r.attempt = 0;
        r.failure = None;
        if r.state == UnitState::Failed {
            self.set_state(u, UnitState::Waiting, "reset");
        }
    }

    /// (Adapted to the complete `Action::Kill`: who is signalled is decided
    /// here by the rule the init applied when it carried the action out.)
    fn push_kill(&mut self, u: UnitId, pid: i32, signal: Signal, group: bool) {
        let whom = if !group {
            Whom::Process(pid)
        } else {
            match self.pids.get(&pid) {
                Some(&(owner, _)) if owner == u => Whom::GroupAndLeader(pid),
                Some(_) => return,
                None => Whom::Group(pid),
            }
        };
        self.actions.push(Action::Kill {
            unit: u,
            whom,
            signal,
        });
    }

    fn spawn(&mut self, u: UnitId, role: Role, cmd: &Command) {
        let r = &self.rt[u.index()];
        let spec = r
            .active
            .clone()
            .unwrap_or_else(|| self.graph.node(u).spec.clone());
        let mainpid = r.main_pid;
        let argv = if cmd.argv.iter().any(|w| w.contains("MAINPID")) {
            cmd.with_mainpid(mainpid).into()
        } else {
            cmd.argv.clone()
        };
        self.actions.push(Action::Spawn {
            unit: u,
            role,
            argv,
            spec,
            mainpid,
        });
        if role != Role::Main {
            self.rt[u.index()].aux = Some((role, None));
        }
    }

    fn begin_start(&mut self, u: UnitId) {
        let spec = self.graph.node(u).spec.clone();
        let i = u.index();
        if r_restarting(&self.rt[i]) {
            self.rt[i].restarts += 1;
        }
        {
            let r = &mut self.rt[i];
            r.active = Some(spec.clone());
            r.restart_ready = false;
            r.restart_requested = false;
            r.spec_changed = false;
            r.failure = None;
            r.notify_status = None;
            r.ready_seen = false;
            r.exit_ok = false;
            r.self_stop = false;
            r.dead_leader = None;
            r.script_group = None;
            r.pidfile_tries = 0;
            r.pidfile_deadline = None;
            r.start_at = Some(self.now);
            r.main_pid = None;
        }
        self.clear_timer(u);
        if spec.kind == UnitType::Virtual {
            self.rt[i].phase = Phase::Up;
            self.set_state(u, UnitState::Running, "active");
            return;
        }
        self.starting += 1;
        self.set_timer(u, spec.start_timeout, Timer::Start);
        if spec.exec_start_pre.is_empty() {
            self.start_main(u);
        } else {
            self.rt[i].phase = Phase::Pre(0);
            self.set_state(u, UnitState::Starting, "running exec-start-pre");
            if let Some(cmd) = spec.exec_start_pre.first() {
                self.spawn(u, Role::Pre(0), cmd);
            }
        }
    }

    fn start_main(&mut self, u: UnitId) {
        let spec = self.rt[u.index()]
            .active
            .clone()
            .unwrap_or_else(|| self.graph.node(u).spec.clone());
        self.rt[u.index()].phase = Phase::Main;
        self.rt[u.index()].aux = None;
        self.set_state(u, UnitState::Starting, "starting");
        match &spec.exec_start {
            Some(cmd) => self.spawn(u, Role::Main, cmd),
            None => self.fail(u, "no exec-start".to_string(), false),
        }
    }

    fn leave_starting(&mut self, u: UnitId) {
        if self.rt[u.index()].starting() {
            self.starting = self.starting.saturating_sub(1);
        }
    }

    fn become_up(&mut self, u: UnitId, status: &str) {
        self.leave_starting(u);
        self.clear_timer(u);
        let r = &mut self.rt[u.index()];
        r.phase = Phase::Up;
        r.aux = None;
        self.set_state(u, UnitState::Running, status);
    }

    fn on_spawned(&mut self, u: UnitId, role: Role, pid: i32) {
        let Some(r) = self.rt.get_mut(u.index()) else {
            return;
        };
        self.pids.insert(pid, (u, role));
        if role == Role::Main {
            if r.phase != Phase::Main || r.main_pid.is_some() {
                // The unit moved on before the spawn was reported: the
                // process is not wanted.
                self.push_kill(u, pid, Signal::KILL, true);
                return;
            }
            r.main_pid = Some(pid);
            let spec = r
                .active
                .clone()
                .unwrap_or_else(|| self.graph.node(u).spec.clone());
            if spec.kind == UnitType::ForegroundSupervised {
                if let Some(w) = spec.ready_wait {
                    // One timer per unit: a ready-wait that would end after
                    // the start timeout leaves the start timeout in place
                    // (the start then times out, as it should).
                    let start_left = match self.rt[u.index()].timer {
                        Some((t, Timer::Start)) => Some(t.since(self.now)),
                        _ => None,
                    };
                    if start_left.is_none_or(|left| w < left) {
                        self.set_timer(u, w, Timer::ReadyWait);
                    }
                } else if spec.ready_grep.is_none() {
                    self.become_up(u, "running");
                }
            }
            self.mark_changed(u);
        } else {
            match r.aux {
                Some((ar, None)) if ar == role => r.aux = Some((role, Some(pid))),
                _ => self.push_kill(u, pid, Signal::KILL, true),
            }
        }
    }

    fn on_spawn_failed(&mut self, u: UnitId, role: Role, error: String) {
        if self.rt.get(u.index()).is_none() {
            return;
        }
        // (Adapted to the planner's lifecycle table: a report about a spawn
        // the unit no longer awaits is ignored, as a late `Spawned` is.)
        let r = &self.rt[u.index()];
        let awaited = match role {
            Role::Main => r.phase == Phase::Main && r.main_pid.is_none(),
            _ => r.aux == Some((role, None)),
        };
        if !awaited {
            return;
        }
        // (And a failed pre command's spawn is forgotten, as the other
        // helpers' are: the stop that follows used to wait for it until
        // the stop timer abandoned it.)
        if let Role::Pre(_) = role {
            self.rt[u.index()].aux = None;
        }
        let msg = format!("{}: {error}", role.key());
        match role {
            Role::Pre(_) | Role::Main => {
                if self.rt[u.index()].starting() {
                    self.fail(u, msg, false);
                }
            }
            Role::Reload => {
                self.rt[u.index()].aux = None;
                if self.rt[u.index()].phase == Phase::Reloading {
                    self.rt[u.index()].phase = Phase::Up;
                    self.set_state(u, UnitState::Running, &msg);
                }
            }
            Role::Stop => {
                // Fall back to the kill signal.
                self.rt[u.index()].aux = None;
                self.rt[u.index()].status = msg;
                self.rt[u.index()].status_key = 0;
                self.signal_main(u, false);
                self.check_stopped(u);
            }
            Role::StopPost(n) => {
                self.rt[u.index()].aux = None;
                self.stop_post(u, n + 1);
            }
        }
    }

    fn on_exit(&mut self, u: UnitId, role: Role, pid: i32, status: ExitStatus) {
        let i = u.index();
        let spec = self.rt[i]
            .active
            .clone()
            .unwrap_or_else(|| self.graph.node(u).spec.clone());
        match role {
            Role::Main => {
                if self.rt[i].main_pid != Some(pid) {
                    return;
                }
                self.rt[i].main_pid = None;
                // What the main process left in its group is killed once the
                // unit is down (`finish_main`), unless this is a start
                // command whose exit 0 hands over to what it started.
                let hands_over = self.rt[i].phase == Phase::Main
                    && status.success()
                    && matches!(
                        spec.kind,
                        UnitType::Oneshot
                            | UnitType::BackgroundScripted
                            | UnitType::BackgroundPidfile
                    );
                if !hands_over {
                    self.rt[i].dead_leader = Some(pid);
                }
                match self.rt[i].phase {
                    Phase::Main => match spec.kind {
                        UnitType::Oneshot if status.success() => {
                            self.leave_starting(u);
                            self.clear_timer(u);
                            self.rt[i].phase = Phase::Idle;
                            self.rt[i].attempt = 0;
                            self.set_state(u, UnitState::Exited, "exit status 0");
                        }
                        UnitType::BackgroundScripted if status.success() => {
                            self.rt[i].script_group = Some(pid);
                            self.become_up(u, "started");
                        }
                        UnitType::BackgroundPidfile if status.success() => {
                            if let Some(path) = spec.pidfile.clone() {
                                self.actions.push(Action::ReadPidfile { unit: u, path });
                            } else {
                                self.fail(u, "no pidfile".to_string(), false);
                            }
                        }
                        UnitType::Oneshot => self.fail(u, status.describe(), true),
                        _ => {
                            let what = format!("{} before it was ready", status.describe());
                            self.fail(u, what, true);
                        }
                    },
                    Phase::Up | Phase::Reloading => {
                        if status.success() && spec.restart != RestartPolicy::Always {
                            self.rt[i].failure = None;
                            self.rt[i].exit_ok = true;
                            self.rt[i].status = "exit status 0".to_string();
                            self.rt[i].status_key = 0;
                            self.finish_main(u, true);
                        } else {
                            self.fail(u, status.describe(), true);
                        }
                    }
                    Phase::Stopping { .. } => {
                        // After `STOPPING=1` the unit ends by itself: judge
                        // the exit as in `Up` (a clean exit is `exited`,
                        // anything else a failure). As a stop the init had
                        // asked for, it would go back to `waiting` and start
                        // again at once.
                        if std::mem::take(&mut self.rt[i].self_stop) {
                            if status.success() && spec.restart != RestartPolicy::Always {
                                self.rt[i].failure = None;
                                self.rt[i].exit_ok = true;
                                self.rt[i].status = "exit status 0".to_string();
                                self.rt[i].status_key = 0;
                            } else {
                                self.rt[i].restart_due = spec.restart != RestartPolicy::No;
                                self.rt[i].failure = Some(status.describe());
                            }
                        }
                        self.check_stopped(u)
                    }
                    _ => {}
                }
            }
            Role::Pre(n) => {
                if self.rt[i].aux.map(|a| a.0) != Some(role) {
                    return;
                }
                self.rt[i].aux = None;
                let ignore = spec
                    .exec_start_pre
                    .get(n as usize)
                    .is_some_and(|c| c.ignore_failure);
                if self.rt[i].phase != Phase::Pre(n) {
                    if matches!(self.rt[i].phase, Phase::Stopping { .. }) {
                        self.check_stopped(u);
                    }
                    return;
                }
                if status.success() || ignore {
                    let next = n + 1;
                    match spec.exec_start_pre.get(next as usize) {
                        Some(cmd) => {
                            self.rt[i].phase = Phase::Pre(next);
                            self.spawn(u, Role::Pre(next), cmd);
                        }
                        None => self.start_main(u),
                    }
                } else {
                    self.fail(u, format!("exec-start-pre: {}", status.describe()), true);
                }
            }
            Role::Stop => {
                if self.rt[i].aux.map(|a| a.0) != Some(role) {
                    return;
                }
                self.rt[i].aux = None;
                if !status.success() {
                    self.rt[i].status = format!("exec-stop: {}", status.describe());
                    self.rt[i].status_key = 0;
                }
                // What exec-stop left running gets the kill signal.
                self.signal_main(u, false);
                self.check_stopped(u);
            }
            Role::StopPost(n) => {
                if self.rt[i].aux.map(|a| a.0) != Some(role) {
                    return;
                }
                self.rt[i].aux = None;
                if self.rt[i].phase == Phase::StopPost(n) {
                    self.stop_post(u, n + 1);
                }
            }
            Role::Reload => {
                if self.rt[i].aux.map(|a| a.0) != Some(role) {
                    return;
                }
                self.rt[i].aux = None;
                if self.rt[i].phase == Phase::Reloading {
                    self.clear_timer(u);
                    self.rt[i].phase = Phase::Up;
                    let st = if status.success() {
                        "reloaded".to_string()
                    } else {
                        format!("exec-reload: {}", status.describe())
                    };
                    self.set_state(u, UnitState::Running, &st);
                }
            }
        }
    }

    fn on_pidfile(&mut self, u: UnitId, result: Result<i32, String>) {
        let Some(r) = self.rt.get(u.index()) else {
            return;
        };
        if r.phase != Phase::Main {
            // Stopped while the daemon was starting: it must not stay behind.
            if let Ok(pid) = result {
                let signal = r
                    .active
                    .as_ref()
                    .map(|s| s.kill_signal)
                    .unwrap_or(Signal::TERM);
                self.push_kill(u, pid, signal, true);
                // The init does not track this PID, so a group signal would
                // not reach a daemon that is not a group leader: signal the
                // process itself too.
                self.push_kill(u, pid, signal, false);
            }
            return;
        }
        match result {
            Ok(pid) => {
                self.rt[u.index()].main_pid = Some(pid);
                self.pids.insert(pid, (u, Role::Main));
                self.become_up(u, "running");
            }
            Err(e) => {
                // A forking daemon often writes its pidfile only after the
                // command that started it has exited (redis does): read it
                // again, 10 ms, 20 ms, ... at most 250 ms apart, until the
                // start-timeout. Failing at the first miss left the daemon
                // running unsupervised, and the restart started a second one.
                let i = u.index();
                let deadline = match (self.rt[i].pidfile_deadline, self.rt[i].timer) {
                    (Some(d), _) => d,
                    (None, Some((t, Timer::Start))) => t,
                    (None, _) => self.now,
                };
                if self.now >= deadline {
                    self.fail(u, format!("pidfile: {e} (start timed out)"), true);
                    return;
                }
                let tries = self.rt[i].pidfile_tries;
                self.rt[i].pidfile_tries = tries.saturating_add(1);
                self.rt[i].pidfile_deadline = Some(deadline);
                self.rt[i].status = format!("waiting for the pidfile ({e})");
                self.rt[i].status_key = 0;
                self.mark_changed(u);
                let step =
                    Duration::from_millis(10u64 << tries.min(5)).min(Duration::from_millis(250));
                self.set_timer(u, step.min(deadline.since(self.now)), Timer::Pidfile);
            }
        }
    }

    fn on_notify(&mut self, u: UnitId, msg: Notify) {
        let Some(r) = self.rt.get_mut(u.index()) else {
            return;
        };
        let kind = r.active.as_ref().map(|s| s.kind);
        match msg {
            Notify::Ready => {
                r.ready_seen = true;
                match r.phase {
                    Phase::Main if kind == Some(UnitType::ForegroundNotified) => {
                        self.become_up(u, "ready")
                    }
                    Phase::Reloading if r.aux.is_none() => {
                        self.clear_timer(u);
                        self.rt[u.index()].phase = Phase::Up;
                        self.set_state(u, UnitState::Running, "reloaded");
                    }
                    _ => {}
                }
            }
            Notify::Reloading => {
                if r.phase == Phase::Up {
                    r.phase = Phase::Reloading;
                    let t = r
                        .active
                        .as_ref()
                        .map(|s| s.start_timeout)
                        .unwrap_or(defaults::START_TIMEOUT);
                    self.set_timer(u, t, Timer::Reload);
                    self.set_state(u, UnitState::Reloading, "reloading");
                }
            }
            Notify::Stopping => {
                if matches!(r.phase, Phase::Up | Phase::Reloading) {
                    // The service is on its way down by itself: wait for its exit.
                    r.phase = Phase::Stopping { killed: false };
                    r.failure = None;
                    r.self_stop = true;
                    let t = r
                        .active
                        .as_ref()
                        .map(|s| s.stop_timeout)
                        .unwrap_or(defaults::STOP_TIMEOUT);
                    self.set_timer(u, t, Timer::Stop);
                    self.set_state(u, UnitState::Stopping, "stopping (STOPPING=1)");
                }
            }
            Notify::Status(s) => {
                r.notify_status = Some(s);
                self.mark_changed(u);
            }
            Notify::MainPid(pid) => {
                if pid > 1 && r.up() {
                    if let Some(old) = r.main_pid.replace(pid) {
                        self.pids.remove(&old);
                    }
                    self.pids.insert(pid, (u, Role::Main));
                    self.mark_changed(u);
                }
            }
            Notify::Errno(e) => {
                r.status = format!("errno {e}");
                r.status_key = 0;
                self.mark_changed(u);
            }
            Notify::ExtendTimeout(d) => {
                if let Some((t, kind)) = r.timer {
                    if matches!(kind, Timer::Start | Timer::Stop | Timer::Reload) {
                        let want = self.now.after(d);
                        if want > t {
                            self.set_timer(u, d, kind);
                        }
                    }
                }
            }
            Notify::Watchdog => {}
        }
    }

    fn on_timer(&mut self, u: UnitId, kind: Timer) {
        let i = u.index();
        match kind {
            Timer::Start => {
                if self.rt[i].starting() {
                    self.fail(u, "start timed out".to_string(), true);
                }
            }
            Timer::ReadyWait => {
                if self.rt[i].phase == Phase::Main {
                    self.become_up(u, "running (ready-wait elapsed)");
                }
            }
            Timer::Reload => {
                if self.rt[i].phase == Phase::Reloading {
                    if let Some((Role::Reload, Some(pid))) = self.rt[i].aux {
                        self.push_kill(u, pid, Signal::KILL, true);
                    }
                    self.rt[i].aux = None;
                    self.rt[i].phase = Phase::Up;
                    self.set_state(u, UnitState::Running, "reload timed out");
                }
            }
            Timer::Stop => {
                if let Phase::Stopping { .. } = self.rt[i].phase {
                    self.rt[i].phase = Phase::Stopping { killed: true };
                    self.kill_everything(u, Signal::KILL);
                    let t = self.stop_timeout(u);
                    self.set_timer(u, t, Timer::Abandon);
                    self.rt[i].status = "stop timed out; sent SIGKILL".to_string();
                    self.rt[i].status_key = 0;
                    self.mark_changed(u);
                }
            }
            Timer::Abandon => {
                if let Phase::Stopping { .. } = self.rt[i].phase {
                    // The processes did not die even of SIGKILL (uninterruptible
                    // sleep): stop waiting for them.
                    if let Some(pid) = self.rt[i].main_pid.take() {
                        self.pids.remove(&pid);
                    }
                    if let Some((_, Some(pid))) = self.rt[i].aux.take() {
                        self.pids.remove(&pid);
                    }
                    self.rt[i].status = "processes did not die; abandoned".to_string();
                    self.rt[i].status_key = 0;
                    self.check_stopped(u);
                }
            }
            Timer::Restart => {
                if self.rt[i].phase == Phase::Idle && self.rt[i].state == UnitState::Failed {
                    self.rt[i].restart_ready = true;
                    self.push(u);
                }
            }
            Timer::Pidfile => {
                let path = self.rt[i].active.as_ref().and_then(|s| s.pidfile.clone());
                if let (Phase::Main, Some(path)) = (self.rt[i].phase, path) {
                    self.actions.push(Action::ReadPidfile { unit: u, path });
                }
            }
        }
    }

    fn stop_timeout(&self, u: UnitId) -> Duration {
        self.rt[u.index()]
            .active
            .as_ref()
            .map(|s| s.stop_timeout)
            .unwrap_or(defaults::STOP_TIMEOUT)
    }

    /// A failure: record why, stop what is left, and (after stop-post) be
    /// `failed`. `restartable` says whether `restart: on-failure` applies.
    fn fail(&mut self, u: UnitId, why: String, restartable: bool) {
        let i = u.index();
        let policy = self.rt[i]
            .active
            .as_ref()
            .map(|s| s.restart)
            .unwrap_or(RestartPolicy::No);
        // Every failure (exit, signal, timeout, spawn or pidfile error) counts
        // for `on-failure`; `always` also restarts after a clean exit, which
        // reaches here from the exit handler.
        let _ = restartable;
        self.rt[i].restart_due = policy != RestartPolicy::No;
        self.rt[i].failure = Some(why.clone());
        match self.rt[i].phase {
            Phase::Idle => {}
            Phase::Stopping { .. } | Phase::StopPost(_) => {}
            Phase::Pre(_) | Phase::Main | Phase::Up | Phase::Reloading => {
                if self.rt[i].main_pid.is_some() || self.rt[i].aux.is_some() {
                    self.begin_stop(u, &why);
                } else {
                    self.finish_main(u, false);
                }
            }
        }
    }

    /// Stops a unit that is up: `exec-stop`, or the kill signal.
    fn begin_stop(&mut self, u: UnitId, why: &str) {
        let i = u.index();
        self.leave_starting(u);
        let spec = self.rt[i]
            .active
            .clone()
            .unwrap_or_else(|| self.graph.node(u).spec.clone());
        let was = self.rt[i].phase;
        if spec.kind == UnitType::Virtual {
            self.rt[i].phase = Phase::Idle;
            self.after_stop(u);
            return;
        }
        self.rt[i].phase = Phase::Stopping { killed: false };
        self.clear_timer(u);
        self.set_timer(u, spec.stop_timeout, Timer::Stop);
        self.set_state(u, UnitState::Stopping, why);
        // A helper still running (pre, reload) is killed outright.
        if let Some((role, Some(pid))) = self.rt[i].aux {
            if role != Role::Stop {
                self.push_kill(u, pid, Signal::KILL, true);
            }
        }
        let can_exec_stop =
            matches!(was, Phase::Up | Phase::Reloading) && self.rt[i].failure.is_none();
        match (&spec.exec_stop, can_exec_stop) {
            (Some(cmd), true) => {
                let cmd = cmd.clone();
                self.spawn(u, Role::Stop, &cmd);
            }
            _ => {
                self.signal_main(u, false);
                self.check_stopped(u);
            }
        }
    }

    /// Stops an `exited` unit that has stop commands: runs `exec-stop`, then
    /// `exec-stop-post`.
    fn stop_exited(&mut self, u: UnitId, why: &str) {
        let i = u.index();
        let spec = self.rt[i]
            .active
            .clone()
            .unwrap_or_else(|| self.graph.node(u).spec.clone());
        self.rt[i].active = Some(spec.clone());
        self.rt[i].exit_ok = false;
        self.rt[i].failure = None;
        self.rt[i].phase = Phase::Stopping { killed: false };
        self.set_timer(u, spec.stop_timeout, Timer::Stop);
        self.set_state(u, UnitState::Stopping, why);
        match &spec.exec_stop {
            Some(cmd) => {
                let cmd = cmd.clone();
                self.spawn(u, Role::Stop, &cmd);
            }
            None => self.check_stopped(u),
        }
    }

    /// Sends the unit's kill signal (or SIGKILL) to its main process group.
    fn signal_main(&mut self, u: UnitId, kill: bool) {
        let r = &self.rt[u.index()];
        let signal = if kill {
            Signal::KILL
        } else {
            r.active
                .as_ref()
                .map(|s| s.kill_signal)
                .unwrap_or(Signal::TERM)
        };
        // A `background-scripted` unit has no main process once its start
        // script exited: the process group that script left behind gets
        // the signal (it used to get nothing, so the service never stopped).
        if let Some(pid) = r.main_pid.or(r.script_group) {
            self.push_kill(u, pid, signal, true);
        }
    }

    fn kill_everything(&mut self, u: UnitId, signal: Signal) {
        let r = &self.rt[u.index()];
        let (main, aux) = (r.main_pid, r.aux.and_then(|a| a.1));
        if let Some(pid) = main {
            self.push_kill(u, pid, signal, true);
        }
        if let Some(pid) = aux {
            self.push_kill(u, pid, signal, true);
        }
    }

    /// In `Stopping`: once the main process and any helper are gone, on to
    /// stop-post.
    fn check_stopped(&mut self, u: UnitId) {
        let r = &self.rt[u.index()];
        if !matches!(r.phase, Phase::Stopping { .. }) || r.main_pid.is_some() || r.aux.is_some() {
            return;
        }
        self.finish_main(u, false);
    }

    /// The main process is gone: clean the process group, run stop-post.
    fn finish_main(&mut self, u: UnitId, clean_exit: bool) {
        let i = u.index();
        self.leave_starting(u);
        self.clear_timer(u);
        // Leftovers in the dead main process's group (an nginx master killed
        // by SIGKILL leaves its workers) get SIGKILL. The group outlives its
        // leader while it has members, so its number cannot have been
        // reused; the init signals it as a group only (no fallback to the
        // PID, which is free again).
        if let Some(pgid) = self.rt[i].dead_leader.take() {
            self.push_kill(u, pgid, Signal::KILL, true);
        }
        if clean_exit {
            self.rt[i].failure = None;
        }
        self.stop_post(u, 0);
    }

    fn stop_post(&mut self, u: UnitId, n: u16) {
        let i = u.index();
        let spec = self.rt[i]
            .active
            .clone()
            .unwrap_or_else(|| self.graph.node(u).spec.clone());
        match spec.exec_stop_post.get(n as usize) {
            Some(cmd) => {
                let cmd = cmd.clone();
                if self.rt[i].phase != Phase::StopPost(n)
                    && !matches!(self.rt[i].phase, Phase::StopPost(_))
                {
                    self.set_state(u, UnitState::Stopping, "running exec-stop-post");
                    self.set_timer(u, spec.stop_timeout, Timer::Stop);
                }
                self.rt[i].phase = Phase::StopPost(n);
                self.spawn(u, Role::StopPost(n), &cmd);
            }
            None => {
                self.rt[i].phase = Phase::Idle;
                self.after_stop(u);
            }
        }
    }

    /// The unit is idle again: failed (maybe restarting), exited, waiting or disabled.
    fn after_stop(&mut self, u: UnitId) {
        let i = u.index();
        self.clear_timer(u);
        let now = self.now;
        let r = &mut self.rt[i];
        r.main_pid = None;
        r.aux = None;
        r.to_stop = false;
        r.notify_status = None;
        r.self_stop = false;
        r.dead_leader = None;
        r.script_group = None;
        let was_active_long = r
            .active_at
            .is_some_and(|t| now.since(t) >= defaults::RESTART_RESET_AFTER)
            && r.state.is_active();
        let spec = r
            .active
            .take()
            .unwrap_or_else(|| self.graph.node(u).spec.clone());
        let requested = r.restart_requested || r.spec_changed;
        r.restart_requested = false;
        r.spec_changed = false;
        if let Some(why) = r.failure.clone() {
            if was_active_long {
                r.attempt = 0;
            }
            let restart = r.restart_due && !self.shutting_down && !requested;
            if restart {
                // A zero delay (systemd's `RestartSec=0`) would never back
                // off: after the first attempt the doubling starts from at
                // least MIN_RESTART_DELAY.
                let first = spec.restart_delay.max(MIN_RESTART_DELAY);
                let mult = 1u32.checked_shl(r.attempt.min(31)).unwrap_or(u32::MAX);
                let delay = if r.attempt == 0 {
                    spec.restart_delay
                } else {
                    first
                        .saturating_mul(mult)
                        .min(spec.restart_max_delay.max(first))
                };
                r.attempt = r.attempt.saturating_add(1);
                self.set_state(u, UnitState::Failed, &why);
                self.set_timer(u, delay, Timer::Restart);
            } else {
                self.set_state(u, UnitState::Failed, &why);
            }
        } else if self.rt[i].exit_ok && !requested && self.is_required(u) && !self.shutting_down {
            self.set_state(u, UnitState::Exited, "exit status 0");
        } else {
            let st = if self.is_required(u) && !self.shutting_down {
                UnitState::Waiting
            } else {
                UnitState::Disabled
            };
            let why = self.rt[i].status.clone();
            self.set_state(
                u,
                st,
                if st == UnitState::Disabled {
                    "stopped"
                } else {
                    &why
                },
            );
            if requested && st == UnitState::Waiting {
                self.rt[i].status = "restarting".to_string();
                self.rt[i].status_key = 0;
            }
        }
        self.sync(u);
        self.push(u);
        self.push_neighbours(u);
    }
}

/// [`Planner::ukind`] bits: a ghost unit, a `virtual` unit.
const U_GHOST: u8 = 1;
const U_VIRTUAL: u8 = 2;

/// Unit `i`'s part of a flat edge list (`at` holds the starts, and the end).
fn edges_of<'a, T>(at: &[u32], edges: &'a [T], i: usize) -> &'a [T] {
    match (at.get(i), at.get(i + 1)) {
        (Some(&a), Some(&b)) => &edges[a as usize..b as usize],
        _ => &[],
    }
}

/// The hasher of the PID map: a PID is a small integer the kernel hands
/// out, not chosen by an attacker, so one multiply (FxHash's) spreads it
/// well enough; SipHash cost more than the rest of a fact's map work.
#[derive(Default)]
struct PidHasher(u64);

impl Hasher for PidHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn write_i32(&mut self, n: i32) {
        self.0 =
            (self.0.rotate_left(5) ^ u64::from(n as u32)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// [`dep_flags`] bits.
const F_ACTIVE: u8 = 1;
const F_FAILED: u8 = 2;
const F_TO_STOP: u8 = 4;
const F_DEGRADED: u8 = 8;
const F_BLOCKED: u8 = 16;
const F_WAITING: u8 = 32;

/// What the units that depend on a unit read of it.
fn dep_flags(r: &Rt) -> u8 {
    let mut f = 0;
    if r.state.is_active() {
        f |= F_ACTIVE;
    }
    if r.state == UnitState::Failed {
        f |= F_FAILED;
    }
    if r.state == UnitState::Waiting {
        f |= F_WAITING;
    }
    if r.to_stop {
        f |= F_TO_STOP;
    }
    if r.degraded {
        f |= F_DEGRADED;
    }
    if r.blocked_by.is_some() {
        f |= F_BLOCKED;
    }
    f
}

/// What the providers of a unit read of it: whether it still has to stop
/// before them ([`Planner::dependents_block_stop`], which is monotone in
/// each of these bits: setting one never releases a provider).
fn stop_flags(r: &Rt) -> u8 {
    let mut f = 0;
    if r.up() {
        f |= 1;
    }
    if r.state.is_active() {
        f |= 2;
    }
    if r.to_stop {
        f |= 4;
    }
    if matches!(r.phase, Phase::Stopping { .. } | Phase::StopPost(_)) {
        f |= 8;
    }
    f
}

/// A unit's dependencies summed up: how many stand in the way of each rule
/// of [`Planner::evaluate`]. [`Planner::sync`] keeps them current.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct DepCounts {
    /// `depends-on`/`depends-ms` whose provider is missing, not active, or to stop.
    hard_bad: u32,
    /// The same, `depends-on` only.
    hold_bad: u32,
    /// `waits-for` whose provider is not settled (active, failed or
    /// blocked), or is to stop.
    waits_bad: u32,
    /// Missing `waits-for` targets, and providers not active or degraded.
    degraded: u32,
    /// Hard dependencies that make the unit blocked: missing, or a bad
    /// provider that is failed or blocked itself.
    blocking: u32,
    /// Dependencies with a provider that the unit waits on (the bad ones
    /// of `hard_bad` and `waits_bad`): what its status names.
    waited: u32,
}

impl DepCounts {
    /// What one dependency of `kind` on a provider with `flags` (or on a
    /// missing target) adds.
    fn edge(kind: DepKind, flags: Option<u8>) -> DepCounts {
        let hard = matches!(kind, DepKind::DependsOn | DepKind::DependsMs);
        let hold = kind == DepKind::DependsOn;
        let Some(f) = flags else {
            return if hard {
                DepCounts {
                    hard_bad: 1,
                    hold_bad: u32::from(hold),
                    blocking: 1,
                    ..DepCounts::default()
                }
            } else {
                DepCounts {
                    degraded: 1,
                    ..DepCounts::default()
                }
            };
        };
        let active = f & F_ACTIVE != 0;
        let to_stop = f & F_TO_STOP != 0;
        let failed = f & F_FAILED != 0;
        let blocked = f & F_BLOCKED != 0;
        let mut c = DepCounts {
            degraded: u32::from(!active || f & F_DEGRADED != 0),
            ..DepCounts::default()
        };
        if hard {
            let bad = !active || to_stop;
            c.hard_bad = u32::from(bad);
            c.hold_bad = u32::from(bad && hold);
            c.blocking = u32::from(bad && (failed || blocked));
            c.waited = u32::from(bad);
        } else {
            // Settled: active, failed, or blocked (waiting on a failed or
            // missing hard dependency: for ordering, that is a failure).
            let settled = active || failed || (f & F_WAITING != 0 && blocked);
            c.waits_bad = u32::from(!settled || to_stop);
            c.waited = c.waits_bad;
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
    }

    fn sub(&mut self, o: DepCounts) {
        self.hard_bad -= o.hard_bad;
        self.hold_bad -= o.hold_bad;
        self.waits_bad -= o.waits_bad;
        self.degraded -= o.degraded;
        self.blocking -= o.blocking;
        self.waited -= o.waited;
    }
}

fn r_restarting(r: &Rt) -> bool {
    r.state == UnitState::Failed && r.restart_ready
}

fn remap_action(mut a: Action, map: &[Option<UnitId>]) -> Option<Action> {
    let (Action::Spawn { unit, .. } | Action::Kill { unit, .. } | Action::ReadPidfile { unit, .. }) =
        &mut a;
    *unit = map.get(unit.index()).copied().flatten()?;
    Some(a)
}

/// `1.5s`, `250ms`, `2m` — short, for status lines.
fn short(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}m{}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}
