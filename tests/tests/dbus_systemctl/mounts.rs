//! The mount units of mount points that no unit file made (docs/dbus.md,
//! "Mount points"), with Debian's `/bin/systemctl`: `-.mount` (the root)
//! and a tmpfs the test mounts answer as systemd's, active and `mounted`,
//! with the mount table's `Where=`, `What=` and `Type=`, and are listed;
//! the API file systems (`proc.mount`) have no unit; a place that is no
//! mount point is still not found.

use super::{busd, rows, started, systemctl};
use flotilla_tests::init::TestDir;
use flotilla_units::escape::escape_path;
use flotilla_units::mountinfo;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs (source `flotilla-test`) mounted in the host's mount table,
/// unmounted when dropped.
struct HostMount(PathBuf);

impl HostMount {
    fn tmpfs(place: &Path) -> HostMount {
        std::fs::create_dir_all(place).expect("the mount point");
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "flotilla-test"])
            .arg(place)
            .status()
            .expect("run mount")
            .success();
        assert!(ok, "mount a tmpfs on {}", place.display());
        HostMount(place.to_path_buf())
    }
}

impl Drop for HostMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn the_roots_mount_unit_and_other_mount_points_answer_as_systemds() {
    let dir = TestDir::new();
    let _init = started(&dir);
    let bus = busd(&dir);
    // What busd reads: the mount table of PID 1 (the host's here).
    let table = std::fs::read("/proc/1/mountinfo").unwrap_or_default();
    let on_top = |place: &str| {
        mountinfo::entries(&table)
            .filter(|e| e.mount_point == Path::new(place))
            .last()
            .unwrap_or_else(|| panic!("{place} is no mount point of PID 1"))
    };
    let root = on_top("/");

    let out = systemctl(&bus, &["status", "-n0", "--", "-.mount"]);
    out.expect(0);
    for want in [
        "-.mount - Root Mount".to_string(),
        "Loaded: loaded".to_string(),
        "Active: active (mounted)".to_string(),
        "Where: /\n".to_string(),
        format!("What: {}\n", root.source),
    ] {
        assert!(out.stdout.contains(&want), "{want:?} in {out:?}");
    }

    let out = systemctl(
        &bus,
        &[
            "show",
            "-p",
            "LoadState",
            "-p",
            "ActiveState",
            "-p",
            "SubState",
            "-p",
            "Where",
            "-p",
            "What",
            "-p",
            "Type",
            "-p",
            "Perpetual",
            "-p",
            "SourcePath",
            "--",
            "-.mount",
        ],
    );
    out.expect(0);
    let mut got: Vec<&str> = out.stdout.lines().collect();
    got.sort_unstable();
    let mut want = vec![
        "ActiveState=active".to_string(),
        "LoadState=loaded".to_string(),
        "Perpetual=yes".to_string(),
        "SourcePath=/proc/self/mountinfo".to_string(),
        "SubState=mounted".to_string(),
        format!("Type={}", root.fstype),
        format!("What={}", root.source),
        "Where=/".to_string(),
    ];
    want.sort_unstable();
    assert_eq!(got, want, "{out:?}");

    // Another mount point the init has no unit for: a tmpfs of the test's
    // own, mounted where PID 1 sees it (unmounted when the guard drops).
    let place = dir.join("mnt");
    let mounted = HostMount::tmpfs(&place);
    let unit = format!(
        "{}.mount",
        escape_path(place.to_str().expect("a UTF-8 path")).expect("escaped")
    );
    let out = systemctl(&bus, &["show", "-P", "What", "--", &unit]);
    out.expect(0);
    assert_eq!(out.stdout, "flotilla-test\n", "{out:?}");
    let out = systemctl(&bus, &["is-active", "--", &unit]);
    out.expect(0);
    assert_eq!(out.stdout, "active\n");
    // Listed, as systemd lists every mount point's unit, and the root's.
    let out = systemctl(
        &bus,
        &["list-units", "--no-legend", "--plain", "--type=mount"],
    );
    out.expect(0);
    let rows = rows(&out);
    for want in [
        format!("{unit} loaded active mounted {}", place.display()),
        "-.mount loaded active mounted Root Mount".to_string(),
    ] {
        assert!(rows.contains(&want), "{want:?} in {out:?}");
    }
    // The API file systems have no unit, as under systemd.
    assert!(
        !rows
            .iter()
            .any(|r| r.starts_with("proc.mount ") || r.starts_with("sys.mount ")),
        "{out:?}"
    );
    let out = systemctl(&bus, &["is-active", "proc.mount"]);
    out.expect(3);
    drop(mounted);
    let out = systemctl(&bus, &["is-active", "--", &unit]);
    out.expect(3);

    // A place nothing is mounted on: not found, as under systemd.
    let out = systemctl(&bus, &["status", "-n0", "srv-flotilla\\x2dnothing.mount"]);
    out.expect(4);
    assert!(out.stderr.contains("could not be found"), "{out:?}");
}

/// A stop unmounts a mount point no unit made, as systemd's stop of its
/// unit does (its job done); the root's is refused. A mount point too
/// deep for its escaped path to be a name (systemd's test 60: seven
/// 255-byte components) answers to the hashed name Debian's systemctl
/// makes of the path, and stops by it.
#[test]
fn a_stop_unmounts_a_mount_point_also_one_with_a_hashed_name() {
    let dir = TestDir::new();
    let _init = started(&dir);
    let bus = busd(&dir);
    let place = dir.join("mnt");
    let mounted = HostMount::tmpfs(&place);
    let is_mount = |p: &Path| {
        let table = std::fs::read("/proc/1/mountinfo").unwrap_or_default();
        let found = mountinfo::entries(&table).any(|e| e.mount_point == p);
        found
    };
    let out = systemctl(
        &bus,
        &["show", "-P", "CanStop", "--", &place.to_string_lossy()],
    );
    out.expect(0);
    assert_eq!(out.stdout, "yes\n", "{out:?}");
    systemctl(&bus, &["stop", "--", &place.to_string_lossy()]).expect(0);
    assert!(!is_mount(&place), "{} is still mounted", place.display());
    drop(mounted);

    let deep = format!("/{}", "x".repeat(255)).repeat(7);
    let deep = dir.join(deep.trim_start_matches('/'));
    let mounted = HostMount::tmpfs(&deep);
    let name =
        flotilla_units::escape::name_from_path(&deep.to_string_lossy(), "mount").expect("a name");
    assert_eq!(name.len(), 255, "{name}");
    let path = deep.to_string_lossy().into_owned();
    let out = systemctl(&bus, &["show", "-p", "Id", "-p", "SubState", "--", &path]);
    out.expect(0);
    assert_eq!(
        out.stdout,
        format!("Id={name}\nSubState=mounted\n"),
        "{out:?}"
    );
    let out = systemctl(
        &bus,
        &["list-units", "--no-legend", "--plain", "--type=mount"],
    );
    assert!(
        rows(&out)
            .iter()
            .any(|r| r.starts_with(&format!("{name} "))),
        "{out:?}"
    );
    systemctl(&bus, &["stop", "--", &path]).expect(0);
    assert!(!is_mount(&deep), "the deep tmpfs is still mounted");
    drop(mounted);

    let out = systemctl(&bus, &["stop", "--", "-.mount"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("nor stop it"), "{out:?}");
}
