//! systemd's dependency semantics, from unit files to the planner's
//! actions: the files translated, systemd's default dependencies added
//! over the set (`load::add_default_dependencies`), the graph built, and
//! the planner asked what to start. `Requires=` without `After=` starts
//! both units at once; with `After=` the requirer waits; `BindsTo=` stops
//! the unit with the one it is bound to; `Upholds=` pulls in and restarts;
//! a service's default dependencies order it after `sysinit.target`, and
//! `DefaultDependencies=no` does not.

use crate::load::add_default_dependencies;
use crate::translate_file;
use flotilla_units::graph::Graph;
use flotilla_units::planner::{Action, ExitStatus, Fact, Planner, PlannerOptions, Role};
use flotilla_units::state::UnitState;
use flotilla_units::time::Instant;

/// A planner on the units of `files` (name, text) for `default.target`.
struct World {
    p: Planner,
    g: Graph,
    next_pid: i32,
    /// Each unit's main PID, by name.
    pids: Vec<(String, i32)>,
    /// The units signalled, in order.
    killed: Vec<String>,
}

impl World {
    fn new(files: &[(&str, &str)]) -> World {
        let mut units = Vec::new();
        for (name, text) in files {
            let p = translate_file(&format!("/lib/systemd/system/{name}"), name, text);
            let errors: Vec<_> = p.diagnostics.iter().filter(|d| d.is_error()).collect();
            assert!(errors.is_empty(), "{name}: {errors:?}");
            units.push((p.spec.expect("a unit"), p.origin));
        }
        add_default_dependencies(&mut units);
        let (g, diags) = Graph::build(units);
        assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
        let p = Planner::new(
            g.clone(),
            "default.target",
            Instant(0),
            PlannerOptions::default(),
        );
        let mut w = World {
            p,
            g,
            next_pid: 100,
            pids: Vec::new(),
            killed: Vec::new(),
        };
        w.answer();
        w
    }

    /// Answers every spawn asked for with a PID, until the planner asks
    /// for no more; notes the units signalled.
    fn answer(&mut self) {
        self.answer_at(Instant(1));
    }

    /// [`World::answer`], the facts at `now`.
    fn answer_at(&mut self, now: Instant) {
        loop {
            let actions = self.p.take_actions();
            let mut spawned = false;
            for a in actions {
                match a {
                    Action::Spawn { unit, role, .. } => {
                        spawned = true;
                        let pid = self.next_pid;
                        self.next_pid += 1;
                        let name = self.g.node(unit).spec.name.clone();
                        if role == Role::Main {
                            self.pids.push((name, pid));
                        }
                        self.p.fact(Fact::Spawned { unit, role, pid }, now);
                    }
                    Action::Kill { unit, .. } => {
                        self.killed.push(self.g.node(unit).spec.name.clone());
                    }
                    _ => {}
                }
            }
            if !spawned {
                return;
            }
        }
    }

    fn state(&self, name: &str) -> UnitState {
        self.p.state(self.g.unit(name).expect(name))
    }

    fn started(&self, name: &str) -> bool {
        self.pids.iter().any(|(n, _)| n == name)
    }

    fn exit(&mut self, name: &str, status: ExitStatus) {
        self.exit_at(name, status, Instant(2));
    }

    /// `name`'s last main process exited with `status` at `now`.
    fn exit_at(&mut self, name: &str, status: ExitStatus, now: Instant) {
        let pid = self
            .pids
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, p)| *p)
            .expect(name);
        self.p.fact(Fact::Exited { pid, status }, now);
        self.answer_at(now);
    }

    /// How many times `name`'s main process was started.
    fn starts(&self, name: &str) -> usize {
        self.pids.iter().filter(|(n, _)| n == name).count()
    }
}

/// A oneshot that runs until the test says it exited.
const ONESHOT: &str = "[Service]\nType=oneshot\nExecStart=/bin/work\n";
/// A service that runs.
const SERVICE: &str = "[Service]\nExecStart=/bin/serve\n";

