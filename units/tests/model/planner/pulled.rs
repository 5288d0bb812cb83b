//! `Wants=` and `Requires=` (pulled in, no ordering), `After=` and
//! `Before=` (ordering, pulling in nothing), and conflicts.

use super::*;

/// `top` wants `a`; `a` requires `b` and wants `c`, which never get ready.
fn pulled_world() -> World {
    let mut w = World::new(
        vec![
            with(spec("top", UnitType::Virtual), |s| s.wants = names(&["a"])),
            with(spec("a", UnitType::ForegroundSupervised), |s| {
                s.requires = names(&["b"]);
                s.wants = names(&["c"]);
            }),
            with(spec("b", UnitType::ForegroundNotified), |s| {
                s.restart_delay = Duration::from_secs(1);
            }),
            with(spec("c", UnitType::ForegroundNotified), |s| {
                s.restart = RestartPolicy::No;
            }),
        ],
        "none",
        PlannerOptions::default(),
    );
    w.behaviour.insert("b".into(), Behaviour::Hang);
    w.behaviour.insert("c".into(), Behaviour::Hang);
    w.set_target("top");
    w
}

#[test]
fn wants_and_requires_pull_in_and_start_concurrently() {
    let w = pulled_world();
    // Everything is required; nothing waits for b or c to be ready.
    assert_eq!(w.state("top"), UnitState::Running);
    assert_eq!(w.state("a"), UnitState::Running);
    assert_eq!(w.state("b"), UnitState::Starting);
    assert_eq!(w.state("c"), UnitState::Starting);
    let mut starts = w.starts();
    starts.sort();
    assert_eq!(starts, ["a", "b", "c"]);
    // What it wants or requires is not active yet: that is no degradation.
    assert!(!w.p.view(w.id("a")).unwrap().degraded);
}

#[test]
fn a_failing_required_unit_stops_its_requirer_and_a_wanted_one_does_not() {
    let mut w = pulled_world();
    // The wanted unit fails at its start: nothing changes for a.
    w.crash("c", ExitStatus::Code(1));
    assert_eq!(w.state("c"), UnitState::Failed);
    assert_eq!(w.state("a"), UnitState::Running);
    assert!(!w.events.iter().any(|e| *e == Event::Signal("a".into(), 15)));

    // The required unit fails at its start: a is stopped and waits,
    // blocked by it.
    w.crash("b", ExitStatus::Code(1));
    assert_eq!(w.state("b"), UnitState::Failed);
    assert!(w.events.contains(&Event::Signal("a".into(), 15)));
    assert_eq!(w.state("a"), UnitState::Waiting);
    assert_eq!(
        w.p.view(w.id("a")).unwrap().blocked_by.as_deref(),
        Some("b")
    );
    // b's restart: a starts again with it, not after it.
    w.events.clear();
    w.advance(Duration::from_secs(1));
    assert_eq!(w.state("b"), UnitState::Starting);
    assert_eq!(w.state("a"), UnitState::Running);
    assert_eq!(w.starts(), ["b", "a"]);

    // Once running, b fails later (a crash): a is stopped again.
    w.feed(Fact::Notify {
        unit: w.id("b"),
        msg: Notify::Ready,
    });
    assert_eq!(w.state("b"), UnitState::Running);
    w.crash("b", ExitStatus::Signal(9));
    assert_eq!(w.state("a"), UnitState::Waiting);

    // A restart of b asked for (no failure) stops a too, and both come
    // back.
    w.advance(Duration::from_secs(2));
    assert_eq!(w.state("a"), UnitState::Running);
    w.behaviour.insert("b".into(), Behaviour::Serve);
    w.events.clear();
    w.p.restart("b", w.now).expect("a unit");
    w.settle();
    assert!(w.events.contains(&Event::Signal("a".into(), 15)));
    assert_eq!(w.state("a"), UnitState::Running);
    assert_eq!(w.state("b"), UnitState::Running);
}

#[test]
fn requires_a_missing_target_blocks() {
    let w = World::new(
        vec![with(spec("a", UnitType::ForegroundSupervised), |s| {
            s.requires = names(&["nobody"]);
            s.wants = names(&["nothing"]);
        })],
        "a",
        PlannerOptions::default(),
    );
    assert_eq!(w.state("a"), UnitState::Waiting);
    assert_eq!(
        w.p.view(w.id("a")).unwrap().blocked_by.as_deref(),
        Some("nobody")
    );
}

