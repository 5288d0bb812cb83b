//! Transient mounts: what `systemd-mount -t tmpfs tmpfs /tmp/aaa` sends
//! (`What`, `Type`, `Options`; the place is the unit's name).

use super::tests::v;
use super::*;

#[test]
fn a_mount_is_read_as_its_unit_file_and_mounts_where_its_name_says() {
    let props: Props = vec![
        ("Description".to_string(), v("a tmpfs")),
        ("What".to_string(), v("tmpfs")),
        ("Type".to_string(), v("tmpfs")),
        ("Options".to_string(), v("size=1m")),
        ("TimeoutUSec".to_string(), v(5_000_000u64)),
    ];
    let a = asked("tmp-aaa.mount", props, Vec::new()).unwrap();
    assert_eq!(a.unit.description.as_deref(), Some("a tmpfs"));
    assert_eq!(a.unit.extras.collect_mode, Some(CollectMode::Inactive));
    let argv = a.unit.exec_start.as_ref().unwrap().argv.to_vec();
    assert_eq!(argv.first().map(String::as_str), Some("/bin/mount"));
    assert!(argv.contains(&"tmpfs".to_string()), "{argv:?}");
    assert_eq!(argv.last().map(String::as_str), Some("/tmp/aaa"));
    assert!(argv.iter().any(|w| w.starts_with("size=1m")), "{argv:?}");
    assert!(a.unit.remain_after_exit());
    assert_eq!(a.unit.stop_timeout, std::time::Duration::from_secs(5));
}

#[test]
fn what_a_mount_cannot_take_is_named() {
    // No What=: the translator's error, the caller's.
    let e = asked("tmp-aaa.mount", Vec::new(), Vec::new()).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.InvalidArgs");
    assert!(e.message.contains("What="), "{}", e.message);
    // A Where= the name does not say.
    let props: Props = vec![
        ("What".to_string(), v("tmpfs")),
        ("Where".to_string(), v("/srv/other")),
    ];
    let e = asked("tmp-aaa.mount", props, Vec::new()).unwrap_err();
    assert!(e.message.contains("srv-other.mount"), "{}", e.message);
    // `systemd-mount --automount=yes`: an automount flotilla does not make.
    let e = asked("tmp-aaa.automount", Vec::new(), Vec::new()).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.NotSupported");
    assert!(e.message.contains("tmp-aaa.automount"), "{}", e.message);
}
