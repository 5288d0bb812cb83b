//! Slices and delegation as systemd's test 19 (`TEST-19-DELEGATE`) asks
//! for them, with Debian's `systemd-run`: a unit's cgroup in its slice's
//! (`system.slice` by default, `system-foo-bar-baz.slice` three levels
//! below it), the slices' directories gone with their last unit, and a
//! delegated cgroup writable by the unit's user (a dynamic one, and a
//! scope's `User=`), docs/service-context.md, "Slices".

use super::{
    busd, busd_on, dbus_daemon, debian_tool, manager_call, on_system_bus, on_the_bus, rows,
    started, systemctl,
};
use flotilla_tests::init::TestDir;
use flotilla_tests::{wait_for, WAIT};
use flotilla_units::state::UnitState;
use std::process::Command;

/// A check of the command's own cgroup, `sh -c` text: its path (the `0::`
/// line) ends with `$1`, and (`$2` = `w`) its user may write what a
/// delegated cgroup's manager writes (root may anyway), or (`r`) may not.
/// Exits 7 for a wrong place, 8 for a wrong mode.
const PROBE: &str = "mnt=$(findmnt -n -t cgroup2 -o TARGET | head -n 1); \
     cg=$(sed -n 's/^0:://p' /proc/self/cgroup); d=\"$mnt$cg\"; \
     case \"$cg\" in *\"$1\") ;; *) echo \"$cg\" >&2; exit 7 ;; esac; \
     if test -w \"$d\" -a -w \"$d/cgroup.procs\" -a -w \"$d/cgroup.subtree_control\"; \
     then m=w; else m=r; fi; test \"$m\" = \"$2\" || exit 8";

#[test]
fn units_are_placed_in_their_slices_and_delegated_to_their_users() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = dbus_daemon(&dir);
    let busd = busd_on(&dir, Some(&bus.socket));
    on_the_bus(&bus.socket);
    let run_wait = |args: &[&str]| on_system_bus(&bus.socket, "/usr/bin/systemd-run --wait", args);

    // The default slice, and a cgroup delegated to a dynamic user
    // (`-p Delegate=`: delegation with no controller).
    let out = run_wait(&[
        "--unit=test-0.service",
        "-p",
        "DynamicUser=1",
        "-p",
        "Delegate=",
        "sh",
        "-c",
        PROBE,
        "probe",
        "/system.slice/test-0.service",
        "w",
    ]);
    out.expect(0);

    // A slice three dashes deep: each dash a level, gone once empty.
    let nested =
        "/system.slice/system-foo.slice/system-foo-bar.slice/system-foo-bar-baz.slice/test-3.service";
    let out = run_wait(&[
        "--unit=test-3.service",
        "-p",
        "Slice=system-foo-bar-baz.slice",
        "-p",
        "IOAccounting=yes",
        "sh",
        "-c",
        PROBE,
        "probe",
        nested,
        "w",
    ]);
    out.expect(0);
    let left = Command::new("find")
        .args([
            "/sys/fs/cgroup",
            "-maxdepth",
            "6",
            "-type",
            "d",
            "-name",
            "system-foo.slice",
        ])
        .output()
        .expect("run find");
    let left = String::from_utf8_lossy(&left.stdout).into_owned();
    let mine = format!("flotilla-{}/", init.pid);
    assert!(
        !left.lines().any(|l| l.contains(&mine)),
        "the empty slices are left after their last unit: {left}"
    );

    // A scope in a slice of its own, delegated to its `User=`; the command
    // runs as that user (`--uid`).
    let out = debian_tool(
        &busd,
        "/usr/bin/systemd-run",
        &[
            "--uid=nobody",
            "-p",
            "User=nobody",
            "-p",
            "Delegate=yes",
            "--slice",
            "workload.slice",
            "--unit",
            "test-workload0.scope",
            "--scope",
            "sh",
            "-c",
            PROBE,
            "probe",
            "/workload.slice/test-workload0.scope",
            "w",
        ],
    );
    out.expect(0);

    // A slice that is not one: refused, naming it.
    let out = run_wait(&["-p", "Slice=a--b.slice", "/bin/true"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("a--b.slice"), "{out:?}");
}

