//! Triggered units: sockets (accepting ones too) and path units firing
//! their units, the triggered set holding them, a trigger naming an alias.

use super::*;

/// A socket unit: up once the init armed it; its event starts its service
/// (a long-running one), during which the trigger does not wait; once the
/// service settled it waits again. A trigger past its limit fails, and a
/// trigger that leaves the target is disarmed.
#[test]
fn a_socket_fires_its_service_and_waits_again_once_it_settled() {
    let sock = |name: &str| {
        with(spec(name, UnitType::Socket), |s| {
            s.exec_start = None;
            s.extras.triggers = names(&["job"]);
            s.extras.activation = Activation::of_type(UnitType::Socket).map(Box::new);
        })
    };
    let mut w = World::new(
        vec![
            sock("web.socket"),
            spec("job", UnitType::ForegroundSupervised),
        ],
        "web.socket",
        PlannerOptions::default(),
    );
    w.behaviour.insert("job".into(), Behaviour::Exit(0));
    let t = w.id("web.socket");
    assert_eq!(w.state("web.socket"), UnitState::Running);
    assert_eq!(w.p.view(t).unwrap().status, "listening");
    assert_eq!(w.state("job"), UnitState::Disabled);
    assert!(w.p.trigger_waits(t));
    // Held by a serving job: the trigger does not wait meanwhile.
    w.behaviour.insert("job".into(), Behaviour::Serve);
    w.feed(Fact::Fired {
        unit: t,
        path: None,
    });
    assert_eq!(w.starts(), ["job"]);
    assert_eq!(w.state("job"), UnitState::Running, "{:?}", w.events);
    assert!(!w.p.trigger_waits(t));
    w.crash("job", ExitStatus::Code(0));
    assert_eq!(w.state("job"), UnitState::Disabled, "settled, left T");
    assert!(w.p.trigger_waits(t));
    // Past the limit (20 in 2 s) the trigger fails.
    w.behaviour.insert("job".into(), Behaviour::Exit(0));
    for _ in 0..19 {
        w.feed(Fact::Fired {
            unit: t,
            path: None,
        });
    }
    assert_eq!(w.state("web.socket"), UnitState::Running);
    w.feed(Fact::Fired {
        unit: t,
        path: None,
    });
    assert_eq!(w.state("web.socket"), UnitState::Failed);
    assert!(w.p.view(t).unwrap().status.contains("trigger limit hit"));
    assert!(!w.p.trigger_waits(t));
}

/// A path unit's unit is told which trigger and which path fired it
/// (systemd's `TRIGGER_UNIT`, `TRIGGER_PATH`) from that start; once it
/// is inactive again it is told nothing more, and the next fire tells it
/// the new path; a start by hand tells it nothing.
#[test]
fn a_path_units_unit_is_told_the_path_that_fired_it_while_triggered() {
    let path = with(spec("drop.path", UnitType::Path), |s| {
        s.exec_start = None;
        s.extras.triggers = names(&["job"]);
        s.extras.activation = Activation::of_type(UnitType::Path).map(Box::new);
    });
    let mut w = World::new(
        vec![path, spec("job", UnitType::ForegroundSupervised)],
        "drop.path",
        PlannerOptions::default(),
    );
    w.behaviour.insert("job".into(), Behaviour::Serve);
    let t = w.id("drop.path");
    let job = w.id("job");
    assert_eq!(w.p.activated_by(job), None);
    w.feed(Fact::Fired {
        unit: t,
        path: Some("/tmp/drop-a".into()),
    });
    assert_eq!(w.state("job"), UnitState::Running, "{:?}", w.events);
    let told = |w: &World| w.p.activated_by(job).map(|a| a.pairs());
    let pairs = |p: &str| {
        Some(vec![
            ("trigger_unit", "drop.path".to_string()),
            ("trigger_path", p.to_string()),
        ])
    };
    assert_eq!(told(&w), pairs("/tmp/drop-a"));
    assert_eq!(
        w.p.activated_by(job).unwrap().env()[1],
        ("TRIGGER_PATH", "/tmp/drop-a".to_string())
    );
    w.crash("job", ExitStatus::Code(0));
    assert_eq!(w.state("job"), UnitState::Disabled, "settled, left T");
    assert_eq!(told(&w), None);
    w.feed(Fact::Fired {
        unit: t,
        path: Some("/tmp/drop-b".into()),
    });
    assert_eq!(told(&w), pairs("/tmp/drop-b"));
    w.crash("job", ExitStatus::Code(0));
    assert_eq!(told(&w), None);
}

