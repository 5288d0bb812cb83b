//! Transient services through Debian's `systemd-run`: drop-ins of their
//! name, `RuntimeMaxSec=`, `Type=simple`, `--wait`, `--pipe`, exec
//! properties and `ExecCondition=`, made again once ended.

use super::*;

/// The search path's drop-ins for a transient service's name apply over
/// its properties (systemd's test 15): a dash prefix's `a-.service.d/`
/// over the type-wide `service.d/` (a file of the same name), with the
/// unit's specifiers; the unit keeps them across a reload.
#[test]
fn a_transient_service_takes_the_drop_ins_of_its_name() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    dir.file(
        "units/service.d/10-cond.conf",
        "[Service]\nExecCondition=/bin/echo %n\n",
    );
    // Of the same file name, the more specific directory's wins.
    dir.file(
        "units/a-.service.d/10-cond.conf",
        "[Service]\nExecCondition=/bin/echo prefix %n\n",
    );
    let out = debian_tool(
        &bus,
        "/usr/bin/systemd-run",
        &[
            "-u",
            "a-b-c2.service",
            "-p",
            "Description=sleepy",
            "/bin/sleep",
            "300",
        ],
    );
    out.expect(0);
    init.wait_state("a-b-c2.service", UnitState::Running);
    let show = |p: &str| systemctl(&bus, &["show", "-p", p, "a-b-c2.service"]);
    for _ in 0..2 {
        assert_eq!(show("Description").stdout, "Description=sleepy\n");
        let out = show("ExecCondition");
        assert!(
            out.stdout
                .contains("argv[]=/bin/echo prefix a-b-c2.service"),
            "{out:?}"
        );
        systemctl(&bus, &["daemon-reload"]).expect(0);
    }
    systemctl(&bus, &["stop", "a-b-c2.service"]).expect(0);
}

/// `systemd-run --unit NAME CMD` makes a transient service of the init's
/// and starts it; `-p KEY=VALUE` sets what a unit file's key would; a
/// property flotilla does not take is refused, saying why.
#[test]
fn systemd_run_makes_a_transient_service() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    let out = debian_tool(
        &bus,
        "/usr/bin/systemd-run",
        &["--unit", "x", "/bin/sleep", "300"],
    );
    out.expect(0);
    assert!(out.stderr.contains("Running as unit: x.service"), "{out:?}");
    let x = init.unit("x.service");
    assert_eq!(x.state, UnitState::Running);
    let pid = x.pid.expect("x's pid");
    assert_eq!(procs::cmdline(pid), "/bin/sleep 300");
    let out = systemctl(&bus, &["show", "-p", "MainPID", "x"]);
    assert_eq!(out.stdout, format!("MainPID={pid}\n"));
    // Stopped, a transient service leaves the unit set.
    let out = systemctl(&bus, &["stop", "x.service"]);
    out.expect(0);
    assert_eq!(out.stderr, "");
    assert!(
        !procs::alive(pid) || procs::state(pid) == Some('Z'),
        "{out:?}"
    );
    assert!(init.status().units.iter().all(|u| u.unit != "x.service"));

    // `-p KEY=VALUE` as a unit file's keys (docs/dbus.md, "Transient
    // services"): the user, the output to a file, an environment, a
    // privileged `ExecStartPost=` (sent as `ExecStartPostEx`).
    let output = dir.path().join("z.out");
    let post = dir.path().join("z.post");
    let out = debian_tool(
        &bus,
        "/usr/bin/systemd-run",
        &[
            "--unit",
            "z",
            "-p",
            "Type=oneshot",
            "-p",
            "RemainAfterExit=yes",
            "-p",
            "User=nobody",
            "-p",
            &format!("StandardOutput=file:{}", output.display()),
            "-p",
            &format!("ExecStartPost=+/bin/sh -c 'id -un > {}'", post.display()),
            "--setenv",
            "GREETING=hello 50%",
            "/bin/sh",
            "-c",
            "echo $(id -un) \"$GREETING\"",
        ],
    );
    out.expect(0);
    let read = |p: &Path| {
        std::fs::read_to_string(p)
            .ok()
            .filter(|t| t.ends_with('\n'))
    };
    let said = wait_for(WAIT, "z.service's output file", || read(&output));
    assert_eq!(said, "nobody hello 50%\n", "{:?}", init.unit("z.service"));
    let posted = wait_for(WAIT, "z.service's ExecStartPost=", || read(&post));
    assert_eq!(posted, "root\n", "{:?}", init.unit("z.service"));
    // RemainAfterExit=yes: up after its process exited.
    let out = systemctl(&bus, &["is-active", "z"]);
    assert_eq!(out.stdout, "active\n", "{out:?}");

    // A key flotilla would ignore in a unit file is refused, naming the
    // property and the key.
    let out = debian_tool(
        &bus,
        "/usr/bin/systemd-run",
        &["-p", "IPAccounting=yes", "--unit", "y", "/bin/true"],
    );
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains(
            "StartTransientUnit with IPAccounting is not supported by flotilla: \
             IPAccounting: [Service] IPAccounting= is not supported"
        ),
        "{out:?}"
    );
    assert!(init.status().units.iter().all(|u| u.unit != "y.service"));
}

