//! The manager through Debian's `systemctl` and `busctl`: units read,
//! started, stopped and killed; a caller other than root refused a change;
//! the init handing its socket to `flotilla-busd`; Debian's `poweroff`.

use super::*;

#[test]
fn debians_systemctl_reads_starts_and_stops_units() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    let pid = init.pid_of("web");

    let out = systemctl(&bus, &["status", "-n0", "web.service"]);
    out.expect(0);
    assert!(out.stdout.contains("web.service"), "{out:?}");
    assert!(out.stdout.contains("Active: active (running)"), "{out:?}");
    assert!(out.stdout.contains(&format!("Main PID: {pid}")), "{out:?}");

    let out = systemctl(&bus, &["show", "-p", "MainPID", "-p", "ActiveState", "web"]);
    out.expect(0);
    assert_eq!(out.stdout, format!("MainPID={pid}\nActiveState=active\n"));

    let out = systemctl(&bus, &["is-active", "extra.service"]);
    out.expect(3);
    assert_eq!(out.stdout, "inactive\n");

    // `start` waits for the job's JobRemoved: the unit is up when it
    // returns, with no wait of the test's own.
    systemctl(&bus, &["start", "extra.service"]).expect(0);
    assert_eq!(init.unit("extra.service").state, UnitState::Running);
    let out = systemctl(&bus, &["is-active", "extra"]);
    out.expect(0);
    assert_eq!(out.stdout, "active\n");

    let out = systemctl(&bus, &["list-units", "--no-legend"]);
    out.expect(0);
    let line = |name: &str| {
        out.stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .map(|l| l.split_whitespace().take(4).collect::<Vec<_>>().join(" "))
    };
    assert_eq!(
        line("extra.service").as_deref(),
        Some("extra.service loaded active running"),
        "{out:?}"
    );
    assert_eq!(
        line("web.service").as_deref(),
        Some("web.service loaded active running"),
        "{out:?}"
    );

    systemctl(&bus, &["stop", "extra.service"]).expect(0);
    assert_eq!(init.unit("extra.service").state, UnitState::Disabled);
    systemctl(&bus, &["is-active", "extra.service"]).expect(3);

    // `--show-transaction` asks for the job with EnqueueUnitJob, which
    // answers the job: systemctl shows it and waits for it as for
    // StartUnit's.
    let out = systemctl(&bus, &["start", "--show-transaction", "extra.service"]);
    out.expect(0);
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(said.contains("Enqueued anchor job "), "{out:?}");
    assert!(said.contains(" extra.service/start."), "{out:?}");
    assert_eq!(init.unit("extra.service").state, UnitState::Running);
    systemctl(&bus, &["stop", "-T", "extra.service"]).expect(0);
    assert_eq!(init.unit("extra.service").state, UnitState::Disabled);

    // The target requires web: it stops all the same, as under systemd,
    // and stays stopped until it is started again.
    systemctl(&bus, &["stop", "web"]).expect(0);
    assert_eq!(init.unit("web").state, UnitState::Disabled);
    systemctl(&bus, &["is-active", "web"]).expect(3);
    systemctl(&bus, &["start", "web"]).expect(0);
    assert_eq!(init.unit("web").state, UnitState::Running);

    let out = systemctl(&bus, &["start", "bad.service"]);
    out.expect(1);
    assert!(out.stderr.contains("Job for bad.service failed"), "{out:?}");

    // Unit files, read on the init's unit path.
    let out = systemctl(&bus, &["is-enabled", "extra.service"]);
    out.expect(0);
    assert_eq!(out.stdout, "static\n");
    let out = systemctl(&bus, &["list-unit-files", "--no-legend", "*.service"]);
    out.expect(0);
    assert!(
        out.stdout
            .lines()
            .any(|l| l.split_whitespace().take(2).eq(["extra.service", "static"])),
        "{out:?}"
    );

    // enable --now: the [Install] links made over D-Bus, the init
    // reloaded (systemctl asks), the unit started; disable --now undoes it.
    let link = dir.join("units/multi-user.target.wants/inst.service");
    let out = systemctl(&bus, &["enable", "--now", "inst.service"]);
    out.expect(0);
    assert!(out.stderr.contains("Created symlink"), "{out:?}");
    assert_eq!(
        std::fs::read_link(&link).expect("the link"),
        dir.join("units/inst.service")
    );
    assert_eq!(init.unit("inst.service").state, UnitState::Running);
    systemctl(&bus, &["is-enabled", "inst.service"]).expect(0);
    // `-l` lists the links too (GetUnitFileLinks).
    let out = systemctl(&bus, &["is-enabled", "-l", "inst.service"]);
    out.expect(0);
    assert_eq!(
        out.stdout,
        format!("enabled\n  {}\n", link.display()),
        "{out:?}"
    );
    let out = systemctl(&bus, &["disable", "--now", "inst.service"]);
    out.expect(0);
    assert!(std::fs::symlink_metadata(&link).is_err(), "{out:?}");
    assert_eq!(init.unit("inst.service").state, UnitState::Disabled);
    let out = systemctl(&bus, &["is-enabled", "inst.service"]);
    out.expect(1);
    assert_eq!(out.stdout, "disabled\n");
    // Its file removed while enabled: the links still go (systemd's test
    // 26), and a name with neither file nor links is not found.
    systemctl(&bus, &["enable", "inst.service"]).expect(0);
    std::fs::remove_file(dir.join("units/inst.service")).expect("rm");
    systemctl(&bus, &["daemon-reload"]).expect(0);
    let out = systemctl(&bus, &["disable", "inst.service"]);
    out.expect(0);
    assert!(out.stderr.contains("Removed"), "{out:?}");
    assert!(std::fs::symlink_metadata(&link).is_err(), "{out:?}");
    let out = systemctl(&bus, &["disable", "inst.service"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("does not exist"), "{out:?}");

    // The system as a whole, from the manager's properties: degraded,
    // with bad.service failed.
    let out = systemctl(&bus, &["is-system-running"]);
    out.expect(1);
    assert_eq!(out.stdout, "degraded\n");
    let out = systemctl(&bus, &["get-default"]);
    out.expect(0);
    assert_eq!(out.stdout, "default.target\n");
    let out = systemctl(&bus, &["status"]);
    out.expect(0);
    assert!(out.stdout.contains("Failed: 1 units"), "{out:?}");
    assert!(out.stdout.contains("State: degraded"), "{out:?}");
    assert!(!out.stderr.contains("Failed"), "{out:?}");

    let out = systemctl(&bus, &["status", "nothere.service"]);
    out.expect(4);
    assert!(
        out.stderr
            .contains("Unit nothere.service could not be found."),
        "{out:?}"
    );

    // reset-failed: the failure forgotten, the unit inactive, not run again.
    systemctl(&bus, &["is-failed", "bad.service"]).expect(0);
    systemctl(&bus, &["reset-failed", "bad.service"]).expect(0);
    let out = systemctl(&bus, &["is-failed", "bad.service"]);
    out.expect(1);
    assert_eq!(out.stdout, "inactive\n");
    assert_eq!(init.unit("bad.service").state, UnitState::Disabled);
    let out = systemctl(&bus, &["is-system-running"]);
    out.expect(0);
    assert_eq!(out.stdout, "running\n");
}