/// A path unit's oneshot that remains after its exit stays triggered
/// (active, told its trigger) and the path unit does not look again until
/// it is stopped by hand, as systemd's path unit waits for its unit to be
/// inactive; then it is told nothing more.
#[test]
fn a_path_units_remaining_oneshot_holds_the_path_unit_until_stopped() {
    let path = with(spec("drop.path", UnitType::Path), |s| {
        s.exec_start = None;
        s.extras.triggers = names(&["job"]);
        s.extras.activation = Activation::of_type(UnitType::Path).map(Box::new);
    });
    let job = with(spec("job", UnitType::Oneshot), |s| {
        s.remain_after_exit = Some(true);
    });
    let mut w = World::new(vec![path, job], "drop.path", PlannerOptions::default());
    w.behaviour.insert("job".into(), Behaviour::Exit(0));
    let t = w.id("drop.path");
    let job = w.id("job");
    w.feed(Fact::Fired {
        unit: t,
        path: Some("/tmp/drop".into()),
    });
    assert_eq!(w.state("job"), UnitState::Exited, "{:?}", w.events);
    assert_eq!(w.p.triggered_by(job), Some("drop.path"));
    assert!(w.p.activated_by(job).is_some());
    assert!(!w.p.trigger_waits(t), "held by its remaining unit");
    let now = w.now;
    assert_eq!(w.p.unwant("job", now), Ok(()));
    w.settle();
    assert_eq!(w.state("job"), UnitState::Disabled, "{:?}", w.events);
    assert_eq!(w.p.triggered_by(job), None, "settled once stopped");
    assert_eq!(w.p.activated_by(job), None);
    assert!(w.p.trigger_waits(t));
}

/// Debian's cups: cups.path (`PathExists=`, true) and cups.socket are
/// `PartOf=cups.service`, all three wanted by the target. `systemctl stop
/// cups` stops the three, and they stay stopped while cups.service is
/// held stopped by hand (the path, started again for the target, fired
/// and started the service again, so the stop never ended); a start by
/// hand brings the three back.
#[test]
fn what_is_part_of_a_unit_stopped_by_hand_stays_stopped_with_it() {
    let part_of_cups = |s: &mut UnitSpec| {
        s.exec_start = None;
        s.extras.part_of = names(&["cups"]);
    };
    let path = with(spec("cups.path", UnitType::Path), |s| {
        part_of_cups(s);
        s.extras.triggers = names(&["cups"]);
        s.extras.activation = Activation::of_type(UnitType::Path).map(Box::new);
    });
    let all = with(spec("all", UnitType::Virtual), |s| {
        s.exec_start = None;
        s.wants = names(&["cups.path", "cups"]);
    });
    let cups = spec("cups", UnitType::ForegroundSupervised);
    let mut w = World::new(vec![all, path, cups], "all", PlannerOptions::default());
    w.behaviour.insert("cups".into(), Behaviour::Serve);
    let t = w.id("cups.path");
    assert_eq!(w.state("cups"), UnitState::Running, "{:?}", w.events);
    assert_eq!(w.state("cups.path"), UnitState::Running);
    let now = w.now;
    assert_eq!(w.p.unwant("cups", now), Ok(()));
    w.settle();
    assert_eq!(w.state("cups"), UnitState::Disabled, "{:?}", w.events);
    assert_eq!(w.state("cups.path"), UnitState::Disabled, "{:?}", w.events);
    assert!(!w.p.trigger_waits(t), "stopped with its unit");
    w.p.want("cups", WantLife::Kept, now)
        .expect("a start by hand");
    w.settle();
    assert_eq!(w.state("cups"), UnitState::Running, "{:?}", w.events);
    assert_eq!(w.state("cups.path"), UnitState::Running, "{:?}", w.events);
}

/// A unit that a socket started and that failed stays `failed` outside
/// the target, but a shutdown still disables it: it used to stay failed,
/// and the shutdown never ended (a Debian container whose `dbus.service`
/// failed hung in `podman stop` until the engine's SIGKILL).
#[test]
fn a_failed_triggered_unit_does_not_hold_up_the_shutdown() {
    let sock = with(spec("bus.socket", UnitType::Socket), |s| {
        s.exec_start = None;
        s.extras.triggers = names(&["bus"]);
        s.extras.activation = Activation::of_type(UnitType::Socket).map(Box::new);
    });
    let mut w = World::new(
        vec![
            sock,
            with(spec("bus", UnitType::ForegroundSupervised), |s| {
                s.restart = RestartPolicy::No;
            }),
        ],
        "bus.socket",
        PlannerOptions::default(),
    );
    w.behaviour.insert("bus".into(), Behaviour::Exit(1));
    let t = w.id("bus.socket");
    w.feed(Fact::Fired {
        unit: t,
        path: None,
    });
    assert_eq!(w.starts(), ["bus"]);
    assert_eq!(w.state("bus"), UnitState::Failed, "{:?}", w.events);
    assert_eq!(w.p.triggered_by(w.id("bus")), None, "settled, left T");
    w.shutdown();
    assert_eq!(w.state("bus"), UnitState::Disabled);
    assert!(w.p.drained());
}

