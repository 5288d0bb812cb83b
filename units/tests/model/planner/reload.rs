//! A new unit set and reloads: what a replace keeps, restarts and stops, a
//! daemon reload's new definitions taken at the next start, a refused set,
//! `ExecReload=` and a reload propagated to the units that ask for it.

use super::*;

#[test]
fn reload_keeps_unchanged_restarts_changed_stops_removed() {
    let mut w = World::new(
        vec![
            spec("keep", UnitType::ForegroundSupervised),
            spec("change", UnitType::ForegroundSupervised),
            spec("gone", UnitType::ForegroundSupervised),
            with(spec("top", UnitType::Virtual), |s| {
                s.waits_for = names(&["keep", "change", "gone"])
            }),
        ],
        "top",
        PlannerOptions::default(),
    );
    let keep_pid = w.p.view(w.id("keep")).unwrap().pid;
    let change_pid = w.p.view(w.id("change")).unwrap().pid;
    let new_units: Vec<(UnitSpec, Origin)> = vec![
        spec("keep", UnitType::ForegroundSupervised),
        with(spec("change", UnitType::ForegroundSupervised), |s| {
            s.extras.environment.insert("X".into(), "1".into());
        }),
        spec("new", UnitType::ForegroundSupervised),
        with(spec("top", UnitType::Virtual), |s| {
            s.waits_for = names(&["keep", "change", "new"])
        }),
    ]
    .into_iter()
    .map(|s| {
        let o = origin(&s.name);
        (s, o)
    })
    .collect();
    let (applied, _map) = w.p.replace_units(new_units, true, w.now).unwrap();
    w.settle();
    assert_eq!(applied.added, v(&["new"]));
    assert_eq!(applied.changed, v(&["change", "top"]));
    assert_eq!(applied.removed, v(&["gone"]));
    assert_eq!(applied.unchanged, 1);
    assert_eq!(
        w.p.view(w.id("keep")).unwrap().pid,
        keep_pid,
        "unchanged keeps its PID"
    );
    assert_ne!(
        w.p.view(w.id("change")).unwrap().pid,
        change_pid,
        "changed restarts"
    );
    assert_eq!(w.state("change"), UnitState::Running);
    assert_eq!(w.state("new"), UnitState::Running);
    assert!(
        w.events.contains(&Event::Signal("gone".into(), 15)),
        "removed stops"
    );
    assert_eq!(w.state("gone"), UnitState::Disabled);
    // A second reload drops the stopped ghost entirely.
    let again: Vec<(UnitSpec, Origin)> =
        w.p.graph()
            .units()
            .map(|(s, o)| ((**s).clone(), o.clone()))
            .collect();
    w.p.replace_units(again, true, w.now).unwrap();
    assert!(w.p.graph().unit("gone").is_none());
}

/// A oneshot that remains after its exit and has a stop command (a mount
/// unit: its umount) runs it when a reload or `stop-transient` removes it,
/// as a stop would (`systemd-umount` of a transient mount).
#[test]
fn a_removed_oneshot_that_remains_runs_its_stop_command() {
    let mounted = |s: &mut UnitSpec| {
        s.remain_after_exit = Some(true);
        s.exec_stop = Some(Command::new(["/bin/umount", "/mnt"]));
    };
    let mut w = World::new(
        vec![
            with(spec("mnt", UnitType::Oneshot), mounted),
            with(spec("top", UnitType::Virtual), |s| {
                s.waits_for = names(&["mnt"])
            }),
        ],
        "top",
        PlannerOptions::default(),
    );
    assert_eq!(w.state("mnt"), UnitState::Exited);
    let without: Vec<(UnitSpec, Origin)> = vec![with(spec("top", UnitType::Virtual), |s| {
        s.waits_for = names(&["mnt"])
    })]
    .into_iter()
    .map(|s| {
        let o = origin(&s.name);
        (s, o)
    })
    .collect();
    let (applied, _map) = w.p.replace_units(without, false, w.now).unwrap();
    w.settle();
    assert_eq!(applied.removed, v(&["mnt"]));
    assert!(
        w.spawned
            .iter()
            .any(|(u, _, cmd)| u == "mnt" && cmd.contains("/bin/umount /mnt")),
        "{:?}",
        w.spawned
    );
    assert_eq!(w.state("mnt"), UnitState::Disabled);
}