#[test]
fn busctl_introspects_and_calls_the_manager() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);

    let out = busctl(
        &bus.socket,
        None,
        &[
            "introspect",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1",
        ],
    );
    out.expect(0);
    for member in [".StartUnit", ".JobRemoved", ".ListUnits", ".SystemState"] {
        assert!(out.stdout.contains(member), "{member}: {out:?}");
    }

    // A unit the init does not have (a session's scope that has ended)
    // still has its type's interface, with systemd's "none" values:
    // `loginctl session-status` reads its `ControlGroup`.
    let out = busctl(
        &bus.socket,
        None,
        &[
            "get-property",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1/unit/session_2d9_2escope",
            "org.freedesktop.systemd1.Scope",
            "ControlGroup",
        ],
    );
    out.expect(0);
    assert_eq!(out.stdout, "s \"\"\n");

    let out = busctl(
        &bus.socket,
        None,
        &[
            "call",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager",
            "GetUnit",
            "s",
            "web.service",
        ],
    );
    out.expect(0);
    assert_eq!(
        out.stdout,
        "o \"/org/freedesktop/systemd1/unit/web_2eservice\"\n"
    );

    let out = busctl(
        &bus.socket,
        None,
        &[
            "get-property",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1/unit/web_2eservice",
            "org.freedesktop.systemd1.Unit",
            "ActiveState",
            "SubState",
        ],
    );
    out.expect(0);
    assert_eq!(out.stdout, "s \"active\"\ns \"running\"\n");

    // The manager's properties: those that count units from the init's
    // status, the others (what `systemd-update-utmp` reads at boot)
    // without it.
    let manager = |props: &[&str]| {
        let mut args = vec![
            "get-property",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager",
        ];
        args.extend_from_slice(props);
        let out = busctl(&bus.socket, None, &args);
        out.expect(0);
        out.stdout
    };
    assert_eq!(manager(&["SystemState"]), "s \"running\"\n");
    let counted = init.status().units.len();
    assert_eq!(
        manager(&["NNames", "NFailedUnits"]),
        format!("u {counted}\nu 0\n")
    );
    let stamp = manager(&["UserspaceTimestampMonotonic"]);
    let usec: u64 = stamp
        .strip_prefix("t ")
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or_else(|| panic!("{stamp:?}"));
    assert!(usec > 0, "{stamp:?}");
    assert!(manager(&["Version"]).starts_with("s \"flotilla "));

    // The object tree, as busctl walks it, and GLib's reading of a unit.
    let out = busctl(&bus.socket, None, &["tree", "org.freedesktop.systemd1"]);
    out.expect(0);
    for node in [
        "/org/freedesktop/systemd1/job",
        "/org/freedesktop/systemd1/unit/web_2eservice",
        "/org/freedesktop/systemd1/unit/extra_2eservice",
    ] {
        assert!(out.stdout.contains(node), "{node}: {out:?}");
    }
    let mut gdbus = Command::new("gdbus");
    gdbus
        .arg("introspect")
        .arg("--address")
        .arg(format!("unix:path={}", bus.socket.display()))
        .args(["--dest", "org.freedesktop.systemd1", "--object-path"])
        .arg("/org/freedesktop/systemd1/unit/web_2eservice");
    let out = run(gdbus, Duration::from_secs(15));
    out.expect(0);
    for line in [
        "interface org.freedesktop.systemd1.Unit {",
        "interface org.freedesktop.systemd1.Service {",
        "readonly s ActiveState = 'active';",
        "readonly (uo) Job = (0, '/');",
    ] {
        assert!(out.stdout.contains(line), "{line}: {out:?}");
    }

    // Bad input is an error naming it; the bus side goes on.
    let out = busctl(
        &bus.socket,
        None,
        &[
            "call",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager",
            "StartUnit",
            "u",
            "7",
        ],
    );
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("bad arguments"), "{out:?}");
    let out = busctl(
        &bus.socket,
        None,
        &["introspect", "org.freedesktop.systemd1", "/nowhere"],
    );
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("Unknown object '/nowhere'"), "{out:?}");

    // What flotilla cannot do is an error that says what and why.
    let out = busctl(
        &bus.socket,
        None,
        &[
            "call",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager",
            "AbandonScope",
            "s",
            "session-1.scope",
        ],
    );
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("Unit session-1.scope not found."),
        "{out:?}"
    );
}

