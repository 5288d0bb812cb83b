//! System tests of `flotilla-busd`, systemd's D-Bus interface beside the
//! init (`docs/dbus.md`), with Debian's own programs: the init in
//! supervisor mode with a few units, `flotilla-busd` on a socket in the
//! test's directory, `busctl --address=unix:path=SOCK`, and the real
//! `/bin/systemctl`, which talks to `/run/systemd/private` once
//! `/run/systemd/system/` exists: it runs in a mount namespace of its own
//! with a tmpfs over `/run` and the test's socket bound there, so the
//! host's `/run` is untouched (harness: `tests/src/`).

#[path = "dbus_systemctl/attach.rs"]
mod attach;
#[path = "dbus_systemctl/clean.rs"]
mod clean;
#[path = "dbus_systemctl/freezer.rs"]
mod freezer;
#[path = "dbus_systemctl/manager_env.rs"]
mod manager_env;
#[path = "dbus_systemctl/markers.rs"]
mod markers;
#[path = "dbus_systemctl/mounts.rs"]
mod mounts;
#[path = "dbus_systemctl/need_reload.rs"]
mod need_reload;
#[path = "dbus_systemctl/signals.rs"]
mod signals;
#[path = "dbus_systemctl/slices.rs"]
mod slices;
#[path = "dbus_systemctl/timers.rs"]
mod timers;
#[path = "dbus_systemctl/transient_mounts.rs"]
mod transient_mounts;
#[path = "dbus_systemctl/transient_timers.rs"]
mod transient_timers;

use flotilla_tests::init::{run, run_child, Init, Out, TestDir};
use flotilla_tests::{bins, procs, wait_for, WAIT};
use flotilla_units::state::UnitState;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `flotilla-busd`, killed by PID when dropped.
struct Busd {
    child: Child,
    socket: PathBuf,
}

impl Drop for Busd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `flotilla-busd` on `DIR/private` for the test's init, and waits
/// until the socket takes connections.
fn busd(dir: &TestDir) -> Busd {
    busd_on(dir, None)
}

/// [`busd`], also on the system bus at `system_bus` when given.
fn busd_on(dir: &TestDir, system_bus: Option<&Path>) -> Busd {
    let socket = dir.join("private");
    let out = std::fs::File::create(dir.join("busd.out")).expect("busd.out");
    let mut cmd = Command::new(bins::busd());
    cmd.arg("--socket")
        .arg(&socket)
        .arg("--control")
        .arg(dir.control());
    match system_bus {
        Some(bus) => cmd.env(
            "DBUS_SYSTEM_BUS_ADDRESS",
            format!("unix:path={}", bus.display()),
        ),
        None => cmd.arg("--no-system-bus"),
    };
    let child = cmd
        .env(procs::MARK_VAR, &dir.mark)
        .stdin(Stdio::null())
        .stdout(out.try_clone().expect("dup"))
        .stderr(out)
        .spawn()
        .expect("start flotilla-busd");
    wait_for(WAIT, "flotilla-busd's socket", || {
        UnixStream::connect(&socket).ok().map(|_| ())
    });
    Busd { child, socket }
}

/// Debian's `/bin/systemctl ARGS` against the bus side: in a private mount
/// namespace whose `/run` is a tmpfs with `/run/systemd/system/` (what
/// `sd_booted()` checks) and the test's socket as `/run/systemd/private`.
fn systemctl(bus: &Busd, args: &[&str]) -> Out {
    debian_tool(bus, "/bin/systemctl --no-pager", args)
}

/// Debian's `PROGRAM ARGS` (`systemctl`, `systemd-run`) against the bus
/// side, as [`systemctl`] runs it.
fn debian_tool(bus: &Busd, program: &str, args: &[&str]) -> Out {
    let socket = &bus.socket;
    let script = format!(
        "set -e; mount -t tmpfs tmpfs /run; mkdir -p /run/systemd/system; \
         touch /run/systemd/private; mount --bind \"$0\" /run/systemd/private; \
         exec {program} \"$@\""
    );
    let mut cmd = Command::new("unshare");
    cmd.args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .arg(socket)
        .args(args)
        .env("SYSTEMD_COLORS", "0")
        .env("LC_ALL", "C");
    run(cmd, Duration::from_secs(30))
}

/// Debian's `PROGRAM ARGS` with the system bus at `bus`, in a mount
/// namespace of its own whose `/run` is empty: the manager's private
/// socket is not there, so the tool talks to the bus (as a user's does).
fn on_system_bus(bus: &Path, program: &str, args: &[&str]) -> Out {
    run(
        on_system_bus_cmd(bus, program, args),
        Duration::from_secs(30),
    )
}

/// The command [`on_system_bus`] runs.
fn on_system_bus_cmd(bus: &Path, program: &str, args: &[&str]) -> Command {
    let script = format!(
        "set -e; mount -t tmpfs tmpfs /run; mkdir -p /run/systemd/system; \
         exec {program} \"$@\""
    );
    let mut cmd = Command::new("unshare");
    cmd.args([
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        &script,
        "sh",
    ])
    .args(args)
    .env(
        "DBUS_SYSTEM_BUS_ADDRESS",
        format!("unix:path={}", bus.display()),
    )
    .env("SYSTEMD_COLORS", "0")
    .env("LC_ALL", "C");
    cmd
}

/// `busctl --address=unix:path=SOCK ARGS`, as `user` when given.
fn busctl(socket: &Path, user: Option<&str>, args: &[&str]) -> Out {
    let address = format!("unix:path={}", socket.display());
    let mut cmd = match user {
        Some(u) => {
            let mut c = Command::new("setpriv");
            c.arg(format!("--reuid={u}"))
                .args(["--regid=nogroup", "--clear-groups", "busctl"]);
            c
        }
        None => Command::new("busctl"),
    };
    cmd.arg(format!("--address={address}")).args(args);
    run(cmd, Duration::from_secs(15))
}

/// The units: `web` (YAML) that the target `default` requires, `extra`
/// (a systemd unit file the target does not require) and `bad`, whose
/// start fails.
fn units(dir: &TestDir) {
    dir.unit("web", "unit: web\nexec-start: sleep 1000\nprovides: webd\n");
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: webd\n",
    );
    dir.file(
        "units/extra.service",
        "[Unit]\nDescription=An extra service\n[Service]\nExecStart=/bin/sleep 1000\n",
    );
    dir.file(
        "units/inst.service",
        "[Service]\nExecStart=/bin/sleep 1000\n[Install]\nWantedBy=multi-user.target\n",
    );
    dir.file(
        "units/bad.service",
        "[Service]\nType=oneshot\nExecStart=/bin/false\n",
    );
}

fn started(dir: &TestDir) -> Init {
    units(dir);
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    init
}

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

/// A real `dbus-daemon` as the system bus, at `DIR/bus`, that lets every
/// user connect (the stock system policy has no rule for the test's
/// names); killed by PID when dropped.
struct DbusDaemon {
    child: Child,
    socket: PathBuf,
}

impl Drop for DbusDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A system bus configuration at `DIR/bus.conf` for a bus at `DIR/bus`
/// that every user may connect to: the file and the socket.
fn bus_config(dir: &TestDir) -> (PathBuf, PathBuf) {
    bus_config_with(dir, "")
}

/// [`bus_config`] with `more` (XML elements) in the configuration.
fn bus_config_with(dir: &TestDir, more: &str) -> (PathBuf, PathBuf) {
    let socket = dir.join("bus");
    let config = dir.file(
        "bus.conf",
        &format!(
            "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n \
             \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n<busconfig>\n\
             <type>system</type>\n<listen>unix:path={}</listen>\n<auth>EXTERNAL</auth>\n{more}\n\
             <policy context=\"default\"><allow user=\"*\"/><allow own=\"*\"/>\
             <allow send_destination=\"*\"/><allow receive_sender=\"*\"/></policy>\n</busconfig>\n",
            socket.display()
        ),
    );
    (config, socket)
}

fn dbus_daemon(dir: &TestDir) -> DbusDaemon {
    let (config, _) = bus_config(dir);
    dbus_daemon_with(dir, &config, &[])
}