#[test]
fn a_changed_target_takes_its_new_lists_without_a_restart() {
    // `systemctl enable` adds a unit to `sysinit.target.wants/` and
    // reloads: every service requires sysinit.target, so restarting the
    // changed target would stop them all (as a console showed on Debian).
    let file = |name: &str| Origin::at(format!("/lib/systemd/system/{name}"), Pos::new(1, 1));
    let units = |enabled: bool| {
        let sysinit = with(spec("sysinit.target", UnitType::Virtual), |s| {
            if enabled {
                s.wants = names(&["bootperf.service"]);
            }
        });
        let ssh = with(spec("ssh.service", UnitType::ForegroundSupervised), |s| {
            s.depends_on = names(&["sysinit.target"]);
        });
        let multi = with(spec("multi-user.target", UnitType::Virtual), |s| {
            s.depends_on = names(&["ssh.service"])
        });
        let mut all = vec![
            (sysinit, file("sysinit.target")),
            (ssh, file("ssh.service")),
            (multi, file("multi-user.target")),
        ];
        if enabled {
            let perf = spec("bootperf.service", UnitType::ForegroundSupervised);
            all.push((perf, file("bootperf.service")));
        }
        all
    };
    let mut w = World::with_origins(units(false), "multi-user.target", PlannerOptions::default());
    let ssh_pid = w.p.view(w.id("ssh.service")).unwrap().pid;
    w.events.clear();
    let (applied, _map) = w.p.replace_units(units(true), true, w.now).unwrap();
    w.settle();
    assert_eq!(applied.added, v(&["bootperf.service"]));
    assert_eq!(applied.changed, v(&["sysinit.target"]));
    assert_eq!(w.p.view(w.id("ssh.service")).unwrap().pid, ssh_pid);
    assert!(
        !w.events
            .iter()
            .any(|e| matches!(e, Event::Signal(..) | Event::State(_, UnitState::Stopping))),
        "nothing stops: {:?}",
        w.events
    );
    assert_eq!(w.state("sysinit.target"), UnitState::Running);
    assert_eq!(w.state("multi-user.target"), UnitState::Running);
    assert_eq!(
        w.state("bootperf.service"),
        UnitState::Running,
        "the new want starts"
    );
    // Taken out again, the unit it no longer wants stops; still nothing else.
    w.events.clear();
    w.p.replace_units(units(false), true, w.now).unwrap();
    w.settle();
    assert!(w
        .events
        .contains(&Event::Signal("bootperf.service".into(), 15)));
    assert_eq!(w.p.view(w.id("ssh.service")).unwrap().pid, ssh_pid);
    assert_eq!(w.state("sysinit.target"), UnitState::Running);
}

/// The unit set with origins, as a reload hands it over.
fn with_yaml_origins(units: Vec<UnitSpec>) -> Vec<(UnitSpec, Origin)> {
    units
        .into_iter()
        .map(|s| {
            let o = origin(&s.name);
            (s, o)
        })
        .collect()
}

/// The command lines `name`'s processes of `role` were spawned with.
fn spawned(w: &World, name: &str, role: Role) -> Vec<String> {
    w.spawned
        .iter()
        .filter(|(n, r, _)| n == name && *r == role)
        .map(|(_, _, argv)| argv.clone())
        .collect()
}

#[test]
fn a_daemon_reload_keeps_a_changed_running_unit_and_its_next_start_runs_the_new_definition() {
    // systemd's daemon-reload restarts nothing (test 15 runs one that
    // changes every service, its own among them).
    let units = |v2: bool| {
        with_yaml_origins(vec![
            with(spec("web", UnitType::ForegroundSupervised), |s| {
                if v2 {
                    s.exec_start = Some(Command::new(["/bin/sim", "web", "v2"]));
                    s.exec_stop = Some(Command::new(["/bin/stop-web", "v2"]));
                }
            }),
            with(spec("top", UnitType::Virtual), |s| {
                s.waits_for = names(&["web"])
            }),
        ])
    };
    let mut w = World::with_origins(units(false), "top", PlannerOptions::default());
    let pid = w.p.view(w.id("web")).unwrap().pid;
    w.events.clear();
    let shape = w.p.graph().shape().clone();
    let (applied, _map) =
        w.p.replace_shaped(units(true), shape, true, OnChange::Keep, w.now)
            .unwrap();
    w.settle();
    assert_eq!(applied.changed, v(&["web"]));
    assert_eq!(w.p.view(w.id("web")).unwrap().pid, pid, "still running");
    assert!(w.events.is_empty(), "nothing moved: {:?}", w.events);
    // The stop runs the new definition's `exec-stop`, as systemd's
    // ExecStop= after a daemon-reload; the start after it the new
    // command.
    w.p.restart("web", w.now).unwrap();
    w.settle();
    assert_eq!(spawned(&w, "web", Role::Stop), v(&["/bin/stop-web v2"]));
    assert_eq!(
        spawned(&w, "web", Role::Main),
        v(&["/bin/sim web", "/bin/sim web v2"])
    );
    assert_eq!(w.state("web"), UnitState::Running);
}