#[test]
fn pairs_that_want_or_require_each_other_load_and_run() {
    // As waits-for (ordering), the same pairs are a dependency cycle.
    let ordered = vec![
        (
            with(spec("a", UnitType::ForegroundSupervised), |s| {
                s.waits_for = names(&["b"])
            }),
            origin("a"),
        ),
        (
            with(spec("b", UnitType::ForegroundSupervised), |s| {
                s.waits_for = names(&["a"])
            }),
            origin("b"),
        ),
    ];
    let (_, diags) = Graph::build(ordered);
    assert!(diags
        .iter()
        .any(|d| d.message.starts_with("dependency cycle")));

    let mut w = World::new(
        vec![
            with(spec("a", UnitType::ForegroundSupervised), |s| {
                s.wants = names(&["b"])
            }),
            with(spec("b", UnitType::ForegroundSupervised), |s| {
                s.wants = names(&["a"])
            }),
            with(spec("c", UnitType::ForegroundSupervised), |s| {
                s.requires = names(&["d"])
            }),
            with(spec("d", UnitType::ForegroundSupervised), |s| {
                s.requires = names(&["c"]);
                s.after = names(&["a"]);
            }),
            with(spec("top", UnitType::Virtual), |s| {
                s.wants = names(&["a", "c"])
            }),
        ],
        "top",
        PlannerOptions::default(),
    );
    for n in ["a", "b", "c", "d"] {
        assert_eq!(w.state(n), UnitState::Running, "{n}");
    }
    // The ordering that is there is kept: d after a.
    let starts = w.starts();
    let at = |n: &str| starts.iter().position(|s| s == n);
    assert!(at("a") < at("d"), "{starts:?}");
    w.shutdown();
    assert!(w.p.drained());
}

#[test]
fn a_unit_that_lost_to_a_conflict_says_so() {
    let mut w = World::new(
        vec![
            with(spec("top", UnitType::Virtual), |s| {
                s.depends_on = names(&["a"]);
                s.wants = names(&["b"]);
            }),
            spec("a", UnitType::ForegroundSupervised),
            with(spec("b", UnitType::ForegroundSupervised), |s| {
                s.conflicts = names(&["a"])
            }),
            spec("idle", UnitType::Virtual),
        ],
        "top",
        PlannerOptions::default(),
    );
    let (a, b) = (w.id("a"), w.id("b"));
    assert_eq!(w.state("b"), UnitState::Disabled);
    assert_eq!(w.p.view(b).unwrap().status, "conflicts with a");
    assert_eq!(w.p.graph().conflicts_of(a), [b]);
    let top = w.p.graph().provider("top").unwrap();
    assert_eq!(w.p.graph().conflict_losers(&[top]), [(b, a)]);
    // Required alone, b runs, and a is the one that conflicts with a
    // required unit; with neither required, neither says so.
    w.set_target("b");
    assert_eq!(w.state("b"), UnitState::Running);
    assert_eq!(w.p.view(a).unwrap().status, "conflicts with b");
    w.set_target("idle");
    assert_eq!(w.state("a"), UnitState::Disabled);
    assert!(!w.p.view(a).unwrap().status.contains("conflicts"));
}

#[test]
fn after_and_before_order_required_units_and_pull_in_nothing() {
    let mut w = World::new(
        vec![
            with(spec("top", UnitType::Virtual), |s| {
                s.waits_for = names(&["a", "b", "c"]);
            }),
            // a after b, b before c: b first, then a and c; stopped the
            // other way round.
            with(spec("a", UnitType::ForegroundSupervised), |s| {
                s.after = names(&["b", "unrelated", "missing"]);
            }),
            with(spec("b", UnitType::Oneshot), |s| {
                s.before = names(&["c"]);
            }),
            spec("c", UnitType::ForegroundSupervised),
            spec("unrelated", UnitType::ForegroundSupervised),
            spec("none", UnitType::Virtual),
        ],
        "none",
        PlannerOptions::default(),
    );
    w.set_target("top");
    assert_eq!(w.starts()[0], "b", "{:?}", w.starts());
    assert_eq!(w.starts().len(), 3, "{:?}", w.starts());
    assert_eq!(w.state("a"), UnitState::Running);
    assert_eq!(w.state("c"), UnitState::Running);
    assert_eq!(
        w.state("unrelated"),
        UnitState::Disabled,
        "after does not pull a unit in"
    );
    assert!(!w.p.view(w.id("a")).unwrap().degraded);

    // Stopping: a and c go before b leaves.
    let stopped = w.events.len();
    w.set_target("none");
    let order: Vec<String> = w.events[stopped..]
        .iter()
        .filter_map(|e| match e {
            Event::State(n, UnitState::Disabled) => Some(n.clone()),
            _ => None,
        })
        .collect();
    let at = |n: &str| order.iter().position(|x| x == n).unwrap();
    assert!(at("a") < at("b") && at("c") < at("b"), "{order:?}");
}
