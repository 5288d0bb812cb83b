//! `systemctl clean` (docs/dbus.md, "Cleaning a unit") with Debian's
//! `/bin/systemctl`: refused while the unit runs, then each kind of
//! directory removed as `--what=` names it, systemd's `private/` twins
//! with them, and systemd's errors for a unit with nothing to clean and a
//! word that is no resource. The directories are real ones below
//! `/var/lib`, `/var/cache` and `/var/log`, named after the test's process
//! and removed at its end.

use super::{busctl, busd_on, dbus_daemon, on_the_bus, started, Busd};
use flotilla_tests::init::{run, Out, TestDir};
use flotilla_tests::{wait_for, WAIT};
use flotilla_units::state::UnitState;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Debian's `/bin/systemctl ARGS`, as `super::systemctl` runs it, and
/// with the system bus at `bus`: `clean` watches the unit it cleans on
/// the bus (its `PropertiesChanged`), so systemctl asks for the bus
/// itself, not the manager's private socket.
pub(super) fn systemctl(busd: &Busd, bus: &Path, args: &[&str]) -> Out {
    let script = "set -e; mount -t tmpfs tmpfs /run; mkdir -p /run/systemd/system; \
                  touch /run/systemd/private; mount --bind \"$0\" /run/systemd/private; \
                  exec /bin/systemctl --no-pager \"$@\"";
    let mut cmd = Command::new("unshare");
    cmd.args(["--mount", "--propagation", "private", "sh", "-c", script])
        .arg(&busd.socket)
        .args(args)
        .env(
            "DBUS_SYSTEM_BUS_ADDRESS",
            format!("unix:path={}", bus.display()),
        )
        .env("SYSTEMD_COLORS", "0")
        .env("LC_ALL", "C");
    run(cmd, Duration::from_secs(30))
}

/// The test's directories, removed when dropped (also after a failure).
struct Dirs(Vec<PathBuf>);