#[test]
fn requires_without_after_starts_both_at_once() {
    let a = "[Unit]\nRequires=b.service\n[Service]\nExecStart=/bin/a\n";
    let w = World::new(&[
        ("a.service", a),
        ("b.service", ONESHOT),
        ("default.target", "[Unit]\nWants=a.service\n"),
    ]);
    assert!(w.started("a.service") && w.started("b.service"));
    assert_eq!(w.state("a.service"), UnitState::Running);
    assert_eq!(w.state("b.service"), UnitState::Starting);
}

#[test]
fn requires_with_after_orders() {
    let a = "[Unit]\nRequires=b.service\nAfter=b.service\n[Service]\nExecStart=/bin/a\n";
    let mut w = World::new(&[
        ("a.service", a),
        ("b.service", ONESHOT),
        ("default.target", "[Unit]\nWants=a.service\n"),
    ]);
    assert!(w.started("b.service") && !w.started("a.service"));
    assert_eq!(w.state("a.service"), UnitState::Waiting);
    w.exit("b.service", ExitStatus::Code(0));
    assert_eq!(w.state("b.service"), UnitState::Exited);
    assert!(w.started("a.service"));
    // Wants= with After= orders as well; a failure does not hold it back.
    let a = "[Unit]\nWants=b.service\nAfter=b.service\n[Service]\nExecStart=/bin/a\n";
    let mut w = World::new(&[
        ("a.service", a),
        ("b.service", ONESHOT),
        ("default.target", "[Unit]\nWants=a.service\n"),
    ]);
    assert!(!w.started("a.service"));
    w.exit("b.service", ExitStatus::Code(1));
    assert_eq!(w.state("b.service"), UnitState::Failed);
    assert!(w.started("a.service"));
}

#[test]
fn binds_to_stops_with_the_unit_it_is_bound_to() {
    let a = "[Unit]\nBindsTo=b.service\n[Service]\nExecStart=/bin/a\n";
    let mut w = World::new(&[
        ("a.service", a),
        ("b.service", SERVICE),
        ("default.target", "[Unit]\nWants=a.service\n"),
    ]);
    assert!(w.started("a.service") && w.started("b.service"));
    assert_eq!(w.state("a.service"), UnitState::Running);
    w.exit("b.service", ExitStatus::Code(1));
    assert_eq!(w.state("b.service"), UnitState::Failed);
    // (b's own group is cleaned up too.)
    assert!(w.killed.iter().any(|k| k == "a.service"), "{:?}", w.killed);
    assert_eq!(w.state("a.service"), UnitState::Stopping);
}

/// The special targets of systemd.special(7) the tests need.
const SYSINIT: (&str, &str) = (
    "sysinit.target",
    "[Unit]\nDefaultDependencies=no\nWants=early.service\nAfter=early.service\n",
);
const EARLY: (&str, &str) = (
    "early.service",
    "[Unit]\nDefaultDependencies=no\n[Service]\nType=oneshot\nExecStart=/bin/early\n",
);

#[test]
fn a_service_waits_for_sysinit_unless_default_dependencies_no() {
    let mut w = World::new(&[
        SYSINIT,
        EARLY,
        ("a.service", SERVICE),
        ("default.target", "[Unit]\nWants=a.service\n"),
    ]);
    // a requires sysinit.target (pulled in) and is ordered after it.
    assert!(w.started("early.service") && !w.started("a.service"));
    assert_eq!(w.state("a.service"), UnitState::Waiting);
    w.exit("early.service", ExitStatus::Code(0));
    assert_eq!(w.state("sysinit.target"), UnitState::Running);
    assert!(w.started("a.service"));

    let w = World::new(&[
        SYSINIT,
        EARLY,
        (
            "a.service",
            "[Unit]\nDefaultDependencies=no\n[Service]\nExecStart=/bin/a\n",
        ),
        ("default.target", "[Unit]\nWants=a.service\n"),
    ]);
    assert!(w.started("a.service"));
    // Nothing pulled sysinit.target in: its unit did not run.
    assert!(!w.started("early.service"));
}

