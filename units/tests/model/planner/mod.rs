//! The planner against a simulated world: cell tests for the rules of the
//! state model, and property tests on random graphs. This file is the
//! world (`World`: units that behave as told, every action applied and
//! checked) and the helpers the areas share; each module is one area.

mod cells;
mod devices;
mod properties;
mod pulled;
mod reload;
mod triggers;

use flotilla_units::condition::{parse_value as parse_condition, ScriptedFacts, ScriptedPath};
use flotilla_units::diag::Pos;
use flotilla_units::graph::{Graph, UnitId};
use flotilla_units::planner::{
    check_unit, Action, ExitStatus, Fact, Notify, OnChange, Planner, PlannerOptions, Role, WantLife,
};
use flotilla_units::spec::{Command, Origin, RestartPolicy, UnitSpec, UnitType};
use flotilla_units::state::{DepKind, UnitState};
use flotilla_units::time::Instant;
use flotilla_units::trigger::Activation;
use proptest::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

/// How a simulated unit's main process behaves.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Behaviour {
    /// Runs until killed (ready on spawn, or sends READY=1 for notified units).
    Serve,
    /// Exits with this status right after spawn.
    Exit(i32),
    /// Runs, never gets ready, ignores SIGTERM (only SIGKILL ends it).
    Hang,
}

/// Records of what happened, in order.
#[derive(Debug, Clone, PartialEq)]
enum Event {
    Start(String),
    Signal(String, i32),
    State(String, UnitState),
}

struct World {
    p: Planner,
    now: Instant,
    next_pid: i32,
    procs: HashMap<i32, (UnitId, Role)>,
    behaviour: HashMap<String, Behaviour>,
    events: Vec<Event>,
    /// Every spawn's unit, role and command line, in order.
    spawned: Vec<(String, Role, String)>,
    states: Vec<UnitState>,
    /// Invariant checks run on each spawn of a main or pre process.
    check_starts: bool,
    /// The machine conditions are checked against.
    machine: ScriptedFacts,
}

fn spec(name: &str, kind: UnitType) -> UnitSpec {
    let mut s = UnitSpec::new(name, kind);
    if kind != UnitType::Virtual {
        s.exec_start = Some(Command::new(["/bin/sim", name]));
    }
    s
}

fn origin(name: &str) -> Origin {
    Origin::at(format!("{name}.yaml"), Pos::new(1, 7))
}

impl World {
    fn new(units: Vec<UnitSpec>, target: &str, opts: PlannerOptions) -> World {
        let units = units
            .into_iter()
            .map(|s| {
                let o = origin(&s.name);
                (s, o)
            })
            .collect();
        World::with_origins(units, target, opts)
    }

    fn with_origins(units: Vec<(UnitSpec, Origin)>, target: &str, opts: PlannerOptions) -> World {
        let (g, diags) = Graph::build(units);
        assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
        let n = g.len();
        World::with_planner(Planner::new(g, target, Instant(0), opts), n)
    }

    /// A world of graph `g`, default options.
    fn with_graph(g: Graph, target: &str) -> World {
        let n = g.len();
        World::with_planner(
            Planner::new(g, target, Instant(0), PlannerOptions::default()),
            n,
        )
    }

    fn with_planner(p: Planner, n: usize) -> World {
        let mut w = World {
            p,
            now: Instant(0),
            next_pid: 100,
            procs: HashMap::new(),
            behaviour: HashMap::new(),
            events: Vec::new(),
            spawned: Vec::new(),
            states: vec![UnitState::Disabled; n],
            check_starts: true,
            machine: ScriptedFacts::default().with_path("/etc/present", ScriptedPath::File),
        };
        w.settle();
        w
    }

    fn id(&self, name: &str) -> UnitId {
        self.p
            .graph()
            .unit(name)
            .unwrap_or_else(|| panic!("no unit {name}"))
    }

    fn state(&self, name: &str) -> UnitState {
        self.p.state(self.id(name))
    }

    fn name(&self, u: UnitId) -> String {
        self.p.graph().node(u).spec.name.clone()
    }

    fn record_changes(&mut self) {
        for u in self.p.take_changed() {
            let s = self.p.state(u);
            if self.states.len() <= u.index() {
                self.states.resize(u.index() + 1, UnitState::Disabled);
            }
            if self.states[u.index()] != s {
                self.states[u.index()] = s;
                let n = self.name(u);
                self.events.push(Event::State(n, s));
            }
        }
    }

