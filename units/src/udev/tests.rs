//! The udev readers against files and messages as Debian 12's udev (252)
//! writes them on a qemu VM: a virtio disk's partition, a virtio NIC and
//! a serial port.

use super::db::{self, DbId};
use super::device::{unit_name, Device};
use super::monitor::{self, encode as message, Action};

/// `/run/udev/data/b254:1`: the root partition of a virtio disk.
const VDA1: &str = "\
S:disk/by-path/virtio-pci-0000:00:04.0-part1
S:disk/by-partuuid/5d1e2c7b-01
S:disk/by-path/pci-0000:00:04.0-part1
S:disk/by-uuid/2f1a4d57-8a0e-4c47-9cd3-3b6a5e1c3d8a
S:block/254:1
W:3
I:1623470
E:ID_PATH=pci-0000:00:04.0
E:ID_PATH_TAG=pci-0000_00_04_0
E:ID_PART_TABLE_UUID=5d1e2c7b
E:ID_PART_TABLE_TYPE=dos
E:ID_FS_UUID=2f1a4d57-8a0e-4c47-9cd3-3b6a5e1c3d8a
E:ID_FS_UUID_ENC=2f1a4d57-8a0e-4c47-9cd3-3b6a5e1c3d8a
E:ID_FS_VERSION=1.0
E:ID_FS_TYPE=ext4
E:ID_FS_USAGE=filesystem
E:ID_PART_ENTRY_SCHEME=dos
E:ID_PART_ENTRY_UUID=5d1e2c7b-01
E:ID_PART_ENTRY_TYPE=0x83
E:ID_PART_ENTRY_FLAGS=0x80
E:ID_PART_ENTRY_NUMBER=1
E:ID_PART_ENTRY_OFFSET=2048
E:ID_PART_ENTRY_SIZE=4192256
E:ID_PART_ENTRY_DISK=254:0
G:systemd
Q:systemd
V:1
";

/// `/sys/devices/pci0000:00/0000:00:04.0/virtio1/block/vda/vda1/uevent`.
const VDA1_UEVENT: &str =
    "MAJOR=254\nMINOR=1\nDEVNAME=vda1\nDEVTYPE=partition\nDISKSEQ=1\nPARTN=1\n";

/// `/run/udev/data/n2`: a virtio NIC, with ifupdown's hot-plug rule.
const ENS3: &str = "\
I:1618210
E:ID_NET_NAMING_SCHEME=v252
E:ID_NET_NAME_MAC=enx525400123456
E:ID_OUI_FROM_DATABASE=Realtek Semiconductor Corp.
E:ID_NET_NAME_PATH=enp0s3
E:ID_NET_NAME_SLOT=ens3
E:ID_BUS=pci
E:ID_VENDOR_ID=0x1af4
E:ID_MODEL_ID=0x1000
E:ID_PCI_CLASS_FROM_DATABASE=Network controller
E:ID_PCI_SUBCLASS_FROM_DATABASE=Ethernet controller
E:ID_VENDOR_FROM_DATABASE=Red Hat, Inc.
E:ID_MODEL_FROM_DATABASE=Virtio network device
E:ID_PATH=pci-0000:00:03.0
E:ID_PATH_TAG=pci-0000_00_03_0
E:ID_NET_DRIVER=virtio_net
E:ID_NET_LINK_FILE=/usr/lib/systemd/network/99-default.link
E:ID_NET_NAME=ens3
E:SYSTEMD_ALIAS=/sys/subsystem/net/devices/ens3
E:SYSTEMD_WANTS=ifup@.service
G:systemd
Q:systemd
V:1
";

/// The names of `units`, in order.
fn names_of(units: &[super::device::DeviceUnit]) -> Vec<&str> {
    units.iter().map(|u| u.name.as_str()).collect()
}

