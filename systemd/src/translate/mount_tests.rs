use super::*;

fn words(c: &Option<Command>) -> Vec<&str> {
    c.as_ref()
        .map(|c| c.argv.iter().collect())
        .unwrap_or_default()
}

fn messages(p: &ParsedUnit) -> Vec<&str> {
    p.diagnostics.iter().map(|d| d.message.as_str()).collect()
}

/// Debian's dev-mqueue.mount as shipped: mount(8) with its type, options
/// and the directory made, umount(8) to stop, skipped when /dev/mqueue is
/// a mount point already, after the mount units above it, and no default
/// dependencies (`DefaultDependencies=no`).
#[test]
fn debian_dev_mqueue_mount() {
    let p = translate_file(
        "/lib/systemd/system/dev-mqueue.mount",
        "dev-mqueue.mount",
        "[Unit]\nDescription=POSIX Message Queue File System\n\
         Documentation=man:mq_overview(7)\nDefaultDependencies=no\nBefore=sysinit.target\n\
         ConditionPathExists=/proc/sys/fs/mqueue\nConditionCapability=CAP_SYS_ADMIN\n\n\
         [Mount]\nWhat=mqueue\nWhere=/dev/mqueue\nType=mqueue\nOptions=nosuid,nodev,noexec\n",
    );
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    let spec = p.spec.expect("loads");
    assert_eq!(spec.kind, UnitType::Oneshot);
    assert_eq!(spec.remain_after_exit, Some(true));
    assert_eq!(
        words(&spec.exec_start),
        [
            "/bin/mount",
            "-t",
            "mqueue",
            "-o",
            "nosuid,nodev,noexec,X-mount.mkdir=0755",
            "mqueue",
            "/dev/mqueue"
        ]
    );
    assert_eq!(words(&spec.exec_stop), ["/bin/umount", "/dev/mqueue"]);
    let settings: Vec<String> = spec.extras.conditions.iter().map(|c| c.setting()).collect();
    assert_eq!(
        settings,
        [
            "ConditionPathExists=/proc/sys/fs/mqueue",
            "ConditionCapability=CAP_SYS_ADMIN",
            "ConditionPathIsMountPoint=!/dev/mqueue"
        ]
    );
    assert_eq!(spec.depends_on, ["-.mount", "dev.mount"]);
    assert_eq!(spec.before, ["sysinit.target"]);
    assert!(spec.after.is_empty(), "{:?}", spec.after);
    assert_eq!(spec.start_timeout, SYSTEMD_DEFAULT_TIMEOUT);
}

/// Every key of [Mount], and systemd's default dependencies of a local
/// file system (a tmpfs also after swap.target).
#[test]
fn every_key_and_default_dependencies() {
    let p = translate_file(
        "f",
        "srv-data.mount",
        "[Mount]\nWhat=tmpfs\nWhere=/srv/data\nType=tmpfs\nOptions=mode=1777,size=1m\n\
         SloppyOptions=yes\nLazyUnmount=yes\nForceUnmount=true\nDirectoryMode=0700\nTimeoutSec=5s\n",
    );
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    let spec = p.spec.expect("loads");
    assert_eq!(
        words(&spec.exec_start),
        [
            "/bin/mount",
            "-s",
            "-t",
            "tmpfs",
            "-o",
            "mode=1777,size=1m,X-mount.mkdir=0700",
            "tmpfs",
            "/srv/data"
        ]
    );
    assert_eq!(
        words(&spec.exec_stop),
        ["/bin/umount", "-l", "-f", "/srv/data"]
    );
    assert_eq!(spec.start_timeout, Duration::from_secs(5));
    assert_eq!(spec.stop_timeout, Duration::from_secs(5));
    assert_eq!(spec.depends_on, ["-.mount", "srv.mount"]);
    assert_eq!(spec.after, ["local-fs-pre.target", "swap.target"]);
    assert_eq!(spec.before, ["local-fs.target", "umount.target"]);
    assert_eq!(spec.conflicts, ["umount.target"]);
    // What the init watches the mount table for, and the bus shows.
    let m = spec.extras.mount.as_deref().expect("its mount");
    assert_eq!(
        (m.place.as_str(), m.what.as_str(), m.fstype.as_str()),
        ("/srv/data", "tmpfs", "tmpfs")
    );
    assert_eq!(m.options, "mode=1777,size=1m");
}

/// A network file system (by its type or `_netdev`) is ordered against
/// the remote-fs targets and the network; `nofail` drops the Before=.
#[test]
fn network_mounts_and_nofail() {
    let p = translate_file(
        "f",
        "mnt-nfs.mount",
        "[Mount]\nWhat=server:/export\nWhere=/mnt/nfs\nType=nfs\nOptions=nofail\n",
    );
    let spec = p.spec.expect("loads");
    assert_eq!(spec.after, ["remote-fs-pre.target", "network.target"]);
    assert_eq!(spec.before, ["umount.target"]);
    assert_eq!(spec.waits_for, ["network-online.target"]);
    let p = translate_file(
        "f",
        "mnt-x.mount",
        "[Mount]\nWhat=/dev/sdb1\nWhere=/mnt/x\nOptions=_netdev\n",
    );
    let spec = p.spec.expect("loads");
    assert_eq!(spec.before, ["remote-fs.target", "umount.target"]);
    assert_eq!(
        words(&spec.exec_start),
        [
            "/bin/mount",
            "-o",
            "_netdev,X-mount.mkdir=0755",
            "/dev/sdb1",
            "/mnt/x"
        ]
    );
}