/// A `dbus-daemon` with `config` and the flags `more`.
fn dbus_daemon_with(dir: &TestDir, config: &Path, more: &[&str]) -> DbusDaemon {
    let socket = dir.join("bus");
    let child = Command::new("dbus-daemon")
        .arg(format!("--config-file={}", config.display()))
        .arg("--nofork")
        .args(more)
        .env(procs::MARK_VAR, &dir.mark)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start dbus-daemon");
    wait_for(WAIT, "dbus-daemon's socket", || {
        UnixStream::connect(&socket).ok().map(|_| ())
    });
    DbusDaemon { child, socket }
}

/// Waits until `flotilla-busd` has taken `org.freedesktop.systemd1` on the
/// bus at `socket`.
fn on_the_bus(socket: &Path) {
    wait_for(WAIT, "org.freedesktop.systemd1 on the bus", || {
        let out = busctl(socket, None, &["list", "--no-legend"]);
        out.stdout
            .lines()
            .any(|l| l.starts_with("org.freedesktop.systemd1 "))
            .then_some(())
    });
}

/// With a system bus, `flotilla-busd` takes the name
/// `org.freedesktop.systemd1` there; Debian's `systemctl` run by a user
/// other than root goes through the bus (not the private socket), reads,
/// and is refused a start.
#[test]
fn on_the_system_bus_a_user_reads_and_is_refused_a_change() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = dbus_daemon(&dir);
    let _busd = busd_on(&dir, Some(&bus.socket));
    on_the_bus(&bus.socket);
    let as_nobody = |args: &[&str]| {
        on_system_bus(
            &bus.socket,
            "setpriv --reuid=nobody --regid=nogroup --clear-groups /bin/systemctl --no-pager",
            args,
        )
    };
    let out = as_nobody(&["is-active", "web.service"]);
    out.expect(0);
    assert_eq!(out.stdout, "active\n");
    let out = as_nobody(&["start", "extra.service"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("Failed to start extra.service: Access denied"),
        "{out:?}"
    );
    assert_eq!(init.unit("extra.service").state, UnitState::Disabled);
}

/// `flotilla-busd` started before the system bus takes the name once the
/// bus's unit, `dbus.service`, is up: here started through the bus side
/// itself (Debian's `systemctl start` over the private socket).
#[test]
fn the_name_is_taken_once_dbus_comes_up() {
    let dir = TestDir::new();
    units(&dir);
    let (config, socket) = bus_config(&dir);
    dir.file(
        "units/dbus.service",
        &format!(
            "[Service]\nExecStart=/usr/bin/dbus-daemon --config-file={} --nofork\n",
            config.display()
        ),
    );
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd_on(&dir, Some(&socket));
    systemctl(&bus, &["start", "dbus.service"]).expect(0);
    assert_eq!(init.unit("dbus.service").state, UnitState::Running);
    on_the_bus(&socket);
    let out = busctl(
        &socket,
        None,
        &[
            "get-property",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1/unit/dbus_2eservice",
            "org.freedesktop.systemd1.Unit",
            "ActiveState",
        ],
    );
    out.expect(0);
    assert_eq!(out.stdout, "s \"active\"\n");
}

/// The activatable names of the tests of D-Bus activation, in the service
/// directory `DIR/services` of the bus's configuration (returned):
/// `org.flotilla.Echo` (`SystemdService=dbus-org.flotilla.Echo.service`,
/// an alias, a link to `echo-name.service`, in which `dbus-test-tool`
/// takes the name), `org.flotilla.Nothere` (a unit that does not exist)
/// and `org.flotilla.Fails` (`fails.service`, whose process exits 1
/// before it takes the name).
fn activatable(dir: &TestDir) -> PathBuf {
    let services = dir.join("services");
    std::fs::create_dir_all(&services).expect("services dir");
    for (name, unit) in [
        ("org.flotilla.Echo", "dbus-org.flotilla.Echo.service"),
        ("org.flotilla.Nothere", "nothere.service"),
        ("org.flotilla.Fails", "fails.service"),
    ] {
        dir.file(
            &format!("services/{name}.service"),
            &format!(
                "[D-BUS Service]\nName={name}\nExec=/bin/false\nUser=root\nSystemdService={unit}\n"
            ),
        );
    }
    let (config, socket) = bus_config_with(
        dir,
        &format!("<servicedir>{}</servicedir>", services.display()),
    );
    dir.file(
        "units/echo-name.service",
        &format!(
            "[Service]\nType=dbus\nBusName=org.flotilla.Echo\n\
             Environment=DBUS_SYSTEM_BUS_ADDRESS=unix:path={}\n\
             ExecStart=/usr/bin/dbus-test-tool echo --system --name=org.flotilla.Echo\n",
            socket.display()
        ),
    );
    dir.file(
        "units/fails.service",
        "[Service]\nType=dbus\nBusName=org.flotilla.Fails\nExecStart=/bin/false\n",
    );
    std::os::unix::fs::symlink(
        "echo-name.service",
        dir.join("units/dbus-org.flotilla.Echo.service"),
    )
    .expect("alias link");
    // Debian's own (systemd's package): with it the bus holds an
    // activation request while the manager is not on the bus, and hands
    // it over when the manager takes its name.
    std::fs::copy(
        "/usr/share/dbus-1/system-services/org.freedesktop.systemd1.service",
        services.join("org.freedesktop.systemd1.service"),
    )
    .expect("Debian's org.freedesktop.systemd1.service");
    config
}

/// `busctl call NAME / NAME Hello` on the bus at `socket`, and how long
/// it took.
fn call_name(socket: &Path, name: &str) -> (Out, Duration) {
    let t = std::time::Instant::now();
    let out = busctl(
        socket,
        None,
        &["--timeout=20", "call", name, "/", name, "Hello"],
    );
    (out, t.elapsed())
}

/// A call to a name whose unit's start fails is answered with an error
/// within `bound` (the bus's own timeout is 25 s), naming the failed job.
fn assert_fails_at_once(socket: &Path, init: &Init, bound: Duration) {
    let (out, took) = call_name(socket, "org.flotilla.Fails");
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("fails.service failed") && took < bound,
        "not the failed job's error within {bound:?} (took {took:?}): {out:?}; \
         fails.service: {:?}",
        init.unit("fails.service")
    );
}

/// D-Bus activation through the manager: a `dbus-daemon
/// --systemd-activation` whose service file for `org.flotilla.Echo` says
/// `SystemdService=dbus-org.flotilla.Echo.service` (an alias, a link to
/// `echo-name.service`, as Debian's hostnamed and timedated are reached)
/// asks `flotilla-busd` for the unit when a client calls the name; the
/// init starts it, `dbus-test-tool` takes the name and answers the parked
/// call. A name whose unit does
/// not exist fails at once with systemd's error, not at the client's
/// timeout.
#[test]
fn a_bus_name_is_activated_through_the_manager() {
    let dir = TestDir::new();
    let services = dir.join("services");
    std::fs::create_dir_all(&services).expect("services dir");
    let config = activatable(&dir);
    let init = started(&dir);
    let bus = dbus_daemon_with(&dir, &config, &["--systemd-activation"]);
    let _busd = busd_on(&dir, Some(&bus.socket));
    on_the_bus(&bus.socket);
    assert_eq!(init.unit("echo-name.service").state, UnitState::Disabled);
    let out = busctl(
        &bus.socket,
        None,
        &[
            "call",
            "org.flotilla.Echo",
            "/",
            "org.flotilla.Echo",
            "Hello",
        ],
    );
    out.expect(0);
    // Type=dbus: running once the bus's name change reached the init.
    init.wait_state("echo-name.service", UnitState::Running);
    let out = busctl(
        &bus.socket,
        None,
        &[
            "--timeout=20",
            "call",
            "org.flotilla.Nothere",
            "/",
            "org.flotilla.Nothere",
            "Hello",
        ],
    );
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("Unit nothere.service not found"),
        "not systemd's NoSuchUnit: {out:?}"
    );
    // A unit whose process exits before it takes the name: its start job
    // fails, and the parked call with it.
    assert_fails_at_once(&bus.socket, &init, Duration::from_secs(10));
    assert_eq!(init.unit("fails.service").state, UnitState::Failed);
}

