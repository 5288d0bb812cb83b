//! The cgroup v2 freezer (docs/dbus.md, "The freezer") as systemd's test
//! 38 (`TEST-38-FREEZER`) drives it, with Debian's `/bin/systemctl`,
//! `systemd-run` and `busctl` on the host's cgroup2: a service frozen
//! and thawed (the kernel's `frozen` in its `cgroup.events`), a freeze of
//! a frozen unit and a thaw of a running one answered at once, a restart
//! and a stop of a frozen unit, and a slice made by `systemd-run --slice`
//! frozen with the unit below it, a freeze written from outside leaving
//! the states shown alone; and the test's stop of a frozen unit within
//! its 5 s with a long search path.

use super::{busctl, busd_on, dbus_daemon, debian_tool, on_the_bus, started, Busd};
use flotilla_tests::init::TestDir;
use flotilla_tests::{wait_for, WAIT};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Debian's `/bin/systemctl ARGS` with the system bus too (`freeze`
/// asks for it, as `clean` does).
fn systemctl(bus: &(Busd, PathBuf), args: &[&str]) -> flotilla_tests::init::Out {
    super::clean::systemctl(&bus.0, &bus.1, args)
}

/// `systemctl show -p PROP --value UNIT`.
fn show(bus: &(Busd, PathBuf), unit: &str, prop: &str) -> String {
    let out = systemctl(bus, &["show", "-p", prop, "--value", unit]);
    out.expect(0);
    out.stdout.trim().to_string()
}

/// The cgroup2 directory of process `pid`.
fn cgroup_of(pid: &str) -> PathBuf {
    let mounts = std::fs::read_to_string("/proc/self/mounts").expect("/proc/self/mounts");
    let mnt = mounts
        .lines()
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .find(|f| f.get(2) == Some(&"cgroup2"))
        .and_then(|f| f.get(1).map(|m| m.to_string()))
        .expect("a cgroup2 mount");
    let cg = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).expect("its cgroup");
    let rel = cg
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .expect("a cgroup2 line")
        .to_string();
    PathBuf::from(format!("{mnt}{rel}"))
}

/// The kernel says `frozen` of cgroup `dir`, within the wait.
fn kernel_says(dir: &Path, frozen: bool) {
    let want = format!("frozen {}", u8::from(frozen));
    let events = dir.join("cgroup.events");
    wait_for(WAIT, &format!("{want} in {}", events.display()), || {
        let text = std::fs::read_to_string(&events).ok()?;
        text.lines().any(|l| l == want).then_some(())
    });
}