/// `systemd-run -p RuntimeMaxSec=2s` (what systemd's test 16 runs): the
/// service is stopped once it has run 2 s and ends failed with the result
/// `timeout`, as systemd's (docs/systemd-units.md, "The runtime limit");
/// busd serves the limit, and `initctl status` says why it failed.
#[test]
fn systemd_run_runtime_max_sec_stops_the_service_with_result_timeout() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    // Every change from here: on a loaded machine the limit may be over
    // before a status is read, so the unit's PID and states are taken
    // from the changes, not from a look afterwards.
    let mut sub = init.subscribe();
    let begun = std::time::Instant::now();
    let out = debian_tool(
        &bus,
        "/usr/bin/systemd-run",
        &[
            "-p",
            "RuntimeMaxSec=2s",
            "-p",
            "RuntimeRandomizedExtraSec=0",
            "--unit",
            "x",
            "/bin/sleep",
            "100",
        ],
    );
    out.expect(0);
    let sleep = sub
        .until("x.service with its PID", |u| {
            u.unit == "x.service" && u.pid.is_some()
        })
        .last()
        .and_then(|u| u.pid)
        .expect("x.service's PID");
    let show = |p: &str| systemctl(&bus, &["show", "-P", p, "x.service"]).stdout;
    assert_eq!(show("RuntimeMaxUSec"), "2s\n");
    assert_eq!(show("RuntimeRandomizedExtraUSec"), "0\n");
    wait_for(WAIT, "x.service failed", || {
        (show("ActiveState") == "failed\n").then_some(())
    });
    assert!(
        begun.elapsed() >= Duration::from_secs(2),
        "{:?}",
        begun.elapsed()
    );
    assert_eq!(show("Result"), "timeout\n");
    assert!(!procs::alive(sleep), "sleep {sleep} was killed");
    let out = systemctl(&bus, &["status", "-n0", "x.service"]);
    assert!(
        out.stdout.contains("Active: failed (Result: timeout)"),
        "{out:?}"
    );
    let out = init.ctl(&["status", "x.service"]);
    assert!(
        out.stdout
            .contains("runtime limit reached (runtime-max-sec)"),
        "{out:?}"
    );
    // A service without the key has no limit: infinity.
    assert_eq!(
        systemctl(&bus, &["show", "-P", "RuntimeMaxUSec", "web.service"]).stdout,
        "infinity\n"
    );

    // A scope's limit (`systemd-run --scope -p RuntimeMaxSec=`): its
    // processes get the kill signal once it has run 2 s, and it fails with
    // `Result=timeout`, loaded until `reset-failed` takes it out, as
    // systemd's test 16 asks (docs/dbus.md, "Scopes").
    let begun = std::time::Instant::now();
    let sleeper = Killed(debian_tool_spawn(
        &bus,
        "/usr/bin/systemd-run",
        &[
            "--scope",
            "-p",
            "RuntimeMaxSec=2s",
            "--unit",
            "probe",
            "/bin/sleep",
            "300",
        ],
    ));
    let pid = sleeper.0.id() as i32;
    sub.until("probe.scope running", |u| {
        u.unit == "probe.scope" && u.state == UnitState::Running
    });
    let out = systemctl(&bus, &["show", "-P", "RuntimeMaxUSec", "probe.scope"]);
    assert_eq!(out.stdout, "2s\n", "{out:?}");
    wait_for(WAIT, "the scope's sleep killed", || {
        (!procs::alive(pid)).then_some(())
    });
    assert!(
        begun.elapsed() >= Duration::from_secs(2),
        "{:?}",
        begun.elapsed()
    );
    init.wait_state("probe.scope", UnitState::Failed);
    let out = systemctl(
        &bus,
        &["show", "-p", "ActiveState", "-p", "Result", "probe.scope"],
    );
    assert_eq!(
        out.stdout, "Result=timeout\nActiveState=failed\n",
        "{out:?}"
    );
    systemctl(&bus, &["reset-failed", "probe.scope"]).expect(0);
    wait_scope_gone(&init, "probe.scope", "failed");
}