#[test]
fn a_target_waits_for_what_it_wants_unless_that_unit_opts_out() {
    let w = World::new(&[
        ("a.service", ONESHOT),
        (
            "b.service",
            "[Unit]\nDefaultDependencies=no\n[Service]\nType=oneshot\nExecStart=/bin/b\n",
        ),
        ("default.target", "[Unit]\nWants=a.service b.service\n"),
    ]);
    // Both oneshots still starting: the target waits for a (ordered
    // after it by default), not for b (DefaultDependencies=no).
    assert!(w.started("a.service") && w.started("b.service"));
    assert_eq!(w.state("default.target"), UnitState::Waiting);
    let target = w.g.unit("default.target").expect("target");
    let spec = &w.g.node(target).spec;
    assert_eq!(spec.waits_for, ["a.service"]);
    assert_eq!(spec.wants, ["b.service"]);
}

/// `Upholds=`: pulls the unit in, and starts it again whenever it ends
/// while the upholding unit is active, whatever its own `Restart=`.
#[test]
fn upholds_pulls_in_and_restarts() {
    let a = "[Unit]\nUpholds=b.service\n[Service]\nExecStart=/bin/a\n";
    let mut w = World::new(&[
        ("a.service", a),
        ("b.service", SERVICE),
        ("default.target", "[Unit]\nWants=a.service\n"),
    ]);
    assert!(w.started("a.service") && w.started("b.service"));
    // A clean exit, Restart=no: started again all the same.
    w.exit("b.service", ExitStatus::Code(0));
    let starts = |w: &World| w.pids.iter().filter(|(n, _)| n == "b.service").count();
    assert_eq!(starts(&w), 1);
    let mut now = Instant(2);
    while starts(&w) == 1 {
        let t = w.p.next_deadline().expect("a restart is due");
        assert!(t.0 < 60_000_000_000, "no restart within a minute");
        now = t.max(now);
        w.p.tick(now);
        w.answer();
    }
    assert_eq!(w.state("b.service"), UnitState::Running);
    // Without Upholds=, the same exit leaves b exited.
    let mut w = World::new(&[
        ("a.service", SERVICE),
        ("b.service", SERVICE),
        ("default.target", "[Unit]\nWants=a.service b.service\n"),
    ]);
    w.exit("b.service", ExitStatus::Code(0));
    assert_eq!(w.state("b.service"), UnitState::Exited);
}

/// systemd's testsuite-57: `OnSuccess=` starts a unit that fails, whose
/// `OnFailure=` starts one that `Upholds=` a short-lived service with
/// `StopWhenUnneeded=yes`: that service is started again at each end.
#[test]
fn on_success_on_failure_and_upholds_chain() {
    let mut w = World::new(&[
        (
            "success.service",
            "[Unit]\nOnSuccess=fail.service\n[Service]\nExecStart=/bin/true\n",
        ),
        (
            "fail.service",
            "[Unit]\nOnFailure=uphold.service\n[Service]\nExecStart=/bin/false\n",
        ),
        (
            "uphold.service",
            "[Unit]\nUpholds=short.service\n[Service]\nExecStart=/bin/sleep infinity\n",
        ),
        (
            "short.service",
            "[Unit]\nStopWhenUnneeded=yes\nStartLimitBurst=15\nStartLimitIntervalSec=1h\n\
             [Service]\nExecStart=/bin/short\n",
        ),
        ("default.target", "[Unit]\n"),
    ]);
    w.p.want(
        "success.service",
        flotilla_units::planner::WantLife::UntilSwitch,
        Instant(1),
    )
    .expect("want");
    w.answer();
    assert!(w.started("success.service"));
    w.exit("success.service", ExitStatus::Code(0));
    assert!(w.started("fail.service"), "OnSuccess=");
    w.exit("fail.service", ExitStatus::Code(1));
    assert!(w.started("uphold.service"), "OnFailure=");
    assert!(w.started("short.service"), "Upholds= pulls in");
    let starts = |w: &World| w.pids.iter().filter(|(n, _)| n == "short.service").count();
    let mut now = Instant(3);
    for n in 1..=6 {
        assert_eq!(starts(&w), n);
        assert_eq!(w.state("short.service"), UnitState::Running);
        w.exit("short.service", ExitStatus::Code(0));
        while starts(&w) == n {
            let t = w.p.next_deadline().expect("a restart is due");
            assert!(t.0 < 60_000_000_000, "no restart within a minute");
            now = t.max(now);
            w.p.tick(now);
            w.answer();
        }
    }
}