#[test]
fn ids_name_their_device() {
    assert_eq!(DbId::parse("b254:1"), Some(DbId::Block(254, 1)));
    assert_eq!(DbId::parse("c4:64"), Some(DbId::Char(4, 64)));
    assert_eq!(DbId::parse("n2"), Some(DbId::Net(2)));
    assert_eq!(
        DbId::parse("+input:input0"),
        Some(DbId::Other {
            subsystem: "input".into(),
            sysname: "input0".into()
        })
    );
    assert_eq!(
        DbId::parse("+drm:card0-Virtual!1"),
        Some(DbId::Other {
            subsystem: "drm".into(),
            sysname: "card0-Virtual/1".into()
        })
    );
    for bad in ["", "x1", "b254", "bx:1", "n", "+input", "+:x"] {
        assert_eq!(DbId::parse(bad), None, "{bad:?}");
    }
}

#[test]
fn a_partition_is_named_by_its_path_node_and_links() {
    let r = db::parse(VDA1);
    assert_eq!(r.current_tags, ["systemd"]);
    assert_eq!(r.properties["ID_FS_TYPE"], "ext4");
    let d = Device::from_db(
        "/sys/devices/pci0000:00/0000:00:04.0/virtio1/block/vda/vda1",
        &db::parse_uevent(VDA1_UEVENT),
        r,
    );
    assert!(d.is_ready());
    let units = d.units();
    let names = names_of(&units);
    assert_eq!(
        names,
        [
            "sys-devices-pci0000:00-0000:00:04.0-virtio1-block-vda-vda1.device",
            "dev-vda1.device",
            r"dev-disk-by\x2dpath-virtio\x2dpci\x2d0000:00:04.0\x2dpart1.device",
            r"dev-disk-by\x2dpartuuid-5d1e2c7b\x2d01.device",
            r"dev-disk-by\x2dpath-pci\x2d0000:00:04.0\x2dpart1.device",
            r"dev-disk-by\x2duuid-2f1a4d57\x2d8a0e\x2d4c47\x2d9cd3\x2d3b6a5e1c3d8a.device",
        ]
    );
    // No model: each unit is described by its own path; all follow the
    // one named after the sysfs path.
    assert_eq!(units[1].description, "/dev/vda1");
    assert_eq!(units[0].following, None);
    assert_eq!(units[1].following.as_deref(), Some(names[0]));
    assert!(d.wants().is_empty());
}

#[test]
fn a_nic_has_its_alias_and_wants_its_ifup_instance() {
    let d = Device::from_db(
        "/sys/devices/pci0000:00/0000:00:03.0/virtio0/net/ens3",
        &db::parse_uevent("INTERFACE=ens3\nIFINDEX=2\n"),
        db::parse(ENS3),
    );
    let units = d.units();
    let names = names_of(&units);
    assert_eq!(
        names,
        [
            "sys-devices-pci0000:00-0000:00:03.0-virtio0-net-ens3.device",
            "sys-subsystem-net-devices-ens3.device",
        ]
    );
    assert!(units
        .iter()
        .all(|u| u.description == "Virtio network device"));
    // A `sys-…` alias follows nothing, as systemd's: systemctl lists it.
    assert!(units.iter().all(|u| u.following.is_none()));
    assert_eq!(
        d.wants(),
        ["ifup@sys-devices-pci0000:00-0000:00:03.0-virtio0-net-ens3.service"]
    );
}

#[test]
fn a_device_not_tagged_now_or_not_ready_has_no_unit() {
    let mut r = db::parse(ENS3);
    r.current_tags.clear();
    let d = Device::from_db("/sys/devices/virtual/net/x", &Default::default(), r);
    assert!(!d.is_ready());
    assert!(d.units().is_empty());
    let text = ENS3.replace("E:ID_NET_NAME=ens3\n", "E:SYSTEMD_READY=0\n");
    let d = Device::from_db(
        "/sys/devices/virtual/net/x",
        &Default::default(),
        db::parse(&text),
    );
    assert!(d.is_tagged() && !d.is_ready());
    // A value that is no boolean does not make it not ready.
    let text = ENS3.replace("E:ID_NET_NAME=ens3\n", "E:SYSTEMD_READY=maybe\n");
    let d = Device::from_db(
        "/sys/devices/virtual/net/x",
        &Default::default(),
        db::parse(&text),
    );
    assert!(d.is_ready());
}

