//! The mount plan's rules, each on a small context.

use super::*;

#[test]
fn what_hides_a_path() {
    let tmp = Some(Path::new("/run/flotilla/private/u"));
    let p = plan(&ctx(&[("PrivateTmp", "yes")]), tmp);
    let sock = Path::new("/tmp/flotilla-x/notify/1");
    assert_eq!(hidden_by(&p, sock).map(|e| e.key), Some(Key::PrivateTmp));
    assert!(hidden_by(&p, Path::new("/run/init/notify/1")).is_none());
    assert!(hidden_by(&p, Path::new("/tmpx/notify/1")).is_none());
    // Read-only is still there; a deeper ReadWritePaths= under an
    // inaccessible tree puts it back.
    let p = plan(&ctx(&[("ProtectSystem", "strict")]), None);
    assert!(hidden_by(&p, sock).is_none());
    let p = plan(
        &ctx(&[
            ("InaccessiblePaths", "/srv"),
            ("ReadWritePaths", "/srv/run"),
        ]),
        None,
    );
    assert_eq!(
        hidden_by(&p, Path::new("/srv/x")).map(|e| e.key),
        Some(Key::InaccessiblePaths)
    );
    assert!(hidden_by(&p, Path::new("/srv/run/notify/1")).is_none());
}

fn ctx(pairs: &[(&str, &str)]) -> ServiceContext {
    let mut c = ServiceContext::default();
    for (k, v) in pairs {
        c.set(Key::from_name(k).unwrap(), v).unwrap();
    }
    c
}

fn show(plan: &[MountEntry]) -> Vec<String> {
    plan.iter()
        .map(|e| {
            let opt = if e.optional { "-" } else { "" };
            format!("{opt}{} {:?}", e.path.display(), e.kind)
        })
        .collect()
}

/// systemd's TEST-49 unit: the private `/tmp` first, then the file
/// bound into it; a read-only bind; a missing optional source kept as
/// optional.
#[test]
fn binds_come_after_the_private_tmp_they_land_in() {
    let c = ctx(&[
        ("PrivateTmp", "yes"),
        ("BindPaths", "/run/testservice-49-fixed:/tmp/testfile_fixed"),
        ("BindReadOnlyPaths", "-/srv/conf:/etc/app:norbind"),
        ("InaccessiblePaths", "/run/inaccessible"),
    ]);
    assert_eq!(
        show(&plan(&c, Some(Path::new("/run/flotilla/private/u")))),
        [
            "-/etc/app Bind { source: \"/srv/conf\", read_only: true, no_recursive: true }",
            "/run/inaccessible Inaccessible",
            "/tmp Bind { source: \"/run/flotilla/private/u/tmp\", read_only: false, no_recursive: false }",
            "/tmp/testfile_fixed Bind { source: \"/run/testservice-49-fixed\", read_only: false, no_recursive: false }",
            "/var/tmp Bind { source: \"/run/flotilla/private/u/var-tmp\", read_only: false, no_recursive: false }",
        ]
    );
}

/// systemd's TEST-34: the state directory is put back on the tmpfs
/// over its base, and the links its words ask for go into the tmpfs
/// (a dynamic user's link to its `private/` directory too); a link
/// whose place the tmpfs does not cover is the host's.
#[test]
fn a_temporary_file_system_holds_the_units_links() {
    let c = ctx(&[
        ("StateDirectory", "zzz:xxx zzz:xxx2"),
        ("CacheDirectory", "c:d"),
        ("TemporaryFileSystem", "/var/lib:ro"),
    ]);
    let p = plan(&c, None);
    assert_eq!(
        p.iter()
            .map(|e| e.path.display().to_string())
            .collect::<Vec<_>>(),
        ["/var/lib", "/var/lib/zzz"]
    );
    let MountKind::Tmpfs { mount, links } = &p[0].kind else {
        panic!("{p:?}")
    };
    assert!(mount.read_only);
    let links: Vec<String> = links
        .iter()
        .map(|l| format!("{} -> {}", l.path.display(), l.target.display()))
        .collect();
    assert_eq!(links, ["/var/lib/xxx -> zzz", "/var/lib/xxx2 -> zzz"]);
    assert_eq!(tmpfs_holding(&p, Path::new("/var/cache/d")), None);
    assert_eq!(tmpfs_holding(&p, Path::new("/var/lib/zzz/x")), None);

    let mut c = c.clone();
    c.directories.private = true;
    let p = plan(&c, None);
    let at = p
        .iter()
        .position(|e| e.path == Path::new("/var/lib"))
        .unwrap();
    let MountKind::Tmpfs { links, .. } = &p[at].kind else {
        panic!("{p:?}")
    };
    assert_eq!(links.len(), 3);
    assert_eq!(links[0].path, PathBuf::from("/var/lib/zzz"));
    assert_eq!(links[0].target, PathBuf::from("private/zzz"));
    assert_eq!(
        show(&p[at + 1..]),
        [
            "/var/lib/private EmptyTmpfs(493)",
            "/var/lib/private/zzz Keep"
        ]
    );
}