/// A trigger whose unit is named by an alias (`syslog.service`, provided
/// by `rsyslog.service`) starts the unit that provides it, which stays
/// triggered by its own name until it settles.
#[test]
fn a_trigger_naming_an_alias_starts_the_unit_that_provides_it() {
    let mut w = World::new(
        vec![
            socket_spec("syslog.socket", "syslog.service", false),
            with(spec("rsyslog", UnitType::ForegroundSupervised), |s| {
                s.provides = names(&["rsyslog", "syslog.service"]);
            }),
        ],
        "syslog.socket",
        PlannerOptions::default(),
    );
    let t = w.id("syslog.socket");
    assert!(w.p.trigger_waits(t));
    w.feed(Fact::Fired {
        unit: t,
        path: None,
    });
    assert_eq!(w.state("rsyslog"), UnitState::Running);
    assert_eq!(w.p.triggered_by(w.id("rsyslog")), Some("syslog.socket"));
    // A socket's service is told nothing of it (systemd's neither).
    assert_eq!(w.p.activated_by(w.id("rsyslog")), None);
    assert!(!w.p.trigger_waits(t));
}

/// A trigger whose sockets cannot be bound is `failed` and says why; one
/// that leaves the target is disarmed.
#[test]
fn a_socket_that_cannot_bind_fails_and_one_that_stops_is_disarmed() {
    let (g, _) = Graph::build(vec![(
        with(spec("s.socket", UnitType::Socket), |s| {
            s.exec_start = None;
            s.extras.triggers = names(&["job"]);
        }),
        origin("s.socket"),
    )]);
    let mut p = Planner::new(g, "s.socket", Instant(0), PlannerOptions::default());
    let t = p.graph().unit("s.socket").unwrap();
    let arm = p.take_actions();
    assert!(
        matches!(arm[..], [Action::Arm { unit, .. }] if unit == t),
        "{arm:?}"
    );
    assert_eq!(p.state(t), UnitState::Starting);
    p.fact(
        Fact::Armed {
            unit: t,
            result: Err("ListenStream=80: bind: Address in use".into()),
        },
        Instant(1),
    );
    assert_eq!(p.state(t), UnitState::Failed);
    assert!(p.view(t).unwrap().status.contains("Address in use"));
    // Armed this time, then the target leaves it: disarmed at once.
    p.restart("s.socket", Instant(2)).unwrap();
    p.take_actions();
    p.fact(
        Fact::Armed {
            unit: t,
            result: Ok(()),
        },
        Instant(3),
    );
    assert_eq!(p.state(t), UnitState::Running);
    p.shutdown(Instant(4));
    let acts = p.take_actions();
    assert!(
        acts.iter()
            .any(|a| matches!(a, Action::Disarm { unit } if *unit == t)),
        "{acts:?}"
    );
    assert_eq!(p.state(t), UnitState::Disabled);
}

/// An `accept: yes` socket: each connection's instance (made by the init)
/// joins T, put there by the socket, and runs until it settles; the socket
/// waits all along (the init accepts every connection itself).
#[test]
fn an_accepting_socket_puts_each_connections_instance_in_t() {
    let mut w = World::new(
        vec![
            socket_spec("echo.socket", "echo@.service", true),
            spec("echo@0.service", UnitType::ForegroundSupervised),
            spec("echo@1.service", UnitType::ForegroundSupervised),
        ],
        "echo.socket",
        PlannerOptions::default(),
    );
    w.behaviour
        .insert("echo@0.service".into(), Behaviour::Serve);
    w.behaviour
        .insert("echo@1.service".into(), Behaviour::Serve);
    let t = w.id("echo.socket");
    assert!(w.p.trigger_waits(t));
    w.feed(Fact::Accepted {
        unit: t,
        instance: "echo@0.service".into(),
    });
    w.feed(Fact::Accepted {
        unit: t,
        instance: "echo@1.service".into(),
    });
    assert_eq!(w.state("echo@0.service"), UnitState::Running);
    assert_eq!(w.state("echo@1.service"), UnitState::Running);
    assert_eq!(
        w.p.triggered_by(w.id("echo@0.service")),
        Some("echo.socket")
    );
    assert!(w.p.trigger_waits(t), "still the init's to accept on");
    w.crash("echo@0.service", ExitStatus::Code(0));
    assert_eq!(
        w.state("echo@0.service"),
        UnitState::Disabled,
        "settled, left T"
    );
    assert!(!w.p.view(w.id("echo@0.service")).unwrap().required);
    assert_eq!(w.state("echo@1.service"), UnitState::Running);
    // A name the graph does not have is said on the socket.
    w.feed(Fact::Accepted {
        unit: t,
        instance: "echo@9.service".into(),
    });
    assert!(w
        .p
        .view(t)
        .unwrap()
        .status
        .contains("echo@9.service is not a known unit"));
}

/// A socket unit `name` that starts `service`, with `accept` (without it,
/// no settings of its own: the defaults).
fn socket_spec(name: &str, service: &str, accept: bool) -> UnitSpec {
    with(spec(name, UnitType::Socket), |s| {
        s.exec_start = None;
        s.extras.triggers = names(&[service]);
        if accept {
            s.extras.activation = Some(Box::new(Activation::Socket(
                flotilla_units::trigger::SocketSettings {
                    accept: true,
                    ..Default::default()
                },
            )));
        }
    })
}
