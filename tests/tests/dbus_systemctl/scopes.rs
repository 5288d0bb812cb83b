//! Scopes made with `systemd-run --scope`: the command adopted, the scope
//! carried across a re-exec of the init, a change during the re-exec
//! still signalled.

use super::*;

/// `systemctl stop NAME` of a scope whose one process is `command`: the
/// process ends by SIGTERM, and the scope leaves the unit set.
fn stop_scope(init: &Init, bus: &Busd, name: &str, mut command: Killed) {
    systemctl(bus, &["stop", name]).expect(0);
    let status = command.0.wait().expect("wait for the scope's command");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGTERM),
        "{status:?}"
    );
    wait_scope_gone(init, name, "stopped");
}

/// `systemctl daemon-reexec` (Debian's `systemd` package runs it at an
/// upgrade) keeps the scopes, as logind's sessions need: after the init
/// executed itself again each scope still runs with its process, the end
/// of its last process still ends it (it leaves the unit set), and a stop
/// over D-Bus still signals it.
#[test]
fn a_scope_is_carried_across_a_reexec_of_the_init() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    let ends = Killed(debian_tool_spawn(
        &bus,
        "/usr/bin/systemd-run",
        &["--scope", "--unit", "ends", "/bin/sleep", "300"],
    ));
    let stopped = Killed(debian_tool_spawn(
        &bus,
        "/usr/bin/systemd-run",
        &["--scope", "--unit", "stopped", "/bin/sleep", "300"],
    ));
    let (a, b) = (ends.0.id() as i32, stopped.0.id() as i32);
    init.wait_state("ends.scope", UnitState::Running);
    init.wait_state("stopped.scope", UnitState::Running);
    wait_for(WAIT, "systemd-run to become the commands", || {
        (procs::cmdline(a) == "/bin/sleep 300" && procs::cmdline(b) == "/bin/sleep 300")
            .then_some(())
    });
    let web = init.pid_of("web");

    // Answered by the new image (the control socket is carried).
    systemctl(&bus, &["daemon-reexec"]).expect(0);
    assert_eq!(init.pid_of("web"), web);
    for (scope, pid) in [("ends.scope", a), ("stopped.scope", b)] {
        let u = init.unit(scope);
        assert_eq!((u.state, u.pid), (UnitState::Running, Some(pid)), "{u:?}");
    }

    // Its last process ends: the new image sees it, and the scope goes.
    procs::signal(a, libc::SIGTERM);
    wait_scope_gone(&init, "ends.scope", "ended");
    // Stopped over D-Bus: its process gets SIGTERM, and the scope goes
    // (the stop's job ends though the bus side may have lost the init's
    // changes while it re-executed).
    stop_scope(&init, &bus, "stopped.scope", stopped);
}

