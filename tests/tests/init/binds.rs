//! `BindPaths=` and `BindReadOnlyPaths=` under the init, on the unit of
//! systemd's TEST-49 (`testsuite-49-namespaced.service`): a file of the
//! host bound into the unit's private `/tmp`, seen by its `ExecStartPre=`
//! and its main process alike.

use std::path::Path;

use flotilla_tests::init::TestDir;
use flotilla_units::state::UnitState;

/// The field `n` (0-based) of the line of `mountinfo` whose mount point is
/// `target` (the last one: the top of the stack).
fn mount_field(mountinfo: &str, target: &str, n: usize) -> String {
    mountinfo
        .lines()
        .rfind(|l| l.split(' ').nth(4) == Some(target))
        .and_then(|l| l.split(' ').nth(n))
        .unwrap_or_default()
        .to_string()
}

/// systemd's namespaced unit, with its host paths in the test's directory
/// (under `/run`: a private `/tmp` would hide the init's notify socket in
/// a directory under `/tmp`). Its `ExecStartPre=` greps the bound file,
/// so the unit is running only if the control process saw it; the main
/// process is looked at through `/proc/PID/root`, which is its mount
/// namespace's view.
#[test]
fn a_file_bound_into_the_private_tmp_reaches_every_command() {
    let dir = TestDir::new_in(Path::new("/run"));
    let fixed = dir.file("fixed", "MARKER_FIXED\n");
    let hidden = dir.join("inaccessible");
    std::fs::create_dir(&hidden).expect("mkdir");
    std::fs::write(hidden.join("secret"), "x").expect("secret");
    let conf = dir.join("conf");
    std::fs::create_dir(&conf).expect("mkdir");
    std::fs::write(conf.join("app.conf"), "CONF\n").expect("conf");
    dir.file(
        "units/ns.service",
        &format!(
            "[Service]\nType=notify\nRemainAfterExit=yes\nMountAPIVFS=yes\nPrivateTmp=yes\n\
             BindPaths={}:/tmp/testfile_fixed -{}:/tmp/never\n\
             BindReadOnlyPaths={}:/tmp/conf\nInaccessiblePaths={}\n\
             ExecStartPre=grep -q -F MARKER_FIXED /tmp/testfile_fixed\n\
             ExecStart=/bin/sh -c 'systemd-notify --ready; exec sleep 1000'\n",
            fixed.display(),
            dir.join("missing").display(),
            conf.display(),
            hidden.display()
        ),
    );
    let init = dir.start("ns.service");
    init.wait_state("ns.service", UnitState::Running);
    let pid = init.pid_of("ns.service");
    let root = format!("/proc/{pid}/root");
    assert_eq!(
        std::fs::read_to_string(format!("{root}/tmp/testfile_fixed")).expect("bound file"),
        "MARKER_FIXED\n"
    );
    assert_eq!(
        std::fs::read_to_string(format!("{root}/tmp/conf/app.conf")).expect("bound dir"),
        "CONF\n"
    );
    // The optional bind of a missing source is left out, its mount point
    // not made.
    assert!(!Path::new(&format!("{root}/tmp/never")).exists());
    // The inaccessible directory beside them is covered (by an empty
    // tmpfs, which this test, as root, may still list).
    let covered = format!("{root}{}", hidden.display());
    assert!(!Path::new(&format!("{covered}/secret")).exists());
    let mounts = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).expect("mountinfo");
    assert!(
        mount_field(&mounts, "/tmp/testfile_fixed", 5).starts_with("rw"),
        "{mounts}"
    );
    assert!(
        mount_field(&mounts, "/tmp/conf", 5).starts_with("ro"),
        "{mounts}"
    );
    // The host's own /tmp has none of it.
    assert!(
        !Path::new("/tmp/testfile_fixed").exists() || {
            std::fs::read_to_string("/tmp/testfile_fixed").unwrap_or_default() != "MARKER_FIXED\n"
        }
    );
}