/// A call made while `flotilla-busd` is not on the bus (after the bus
/// restarted, before busd is back): the bus holds the activation request
/// for `org.freedesktop.systemd1` and hands it over the moment busd takes
/// the name, which must not lose it (it would leave the caller waiting
/// out its timeout, as `loginctl` after `systemctl restart dbus`).
#[test]
fn a_request_made_before_busd_joins_the_bus_is_served() {
    let dir = TestDir::new();
    let config = activatable(&dir);
    let init = started(&dir);
    let bus = dbus_daemon_with(&dir, &config, &["--systemd-activation"]);
    let names = || {
        busctl(&bus.socket, None, &["list", "--no-legend", "--unique"])
            .stdout
            .lines()
            .count()
    };
    let before = names();
    let t = std::time::Instant::now();
    let caller = Command::new("busctl")
        .arg(format!("--address=unix:path={}", bus.socket.display()))
        .args([
            "--timeout=20",
            "call",
            "org.flotilla.Echo",
            "/",
            "org.flotilla.Echo",
            "Hello",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start busctl");
    // The caller is on the bus (its call follows its Hello at once).
    wait_for(WAIT, "the caller on the bus", || {
        (names() > before).then_some(())
    });
    let _busd = busd_on(&dir, Some(&bus.socket));
    let out = flotilla_tests::init::run_child(caller, Duration::from_secs(30));
    let took = t.elapsed();
    out.expect(0);
    assert!(took < Duration::from_secs(15), "answered after {took:?}");
    init.wait_state("echo-name.service", UnitState::Running);
}

/// `systemctl restart dbus`: the system bus goes away and comes back (here
/// `dbus.service`, a unit of the init, restarted through the private
/// socket); `flotilla-busd` learns it from the init's report that the unit
/// is up again, takes `org.freedesktop.systemd1` on the new bus within a
/// few seconds, and serves its activation requests there as before.
#[test]
fn the_name_is_taken_again_after_dbus_restarts() {
    let dir = TestDir::new();
    let config = activatable(&dir);
    let socket = dir.join("bus");
    dir.file(
        "units/dbus.service",
        &format!(
            "[Service]\nExecStart=/usr/bin/dbus-daemon --config-file={} --nofork \
             --systemd-activation\n",
            config.display()
        ),
    );
    let init = started(&dir);
    let bus = busd_on(&dir, Some(&socket));
    systemctl(&bus, &["start", "dbus.service"]).expect(0);
    on_the_bus(&socket);
    let first = init.pid_of("dbus.service");
    let t = std::time::Instant::now();
    systemctl(&bus, &["restart", "dbus.service"]).expect(0);
    let again = init.pid_of("dbus.service");
    assert_ne!(first, again, "dbus-daemon was not restarted");
    on_the_bus(&socket);
    let took = t.elapsed();
    eprintln!(
        "busd back on the restarted bus in {:.2} s",
        took.as_secs_f64()
    );
    assert!(
        took < Duration::from_secs(5),
        "busd took {took:?} to take its name again"
    );
    // Subscribed again: the new bus's activation requests reach it.
    let (out, _) = call_name(&socket, "org.flotilla.Echo");
    out.expect(0);
    init.wait_state("echo-name.service", UnitState::Running);
    assert_fails_at_once(&socket, &init, Duration::from_secs(10));
}

/// `systemctl restart dbus` with a D-Bus service that stays running off
/// the bus (as Debian's logind does): its unit (no `Type=`, a `BusName=`:
/// systemd's `Type=dbus`) is up once its name is owned; the new bus has no
/// owner for it, and busd's whole list of the new bus's names says so, so
/// the init stops it as systemd does and `Restart=always` starts it again,
/// up once it owns its name on the new bus. Its process here is `sleep`;
/// the name is `dbus-test-tool`'s, a child that leaves with the old bus.
#[test]
fn a_name_missing_from_the_restarted_bus_restarts_its_service() {
    let dir = TestDir::new();
    let (config, socket) = bus_config(&dir);
    dir.file(
        "units/dbus.service",
        &format!(
            "[Service]\nExecStart=/usr/bin/dbus-daemon --config-file={} --nofork\n",
            config.display()
        ),
    );
    dir.file(
        "units/kept.service",
        &format!(
            "[Service]\nBusName=org.flotilla.Kept\nRestart=always\nRestartSec=0\n\
             Environment=DBUS_SYSTEM_BUS_ADDRESS=unix:path={}\n\
             ExecStart=/bin/sh -c '/usr/bin/dbus-test-tool echo --system \
             --name=org.flotilla.Kept & exec sleep 1000'\n",
            socket.display()
        ),
    );
    let init = started(&dir);
    let bus = busd_on(&dir, Some(&socket));
    systemctl(&bus, &["start", "dbus.service"]).expect(0);
    on_the_bus(&socket);
    systemctl(&bus, &["start", "kept.service"]).expect(0);
    let first = init.unit("kept.service");
    assert_eq!(
        (first.state, first.status.as_str(), first.restarts),
        (UnitState::Running, "ready (its D-Bus name is taken)", 0),
        "{first:?}"
    );
    let old = first.pid.expect("kept's pid");
    let t = std::time::Instant::now();
    systemctl(&bus, &["restart", "dbus.service"]).expect(0);
    let again = init.wait_unit("kept.service", "restarted, up on the new bus", |u| {
        u.restarts == 1 && u.state == UnitState::Running && u.pid.is_some_and(|p| p != old)
    });
    eprintln!(
        "kept.service up again on the restarted bus in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    assert_eq!(again.status, "ready (its D-Bus name is taken)", "{again:?}");
    assert!(
        !procs::alive(old),
        "the old process runs on after its name was lost"
    );
    // The name answers on the new bus.
    let (out, _) = call_name(&socket, "org.flotilla.Kept");
    out.expect(0);
}

/// `systemctl mask` and `unmask` as under systemd: a link to `/dev/null`
/// in the unit path's configuration directory (here the test's units
/// directory, the first), said as systemctl says it, read by the init at
/// the reload systemctl asks for; a masked unit refuses a start; a file in
/// the way is refused, naming it.
#[test]
fn systemctl_masks_with_a_link_as_systemd_does() {
    let dir = TestDir::new();
    units(&dir);
    let vendor = dir.join("vendor");
    std::fs::create_dir_all(&vendor).expect("vendor dir");
    dir.file(
        "vendor/vendored.service",
        "[Service]\nExecStart=/bin/sleep 1000\n",
    );
    let init = dir.init().target("default").more_units(vendor).start();
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    let link = dir.join("units/vendored.service");
    let out = systemctl(&bus, &["mask", "vendored.service"]);
    out.expect(0);
    assert_eq!(
        out.stderr,
        format!("Created symlink {} -> /dev/null.\n", link.display())
    );
    assert_eq!(std::fs::read_link(&link).ok(), Some("/dev/null".into()));
    let out = systemctl(&bus, &["is-enabled", "vendored.service"]);
    assert_eq!((out.code, out.stdout.as_str()), (1, "masked\n"), "{out:?}");
    assert!(init.unit("vendored.service").masked);
    let out = systemctl(&bus, &["start", "vendored.service"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("Unit vendored.service is masked."),
        "{out:?}"
    );
    let out = systemctl(&bus, &["unmask", "vendored.service"]);
    out.expect(0);
    assert_eq!(out.stderr, format!("Removed \"{}\".\n", link.display()));
    assert!(!init.unit("vendored.service").masked);
    systemctl(&bus, &["start", "vendored.service"]).expect(0);
    // The unit's own file where the link would go.
    let out = systemctl(&bus, &["mask", "extra.service"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr,
        format!(
            "Failed to mask unit: File {} already exists.\n",
            dir.join("units/extra.service").display()
        )
    );
}

/// `systemctl add-wants` and `add-requires` link a unit into another's
/// `.wants/` and `.requires/` as systemd links it and, after the reload
/// `systemctl` asks for, `show -P Wants` and `Requires` name it, as do
/// `list-dependencies`; `After`, `Before` and `Conflicts` are the unit
/// file's. A missing unit or a bad dependency type is a clear error.
#[test]
fn systemctl_adds_dependencies_and_shows_them() {
    let dir = TestDir::new();
    units(&dir);
    dir.file(
        "units/dep.service",
        "[Service]\nExecStart=/bin/sleep 1000\n",
    );
    dir.file(
        "units/ordered.service",
        "[Unit]\nAfter=extra.service\nBefore=bad.service\nConflicts=inst.service\n\
         [Service]\nExecStart=/bin/sleep 1000\n",
    );
    let _init = started(&dir);
    let bus = busd(&dir);
    let show = |prop: &str, unit: &str| {
        let out = systemctl(&bus, &["show", "-P", prop, unit]);
        out.expect(0);
        out.stdout.trim_end().to_string()
    };
    assert_eq!(show("Wants", "extra.service"), "");
    let out = systemctl(&bus, &["add-wants", "extra.service", "dep.service"]);
    out.expect(0);
    let link = dir.join("units/extra.service.wants/dep.service");
    let file = dir.join("units/dep.service");
    assert_eq!(
        out.stderr,
        format!(
            "Created symlink {} -> {}.\n",
            link.display(),
            file.display()
        )
    );
    assert_eq!(std::fs::read_link(&link).ok(), Some(file.clone()));
    assert_eq!(show("Wants", "extra.service"), "dep.service");
    let out = systemctl(
        &bus,
        &[
            "list-dependencies",
            "--plain",
            "--no-legend",
            "extra.service",
        ],
    );
    out.expect(0);
    assert!(out.stdout.contains("dep.service"), "{out:?}");
    assert_eq!(show("Requires", "ordered.service"), "");
    systemctl(&bus, &["add-requires", "ordered.service", "dep.service"]).expect(0);
    assert!(dir
        .join("units/ordered.service.requires/dep.service")
        .exists());
    assert_eq!(show("Requires", "ordered.service"), "dep.service");
    assert_eq!(show("After", "ordered.service"), "extra.service");
    assert_eq!(show("Before", "ordered.service"), "bad.service");
    assert_eq!(show("Conflicts", "ordered.service"), "inst.service");
    // `systemctl cat` prints the unit's drop-ins after its file, as
    // `DropInPaths` lists them.
    dir.file(
        "units/extra.service.d/10-env.conf",
        "[Service]\nEnvironment=A=1\n",
    );
    let out = systemctl(&bus, &["cat", "extra.service"]);
    out.expect(0);
    let dropin = dir.join("units/extra.service.d/10-env.conf");
    assert!(
        out.stdout.contains(&format!(
            "# {}\n[Service]\nEnvironment=A=1\n",
            dropin.display()
        )),
        "{out:?}"
    );
    assert_eq!(
        show("DropInPaths", "extra.service"),
        dropin.display().to_string()
    );
    // A YAML unit's dependencies by their target names.
    assert_eq!(show("Requires", "default.target"), "webd");

    let out = systemctl(&bus, &["add-wants", "extra.service", "nope.service"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("Unit file nope.service does not exist."),
        "{out:?}"
    );
    let out = busctl(
        &bus.socket,
        None,
        &[
            "call",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager",
            "AddDependencyUnitFiles",
            "asssbb",
            "1",
            "dep.service",
            "extra.service",
            "Upholds",
            "false",
            "false",
        ],
    );
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("Invalid dependency type Upholds: Wants or Requires"),
        "{out:?}"
    );
}

/// `systemctl set-property` writes each setting into a drop-in of the
/// unit under `system.control` (`--runtime`: the one under `run/`), as
/// systemd writes it (its test 26), and `systemctl revert` removes them; a
/// value the unit file would refuse is refused, naming the property.
#[test]
fn systemctl_set_property_writes_drop_ins_and_revert_removes_them() {
    let dir = TestDir::new();
    units(&dir);
    // On the path, not made yet (as on a fresh machine).
    let control = dir.join("etc/systemd/system.control");
    let run_control = dir.join("run/systemd/system.control");
    let init = dir
        .init()
        .target("default")
        .more_units(control.clone())
        .more_units(run_control.clone())
        .start();
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    systemctl(
        &bus,
        &[
            "set-property",
            "extra.service",
            "IPAccounting=yes",
            "MemoryMax=1234567",
        ],
    )
    .expect(0);
    let d = control.join("extra.service.d");
    let read = |p: PathBuf| std::fs::read_to_string(&p).unwrap_or_default();
    assert!(read(d.join("50-MemoryMax.conf")).ends_with("\n[Service]\nMemoryMax=1234567\n"));
    assert!(read(d.join("50-IPAccounting.conf")).ends_with("\n[Service]\nIPAccounting=yes\n"));
    systemctl(
        &bus,
        &[
            "set-property",
            "--runtime",
            "extra.service",
            "CPUAccounting=no",
            "CPUQuota=10%",
        ],
    )
    .expect(0);
    let r = run_control.join("extra.service.d");
    assert!(read(r.join("50-CPUQuota.conf")).ends_with("\n[Service]\nCPUQuota=10%\n"));
    assert!(read(r.join("50-CPUAccounting.conf")).ends_with("\n[Service]\nCPUAccounting=no\n"));
    let out = systemctl(&bus, &["set-property", "extra.service", "MemoryMax=lots"]);
    assert_ne!(out.code, 0, "{out:?}");
    systemctl(&bus, &["revert", "extra.service"]).expect(0);
    assert!(!d.exists() && !r.exists(), "revert left the drop-ins");
    let out = systemctl(&bus, &["set-property", "web", "MemoryMax=1M"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("only a unit from a systemd unit file"),
        "{out:?}"
    );
}

/// A unit file written after the last reload is loaded when first asked
/// for, as systemd loads it (its test 48): `systemctl start` of it, and a
/// restart of a target that wants it, `systemctl show` of it (test 15);
/// a unit changed on disk that nothing holds is read again when asked for
/// (the next test). A name the path does not have is `not found`, as
/// under systemd.
#[test]
fn a_unit_written_since_the_last_reload_is_loaded_when_asked_for() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    dir.file(
        "units/late.service",
        "[Service]\nExecStart=/bin/sleep 1000\n",
    );
    // Changed on disk, not reloaded, nothing holds it: read again.
    dir.file(
        "units/extra.service",
        "[Unit]\nDescription=Changed on disk\n[Service]\nExecStart=/bin/sleep 1000\n",
    );
    systemctl(&bus, &["start", "late.service"]).expect(0);
    init.wait_state("late.service", UnitState::Running);
    let out = systemctl(&bus, &["is-active", "late.service"]);
    assert_eq!(out.stdout, "active\n", "{out:?}");
    let out = systemctl(&bus, &["show", "-P", "Description", "extra.service"]);
    assert_eq!(out.stdout, "Changed on disk\n", "{out:?}");

    dir.file("units/late.target", "[Unit]\nWants=later.service\n");
    systemctl(&bus, &["daemon-reload"]).expect(0);
    systemctl(&bus, &["start", "late.target"]).expect(0);
    dir.file(
        "units/later.service",
        "[Service]\nExecStart=/bin/sleep 1000\n",
    );
    systemctl(&bus, &["restart", "late.target"]).expect(0);
    init.wait_state("later.service", UnitState::Running);

    // `systemctl show` of one (systemd's test 15): its links read too.
    dir.file(
        "units/shown.service",
        "[Service]\nExecStart=/bin/sleep 1000\n",
    );
    std::fs::create_dir_all(dir.join("units/shown.service.wants")).expect("wants dir");
    std::os::unix::fs::symlink(
        "../late.service",
        dir.join("units/shown.service.wants/late.service"),
    )
    .expect("wants link");
    let out = systemctl(&bus, &["show", "-P", "Wants", "shown.service"]);
    assert_eq!(out.stdout, "late.service\n", "{out:?}");
    let out = systemctl(&bus, &["show", "-P", "LoadState", "nope.service"]);
    assert_eq!(out.stdout, "not-found\n", "{out:?}");

    let out = systemctl(&bus, &["start", "nope.service"]);
    assert_eq!(out.code, 5, "{out:?}");
    assert_eq!(
        out.stderr,
        "Failed to start nope.service: Unit nope.service not found.\n"
    );
}

/// A unit nothing holds (inactive, no job, nothing held referring to it)
/// is read again when asked for, as systemd frees such a unit and reads
/// its files the next time something names it (its test 15): a drop-in
/// and a `.wants/` link written after the last reload show at the next
/// `systemctl show` without a daemon-reload, and at a start. A running
/// unit keeps what it was read with until a reload, as under systemd.
#[test]
fn a_unit_nothing_holds_is_read_again_when_asked_for() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    dir.file(
        "units/quiet.service",
        "[Unit]\nDescription=Quiet\n[Service]\nExecStart=/bin/sleep 1000\n",
    );
    systemctl(&bus, &["daemon-reload"]).expect(0);
    let show = |p: &str, u: &str| systemctl(&bus, &["show", "-P", p, u]).stdout;
    assert_eq!(show("Description", "quiet.service"), "Quiet\n");
    dir.file(
        "units/quiet.service.d/override.conf",
        "[Unit]\nDescription=Dropped in\n",
    );
    assert_eq!(show("Description", "quiet.service"), "Dropped in\n");
    std::fs::create_dir_all(dir.join("units/quiet.service.wants")).expect("wants dir");
    std::os::unix::fs::symlink(
        "../extra.service",
        dir.join("units/quiet.service.wants/extra.service"),
    )
    .expect("wants link");
    assert_eq!(show("Wants", "quiet.service"), "extra.service\n");
    systemctl(&bus, &["start", "quiet.service"]).expect(0);
    init.wait_state("extra.service", UnitState::Running);

    // Running: held, so not read again.
    dir.file(
        "units/quiet.service.d/override.conf",
        "[Unit]\nDescription=Later\n",
    );
    assert_eq!(show("Description", "quiet.service"), "Dropped in\n");
    systemctl(&bus, &["stop", "quiet.service"]).expect(0);
    init.wait_state("quiet.service", UnitState::Disabled);
    assert_eq!(show("Description", "quiet.service"), "Later\n");

    // An alias linked since, asked for by its name: its unit read again,
    // with the alias's links (systemd's test 15, its alias drop-ins).
    std::fs::create_dir_all(dir.join("units/quiet1.service.wants")).expect("wants dir");
    std::os::unix::fs::symlink("quiet.service", dir.join("units/quiet1.service")).expect("alias");
    std::os::unix::fs::symlink(
        "../bad.service",
        dir.join("units/quiet1.service.wants/bad.service"),
    )
    .expect("wants link");
    assert_eq!(
        show("Wants", "quiet1.service"),
        "bad.service extra.service\n"
    );
    // A drop-in directory that is a link to a directory (its issue 21920).
    std::fs::remove_dir_all(dir.join("units/quiet.service.d")).expect("rm drop-ins");
    dir.file(
        "elsewhere/dropins/override.conf",
        "[Unit]\nDescription=Linked drop-in\n",
    );
    std::os::unix::fs::symlink(
        dir.join("elsewhere/dropins"),
        dir.join("units/quiet.service.d"),
    )
    .expect("drop-in dir link");
    assert_eq!(show("Description", "quiet.service"), "Linked drop-in\n");
}

/// Sets the modification time of `path` and of everything below it
/// (links left alone).
fn set_mtime_below(path: &Path, t: std::time::SystemTime) {
    let meta = std::fs::symlink_metadata(path).expect("stat");
    if meta.file_type().is_symlink() {
        return;
    }
    if meta.is_dir() {
        for e in std::fs::read_dir(path).expect("read_dir") {
            set_mtime_below(&e.expect("entry").path(), t);
        }
    }
    std::fs::File::open(path)
        .and_then(|f| f.set_modified(t))
        .expect("set mtime");
}

/// A read of the search path is skipped when nothing the last read saw
/// changed since (docs/systemd-units.md, "Unit files read again when
/// asked for"): a unit file rewritten with its modification time put
/// back is not read again; once its time moves, it is.
#[test]
fn an_unchanged_search_path_is_not_read_again() {
    let dir = TestDir::new();
    let _init = started(&dir);
    let bus = busd(&dir);
    let still =
        |d: &str| format!("[Unit]\nDescription={d}\n[Service]\nExecStart=/bin/sleep 1000\n");
    dir.file("units/still.service", &still("Before"));
    // Times well before the read: a stamp holding them is trusted.
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    set_mtime_below(&dir.join("units"), old);
    systemctl(&bus, &["daemon-reload"]).expect(0);
    let show = || systemctl(&bus, &["show", "-P", "Description", "still.service"]).stdout;
    assert_eq!(show(), "Before\n");

    // Rewritten in place, its time put back: nothing the read saw
    // changed, so the file is not read.
    std::fs::write(dir.join("units/still.service"), still("Unseen")).expect("write");
    set_mtime_below(&dir.join("units/still.service"), old);
    assert_eq!(show(), "Before\n");
    // Its time moved: read again.
    set_mtime_below(
        &dir.join("units/still.service"),
        old + Duration::from_secs(1),
    );
    assert_eq!(show(), "Unseen\n");
}

/// systemd's daemon-reload restarts nothing (its test 15 changes every
/// service with a `service.d/` drop-in, its own among them, and goes on):
/// a running unit whose files changed keeps its process and shows the new
/// definition, its stop runs the new `ExecStop=` and its next start the
/// new `ExecStart=` (docs/dbus.md, "daemon-reload"); `initctl reload`
/// still restarts it (docs/initctl.md, "reload").
#[test]
fn a_daemon_reload_restarts_nothing() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    let web = init.pid_of("web");
    let file = |description: &str, seconds: u32| {
        dir.file(
            "units/held.service",
            &format!(
                "[Unit]\nDescription={description}\n[Service]\nExecStart=/bin/sleep {seconds}\n"
            ),
        );
    };
    file("First", 1000);
    systemctl(&bus, &["daemon-reload"]).expect(0);
    systemctl(&bus, &["start", "held.service"]).expect(0);
    let pid = init.wait_state("held.service", UnitState::Running).pid;
    let stopped = dir.join("stopped");
    dir.file(
        "units/service.d/override.conf",
        &format!("[Service]\nExecStop=/bin/touch {}\n", stopped.display()),
    );
    file("Second", 2000);
    systemctl(&bus, &["daemon-reload"]).expect(0);
    let held = init.unit("held.service");
    assert_eq!((held.state, held.pid), (UnitState::Running, pid));
    assert_eq!(init.pid_of("web"), web);
    let show = |p: &str| systemctl(&bus, &["show", "-P", p, "held.service"]).stdout;
    assert_eq!(show("Description"), "Second\n");
    assert!(
        show("ExecStop").contains("/bin/touch"),
        "{}",
        show("ExecStop")
    );

    systemctl(&bus, &["restart", "held.service"]).expect(0);
    let new = init
        .wait_unit("held.service", "restarted", |u| {
            u.state == UnitState::Running && u.pid.is_some() && u.pid != pid
        })
        .pid
        .expect("a PID");
    assert!(stopped.exists(), "the new ExecStop= ran at the stop");
    let cmdline = std::fs::read(format!("/proc/{new}/cmdline")).expect("its cmdline");
    assert_eq!(cmdline, b"/bin/sleep\x002000\x00");

    // `initctl reload` restarts a changed running unit, as it always did.
    file("Third", 3000);
    dir.ctl(&["reload"]).expect(0);
    init.wait_unit("held.service", "restarted by initctl reload", |u| {
        u.state == UnitState::Running && u.pid.is_some() && u.pid != Some(new)
    });
}

/// Dependencies as systemd names them (its test 15): a `.wants/` link to
/// an alias is the unit it names (`Wants=b.service`, not `b1.service`),
/// which lists the alias among its `Names`; a link to a unit no file
/// defines is shown, as systemd shows a dependency on a unit not found,
/// and is no edge: a start of the wanter starts what it wants and nothing
/// else, and the wanter runs.
#[test]
fn a_link_names_the_aliased_unit_and_a_missing_one_is_shown() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    dir.file("units/b.service", "[Service]\nExecStart=/bin/sleep 1000\n");
    std::os::unix::fs::symlink("b.service", dir.join("units/b1.service")).expect("alias");
    dir.file("units/a.service", "[Service]\nExecStart=/bin/sleep 1000\n");
    std::fs::create_dir_all(dir.join("units/a.service.wants")).expect("wants dir");
    for to in ["../b1.service", "../nonexistent.service"] {
        let name = to.trim_start_matches("../");
        std::os::unix::fs::symlink(to, dir.join("units/a.service.wants").join(name))
            .expect("wants link");
    }
    systemctl(&bus, &["daemon-reload"]).expect(0);
    let show = |p: &str, u: &str| systemctl(&bus, &["show", "-P", p, u]).stdout;
    assert_eq!(
        show("Wants", "a.service"),
        "b.service nonexistent.service\n"
    );
    assert_eq!(show("Names", "b.service"), "b.service b1.service\n");
    systemctl(&bus, &["start", "a.service"]).expect(0);
    init.wait_state("b.service", UnitState::Running);
    init.wait_state("a.service", UnitState::Running);

    // Linked from both `.wants/` and `.requires/`: listed under both.
    dir.file("units/c.service", "[Service]\nExecStart=/bin/sleep 1000\n");
    for kind in ["wants", "requires"] {
        let d = dir.join(&format!("units/c.service.{kind}"));
        std::fs::create_dir_all(&d).expect("links dir");
        std::os::unix::fs::symlink("../b.service", d.join("b.service")).expect("link");
    }
    // A link to a file named as another type outside the path: no alias,
    // that file defines the unit (systemd's linked unit file).
    dir.file(
        "elsewhere/linked@.scope",
        "[Unit]\nDescription=Linked\n[Service]\nExecStart=/bin/sleep 1000\n",
    );
    std::os::unix::fs::symlink(
        dir.join("elsewhere/linked@.scope"),
        dir.join("units/linked.service"),
    )
    .expect("linked unit file");
    systemctl(&bus, &["daemon-reload"]).expect(0);
    assert_eq!(show("Wants", "c.service"), "b.service\n");
    assert_eq!(show("Requires", "c.service"), "b.service\n");
    assert_eq!(show("Description", "linked.service"), "Linked\n");
    assert_eq!(show("Names", "linked.service"), "linked.service\n");
}

/// An instance of a template written since the last reload is made when
/// asked for, as systemd reads an instance's files then (its test 15); a
/// link to an instance (`b@inst.service` to `a@inst.service`) is an alias
/// of it, among its `Names` by either name, and of that instance only.
#[test]
fn an_instance_of_a_template_written_since_the_last_reload_and_its_alias() {
    let dir = TestDir::new();
    let _init = started(&dir);
    let bus = busd(&dir);
    dir.file("units/a@.service", "[Service]\nExecStart=/bin/sleep 1000\n");
    std::os::unix::fs::symlink("a@inst.service", dir.join("units/b@inst.service")).expect("alias");
    let show = |p: &str, u: &str| systemctl(&bus, &["show", "-P", p, u]).stdout;
    assert_eq!(show("LoadState", "a@inst.service"), "loaded\n");
    assert_eq!(
        show("Names", "a@inst.service"),
        "a@inst.service b@inst.service\n"
    );
    assert_eq!(show("Names", "a@other.service"), "a@other.service\n");
    assert_eq!(
        show("Names", "b@inst.service"),
        "a@inst.service b@inst.service\n"
    );
    systemctl(&bus, &["daemon-reload"]).expect(0);
    assert_eq!(show("Id", "b@inst.service"), "a@inst.service\n");
    assert_eq!(show("LoadState", "b@other.service"), "not-found\n");
}

/// `systemctl get-default` and `set-default` under an init that boots
/// `default.target` (Debian's config), as under systemd: `get-default`
/// names the target the link points to, `set-default` links another for
/// the next boot, and the reload `systemctl` asks for then starts and
/// stops nothing: the running target stays the unit it booted.
#[test]
fn systemctl_set_default_links_the_next_boots_target() {
    let dir = TestDir::new();
    dir.file(
        "units/sub.target",
        "[Unit]\nDescription=Sub\nWants=a.service\n",
    );
    dir.file("units/other.target", "[Unit]\nDescription=Other\n");
    dir.file("units/a.service", "[Service]\nExecStart=/bin/sleep 1000\n");
    std::os::unix::fs::symlink("sub.target", dir.join("units/default.target"))
        .expect("default.target link");
    let init = dir.start("default.target");
    init.wait_state("a.service", UnitState::Running);
    let pid = init.unit("a.service").pid;
    let bus = busd(&dir);
    let out = systemctl(&bus, &["get-default"]);
    out.expect(0);
    assert_eq!(out.stdout, "sub.target\n");
    let out = systemctl(&bus, &["set-default", "other.target"]);
    out.expect(0);
    let link = dir.join("units/default.target");
    let other = dir.join("units/other.target");
    assert_eq!(
        out.stderr,
        format!(
            "Removed \"{}\".\nCreated symlink {} -> {}.\n",
            link.display(),
            link.display(),
            other.display()
        )
    );
    assert_eq!(std::fs::read_link(&link).ok(), Some(other));
    let out = systemctl(&bus, &["get-default"]);
    assert_eq!(out.stdout, "other.target\n", "{out:?}");
    // The reload set-default asked for switched nothing.
    let a = init.unit("a.service");
    assert_eq!((a.state, a.pid), (UnitState::Running, pid));
    assert_eq!(init.unit("sub.target").state, UnitState::Running);
    assert_eq!(init.unit("other.target").state, UnitState::Disabled);
    let out = systemctl(&bus, &["set-default", "nope.target"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("Unit file nope.target does not exist."),
        "{out:?}"
    );
}

/// `systemctl set-default` under an init whose config names its target
/// (not `default.target`): refused, saying why.
#[test]
fn systemctl_set_default_is_refused_where_the_config_names_the_target() {
    let dir = TestDir::new();
    let _init = started(&dir);
    let bus = busd(&dir);
    let out = systemctl(&bus, &["set-default", "extra.service"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("SetDefaultTarget is not supported by flotilla: the init boots the target its config names"),
        "{out:?}"
    );
}

/// `systemctl preset`, `preset-all` and `reenable` as under systemd
/// (systemd.preset(5)): the `*.preset` files beside the unit path's
/// `lib/systemd/system` say enable or disable; the links are made and
/// removed as `enable` and `disable` make and remove them; a template is
/// enabled as the instances its line lists; `--preset-mode` keeps one
/// side; a bad line is logged by flotilla-busd, naming file and line, and
/// the rest applies. Then `--runtime` enablement and masks (links in the
/// runtime directory, on their own side) and `revert`.
#[test]
fn systemctl_presets_as_systemd_does() {
    let dir = TestDir::new();
    units(&dir);
    let vendor = dir.join("lib/systemd/system");
    std::fs::create_dir_all(&vendor).expect("vendor dir");
    let wanted = "[Service]\nExecStart=/bin/sleep 1000\n[Install]\nWantedBy=multi-user.target\n";
    dir.file("lib/systemd/system/pre.service", wanted);
    dir.file("lib/systemd/system/tpl@.service", wanted);
    dir.file(
        "lib/systemd/system-preset/90-test.preset",
        "# the test's policy\ndisable pre.service\nfrobnicate x\nenable tpl@.service a b\n",
    );
    let runtime = dir.join("run/systemd/system");
    std::fs::create_dir_all(&runtime).expect("runtime dir");
    let init = dir
        .init()
        .target("default")
        .more_units(runtime)
        .more_units(vendor)
        .start();
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    let wants = dir.join("units/multi-user.target.wants");
    let link = wants.join("pre.service");
    let linked = |p: &Path| std::fs::symlink_metadata(p).is_ok();

    systemctl(&bus, &["enable", "pre.service"]).expect(0);
    assert!(linked(&link));
    // The presets say disable.
    let out = systemctl(&bus, &["preset", "pre.service"]);
    out.expect(0);
    assert_eq!(out.stderr, format!("Removed \"{}\".\n", link.display()));
    let out = systemctl(&bus, &["is-enabled", "pre.service"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (1, "disabled\n"),
        "{out:?}"
    );
    let busd_log = std::fs::read_to_string(dir.join("busd.out")).unwrap_or_default();
    assert!(
        busd_log.contains(&format!(
            "{}:3: unknown command 'frobnicate' (enable, disable or ignore); line ignored",
            dir.join("lib/systemd/system-preset/90-test.preset")
                .display()
        )),
        "{busd_log}"
    );
    systemctl(&bus, &["reenable", "pre.service"]).expect(0);
    systemctl(&bus, &["is-enabled", "pre.service"]).expect(0);
    // enable-only leaves what the presets disable enabled; disable-only
    // disables it.
    systemctl(
        &bus,
        &["preset", "--preset-mode=enable-only", "pre.service"],
    )
    .expect(0);
    assert!(linked(&link));
    systemctl(
        &bus,
        &["preset", "--preset-mode=disable-only", "pre.service"],
    )
    .expect(0);
    assert!(!linked(&link));

    // A template: the instances its line lists.
    let out = systemctl(&bus, &["preset", "tpl@.service"]);
    out.expect(0);
    for i in ["a", "b"] {
        let l = wants.join(format!("tpl@{i}.service"));
        assert_eq!(
            std::fs::read_link(&l).ok(),
            Some(dir.join("lib/systemd/system/tpl@.service")),
            "{out:?}"
        );
    }
    systemctl(&bus, &["is-enabled", "tpl@a.service"]).expect(0);

    let out = systemctl(&bus, &["preset", "nothere.service"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("Unit file nothere.service does not exist."),
        "{out:?}"
    );

    // preset-all: inst.service, which no line names, is enabled; pre
    // stays disabled.
    let out = systemctl(&bus, &["preset-all"]);
    out.expect(0);
    assert!(linked(&wants.join("inst.service")), "{out:?}");
    assert!(!linked(&link), "{out:?}");
    systemctl(&bus, &["is-enabled", "inst.service"]).expect(0);

    // --runtime: the link in the runtime directory; `disable` without it
    // leaves that link, `disable --runtime` removes it.
    let rt = dir.join("run/systemd/system/multi-user.target.wants/pre.service");
    systemctl(&bus, &["enable", "--runtime", "pre.service"]).expect(0);
    assert!(linked(&rt));
    let is_enabled = || {
        let out = systemctl(&bus, &["is-enabled", "pre.service"]);
        (out.code, out.stdout)
    };
    assert_eq!(is_enabled(), (0, "enabled-runtime\n".to_string()));
    systemctl(&bus, &["disable", "pre.service"]).expect(0);
    assert_eq!(is_enabled(), (0, "enabled-runtime\n".to_string()));
    systemctl(&bus, &["disable", "--runtime", "pre.service"]).expect(0);
    assert!(!linked(&rt));
    assert_eq!(is_enabled(), (1, "disabled\n".to_string()));
    // mask --runtime: `unmask` without it leaves the mask; revert removes
    // masks and drop-ins.
    systemctl(&bus, &["mask", "--runtime", "pre.service"]).expect(0);
    assert_eq!(is_enabled(), (1, "masked-runtime\n".to_string()));
    systemctl(&bus, &["unmask", "pre.service"]).expect(0);
    assert_eq!(is_enabled(), (1, "masked-runtime\n".to_string()));
    dir.file(
        "units/pre.service.d/local.conf",
        "[Unit]\nDescription=local\n",
    );
    let out = systemctl(&bus, &["revert", "pre.service"]);
    out.expect(0);
    assert_eq!(is_enabled(), (1, "disabled\n".to_string()), "{out:?}");
    assert!(!dir.join("units/pre.service.d").exists(), "{out:?}");
}

/// `systemctl isolate` of a target that allows it: the switch, answered
/// with a job that ends (systemctl returns); what the new target does not
/// require stops.
#[test]
fn systemctl_isolate_switches_the_target_and_returns() {
    let dir = TestDir::new();
    dir.file(
        "units/rescue-test.target",
        "[Unit]\nDescription=Isolated\nAllowIsolate=yes\n",
    );
    let init = started(&dir);
    let bus = busd(&dir);
    let out = systemctl(&bus, &["isolate", "rescue-test.target"]);
    out.expect(0);
    init.wait_state("web", UnitState::Disabled);
    assert_eq!(init.status().target, "rescue-test.target");
}

/// `Type=dbus`: the unit is `starting` until its process takes its
/// `BusName=` on the system bus (busd tells the init the bus's names), and
/// then `running`; a unit whose name is already owned when it starts is
/// running at once.
#[test]
fn a_dbus_service_is_ready_when_it_takes_its_name() {
    let dir = TestDir::new();
    let socket = dir.join("bus");
    let fifo = dir.join("go");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    // Takes its name once the test writes to the FIFO.
    dir.file(
        "units/late.service",
        &format!(
            "[Service]\nType=dbus\nBusName=org.flotilla.Late\n\
             Environment=DBUS_SYSTEM_BUS_ADDRESS=unix:path={}\n\
             ExecStart=/bin/sh -c 'read x < {}; exec /usr/bin/dbus-test-tool echo --system \
             --name=org.flotilla.Late'\n",
            socket.display(),
            fifo.display()
        ),
    );
    let init = started(&dir);
    let bus = dbus_daemon(&dir);
    let _busd = busd_on(&dir, Some(&bus.socket));
    on_the_bus(&bus.socket);
    init.ctl(&["start", "--no-block", "late.service"]).expect(0);
    // Its process is known once it has exec'd (docs/performance.md, "How
    // a unit's process starts"), which may come after the state.
    init.wait_unit("late.service", "starting with its process", |u| {
        u.state == UnitState::Starting && u.pid.is_some()
    });
    std::fs::write(&fifo, "go\n").expect("write the FIFO");
    let st = init.wait_state("late.service", UnitState::Running);
    assert_eq!(st.status, "ready (its D-Bus name is taken)");
    // Another unit for the same name, owned already: up at once.
    dir.file(
        "units/again.service",
        "[Service]\nType=dbus\nBusName=org.flotilla.Late\nExecStart=/bin/sleep 1000\n",
    );
    init.ctl(&["reload"]).expect(0);
    init.ctl(&["start", "again.service"]).expect(0);
    init.wait_state("again.service", UnitState::Running);
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
    let show = |p: &str| systemctl(&bus, &["show", "-P", p, "x.service"]).stdout;
    assert_eq!(show("RuntimeMaxUSec"), "2s\n");
    assert_eq!(show("RuntimeRandomizedExtraUSec"), "0\n");
    let sleep = init.pid_of("x.service");
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
    // processes get the kill signal once it has run 2 s, and it ends (a
    // scope that ended or failed leaves the unit set: docs/dbus.md).
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
    init.wait_state("probe.scope", UnitState::Running);
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

/// Debian's `systemd-run PROGRAM ARGS` started in the background (as
/// [`debian_tool`] runs it; `--scope` makes it the command itself, which
/// the test kills by PID at its end).
fn debian_tool_spawn(bus: &Busd, program: &str, args: &[&str]) -> Child {
    let script = format!(
        "set -e; mount -t tmpfs tmpfs /run; mkdir -p /run/systemd/system; \
         touch /run/systemd/private; mount --bind \"$0\" /run/systemd/private; \
         exec {program} \"$@\""
    );
    Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .arg(&bus.socket)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start systemd-run")
}

/// Kills a child by its PID and reaps it, whatever became of it.
/// Waits until scope `name` has left the unit set (`what`: which one).
fn wait_scope_gone(init: &Init, name: &str, what: &str) {
    wait_for(
        WAIT,
        &format!("the {what} scope to leave the unit set"),
        || {
            init.status()
                .units
                .iter()
                .all(|u| u.unit != name)
                .then_some(())
        },
    );
}

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

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
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
    let signal_of = |unit: &str, from: usize| {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let head = format!(
            "path=/org/freedesktop/systemd1/unit/{unit}; \
             interface=org.freedesktop.DBus.Properties; member=PropertiesChanged"
        );
        text.get(from..)
            .and_then(|t| t.find(&head).map(|at| t[at..].to_string()))
    };
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
    // dbus-monitor prints the value on the line after the name.
    let active_state = wait_for(WAIT, "extra's PropertiesChanged after the re-exec", || {
        let t = signal_of("extra_2eservice", from)?;
        let mut lines = t.lines().skip_while(|l| !l.contains("\"ActiveState\""));
        lines.next()?;
        let value = lines.next()?.trim().to_string();
        Some(value)
    });
    assert_eq!(active_state, "variant             string \"failed\"");
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

/// A reload asked while the unit is still starting waits for the start
/// and then reloads, as systemd queues the reload job after the start
/// job: what a package's trigger does right after its postinst started
/// the service (nginx's "Triggering nginx reload").
#[test]
fn a_reload_during_the_start_waits_for_it() {
    let dir = TestDir::new();
    units(&dir);
    let marker = dir.join("reloaded");
    dir.file(
        "units/slow.service",
        &format!(
            "[Service]\nExecStartPre=/bin/sleep 1\nExecStart=/bin/sleep 1000\n\
             ExecReload=/bin/touch {}\n",
            marker.display()
        ),
    );
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    systemctl(&bus, &["start", "--no-block", "slow.service"]).expect(0);
    assert_eq!(init.unit("slow.service").state, UnitState::Starting);
    systemctl(&bus, &["reload", "slow.service"]).expect(0);
    assert_eq!(init.unit("slow.service").state, UnitState::Running);
    wait_for(WAIT, "the reload command's file", || {
        marker.exists().then_some(())
    });
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

/// `systemctl list-jobs` shows the jobs of what a start pulls in, as
/// systemd's: `after.service` requires and is ordered after `slow.service`,
/// a oneshot that runs until the test lets it end; a start of `after`
/// lists `slow`'s start job `running` and `after`'s `waiting`, each with
/// its number (`GetJob`, the unit's `Job` property), and none once both
/// are up.
#[test]
fn list_jobs_shows_a_start_waiting_for_its_dependency() {
    let dir = TestDir::new();
    units(&dir);
    let go = dir.join("go");
    dir.file(
        "units/slow.service",
        &format!(
            "[Service]\nType=oneshot\nExecStart=/bin/sh -c 'while [ ! -e {} ]; do sleep 0.1; done'\n",
            go.display()
        ),
    );
    dir.file(
        "units/after.service",
        "[Unit]\nRequires=slow.service\nAfter=slow.service\n\
         [Service]\nExecStart=/bin/sleep 1000\n",
    );
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    systemctl(&bus, &["start", "--no-block", "after.service"]).expect(0);

    let rows = wait_for(WAIT, "both jobs in list-jobs", || {
        let out = systemctl(&bus, &["list-jobs", "--no-legend"])
            .expect(0)
            .stdout
            .clone();
        (out.contains("slow.service") && out.contains("after.service")).then_some(out)
    });
    let row = |unit: &str| -> Vec<String> {
        rows.lines()
            .find(|l| l.contains(unit))
            .unwrap_or_else(|| panic!("no {unit} in {rows}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    let (slow, after) = (row("slow.service"), row("after.service"));
    assert_eq!(&slow[1..], ["slow.service", "start", "running"], "{rows}");
    assert_eq!(&after[1..], ["after.service", "start", "waiting"], "{rows}");
    assert_eq!(init.unit("after.service").state, UnitState::Waiting);
    // The job by number, and as the unit's property.
    let id = &after[0];
    let shown = systemctl(&bus, &["show", "-P", "Job", "after.service"]);
    assert_eq!(shown.expect(0).stdout.trim(), id.as_str(), "{rows}");
    let path = format!("/org/freedesktop/systemd1/job/{id}");
    let state = busctl(
        &bus.socket,
        None,
        &[
            "get-property",
            "org.freedesktop.systemd1",
            &path,
            "org.freedesktop.systemd1.Job",
            "State",
        ],
    );
    assert_eq!(state.expect(0).stdout.trim(), "s \"waiting\"");

    std::fs::write(&go, "").expect("go");
    init.wait_state("after.service", UnitState::Running);
    wait_for(WAIT, "no jobs in list-jobs", || {
        let out = systemctl(&bus, &["list-jobs"]).expect(0).stdout.clone();
        out.contains("No jobs running.").then_some(())
    });
}

/// systemd's testsuite-03 first reads `list-jobs` after `systemctl start
/// --no-block hello-after-sleep.target` (its units, as Debian's
/// systemd-tests ships them, with a sleep the test ends): the target wants
/// `sleep.service` and `hello.service` and sits between them (`After=`
/// one, `Before=` the other), so the oneshot's start job is `running` and
/// the target's and `hello`'s are `waiting`.
#[test]
fn list_jobs_shows_what_a_target_pulls_in() {
    let dir = TestDir::new();
    units(&dir);
    let go = dir.join("go");
    dir.file(
        "units/hello-after-sleep.target",
        "[Unit]\nWants=sleep.service hello.service\nAfter=sleep.service\n\
         Before=hello.service\n",
    );
    dir.file(
        "units/hello.service",
        "[Service]\nExecStart=/bin/echo \"Hello World\"\n",
    );
    dir.file(
        "units/sleep.service",
        &format!(
            "[Service]\nType=oneshot\nExecStart=/bin/sh -c 'while [ ! -e {} ]; do sleep 0.1; done'\n",
            go.display()
        ),
    );
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    systemctl(&bus, &["start", "--no-block", "hello-after-sleep.target"]).expect(0);
    let rows = wait_for(WAIT, "hello.service's job in list-jobs", || {
        let out = systemctl(&bus, &["list-jobs"]).expect(0).stdout.clone();
        out.contains("hello.service").then_some(out)
    });
    let state = |unit: &str| -> Option<String> {
        let l = rows.lines().find(|l| l.contains(unit))?;
        let words: Vec<&str> = l.split_whitespace().collect();
        Some(format!("{} {}", words.get(2)?, words.get(3)?))
    };
    assert_eq!(
        state("sleep.service").as_deref(),
        Some("start running"),
        "{rows}"
    );
    assert_eq!(
        state("hello.service").as_deref(),
        Some("start waiting"),
        "{rows}"
    );
    assert_eq!(
        state("hello-after-sleep.target").as_deref(),
        Some("start waiting"),
        "{rows}"
    );
    assert!(rows.contains("3 jobs listed."), "{rows}");

    std::fs::write(&go, "").expect("go");
    wait_for(WAIT, "no jobs in list-jobs", || {
        let out = systemctl(&bus, &["list-jobs"]).expect(0).stdout.clone();
        out.contains("No jobs running.").then_some(())
    });
}

/// testsuite-63's last part: a path unit starts a service that requires
/// and is ordered after a oneshot that does not end; both have their jobs
/// in `list-jobs`; `systemctl stop` of the waiting service returns (as
/// systemd's stop of a unit that is not active yet is done at once), and
/// the path unit queues its start again while its path exists.
#[test]
fn a_stop_of_a_unit_waiting_for_its_dependency_returns() {
    let dir = TestDir::new();
    units(&dir);
    let hoge = dir.join("hoge");
    dir.file(
        "units/trig.path",
        &format!("[Path]\nPathExists={}\n", hoge.display()),
    );
    dir.file(
        "units/trig-dep.service",
        "[Service]\nType=oneshot\nExecStart=/bin/sleep 1000\n",
    );
    dir.file(
        "units/trig.service",
        "[Unit]\nRequires=trig-dep.service\nAfter=trig-dep.service\n\
         [Service]\nType=oneshot\nExecStart=/bin/sleep 1000\n",
    );
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    systemctl(&bus, &["start", "trig.path"]).expect(0);
    std::fs::write(&hoge, "").expect("hoge");
    let rows = wait_for(WAIT, "both jobs in list-jobs", || {
        let out = systemctl(&bus, &["list-jobs"]).expect(0).stdout.clone();
        (out.contains("trig.service") && out.contains("trig-dep.service")).then_some(out)
    });
    assert!(rows.contains("trig.service     start waiting"), "{rows}");
    // The path unit starts it again at once: its job is listed again.
    systemctl(&bus, &["stop", "trig.service"]).expect(0);
    let rows = systemctl(&bus, &["list-jobs"]).expect(0).stdout.clone();
    assert!(rows.contains("trig.service     start waiting"), "{rows}");
    // Without the path, the stop ends the service's start. (systemd's
    // start job of the dependency goes on; flotilla stops the dependency
    // that nothing requires any more: docs/debian.md, testsuite-63.)
    std::fs::remove_file(&hoge).expect("rm hoge");
    systemctl(&bus, &["stop", "trig.service"]).expect(0);
    wait_for(WAIT, "trig.service's job gone", || {
        let out = systemctl(&bus, &["list-jobs"]).expect(0).stdout.clone();
        (!out.contains("trig.service ")).then_some(())
    });
    let s = init.unit("trig.service");
    assert_eq!(s.state, UnitState::Disabled, "{s:?}");
}

/// The manager's settings (systemd's test 05): with the config's
/// `system-conf` (a root in the test's directory, so the host's own
/// `/etc/systemd/system.conf` is not read), a drop-in written to
/// `run/systemd/system.conf.d` and `systemctl daemon-reload` give
/// `DefaultLimitNOFILE`/`DefaultLimitNOFILESoft`, every unit without a
/// `LimitNOFILE=` of its own shows them and its processes get them; a unit's
/// own key wins; a `[Manager]` key flotilla does not apply is a warning
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

    dir.file(
        "root/run/systemd/system.conf.d/rlimits.conf",
        "[Manager]\nDefaultLimitNOFILE=10000:16384\n",
    );
    systemctl(&bus, &["daemon-reload"]).expect(0);
    assert_eq!(show(&["DefaultLimitNOFILESoft"]), "10000");
    assert_eq!(show(&["DefaultLimitNOFILE"]), "16384");
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
