//! Mount units follow the mount table (`mount_table.rs`): a place mounted
//! by hand makes its unit active without its `mount`, a stop of it then
//! runs its `umount`; unmounted by hand, it is inactive without its
//! `umount`, and stays so; its status says what its file mounts.

use super::*;

const APP: &str = "unit: app\ntype: virtual\n";
const MOUNT: &str = "[Mount]\nWhat=tmpfs\nWhere=/srv/data\nType=tmpfs\nOptions=size=1m\n";
const ROOT: &str = "21 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n";
const DATA: &str = "40 21 0:40 / /srv/data rw,relatime shared:20 - tmpfs tmpfs rw,size=1024k\n";

fn started() -> Harness {
    let sys = fake_with(&[("app", APP)]);
    sys.set_file(format!("{UNITS}/srv-data.mount"), MOUNT);
    sys.set_mount_table(ROOT);
    let mut h = Harness::start(sys, "app");
    h.settle();
    h
}

fn spawned(h: &Harness, argv0: &str) -> usize {
    h.sys()
        .spawns()
        .iter()
        .filter(|s| s.argv.first().map(String::as_str) == Some(argv0))
        .count()
}

#[test]
fn a_place_mounted_by_hand_is_its_units_and_a_stop_unmounts_it() {
    let mut h = started();
    assert_eq!(h.state("srv-data.mount"), UnitState::Disabled);
    h.sys().set_mount_table(&format!("{ROOT}{DATA}"));
    h.turn_until("the mount unit is active", |h| {
        h.state("srv-data.mount") == UnitState::Exited
    });
    assert_eq!(spawned(&h, "/bin/mount"), 0, "mounted by hand, not by it");
    let r = h.request(Request::Status {
        name: Some("srv-data.mount".into()),
    });
    let Some(Reply::Unit(st)) = r.last() else {
        panic!("{r:?}");
    };
    let Some(m) = st.mount.as_ref() else {
        panic!("no mount in its status: {st:?}");
    };
    assert_eq!((m.place.as_str(), m.what.as_str()), ("/srv/data", "tmpfs"));
    assert_eq!(
        (m.fstype.as_str(), m.options.as_str()),
        ("tmpfs", "size=1m")
    );
    let r = h.request(Request::Unwant {
        unit: "srv-data.mount".into(),
    });
    assert!(matches!(r.last(), Some(Reply::Accepted { .. })), "{r:?}");
    h.turn_until("its umount runs", |_| true);
    let umount = spawned_pid(h.sys(), "/bin/umount");
    h.sys().set_mount_table(ROOT);
    h.sys().exit(umount, ExitStatus::Exited(0));
    h.turn_until("the mount unit is inactive", |h| {
        h.state("srv-data.mount") == UnitState::Disabled
    });
}

#[test]
fn a_place_unmounted_by_hand_leaves_its_unit_inactive_until_started() {
    let mut h = started();
    let r = h.request(Request::Want {
        unit: "srv-data.mount".into(),
    });
    assert!(matches!(r.last(), Some(Reply::Accepted { .. })), "{r:?}");
    h.turn_until("its mount runs", |h| {
        h.sys()
            .spawns()
            .iter()
            .any(|s| s.argv.first().map(String::as_str) == Some("/bin/mount"))
    });
    let mount = spawned_pid(h.sys(), "/bin/mount");
    h.sys().set_mount_table(&format!("{ROOT}{DATA}"));
    h.sys().exit(mount, ExitStatus::Exited(0));
    h.turn_until("the mount unit is active", |h| {
        h.state("srv-data.mount") == UnitState::Exited
    });
    h.sys().set_mount_table(ROOT);
    h.turn_until("the mount unit is inactive", |h| {
        h.state("srv-data.mount") == UnitState::Disabled
    });
    h.settle();
    assert_eq!(
        spawned(&h, "/bin/umount"),
        0,
        "unmounted by hand, not by it"
    );
    assert_eq!(spawned(&h, "/bin/mount"), 1, "not mounted again");
    let r = h.request(Request::Want {
        unit: "srv-data.mount".into(),
    });
    assert!(matches!(r.last(), Some(Reply::Accepted { .. })), "{r:?}");
    h.turn_until("its mount runs again", |h| spawned(h, "/bin/mount") == 2);
}