/// A change the init makes while `flotilla-busd` is not following it (the
/// init re-executing closes its change stream) still goes out as
/// `PropertiesChanged` once the stream is back: `extra.service` (which
/// does not restart) killed just after `systemctl daemon-reexec` returned,
/// seen by Debian's `dbus-monitor` on the system bus.
#[test]
fn a_change_during_a_reexec_still_goes_out_as_a_signal() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = dbus_daemon(&dir);
    let busd = busd_on(&dir, Some(&bus.socket));
    on_the_bus(&bus.socket);
    let log = dir.join("monitor.out");
    let out = std::fs::File::create(&log).expect("monitor.out");
    let _monitor = Killed(
        Command::new("dbus-monitor")
            .arg("--address")
            .arg(format!("unix:path={}", bus.socket.display()))
            .arg("type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'")
            .env(procs::MARK_VAR, &dir.mark)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(Stdio::null())
            .spawn()
            .expect("start dbus-monitor"),
    );
    // Each of the unit's signals from byte `from` of the log on.
    let signals_of = |unit: &str, from: usize| -> Vec<String> {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let head = format!(
            "path=/org/freedesktop/systemd1/unit/{unit}; \
             interface=org.freedesktop.DBus.Properties; member=PropertiesChanged"
        );
        let t = text.get(from..).unwrap_or_default();
        let starts: Vec<usize> = t.match_indices(&head).map(|(at, _)| at).collect();
        // Each up to the next signal of any object.
        starts
            .iter()
            .map(|&at| {
                let end = t[at + 1..].find("signal ").map_or(t.len(), |n| at + 1 + n);
                t[at..end].to_string()
            })
            .collect()
    };
    let signal_of = |unit: &str, from: usize| signals_of(unit, from).into_iter().next();
    // The monitor is listening once a start's signal reaches it.
    wait_for(WAIT, "dbus-monitor to see a start's signal", || {
        let _ = systemctl(&busd, &["start", "extra.service"]);
        signal_of("extra_2eservice", 0)
    });

    let extra = init.wait_state("extra.service", UnitState::Running);
    let pid = extra.pid.expect("extra's PID");

    systemctl(&busd, &["daemon-reexec"]).expect(0);
    let from = std::fs::metadata(&log)
        .map(|m| m.len() as usize)
        .unwrap_or(0);
    procs::signal(pid, libc::SIGKILL);
    // dbus-monitor prints the value on the line after the name. The
    // start's last signal (its job gone) may come after the re-exec too,
    // on a loaded machine: the one that says `failed` is looked for.
    let failed = "variant             string \"failed\"";
    wait_for(WAIT, "extra's PropertiesChanged after the re-exec", || {
        signals_of("extra_2eservice", from).into_iter().find(|t| {
            let mut lines = t.lines().skip_while(|l| !l.contains("\"ActiveState\""));
            lines.next();
            lines.next().is_some_and(|v| v.trim() == failed)
        })
    });
    assert_eq!(init.unit("extra.service").state, UnitState::Failed);
}

/// `systemd-run --scope CMD`, what logind does for each login: the init
/// adopts the caller (which then becomes the command) into a scope unit,
/// `running` while the command runs; the scope ends with its last process
/// and leaves the unit set; `systemctl stop` of a scope signals its
/// processes (SIGTERM, and SIGHUP with `SendSIGHUP=`); a property a scope
/// does not take is refused, naming it.
#[test]
fn systemd_run_scope_adopts_the_command() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    let sleeper = Killed(debian_tool_spawn(
        &bus,
        "/usr/bin/systemd-run",
        &["--scope", "--unit", "probe", "/bin/sleep", "300"],
    ));
    let pid = sleeper.0.id() as i32;
    let st = init.wait_state("probe.scope", UnitState::Running);
    assert_eq!(st.pid, Some(pid), "{st:?}");
    wait_for(WAIT, "systemd-run to become the command", || {
        (procs::cmdline(pid) == "/bin/sleep 300").then_some(())
    });
    let out = systemctl(&bus, &["is-active", "probe.scope"]);
    assert_eq!((out.code, out.stdout.as_str()), (0, "active\n"), "{out:?}");
    // In its own cgroup when the init gives units theirs (as `web`).
    let cgroup =
        |pid: i32| std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    let web = init.unit("web").pid.expect("web's pid");
    if cgroup(web).contains("/web") {
        assert!(cgroup(pid).contains("/probe.scope"), "{}", cgroup(pid));
    }
    // Its last process ends: so does the scope, which leaves the set. Its
    // end is reported first (logind learns that a session is over from the
    // scope's `PropertiesChanged`, which busd sends for each change).
    let mut changes = init.subscribe();
    procs::signal(pid, libc::SIGTERM);
    changes.until("the scope's end", |u| {
        u.unit == "probe.scope" && u.state != UnitState::Running
    });
    wait_scope_gone(&init, "probe.scope", "ended");

    // logind's call at a logout, on the scope's own object.
    let sleeper3 = Killed(debian_tool_spawn(
        &bus,
        "/usr/bin/systemd-run",
        &["--scope", "--unit", "probe3", "/bin/sleep", "300"],
    ));
    init.wait_state("probe3.scope", UnitState::Running);
    busctl(
        &bus.socket,
        None,
        &[
            "call",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1/unit/probe3_2escope",
            "org.freedesktop.systemd1.Scope",
            "Abandon",
        ],
    )
    .expect(0);
    drop(sleeper3);

    // Stopped over D-Bus: its processes get SIGTERM.
    let sleeper = Killed(debian_tool_spawn(
        &bus,
        "/usr/bin/systemd-run",
        &["--scope", "--unit", "probe2", "/bin/sleep", "300"],
    ));
    let pid = sleeper.0.id() as i32;
    init.wait_state("probe2.scope", UnitState::Running);
    assert_eq!(init.unit("probe2.scope").pid, Some(pid));
    stop_scope(&init, &bus, "probe2.scope", sleeper);

    let out = debian_tool(
        &bus,
        "/usr/bin/systemd-run",
        &["--scope", "-p", "MemoryMax=1M", "/bin/true"],
    );
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("StartTransientUnit with MemoryMax is not supported by flotilla"),
        "{out:?}"
    );
}

