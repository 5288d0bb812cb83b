//! Cell tests of the state model's rules, one scenario each: the required
//! set, readiness, dependencies that block, stop and bring back, restarts
//! and their limits, time-outs, pidfiles, scripts, the start cap,
//! conditions, mounts.

use super::*;

#[test]
fn target_pulls_in_exactly_its_required_set() {
    let w = World::new(
        vec![
            with(spec("top", UnitType::Virtual), |s| {
                s.provides = names(&["default"]);
                s.depends_on = names(&["a"]);
                s.waits_for = names(&["b"]);
            }),
            spec("a", UnitType::ForegroundSupervised),
            spec("b", UnitType::ForegroundNotified),
            spec("unrelated", UnitType::ForegroundSupervised),
        ],
        "default",
        PlannerOptions::default(),
    );
    assert_eq!(w.state("top"), UnitState::Running);
    assert_eq!(w.state("a"), UnitState::Running);
    assert_eq!(w.state("b"), UnitState::Running);
    assert_eq!(w.state("unrelated"), UnitState::Disabled);
    assert_eq!(w.p.target_settled(), Some(true));
    assert!(!w.p.degraded());
}

#[test]
fn notified_unit_is_starting_until_ready() {
    let mut w = World::new(
        vec![spec("n", UnitType::ForegroundNotified)],
        "n",
        PlannerOptions::default(),
    );
    // The default behaviour sends READY=1 at once; use Hang-free manual flow.
    assert_eq!(w.state("n"), UnitState::Running);
    let id = w.id("n");
    w.p.fact(
        Fact::Notify {
            unit: id,
            msg: Notify::Reloading,
        },
        w.now,
    );
    w.settle();
    assert_eq!(w.state("n"), UnitState::Reloading);
    w.p.fact(
        Fact::Notify {
            unit: id,
            msg: Notify::Ready,
        },
        w.now,
    );
    w.settle();
    assert_eq!(w.state("n"), UnitState::Running);
    w.p.fact(
        Fact::Notify {
            unit: id,
            msg: Notify::Status("serving 3 clients".into()),
        },
        w.now,
    );
    assert_eq!(w.p.view(id).unwrap().status, "serving 3 clients");
}

#[test]
fn oneshot_exits_and_dependents_start_after_it() {
    let w = World::new(
        vec![
            with(spec("app", UnitType::ForegroundSupervised), |s| {
                s.depends_ms = names(&["setup"])
            }),
            spec("setup", UnitType::Oneshot),
        ],
        "app",
        PlannerOptions::default(),
    );
    assert_eq!(w.state("setup"), UnitState::Exited);
    assert_eq!(w.state("app"), UnitState::Running);
    assert_eq!(w.starts(), v(&["setup", "app"]));
}

#[test]
fn failed_hard_dependency_blocks_and_names_the_root() {
    let mut w = World::new(vec![], "x", PlannerOptions::default());
    w.behaviour.insert("db".into(), Behaviour::Exit(1));
    let mut w2 = World::new(
        vec![
            with(spec("web", UnitType::ForegroundSupervised), |s| {
                s.depends_on = names(&["api"])
            }),
            with(spec("api", UnitType::ForegroundSupervised), |s| {
                s.depends_ms = names(&["db"])
            }),
            with(spec("db", UnitType::Oneshot), |s| {
                s.restart = RestartPolicy::No
            }),
        ],
        "nothing-yet",
        PlannerOptions::default(),
    );
    w2.behaviour.insert("db".into(), Behaviour::Exit(1));
    w2.set_target("web");
    drop(w);
    assert_eq!(w2.state("db"), UnitState::Failed);
    assert_eq!(w2.state("api"), UnitState::Waiting);
    let api = w2.p.view(w2.id("api")).unwrap();
    assert_eq!(api.blocked_by.as_deref(), Some("db"));
    let web = w2.p.view(w2.id("web")).unwrap();
    assert_eq!(
        web.blocked_by.as_deref(),
        Some("db"),
        "blocked-by names the root cause"
    );
    assert_eq!(w2.p.target_settled(), Some(false));
}