#[test]
fn a_daemon_reload_leaves_a_failed_unit_failed_and_gives_a_stopped_one_its_new_definition() {
    let units = |v2: bool| {
        let argv = |name: &str| {
            let mut words = vec!["/bin/sim".to_string(), name.to_string()];
            if v2 {
                words.push("v2".into());
            }
            Some(Command::new(words))
        };
        with_yaml_origins(vec![
            with(spec("bad", UnitType::ForegroundSupervised), |s| {
                s.exec_start = argv("bad")
            }),
            with(spec("idle", UnitType::ForegroundSupervised), |s| {
                s.exec_start = argv("idle")
            }),
            with(spec("top", UnitType::Virtual), |s| {
                s.waits_for = names(&["bad"])
            }),
        ])
    };
    let mut w = World::with_origins(units(false), "top", PlannerOptions::default());
    w.behaviour.insert("bad".into(), Behaviour::Exit(1));
    w.crash("bad", ExitStatus::Code(1));
    assert_eq!(w.state("bad"), UnitState::Failed);
    w.events.clear();
    let shape = w.p.graph().shape().clone();
    let (applied, _map) =
        w.p.replace_shaped(units(true), shape, true, OnChange::Keep, w.now)
            .unwrap();
    w.settle();
    assert_eq!(applied.changed, v(&["bad", "idle"]));
    assert_eq!(w.state("bad"), UnitState::Failed, "no new try");
    assert!(w.starts().is_empty(), "nothing starts: {:?}", w.events);
    w.p.want("idle", WantLife::UntilSwitch, w.now).unwrap();
    w.settle();
    assert_eq!(spawned(&w, "idle", Role::Main), v(&["/bin/sim idle v2"]));
    // `initctl reload` of the same change gives the failed unit its try.
    let shape = w.p.graph().shape().clone();
    w.behaviour.remove("bad");
    w.p.replace_shaped(units(false), shape, true, OnChange::Restart, w.now)
        .unwrap();
    w.settle();
    assert_eq!(w.state("bad"), UnitState::Running);
}

#[test]
fn a_daemon_reload_applies_changed_dependencies_to_the_next_starts() {
    // `a` comes to depend on `b` (after + requires): running, it is left
    // alone; the next restart of `b` stops `a` first and starts it after.
    let units = |edge: bool| {
        with_yaml_origins(vec![
            with(spec("a", UnitType::ForegroundSupervised), |s| {
                if edge {
                    s.depends_on = names(&["b"]);
                }
            }),
            spec("b", UnitType::ForegroundSupervised),
            with(spec("top", UnitType::Virtual), |s| {
                s.waits_for = names(&["a", "b"])
            }),
        ])
    };
    let mut w = World::with_origins(units(false), "top", PlannerOptions::default());
    let pid = w.p.view(w.id("a")).unwrap().pid;
    w.events.clear();
    let shape = w.p.graph().shape().clone();
    w.p.replace_shaped(units(true), shape, true, OnChange::Keep, w.now)
        .unwrap();
    w.settle();
    assert_eq!(w.p.view(w.id("a")).unwrap().pid, pid);
    assert!(w.events.is_empty(), "nothing moved: {:?}", w.events);
    w.p.restart("b", w.now).unwrap();
    w.settle();
    assert!(
        w.events.contains(&Event::Signal("a".into(), 15)),
        "{:?}",
        w.events
    );
    let b = w.index_of(&Event::Start("b".into())).unwrap();
    let a = w.index_of(&Event::Start("a".into())).unwrap();
    assert!(b < a, "b starts first: {:?}", w.events);
}

#[test]
fn strict_replace_refuses_a_bad_set_and_changes_nothing() {
    let mut w = World::new(
        vec![spec("a", UnitType::ForegroundSupervised)],
        "a",
        PlannerOptions::default(),
    );
    let pid = w.p.view(w.id("a")).unwrap().pid;
    let bad = vec![
        (
            with(spec("a", UnitType::ForegroundSupervised), |s| {
                s.depends_on = names(&["b"])
            }),
            origin("a"),
        ),
        (
            with(spec("b", UnitType::ForegroundSupervised), |s| {
                s.depends_on = names(&["a"])
            }),
            origin("b"),
        ),
    ];
    let err = w.p.replace_units(bad, true, w.now).unwrap_err();
    assert!(err
        .iter()
        .any(|d| d.message.starts_with("dependency cycle")));
    assert_eq!(w.p.view(w.id("a")).unwrap().pid, pid);
    assert!(w.p.take_actions().is_empty());
}

