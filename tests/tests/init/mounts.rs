//! `.mount` unit files through the real `init` (in a mount namespace of
//! its own, so that nothing it mounts reaches the host): a tmpfs mounted
//! by mount(8) in a unit process and unmounted at stop, a service ordered
//! after it by `RequiresMountsFor=`, a path mounted already counting as
//! active (the mount table's unit), and bad mount units refused with their errors.

use flotilla_tests::init::TestDir;
use flotilla_units::state::UnitState;
use std::path::Path;

/// The mount points of process `pid`'s namespace (the fifth field of
/// /proc/PID/mountinfo) with their file system type.
fn mounts_of(pid: i32) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).expect("mountinfo");
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let sep = f.iter().position(|w| *w == "-")?;
            Some((f.get(4)?.to_string(), f.get(sep + 1)?.to_string()))
        })
        .collect()
}

/// systemd-escape --path, for the test's own paths (letters, digits, `/`).
fn unit_of(path: &Path) -> String {
    let p = path.to_string_lossy();
    assert!(
        p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'/'),
        "{p}"
    );
    format!("{}.mount", p.trim_start_matches('/').replace('/', "-"))
}

#[test]
fn a_mount_unit_mounts_at_start_and_unmounts_at_stop() {
    let dir = TestDir::new();
    // A place whose escaped name is a valid unit name: no `-` in it (the
    // test dir's own name has one, which escapes to `\x2d`).
    let place = tempfile::Builder::new()
        .prefix("flotillamount")
        .tempdir()
        .expect("tempdir");
    let mnt = place.path().join("data");
    let pre = place.path().join("pre");
    std::fs::create_dir(&pre).expect("mkdir pre");
    let (m, p) = (mnt.display().to_string(), pre.display().to_string());
    let (mnt_unit, pre_unit) = (unit_of(&mnt), unit_of(&pre));
    dir.file(
        &format!("units/{mnt_unit}"),
        &format!(
            "[Unit]\nDescription=the test's tmpfs\n\
             [Mount]\nWhat=tmpfs\nWhere={m}\nType=tmpfs\nOptions=size=1m,mode=0750\n\
             DirectoryMode=0700\n"
        ),
    );
    // Mounted before the init starts: active without mounting again.
    dir.file(
        &format!("units/{pre_unit}"),
        &format!("[Mount]\nWhat=tmpfs\nWhere={p}\nType=tmpfs\n"),
    );
    // Writes into the mount: it must be there first.
    dir.file(
        "units/writer.service",
        &format!(
            "[Unit]\nRequiresMountsFor={m}/file\n\
             [Service]\nType=oneshot\nRemainAfterExit=yes\n\
             ExecStart=/bin/sh -c 'echo written > {m}/file'\n"
        ),
    );
    dir.unit(
        "default",
        &format!("unit: default\ntype: virtual\ndepends-on: [writer.service, {pre_unit}]\n"),
    );
    dir.unit("other", "unit: other\ntype: virtual\n");
    let init = dir
        .init()
        .target("default")
        .in_mount_namespace(&format!("mount -t tmpfs -o size=1m tmpfs {p}"))
        .start();
    init.wait_state("default", UnitState::Running);
    init.wait_all(&["writer.service", &mnt_unit, &pre_unit], UnitState::Exited);
    let mounts = mounts_of(init.pid);
    assert!(
        mounts.contains(&(m.clone(), "tmpfs".to_string())),
        "{m} not mounted: {mounts:?}"
    );
    // mount(8) made the directory with DirectoryMode=, then the tmpfs's
    // own mode=0750 is the root's of the file system.
    let root_of = format!("/proc/{}/root", init.pid);
    let inside = Path::new(&root_of).join(m.trim_start_matches('/'));
    let written = std::fs::read_to_string(inside.join("file")).expect("the writer's file");
    assert_eq!(written, "written\n");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&inside)
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o750, "{mode:o}");
    // The test's own view has no mount there: the namespace's only.
    assert!(!mounts_of(std::process::id() as i32)
        .iter()
        .any(|(at, _)| *at == m));
    // Its start skipped (its condition), then the mount table's: the
    // mount's unit, not skipped, which its stop would unmount.
    let pre_status = init.unit(&pre_unit);
    assert!(!pre_status.skipped, "{pre_status:?}");
    assert_eq!(pre_status.status, "mounted");
    let mnt_status = init.unit(&mnt_unit);
    assert!(!mnt_status.skipped, "{mnt_status:?}");

    // A target without them: the writer stops, then the mount is
    // unmounted (umount(8), in a unit process).
    init.ctl(&["set-target", "other", "--wait"]).expect(0);
    init.wait_state(&mnt_unit, UnitState::Disabled);
    let mounts = mounts_of(init.pid);
    assert!(
        !mounts.iter().any(|(at, _)| *at == m),
        "{m} still mounted: {mounts:?}"
    );
    // What the unit did not mount stays: the mount table holds its unit
    // (wanted, as `systemctl start` would), whatever the target.
    assert!(mounts.iter().any(|(at, _)| *at == p), "{mounts:?}");
    assert_eq!(init.unit(&pre_unit).state, UnitState::Exited);
    let logs = init.ctl(&["logs", &mnt_unit]);
    assert_eq!(logs.code, 0, "{logs:?}");
}

/// A mount unit whose name is not its `Where=`, one without `What=`:
/// each refused with its error, the rest of the set loads; one without
/// `Where=` mounts where its name says, as under systemd.
#[test]
fn bad_mount_units_are_refused_with_their_errors() {
    let dir = TestDir::new();
    dir.file(
        "units/srv-data.mount",
        "[Mount]\nWhat=tmpfs\nWhere=/srv/other\nType=tmpfs\n",
    );
    dir.file("units/srv.mount", "[Mount]\nWhat=tmpfs\nType=tmpfs\n");
    dir.file("units/mnt.mount", "[Mount]\nWhere=/mnt\nType=tmpfs\n");
    dir.unit("default", "unit: default\ntype: virtual\n");
    let u = dir.units().display().to_string();
    let out = dir.run_init(&["--check", "--units", &u, "--target", "default"]);
    let all = format!("{}{}", out.stdout, out.stderr);
    let mut errors: Vec<&str> = all.lines().filter(|l| l.starts_with(&u)).collect();
    errors.sort();
    assert_eq!(
        errors,
        [
            format!("{u}/mnt.mount: [Mount] has no What="),
            format!(
                "{u}/srv-data.mount:3:1: Where=/srv/other does not match the unit's name \
                 srv-data.mount: its mount unit is srv-other.mount"
            ),
        ],
        "{all}"
    );
    assert!(all.contains("2 error(s)"), "{all}");
    assert_ne!(out.code, 0, "{all}");
}