#[test]
fn wants_are_mangled_and_descriptions_take_the_label() {
    let mut d = Device {
        syspath: "/sys/devices/platform/serial8250/tty/ttyS1".into(),
        devname: Some("/dev/ttyS1".into()),
        current_tags: vec!["systemd".into()],
        ..Default::default()
    };
    d.properties.insert(
        "SYSTEMD_WANTS".into(),
        "getty@.service  foo /dev/sdb /srv/x.y bar.target".into(),
    );
    assert_eq!(
        d.wants(),
        [
            "getty@sys-devices-platform-serial8250-tty-ttyS1.service",
            "foo.service",
            "dev-sdb.device",
            "srv-x.y.mount",
            "bar.target",
        ]
    );
    assert_eq!(d.description("/dev/ttyS1"), "/dev/ttyS1");
    d.properties
        .insert("ID_MODEL".into(), "QEMU_HARDDISK".into());
    d.properties
        .insert("ID_PART_ENTRY_NUMBER".into(), "2".into());
    assert_eq!(d.description("/dev/sda2"), "QEMU_HARDDISK 2");
    d.properties.insert("ID_FS_LABEL".into(), "boot".into());
    assert_eq!(d.description("/dev/sda2"), "QEMU_HARDDISK boot");
    assert_eq!(unit_name("/a/../b"), None);
}

#[test]
fn a_message_from_udevd_is_read() {
    let m = message(&[
        "ACTION=add",
        "DEVPATH=/devices/pci0000:00/0000:00:07.0/virtio5/net/ens7",
        "SUBSYSTEM=net",
        "INTERFACE=ens7",
        "IFINDEX=3",
        "SEQNUM=2417",
        "USEC_INITIALIZED=95123456",
        "ID_MODEL_FROM_DATABASE=Virtio network device",
        "SYSTEMD_ALIAS=/sys/subsystem/net/devices/ens7",
        "TAGS=:systemd:",
        "CURRENT_TAGS=:systemd:",
    ]);
    let e = monitor::parse(&m).unwrap();
    assert_eq!(e.action, Action::Add);
    assert_eq!(
        e.device.syspath,
        "/sys/devices/pci0000:00/0000:00:07.0/virtio5/net/ens7"
    );
    assert!(e.device.is_ready());
    let names: Vec<String> = e.device.units().into_iter().map(|u| u.name).collect();
    assert_eq!(names[1], "sys-subsystem-net-devices-ens7.device");

    let m = message(&[
        "ACTION=remove",
        "DEVPATH=/devices/virtual/block/loop0",
        "DEVNAME=/dev/loop0",
        "DEVLINKS=/dev/disk/by-id/x /dev/block/7:0",
    ]);
    let e = monitor::parse(&m).unwrap();
    assert_eq!(e.action, Action::Remove);
    assert_eq!(e.device.devname.as_deref(), Some("/dev/loop0"));
    assert_eq!(e.device.symlinks, ["/dev/disk/by-id/x", "/dev/block/7:0"]);
    assert!(!e.device.is_tagged());

    // The kernel's own message, a wrong magic, a cut message: not read.
    assert_eq!(monitor::parse(b"add@/devices/x\0ACTION=add\0"), None);
    let mut bad = message(&["ACTION=add", "DEVPATH=/devices/x"]);
    bad[8] = 0;
    assert_eq!(monitor::parse(&bad), None);
    let cut = message(&["ACTION=add", "DEVPATH=/devices/x"]);
    assert_eq!(monitor::parse(&cut[..cut.len() - 3]), None);
    assert_eq!(monitor::parse(&message(&["DEVPATH=/devices/x"])), None);
}

#[test]
fn every_name_of_a_plugged_device_is_a_unit_escapes_included() {
    let d = Device::from_db(
        "/sys/devices/pci0000:00/0000:00:04.0/virtio1/block/vda/vda1",
        &db::parse_uevent(VDA1_UEVENT),
        db::parse(VDA1),
    );
    let specs = super::units::specs([&d]);
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(
        names.contains(
            &r"dev-disk-by\x2duuid-2f1a4d57\x2d8a0e\x2d4c47\x2d9cd3\x2d3b6a5e1c3d8a.device"
        ),
        "{names:?}"
    );
    for s in specs {
        let name = s.name.clone();
        let checked = crate::keys::validate(s);
        assert!(checked.is_ok(), "{name}: {checked:?}");
    }
}
