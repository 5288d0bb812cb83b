//! The manager's settings: the bus served in supervisor mode from the
//! config, `systemd-analyze`'s log level and target, `system.conf`'s
//! default limits.

use super::*;

/// In supervisor mode the config's `systemd-bus: true` serves the
/// interface as PID 1 does: the init's own socket and service units, with
/// no unit file of the test's, answer Debian's systemctl on
/// /run/systemd/private (a tmpfs /run of the init's mount namespace).
#[test]
fn the_config_serves_the_bus_in_supervisor_mode() {
    let dir = TestDir::new();
    units(&dir);
    let _ = bins::busd();
    let config = dir.file("init.yaml", "systemd-bus: true\n");
    let init = dir
        .init()
        .in_mount_namespace("mount -t tmpfs -o mode=0755 tmpfs /run")
        .config(config)
        .target("default")
        .start();
    init.wait_state("flotilla-busd.service", UnitState::Running);
    assert_eq!(init.unit("flotilla-busd.socket").state, UnitState::Running);
    // Running (its PID known) once its process has exec'd, which may
    // come after busd's.
    let pid = init.wait_state("web", UnitState::Running).pid.unwrap_or(0);
    let in_mounts = |args: &[&str]| {
        let mut cmd = Command::new("nsenter");
        cmd.arg("-t")
            .arg(init.pid.to_string())
            .args(["-m", "--", "/bin/systemctl", "--no-pager"])
            .args(args)
            .env("SYSTEMD_COLORS", "0")
            .env("LC_ALL", "C");
        run(cmd, Duration::from_secs(30))
    };
    let out = in_mounts(&["show", "-p", "MainPID", "-p", "ActiveState", "web"]);
    out.expect(0);
    assert_eq!(out.stdout, format!("MainPID={pid}\nActiveState=active\n"));
    in_mounts(&["start", "extra.service"]).expect(0);
    assert_eq!(init.unit("extra.service").state, UnitState::Running);
    let out = in_mounts(&["is-system-running"]);
    assert_eq!(out.stdout, "running\n", "{out:?}");
}

/// `systemd-analyze log-level debug` and `log-target`, the first lines of
/// many of systemd's own tests: Debian's `systemd-analyze` sets the
/// manager's `LogLevel`/`LogTarget` with `Properties.Set` and reads them
/// back. At `debug` the init writes each action it carries out for a
/// unit; at `warning` it leaves out the lines of units starting and
/// stopping. A bad value is refused, naming the good ones.
#[test]
fn systemd_analyze_sets_and_reads_the_log_level_and_target() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    let analyze = |args: &[&str]| debian_tool(&bus, "/usr/bin/systemd-analyze", args);
    assert_eq!(analyze(&["log-level"]).expect(0).stdout, "info\n");
    assert_eq!(analyze(&["log-target"]).expect(0).stdout, "console\n");

    analyze(&["log-level", "debug"]).expect(0);
    analyze(&["log-target", "journal"]).expect(0);
    assert_eq!(analyze(&["log-level"]).expect(0).stdout, "debug\n");
    assert_eq!(analyze(&["log-target"]).expect(0).stdout, "journal\n");
    let out = systemctl(&bus, &["show", "-P", "LogLevel"]);
    assert_eq!(out.expect(0).stdout, "debug\n");
    assert_eq!(init.status().log.level.as_str(), "debug");

    // At debug: the spawn of extra.service's main process, on the console.
    systemctl(&bus, &["start", "extra.service"]).expect(0);
    let line = "init: debug: extra.service: spawn exec-start /bin/sleep 1000";
    let deadline = std::time::Instant::now() + WAIT;
    while !init.output().contains(line) {
        assert!(
            std::time::Instant::now() < deadline,
            "no {line:?} in the init's output:\n{}",
            init.output()
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    // At warning: no line for a unit stopping or stopped.
    analyze(&["log-level", "warning"]).expect(0);
    assert_eq!(analyze(&["log-level"]).expect(0).stdout, "warning\n");
    systemctl(&bus, &["stop", "extra.service"]).expect(0);
    init.wait_state("extra.service", UnitState::Disabled);
    let console = init.output();
    assert!(
        console.contains("[  OK  ] started extra.service"),
        "{console}"
    );
    assert!(!console.contains("stopped extra.service"), "{console}");
    assert!(!console.contains("stopping extra.service"), "{console}");

    // A bad value: refused, nothing changed.
    let out = busctl(
        &bus.socket,
        None,
        &[
            "set-property",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager",
            "LogLevel",
            "s",
            "loud",
        ],
    );
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("invalid log level"), "{out:?}");
    // A change: root's only.
    let out = busctl(
        &bus.socket,
        Some("nobody"),
        &[
            "set-property",
            "org.freedesktop.systemd1",
            "/org/freedesktop/LogControl1",
            "org.freedesktop.LogControl1",
            "LogLevel",
            "s",
            "debug",
        ],
    );
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("Access denied"), "{out:?}");
    assert_eq!(analyze(&["log-level"]).expect(0).stdout, "warning\n");
}