/// A scope's file, where systemd writes it: the lines of its
/// properties (flotilla-busd's) are written into `/run/systemd/transient`, `systemctl cat`
/// prints them, a `daemon-reload` keeps the running scope with its
/// process, and a drop-in written for it since applies at the next one,
/// as systemd reads the scope again from its file with its drop-ins
/// (systemd's test 16: a `[Scope]` drop-in's `RuntimeMaxSec=`). Reset, the
/// scope goes with its file.
#[test]
fn a_drop_in_for_a_running_scope_applies_at_a_daemon_reload() {
    let dir = TestDir::new();
    let (init, transient) = started_with_transient_dir(&dir);
    let bus = busd(&dir);
    let command = Killed(debian_tool_spawn(
        &bus,
        "/usr/bin/systemd-run",
        &[
            "--scope",
            "--unit",
            "probe",
            "-p",
            "SendSIGHUP=yes",
            "/bin/sleep",
            "300",
        ],
    ));
    let pid = command.0.id() as i32;
    init.wait_state("probe.scope", UnitState::Running);
    let file = transient.join("probe.scope");
    let out = systemctl(&bus, &["cat", "probe.scope"]);
    out.expect(0);
    assert!(
        out.stdout.contains(&format!("# {}", file.display()))
            && out.stdout.lines().any(|l| l == "[Scope]")
            && out.stdout.lines().any(|l| l == "SendSIGHUP=yes"),
        "{out:?}"
    );
    let show = |p: &str| systemctl(&bus, &["show", "-P", p, "probe.scope"]).stdout;

    systemctl(&bus, &["daemon-reload"]).expect(0);
    let u = init.unit("probe.scope");
    assert_eq!((u.state, u.pid), (UnitState::Running, Some(pid)), "{u:?}");
    assert_eq!(show("SendSIGHUP"), "yes\n");
    assert_eq!(show("RuntimeMaxUSec"), "infinity\n");

    dir.file(
        "units/probe.scope.d/limit.conf",
        "[Scope]\nRuntimeMaxSec=2s\nRuntimeRandomizedExtraSec=0\n",
    );
    systemctl(&bus, &["daemon-reload"]).expect(0);
    init.wait_state("probe.scope", UnitState::Failed);
    assert!(!procs::alive(pid) || procs::state(pid) == Some('Z'));
    assert_eq!(show("RuntimeMaxUSec"), "2s\n");
    assert_eq!(show("Result"), "timeout\n");
    assert_eq!(show("SendSIGHUP"), "yes\n");
    systemctl(&bus, &["reset-failed", "probe.scope"]).expect(0);
    wait_scope_gone(&init, "probe.scope", "failed");
    assert!(!file.exists(), "{} is left", file.display());
}