impl Drop for Dirs {
    fn drop(&mut self) {
        for d in &self.0 {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

#[test]
fn systemctl_clean_removes_a_stopped_units_directories() {
    let dir = TestDir::new();
    let init = started(&dir);
    let daemon = dbus_daemon(&dir);
    let busd = busd_on(&dir, Some(&daemon.socket));
    on_the_bus(&daemon.socket);
    let systemctl = |args: &[&str]| systemctl(&busd, &daemon.socket, args);
    let name = format!("flotilla-clean-{}", std::process::id());
    let unit = format!("{name}.service");
    let state = PathBuf::from("/var/lib").join(&name);
    let state_private = PathBuf::from("/var/lib/private").join(&name);
    let cache = PathBuf::from("/var/cache").join(&name);
    let logs = PathBuf::from("/var/log").join(&name);
    let _guard = Dirs(vec![
        state.clone(),
        state_private.clone(),
        cache.clone(),
        logs.clone(),
    ]);
    dir.file(
        &format!("units/{unit}"),
        &format!(
            "[Service]\nStateDirectory={name}\nCacheDirectory={name}\nLogsDirectory={name}\n\
             ExecStart=/bin/sleep 1000\n"
        ),
    );
    systemctl(&["daemon-reload"]).expect(0);
    systemctl(&["start", &unit]).expect(0);
    init.wait_state(&unit, UnitState::Running);
    // Made by the unit's own process before its exec, which the state
    // `running` of a simple service does not wait for.
    for d in [&state, &cache, &logs] {
        wait_for(WAIT, &format!("{} made at the start", d.display()), || {
            d.is_dir().then_some(())
        });
    }
    let out = systemctl(&["show", "-P", "CanClean", &unit]);
    assert_eq!(out.stdout, "state cache logs\n", "{out:?}");

    // Running: refused, nothing removed.
    let out = systemctl(&["clean", &unit]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("Unit is not inactive or has pending job."),
        "{out:?}"
    );
    assert!(cache.is_dir());

    systemctl(&["stop", &unit]).expect(0);
    init.wait_state(&unit, UnitState::Disabled);
    std::fs::write(cache.join("kept-until-clean"), b"x").expect("a file in the cache");
    std::fs::create_dir_all(state_private.join("deep")).expect("a private state dir");

    // systemctl's default: the cache and the runtime directories.
    let out = systemctl(&["clean", &unit]);
    out.expect(0);
    assert!(!cache.exists(), "{out:?}");
    assert!(state.is_dir() && logs.is_dir() && state_private.is_dir());
    let out = systemctl(&["show", "-P", "ActiveState", &unit]);
    assert_eq!(out.stdout, "inactive\n", "{out:?}");

    systemctl(&["clean", "--what=state", "--what=logs", &unit]).expect(0);
    for d in [&state, &state_private, &logs] {
        assert!(!d.exists(), "{} removed", d.display());
    }
    // What is gone already is no error.
    systemctl(&["clean", "--what=all", &unit]).expect(0);

    // A unit without directories: systemd's NothingToClean.
    let out = systemctl(&["clean", "extra.service"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("No matching resources found."),
        "{out:?}"
    );
    // A word that is no resource: InvalidArgs, as systemd's.
    let out = busctl(
        &busd.socket,
        None,
        &[
            "call",
            "org.freedesktop.systemd1",
            "/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager",
            "CleanUnit",
            "sas",
            &unit,
            "1",
            "bogus",
        ],
    );
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("Invalid resource type: bogus"),
        "{out:?}"
    );
}

/// systemd's test 33's socket: a `.socket` with `ExecStartPre=` and the
/// directory keys makes its directories by its command at its start, is
/// not cleaned while it listens, loses its runtime directory when it
/// stops, and is cleaned then as a service is (docs/systemd-units.md,
/// "Sockets and paths").
#[test]
fn systemctl_clean_of_a_socket_with_commands_and_directories() {
    let dir = TestDir::new();
    let init = started(&dir);
    let daemon = dbus_daemon(&dir);
    let busd = busd_on(&dir, Some(&daemon.socket));
    on_the_bus(&daemon.socket);
    let systemctl = |args: &[&str]| systemctl(&busd, &daemon.socket, args);
    let name = format!("flotilla-clean-socket-{}", std::process::id());
    let socket = format!("{name}.socket");
    let runtime = PathBuf::from("/run").join(&name);
    let state = PathBuf::from("/var/lib").join(&name);
    let cache = PathBuf::from("/var/cache").join(&name);
    let _guard = Dirs(vec![runtime.clone(), state.clone(), cache.clone()]);
    let listen = dir.join("sock");
    dir.file(
        &format!("units/{socket}"),
        &format!(
            "[Socket]\nListenSequentialPacket={}\nRemoveOnStop=yes\nExecStartPre=true\n\
             RuntimeDirectory={name}\nStateDirectory={name}\nCacheDirectory={name}\n",
            listen.display()
        ),
    );
    dir.file(
        &format!("units/{name}.service"),
        "[Service]\nExecStart=/bin/sleep 1000\n",
    );
    systemctl(&["daemon-reload"]).expect(0);
    for d in [&runtime, &state, &cache] {
        assert!(!d.exists(), "{} before the start", d.display());
    }
    systemctl(&["start", &socket]).expect(0);
    init.wait_state(&socket, UnitState::Running);
    for d in [&runtime, &state, &cache] {
        assert!(d.is_dir(), "{} made by ExecStartPre=", d.display());
    }
    assert!(listen.exists(), "the socket is bound");
    let out = systemctl(&["show", "-P", "CanClean", &socket]);
    assert_eq!(out.stdout, "runtime state cache\n", "{out:?}");

    let out = systemctl(&["clean", &socket]);
    assert_ne!(out.code, 0, "refused while it listens: {out:?}");
    assert!(cache.is_dir());

    systemctl(&["stop", &socket]).expect(0);
    init.wait_state(&socket, UnitState::Disabled);
    assert!(!runtime.exists(), "RuntimeDirectory= goes with the stop");
    assert!(!listen.exists(), "RemoveOnStop=yes");
    assert!(state.is_dir() && cache.is_dir());

    systemctl(&["clean", &socket]).expect(0);
    assert!(!cache.exists() && state.is_dir());
    systemctl(&["clean", "--what=all", &socket]).expect(0);
    assert!(!state.exists());
}
