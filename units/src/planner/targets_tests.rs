//! Tests of declared targets and masks in the planner (docs/contract.md §3b): groups,
//! alternatives (preference, `choose`, `set-alternative`, failover), and
//! masked units, each against a small simulated world that answers every
//! spawn and kill at once.
use super::*;
use crate::graph::Shape;
use crate::mask::{MaskSource, Masks};
use crate::spec::{Command, Origin, UnitSpec, UnitType};
use crate::targets::{TargetDecl, TargetMode, Targets};

/// A planner on `units` with `shape`, and the world around it: each
/// spawned main process gets a PID, each kill ends it at once.
struct World {
    p: Planner,
    next_pid: i32,
    now: u64,
    /// Every stop the planner asked for, by unit name, in order.
    stops: Vec<String>,
    /// Every start, by unit name, in order.
    starts: Vec<String>,
}

fn svc(name: &str, provides: &[&str], preference: i32) -> UnitSpec {
    let mut s = UnitSpec::new(name, UnitType::ForegroundSupervised);
    s.exec_start = Some(Command::new(["/bin/svc"]));
    s.provides = provides.iter().map(|t| t.to_string()).collect();
    s.preference = preference;
    s
}

fn app(name: &str, depends_on: &[&str]) -> UnitSpec {
    let mut s = svc(name, &[name], 0);
    s.depends_on = depends_on.iter().map(|t| t.to_string()).collect();
    s
}

fn decl(mode: TargetMode, choose: Option<&str>, failover: bool) -> TargetDecl {
    TargetDecl {
        choose: choose.map(str::to_string),
        failover,
        ..TargetDecl::new(mode)
    }
}

fn shape(targets: &[(&str, TargetDecl)], masks: &[&str]) -> Shape {
    let mut m = Masks::new();
    for n in masks {
        m.insert(
            *n,
            MaskSource::State(format!("/etc/init/masked/{n}").into()),
        );
    }
    Shape {
        targets: targets
            .iter()
            .map(|(n, d)| (n.to_string(), d.clone()))
            .collect::<Targets>(),
        masks: m,
        devices: false,
    }
}

impl World {
    fn new(units: Vec<UnitSpec>, shape: Shape, target: &str) -> World {
        let (g, diags) = Graph::build_shaped(
            units
                .into_iter()
                .map(|s| {
                    let o = Origin::unplaced(format!("{}.yaml", s.name));
                    (s, o)
                })
                .collect(),
            shape,
        );
        assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
        let mut w = World {
            p: Planner::new(g, target, Instant(0), PlannerOptions::default()),
            next_pid: 100,
            now: 0,
            stops: Vec::new(),
            starts: Vec::new(),
        };
        w.settle();
        w
    }

    fn name(&self, u: UnitId) -> String {
        self.p.graph().node(u).spec.name.clone()
    }

    /// Answers every action until there is none.
    fn settle(&mut self) {
        for _ in 0..1000 {
            let actions = self.p.take_actions();
            if actions.is_empty() {
                return;
            }
            for a in actions {
                self.now += 1;
                match a {
                    Action::Spawn { unit, role, .. } => {
                        self.next_pid += 1;
                        self.starts.push(self.name(unit));
                        let pid = self.next_pid;
                        self.p
                            .fact(Fact::Spawned { unit, role, pid }, Instant(self.now));
                    }
                    Action::Kill { unit, .. } => {
                        // A stop may signal the leader, then the group.
                        let name = self.name(unit);
                        if self.stops.last() != Some(&name) {
                            self.stops.push(name);
                        }
                        if let Some(pid) = self.p.view(unit).and_then(|v| v.pid) {
                            self.p.fact(
                                Fact::Exited {
                                    pid,
                                    status: ExitStatus::Signal(15),
                                },
                                Instant(self.now),
                            );
                        }
                    }
                    Action::ReadPidfile { .. }
                    | Action::GuessMainPid { .. }
                    | Action::CheckConditions { .. }
                    | Action::SaveTimerStamp { .. }
                    | Action::Arm { .. }
                    | Action::Adopt { .. }
                    | Action::AwaitEmpty { .. }
                    | Action::Disarm { .. } => {}
                }
            }
        }
        panic!("the planner did not settle");
    }

    fn id(&self, name: &str) -> UnitId {
        self.p
            .graph()
            .unit(name)
            .or_else(|| self.p.graph().target_node(name))
            .unwrap_or_else(|| panic!("no node {name}"))
    }

    fn state(&self, name: &str) -> UnitState {
        self.p.state(self.id(name))
    }

    fn view(&self, name: &str) -> UnitView {
        self.p.view(self.id(name)).expect("a view")
    }

    /// `name`'s main process exits with status 1.
    fn fail(&mut self, name: &str) {
        let pid = self.view(name).pid.expect("running");
        self.now += 1;
        self.p.fact(
            Fact::Exited {
                pid,
                status: ExitStatus::Code(1),
            },
            Instant(self.now),
        );
        self.settle();
    }

    fn target_view(&self, target: &str) -> TargetView {
        let id = self.p.graph().target_node(target).expect("declared");
        self.p.target_view(id).expect("a target view")
    }
}