/// The manager's settings (systemd's test 05): with the config's
/// `system-conf` (a root in the test's directory, so the host's own
/// `/etc/systemd/system.conf` is not read), a drop-in written to
/// `run/systemd/system.conf.d` and `systemctl daemon-reload` give
/// `DefaultLimitNOFILE`/`DefaultLimitNOFILESoft`, every unit without a
/// `LimitNOFILE=` of its own shows them and its processes get them; a unit's
/// own key wins; `DefaultTimeoutStartSec=` and `DefaultTimeoutStopSec=` are
/// the timeouts of a unit file that sets none; a `[Manager]` key flotilla does not apply is a warning
/// naming its file and line.
#[test]
fn system_conf_default_limits_after_a_drop_in_and_daemon_reload() {
    let dir = TestDir::new();
    units(&dir);
    dir.file(
        "root/etc/systemd/system.conf",
        "[Manager]\n#DefaultLimitNOFILE=\nLogLevel=debug\n",
    );
    // Each writes what `ulimit` says of its descriptors: soft, hard.
    for (name, own) in [("limits", ""), ("own", "LimitNOFILE=100:200\n")] {
        dir.file(
            &format!("units/{name}.service"),
            &format!(
                "[Service]\nType=oneshot\nRemainAfterExit=yes\n{own}\
                 ExecStart=/bin/sh -c 'echo $(ulimit -n -S) $(ulimit -n -H) > {}'\n",
                dir.join(name).display()
            ),
        );
    }
    let config = dir.file(
        "init.yaml",
        &format!("system-conf: {}\n", dir.join("root").display()),
    );
    let init = dir.init().config(config).target("default").start();
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    let show = |args: &[&str]| {
        let mut all = vec!["show", "-P"];
        all.extend(args);
        let out = systemctl(&bus, &all);
        out.expect(0);
        out.stdout.trim_end().to_string()
    };
    let warning = format!(
        "{}:3:1: warning: flotilla does not apply `LogLevel=`",
        dir.join("root/etc/systemd/system.conf").display()
    );
    let log = std::fs::read_to_string(dir.join("init.out")).unwrap_or_default();
    assert!(log.contains(&warning), "no `{warning}` in:\n{log}");
    // No default set: the init's own limit, which its children inherit.
    let before: u64 = show(&["DefaultLimitNOFILESoft"]).parse().expect("a number");
    assert!(before > 0);
    assert_eq!(show(&["TimeoutStartUSec", "extra.service"]), "1min 30s");

    dir.file(
        "root/run/systemd/system.conf.d/rlimits.conf",
        "[Manager]\nDefaultLimitNOFILE=10000:16384\n\
         DefaultTimeoutStartSec=5min\nDefaultTimeoutStopSec=7s\n",
    );
    systemctl(&bus, &["daemon-reload"]).expect(0);
    assert_eq!(show(&["DefaultLimitNOFILESoft"]), "10000");
    assert_eq!(show(&["DefaultLimitNOFILE"]), "16384");
    // The default timeouts, for a unit file that sets none (a oneshot
    // has no start timeout of its own either way).
    assert_eq!(show(&["TimeoutStartUSec", "extra.service"]), "5min");
    assert_eq!(show(&["TimeoutStopUSec", "extra.service"]), "7s");
    assert_eq!(show(&["TimeoutStartUSec", "own.service"]), "infinity");
    assert_eq!(show(&["TimeoutStopUSec", "own.service"]), "7s");
    // A unit started before the reload shows the new default, as under
    // systemd (its processes keep the limits they were started with).
    assert_eq!(show(&["LimitNOFILESoft", "web"]), "10000");
    assert_eq!(show(&["LimitNOFILE", "web"]), "16384");

    systemctl(&bus, &["start", "limits.service", "own.service"]).expect(0);
    let got = |name: &str| {
        std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| {
            panic!(
                "{name}.service wrote nothing ({e}): {:?}",
                init.unit(&format!("{name}.service"))
            )
        })
    };
    assert_eq!(got("limits"), "10000 16384\n");
    assert_eq!(got("own"), "100 200\n");
    assert_eq!(show(&["LimitNOFILESoft", "limits.service"]), "10000");
    assert_eq!(show(&["LimitNOFILESoft", "own.service"]), "100");
    assert_eq!(show(&["LimitNOFILE", "own.service"]), "200");
}