/// Bad input: each with its error, and no unit.
#[test]
fn bad_mount_units() {
    for (name, text, error) in [
        (
            "srv-data.mount",
            "[Mount]\nWhat=tmpfs\nWhere=/srv/other\n",
            "Where=/srv/other does not match the unit's name srv-data.mount: its mount unit is srv-other.mount",
        ),
        ("srv.mount", "[Mount]\nWhere=/srv\n", "[Mount] has no What="),
        (
            "srv.mount",
            "[Mount]\nWhat=tmpfs\nWhere=srv\n",
            "Where= needs an absolute path, not \"srv\"",
        ),
        (
            "srv.mount",
            "[Mount]\nWhat=tmpfs\nWhere=/srv\nDirectoryMode=rwx\n",
            "invalid DirectoryMode=rwx: not an octal mode",
        ),
        (
            "srv.mount",
            "[Mount]\nWhat=tmpfs\nWhere=/srv\nLazyUnmount=maybe\n",
            "invalid LazyUnmount=maybe: not a boolean",
        ),
    ] {
        let p = translate_file("f", name, text);
        assert!(p.spec.is_none(), "{name}: {text}");
        assert!(
            messages(&p).contains(&error),
            "{name}: {:?}, not {error:?}",
            p.diagnostics
        );
    }
}

/// A [Service] key in a mount and a [Mount] key in a service are warned
/// about; a [Mount] key systemd has and flotilla does not read too.
#[test]
fn keys_of_other_kinds() {
    let p = translate_file(
        "f",
        "srv.mount",
        "[Mount]\nWhat=tmpfs\nWhere=/srv\nReadWriteOnly=yes\n[Service]\nExecStart=/bin/x\n",
    );
    assert!(p.spec.is_some());
    assert_eq!(
        messages(&p),
        [
            "[Mount] ReadWriteOnly= is not supported, ignored",
            "[Service] ExecStart= does not apply to a .mount unit, ignored"
        ]
    );
    let p = translate_file(
        "f",
        "a.service",
        "[Mount]\nWhere=/srv\n[Service]\nExecStart=/bin/x\n",
    );
    assert_eq!(
        messages(&p),
        ["[Mount] Where= does not apply to a .service unit, ignored"]
    );
}

/// systemd.exec(5)'s keys in `[Mount]` are the mount process's context
/// (systemd.mount(5)): systemd's test 33 gives a tmpfs mount its five
/// directories; in a service's `[Mount]` they are still another kind's.
#[test]
fn exec_keys_in_a_mount_are_its_context() {
    let p = translate_file(
        "/run/systemd/system/tmp-hoge.mount",
        "tmp-hoge.mount",
        "[Mount]\nWhat=tmpfs\nType=tmpfs\nConfigurationDirectory=hoge\n\
         RuntimeDirectory=hoge\nStateDirectory=hoge\nCacheDirectory=hoge\nLogsDirectory=hoge\n",
    );
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    let spec = p.spec.expect("loads");
    // No `Where=`: the unit's name says where.
    assert_eq!(
        words(&spec.exec_start),
        [
            "/bin/mount",
            "-t",
            "tmpfs",
            "-o",
            "X-mount.mkdir=0755",
            "tmpfs",
            "/tmp/hoge"
        ]
    );
    let paths: Vec<String> = spec
        .extras
        .context
        .directories
        .paths()
        .into_iter()
        .map(|(_, p, _)| p.display().to_string())
        .collect();
    assert_eq!(
        paths,
        [
            "/run/hoge",
            "/var/lib/hoge",
            "/var/cache/hoge",
            "/var/log/hoge",
            "/etc/hoge"
        ]
    );
    let p = translate_file(
        "f",
        "a.service",
        "[Mount]\nStateDirectory=a\n[Service]\nExecStart=/bin/x\n",
    );
    assert_eq!(
        messages(&p),
        ["[Mount] StateDirectory= does not apply to a .service unit, ignored"]
    );
}

/// `RequiresMountsFor=`: required and ordered after the mount unit of the
/// path and of every directory above it (those that no unit defines count
/// as met in the graph); a relative path is an error.
#[test]
fn requires_mounts_for() {
    let p = translate_file(
        "f",
        "systemd-update-utmp.service",
        "[Unit]\nRequiresMountsFor=/var/log/wtmp /srv\n\
         [Service]\nType=oneshot\nExecStart=/bin/x\n",
    );
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    let spec = p.spec.expect("loads");
    assert_eq!(
        spec.depends_on,
        [
            "-.mount",
            "var.mount",
            "var-log.mount",
            "var-log-wtmp.mount",
            "srv.mount"
        ]
    );
    let p = translate_file(
        "f",
        "a.service",
        "[Unit]\nRequiresMountsFor=var\n[Service]\nExecStart=/bin/x\n",
    );
    assert_eq!(
        messages(&p),
        ["RequiresMountsFor= needs an absolute path, not \"var\""]
    );
    assert_eq!(mounts_for("/"), ["-.mount"]);
    assert_eq!(mounts_for("/a/../b"), Vec::<String>::new());
    // An escaped name is a unit's name as any other, as systemd's.
    assert_eq!(
        mounts_for("/a-b/c"),
        ["-.mount", "a\\x2db.mount", "a\\x2db-c.mount"]
    );
}

#[test]
fn a_mount_point_whose_name_holds_an_escape_is_a_unit() {
    let p = translate_file(
        r"/etc/systemd/system/srv-my\x2ddata.mount",
        r"srv-my\x2ddata.mount",
        "[Mount]\nWhat=tmpfs\nWhere=/srv/my-data\nType=tmpfs\n",
    );
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    let spec = p.spec.expect("loads");
    assert_eq!(spec.name, r"srv-my\x2ddata.mount");
    assert_eq!(words(&spec.exec_start).last(), Some(&"/srv/my-data"));
}