    /// Carries out actions until there are none; facts are fed back at once.
    fn settle(&mut self) {
        for _ in 0..100_000 {
            self.record_changes();
            let actions = self.p.take_actions();
            if actions.is_empty() {
                return;
            }
            // Checked as the planner decided them: acting on one (a
            // process that exits at once) may move a unit that another
            // start of the batch does not wait for (`requires`).
            for a in &actions {
                if let Action::Spawn { unit, role, .. } = a {
                    if self.check_starts && matches!(role, Role::Main | Role::Pre(0)) {
                        self.check_deps_for_start(*unit);
                    }
                }
            }
            for a in actions {
                self.act(a);
                self.record_changes();
            }
        }
        panic!("planner did not settle");
    }

    fn check_deps_for_start(&self, u: UnitId) {
        let node = self.p.graph().node(u);
        for d in self.p.graph().named_deps(u) {
            let Some(p) = d.provider else {
                assert!(
                    matches!(
                        d.kind,
                        DepKind::WaitsFor | DepKind::After | DepKind::Wants | DepKind::PartOf
                    ),
                    "{} started with missing hard target",
                    node.spec.name
                );
                continue;
            };
            let st = self.p.state(p);
            match d.kind {
                DepKind::DependsOn | DepKind::DependsMs | DepKind::Requisite => assert!(
                    st.is_active(),
                    "{} started while its {} {} is {st}",
                    node.spec.name,
                    d.kind.as_str(),
                    d.target
                ),
                DepKind::WaitsFor => assert!(
                    st.is_active()
                        || st == UnitState::Failed
                        || (st == UnitState::Waiting
                            && self.p.view(p).is_some_and(|v| v.blocked_by.is_some())),
                    "{} started while its waits-for {} is {st}",
                    node.spec.name,
                    d.target
                ),
                // No ordering: what a unit requires may fail while it
                // starts (checked once settled: `check_requires`).
                DepKind::Standby | DepKind::Wants | DepKind::Requires | DepKind::PartOf => {}
                DepKind::After => assert!(
                    self.p.view(p).is_some_and(|v| {
                        !v.required
                            || st.is_active()
                            || st == UnitState::Failed
                            || (st == UnitState::Waiting && v.blocked_by.is_some())
                    }),
                    "{} started while its after {} is {st}",
                    node.spec.name,
                    d.target
                ),
            }
        }
    }

    /// Once settled, no unit is up while a unit it `requires` is failed
    /// or blocked (or is missing).
    fn check_requires(&self) {
        let g = self.p.graph();
        for u in g.ids() {
            let Some(me) = self.p.view(u) else { continue };
            if !(me.state.is_active() || me.state == UnitState::Starting) {
                continue;
            }
            for d in g.named_deps(u).filter(|d| d.kind == DepKind::Requires) {
                let bad = d.provider.and_then(|p| self.p.view(p)).is_none_or(|v| {
                    v.state == UnitState::Failed
                        || (v.state == UnitState::Waiting && v.blocked_by.is_some())
                });
                assert!(
                    !bad,
                    "{} is {} while its requires {} is failed, blocked or missing",
                    self.name(u),
                    me.state,
                    d.target
                );
            }
        }
    }