const SEC: u64 = 1_000_000_000;

/// systemd's testsuite-57, its second part: an upheld unit whose
/// `Requires=`/`After=` dependency failed is started again, and the
/// dependency with it, while the upholding unit is active: at most 16
/// times in 10 s (systemd's bound on automatic starts), then once more
/// when the window is over; so it comes up once the dependency succeeds.
#[test]
fn an_upheld_unit_starts_its_failed_dependency_again() {
    let mut w = World::new(&[
        (
            "uphold.service",
            "[Unit]\nUpholds=upheld.service\n[Service]\nExecStart=/bin/sleep infinity\n",
        ),
        (
            "upheld.service",
            "[Unit]\nRequires=fail.service\nAfter=fail.service\n\
             [Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/echo ok\n",
        ),
        (
            "fail.service",
            "[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/check\nRestart=no\n",
        ),
        ("default.target", "[Unit]\n"),
    ]);
    w.p.want(
        "uphold.service",
        flotilla_units::planner::WantLife::UntilSwitch,
        Instant(1),
    )
    .expect("want");
    w.answer();
    assert_eq!(w.state("uphold.service"), UnitState::Running);
    assert_eq!(w.starts("fail.service"), 1);
    assert!(!w.started("upheld.service"));
    // Each failure: the dependency is started again at once, 16 times.
    let t0 = 2 * SEC;
    for n in 1..=16u64 {
        w.exit_at("fail.service", ExitStatus::Code(1), Instant(t0 + n));
        assert_eq!(w.starts("fail.service") as u64, n + 1, "retry {n}");
        assert_eq!(w.state("fail.service"), UnitState::Starting);
        assert_eq!(w.state("upheld.service"), UnitState::Waiting);
    }
    // The 17th failure in the window stays: failed, the upheld unit not
    // active, until the window (from the first retry) is over.
    w.exit_at("fail.service", ExitStatus::Code(1), Instant(t0 + 17));
    assert_eq!(w.starts("fail.service"), 17);
    assert_eq!(w.state("fail.service"), UnitState::Failed);
    assert!(!w.state("upheld.service").is_active());
    let due = w.p.next_deadline().expect("a start again is due");
    assert_eq!(due, Instant(t0 + 1 + 10 * SEC));
    w.p.tick(Instant(t0 + 5 * SEC));
    w.answer_at(Instant(t0 + 5 * SEC));
    assert_eq!(w.starts("fail.service"), 17, "not before the window ends");
    w.p.tick(due);
    w.answer_at(due);
    assert_eq!(w.starts("fail.service"), 18);
    // Now it succeeds: the upheld unit starts after it, and is active.
    w.exit_at("fail.service", ExitStatus::Code(0), due);
    assert_eq!(w.state("fail.service"), UnitState::Exited);
    assert!(w.started("upheld.service"));
    w.exit_at("upheld.service", ExitStatus::Code(0), due);
    assert!(w.state("upheld.service").is_active());

    // Without Upholds=, the failed dependency is not started again.
    let mut w = World::new(&[
        (
            "a.service",
            "[Unit]\nRequires=fail.service\nAfter=fail.service\n[Service]\nExecStart=/bin/a\n",
        ),
        ("fail.service", ONESHOT),
        ("default.target", "[Unit]\nWants=a.service\n"),
    ]);
    w.exit("fail.service", ExitStatus::Code(1));
    assert_eq!(w.state("fail.service"), UnitState::Failed);
    assert_eq!(w.starts("fail.service"), 1);
    assert!(w.p.next_deadline().is_none());
}