#[test]
fn a_caller_other_than_root_reads_and_is_refused_a_change() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);

    let out = busctl(
        &bus.socket,
        Some("nobody"),
        &[
            "get-property",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1/unit/extra_2eservice",
            "org.freedesktop.systemd1.Unit",
            "ActiveState",
        ],
    );
    out.expect(0);
    assert_eq!(out.stdout, "s \"inactive\"\n");

    let out = busctl(
        &bus.socket,
        Some("nobody"),
        &[
            "call",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager",
            "StartUnit",
            "ss",
            "extra.service",
            "replace",
        ],
    );
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("Access denied"), "{out:?}");
    assert_eq!(init.unit("extra.service").state, UnitState::Disabled);
}

/// The init binds the socket (`flotilla-busd.socket`, as
/// `contrib/units/` has it) and hands it to `flotilla-busd` as fd 3
/// (`LISTEN_FDS`); when `flotilla-busd` dies the init starts it again
/// with the same socket, which answers as before.
#[test]
fn the_init_hands_its_socket_to_busd_and_restarts_it() {
    let dir = TestDir::new();
    let socket = dir.join("run/systemd/private");
    dir.file(
        "units/flotilla-busd.socket",
        &format!(
            "[Socket]\nListenStream={}\nSocketMode=0666\n",
            socket.display()
        ),
    );
    dir.file(
        "units/flotilla-busd.service",
        &format!(
            "[Unit]\nRequires=flotilla-busd.socket\n[Service]\nExecStart={} --control {} \
             --no-system-bus\nRestart=always\nRestartSec=100ms\n",
            bins::busd().display(),
            dir.control().display()
        ),
    );
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: [flotilla-busd.socket, flotilla-busd.service]\n",
    );
    // A start that lasts a few seconds.
    dir.file(
        "units/slow.service",
        "[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sleep 3\n",
    );
    let init = dir.start("default");
    let first = init.wait_state("flotilla-busd.service", UnitState::Running);
    let state = |socket: &Path, object: &str| {
        let out = busctl(
            socket,
            None,
            &[
                "get-property",
                "org.freedesktop.systemd1",
                &format!("/org/freedesktop/systemd1/unit/{object}"),
                "org.freedesktop.systemd1.Unit",
                "ActiveState",
            ],
        );
        out.expect(0);
        out.stdout
    };
    assert_eq!(
        state(&socket, "flotilla_2dbusd_2eservice"),
        "s \"active\"\n"
    );

    let old = first.pid.expect("busd's pid");
    procs::signal(old, libc::SIGKILL);
    let again = init.wait_unit("flotilla-busd.service", "restarted", |u| {
        u.state == UnitState::Running && u.pid.is_some_and(|p| p != old)
    });
    assert_eq!(again.restarts, 1);
    assert_eq!(
        state(&socket, "flotilla_2dbusd_2eservice"),
        "s \"active\"\n"
    );

    // busd killed while Debian's `systemctl start` waits for a slow
    // unit's job: the client's connection was to the dead process and
    // ends, but the init had taken the start, which completes; the next
    // busd reports the unit active.
    let client = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            "set -e; mount -t tmpfs tmpfs /run; mkdir -p /run/systemd/system; \
             touch /run/systemd/private; mount --bind \"$0\" /run/systemd/private; \
             exec /bin/systemctl start slow.service",
        ])
        .arg(&socket)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start systemctl");
    init.wait_state("slow.service", UnitState::Starting);
    let old = again.pid.expect("busd's pid");
    procs::signal(old, libc::SIGKILL);
    let out = flotilla_tests::init::run_child(client, Duration::from_secs(30));
    assert_ne!(out.code, 0, "systemctl's busd died under it: {out:?}");
    let slow = init.wait_unit("slow.service", "active", |u| u.state.is_active());
    assert_eq!(slow.restarts, 0, "{slow:?}");
    init.wait_unit("flotilla-busd.service", "restarted again", |u| {
        u.state == UnitState::Running && u.pid.is_some_and(|p| p != old)
    });
    assert_eq!(state(&socket, "slow_2eservice"), "s \"active\"\n");
}