fn default(depends_on: &[&str]) -> UnitSpec {
    let mut s = UnitSpec::new("default", UnitType::Virtual);
    s.depends_on = depends_on.iter().map(|t| t.to_string()).collect();
    s
}

#[test]
fn a_group_runs_every_provider_and_is_degraded_then_failed() {
    let mut w = World::new(
        vec![
            default(&["logs"]),
            svc("a", &["logs"], 0),
            svc("b", &["logs"], 0),
        ],
        shape(&[("logs", decl(TargetMode::Group, None, false))], &[]),
        "default",
    );
    assert_eq!(w.state("a"), UnitState::Running);
    assert_eq!(w.state("b"), UnitState::Running);
    assert_eq!(w.state("logs"), UnitState::Running);
    assert!(!w.view("logs").degraded);
    // The group needs them for the target: not coincidental.
    assert!(w.p.coincidental(w.id("a")).is_empty());
    assert_eq!(w.state("default"), UnitState::Running);
    let v = w.target_view("logs");
    assert_eq!(v.mode, TargetMode::Group);
    assert_eq!(v.chosen, None);

    // One provider fails: the group is still up, degraded.
    w.fail("a");
    assert_eq!(w.state("a"), UnitState::Failed);
    assert_eq!(w.state("logs"), UnitState::Running);
    assert!(w.view("logs").degraded);
    assert_eq!(w.state("default"), UnitState::Running);
    assert!(w.view("default").degraded);

    // None is active: the group fails, and what hard-depends on it stops
    // and names it.
    w.fail("b");
    assert_eq!(w.state("logs"), UnitState::Failed);
    assert_eq!(w.state("default"), UnitState::Waiting);
    assert_eq!(w.view("default").blocked_by.as_deref(), Some("logs"));
}

#[test]
fn a_group_whose_providers_all_fail_at_start_is_failed() {
    let mut w = World::new(
        vec![default(&["logs"]), svc("a", &["logs"], 0)],
        shape(&[("logs", decl(TargetMode::Group, None, false))], &[]),
        "default",
    );
    w.fail("a");
    assert_eq!(w.state("logs"), UnitState::Failed);
    // A restart of the provider brings the group back.
    w.p.restart("a", Instant(w.now)).expect("restart");
    w.settle();
    assert_eq!(w.state("a"), UnitState::Running);
    assert_eq!(w.state("logs"), UnitState::Running);
    assert_eq!(w.state("default"), UnitState::Running);
}

#[test]
fn an_alternative_runs_the_highest_preference_only() {
    let w = World::new(
        vec![
            default(&["db"]),
            svc("mariadb", &["db"], 0),
            svc("postgres", &["db"], 10),
        ],
        shape(&[("db", decl(TargetMode::Alternative, None, false))], &[]),
        "default",
    );
    assert_eq!(w.state("postgres"), UnitState::Running);
    assert_eq!(w.state("mariadb"), UnitState::Disabled);
    assert_eq!(w.state("db"), UnitState::Running);
    assert_eq!(w.state("default"), UnitState::Running);
    let v = w.target_view("db");
    assert_eq!(v.chosen.as_deref(), Some("postgres"));
    assert_eq!(v.why, "highest preference (10)");
    // `default` is virtual: no process.
    assert_eq!(w.starts, ["postgres"]);
}

#[test]
fn an_alternative_ties_by_name_and_the_config_choice_wins() {
    let units = || vec![default(&["db"]), svc("b", &["db"], 0), svc("a", &["db"], 0)];
    let w = World::new(
        units(),
        shape(&[("db", decl(TargetMode::Alternative, None, false))], &[]),
        "default",
    );
    assert_eq!(w.target_view("db").chosen.as_deref(), Some("a"));
    let w = World::new(
        units(),
        shape(
            &[("db", decl(TargetMode::Alternative, Some("b"), false))],
            &[],
        ),
        "default",
    );
    assert_eq!(w.state("b"), UnitState::Running);
    assert_eq!(w.state("a"), UnitState::Disabled);
    assert_eq!(w.target_view("db").why, "chosen in the config (`choose`)");
}

/// `web` on the alternative `db`, which runs `postgres` (preferred over
/// `mariadb`), settled.
fn web_on_an_alternative() -> World {
    World::new(
        vec![
            default(&["web"]),
            app("web", &["db"]),
            svc("mariadb", &["db"], 0),
            svc("postgres", &["db"], 10),
        ],
        shape(&[("db", decl(TargetMode::Alternative, None, false))], &[]),
        "default",
    )
}

#[test]
fn set_alternative_stops_the_dependents_then_the_old_provider() {
    let mut w = web_on_an_alternative();
    assert_eq!(w.state("web"), UnitState::Running);
    w.stops.clear();
    w.starts.clear();
    w.p.set_alternative("db", "mariadb", Instant(w.now))
        .expect("set");
    w.settle();
    assert_eq!(w.stops, ["web", "postgres"]);
    assert_eq!(w.starts, ["mariadb", "web"]);
    assert_eq!(w.state("postgres"), UnitState::Disabled);
    assert_eq!(w.state("mariadb"), UnitState::Running);
    assert_eq!(w.state("default"), UnitState::Running);
    let v = w.target_view("db");
    assert_eq!(v.chosen.as_deref(), Some("mariadb"));
    assert_eq!(v.why, "set with `initctl set-alternative`");
    // Setting it again changes nothing.
    w.p.set_alternative("db", "mariadb", Instant(w.now))
        .expect("set");
    w.settle();
    assert_eq!(w.starts, ["mariadb", "web"]);
}

