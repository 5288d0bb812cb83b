//! System tests of `flotilla-busd`, systemd's D-Bus interface beside the
//! init (`docs/dbus.md`), with Debian's own programs: the init in
//! supervisor mode with a few units, `flotilla-busd` on a socket in the
//! test's directory, `busctl --address=unix:path=SOCK`, and the real
//! `/bin/systemctl`, which talks to `/run/systemd/private` once
//! `/run/systemd/system/` exists: it runs in a mount namespace of its own
//! with a tmpfs over `/run` and the test's socket bound there, so the
//! host's `/run` is untouched (harness: `tests/src/`).
//!
//! This file holds what the areas share (`flotilla-busd`, a `dbus-daemon`,
//! the tools run against them); each module is one area.

mod attach;
mod binds;
mod bus_names;
mod clean;
mod freezer;
mod hostnamed;
mod jobs;
mod localed;
mod manager;
mod manager_env;
mod markers;
mod mounts;
mod need_reload;
mod not_found;
mod placement;
mod scopes;
mod settings;
mod signals;
mod slices;
mod timedated;
mod timers;
mod transient;
mod transient_dirs;
mod transient_log;
mod transient_mounts;
mod transient_paths;
mod transient_sockets;
mod transient_timers;
mod unit_files;

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
    let child = spawn_marked(cmd, dir, "busd.out");
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

/// The lines of `systemctl list-units --plain` output, each with its
/// columns' runs of blanks made one space.
fn rows(out: &Out) -> Vec<String> {
    out.stdout
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// The shell script [`debian_tool`] runs in its mount namespace: `$0` the
/// socket, `"$@"` the program's arguments.
fn tool_script(program: &str) -> String {
    format!(
        "set -e; held=$(mktemp); mount --bind \"$0\" \"$held\"; \
         mount -t tmpfs tmpfs /run; mkdir -p /run/systemd/system; \
         touch /run/systemd/private; mount --bind \"$held\" /run/systemd/private; \
         umount \"$held\"; rm -f \"$held\"; exec {program} \"$@\""
    )
}

/// A command line for a unit's `Exec…=` that runs Debian's `systemctl
/// ARGS` against the bus side, as [`systemctl`] does (the script is
/// written to `DIR/systemctl.sh`).
fn systemctl_command(dir: &TestDir, bus: &Busd, args: &str) -> String {
    let script = dir.join("systemctl.sh");
    std::fs::write(&script, tool_script("/bin/systemctl --no-pager")).expect("script");
    format!(
        "/usr/bin/unshare --mount --propagation private /bin/sh -c \". {}\" {} {args}",
        script.display(),
        bus.socket.display()
    )
}

/// Debian's `PROGRAM ARGS` (`systemctl`, `systemd-run`) against the bus
/// side, as [`systemctl`] runs it. The socket is held by a bind outside
/// `/run` while the tmpfs goes over `/run`, so that a test's directory
/// may be under `/run` too.
fn debian_tool(bus: &Busd, program: &str, args: &[&str]) -> Out {
    let socket = &bus.socket;
    let script = tool_script(program);
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

/// `busctl call` of the manager's `METHOD SIGNATURE ARGS…` (`args`) on
/// the bus side's socket.
fn manager_call(bus: &Busd, args: &[&str]) -> Out {
    let mut all = vec![
        "call",
        "org.freedesktop.systemd1",
        "/org/freedesktop/systemd1",
        "org.freedesktop.systemd1.Manager",
    ];
    all.extend_from_slice(args);
    busctl(&bus.socket, None, &all)
}

/// What Debian's `systemd-run` says when it made trigger `NAME.KIND`
/// (`kind`: `timer`, `path`, `socket`) with its service `NAME.service`:
/// checked in its output `out`, which must be a success.
fn made_trigger(out: &Out, kind: &str, name: &str) {
    out.expect(0);
    assert!(
        out.stderr
            .contains(&format!("Running {kind} as unit: {name}.{kind}"))
            && out
                .stderr
                .contains(&format!("Will run service as unit: {name}.service")),
        "{out:?}"
    );
}

/// `systemctl stop` of transient trigger `trigger`, which then leaves
/// the unit set with `with` (the service it starts, not running then).
fn stop_trigger(init: &Init, bus: &Busd, trigger: &str, with: &[&str]) {
    systemctl(bus, &["stop", trigger]).expect(0);
    wait_for(WAIT, &format!("{trigger} and {with:?} gone"), || {
        let units = init.status().units;
        units
            .iter()
            .all(|u| u.unit != trigger && !with.contains(&u.unit.as_str()))
            .then_some(())
    });
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

/// [`started`] with the path's directory of transient units, where the
/// init writes each transient unit's file: the init, and the directory.
fn started_with_transient_dir(dir: &TestDir) -> (Init, PathBuf) {
    units(dir);
    let transient = dir.join("run/systemd/transient");
    let init = dir
        .init()
        .more_units(transient.clone())
        .target("default")
        .start();
    init.wait_state("web", UnitState::Running);
    (init, transient)
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
    name_on_the_bus(socket, "org.freedesktop.systemd1");
}

/// Waits until a connection has taken `name` on the bus at `socket`.
fn name_on_the_bus(socket: &Path, name: &str) {
    wait_for(WAIT, &format!("{name} on the bus"), || {
        let out = busctl(socket, None, &["list", "--no-legend"]);
        out.stdout
            .lines()
            .any(|l| l.starts_with(&format!("{name} ")))
            .then_some(())
    });
}

/// `cmd` started with the test's mark, no input, and its output in
/// `DIR/out`.
fn spawn_marked(mut cmd: Command, dir: &TestDir, out: &str) -> Child {
    let file = std::fs::File::create(dir.join(out)).expect("output file");
    cmd.env(procs::MARK_VAR, &dir.mark)
        .stdin(Stdio::null())
        .stdout(file.try_clone().expect("dup"))
        .stderr(file)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"))
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

/// One of Debian's `systemd-*ed` daemons, `program` (with its command
/// line), on the bus at `bus`, in a mount namespace whose `/etc` is
/// `DIR/etc` (made, with `DIR/etc/default`), its output in
/// `DIR/NAME.out`; returned once it has taken its bus name `name`, its
/// process killed by PID when dropped (`unshare` and `sh` exec it).
fn sd_daemon(dir: &TestDir, bus: &Path, program: &str, name: &str) -> Killed {
    sd_daemon_in(dir, bus, program, name, &[])
}

/// [`sd_daemon`] in more namespaces of its own (`unshare`'s options:
/// `--uts` for a daemon that sets the host name).
fn sd_daemon_in(dir: &TestDir, bus: &Path, program: &str, name: &str, more: &[&str]) -> Killed {
    let etc = dir.join("etc");
    std::fs::create_dir_all(etc.join("default")).expect("etc dir");
    let mut cmd = Command::new("unshare");
    cmd.args(more)
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(format!("set -e; mount --bind \"$0\" /etc; exec {program}"))
        .arg(&etc)
        .env(
            "DBUS_SYSTEM_BUS_ADDRESS",
            format!("unix:path={}", bus.display()),
        );
    let daemon = Killed(spawn_marked(cmd, dir, &format!("{name}.out")));
    name_on_the_bus(bus, name);
    daemon
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

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