#[test]
fn missing_targets_block_hard_and_settle_waits_for() {
    let w = World::new(
        vec![
            with(spec("a", UnitType::ForegroundSupervised), |s| {
                s.waits_for = names(&["nobody"])
            }),
            with(spec("b", UnitType::ForegroundSupervised), |s| {
                s.depends_on = names(&["ghost-target"])
            }),
            with(spec("top", UnitType::Virtual), |s| {
                s.waits_for = names(&["a", "b"])
            }),
        ],
        "top",
        PlannerOptions::default(),
    );
    assert_eq!(w.state("a"), UnitState::Running);
    assert!(
        w.p.view(w.id("a")).unwrap().degraded,
        "missing waits-for makes it degraded"
    );
    assert_eq!(w.state("b"), UnitState::Waiting);
    assert_eq!(
        w.p.view(w.id("b")).unwrap().blocked_by.as_deref(),
        Some("ghost-target")
    );
    // top waits for b, which is blocked for good: for ordering that is a
    // failure, so top starts, degraded.
    assert_eq!(w.state("top"), UnitState::Running);
    assert!(w.p.view(w.id("top")).unwrap().degraded);
}

#[test]
fn waits_for_a_failed_unit_counts_as_settled_and_degrades() {
    let mut w = World::new(
        vec![
            with(spec("bot", UnitType::ForegroundSupervised), |s| {
                s.waits_for = names(&["ircd"])
            }),
            with(spec("ircd", UnitType::ForegroundSupervised), |s| {
                s.restart = RestartPolicy::No
            }),
        ],
        "none",
        PlannerOptions::default(),
    );
    w.behaviour.insert("ircd".into(), Behaviour::Exit(2));
    w.set_target("bot");
    assert_eq!(w.state("ircd"), UnitState::Failed);
    assert_eq!(w.state("bot"), UnitState::Running);
    assert!(w.p.view(w.id("bot")).unwrap().degraded);
}

#[test]
fn depends_on_stops_dependent_and_brings_it_back() {
    let mut w = World::new(
        vec![
            with(spec("web", UnitType::ForegroundSupervised), |s| {
                s.depends_on = names(&["db"])
            }),
            with(spec("db", UnitType::ForegroundSupervised), |s| {
                s.restart_delay = Duration::from_secs(1);
            }),
            with(spec("cron", UnitType::ForegroundSupervised), |s| {
                s.depends_ms = names(&["db"])
            }),
            with(spec("top", UnitType::Virtual), |s| {
                s.waits_for = names(&["web", "cron"])
            }),
        ],
        "top",
        PlannerOptions::default(),
    );
    assert_eq!(w.state("web"), UnitState::Running);
    w.crash("db", ExitStatus::Code(1));
    assert_eq!(w.state("db"), UnitState::Failed);
    assert_eq!(
        w.state("web"),
        UnitState::Waiting,
        "depends-on: the dependent is stopped"
    );
    assert_eq!(
        w.state("cron"),
        UnitState::Running,
        "depends-ms: not stopped"
    );
    let restart_at = w.p.view(w.id("db")).unwrap().restart_at;
    assert_eq!(restart_at, Some(w.now.after(Duration::from_secs(1))));
    w.advance(Duration::from_secs(1));
    assert_eq!(w.state("db"), UnitState::Running);
    assert_eq!(w.state("web"), UnitState::Running, "starts again by itself");
    assert_eq!(w.p.view(w.id("db")).unwrap().restarts, 1);
}

#[test]
fn restart_backoff_doubles_up_to_the_max_and_resets_after_60s_active() {
    let mut w = World::new(
        vec![with(spec("flaky", UnitType::ForegroundSupervised), |s| {
            s.restart_delay = Duration::from_secs(1);
            s.restart_max_delay = Duration::from_secs(5);
        })],
        "flaky",
        PlannerOptions::default(),
    );
    let mut delays = Vec::new();
    for _ in 0..5 {
        w.crash("flaky", ExitStatus::Signal(11));
        let v = w.p.view(w.id("flaky")).unwrap();
        assert_eq!(v.state, UnitState::Failed);
        assert!(v.status.contains("killed by SIGSEGV"), "{}", v.status);
        let d = v.restart_at.unwrap().since(w.now);
        delays.push(d.as_secs());
        w.advance(d);
        assert_eq!(w.state("flaky"), UnitState::Running);
    }
    assert_eq!(delays, vec![1, 2, 4, 5, 5]);
    w.advance(Duration::from_secs(61));
    w.crash("flaky", ExitStatus::Code(3));
    let d =
        w.p.view(w.id("flaky"))
            .unwrap()
            .restart_at
            .unwrap()
            .since(w.now);
    assert_eq!(d.as_secs(), 1, "count starts over after 60 s active");
}

