//! Slices and delegation as systemd's test 19 (`TEST-19-DELEGATE`) asks
//! for them, with Debian's `systemd-run`: a unit's cgroup in its slice's
//! (`system.slice` by default, `system-foo-bar-baz.slice` three levels
//! below it), the slices' directories gone with their last unit, and a
//! delegated cgroup writable by the unit's user (a dynamic one, and a
//! scope's `User=`), docs/service-context.md, "Slices".

use super::{busd_on, dbus_daemon, debian_tool, on_system_bus, on_the_bus, started};
use flotilla_tests::init::TestDir;
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
