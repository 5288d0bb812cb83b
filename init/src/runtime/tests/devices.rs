//! Device units through the loop: udev's database read at start makes a
//! unit of the serial port, which starts the getty bound to it; udevd's
//! `remove` takes it out, which stops the getty; a NIC's `add` makes its
//! units, and the unit its `SYSTEMD_WANTS=` names starts.

use super::*;
use flotilla_units::udev::monitor::encode;

const GETTY: &str = "unit: getty\ndepends-on: [dev-ttyS0.device]\n\
                     stop-propagated-from: [dev-ttyS0.device]\nexec-start: /sbin/agetty ttyS0\n";
const NICUP: &str = "unit: nicup.service\nexec-start: /sbin/nicup\n";
const TTY: &str = "/sys/devices/platform/serial8250/tty/ttyS0";

/// A fake where udev runs and its database has the serial port.
fn with_tty() -> FakeSys {
    let sys = fake_with(&[("getty", GETTY), ("nicup", NICUP)]);
    sys.enable_udev();
    sys.add_dir("/run/udev/tags/systemd");
    sys.set_file("/run/udev/tags/systemd/c4:64", "");
    sys.set_link(
        "/sys/dev/char/4:64",
        "../../devices/platform/serial8250/tty/ttyS0",
    );
    sys.set_file(
        format!("{TTY}/uevent"),
        "MAJOR=4\nMINOR=64\nDEVNAME=ttyS0\n",
    );
    sys.set_file(
        "/run/udev/data/c4:64",
        "I:1618000\nG:systemd\nQ:systemd\nV:1\n",
    );
    sys
}

#[test]
fn a_device_in_the_database_starts_its_getty_and_its_removal_stops_it() {
    let mut h = Harness::start(with_tty(), "getty");
    h.turn_until("the getty runs", |h| h.state("getty") == UnitState::Running);
    assert_eq!(h.state("dev-ttyS0.device"), UnitState::Running);
    // Its status names its device and the unit it follows.
    let id = h.rt.planner.graph().unit("dev-ttyS0.device").unwrap();
    let link = h.rt.unit_status(id).and_then(|s| s.device).unwrap();
    assert_eq!(link.sysfs_path, TTY);
    assert_eq!(
        link.following.as_deref(),
        Some("sys-devices-platform-serial8250-tty-ttyS0.device")
    );
    assert_eq!(
        h.state("sys-devices-platform-serial8250-tty-ttyS0.device"),
        UnitState::Running
    );
    h.sys().send_uevent(encode(&[
        "ACTION=remove",
        "DEVPATH=/devices/platform/serial8250/tty/ttyS0",
        "DEVNAME=/dev/ttyS0",
    ]));
    h.turn_until("the getty is asked to stop", |h| {
        h.state("getty") == UnitState::Stopping
    });
    h.exit(
        "getty",
        ExitStatus::Signaled {
            signal: 15,
            core_dumped: false,
        },
    );
    h.turn_until("the getty stopped", |h| {
        h.state("getty") != UnitState::Stopping
    });
    for gone in [
        "dev-ttyS0.device",
        "sys-devices-platform-serial8250-tty-ttyS0.device",
    ] {
        assert!(!h.rt.units.in_transient("udev", gone), "{gone}");
    }
}

#[test]
fn a_nic_plugged_starts_what_it_wants() {
    let mut h = Harness::start(with_tty(), "getty");
    h.sys().send_uevent(encode(&[
        "ACTION=add",
        "DEVPATH=/devices/pci0000:00/0000:00:07.0/virtio5/net/ens7",
        "SUBSYSTEM=net",
        "INTERFACE=ens7",
        "ID_MODEL_FROM_DATABASE=Virtio network device",
        "SYSTEMD_ALIAS=/sys/subsystem/net/devices/ens7",
        "SYSTEMD_WANTS=nicup.service",
        "CURRENT_TAGS=:systemd:",
    ]));
    h.turn_until("nicup runs", |h| {
        h.state("nicup.service") == UnitState::Running
    });
    assert_eq!(
        h.state("sys-subsystem-net-devices-ens7.device"),
        UnitState::Running
    );
}

#[test]
fn a_change_of_a_device_keeps_what_binds_to_it_running() {
    let mut h = Harness::start(with_tty(), "getty");
    h.turn_until("the getty runs", |h| h.state("getty") == UnitState::Running);
    let pid = h.pid("getty");
    h.sys().send_uevent(encode(&[
        "ACTION=change",
        "DEVPATH=/devices/platform/serial8250/tty/ttyS0",
        "DEVNAME=/dev/ttyS0",
        "ID_MODEL=16550A",
        "CURRENT_TAGS=:systemd:",
    ]));
    let described = |h: &mut Harness| {
        let id = h.rt.planner.graph().unit("dev-ttyS0.device").unwrap();
        h.rt.unit_status(id).and_then(|s| s.description) == Some("16550A".into())
    };
    h.turn_until("the unit has its new description", described);
    assert_eq!(h.state("getty"), UnitState::Running);
    assert_eq!(h.pid("getty"), pid);
}

/// A kernel module in udev's database (`+module:configfs`, tagged by
/// udev's rules for `sys-kernel-config.mount`) is found at its
/// `/sys/module/` directory, not through `/sys/bus` or `/sys/class`, as
/// sd-device finds it: its unit is there at start and stays through a
/// reload (it had vanished at each reload, and a re-exec was then refused
/// while it was `not-found`).
#[test]
fn a_kernel_module_in_the_database_is_a_device_unit() {
    let sys = with_tty();
    sys.set_file("/run/udev/tags/systemd/+module:configfs", "");
    sys.add_dir("/sys/module/configfs");
    sys.set_file("/sys/module/configfs/uevent", "");
    sys.set_file(
        "/run/udev/data/+module:configfs",
        "G:systemd\nQ:systemd\nV:1\n",
    );
    let mut h = Harness::start(sys, "getty");
    h.turn_until("the getty runs", |h| h.state("getty") == UnitState::Running);
    assert_eq!(h.state("sys-module-configfs.device"), UnitState::Running);
    let r = h.request(Request::Reload { keep_running: true });
    assert!(!matches!(r.last(), Some(Reply::Error { .. })), "{r:?}");
    assert_eq!(h.state("sys-module-configfs.device"), UnitState::Running);
    assert!(h.rt.planner.carry_refusal().is_none());
}