/// The unit's `FreezerState` is `want` once it is out of `freezing` and
/// `thawing` (as the test's `check_freezer_state`).
fn state_is(bus: &(Busd, PathBuf), unit: &str, want: &str) {
    let deadline = Instant::now() + WAIT;
    loop {
        let s = show(bus, unit, "FreezerState");
        if s != "freezing" && s != "thawing" {
            assert_eq!(s, want, "{unit}'s FreezerState");
            return;
        }
        assert!(Instant::now() < deadline, "{unit} stays {s}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_service_and_a_slice_are_frozen_and_thawed_as_systemds_test_38_asks() {
    let dir = TestDir::new();
    let _init = started(&dir);
    let daemon = dbus_daemon(&dir);
    let bus = (busd_on(&dir, Some(&daemon.socket)), daemon.socket.clone());
    on_the_bus(&daemon.socket);
    let unit = "extra.service";
    systemctl(&bus, &["start", unit]).expect(0);
    assert_eq!(show(&bus, unit, "FreezerState"), "running");
    assert_eq!(show(&bus, unit, "CanFreeze"), "yes");
    let pid = show(&bus, unit, "MainPID");
    let cg = cgroup_of(&pid);
    assert!(cg.ends_with("extra.service"), "{}", cg.display());

    // systemctl freeze/thaw; again at once.
    systemctl(&bus, &["freeze", unit]).expect(0);
    state_is(&bus, unit, "frozen");
    kernel_says(&cg, true);
    let t = Instant::now();
    systemctl(&bus, &["freeze", unit]).expect(0);
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    systemctl(&bus, &["thaw", unit]).expect(0);
    state_is(&bus, unit, "running");
    kernel_says(&cg, false);
    let t = Instant::now();
    systemctl(&bus, &["thaw", unit]).expect(0);
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());

    // The unit's Freeze and Thaw, and the manager's FreezeUnit.
    let path = "/org/freedesktop/systemd1/unit/extra_2eservice";
    let iface = "org.freedesktop.systemd1.Unit";
    busctl(
        &bus.0.socket,
        None,
        &["call", "org.freedesktop.systemd1", path, iface, "Freeze"],
    )
    .expect(0);
    state_is(&bus, unit, "frozen");
    let got = busctl(
        &bus.0.socket,
        None,
        &[
            "get-property",
            "org.freedesktop.systemd1",
            path,
            iface,
            "FreezerState",
        ],
    );
    assert_eq!(got.stdout.trim(), "s \"frozen\"", "{got:?}");
    busctl(
        &bus.0.socket,
        None,
        &["call", "org.freedesktop.systemd1", path, iface, "Thaw"],
    )
    .expect(0);
    state_is(&bus, unit, "running");
    let manager = "/org/freedesktop/systemd1";
    let m_iface = "org.freedesktop.systemd1.Manager";
    busctl(
        &bus.0.socket,
        None,
        &[
            "call",
            "org.freedesktop.systemd1",
            manager,
            m_iface,
            "FreezeUnit",
            "s",
            unit,
        ],
    )
    .expect(0);
    state_is(&bus, unit, "frozen");

    // A restart of a frozen unit: a new main process, running.
    systemctl(&bus, &["restart", unit]).expect(0);
    let after = show(&bus, unit, "MainPID");
    assert_ne!(after, pid, "restarted");
    state_is(&bus, unit, "running");

    // A stop of a frozen unit, within the test's 5 s.
    systemctl(&bus, &["freeze", unit]).expect(0);
    state_is(&bus, unit, "frozen");
    let t = Instant::now();
    systemctl(&bus, &["stop", unit]).expect(0);
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    let out = systemctl(&bus, &["freeze", unit]);
    assert_ne!(out.code, 0, "an inactive unit is not frozen: {out:?}");
    assert!(out.stderr.contains("inactive"), "{out:?}");

    // A slice made by systemd-run, frozen with the unit below it.
    let (slice, member) = ("bar.slice", "baz.service");
    debian_tool(
        &bus.0,
        "/usr/bin/systemd-run",
        &["--unit", member, "--slice", slice, "sleep", "3600"],
    )
    .expect(0);
    wait_for(WAIT, "baz.service's main process", || {
        let p = show(&bus, member, "MainPID");
        (p != "0").then_some(())
    });
    let member_cg = cgroup_of(&show(&bus, member, "MainPID"));
    let slice_cg = member_cg.parent().expect("its slice").to_path_buf();
    assert!(slice_cg.ends_with(slice), "{}", slice_cg.display());
    assert_eq!(show(&bus, slice, "ActiveState"), "active");
    systemctl(&bus, &["freeze", slice]).expect(0);
    state_is(&bus, slice, "frozen");
    state_is(&bus, member, "frozen");
    kernel_says(&slice_cg, true);
    kernel_says(&member_cg, true);
    systemctl(&bus, &["thaw", slice]).expect(0);
    state_is(&bus, member, "running");
    state_is(&bus, slice, "running");
    kernel_says(&member_cg, false);

    // A freeze from outside leaves the states shown alone.
    std::fs::write(slice_cg.join("cgroup.freeze"), "1").expect("freeze from outside");
    kernel_says(&member_cg, true);
    state_is(&bus, slice, "running");
    state_is(&bus, member, "running");
    std::fs::write(slice_cg.join("cgroup.freeze"), "0").expect("thaw from outside");
    kernel_says(&member_cg, false);
    systemctl(&bus, &["freeze", member]).expect(0);
    state_is(&bus, member, "frozen");
    std::fs::write(slice_cg.join("cgroup.freeze"), "1").expect("freeze from outside");
    std::fs::write(slice_cg.join("cgroup.freeze"), "0").expect("thaw from outside");
    state_is(&bus, slice, "running");
    state_is(&bus, member, "frozen");

    // The stop of a frozen slice thaws it and stops the unit below it
    // (whose stop signal would wait for a thaw otherwise).
    systemctl(&bus, &["freeze", slice]).expect(0);
    state_is(&bus, slice, "frozen");
    let t = Instant::now();
    systemctl(&bus, &["stop", slice]).expect(0);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    let out = systemctl(&bus, &["show", "-p", "ActiveState", "--value", member]);
    assert_eq!(out.stdout.trim(), "inactive", "{out:?}");
    // Gone with its last unit: stopped already, and made again running.
    systemctl(&bus, &["stop", slice]).expect(0);
    debian_tool(
        &bus.0,
        "/usr/bin/systemd-run",
        &["--unit", member, "--slice", slice, "sleep", "3600"],
    )
    .expect(0);
    assert_eq!(show(&bus, slice, "FreezerState"), "running");
    systemctl(&bus, &["stop", member]).expect(0);
}

/// systemd's test 38 stops a frozen unit, just restarted frozen, under
/// `timeout 5s`. `systemctl stop` names the unit three times more
/// (`NeedDaemonReload` after its `StopUnit`, `LoadState` and
/// `TriggeredBy` once the job is done), each a `load` of an inactive unit
/// nothing holds, which must not read the whole search path while
/// nothing in it changed (a read of Debian's path takes seconds in the
/// emulated VM of that test). Here the path has 2,000 more unit files,
/// whose read takes seconds in a debug build: each stop still returns
/// within the script's 5 s.
#[test]
fn a_frozen_unit_stops_within_the_scripts_5_s_with_a_long_search_path() {
    let dir = TestDir::new();
    super::units(&dir);
    let more = dir.join("more-units");
    std::fs::create_dir_all(&more).expect("more-units");
    for i in 0..2000 {
        let text = "[Unit]\nDescription=Never started\n[Service]\nExecStart=/bin/true\n";
        std::fs::write(more.join(format!("idle{i}.service")), text).expect("a unit file");
    }
    let init = dir.init().target("default").more_units(more).start();
    init.wait_state("web", flotilla_units::state::UnitState::Running);
    let daemon = dbus_daemon(&dir);
    let bus = (busd_on(&dir, Some(&daemon.socket)), daemon.socket.clone());
    on_the_bus(&daemon.socket);
    let unit = "extra.service";
    for round in 0..2 {
        systemctl(&bus, &["start", unit]).expect(0);
        systemctl(&bus, &["freeze", unit]).expect(0);
        state_is(&bus, unit, "frozen");
        systemctl(&bus, &["restart", unit]).expect(0);
        systemctl(&bus, &["freeze", unit]).expect(0);
        state_is(&bus, unit, "frozen");
        let t = Instant::now();
        systemctl(&bus, &["stop", unit]).expect(0);
        let took = t.elapsed();
        assert!(
            took < Duration::from_secs(5),
            "round {round}: the stop took {took:?}"
        );
        assert_eq!(show(&bus, unit, "ActiveState"), "inactive");
    }
}
