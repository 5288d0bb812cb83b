//! `systemd-run --path-property=PathExists=FILE CMD` with Debian's
//! `systemd-run`: one `StartTransientUnit` of a path unit with its
//! service as an auxiliary unit; the path unit watches FILE, starts the
//! service once it exists, and both go at the path unit's stop
//! (docs/dbus.md, "Transient paths").

use super::{busd, debian_tool, made_trigger, started, stop_trigger, systemctl};
use flotilla_tests::init::TestDir;
use flotilla_tests::{wait_for, WAIT};
use flotilla_units::state::UnitState;

#[test]
fn systemd_run_path_property_starts_its_service_when_the_path_exists() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    let flag = dir.path().join("flag");
    let ran = dir.path().join("ran");
    // The service takes the flag away, so that it runs once.
    let write = format!("echo ran >> {}; rm -f {}", ran.display(), flag.display());
    let watch = format!("--path-property=PathExists={}", flag.display());
    let out = debian_tool(
        &bus,
        "/usr/bin/systemd-run",
        &["--unit", "watch", &watch, "/bin/sh", "-c", &write],
    );
    made_trigger(&out, "path", "watch");
    init.wait_state("watch.path", UnitState::Running);
    let out = systemctl(&bus, &["list-units", "--no-legend", "watch.path"]);
    assert!(out.stdout.contains("watch.path"), "{out:?}");
    assert!(!ran.exists(), "the service ran before its path existed");

    std::fs::write(&flag, "").expect("the flag");
    let said = wait_for(WAIT, "watch.service's file", || {
        std::fs::read_to_string(&ran).ok().filter(|t| !t.is_empty())
    });
    assert_eq!(said, "ran\n");
    wait_for(WAIT, "the flag taken away", || {
        (!flag.exists()).then_some(())
    });

    // Its stop lets the path unit go, with its service (which has ended).
    stop_trigger(&init, &bus, "watch.path", &["watch.service"]);
}
