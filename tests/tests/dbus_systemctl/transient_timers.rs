//! `systemd-run --on-active=1 CMD` with Debian's `systemd-run`: one
//! `StartTransientUnit` of a timer with its service as an auxiliary unit;
//! the timer is armed, starts the service when it elapses, is listed by
//! `systemctl list-timers`, and both go as systemd lets them go
//! (docs/dbus.md, "Transient timers").

use super::{busd, debian_tool, made_trigger, started, systemctl};
use flotilla_tests::init::TestDir;
use flotilla_tests::{wait_for, WAIT};
use flotilla_units::state::UnitState;

#[test]
fn systemd_run_on_active_starts_its_service_when_the_timer_elapses() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    let fired = dir.path().join("fired");
    let write = format!("echo fired >> {}", fired.display());
    let run = |args: &[&str]| debian_tool(&bus, "/usr/bin/systemd-run", args);
    // Within 10 ms of its elapse (the default accuracy is a minute,
    // systemd's too).
    let tick = [
        "--unit",
        "tick",
        "--on-active=1",
        "--timer-property=AccuracySec=10ms",
        "/bin/sh",
        "-c",
        &write,
    ];
    made_trigger(&run(&tick), "timer", "tick");
    let said = wait_for(WAIT, "tick.service's file", || {
        std::fs::read_to_string(&fired)
            .ok()
            .filter(|t| !t.is_empty())
    });
    assert_eq!(said, "fired\n");
    // The timer elapsed for good (`RemainAfterElapse=no`): let go when a
    // new one of its name comes, its service too.
    init.wait_state("tick.timer", UnitState::Exited);
    let out = run(&tick);
    out.expect(0);
    wait_for(WAIT, "tick.service's second run", || {
        std::fs::read_to_string(&fired)
            .ok()
            .filter(|t| t == "fired\nfired\n")
    });

    // A calendar timer, armed: listed with the service it starts; its
    // stop lets both go (the service never ran).
    let out = run(&[
        "--unit",
        "later",
        "--on-calendar=*:0/15:0",
        "--timer-property=AccuracySec=1s",
        "/bin/true",
    ]);
    out.expect(0);
    init.wait_state("later.timer", UnitState::Running);
    let out = systemctl(&bus, &["list-timers", "--no-legend", "later.timer"]);
    out.expect(0);
    assert!(
        out.stdout.contains("later.timer") && out.stdout.contains("later.service"),
        "{out:?}"
    );
    systemctl(&bus, &["stop", "later.timer"]).expect(0);
    let units = init.status().units;
    assert!(
        units
            .iter()
            .all(|u| u.unit != "later.timer" && u.unit != "later.service"),
        "{units:?}"
    );
}