/// The old provider is asked to stop only once the units on the target
/// are down, not in the same round as their stops.
#[test]
fn set_alternative_stops_the_old_provider_once_the_dependents_are_down() {
    let mut w = web_on_an_alternative();
    w.p.set_alternative("db", "mariadb", Instant(w.now))
        .expect("set");
    let killed: Vec<String> =
        w.p.take_actions()
            .iter()
            .filter_map(|a| match a {
                Action::Kill { unit, .. } => Some(w.name(*unit)),
                _ => None,
            })
            .collect();
    assert_eq!(killed, ["web"]);
    assert_eq!(w.state("postgres"), UnitState::Running);
}

#[test]
fn set_alternative_refuses_bad_input_and_changes_nothing() {
    let mut w = World::new(
        vec![
            default(&["db", "logs"]),
            svc("mariadb", &["db"], 0),
            svc("postgres", &["db"], 10),
            svc("rsyslog", &["logs"], 0),
            svc("web", &["web"], 0),
            svc("old", &["old"], 0),
        ],
        shape(
            &[
                ("db", decl(TargetMode::Alternative, None, false)),
                ("logs", decl(TargetMode::Group, None, false)),
            ],
            &["old"],
        ),
        "default",
    );
    let now = Instant(w.now);
    let e = |w: &mut World, t: &str, u: &str| {
        w.p.set_alternative(t, u, now)
            .expect_err("refused")
            .to_string()
    };
    assert_eq!(
        e(&mut w, "db", "web"),
        "`web` does not provide the target `db` (its providers: `postgres`, `mariadb`)"
    );
    assert_eq!(e(&mut w, "db", "nosuch"), "no unit named `nosuch`");
    assert_eq!(e(&mut w, "db", "old"), "`old` is masked");
    assert_eq!(
        e(&mut w, "logs", "rsyslog"),
        "the target `logs` is a group: every provider runs"
    );
    assert!(e(&mut w, "web", "web").starts_with("the target `web` is not declared an alternative"));
    assert_eq!(
        e(&mut w, "nothing", "web"),
        "no unit provides the target `nothing`"
    );
    w.settle();
    assert_eq!(w.target_view("db").chosen.as_deref(), Some("postgres"));
    assert_eq!(w.state("postgres"), UnitState::Running);
}

#[test]
fn failover_moves_to_the_next_provider_only_when_asked() {
    let units = || {
        vec![
            default(&["db"]),
            svc("a", &["db"], 0),
            svc("b", &["db"], 10),
        ]
    };
    let mut w = World::new(
        units(),
        shape(&[("db", decl(TargetMode::Alternative, None, true))], &[]),
        "default",
    );
    w.fail("b");
    // No longer required: `disabled`, like any unit outside the set.
    assert_eq!(w.state("b"), UnitState::Disabled);
    assert_eq!(w.state("a"), UnitState::Running);
    assert_eq!(w.state("db"), UnitState::Running);
    assert_eq!(w.target_view("db").why, "failover: `b` failed");
    // The last one fails too: it stays chosen, and the target fails.
    w.fail("a");
    assert_eq!(w.target_view("db").chosen.as_deref(), Some("a"));
    assert_eq!(w.state("db"), UnitState::Waiting);
    assert_eq!(w.view("default").blocked_by.as_deref(), Some("db"));

    let mut w = World::new(
        units(),
        shape(&[("db", decl(TargetMode::Alternative, None, false))], &[]),
        "default",
    );
    w.fail("b");
    assert_eq!(w.state("a"), UnitState::Disabled);
    assert_eq!(w.target_view("db").chosen.as_deref(), Some("b"));
    assert_eq!(w.view("default").blocked_by.as_deref(), Some("db"));
}

#[test]
fn a_masked_unit_never_starts_and_blocks_what_needs_it() {
    let mut w = World::new(
        vec![
            default(&["web"]),
            app("web", &["db"]),
            svc("db", &["db"], 0),
        ],
        shape(&[], &["db", "gone"]),
        "default",
    );
    assert_eq!(w.state("db"), UnitState::Disabled);
    assert_eq!(w.state("web"), UnitState::Waiting);
    assert_eq!(w.view("web").blocked_by.as_deref(), Some("masked"));
    assert!(w.starts.is_empty(), "{:?}", w.starts);
    // By no path: not by a restart, not as a target.
    assert!(w.p.restart("db", Instant(w.now)).is_err());
    w.p.set_target("db", Instant(w.now))
        .expect_err("masked target");
    w.settle();
    assert!(w.starts.is_empty(), "{:?}", w.starts);
    // A masked name without a unit is still listed.
    assert!(w
        .p
        .graph()
        .unit("gone")
        .is_some_and(|i| w.p.graph().node(i).masked));
}