/// An upheld unit that failed for good (its own start limit hit) is
/// started again while the upholding unit is active, once the bound on
/// automatic starts lets it, and runs once its start limit's window is
/// over.
#[test]
fn an_upheld_unit_past_its_start_limit_starts_again() {
    let mut w = World::new(&[
        (
            "a.service",
            "[Unit]\nUpholds=b.service\n[Service]\nExecStart=/bin/a\n",
        ),
        (
            "b.service",
            "[Unit]\nStartLimitBurst=1\nStartLimitIntervalSec=5s\n[Service]\nExecStart=/bin/b\n",
        ),
        ("default.target", "[Unit]\nWants=a.service\n"),
    ]);
    assert_eq!(w.starts("b.service"), 1);
    w.exit_at("b.service", ExitStatus::Code(0), Instant(2));
    // Its restart (Restart=always, being upheld) is past the start limit:
    // failed; started again, refused again, until the bound's window (from
    // that restart) ends; then once more, past the start limit's window:
    // it runs.
    let mut now = Instant(2);
    let mut refused = false;
    while w.starts("b.service") == 1 {
        now = w.p.next_deadline().expect("a start again is due").max(now);
        assert!(now.0 < 12 * SEC, "started again within 12 s");
        w.p.tick(now);
        w.answer_at(now);
        refused |= w.state("b.service") == UnitState::Failed;
    }
    assert!(refused, "the restart was refused first");
    assert!(now.0 > 10 * SEC, "not before the bound's window ended");
    assert_eq!(w.state("b.service"), UnitState::Running);
}

/// systemd's testsuite-57, its third part: `StopPropagatedFrom=` stops the
/// unit when the one it names ends by itself (a clean exit too), and
/// `PropagatesStopTo=` from the other side when it fails; the stopped unit
/// stays stopped. Without either, it runs on.
#[test]
fn stop_propagates_when_a_unit_ends() {
    let one = "[Unit]\nWants=two.service\nAfter=two.service\nStopPropagatedFrom=two.service\n\
               [Service]\nExecStart=/bin/sleep infinity\n";
    let mut w = World::new(&[
        ("one.service", one),
        ("two.service", "[Service]\nExecStart=/bin/sleep 1.5\n"),
        ("default.target", "[Unit]\nWants=one.service\n"),
    ]);
    assert!(w.started("one.service") && w.started("two.service"));
    assert_eq!(w.state("one.service"), UnitState::Running);
    w.exit("two.service", ExitStatus::Code(0));
    assert!(
        w.killed.iter().any(|k| k == "one.service"),
        "{:?}",
        w.killed
    );
    w.exit("one.service", ExitStatus::Signal(15));
    assert!(!w.state("one.service").is_active());
    assert_eq!(w.starts("one.service"), 1, "stays stopped");

    let mut w = World::new(&[
        (
            "a.service",
            "[Unit]\nPropagatesStopTo=b.service\n[Service]\nExecStart=/bin/a\n",
        ),
        ("b.service", SERVICE),
        ("default.target", "[Unit]\nWants=a.service b.service\n"),
    ]);
    w.exit("a.service", ExitStatus::Code(1));
    assert_eq!(w.state("a.service"), UnitState::Failed);
    assert!(w.killed.iter().any(|k| k == "b.service"), "{:?}", w.killed);

    let mut w = World::new(&[
        (
            "one.service",
            "[Unit]\nWants=two.service\nAfter=two.service\n[Service]\nExecStart=/bin/a\n",
        ),
        ("two.service", "[Service]\nExecStart=/bin/sleep 1.5\n"),
        ("default.target", "[Unit]\nWants=one.service\n"),
    ]);
    w.exit("two.service", ExitStatus::Code(0));
    assert!(
        w.killed.iter().all(|k| k != "one.service"),
        "{:?}",
        w.killed
    );
    assert_eq!(w.state("one.service"), UnitState::Running);
}