/// systemd's test 23 (`Type=simple` against `Type=exec`): with
/// `Type=simple` the start job is done once the process is forked, so
/// `systemd-run` succeeds when the user is not found or the program
/// cannot be executed, and the unit fails after with systemd's status
/// (217 `EXIT_USER`, 203 `EXIT_EXEC`); with `Type=exec` the job fails.
#[test]
fn systemd_run_type_simple_is_started_at_fork_and_exec_is_not() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    let broken = dir.join("brokenbinary");
    std::fs::write(&broken, "").expect("write brokenbinary");
    std::fs::set_permissions(&broken, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod brokenbinary");
    let broken = broken.display().to_string();
    let run = |unit: &str, ty: &str, user: Option<&str>, argv: &[&str]| {
        let ty = format!("Type={ty}");
        let user = user.map(|u| format!("User={u}"));
        let mut args = vec!["--unit", unit, "-p", ty.as_str()];
        if let Some(u) = &user {
            args.extend(["-p", u.as_str()]);
        }
        args.extend(argv);
        debian_tool(&bus, "/usr/bin/systemd-run", &args)
    };
    let show = |unit: &str| {
        let out = systemctl(
            &bus,
            &[
                "show",
                "-p",
                "ActiveState,Result,ExecMainCode,ExecMainStatus",
                unit,
            ],
        );
        out.stdout
    };
    for (unit, user, argv, status) in [
        (
            "two",
            Some("idontexist"),
            vec!["/bin/sleep", "infinity"],
            217,
        ),
        ("three", None, vec![broken.as_str()], 203),
    ] {
        let out = run(unit, "simple", user, &argv);
        out.expect(0);
        let want = format!(
            "Result=exit-code\nExecMainCode=1\nExecMainStatus={status}\nActiveState=failed\n"
        );
        let got = wait_for(WAIT, &format!("{unit}.service failed"), || {
            let got = show(unit);
            got.contains("ActiveState=failed").then_some(got)
        });
        let mut got_lines: Vec<&str> = got.lines().collect();
        let mut want_lines: Vec<&str> = want.lines().collect();
        got_lines.sort_unstable();
        want_lines.sort_unstable();
        assert_eq!(
            got_lines,
            want_lines,
            "{unit}: {:?}",
            init.unit(&format!("{unit}.service"))
        );
    }
    let out = run("four", "exec", None, &["/bin/sleep", "infinity"]);
    out.expect(0);
    assert_eq!(init.unit("four.service").state, UnitState::Running);
    for (unit, user, argv) in [
        ("five", Some("idontexist"), vec!["/bin/sleep", "infinity"]),
        ("six", None, vec![broken.as_str()]),
    ] {
        let out = run(unit, "exec", user, &argv);
        assert_ne!(out.code, 0, "{unit}: {out:?}");
    }
    systemctl(&bus, &["stop", "four.service"]).expect(0);

    // The test's last unit: its kill and restart settings are served as
    // systemd serves them, and a restart and a stop of it work.
    debian_tool(
        &bus,
        "/usr/bin/systemd-run",
        &[
            "--unit=seven",
            "-p",
            "KillSignal=SIGTERM",
            "-p",
            "RestartKillSignal=SIGINT",
            "-p",
            "Restart=on-abort",
            "-p",
            "TimeoutStopSec=7",
            "-p",
            "Type=exec",
            "/bin/sleep",
            "infinity",
        ],
    )
    .expect(0);
    let out = systemctl(
        &bus,
        &[
            "show",
            "-p",
            "KillSignal,RestartKillSignal,Restart,TimeoutStopUSec,KillMode,SendSIGKILL",
            "seven.service",
        ],
    );
    let mut got: Vec<&str> = out.stdout.lines().collect();
    got.sort_unstable();
    assert_eq!(
        got,
        [
            "KillMode=control-group",
            "KillSignal=15",
            "Restart=on-abort",
            "RestartKillSignal=2",
            "SendSIGKILL=yes",
            "TimeoutStopUSec=7s",
        ],
        "{out:?}"
    );
    systemctl(&bus, &["restart", "seven.service"]).expect(0);
    systemctl(&bus, &["stop", "seven.service"]).expect(0);
}