#[test]
fn a_masked_alternative_choice_falls_back_and_says_why() {
    let w = World::new(
        vec![
            default(&["db"]),
            svc("a", &["db"], 0),
            svc("b", &["db"], 10),
        ],
        shape(
            &[("db", decl(TargetMode::Alternative, Some("b"), false))],
            &["b"],
        ),
        "default",
    );
    assert_eq!(w.state("a"), UnitState::Running);
    assert_eq!(w.state("b"), UnitState::Disabled);
    assert_eq!(
        w.target_view("db").why,
        "highest preference (0); the config's choice `b` is masked"
    );
}

#[test]
fn a_new_unit_set_keeps_the_choice_made_at_run_time() {
    let units = || {
        vec![
            default(&["db"]),
            svc("a", &["db"], 0),
            svc("b", &["db"], 10),
        ]
    };
    let mut w = World::new(
        units(),
        shape(&[("db", decl(TargetMode::Alternative, None, false))], &[]),
        "default",
    );
    w.p.set_alternative("db", "a", Instant(w.now)).expect("set");
    w.settle();
    let specs = units()
        .into_iter()
        .map(|s| {
            let o = Origin::unplaced(format!("{}.yaml", s.name));
            (s, o)
        })
        .collect();
    w.p.replace_units(specs, true, Instant(w.now))
        .expect("replace");
    w.settle();
    assert_eq!(w.target_view("db").chosen.as_deref(), Some("a"));
    assert_eq!(w.state("a"), UnitState::Running);
    assert_eq!(w.state("b"), UnitState::Disabled);
}