#[test]
fn a_start_limit_fails_the_unit_for_good_once_it_is_hit() {
    let mut w = World::new(
        vec![with(spec("flaky", UnitType::ForegroundSupervised), |s| {
            s.restart = RestartPolicy::Always;
            s.restart_delay = Duration::from_secs(1);
            s.restart_max_delay = Duration::from_secs(1);
            s.extras.start_limit_burst = Some(3);
            s.extras.start_limit_interval = Some(Duration::from_secs(10));
        })],
        "flaky",
        PlannerOptions::default(),
    );
    // The first start and two restarts are within the limit.
    for _ in 0..2 {
        w.crash("flaky", ExitStatus::Code(1));
        w.advance(Duration::from_secs(1));
        assert_eq!(w.state("flaky"), UnitState::Running);
    }
    w.crash("flaky", ExitStatus::Code(1));
    let pending = w.p.view(w.id("flaky")).unwrap().restart_at;
    assert!(
        pending.is_some(),
        "the crash itself still schedules a restart"
    );
    w.advance(Duration::from_secs(1));
    // The fourth start in 10 s is refused: failed for good, nothing ran.
    let v = w.p.view(w.id("flaky")).unwrap();
    assert_eq!(v.state, UnitState::Failed);
    assert_eq!(v.status, "start limit hit: more than 3 starts in 10s");
    assert!(v.restart_at.is_none());
    let spawns = w.starts().len();
    w.advance(Duration::from_secs(60));
    assert_eq!(w.state("flaky"), UnitState::Failed, "not retried by itself");
    assert_eq!(w.starts().len(), spawns);
    // Once the window has passed, a restart asked for is a fresh count.
    w.p.restart("flaky", w.now).expect("restart");
    w.settle();
    assert_eq!(w.state("flaky"), UnitState::Running);
}

#[test]
fn a_start_limit_of_zero_is_no_limit() {
    let mut w = World::new(
        vec![with(spec("flaky", UnitType::ForegroundSupervised), |s| {
            s.restart = RestartPolicy::Always;
            s.restart_delay = Duration::from_secs(1);
            s.restart_max_delay = Duration::from_secs(1);
            s.extras.start_limit_interval = Some(Duration::ZERO);
        })],
        "flaky",
        PlannerOptions::default(),
    );
    for _ in 0..10 {
        w.crash("flaky", ExitStatus::Code(1));
        w.advance(Duration::from_secs(1));
        assert_eq!(w.state("flaky"), UnitState::Running);
    }
}

#[test]
fn restart_no_and_clean_exit() {
    let mut w = World::new(
        vec![
            with(spec("once", UnitType::ForegroundSupervised), |s| {
                s.restart = RestartPolicy::No
            }),
            with(spec("clean", UnitType::ForegroundSupervised), |s| {
                s.restart = RestartPolicy::OnFailure
            }),
            with(spec("always", UnitType::ForegroundSupervised), |s| {
                s.restart = RestartPolicy::Always
            }),
            with(spec("top", UnitType::Virtual), |s| {
                s.waits_for = names(&["once", "clean", "always"])
            }),
        ],
        "top",
        PlannerOptions::default(),
    );
    w.crash("once", ExitStatus::Code(1));
    assert_eq!(w.state("once"), UnitState::Failed);
    assert!(w.p.view(w.id("once")).unwrap().restart_at.is_none());
    w.crash("clean", ExitStatus::Code(0));
    assert_eq!(
        w.state("clean"),
        UnitState::Exited,
        "exit 0 under on-failure: exited"
    );
    w.crash("always", ExitStatus::Code(0));
    assert_eq!(
        w.state("always"),
        UnitState::Failed,
        "waiting to restart is failed"
    );
    assert!(w.p.view(w.id("always")).unwrap().restart_at.is_some());
    w.advance(Duration::from_secs(1));
    assert_eq!(w.state("always"), UnitState::Running);
}

#[test]
fn start_timeout_fails_the_unit_and_stop_timeout_escalates_to_sigkill() {
    let mut w = World::new(
        vec![with(spec("slow", UnitType::ForegroundNotified), |s| {
            s.start_timeout = Duration::from_secs(5);
            s.stop_timeout = Duration::from_secs(2);
            s.restart = RestartPolicy::No;
        })],
        "none",
        PlannerOptions::default(),
    );
    w.behaviour.insert("slow".into(), Behaviour::Hang);
    w.set_target("slow");
    assert_eq!(w.state("slow"), UnitState::Starting);
    w.advance(Duration::from_secs(5));
    assert_eq!(w.state("slow"), UnitState::Stopping);
    assert!(w.events.contains(&Event::Signal("slow".into(), 15)));
    w.advance(Duration::from_secs(2));
    assert!(w.events.contains(&Event::Signal("slow".into(), 9)));
    assert_eq!(w.state("slow"), UnitState::Failed);
    assert_eq!(w.p.view(w.id("slow")).unwrap().status, "start timed out");
}

