//! `systemd-mount -t tmpfs tmpfs PLACE` and `systemd-umount PLACE` with
//! Debian's programs: one `StartTransientUnit` of the mount unit PLACE's
//! name says, mounted by the init (in a mount namespace of its own here),
//! a unit like any other, and unmounted and let go at its stop
//! (docs/dbus.md, "Transient mounts"); `--automount=yes` is refused,
//! saying why.

use super::{busd, debian_tool, systemctl, units};
use flotilla_tests::init::TestDir;
use flotilla_tests::{wait_for, WAIT};
use flotilla_units::state::UnitState;

/// Whether `place` is a tmpfs mount point of process `pid`'s namespace.
fn tmpfs_at(pid: i32, place: &str) -> bool {
    let text = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).unwrap_or_default();
    text.lines().any(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        let sep = f.iter().position(|w| *w == "-");
        f.get(4) == Some(&place) && sep.and_then(|s| f.get(s + 1)) == Some(&"tmpfs")
    })
}

#[test]
fn systemd_mount_mounts_a_tmpfs_and_systemd_umount_lets_it_go() {
    let dir = TestDir::new();
    units(&dir);
    let init = dir
        .init()
        .target("default")
        .in_mount_namespace("true")
        .start();
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    // A place whose escaped name holds no escape (no `-` in it).
    let top = tempfile::Builder::new()
        .prefix("flotillamount")
        .tempdir()
        .expect("tempdir");
    let place = top.path().join("aaa").display().to_string();
    let unit = format!("{}.mount", place.trim_start_matches('/').replace('/', "-"));
    let out = debian_tool(
        &bus,
        "/usr/bin/systemd-mount",
        &["-t", "tmpfs", "-o", "size=1m", "tmpfs", &place],
    );
    out.expect(0);
    assert!(
        out.stderr
            .contains(&format!("Started unit {unit} for mount point: {place}")),
        "{out:?}"
    );
    init.wait_state(&unit, UnitState::Exited);
    assert!(tmpfs_at(init.pid, &place), "no tmpfs at {place}");
    let out = systemctl(&bus, &["is-active", "--", &unit]);
    assert_eq!(out.stdout, "active\n", "{out:?}");
    let out = systemctl(&bus, &["list-units", "--no-legend", "--", &unit]);
    assert!(out.stdout.contains(&unit), "{out:?}");
    // A restart unmounts and mounts again: what was written is gone
    // (systemd's test 37).
    let written = format!("/proc/{}/root{place}/bbb", init.pid);
    std::fs::write(&written, "x").expect("write into the tmpfs");
    systemctl(&bus, &["restart", "--", &unit]).expect(0);
    init.wait_state(&unit, UnitState::Exited);
    assert!(
        tmpfs_at(init.pid, &place),
        "no tmpfs at {place} after the restart"
    );
    assert!(
        !std::path::Path::new(&written).exists(),
        "the restart kept the tmpfs"
    );

    let out = debian_tool(&bus, "/usr/bin/systemd-umount", &[&place]);
    out.expect(0);
    // The job ends once the unit has left the unit set; its umount
    // may still be running then.
    wait_for(WAIT, "the unmount", || {
        (!tmpfs_at(init.pid, &place)).then_some(())
    });
    let units = init.status().units;
    assert!(units.iter().all(|u| u.unit != unit), "{units:?}");

    let out = debian_tool(
        &bus,
        "/usr/bin/systemd-mount",
        &["--automount=yes", "-t", "tmpfs", "tmpfs", &place],
    );
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains(".automount is not supported by flotilla"),
        "{out:?}"
    );
}
