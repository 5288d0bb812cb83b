//! `NeedDaemonReload` (docs/dbus.md, "NeedDaemonReload") with Debian's
//! `/bin/systemctl`: a unit file edited or a drop-in added since the
//! init read them makes it `yes`, and `systemctl status` and `restart`
//! print systemd's warning; a `daemon-reload` makes it `no` again, and so
//! does a unit read again when asked for. A unit not read from a unit
//! file (a YAML unit) never needs one. Times are set explicitly, an hour
//! back and a minute apart, so that file systems with coarse times tell
//! an edit apart.

use super::{busd, set_mtime_below, systemctl, units, Busd};
use flotilla_tests::init::{Out, TestDir};
use flotilla_units::state::UnitState;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Debian's warning, as `systemctl` prints it for `unit`.
fn warning(unit: &str) -> String {
    format!(
        "Warning: The unit file, source configuration file or drop-ins of {unit} \
         changed on disk. Run 'systemctl daemon-reload' to reload units."
    )
}

fn need_reload(bus: &Busd, unit: &str) -> String {
    let out = systemctl(bus, &["show", "-P", "NeedDaemonReload", unit]);
    out.expect(0);
    out.stdout.trim_end().to_string()
}

/// `systemctl status UNIT`, its output and errors together (the warning
/// goes to standard error); it exits 3 for a unit that is not active.
fn status(bus: &Busd, unit: &str) -> String {
    let out: Out = systemctl(bus, &["status", "-n0", unit]);
    assert!(out.code == 0 || out.code == 3, "{out:?}");
    format!("{}{}", out.stdout, out.stderr)
}

/// Writes `text` to `path` with the modification time `t`.
fn write_at(path: &Path, text: &str, t: SystemTime) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, text).expect("write");
    set_mtime_below(path, t);
}

#[test]
fn an_edited_unit_file_or_a_new_drop_in_needs_a_daemon_reload() {
    let dir = TestDir::new();
    units(&dir);
    let old = SystemTime::now() - Duration::from_secs(3600);
    let unit = |d: &str| format!("[Unit]\nDescription={d}\n[Service]\nExecStart=/bin/sleep 1000\n");
    let file = dir.join("units/edited.service");
    write_at(&file, &unit("First"), old);
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    systemctl(&bus, &["start", "edited.service"]).expect(0);
    init.wait_state("edited.service", UnitState::Running);
    assert_eq!(need_reload(&bus, "edited.service"), "no");
    assert!(!status(&bus, "edited.service").contains("changed on disk"));

    // Edited: the warning at `status` and at `restart`, until a reload.
    write_at(&file, &unit("Second"), old + Duration::from_secs(60));
    assert_eq!(need_reload(&bus, "edited.service"), "yes");
    let shown = status(&bus, "edited.service");
    assert!(shown.contains(&warning("edited.service")), "{shown}");
    let out = systemctl(&bus, &["restart", "edited.service"]);
    out.expect(0);
    assert!(out.stderr.contains(&warning("edited.service")), "{out:?}");
    systemctl(&bus, &["daemon-reload"]).expect(0);
    assert_eq!(need_reload(&bus, "edited.service"), "no");
    let shown = status(&bus, "edited.service");
    assert!(!shown.contains("changed on disk"), "{shown}");
    assert!(shown.contains("Second"), "{shown}");

    // A drop-in added; then removed.
    let dropin = dir.join("units/edited.service.d/env.conf");
    write_at(&dropin, "[Service]\nEnvironment=A=1\n", old);
    assert_eq!(need_reload(&bus, "edited.service"), "yes");
    assert!(status(&bus, "edited.service").contains(&warning("edited.service")));
    systemctl(&bus, &["daemon-reload"]).expect(0);
    assert_eq!(need_reload(&bus, "edited.service"), "no");
    std::fs::remove_file(&dropin).expect("rm drop-in");
    assert_eq!(need_reload(&bus, "edited.service"), "yes");
    systemctl(&bus, &["daemon-reload"]).expect(0);
    assert_eq!(need_reload(&bus, "edited.service"), "no");

    // A YAML unit is not read from a unit file: never.
    set_mtime_below(&dir.join("units/web.yaml"), SystemTime::now());
    assert_eq!(need_reload(&bus, "web"), "no");
    assert_eq!(init.unit("edited.service").state, UnitState::Running);
}

/// A unit nothing holds is read again when asked for (docs/systemd-units.md,
/// "Unit files read again when asked for"): it then has what is on disk,
/// and needs no reload.
#[test]
fn a_unit_read_again_when_asked_for_needs_no_daemon_reload() {
    let dir = TestDir::new();
    units(&dir);
    let old = SystemTime::now() - Duration::from_secs(3600);
    let file = dir.join("units/idle.service");
    let unit = |d: &str| format!("[Unit]\nDescription={d}\n[Service]\nExecStart=/bin/sleep 1000\n");
    write_at(&file, &unit("First"), old);
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    assert_eq!(need_reload(&bus, "idle.service"), "no");
    write_at(&file, &unit("Second"), old + Duration::from_secs(60));
    assert_eq!(need_reload(&bus, "idle.service"), "no");
    let shown = status(&bus, "idle.service");
    assert!(shown.contains("Second"), "{shown}");
    assert!(!shown.contains("changed on disk"), "{shown}");
}