/// Debian's `poweroff` is `systemctl poweroff`: with no logind to ask, it
/// starts `poweroff.target` over the private socket, which is the init's
/// shutdown (in supervisor mode: every unit stopped, exit 0).
#[test]
fn debians_poweroff_starts_the_shutdown() {
    let dir = TestDir::new();
    let mut init = started(&dir);
    let bus = busd(&dir);
    systemctl(&bus, &["poweroff"]).expect(0);
    assert_eq!(init.wait_exit(), 0);
}

/// `systemctl kill`: the signal reaches the unit's processes and nothing
/// else changes (Debian's rsyslog-rotate sends `systemctl kill -s HUP
/// rsyslog.service` after logrotate). `--kill-whom=main` reaches the main
/// process alone; `control` is refused, saying why.
#[test]
fn systemctl_kill_signals_the_units_processes() {
    let dir = TestDir::new();
    units(&dir);
    let main_log = dir.join("main.hup");
    let child_log = dir.join("child.hup");
    // The main process and a child of its own, each counting its HUPs.
    dir.file(
        "units/hup.service",
        &format!(
            "[Service]\nExecStart=/bin/sh -c '\
             sh -c \"trap \\\\\"echo hup >> {child}\\\\\" HUP; : > {child}.ready; \
             while :; do sleep 1 & wait; done\" & \
             trap \"echo hup >> {main}\" HUP; : > {main}.ready; while :; do sleep 1 & wait; done'\n",
            child = child_log.display(),
            main = main_log.display()
        ),
    );
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    systemctl(&bus, &["start", "hup.service"]).expect(0);
    let pid = init.pid_of("hup.service");
    let count = |p: &Path| {
        std::fs::read_to_string(p)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };

    // Running once exec'd: a HUP before a shell's trap would end it.
    wait_for(WAIT, "both processes' traps", || {
        [&main_log, &child_log]
            .iter()
            .all(|l| l.with_extension("hup.ready").exists())
            .then_some(())
    });
    systemctl(&bus, &["kill", "-s", "HUP", "hup.service"]).expect(0);
    wait_for(WAIT, "both processes' HUP", || {
        (count(&main_log) == 1 && count(&child_log) == 1).then_some(())
    });
    systemctl(
        &bus,
        &["kill", "--kill-whom=main", "-s", "HUP", "hup.service"],
    )
    .expect(0);
    wait_for(WAIT, "the main process's second HUP", || {
        (count(&main_log) == 2).then_some(())
    });
    assert_eq!(count(&child_log), 1, "the child got the main-only signal");
    let s = init.unit("hup.service");
    assert_eq!((s.state, s.pid), (UnitState::Running, Some(pid)));

    let out = systemctl(&bus, &["kill", "--kill-whom=control", "hup.service"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("no control process"), "{out:?}");
    let out = systemctl(&bus, &["kill", "-s", "HUP", "nosuch.service"]);
    assert_ne!(out.code, 0, "{out:?}");
}