fn diagnostics(units: Vec<UnitSpec>, shape: Shape) -> Vec<String> {
    let specs = units
        .into_iter()
        .map(|s| {
            let o = Origin::unplaced(format!("{}.yaml", s.name));
            (s, o)
        })
        .collect();
    Graph::build_shaped(specs, shape)
        .1
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn an_undeclared_duplicate_stays_an_error_and_a_bad_choice_is_one() {
    let d = diagnostics(
        vec![svc("a", &["db"], 0), svc("b", &["db"], 0)],
        Shape::default(),
    );
    assert_eq!(
        d,
        ["b.yaml: target `db` is provided by both `a` (a.yaml) and `b`; `b` is left out"]
    );
    let d = diagnostics(
        vec![
            svc("a", &["db"], 0),
            svc("b", &["db"], 0),
            svc("c", &["c"], 0),
        ],
        shape(
            &[("db", decl(TargetMode::Alternative, Some("c"), false))],
            &[],
        ),
    );
    assert!(
        d.iter().any(|m| m.contains(
            "`choose: c`: `c` does not provide the target `db` (its providers: `a`, `b`); `a` runs"
        )),
        "{d:?}"
    );
    let d = diagnostics(
        vec![svc("a", &["a"], 0)],
        shape(&[("db", decl(TargetMode::Group, None, false))], &[]),
    );
    assert!(
        d.iter()
            .any(|m| m.contains("the target `db` is declared a group but no unit provides it")),
        "{d:?}"
    );
}

#[test]
fn a_want_adds_a_unit_to_the_set_for_as_long_as_it_lasts() {
    let mut w = World::new(
        vec![
            default(&[]),
            app("rescue", &[]),
            app("web", &["db"]),
            svc("db", &["db"], 0),
            svc("tool", &["tool"], 0),
        ],
        shape(&[], &[]),
        "default",
    );
    assert_eq!(w.state("web"), UnitState::Disabled);
    let now = Instant(w.now);
    w.p.want("web", WantLife::UntilSwitch, now).expect("want");
    w.p.want("tool", WantLife::Kept, now).expect("want");
    w.settle();
    // What a wanted unit needs comes with it.
    for u in ["web", "db", "tool"] {
        assert_eq!(w.state(u), UnitState::Running, "{u}");
    }
    assert_eq!(
        w.p.want("nosuch", WantLife::Kept, now),
        Err(WantError::UnknownUnit("nosuch".into()))
    );
    // A switch ends the first kind, not the second.
    w.p.set_target("rescue", Instant(w.now)).expect("switch");
    w.settle();
    assert_eq!(w.state("web"), UnitState::Disabled);
    assert_eq!(w.state("db"), UnitState::Disabled);
    assert_eq!(w.state("tool"), UnitState::Running);
    assert_eq!(w.p.unwant("tool", Instant(w.now)), Ok(()));
    w.settle();
    assert_eq!(w.state("tool"), UnitState::Disabled);
    // Stopping a unit that is not running changes nothing.
    assert_eq!(w.p.unwant("tool", Instant(w.now)), Ok(()));
    assert_eq!(w.p.held().count(), 0);
}

/// A stop by hand of a unit the target requires (`systemctl stop`): it is
/// held out of the required set, with the units that depend on it waiting,
/// until it is started again or the target switches; the target stays up.
#[test]
fn a_unit_stopped_by_hand_stays_stopped_until_started_or_a_switch() {
    let mut def = default(&[]);
    def.waits_for = vec!["web".into(), "app".into()].into();
    let mut w = World::new(
        vec![
            def,
            app("rescue", &[]),
            svc("web", &["web"], 0),
            app("app", &["web"]),
        ],
        shape(&[], &[]),
        "default",
    );
    assert_eq!(w.state("web"), UnitState::Running);
    assert_eq!(w.p.unwant("web", Instant(w.now)), Ok(()));
    w.settle();
    assert_eq!(w.state("web"), UnitState::Disabled);
    assert_eq!(w.state("app"), UnitState::Waiting);
    assert_eq!(w.state("default"), UnitState::Running);
    assert_eq!(w.p.held().collect::<Vec<_>>(), ["web"]);

    // A start by hand ends the hold.
    w.p.want("web", WantLife::UntilSwitch, Instant(w.now))
        .expect("want");
    w.settle();
    assert_eq!(w.state("web"), UnitState::Running);
    assert_eq!(w.state("app"), UnitState::Running);
    assert_eq!(w.p.held().count(), 0);

    // So does a switch: what the new target needs runs.
    assert_eq!(w.p.unwant("web", Instant(w.now)), Ok(()));
    w.settle();
    assert_eq!(w.state("web"), UnitState::Disabled);
    w.p.set_target("rescue", Instant(w.now)).expect("switch");
    w.settle();
    w.p.set_target("default", Instant(w.now)).expect("switch");
    w.settle();
    assert_eq!(w.state("web"), UnitState::Running);
    assert_eq!(w.p.held().count(), 0);
}

/// A start by hand of a unit that requires one stopped by hand starts
/// that one too (systemd's transaction: Debian's `avahi-daemon.service`,
/// `Requires=avahi-daemon.socket`, started with its socket stopped);
/// what the started unit does not pull in stays held.
#[test]
fn a_start_by_hand_starts_what_it_requires_though_stopped_by_hand() {
    let mut def = default(&[]);
    def.waits_for = vec!["web".into(), "other".into()].into();
    let mut w = World::new(
        vec![
            def,
            svc("web", &["web"], 0),
            svc("other", &["other"], 0),
            app("app", &["web"]),
        ],
        shape(&[], &[]),
        "default",
    );
    assert_eq!(w.state("web"), UnitState::Running);
    for name in ["web", "other"] {
        assert_eq!(w.p.unwant(name, Instant(w.now)), Ok(()));
    }
    w.settle();
    assert_eq!(w.state("web"), UnitState::Disabled);
    w.p.want("app", WantLife::UntilSwitch, Instant(w.now))
        .expect("want");
    w.settle();
    assert_eq!(w.state("web"), UnitState::Running);
    assert_eq!(w.state("app"), UnitState::Running);
    assert_eq!(w.state("other"), UnitState::Disabled);
    assert_eq!(w.p.held().collect::<Vec<_>>(), ["other"]);
}

/// A trigger (here `on-failure`; a socket's connection or a timer's
/// elapse alike) starts a unit that was stopped by hand, as systemd's do.
#[test]
fn a_trigger_ends_a_stop_by_hand() {
    let mut def = default(&[]);
    def.waits_for = vec!["web".into()].into();
    let mut bad = svc("bad", &["bad"], 0);
    bad.restart = crate::spec::RestartPolicy::No;
    bad.extras.on_failure = vec!["web".into()].into();
    let mut w = World::new(
        vec![def, svc("web", &["web"], 0), bad],
        shape(&[], &[]),
        "default",
    );
    w.p.want("bad", WantLife::UntilSwitch, Instant(w.now))
        .expect("want");
    w.settle();
    w.p.unwant("web", Instant(w.now)).expect("stop");
    w.settle();
    assert_eq!(w.state("web"), UnitState::Disabled);
    w.fail("bad");
    assert_eq!(w.state("web"), UnitState::Running);
    assert_eq!(w.p.held().count(), 0);
}

/// `systemctl reset-failed`: a failed unit started by hand forgets its
/// failure and its want, and is `disabled`; one the target requires starts
/// again; an unknown name is `None`.
#[test]
fn reset_failed_forgets_a_failure() {
    let mut def = default(&[]);
    def.waits_for = vec!["web".into()].into();
    let mut w = World::new(
        vec![def, svc("web", &["web"], 0), svc("tool", &["tool"], 0)],
        shape(&[], &[]),
        "default",
    );
    w.p.want("tool", WantLife::UntilSwitch, Instant(w.now))
        .expect("want");
    w.settle();
    w.fail("web");
    w.fail("tool");
    assert_eq!(w.state("web"), UnitState::Failed);
    assert_eq!(w.state("tool"), UnitState::Failed);

    assert_eq!(w.p.reset_failed_units(Some("nosuch"), Instant(w.now)), None);
    assert_eq!(w.p.reset_failed_units(None, Instant(w.now)), Some(2));
    w.settle();
    assert_eq!(w.state("tool"), UnitState::Disabled);
    assert_eq!(w.p.wants().count(), 0);
    assert_eq!(w.state("web"), UnitState::Running);
    assert_eq!(w.p.reset_failed_units(None, Instant(w.now)), Some(0));
}

/// `systemctl stop` of a failed unit: its want goes, and it stays failed
/// (systemd's stop of an inactive unit changes nothing) until it is reset,
/// or started again.
#[test]
fn a_failed_unit_stopped_by_hand_stays_failed_until_reset() {
    let mut w = World::new(
        vec![default(&[]), svc("tool", &["tool"], 0)],
        shape(&[], &[]),
        "default",
    );
    let want = |w: &mut World| {
        w.p.want("tool", WantLife::UntilSwitch, Instant(w.now))
            .expect("want");
        w.settle();
    };
    want(&mut w);
    w.fail("tool");
    w.p.unwant("tool", Instant(w.now)).expect("unwant");
    w.settle();
    assert_eq!(w.state("tool"), UnitState::Failed);
    assert_eq!(w.p.wants().count(), 0);
    assert_eq!(
        w.p.reset_failed_units(Some("tool"), Instant(w.now)),
        Some(1)
    );
    w.settle();
    assert_eq!(w.state("tool"), UnitState::Disabled);

    // Started again, then stopped while it runs: inactive.
    want(&mut w);
    w.fail("tool");
    w.p.unwant("tool", Instant(w.now)).expect("unwant");
    want(&mut w);
    assert_eq!(w.state("tool"), UnitState::Running);
    w.p.unwant("tool", Instant(w.now)).expect("unwant");
    w.settle();
    assert_eq!(w.state("tool"), UnitState::Disabled);
}

/// `RefuseManualStop=`: the want of such a unit cannot be dropped by hand;
/// a switch of the target still ends a want that lasts until one.
#[test]
fn a_unit_that_refuses_a_manual_stop_keeps_its_want() {
    let mut tool = svc("tool", &["tool"], 0);
    tool.extras.refuse_manual_stop = Some(true);
    let mut w = World::new(
        vec![default(&[]), app("rescue", &[]), tool],
        shape(&[], &[]),
        "default",
    );
    w.p.want("tool", WantLife::UntilSwitch, Instant(w.now))
        .expect("want");
    w.settle();
    assert_eq!(
        w.p.unwant("tool", Instant(w.now)),
        Err(WantError::RefusedManualStop("tool".into()))
    );
    w.settle();
    assert_eq!(w.state("tool"), UnitState::Running);
    w.p.set_target("rescue", Instant(w.now)).expect("switch");
    w.settle();
    assert_eq!(w.state("tool"), UnitState::Disabled);
}

/// `IgnoreOnIsolate=`: a unit that is up when the target switches stays
/// up, wanted as if started by hand, until a stop by hand; one that is
/// not up is not started by the switch, and others stop as usual.
#[test]
fn a_unit_ignoring_isolate_survives_a_switch() {
    let mut getty = svc("getty", &["getty"], 0);
    getty.extras.ignore_on_isolate = Some(true);
    let mut shell = svc("shell", &["shell"], 0);
    shell.extras.ignore_on_isolate = Some(true);
    let mut w = World::new(
        vec![
            app("default", &["getty", "db"]),
            app("rescue", &[]),
            svc("db", &["db"], 0),
            getty,
            shell,
        ],
        shape(&[], &[]),
        "default",
    );
    w.settle();
    assert_eq!(w.state("getty"), UnitState::Running);
    assert_eq!(w.state("shell"), UnitState::Disabled);
    w.p.set_target("rescue", Instant(w.now)).expect("switch");
    w.settle();
    assert_eq!(w.state("getty"), UnitState::Running);
    assert_eq!(w.state("db"), UnitState::Disabled);
    assert_eq!(w.state("shell"), UnitState::Disabled);
    assert_eq!(w.p.wants().collect::<Vec<_>>(), [("getty", WantLife::Kept)]);
    // Another switch keeps it still; a stop by hand ends it.
    w.p.set_target("default", Instant(w.now)).expect("switch");
    w.settle();
    w.p.set_target("rescue", Instant(w.now)).expect("switch");
    w.settle();
    assert_eq!(w.state("getty"), UnitState::Running);
    assert_eq!(w.p.unwant("getty", Instant(w.now)), Ok(()));
    w.settle();
    assert_eq!(w.state("getty"), UnitState::Disabled);
}

/// A oneshot whose work is kept (`RemainAfterExit=`) and ignores isolate
/// (Debian's `ifup@eth0.service`, started by udev's hotplug helper) is up
/// while `exited`: a switch leaves it so, its `ExecStop=` not run.
#[test]
fn an_exited_oneshot_ignoring_isolate_survives_a_switch() {
    let mut ifup = UnitSpec::new("ifup", UnitType::Oneshot);
    ifup.exec_start = Some(Command::new(["/sbin/ifup"]));
    ifup.remain_after_exit = Some(true);
    ifup.extras.ignore_on_isolate = Some(true);
    let mut w = World::new(
        vec![app("default", &[]), app("rescue", &[]), ifup],
        shape(&[], &[]),
        "default",
    );
    w.settle();
    w.p.want("ifup", WantLife::UntilSwitch, Instant(w.now))
        .expect("want");
    w.settle();
    let pid =
        w.p.view(w.p.graph().unit("ifup").expect("ifup"))
            .and_then(|v| v.pid);
    if let Some(pid) = pid {
        w.p.fact(
            Fact::Exited {
                pid,
                status: ExitStatus::Code(0),
            },
            Instant(w.now),
        );
        w.settle();
    }
    assert_eq!(w.state("ifup"), UnitState::Exited);
    w.p.set_target("rescue", Instant(w.now)).expect("switch");
    w.settle();
    assert_eq!(w.state("ifup"), UnitState::Exited);
    assert_eq!(w.p.wants().collect::<Vec<_>>(), [("ifup", WantLife::Kept)]);
}

/// `requisite` (`Requisite=`): never pulls its unit in; while nothing
/// else requires it, the dependent waits, blocked by it; once the target
/// requires it too, the dependent starts after it, and fails with it.
#[test]
fn a_requisite_is_needed_but_never_pulled_in() {
    let mut web = svc("web", &["web"], 0);
    web.extras.requisite = vec!["db".into()].into();
    let mut w = World::new(
        vec![
            default(&["web"]),
            app("full", &["web", "db"]),
            web,
            svc("db", &["db"], 0),
        ],
        shape(&[], &[]),
        "default",
    );
    w.settle();
    assert_eq!(w.state("db"), UnitState::Disabled);
    assert_eq!(w.state("web"), UnitState::Waiting);
    assert_eq!(w.view("web").blocked_by.as_deref(), Some("db"));
    w.p.set_target("full", Instant(w.now)).expect("switch");
    w.settle();
    assert_eq!(w.state("db"), UnitState::Running);
    assert_eq!(w.state("web"), UnitState::Running);
    w.fail("db");
    assert_ne!(w.state("web"), UnitState::Running);
}

/// `part-of` (`PartOf=`): a restart of the unit by hand restarts the
/// dependent too; its crash does not; it is never pulled in.
#[test]
fn a_part_of_unit_follows_the_restart_of_its_unit() {
    let mut worker = svc("worker", &["worker"], 0);
    worker.extras.part_of = vec!["web".into()].into();
    let mut w = World::new(
        vec![
            default(&["web", "worker"]),
            app("alone", &["worker"]),
            svc("web", &["web"], 0),
            worker,
        ],
        shape(&[], &[]),
        "default",
    );
    w.settle();
    let before = w.view("worker").pid.expect("worker runs");
    w.p.restart("web", Instant(w.now)).expect("restart");
    w.settle();
    assert_eq!(w.state("web"), UnitState::Running);
    assert_eq!(w.state("worker"), UnitState::Running);
    let after = w.view("worker").pid.expect("worker runs");
    assert_ne!(before, after, "worker restarted with web");
    // A crash of web is no stop: worker keeps running.
    w.fail("web");
    assert_eq!(w.view("worker").pid, Some(after));
    // Not pulled in: a target with worker alone runs no web.
    w.p.set_target("alone", Instant(w.now)).expect("switch");
    w.settle();
    assert_eq!(w.state("web"), UnitState::Disabled);
    assert_eq!(w.state("worker"), UnitState::Running);
}

/// A translated `BindsTo=` (`requires` plus `stop-propagated-from`, as
/// testsuite-57-binds-to.service): when the bound service ends by itself
/// with a clean exit, the bound unit is stopped (its stop commands run)
/// and stays stopped; a plain `depends-on` leaves its dependent running.
#[test]
fn a_unit_bound_to_a_service_stops_when_it_exits_cleanly() {
    let mut bound = app("bound", &["short"]);
    bound.extras.stop_propagated_from = vec!["short".into()].into();
    let plain = app("plain", &["short"]);
    let mut w = World::new(
        vec![
            default(&["bound", "plain"]),
            svc("short", &["short"], 0),
            bound,
            plain,
        ],
        shape(&[], &[]),
        "default",
    );
    w.settle();
    assert_eq!(w.state("bound"), UnitState::Running);
    let pid = w.view("short").pid.expect("short runs");
    w.now += 1;
    w.p.fact(
        Fact::Exited {
            pid,
            status: ExitStatus::Code(0),
        },
        Instant(w.now),
    );
    w.settle();
    assert_eq!(w.state("short"), UnitState::Exited);
    // (short's own entry is the kill of what is left of its group.)
    assert!(w.stops.iter().any(|n| n == "bound"), "{:?}", w.stops);
    assert!(!w.stops.iter().any(|n| n == "plain"), "{:?}", w.stops);
    assert_eq!(w.state("bound"), UnitState::Disabled);
    assert_eq!(w.state("plain"), UnitState::Running);
}

/// A dependent whose stop takes its time (an `exec-stop` still running)
/// holds the old provider up, and the new one waits for the old one to be
/// down: the system test's `providers` once recorded the old provider's
/// stop command before the dependent's, because the new provider came up
/// while the dependent stopped and the node was active again.
#[test]
fn set_alternative_with_a_slow_dependent_stop_keeps_the_order() {
    let mut web = app("web", &["db"]);
    web.exec_stop = Some(Command::new(["/bin/stop-web"]));
    let mut w = World::new(
        vec![
            default(&["web"]),
            web,
            svc("mariadb", &["db"], 0),
            svc("postgres", &["db"], 10),
        ],
        shape(&[("db", decl(TargetMode::Alternative, None, false))], &[]),
        "default",
    );
    let web_pid =
        w.p.view(w.id("web"))
            .and_then(|v| v.pid)
            .expect("web's pid");
    w.starts.clear();
    w.p.set_alternative("db", "mariadb", Instant(w.now))
        .expect("set");
    // Every spawn answered, no process ending: web's stop command runs on.
    let mut stop_pid = None;
    for _ in 0..5 {
        for a in w.p.take_actions() {
            w.now += 1;
            match a {
                Action::Spawn { unit, role, .. } => {
                    w.next_pid += 1;
                    w.starts.push(w.name(unit));
                    let pid = w.next_pid;
                    if role == Role::Stop {
                        stop_pid = Some(pid);
                    }
                    w.p.fact(Fact::Spawned { unit, role, pid }, Instant(w.now));
                }
                Action::Kill { unit, .. } => panic!("{} killed while web stops", w.name(unit)),
                _ => {}
            }
        }
    }
    assert_eq!(w.starts, ["web"], "only web's stop command ran");
    assert_eq!(w.state("web"), UnitState::Stopping);
    assert_eq!(w.state("postgres"), UnitState::Running);
    assert_eq!(w.state("mariadb"), UnitState::Waiting);
    let v = w.p.view(w.id("mariadb")).expect("view");
    assert_eq!(v.status, "waiting for postgres to stop");

    // web's stop command ends it, and ends: postgres stops, then
    // mariadb starts, then web again.
    w.stops.clear();
    w.starts.clear();
    let stop_pid = stop_pid.expect("web's stop command");
    for pid in [web_pid, stop_pid] {
        let status = ExitStatus::Signal(15);
        w.p.fact(Fact::Exited { pid, status }, Instant(w.now));
    }
    w.settle();
    // web's stop ends by signalling what is left of its group.
    assert_eq!(w.stops, ["web", "postgres"]);
    assert_eq!(w.starts, ["mariadb", "web"]);
    assert_eq!(w.state("postgres"), UnitState::Disabled);
    assert_eq!(w.state("default"), UnitState::Running);
}

/// The system test's machine (`tests/tests/init/providers.rs`): stop
/// commands everywhere, a group beside the alternative. The old provider's
/// stop command is spawned only once the dependent's stop command has
/// ended, however its stop's facts arrive.
#[test]
fn set_alternative_runs_the_old_providers_stop_command_after_the_dependents() {
    for main_first in [true, false] {
        let stopping = |name: &str, provides: &[&str], pref: i32| {
            let mut s = svc(name, provides, pref);
            s.exec_stop = Some(Command::new(["/bin/stop"]));
            s
        };
        let mut web = stopping("web", &["web"], 0);
        web.depends_on = vec!["db".to_string()].into();
        let mut w = World::new(
            vec![
                default(&["logs", "web"]),
                stopping("ship-a", &["logs"], 0),
                stopping("ship-b", &["logs"], 0),
                stopping("pg", &["db"], 10),
                stopping("maria", &["db"], 0),
                web,
            ],
            shape(
                &[
                    ("logs", decl(TargetMode::Group, None, false)),
                    ("db", decl(TargetMode::Alternative, None, false)),
                ],
                &[],
            ),
            "default",
        );
        let web_main = w.view("web").pid.expect("web runs");
        w.p.set_alternative("db", "maria", Instant(w.now))
            .expect("set");
        let spawned = |w: &mut World| -> Vec<(String, Role)> {
            let acts = w.p.take_actions();
            acts.iter()
                .filter_map(|a| match a {
                    Action::Spawn { unit, role, .. } => Some((w.name(*unit), *role)),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(spawned(&mut w), [("web".to_string(), Role::Stop)]);
        let web = w.id("web");
        let fact = |w: &mut World, f: Fact| {
            w.now += 1;
            w.p.fact(f, Instant(w.now));
        };
        fact(
            &mut w,
            Fact::Spawned {
                unit: web,
                role: Role::Stop,
                pid: 900,
            },
        );
        assert_eq!(spawned(&mut w), []);
        let main_exit = Fact::Exited {
            pid: web_main,
            status: ExitStatus::Signal(15),
        };
        let stop_exit = Fact::Exited {
            pid: 900,
            status: ExitStatus::Code(0),
        };
        let (first, second) = if main_first {
            (main_exit, stop_exit)
        } else {
            (stop_exit, main_exit)
        };
        fact(&mut w, first);
        let early = spawned(&mut w);
        assert!(
            !early.iter().any(|(u, _)| u == "pg"),
            "pg's stop before web's ended: {early:?}"
        );
        assert_eq!(
            w.state("pg"),
            UnitState::Running,
            "main first: {main_first}"
        );
        fact(&mut w, second);
        let then = spawned(&mut w);
        assert_eq!(
            then,
            [("pg".to_string(), Role::Stop)],
            "main first: {main_first}"
        );
    }
}
