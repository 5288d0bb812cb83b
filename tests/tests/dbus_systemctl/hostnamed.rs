//! Debian's `systemd-hostnamed` on a real system bus beside
//! `flotilla-busd`: `hostnamectl` sets the static host name, the chassis
//! and the location, which hostnamed writes to `/etc/hostname` and
//! `/etc/machine-info` and shows back, as under systemd (docs/dbus.md,
//! "The daemons beside the manager"). hostnamed runs in a UTS namespace of
//! its own, so that the host's name stays as it is.

use super::*;

#[test]
fn hostnamectl_sets_the_hostname_chassis_and_location() {
    let dir = TestDir::new();
    let _init = started(&dir);
    let bus = dbus_daemon(&dir);
    let _busd = busd_on(&dir, Some(&bus.socket));
    on_the_bus(&bus.socket);
    let _hostnamed = sd_daemon_in(
        &dir,
        &bus.socket,
        "/lib/systemd/systemd-hostnamed",
        "org.freedesktop.hostname1",
        &["--uts"],
    );
    let hostnamectl = |args: &[&str]| on_system_bus(&bus.socket, "hostnamectl", args);

    hostnamectl(&["set-hostname", "flotilla-test"]).expect(0);
    assert_eq!(dir.read("etc/hostname"), "flotilla-test\n");
    hostnamectl(&["set-chassis", "vm"]).expect(0);
    hostnamectl(&["set-location", "rack 7"]).expect(0);
    let info = dir.read("etc/machine-info");
    assert!(
        info.contains("CHASSIS=vm\n") && info.contains("LOCATION=\"rack 7\"\n"),
        "{info}"
    );
    let out = hostnamectl(&["status"]);
    out.expect(0);
    for want in [
        "Static hostname: flotilla-test\n",
        "Chassis: vm",
        "Location: rack 7\n",
    ] {
        assert!(out.stdout.contains(want), "{want:?} in {out:?}");
    }
}