#[test]
fn nothing_without_sandbox_keys() {
    assert!(plan(&ctx(&[("NoNewPrivileges", "yes")]), None).is_empty());
    assert!(plan(&ctx(&[("StateDirectory", "foo")]), None).is_empty());
}

#[test]
fn protect_system_levels() {
    assert_eq!(
        show(&plan(&ctx(&[("ProtectSystem", "full")]), None)),
        [
            "-/boot ReadOnly",
            "-/efi ReadOnly",
            "/etc ReadOnly",
            "/usr ReadOnly"
        ]
    );
    // strict: everything read-only, the API file systems as they were;
    // the home directories too, since nothing protects them.
    assert_eq!(
        show(&plan(&ctx(&[("ProtectSystem", "strict")]), None)),
        [
            "/ ReadOnly",
            "/dev Keep",
            "-/home Keep",
            "/proc Keep",
            "-/root Keep",
            "-/run/user Keep",
            "/sys Keep"
        ]
    );
}

/// A dynamic user's directories: the `private/` roots are covered by
/// an empty tmpfs the service may search, its own directories put back
/// on it; even without another sandbox key (the 0700 root would keep
/// the service out).
#[test]
fn private_directories_are_reached_through_an_empty_root() {
    let mut c = ctx(&[
        ("StateDirectory", "svc"),
        ("LogsDirectory", "svc"),
        ("ConfigurationDirectory", "svc"),
    ]);
    assert!(plan(&c, None).is_empty());
    c.directories.private = true;
    assert_eq!(
        show(&plan(&c, None)),
        [
            "/var/lib/private EmptyTmpfs(493)",
            "/var/lib/private/svc Keep",
            "/var/log/private EmptyTmpfs(493)",
            "/var/log/private/svc Keep",
        ]
    );
    let c2 = {
        let mut c2 = c.clone();
        c2.set(Key::from_name("ProtectSystem").unwrap(), "strict")
            .unwrap();
        c2
    };
    let p = show(&plan(&c2, None));
    assert_eq!(p.first().map(String::as_str), Some("/ ReadOnly"));
    assert!(
        p.contains(&"/var/lib/private/svc Keep".to_string()),
        "{p:?}"
    );
    assert!(!p.iter().any(|e| e.starts_with("/var/lib/svc")), "{p:?}");
}

#[test]
fn a_redis_like_sandbox() {
    let c = ctx(&[
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
        ("PrivateDevices", "yes"),
        ("ProtectKernelTunables", "yes"),
        ("ProtectControlGroups", "yes"),
        (
            "ReadWritePaths",
            "-/var/lib/redis -/var/log/redis -/run/redis",
        ),
        ("RuntimeDirectory", "redis"),
        ("InaccessiblePaths", "/var/lib/redis/secret"),
    ]);
    let p = plan(&c, Some(Path::new("/run/flotilla/private/redis")));
    assert_eq!(
        show(&p),
        [
            "/ ReadOnly",
            "/dev PrivateDev",
            "-/home Inaccessible",
            "/proc Keep",
            "-/proc/acpi ReadOnly",
            "-/proc/apm ReadOnly",
            "-/proc/asound ReadOnly",
            "-/proc/bus ReadOnly",
            "-/proc/fs ReadOnly",
            "-/proc/irq ReadOnly",
            "-/proc/kallsyms Inaccessible",
            "-/proc/kcore Inaccessible",
            "-/proc/latency_stats ReadOnly",
            "-/proc/mtrr ReadOnly",
            "-/proc/scsi ReadOnly",
            "-/proc/sys ReadOnly",
            "-/proc/sysrq-trigger ReadOnly",
            "-/proc/timer_stats ReadOnly",
            "-/root Inaccessible",
            "/run/redis Keep",
            "-/run/user Inaccessible",
            "/sys ReadOnly",
            "/sys/fs/cgroup ReadOnly",
            "-/sys/fs/selinux Keep",
            "-/sys/kernel/debug ReadOnly",
            "-/sys/kernel/tracing ReadOnly",
            "/tmp Bind { source: \"/run/flotilla/private/redis/tmp\", read_only: false, no_recursive: false }",
            "-/var/lib/redis Keep",
            "/var/lib/redis/secret Inaccessible",
            "-/var/log/redis Keep",
            "/var/tmp Bind { source: \"/run/flotilla/private/redis/var-tmp\", read_only: false, no_recursive: false }",
        ]
    );
    // The runtime directory is both explicit and implicit: the
    // required entry (the init makes it) wins over the optional one.
    let run = p
        .iter()
        .find(|e| e.path == Path::new("/run/redis"))
        .unwrap();
    assert!(!run.optional);
}