/// Slice units as systemd's test 15 asks for them
/// (`test_hierarchical_slice_dropins`, `test_transient_slice_dropins`),
/// with Debian's systemctl and busctl: a slice no file defines is loaded
/// with its defaults and its name's drop-ins (`a-.slice.d/`,
/// `a-b-c.slice.d/`), `systemctl cat` prints them, a transient slice
/// takes its properties under its drop-ins, read twice, and its stop
/// lets it go; a slice starts and stops as any unit (docs/dbus.md,
/// "Transient slices"; docs/systemd-units.md, "Slices").
#[test]
fn slices_load_without_a_file_take_their_dropins_and_are_made_transient() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    let show = |prop: &str, unit: &str| {
        let out = systemctl(&bus, &["show", "-P", prop, unit]);
        out.expect(0);
        out.stdout.trim_end().to_string()
    };

    // No file, no drop-in: the defaults.
    assert_eq!(show("Description", "z-y.slice"), "Slice /z/y");
    assert_eq!(show("MemoryMax", "z-y.slice"), "infinity");
    assert_eq!(show("LoadState", "z-y.slice"), "loaded");

    dir.file("units/a-.slice.d/doc.conf", "[Unit]\nDocumentation=man:a\n");
    let limit = dir.file(
        "units/a-b-c.slice.d/limit.conf",
        "[Slice]\nMemoryMax=1000000000\n",
    );
    systemctl(&bus, &["daemon-reload"]).expect(0);
    assert_eq!(show("MemoryMax", "a-b-c.slice"), "1000000000");
    assert_eq!(show("Documentation", "a-b-c.slice"), "man:a");
    let out = systemctl(&bus, &["cat", "a-b-c.slice"]);
    out.expect(0);
    assert!(
        out.stdout.contains(&format!("# {}", limit.display())),
        "{out:?}"
    );

    // Transient: the properties under the drop-ins, which are read
    // before and after them.
    let call = |args: &[&str]| {
        manager_call(&bus, args).expect(0);
    };
    call(&[
        "StartTransientUnit",
        "ssa(sv)a(sa(sv))",
        "a-b-c.slice",
        "replace",
        "3",
        "Description",
        "s",
        "slice too",
        "MemoryMax",
        "t",
        "1000000002",
        "Documentation",
        "as",
        "1",
        "man:t",
        "0",
    ]);
    let st = init.wait_state("a-b-c.slice", UnitState::Running);
    // Its own limit is shown, and named as not applied to its directory.
    let left_out: Vec<&str> = st.not_applied.iter().map(|n| n.setting.as_str()).collect();
    assert_eq!(left_out, ["MemoryMax"], "{st:?}");
    assert_eq!(show("Description", "a-b-c.slice"), "slice too");
    assert_eq!(show("MemoryMax", "a-b-c.slice"), "1000000000");
    assert_eq!(show("Documentation", "a-b-c.slice"), "man:a man:t man:a");
    assert_eq!(show("ActiveState", "a-b-c.slice"), "active");
    // A reload keeps it (no /run/systemd/transient on this path: from
    // the transient set).
    systemctl(&bus, &["daemon-reload"]).expect(0);
    assert_eq!(show("Description", "a-b-c.slice"), "slice too");
    assert_eq!(show("MemoryMax", "a-b-c.slice"), "1000000000");
    // Stopped, it leaves the unit set: the slice is made again from its
    // drop-ins once the init let the transient one go.
    call(&["StopUnit", "ss", "a-b-c.slice", "replace"]);
    wait_for(WAIT, "a-b-c.slice made from its drop-ins again", || {
        (show("Description", "a-b-c.slice") == "Slice /a/b/c").then_some(())
    });
    assert_eq!(show("ActiveState", "a-b-c.slice"), "inactive");

    // A slice started and stopped by hand.
    systemctl(&bus, &["start", "z-y.slice"]).expect(0);
    init.wait_state("z-y.slice", UnitState::Running);
    assert_eq!(show("ActiveState", "z-y.slice"), "active");
    systemctl(&bus, &["stop", "z-y.slice"]).expect(0);
    assert_eq!(show("ActiveState", "z-y.slice"), "inactive");
}

/// `systemctl list-units` lists the slices a unit runs in, every level
/// (loaded from their files, or named after their path with none),
/// as systemd lists the slices it started for its units; a level above
/// the init's own cgroup is not one of them.
#[test]
fn the_slices_units_run_in_are_listed() {
    let dir = TestDir::new();
    let _init = started(&dir);
    let busd = busd(&dir);
    let out = debian_tool(
        &busd,
        "/usr/bin/systemd-run",
        &[
            "--unit=sliced.service",
            "-p",
            "Slice=system-foo-bar.slice",
            "sleep",
            "300",
        ],
    );
    out.expect(0);
    let out = systemctl(&busd, &["list-units", "--no-legend", "--plain", "*.slice"]);
    out.expect(0);
    let rows = rows(&out);
    for want in [
        "system-foo-bar.slice loaded active active Slice /system/foo/bar",
        "system-foo.slice loaded active active Slice /system/foo",
        // The test's search path has no `system.slice` file.
        "system.slice loaded active active Slice /system",
    ] {
        assert!(rows.iter().any(|r| r == want), "{want:?} in {out:?}");
    }
    assert_eq!(rows.len(), 3, "only the init's slices: {out:?}");

    // Stopped, its slices are gone with it (their directories are).
    systemctl(&busd, &["stop", "sliced.service"]).expect(0);
    let out = systemctl(&busd, &["list-units", "--no-legend", "--plain", "*.slice"]);
    out.expect(0);
    assert_eq!(out.stdout, "", "{out:?}");
}