/// A daemon killed from outside by SIGTERM ended cleanly, as systemd
/// judges a service's main process: inactive with `Result=success`, not
/// restarted by `Restart=on-failure`; SIGKILL fails it.
#[test]
fn a_daemon_killed_by_sigterm_ended_cleanly_and_by_sigkill_failed() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    for (unit, signal, state) in [
        (
            "termed",
            libc::SIGTERM,
            "ActiveState=inactive\nResult=success\nNRestarts=0\n",
        ),
        (
            "killed",
            libc::SIGKILL,
            "ActiveState=failed\nResult=signal\nNRestarts=0\n",
        ),
    ] {
        let restart = if signal == libc::SIGTERM {
            "Restart=on-failure"
        } else {
            "Restart=no"
        };
        debian_tool(
            &bus,
            "/usr/bin/systemd-run",
            &["--unit", unit, "-p", restart, "/bin/sleep", "infinity"],
        )
        .expect(0);
        let name = format!("{unit}.service");
        let pid = wait_for(WAIT, &format!("{name}'s main process"), || {
            init.unit(&name).pid
        });
        // SAFETY: kill(2) of the unit's main process, which the test made.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "kill {pid}");
        let show =
            || systemctl(&bus, &["show", "-p", "ActiveState,Result,NRestarts", &name]).stdout;
        let got = wait_for(WAIT, &format!("{name} ended"), || {
            let got = show();
            (!got.contains("ActiveState=active")).then_some(got)
        });
        let mut got: Vec<&str> = got.lines().collect();
        let mut want: Vec<&str> = state.lines().collect();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want, "{name}: {:?}", init.unit(&name));
    }
}

/// `systemd-run --wait` (over the system bus, which it needs for the
/// signals it follows) returns once the unit is inactive again, as
/// systemd's test 27 asks: a service without `RemainAfterExit=` that ran
/// to its end is `inactive` (`dead`), and its result is systemd-run's
/// (its exit status for `exit-code`).
#[test]
fn systemd_run_wait_returns_when_the_service_ends() {
    let dir = TestDir::new();
    let _init = started(&dir);
    let bus = dbus_daemon(&dir);
    let busd = busd_on(&dir, Some(&bus.socket));
    on_the_bus(&bus.socket);
    let run_wait = |args: &[&str]| on_system_bus(&bus.socket, "/usr/bin/systemd-run --wait", args);
    let out = run_wait(&["--unit", "w", "-p", "Type=exec", "/bin/true"]);
    out.expect(0);
    assert!(
        out.stderr.contains("Finished with result: success"),
        "{out:?}"
    );
    let state = busctl(
        &bus.socket,
        None,
        &[
            "get-property",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1/unit/w_2eservice",
            "org.freedesktop.systemd1.Unit",
            "ActiveState",
            "SubState",
        ],
    );
    assert_eq!(state.stdout, "s \"inactive\"\ns \"dead\"\n", "{state:?}");
    // It runs a while first: its start job is done once it runs (a unit
    // that fails before the bus side saw it running fails its start job,
    // where systemd's job is done at the fork: docs/debian.md, test 23).
    let out = run_wait(&["--unit", "w3", "/bin/sh", "-c", "sleep 2; exit 3"]);
    assert_eq!(out.code, 3, "{out:?}");
    assert!(
        out.stderr.contains("Finished with result: exit-code"),
        "{out:?}"
    );
    // Failed until reset, by a glob as systemd's test 26 does.
    let out = run_wait(&["--unit", "failed.service", "/bin/false"]);
    assert_eq!(out.code, 1, "{out:?}");
    let out = systemctl(&busd, &["is-failed", "failed.service"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "failed\n"), "{out:?}");
    systemctl(&busd, &["reset-failed", "fail*.service"]).expect(0);
    let out = systemctl(&busd, &["is-failed", "failed.service"]);
    assert_ne!(out.code, 0, "{out:?}");
    let out = systemctl(&busd, &["is-failed", "w3.service"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "failed\n"), "{out:?}");
    systemctl(&busd, &["reset-failed", "w3*.service"]).expect(0);
    let out = systemctl(&busd, &["is-failed", "w3.service"]);
    assert_ne!(out.code, 0, "{out:?}");
}