    fn act(&mut self, a: Action) {
        match a {
            Action::Spawn {
                unit, role, argv, ..
            } => {
                let pid = self.next_pid;
                self.next_pid += 1;
                let name = self.name(unit);
                self.spawned.push((name.clone(), role, argv.join(" ")));
                if role == Role::Main {
                    self.events.push(Event::Start(name.clone()));
                }
                self.procs.insert(pid, (unit, role));
                self.feed(Fact::Spawned { unit, role, pid });
                let kind = self.p.graph().node(unit).spec.kind;
                let b = self
                    .behaviour
                    .get(&name)
                    .copied()
                    .unwrap_or(Behaviour::Serve);
                match (role, b) {
                    (Role::Main, Behaviour::Serve) => match kind {
                        UnitType::ForegroundNotified => self.feed(Fact::Notify {
                            unit,
                            msg: Notify::Ready,
                        }),
                        UnitType::Oneshot
                        | UnitType::BackgroundScripted
                        | UnitType::BackgroundPidfile => self.exit(pid, ExitStatus::Code(0)),
                        _ => {}
                    },
                    (Role::Main, Behaviour::Exit(c)) => self.exit(pid, ExitStatus::Code(c)),
                    (Role::Main, Behaviour::Hang) => {}
                    // Helpers succeed at once.
                    _ => self.exit(pid, ExitStatus::Code(0)),
                }
            }
            Action::Kill { unit, whom, signal } => {
                let pid = whom.pid();
                let name = self.name(unit);
                self.events.push(Event::Signal(name.clone(), signal.0));
                let hang = self.behaviour.get(&name) == Some(&Behaviour::Hang);
                if self.procs.contains_key(&pid) && (!hang || signal.0 == 9) {
                    self.exit(pid, ExitStatus::Signal(signal.0));
                }
            }
            Action::CheckConditions { unit, spec } => {
                let outcome = check_unit(&spec, &self.machine);
                self.feed(Fact::Checked { unit, outcome });
            }
            // A read while the unit is up (its main process exited) finds
            // no other daemon: this world's daemons never move.
            Action::ReadPidfile { unit, .. } | Action::GuessMainPid { unit }
                if self
                    .p
                    .view(unit)
                    .is_some_and(|v| v.state != UnitState::Starting) =>
            {
                self.feed(Fact::Pidfile {
                    unit,
                    result: Err("the PID it names is not running".into()),
                });
            }
            Action::ReadPidfile { unit, .. } | Action::GuessMainPid { unit } => {
                let pid = self.next_pid;
                self.next_pid += 1;
                self.procs.insert(pid, (unit, Role::Main));
                self.feed(Fact::Pidfile {
                    unit,
                    result: Ok(pid),
                });
            }
            Action::SaveTimerStamp { .. } | Action::Disarm { .. } => {}
            // No cgroups here: empty once the main process exited.
            Action::AwaitEmpty { unit } => self.feed(Fact::CgroupEmpty { unit }),
            Action::Arm { unit, .. } => self.feed(Fact::Armed {
                unit,
                result: Ok(()),
            }),
            // The scope's first process, which someone else started.
            Action::Adopt { unit, .. } => {
                let pid = self.next_pid;
                self.next_pid += 1;
                self.procs.insert(pid, (unit, Role::Main));
                self.feed(Fact::Spawned {
                    unit,
                    role: Role::Main,
                    pid,
                });
            }
        }
    }

    fn exit(&mut self, pid: i32, status: ExitStatus) {
        if self.procs.remove(&pid).is_some() {
            self.feed(Fact::Exited { pid, status });
        }
    }

    /// Feeds a fact and carries out what follows at once, as the init does.
    fn feed(&mut self, f: Fact) {
        self.p.fact(f, self.now);
        self.settle();
    }

    /// Kills a unit's main process from outside (a crash).
    fn crash(&mut self, name: &str, status: ExitStatus) {
        let id = self.id(name);
        let pid = self.p.view(id).and_then(|v| v.pid).expect("unit has a pid");
        self.exit(pid, status);
        self.settle();
    }

    fn advance(&mut self, d: Duration) {
        let end = self.now.after(d);
        loop {
            match self.p.next_deadline() {
                Some(t) if t <= end => {
                    self.now = t;
                    self.p.tick(t);
                    self.settle();
                }
                _ => break,
            }
        }
        self.now = end;
        self.p.tick(end);
        self.settle();
    }

    fn set_target(&mut self, t: &str) {
        self.p.set_target(t, self.now).expect("known target");
        self.settle();
    }

    fn shutdown(&mut self) {
        self.p.shutdown(self.now);
        self.settle();
    }

    fn starts(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Start(n) => Some(n.clone()),
                _ => None,
            })
            .collect()
    }

    fn index_of(&self, e: &Event) -> Option<usize> {
        self.events.iter().position(|x| x == e)
    }
}

fn with(mut s: UnitSpec, f: impl FnOnce(&mut UnitSpec)) -> UnitSpec {
    f(&mut s);
    s
}

fn v(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|x| x.to_string()).collect()
}

/// [`v`] as a spec's list of names.
fn names(xs: &[&str]) -> flotilla_units::spec::Names {
    xs.iter().map(|x| x.to_string()).collect()
}
