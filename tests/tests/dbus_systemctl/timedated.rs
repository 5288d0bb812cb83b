//! Debian's `systemd-timedated` on a real system bus beside
//! `flotilla-busd`: `timedatectl set-ntp` enables and starts, or disables
//! and stops, the NTP unit through the manager's methods, as under systemd
//! (docs/dbus.md, "The daemons beside the manager"); `set-timezone` and
//! `set-local-rtc` write their files.

use super::*;

/// Debian's `systemd-timedated` on the bus at `bus` ([`sd_daemon`]),
/// without `CAP_SYS_TIME`: its time zone and RTC settings reach the
/// kernel with `settimeofday`, whose first call with a time zone since
/// boot moves the machine's clock, so here they fail (timedated ignores
/// that failure, as it does without an RTC).
fn timedated(dir: &TestDir, bus: &Path) -> Killed {
    sd_daemon(
        dir,
        bus,
        "setpriv --bounding-set=-sys_time --inh-caps=-sys_time /lib/systemd/systemd-timedated",
        "org.freedesktop.timedate1",
    )
}

/// `timedatectl ARGS` against the test's bus.
fn timedatectl(bus: &Path, args: &[&str]) -> Out {
    on_system_bus(bus, "timedatectl --no-pager", args)
}

/// `set-ntp true` enables Debian's `systemd-timesyncd.service` (its
/// `[Install]` links) and starts it, `set-ntp false` disables and stops
/// it, as timedated asks the manager under systemd: `UnitFileState`,
/// `EnableUnitFiles`/`DisableUnitFiles`, `Reload`, `StartUnit`/`StopUnit`
/// and the job's `JobRemoved`, on which timedated tells `NTP` changed.
/// systemd's test 45 replaces the unit's command by a `sleep` where the
/// daemon cannot run (its drop-in, here too: the test runs on the host).
#[test]
fn timedatectl_set_ntp_enables_and_starts_the_ntp_unit() {
    let dir = TestDir::new();
    let unit = "systemd-timesyncd.service";
    std::fs::copy(
        format!("/lib/systemd/system/{unit}"),
        dir.join(&format!("units/{unit}")),
    )
    .expect("Debian's systemd-timesyncd.service (package systemd-timesyncd)");
    dir.file(
        &format!("units/{unit}.d/container.conf"),
        "[Unit]\nConditionVirtualization=\n[Service]\nType=simple\nAmbientCapabilities=\n\
         ExecStart=\nExecStart=/bin/sleep infinity\n",
    );
    units(&dir);
    // Its runtime directory in a /run of the init's own.
    let init = dir
        .init()
        .target("default")
        .in_mount_namespace("mount -t tmpfs tmpfs /run")
        .start();
    init.wait_state("web", UnitState::Running);
    let bus = dbus_daemon(&dir);
    let busd = busd_on(&dir, Some(&bus.socket));
    on_the_bus(&bus.socket);
    let _timedated = timedated(&dir, &bus.socket);
    let state = |verb: &str| {
        let out = systemctl(&busd, &[verb, unit]);
        out.stdout.trim_end().to_string()
    };
    let ntp = || {
        let out = timedatectl(&bus.socket, &["show", "-p", "NTP", "--value"]);
        out.expect(0);
        out.stdout.trim_end().to_string()
    };
    assert_eq!(state("is-enabled"), "disabled");
    assert_eq!(ntp(), "no");

    timedatectl(&bus.socket, &["set-ntp", "true"]).expect(0);
    assert_eq!(state("is-enabled"), "enabled");
    assert!(dir
        .join(&format!("units/sysinit.target.wants/{unit}"))
        .exists());
    wait_for(WAIT, "the NTP unit active", || {
        (state("is-active") == "active").then_some(())
    });
    assert_eq!(init.unit(unit).state, UnitState::Running);
    wait_for(WAIT, "NTP on", || (ntp() == "yes").then_some(()));

    timedatectl(&bus.socket, &["set-ntp", "false"]).expect(0);
    assert_eq!(state("is-enabled"), "disabled");
    wait_for(WAIT, "the NTP unit inactive", || {
        (state("is-active") == "inactive").then_some(())
    });
    // timedated says `yes` until it has the stop job's `JobRemoved`.
    wait_for(WAIT, "NTP off", || (ntp() == "no").then_some(()));
    // Asked again, nothing to change.
    timedatectl(&bus.socket, &["set-ntp", "false"]).expect(0);
    assert_eq!(state("is-enabled"), "disabled");
}

/// `set-timezone` links `/etc/localtime` to the zone's file and
/// `timedatectl status` shows it; `set-local-rtc` writes `/etc/adjtime`
/// and removes it again, as systemd's test 45 checks.
#[test]
fn timedatectl_sets_the_time_zone_and_the_rtc_mode() {
    let dir = TestDir::new();
    let _init = started(&dir);
    let bus = dbus_daemon(&dir);
    let _busd = busd_on(&dir, Some(&bus.socket));
    on_the_bus(&bus.socket);
    let _timedated = timedated(&dir, &bus.socket);
    let out = timedatectl(&bus.socket, &["set-timezone", "Europe/Berlin"]);
    out.expect(0);
    assert_eq!(out.stderr, "");
    assert_eq!(
        std::fs::read_link(dir.join("etc/localtime")).ok(),
        Some("../usr/share/zoneinfo/Europe/Berlin".into())
    );
    let out = timedatectl(&bus.socket, &["status"]);
    out.expect(0);
    assert!(
        out.stdout.contains("Time zone: Europe/Berlin (CE"),
        "{out:?}"
    );
    timedatectl(&bus.socket, &["set-local-rtc", "1"]).expect(0);
    assert_eq!(dir.read("etc/adjtime"), "0.0 0 0\n0\nLOCAL\n");
    timedatectl(&bus.socket, &["set-local-rtc", "0"]).expect(0);
    assert!(!dir.join("etc/adjtime").exists());
}