/// `systemd-run --wait --pipe` (systemd's test 05 runs `-t` without a
/// terminal, which sends the same) hands the service its own standard
/// streams as descriptors (`StandardInputFileDescriptor`, …): the
/// service reads systemd-run's input, its output and errors land on
/// systemd-run's, and its exit status is systemd-run's; the init closes
/// its copies when the unit ends, so a reader of the output sees its end.
#[test]
fn systemd_run_pipe_hands_over_the_callers_streams() {
    let dir = TestDir::new();
    let _init = started(&dir);
    let bus = dbus_daemon(&dir);
    let _busd = busd_on(&dir, Some(&bus.socket));
    on_the_bus(&bus.socket);
    let input = dir.path().join("input");
    std::fs::write(&input, "in 1\nin 2\n").expect("write the input");
    let run_piped = |args: &[&str]| {
        let mut cmd = on_system_bus_cmd(&bus.socket, "/usr/bin/systemd-run --wait", args);
        cmd.stdin(std::fs::File::open(&input).expect("open the input"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = cmd.spawn().expect("start systemd-run");
        run_child(child, Duration::from_secs(30))
    };
    let script = "cat; echo out; echo err >&2; exit 3";
    let out = run_piped(&["--pipe", "sh", "-c", script]);
    assert_eq!(out.code, 3, "{out:?}");
    assert_eq!(out.stdout, "in 1\nin 2\nout\n", "{out:?}");
    assert!(out.stderr.contains("err\n"), "{out:?}");
    assert!(
        out.stderr.contains("Finished with result: exit-code"),
        "{out:?}"
    );
    // `-t`: systemd-run makes a pseudo-terminal and hands the service
    // its other end as the three streams (with `TTYPath=`), copying
    // between it and its own streams; as test 05 runs it, reading no
    // input. (Its output is not compared: systemd-run may end before it
    // copied the last of it, when the unit's end reaches it first.)
    let seen = dir.path().join("tty");
    let script = format!("tty > {}; exit 4", seen.display());
    let out = run_piped(&["-t", "sh", "-c", &script]);
    assert_eq!(out.code, 4, "{out:?}");
    let tty = std::fs::read_to_string(&seen).expect("the service wrote its tty");
    assert!(tty.starts_with("/dev/pts/"), "{tty:?} {out:?}");
}

/// systemd's tests 40 and 56 over the bus: each `Exec*` key of a
/// transient service, sent with `:` (as `…Ex`), is shown by Debian's
/// `systemctl show` in both of its forms; `ExecCondition=` that holds
/// lets the service run, one that exits 1 skips it, which
/// `systemd-run --wait` reports as the result `exec-condition` (exit 1).
#[test]
fn exec_properties_and_exec_condition_as_systemd_tests_40_and_56() {
    let dir = TestDir::new();
    let _init = started(&dir);
    let bus = dbus_daemon(&dir);
    let busd = busd_on(&dir, Some(&bus.socket));
    on_the_bus(&bus.socket);
    let run_wait = |args: &[&str]| on_system_bus(&bus.socket, "/usr/bin/systemd-run", args);
    for (unit, key) in [
        ("1_one", "ExecCondition"),
        ("3_three", "ExecStart"),
        ("4_four", "ExecStartPost"),
        ("7_seven", "ExecStopPost"),
    ] {
        let prop = format!("{key}=:/bin/echo ${{{unit}}}");
        let out = run_wait(&[
            "--unit",
            unit,
            "-r",
            "-p",
            "Type=oneshot",
            "-p",
            &prop,
            "/bin/true",
        ]);
        out.expect(0);
        let plain = systemctl(&busd, &["show", "-p", key, unit]);
        let want = format!("path=/bin/echo ; argv[]=/bin/echo ${{{unit}}} ; ignore_errors=no");
        assert!(plain.stdout.contains(&want), "{key}: {plain:?}");
        let ex = systemctl(&busd, &["show", "-p", &format!("{key}Ex"), unit]);
        let want = format!("path=/bin/echo ; argv[]=/bin/echo ${{{unit}}} ; flags=no-env-expand");
        assert!(ex.stdout.contains(&want), "{key}Ex: {ex:?}");
    }
    let out = run_wait(&[
        "--wait",
        "--unit",
        "two",
        "-p",
        "ExecCondition=true",
        "/bin/true",
    ]);
    out.expect(0);
    let out = run_wait(&[
        "--wait",
        "--unit",
        "three",
        "-p",
        "ExecCondition=false",
        "/bin/true",
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("Finished with result: exec-condition"),
        "{out:?}"
    );
}

/// systemd lets go of a transient service that is inactive and that
/// nothing references (`unit_may_gc`): `systemd-run --unit NAME` makes
/// NAME again after one of that name was skipped by its `ExecCondition=`
/// (systemd's test 56's `three`, then test 23's) or ran to its end; a
/// failed one stays until `reset-failed`, unless `-G` (`CollectMode=`
/// `inactive-or-failed`).
#[test]
fn a_transient_service_that_ended_or_was_skipped_can_be_made_again() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = dbus_daemon(&dir);
    let _busd = busd_on(&dir, Some(&bus.socket));
    on_the_bus(&bus.socket);
    let run = |args: &[&str]| on_system_bus(&bus.socket, "/usr/bin/systemd-run", args);
    let out = run(&[
        "--wait",
        "--unit",
        "again",
        "-p",
        "ExecCondition=/bin/false",
        "/bin/true",
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("Finished with result: exec-condition"),
        "{out:?}"
    );
    let out = run(&["--wait", "--unit", "again", "/bin/true"]);
    out.expect(0);
    assert!(
        out.stderr.contains("Finished with result: success"),
        "{out:?}"
    );
    let out = run(&[
        "--wait",
        "--unit",
        "again",
        "-p",
        "Type=oneshot",
        "/bin/false",
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    // Failed: kept, and a new one of its name refused.
    let out = run(&["--unit", "again", "/bin/true"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("exists already"), "{out:?}");
    assert_eq!(init.unit("again.service").state, UnitState::Failed);
    // `-G`: a failed one is let go too.
    let out = run(&["--wait", "-G", "--unit", "collected", "/bin/false"]);
    assert_eq!(out.code, 1, "{out:?}");
    let out = run(&["--wait", "-G", "--unit", "collected", "/bin/true"]);
    out.expect(0);
}

/// A transient unit's file, where systemd writes it: flotilla-busd writes
/// each one's into the path's `/run/systemd/transient`; `systemctl cat`
/// prints it (systemd's test 36 looks for `CPUAffinity=numa` there), a
/// reload keeps the running service as it was made (still transient: its
/// stop lets it go), and the stop takes the file away.
#[test]
fn a_transient_services_file_is_shown_kept_through_a_reload_and_removed_at_its_stop() {
    let dir = TestDir::new();
    let (init, transient) = started_with_transient_dir(&dir);
    let bus = busd(&dir);
    let run = ["--unit", "t", "-p", "CPUAffinity=numa", "/bin/sleep", "300"];
    debian_tool(&bus, "/usr/bin/systemd-run", &run).expect(0);
    let pid = init.wait_state("t.service", UnitState::Running).pid;
    let file = transient.join("t.service");
    let out = systemctl(&bus, &["cat", "t.service"]);
    out.expect(0);
    assert!(
        out.stdout.contains(&format!("# {}", file.display()))
            && out.stdout.lines().any(|l| l == "CPUAffinity=numa"),
        "{out:?}"
    );

    systemctl(&bus, &["daemon-reload"]).expect(0);
    let t = init.unit("t.service");
    assert_eq!((t.state, t.pid), (UnitState::Running, pid), "{t:?}");
    let out = systemctl(
        &bus,
        &["show", "-p", "Transient", "-p", "FragmentPath", "t"],
    );
    assert_eq!(
        out.stdout,
        format!("FragmentPath={}\nTransient=yes\n", file.display()),
        "{out:?}"
    );

    systemctl(&bus, &["stop", "t.service"]).expect(0);
    assert!(!file.exists(), "{} is left", file.display());
    assert!(init.status().units.iter().all(|u| u.unit != "t.service"));
    // The name is free again.
    debian_tool(&bus, "/usr/bin/systemd-run", &run).expect(0);
    init.wait_state("t.service", UnitState::Running);
    systemctl(&bus, &["stop", "t.service"]).expect(0);

    // A failed one keeps its file until it is reset, as systemd keeps
    // the unit.
    let fail = ["--unit", "f", "/bin/false"];
    debian_tool(&bus, "/usr/bin/systemd-run", &fail).expect(0);
    init.wait_state("f.service", UnitState::Failed);
    let file = transient.join("f.service");
    assert!(file.exists(), "{} is not there", file.display());
    systemctl(&bus, &["reset-failed", "f.service"]).expect(0);
    assert!(!file.exists(), "{} is left", file.display());
}

/// A drop-in written for a running transient service applies at the next
/// `daemon-reload`, as systemd reads the unit's file in
/// `/run/systemd/transient` again with its drop-ins (systemd's test 16): a
/// new `RuntimeMaxSec=` stops it with `Result=timeout`. The reload
/// restarts nothing, and the unit stays transient.
#[test]
fn a_drop_in_for_a_running_transient_service_applies_at_a_daemon_reload() {
    let dir = TestDir::new();
    let (init, transient) = started_with_transient_dir(&dir);
    let bus = busd(&dir);
    let run = ["--unit", "long", "/bin/sleep", "300"];
    debian_tool(&bus, "/usr/bin/systemd-run", &run).expect(0);
    let pid = init
        .wait_state("long.service", UnitState::Running)
        .pid
        .expect("long.service's PID");
    let show = |p: &str| systemctl(&bus, &["show", "-P", p, "long.service"]).stdout;
    assert_eq!(show("RuntimeMaxUSec"), "infinity\n");
    dir.file(
        "units/long.service.d/override.conf",
        "[Service]\nRuntimeMaxSec=2s\nRuntimeRandomizedExtraSec=0\n",
    );
    let mut sub = init.subscribe();
    systemctl(&bus, &["daemon-reload"]).expect(0);
    let seen = sub.until("long.service failed", |u| {
        u.unit == "long.service" && u.state == UnitState::Failed
    });
    let pids: Vec<i32> = seen
        .iter()
        .filter(|u| u.unit == "long.service")
        .filter_map(|u| u.pid)
        .collect();
    assert!(pids.iter().all(|&p| p == pid), "started again: {seen:?}");
    assert!(!procs::alive(pid), "sleep {pid} was killed");
    assert_eq!(show("RuntimeMaxUSec"), "2s\n");
    assert_eq!(show("Result"), "timeout\n");
    assert_eq!(show("Transient"), "yes\n");
    // Still transient: resetting it lets it go, with its file.
    systemctl(&bus, &["reset-failed", "long.service"]).expect(0);
    assert!(!transient.join("long.service").exists());
    assert!(init.status().units.iter().all(|u| u.unit != "long.service"));
}
