use super::*;

fn mount(place: &str, what: &str, fstype: &str, options: &str) -> MountParams {
    MountParams {
        place: place.into(),
        what: what.into(),
        fstype: fstype.into(),
        options: options.into(),
    }
}

/// systemd's test 60 (`test_dependencies`): an ext4 of a loop device's
/// partition mounted by hand is local and ordered after its device and
/// its `blockdev@` target; with `_netdev` it is remote; a tmpfs has no
/// device; an NFS unit file not mounted is remote.
#[test]
fn the_tables_mounts_of_systemds_test_60() {
    let ext4 = of_table(&mount(
        "/tmp/deptest",
        "/dev/loop0p1",
        "ext4",
        "rw,relatime",
    ));
    assert_eq!(
        ext4.after,
        [
            "dev-loop0p1.device",
            "blockdev@dev-loop0p1.target",
            "local-fs-pre.target"
        ]
    );
    assert_eq!(ext4.requires, ["dev-loop0p1.device"]);
    assert_eq!(ext4.before, ["local-fs.target", "umount.target"]);
    assert_eq!(ext4.conflicts, ["umount.target"]);
    assert!(ext4.wants.is_empty());

    let netdev = of_table(&mount(
        "/tmp/deptest",
        "/dev/loop1p1",
        "ext4",
        "rw,relatime,_netdev",
    ));
    assert_eq!(
        netdev.after,
        [
            "dev-loop1p1.device",
            "blockdev@dev-loop1p1.target",
            "remote-fs-pre.target",
            "network.target",
            "network-online.target"
        ]
    );
    assert_eq!(netdev.wants, ["network-online.target"]);
    assert_eq!(netdev.before, ["remote-fs.target", "umount.target"]);

    let tmpfs = of_table(&mount("/tmp/deptest", "tmpfs", "tmpfs", "rw"));
    assert_eq!(tmpfs.after, ["local-fs-pre.target", "swap.target"]);
    assert!(tmpfs.requires.is_empty());

    let nfs = default_deps(
        &mount("/tmp/deptest", "192.168.0.1:/tmp/mnt", "nfs", ""),
        false,
    );
    assert_eq!(
        nfs.after,
        [
            "remote-fs-pre.target",
            "network.target",
            "network-online.target"
        ]
    );
}

/// The root, `/usr`, and what is below the API file systems get no
/// default dependencies; `/dev/root`, a bind mount and a source that is
/// no device path get no device; `nofail` drops the `Before=`.
#[test]
fn what_gets_none() {
    let root = of_table(&mount("/", "/dev/vda1", "ext4", "rw"));
    assert_eq!(root, MountDeps::default());
    for place in [
        "/usr",
        "/etc",
        "/proc/fs/nfsd",
        "/sys/kernel/debug",
        "/dev/mqueue",
    ] {
        assert!(is_extrinsic(&mount(place, "x", "x", "")), "{place}");
    }
    for place in ["/devices", "/srv", "/usr/local", "/system"] {
        assert!(!is_extrinsic(&mount(place, "x", "x", "")), "{place}");
    }
    assert!(is_extrinsic(&mount("/srv", "x", "x", "ro,x-initrd.mount")));
    assert_eq!(device_deps(&mount("/srv", "/dev/root", "ext4", "")), None);
    assert_eq!(
        device_deps(&mount("/srv", "/dev/sda1", "none", "bind")),
        None
    );
    assert_eq!(device_deps(&mount("/srv", "server:/x", "nfs", "")), None);
    assert_eq!(
        device_deps(&mount("/srv", "/dev/disk/by-label/data", "ext4", "")),
        Some((
            "dev-disk-by\\x2dlabel-data.device".to_string(),
            Some("blockdev@dev-disk-by\\x2dlabel-data.target".to_string())
        ))
    );
    let nofail = default_deps(&mount("/srv", "/dev/sda1", "ext4", "nofail"), true);
    assert_eq!(nofail.before, ["umount.target"]);
}

#[test]
fn options_as_words_or_with_values() {
    assert!(has_option("rw,_netdev", "_netdev"));
    assert!(has_option("x-initrd.mount=1", "x-initrd.mount"));
    assert!(!has_option("rw,_netdevx", "_netdev"));
    assert!(!has_option("", "_netdev"));
    assert!(is_network(&mount("/m", "h:/", "fuse.sshfs", "")));
    assert!(is_network(&mount("/m", "h:/", "nfs4", "")));
    assert!(!is_network(&mount("/m", "/dev/sda", "ext4", "")));
}