#[test]
fn ready_wait_and_ready_grep() {
    let mut w = World::new(
        vec![
            with(spec("waiter", UnitType::ForegroundSupervised), |s| {
                s.extras.ready_wait = Some(Duration::from_millis(500))
            }),
            with(spec("grepper", UnitType::ForegroundSupervised), |s| {
                s.extras.ready_grep = Some("^connected".into())
            }),
            with(spec("top", UnitType::Virtual), |s| {
                s.depends_on = names(&["waiter", "grepper"])
            }),
        ],
        "top",
        PlannerOptions::default(),
    );
    assert_eq!(w.state("waiter"), UnitState::Starting);
    assert_eq!(w.state("grepper"), UnitState::Starting);
    assert_eq!(w.p.next_deadline(), Some(Instant(500_000_000)));
    w.advance(Duration::from_millis(500));
    assert_eq!(w.state("waiter"), UnitState::Running);
    assert_eq!(w.state("top"), UnitState::Waiting);
    let g = w.id("grepper");
    w.p.fact(Fact::ReadyLine { unit: g }, w.now);
    w.settle();
    assert_eq!(w.state("grepper"), UnitState::Running);
    assert_eq!(w.state("top"), UnitState::Running);
}

#[test]
fn pidfile_daemon_is_supervised_through_its_pid() {
    let mut w = World::new(
        vec![with(spec("d", UnitType::BackgroundPidfile), |s| {
            s.extras.pidfile = Some("/run/d.pid".into())
        })],
        "d",
        PlannerOptions::default(),
    );
    assert_eq!(w.state("d"), UnitState::Running);
    let pid = w.p.view(w.id("d")).unwrap().pid.unwrap();
    assert!(w.procs.contains_key(&pid));
    w.crash("d", ExitStatus::Signal(9));
    assert_eq!(w.state("d"), UnitState::Failed);
}

#[test]
fn scripted_unit_runs_its_stop_script() {
    let mut w = World::new(
        vec![with(spec("fw", UnitType::BackgroundScripted), |s| {
            s.exec_stop = Some(Command::new(["/bin/fw", "down"]));
        })],
        "fw",
        PlannerOptions::default(),
    );
    assert_eq!(w.state("fw"), UnitState::Running);
    assert_eq!(w.p.view(w.id("fw")).unwrap().pid, None);
    w.shutdown();
    assert_eq!(w.state("fw"), UnitState::Disabled);
    assert!(w.p.drained());
}

#[test]
fn pre_commands_run_in_order_and_a_failure_fails_the_start() {
    let mut w = World::new(
        vec![with(spec("app", UnitType::ForegroundSupervised), |s| {
            s.exec_start_pre = vec![Command::new(["/bin/a"]), Command::new(["/bin/b"])].into();
            s.extras.exec_stop_post = vec![Command::new(["/bin/cleanup"])].into();
        })],
        "app",
        PlannerOptions::default(),
    );
    assert_eq!(w.state("app"), UnitState::Running);
    w.shutdown();
    assert!(w.p.drained());
}

#[test]
fn max_concurrent_starts_caps_starting_units() {
    let units: Vec<UnitSpec> = (0..6)
        .map(|i| spec(&format!("u{i}"), UnitType::ForegroundNotified))
        .chain([with(spec("top", UnitType::Virtual), |s| {
            s.depends_on = (0..6).map(|i| format!("u{i}")).collect();
        })])
        .collect();
    let mut w = World::new(
        units,
        "none",
        PlannerOptions {
            max_concurrent_starts: Some(2),
        },
    );
    for i in 0..6 {
        w.behaviour.insert(format!("u{i}"), Behaviour::Hang);
    }
    w.set_target("top");
    let starting = |w: &World| {
        (0..6)
            .filter(|i| w.state(&format!("u{i}")) == UnitState::Starting)
            .count()
    };
    assert_eq!(starting(&w), 2);
    assert_eq!(w.starts(), v(&["u0", "u1"]), "queued in name order");
    let u0 = w.id("u0");
    w.p.fact(
        Fact::Notify {
            unit: u0,
            msg: Notify::Ready,
        },
        w.now,
    );
    w.settle();
    assert_eq!(starting(&w), 2);
    assert_eq!(w.starts(), v(&["u0", "u1", "u2"]));
}

