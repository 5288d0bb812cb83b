//! Device units (docs/systemd-units.md, "Device units"): the init makes a
//! `virtual` unit of each name of each plugged device and wants it; a
//! dependency on a device waits until it is plugged while udev runs, and
//! counts as met where it does not; a device gone stops what binds to it.

use super::*;
use flotilla_units::graph::Shape;
use flotilla_units::udev::{self, Device};
use std::sync::Arc;

/// A systemd unit's origin: the rule that a missing `.device` counts as
/// met (or not) is for systemd units.
fn systemd_origin(name: &str) -> Origin {
    Origin::at(format!("/usr/lib/systemd/system/{name}"), Pos::new(1, 1))
}

/// `BindsTo=` and `After=` `dev` (a hard dependency and a stop
/// propagated from it).
fn bound(name: &str, dev: &str) -> UnitSpec {
    with(spec(name, UnitType::ForegroundSupervised), |s| {
        s.depends_on = names(&[dev]);
        s.extras.stop_propagated_from = names(&[dev]);
    })
}

fn units(devices: &[Device]) -> Vec<(UnitSpec, Origin)> {
    let mut v = vec![
        spec("systemd-udevd.service", UnitType::Virtual),
        with(spec("multi-user.target", UnitType::Virtual), |s| {
            s.wants = names(&["serial-getty@ttyS0.service", "systemd-udevd.service"])
        }),
        bound("serial-getty@ttyS0.service", "dev-ttyS0.device"),
        bound("ifup@ens7.service", "sys-subsystem-net-devices-ens7.device"),
    ];
    v.extend(udev::units::specs(devices));
    v.into_iter()
        .map(|s| {
            let o = systemd_origin(&s.name);
            (s, o)
        })
        .collect()
}

fn device(syspath: &str, devname: Option<&str>, props: &[(&str, &str)]) -> Device {
    Device {
        syspath: syspath.into(),
        devname: devname.map(str::to_string),
        properties: props
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        current_tags: vec!["systemd".into()],
        ..Default::default()
    }
}

fn tty() -> Device {
    device(
        "/sys/devices/platform/serial8250/tty/ttyS0",
        Some("/dev/ttyS0"),
        &[],
    )
}

fn nic() -> Device {
    device(
        "/sys/devices/pci0000:00/0000:00:07.0/virtio5/net/ens7",
        None,
        &[
            ("SYSTEMD_ALIAS", "/sys/subsystem/net/devices/ens7"),
            ("SYSTEMD_WANTS", "ifup@ens7.service"),
        ],
    )
}

fn world(devices: bool, plugged: &[Device]) -> World {
    let shape = Arc::new(Shape {
        devices,
        ..Shape::default()
    });
    let (g, diags) = Graph::build_strict_shaped(units(plugged), Vec::new(), shape).unwrap();
    assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
    let mut w = World::with_graph(g, "multi-user.target");
    w.want_devices(plugged);
    w
}

impl World {
    /// The devices become `plugged`, as the init applies udev's word: the
    /// set again, and each device unit wanted.
    fn plug(&mut self, plugged: &[Device]) {
        let shape = self.p.graph().shape().clone();
        self.p
            .replace_shaped(units(plugged), shape, true, OnChange::Keep, self.now)
            .unwrap();
        self.want_devices(plugged);
    }

    fn want_devices(&mut self, plugged: &[Device]) {
        for s in udev::units::specs(plugged) {
            self.p.want(&s.name, WantLife::Kept, self.now).unwrap();
        }
        self.settle();
    }
}

#[test]
fn a_unit_bound_to_a_device_waits_until_it_is_plugged() {
    let mut w = world(true, &[]);
    assert_eq!(w.state("serial-getty@ttyS0.service"), UnitState::Waiting);
    assert!(w.starts().is_empty());
    w.plug(&[tty()]);
    assert_eq!(w.state("dev-ttyS0.device"), UnitState::Running);
    assert_eq!(
        w.state("sys-devices-platform-serial8250-tty-ttyS0.device"),
        UnitState::Running
    );
    assert_eq!(w.state("serial-getty@ttyS0.service"), UnitState::Running);
}

#[test]
fn without_udev_a_device_dependency_counts_as_met() {
    // No udev here (a container): as before device units, the getty runs.
    let w = world(false, &[]);
    assert_eq!(w.state("serial-getty@ttyS0.service"), UnitState::Running);
    // Nor when the graph has no udevd to make them.
    let shape = Arc::new(Shape {
        devices: true,
        ..Shape::default()
    });
    let mut us = units(&[]);
    us.retain(|(s, _)| s.name != "systemd-udevd.service");
    for (s, _) in &mut us {
        s.wants.retain(|n| n != "systemd-udevd.service");
    }
    let (g, _) = Graph::build_strict_shaped(us, Vec::new(), shape).unwrap();
    let w = World::with_graph(g, "multi-user.target");
    assert_eq!(w.state("serial-getty@ttyS0.service"), UnitState::Running);
}

#[test]
fn a_plugged_device_starts_what_it_wants_and_its_removal_stops_what_binds_to_it() {
    let mut w = world(true, &[tty()]);
    assert_eq!(w.state("ifup@ens7.service"), UnitState::Disabled);
    w.plug(&[tty(), nic()]);
    let main = "sys-devices-pci0000:00-0000:00:07.0-virtio5-net-ens7.device";
    assert_eq!(w.state(main), UnitState::Running);
    assert_eq!(
        w.state("sys-subsystem-net-devices-ens7.device"),
        UnitState::Running
    );
    assert_eq!(w.state("ifup@ens7.service"), UnitState::Running);
    w.plug(&[tty()]);
    assert!(w
        .events
        .contains(&Event::Signal("ifup@ens7.service".into(), 15)));
    assert_eq!(w.state("ifup@ens7.service"), UnitState::Disabled);
    assert_eq!(w.state("serial-getty@ttyS0.service"), UnitState::Running);
}