/// `systemctl reload postgresql`: Debian's clusters say
/// `ReloadPropagatedFrom=postgresql.service`, and a unit may name those it
/// reloads (`PropagatesReloadTo=`). Each that is up with a reload command
/// reloads; one that is not up, or has none, is left alone.
#[test]
fn a_reload_propagates_to_the_units_that_ask_for_it() {
    let reloadable = |name: &str| {
        with(spec(name, UnitType::ForegroundSupervised), |s| {
            s.extras.exec_reload = Some(Command::new(["/bin/true"]));
        })
    };
    let mut w = World::new(
        vec![
            with(spec("postgresql", UnitType::Oneshot), |s| {
                s.extras.exec_reload = Some(Command::new(["/bin/true"]));
                s.extras.propagates_reload_to = names(&["pushed"]);
            }),
            with(reloadable("cluster-a"), |s| {
                s.extras.reload_propagated_from = names(&["postgresql"])
            }),
            with(reloadable("cluster-b"), |s| {
                s.extras.reload_propagated_from = names(&["postgresql", "elsewhere"])
            }),
            reloadable("pushed"),
            with(spec("cluster-c", UnitType::ForegroundSupervised), |s| {
                s.extras.reload_propagated_from = names(&["postgresql"])
            }),
            reloadable("bystander"),
            with(spec("top", UnitType::Virtual), |s| {
                s.depends_on = names(&[
                    "postgresql",
                    "cluster-a",
                    "cluster-b",
                    "pushed",
                    "cluster-c",
                    "bystander",
                ])
            }),
        ],
        "top",
        PlannerOptions::default(),
    );
    w.p.reload_unit("postgresql", w.now).unwrap();
    let actions = w.p.take_actions();
    let mut reloaded: Vec<String> = actions
        .iter()
        .filter_map(|a| match *a {
            Action::Spawn {
                unit,
                role: Role::Reload,
                ..
            } => Some(w.p.graph().node(unit).spec.name.clone()),
            _ => None,
        })
        .collect();
    reloaded.sort();
    assert_eq!(reloaded, ["cluster-a", "cluster-b", "postgresql", "pushed"]);
    for name in ["cluster-a", "cluster-b", "pushed"] {
        assert_eq!(w.state(name), UnitState::Reloading, "{name}");
    }
    assert_eq!(
        w.state("cluster-c"),
        UnitState::Running,
        "no reload command"
    );
    assert_eq!(w.state("bystander"), UnitState::Running);
    // The oneshot reloads from `exited`, and is `exited` again after.
    assert_eq!(w.state("postgresql"), UnitState::Reloading);
    for a in actions {
        w.act(a);
    }
    w.settle();
    assert_eq!(w.state("postgresql"), UnitState::Exited);
    assert_eq!(w.state("cluster-a"), UnitState::Running);
}

#[test]
fn reload_unit_runs_exec_reload_with_mainpid() {
    use flotilla_units::planner::ReloadError;
    let mut w = World::new(
        vec![
            with(spec("web", UnitType::ForegroundSupervised), |s| {
                s.extras.exec_reload = Some(Command::new(["/bin/kill", "-HUP", "$MAINPID"]));
            }),
            spec("plain", UnitType::ForegroundSupervised),
            with(spec("top", UnitType::Virtual), |s| {
                s.waits_for = names(&["web", "plain"])
            }),
        ],
        "top",
        PlannerOptions::default(),
    );
    let pid = w.p.view(w.id("web")).unwrap().pid.unwrap();
    w.p.reload_unit("web", w.now).unwrap();
    assert_eq!(w.state("web"), UnitState::Reloading);
    let actions = w.p.take_actions();
    match actions.as_slice() {
        [Action::Spawn {
            role: Role::Reload,
            argv,
            ..
        }] => {
            assert_eq!(
                argv.to_vec(),
                v(&["/bin/kill", "-HUP", &pid.to_string()]),
                "$MAINPID replaced"
            );
        }
        other => panic!("expected one reload spawn, got {other:?}"),
    }
    for a in actions {
        w.act(a);
    }
    w.settle();
    assert_eq!(w.state("web"), UnitState::Running);
    assert_eq!(
        w.p.view(w.id("web")).unwrap().pid,
        Some(pid),
        "a reload keeps the process"
    );
    assert_eq!(
        w.p.reload_unit("plain", w.now),
        Err(ReloadError::NoReloadCommand("plain".into()))
    );
    assert_eq!(
        w.p.reload_unit("top", w.now),
        Err(ReloadError::NoReloadCommand("top".into()))
    );
    assert_eq!(
        w.p.reload_unit("nope", w.now),
        Err(ReloadError::UnknownUnit("nope".into()))
    );
    w.shutdown();
    assert_eq!(
        w.p.reload_unit("web", w.now),
        Err(ReloadError::NotRunning("web".into()))
    );
}