#[test]
fn restart_command_restarts_dependents_around_it() {
    let mut w = World::new(
        vec![
            with(spec("web", UnitType::ForegroundSupervised), |s| {
                s.depends_on = names(&["db"])
            }),
            spec("db", UnitType::ForegroundSupervised),
        ],
        "web",
        PlannerOptions::default(),
    );
    w.events.clear();
    w.p.restart("db", w.now).unwrap();
    w.settle();
    let web_stop = w
        .index_of(&Event::State("web".into(), UnitState::Waiting))
        .unwrap();
    let db_stop = w.index_of(&Event::Signal("db".into(), 15)).unwrap();
    assert!(
        web_stop < db_stop,
        "the dependent stops first: {:?}",
        w.events
    );
    assert_eq!(w.starts(), v(&["db", "web"]));
    assert!(matches!(
        w.p.restart("nope", w.now),
        Err(flotilla_units::planner::RestartError::UnknownUnit(_))
    ));
}

#[test]
fn coincidental_targets() {
    let w = World::new(
        vec![
            with(spec("maddy", UnitType::ForegroundNotified), |s| {
                s.provides = names(&["imapd", "smtpd"])
            }),
            with(spec("top", UnitType::Virtual), |s| {
                s.depends_on = names(&["imapd"])
            }),
        ],
        "top",
        PlannerOptions::default(),
    );
    assert_eq!(w.p.coincidental(w.id("maddy")), v(&["smtpd"]));
    assert!(w.p.coincidental(w.id("top")).is_empty());
}

/// Conditions at start against a scripted machine: a unit whose condition
/// holds runs; one whose condition fails is skipped (`exited`, and what
/// depends on it starts); one whose assertion fails is `failed` and
/// blocks what depends on it; nothing of the last two runs.
#[test]
fn conditions_run_skip_or_fail_a_unit_at_its_start() {
    let cond = |name: &str, assert: bool, path: &str| {
        with(spec(name, UnitType::Oneshot), |s| {
            s.extras.conditions = vec![parse_condition("PathExists", assert, path)
                .unwrap()
                .unwrap()];
        })
    };
    let top = with(spec("top", UnitType::Virtual), |s| {
        s.depends_on = names(&["holds", "skipped"]);
        s.waits_for = names(&["needs-asserted"]);
    });
    let needs = with(spec("needs-asserted", UnitType::Oneshot), |s| {
        s.depends_on = names(&["asserted"]);
    });
    let w = World::new(
        vec![
            top,
            needs,
            cond("holds", false, "/etc/present"),
            cond("skipped", false, "/etc/absent"),
            cond("asserted", true, "/etc/absent"),
        ],
        "top",
        PlannerOptions::default(),
    );
    assert_eq!(w.state("holds"), UnitState::Exited);
    assert_eq!(w.state("skipped"), UnitState::Exited);
    assert_eq!(w.state("asserted"), UnitState::Failed);
    assert_eq!(w.state("needs-asserted"), UnitState::Waiting);
    assert_eq!(w.state("top"), UnitState::Running);
    let started: Vec<&Event> = w
        .events
        .iter()
        .filter(|e| matches!(e, Event::Start(_)))
        .collect();
    assert_eq!(started, [&Event::Start("holds".into())]);
    let skipped = w.p.view(w.id("skipped")).unwrap();
    assert!(skipped.skipped);
    assert_eq!(
        skipped.status,
        "skipped: ConditionPathExists=/etc/absent was not met"
    );
    let asserted = w.p.view(w.id("asserted")).unwrap();
    assert!(!asserted.skipped);
    assert_eq!(
        asserted.status,
        "assertion failed: AssertPathExists=/etc/absent was not met"
    );
}

#[test]
fn a_missing_mount_is_met_for_a_systemd_unit_only() {
    // A systemd file's `Requires=var.mount` with no such unit: the mount
    // point is someone else's. A YAML unit's missing target blocks, as
    // docs/contract.md §4 says for any name.
    for (file, blocked) in [("a.service", None), ("a.yaml", Some("var.mount"))] {
        let s = with(spec("a", UnitType::ForegroundSupervised), |s| {
            s.requires = names(&["var.mount"])
        });
        let (g, _) = Graph::build(vec![(s, Origin::at(file.to_string(), Pos::new(1, 1)))]);
        let p = Planner::new(g, "a", Instant(0), PlannerOptions::default());
        let a = p.graph().unit("a").expect("a");
        assert_eq!(p.view(a).unwrap().blocked_by.as_deref(), blocked, "{file}");
    }
}