#[test]
fn home_levels_and_kernel_keys() {
    assert_eq!(
        show(&plan(&ctx(&[("ProtectHome", "tmpfs")]), None)),
        [
            "-/home EmptyTmpfs(493)",
            "-/root EmptyTmpfs(448)",
            "-/run/user EmptyTmpfs(493)"
        ]
    );
    assert_eq!(
        show(&plan(
            &ctx(&[
                ("ProtectKernelModules", "yes"),
                ("ProtectKernelLogs", "yes")
            ]),
            None
        )),
        [
            "-/dev/kmsg Inaccessible",
            "-/lib/modules Inaccessible",
            "-/proc/kmsg Inaccessible",
            "-/usr/lib/modules Inaccessible"
        ]
    );
    assert_eq!(
        show(&plan(&ctx(&[("ProtectHostname", "yes")]), None)),
        [
            "/proc/sys/kernel/domainname ReadOnly",
            "/proc/sys/kernel/hostname ReadOnly"
        ]
    );
    // Under ProcSubset=pid there is no /proc/sys to protect.
    assert_eq!(
        show(&plan(
            &ctx(&[("ProtectHostname", "yes"), ("ProcSubset", "pid")]),
            None
        )),
        ["/proc Proc(\"subset=pid\")"]
    );
    // PrivateTmp without a directory from the init plans nothing for it.
    assert!(plan(&ctx(&[("PrivateTmp", "yes")]), None).is_empty());
}

#[test]
fn exec_entries_come_last_and_change_only_execution() {
    // Debian's redis-server.service.
    let c = ctx(&[
        ("ProtectSystem", "full"),
        ("NoExecPaths", "/"),
        ("ExecPaths", "/usr/bin/redis-server /usr/lib /lib"),
        ("ReadOnlyPaths", "/usr/lib"),
    ]);
    assert_eq!(
        show(&plan(&c, None)),
        [
            "-/boot ReadOnly",
            "-/efi ReadOnly",
            "/etc ReadOnly",
            "/usr ReadOnly",
            "/usr/lib ReadOnly",
            "/ NoExec",
            "/lib Exec",
            "/usr/bin/redis-server Exec",
            "/usr/lib Exec",
        ]
    );
    // A path in both lists is not executable; `-` is kept.
    let c = ctx(&[("ExecPaths", "-/opt /srv"), ("NoExecPaths", "/srv")]);
    assert_eq!(show(&plan(&c, None)), ["-/opt Exec", "/srv NoExec"]);
    assert!(c.needs_mount_namespace());
}

#[test]
fn the_most_restrictive_entry_per_path_wins() {
    let c = ctx(&[
        ("ReadWritePaths", "/srv"),
        ("ReadOnlyPaths", "/srv"),
        ("InaccessiblePaths", "-/opt"),
        ("ReadOnlyPaths", "/opt"),
    ]);
    assert_eq!(
        show(&plan(&c, None)),
        ["-/opt Inaccessible", "/srv ReadOnly"]
    );
    // An explicit ReadWritePaths= with nothing above it stays (its path
    // must exist), an implicit one goes.
    let c = ctx(&[("ReadWritePaths", "/srv"), ("ProtectSystem", "yes")]);
    assert_eq!(
        show(&plan(&c, None)),
        [
            "-/boot ReadOnly",
            "-/efi ReadOnly",
            "/srv Keep",
            "/usr ReadOnly"
        ]
    );
}

/// `LogNamespace=`: the namespace's sockets, read-only, where the
/// system journal's are, alone and under `ProtectSystem=strict` (after
/// the read-only `/`, so that its own read-only bind lands on it).
#[test]
fn a_log_namespace_binds_its_directory_on_the_journals() {
    let bind = "/run/systemd/journal Bind { source: \"/run/systemd/journal.foobar\", \
                read_only: true, no_recursive: false }";
    let c = ctx(&[("LogNamespace", "foobar")]);
    assert_eq!(show(&plan(&c, None)), [bind]);
    assert_eq!(plan(&c, None)[0].key, Key::LogNamespace);
    let c = ctx(&[("LogNamespace", "foobar"), ("ProtectSystem", "strict")]);
    let p = show(&plan(&c, None));
    assert_eq!(p.first().map(String::as_str), Some("/ ReadOnly"));
    assert!(p.iter().any(|e| e == bind), "{p:?}");
    assert!(plan(&ctx(&[("LogNamespace", "")]), None).is_empty());
}
