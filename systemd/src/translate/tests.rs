use super::*;

/// Every key of the translator's own (`rules::OWN`) and every twin of a
/// YAML key is read: none of them gets the generic warning, and a key
/// outside both does.
#[test]
fn handled_keys_are_read() {
    let twins = keys::KEYS.iter().flat_map(|k| k.systemd.iter().copied());
    let own = rules::OWN.iter().map(|&(sec, key, _)| (sec, key));
    for (sec, key) in own.chain(twins) {
        let text = format!("[{sec}]\n{key}=\n[Service]\nExecStart=/bin/x\n");
        let p = translate_file("f", "a.service", &text);
        let generic = format!("[{sec}] {key}= is not supported, ignored");
        assert!(
            p.diagnostics.iter().all(|d| d.message != generic),
            "{sec} {key}: {:?}",
            p.diagnostics
        );
    }
    let p = translate_file(
        "f",
        "a.service",
        "[Service]\nExecStart=/bin/x\nFileDescriptorStorePreserve=yes\n",
    );
    assert_eq!(
        p.diagnostics[0].message,
        "[Service] FileDescriptorStorePreserve= is not supported, ignored"
    );
}

/// `SendSIGKILL=no` is read into the service's context; `yes`, as the
/// default, leaves it as a unit without the key.
#[test]
fn send_sigkill() {
    let read = |v: &str| {
        let text = format!("[Service]\nExecStart=/bin/x\nSendSIGKILL={v}\n");
        let p = translate_file("f", "a.service", &text);
        assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
        p.spec.expect("loads").extras.context.no_sigkill
    };
    assert!(read("no"));
    assert!(!read("yes"));
}

/// `SuccessAction=`/`FailureAction=`: Debian's systemd-poweroff.service
/// (no `[Service]` at all) is a unit with no process whose coming up
/// powers off; a oneshot's actions are kept; a bad value is an error.
#[test]
fn system_actions() {
    use flotilla_units::spec::UnitAction;
    use flotilla_units::state::UnitState;
    let p = translate_file(
        "f",
        "systemd-poweroff.service",
        "[Unit]\nDescription=System Power Off\nDefaultDependencies=no\n\
         Requires=shutdown.target umount.target final.target\n\
         After=shutdown.target umount.target final.target\nSuccessAction=poweroff-force\n",
    );
    let spec = p.spec.expect("loads");
    assert_eq!(spec.kind, UnitType::Virtual);
    assert_eq!(spec.extras.success_action, Some(UnitAction::Poweroff));
    assert_eq!(
        spec.action_on(UnitState::Running, false),
        Some(UnitAction::Poweroff)
    );
    let p = translate_file(
        "f",
        "update.service",
        "[Unit]\nFailureAction=reboot\nSuccessAction=exit\n[Service]\nType=oneshot\nExecStart=/bin/x\n",
    );
    let spec = p.spec.expect("loads");
    assert_eq!(spec.kind, UnitType::Oneshot);
    assert_eq!(
        spec.action_on(UnitState::Exited, false),
        Some(UnitAction::Exit)
    );
    assert_eq!(spec.action_on(UnitState::Running, false), None);
    assert_eq!(spec.action_on(UnitState::Failed, true), None, "restarting");
    assert_eq!(
        spec.action_on(UnitState::Failed, false),
        Some(UnitAction::Reboot)
    );
    for (value, error) in [
        (
            "kexec",
            "invalid SuccessAction=kexec: `kexec`: flotilla has no kexec",
        ),
        (
            "shutdown",
            "invalid SuccessAction=shutdown: `shutdown` is not an action",
        ),
        ("exit-immediate", "`exit-immediate` is not an action"),
    ] {
        let p = translate_file(
            "f",
            "a.service",
            &format!("[Unit]\nSuccessAction={value}\n[Service]\nExecStart=/bin/x\n"),
        );
        assert!(
            p.diagnostics.iter().any(|d| d.message.contains(error)),
            "{value}: {:?}",
            p.diagnostics
        );
    }
    assert_eq!(UnitAction::parse("none"), Ok(None));
    assert_eq!(
        UnitAction::parse("halt-immediate"),
        Ok(Some(UnitAction::Halt))
    );
}

/// `StartLimitIntervalSec=`/`StartLimitBurst=` in `[Unit]` (and the old
/// `[Service]` names): the other half takes systemd's default; `0` is no
/// limit (Debian's modprobe@.service), without a warning; a bad value is
/// an error naming the key.
#[test]
fn start_limits() {
    use std::time::Duration;
    let limit = |text: &str| {
        let p = translate_file("f", "a.service", text);
        assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
        p.spec.expect("loads").start_limit()
    };
    assert_eq!(
        limit("[Unit]\nStartLimitBurst=3\n[Service]\nExecStart=/bin/x\n"),
        Some((Duration::from_secs(10), 3))
    );
    assert_eq!(
        limit("[Unit]\nStartLimitIntervalSec=1min\n[Service]\nExecStart=/bin/x\n"),
        Some((Duration::from_secs(60), 5))
    );
    assert_eq!(
        limit("[Service]\nStartLimitInterval=5s\nStartLimitBurst=2\nExecStart=/bin/x\n"),
        Some((Duration::from_secs(5), 2))
    );
    assert_eq!(
        limit("[Unit]\nStartLimitIntervalSec=0\n[Service]\nExecStart=/bin/x\n"),
        None
    );
    assert_eq!(limit("[Service]\nExecStart=/bin/x\n"), None);
    let p = translate_file(
        "f",
        "a.service",
        "[Unit]\nStartLimitBurst=many\n[Service]\nExecStart=/bin/x\n",
    );
    assert!(p.spec.is_none());
    assert!(
        p.diagnostics[0]
            .message
            .starts_with("invalid StartLimitBurst=many: "),
        "{:?}",
        p.diagnostics
    );
}

/// `PermissionsStartOnly=true` (Debian's etcd.service): every command but
/// `ExecStart=` runs with full privileges, as with a `+` prefix; a `!`
/// prefix keeps its own meaning.
#[test]
fn permissions_start_only() {
    use flotilla_units::spec::Privileges;
    let p = translate_file(
        "f",
        "etcd.service",
        "[Service]\nUser=etcd\nPermissionsStartOnly=true\nExecStartPre=/bin/mkdir -p /run/etcd\n\
         ExecStartPre=!/bin/chown etcd /run/etcd\nExecStart=/usr/bin/etcd\nExecStop=/bin/kill $MAINPID\n",
    );
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    let spec = p.spec.expect("loads");
    let pre: Vec<Privileges> = spec.exec_start_pre.iter().map(|c| c.privileges).collect();
    assert_eq!(pre, [Privileges::Full, Privileges::NoUserChange]);
    assert_eq!(spec.exec_stop.map(|c| c.privileges), Some(Privileges::Full));
    assert_eq!(
        spec.exec_start.map(|c| c.privileges),
        Some(Privileges::Unit)
    );
    let p = translate_file(
        "f",
        "a.service",
        "[Service]\nPermissionsStartOnly=maybe\nExecStart=/bin/x\n",
    );
    assert_eq!(
        p.diagnostics[0].message,
        "invalid PermissionsStartOnly=maybe: not a boolean"
    );
}

/// A `.socket` orders its service after it; one whose every `Listen…=`
/// is of a kind flotilla cannot make loads with a warning for each (its
/// start says why it cannot run); one with no `Listen…=` at all is
/// refused.
#[test]
fn sockets_order_their_service_and_unsupported_listen_kinds_load() {
    let p = translate_file("f", "web.socket", "[Socket]\nListenStream=80\n");
    let spec = p.spec.expect("loads");
    assert_eq!(spec.extras.triggers, ["web.service"]);
    assert_eq!(spec.before, ["web.service"]);
    let p = translate_file("f", "q.socket", "[Socket]\nListenMessageQueue=/q\n");
    assert!(p.spec.is_some(), "{:?}", p.diagnostics);
    assert_eq!(
        p.diagnostics
            .iter()
            .map(|d| d.message.as_str())
            .collect::<Vec<_>>(),
        ["[Socket] ListenMessageQueue= is not supported, ignored"]
    );
    // Netlink and special files are kinds of their own; Symlinks= wants
    // one socket file, Writable= a special file.
    let p = translate_file(
        "f",
        "k.socket",
        "[Socket]\nListenNetlink=kobject-uevent 1\nListenSpecial=/dev/null\nWritable=yes\n\
         PassPacketInfo=yes\nTimestamping=us\n",
    );
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    let spec = p.spec.expect("loads");
    let s = spec.socket().unwrap();
    let lines: Vec<String> = s.listen.iter().map(ToString::to_string).collect();
    assert_eq!(lines, ["netlink kobject-uevent 1", "special /dev/null"]);
    let json = serde_json::to_string(&spec).unwrap();
    let back: flotilla_units::spec::UnitSpec = serde_json::from_str(&json).unwrap();
    assert_eq!(back, spec, "{json}");
    let p = translate_file(
        "f",
        "l.socket",
        "[Socket]\nListenStream=/run/a\nListenStream=/run/b\nSymlinks=/dev/log\n",
    );
    assert!(p.spec.is_none());
    assert!(
        p.diagnostics.iter().any(|d| d.message.contains(
            "Symlinks= needs exactly one Listen…= line, a unix socket in the file system or a FIFO"
        )),
        "{:?}",
        p.diagnostics
    );
    let p = translate_file(
        "f",
        "n.socket",
        "[Socket]\nListenNetlink=kobject-uevents 1\n",
    );
    assert!(p.spec.is_none());
    assert!(
        p.diagnostics.iter().any(|d| d
            .message
            .contains("\"kobject-uevents\" is not a netlink family")),
        "{:?}",
        p.diagnostics
    );
    let p = translate_file("f", "n.socket", "[Socket]\nBacklog=5\n");
    assert!(p.spec.is_none());
    assert!(p
        .diagnostics
        .iter()
        .any(|d| d.message.contains("a socket unit needs ListenStream=")));
}

/// A dependency on a kind flotilla does not run (slices.target wants the
/// slices) is left out with a warning: nothing would ever provide it. A
/// `.mount` and a `.device` are kept (Debian's serial-getty@.service binds
/// to its device: a unit may provide them; the graph counts one that none
/// does as met, a device only while udev does not run).
#[test]
fn dependencies_on_slices_are_left_out_and_on_devices_kept() {
    let p = translate_file(
        "f",
        "serial-getty@ttyS0.service",
        "[Unit]\nBindsTo=dev-ttyS0.device\nAfter=dev-ttyS0.device\n\
         Wants=system.slice tmp.mount getty-pre.target\nRequires=x.swap\n\
         [Service]\nExecStart=/sbin/agetty - vt220\n",
    );
    let spec = p.spec.as_ref().expect("a unit");
    let all: Vec<&String> = spec
        .depends_on
        .iter()
        .chain(&spec.waits_for)
        .chain(&spec.wants)
        .chain(&spec.requires)
        .collect();
    assert_eq!(
        all,
        ["dev-ttyS0.device", "tmp.mount", "getty-pre.target"],
        "{spec:?}"
    );
    let warnings: Vec<&str> = p.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        warnings,
        [
            "Wants=system.slice: flotilla runs no .slice units, left out",
            "Requires=x.swap: flotilla runs no .swap units, left out",
        ]
    );
}

/// The credential, exec-path, user-namespace and IPC keys of
/// `systemd.exec(5)` reach the context, from a `.service` file and from
/// their YAML twins alike; the encrypted credentials are errors.
#[test]
fn credentials_exec_paths_private_users_and_remove_ipc() {
    use flotilla_units::context::credentials::Source;
    let text = "[Service]\nExecStart=/usr/bin/redis-server\nUser=redis\n\
                LoadCredential=tls.key:/etc/ssl/private/redis.pem\n\
                LoadCredential=sysctl.extra\nSetCredential=user:redis\n\
                PrivateUsers=true\nRemoveIPC=true\nNoExecPaths=/\n\
                ExecPaths=/usr/bin/redis-server /usr/lib /lib\n";
    let p = translate_file("f", "redis.service", text);
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    let from_ini = p.spec.unwrap().extras.context.clone();
    let yaml = "unit: redis\ntype: foreground-supervised\nexec-start: /usr/bin/redis-server\n\
                user: redis\n\
                load-credential: [\"tls.key:/etc/ssl/private/redis.pem\", sysctl.extra]\n\
                set-credential: \"user:redis\"\nprivate-users: yes\nremove-ipc: yes\n\
                no-exec-paths: [/]\nexec-paths: [/usr/bin/redis-server, /usr/lib, /lib]\n\
                standard-output: journal\n";
    let y = flotilla_units::load::parse_yaml("redis.yaml", yaml);
    assert!(y.diagnostics.is_empty(), "{:?}", y.diagnostics);
    let from_yaml = y.spec.unwrap().extras.context.clone();
    for c in [&from_ini, &from_yaml] {
        assert!(c.sandbox.private_users && c.remove_ipc);
        assert_eq!(c.sandbox.no_exec_paths.len(), 1);
        assert_eq!(c.sandbox.exec_paths.len(), 3);
        assert_eq!(
            c.credentials.load[0].source,
            Source::Path("/etc/ssl/private/redis.pem".into())
        );
        assert_eq!(
            c.credentials.load[1].source,
            Source::Name("sysctl.extra".into())
        );
        assert_eq!(c.credentials.value_of("user"), Some(b"redis".as_slice()));
    }
    assert_eq!(from_ini, from_yaml);
    let p = translate_file(
        "f",
        "a.service",
        "[Service]\nExecStart=/bin/x\nLoadCredentialEncrypted=k:/etc/k.cred\n",
    );
    assert!(p.spec.is_none());
    assert_eq!(
        p.diagnostics[0].to_string(),
        "f:3:1: invalid LoadCredentialEncrypted=k:/etc/k.cred: encrypted credentials are not \
         supported: flotilla has no TPM2 or host key to decrypt them (systemd-creds); load the \
         plain credential with LoadCredential= instead"
    );
}

/// The suffixes read are exactly those the type table maps onto a type.
#[test]
fn translated_suffixes_are_the_type_tables() {
    let mut from_rows: Vec<&str> = UnitType::ALL
        .iter()
        .flat_map(|t| t.row().systemd_suffixes.iter().copied())
        .collect();
    let mut listed = TRANSLATED_SUFFIXES.to_vec();
    from_rows.sort();
    listed.sort();
    assert_eq!(from_rows, listed);
}

/// `!!` (Debian's `systemd-timesyncd.service`, read from the system as
/// the package installs it): a no-op where the kernel has ambient
/// capabilities, so `User=` and `AmbientCapabilities=` apply; `!` keeps
/// the init's user.
#[test]
fn double_bang_keeps_the_units_user_and_ambient_capabilities() {
    use flotilla_units::context::caps::cap;
    use flotilla_units::spec::Privileges;
    let path = "/lib/systemd/system/systemd-timesyncd.service";
    let text = std::fs::read_to_string(path).expect("Debian's systemd-timesyncd.service");
    assert!(text.contains("ExecStart=!!/lib/systemd/systemd-timesyncd"));
    let p = translate_file(path, "systemd-timesyncd.service", &text);
    let spec = p.spec.expect("loads");
    let start = spec.exec_start.as_ref().expect("ExecStart=");
    assert_eq!(start.privileges, Privileges::Unit);
    assert_eq!(start.argv, ["/lib/systemd/systemd-timesyncd"]);
    assert_eq!(spec.extras.user.as_deref(), Some("systemd-timesync"));
    let ambient = spec.extras.context.sandbox.ambient_capabilities;
    assert!(ambient.is_some_and(|a| a.has(cap::SYS_TIME)), "{ambient:?}");

    let p = translate_file("f", "a.service", "[Service]\nExecStart=!/bin/x\n");
    let start = p.spec.expect("loads").exec_start.expect("ExecStart=");
    assert_eq!(start.privileges, Privileges::NoUserChange);
}

/// `NonBlocking=` is the service's (`non-blocking`): unset, `yes`, reset.
#[test]
fn non_blocking_is_read() {
    for (line, want) in [
        ("", None),
        ("NonBlocking=yes\n", Some(true)),
        ("NonBlocking=yes\nNonBlocking=\n", None),
    ] {
        let text = format!("[Service]\nExecStart=/bin/x\n{line}");
        let p = translate_file("f", "a.service", &text);
        assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
        assert_eq!(p.spec.expect("loads").extras.non_blocking, want, "{line}");
    }
}

/// systemd runs every `ExecReload=` line, in order (test 39 of its own
/// suite reloads with `/bin/true`, `/bin/false`, `/bin/true`): the first
/// is `exec_reload`, the others follow it, `-` kept; an empty value
/// resets the list. `ExecStop=` stays one command, the others warned.
#[test]
fn every_exec_reload_line_is_kept() {
    let p = translate_file(
        "f",
        "a.service",
        "[Service]\nExecStart=/bin/sleep infinity\nExecReload=/bin/true\n\
         ExecReload=-/bin/false\nExecReload=/bin/true x\nExecStop=/bin/a\nExecStop=/bin/b\n",
    );
    let spec = p.spec.expect("loads");
    let words = |c: &Command| c.argv.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    assert_eq!(
        spec.extras.exec_reload.as_ref().map(words),
        Some(vec!["/bin/true".into()])
    );
    let then: Vec<_> = spec.extras.exec_reload_then.iter().map(words).collect();
    assert_eq!(then, [vec!["/bin/false"], vec!["/bin/true", "x"]]);
    assert!(spec.extras.exec_reload_then[0].ignore_failure);
    assert_eq!(
        p.diagnostics
            .iter()
            .map(|d| d.message.as_str())
            .collect::<Vec<_>>(),
        ["ExecStop= ignored: only the first ExecStop= command is used"]
    );
    let p = translate_file(
        "f",
        "a.service",
        "[Service]\nExecStart=/bin/x\nExecReload=/bin/a\nExecReload=/bin/b\nExecReload=\n\
         ExecReload=/bin/c\n",
    );
    let spec = p.spec.expect("loads");
    assert_eq!(
        spec.extras.exec_reload.as_ref().map(words),
        Some(vec!["/bin/c".into()])
    );
    assert!(spec.extras.exec_reload_then.is_empty());
}

/// `BindsTo=` is `Requires=` plus a stop propagated from the bound unit
/// (systemd stops the unit whenever the bound one becomes inactive, a
/// clean exit included); `Requires=` propagates no stop.
#[test]
fn binds_to_propagates_the_stop_of_the_bound_unit() {
    let p = translate_file(
        "f",
        "a.service",
        "[Unit]\nBindsTo=b.service c.service\nAfter=b.service\nRequires=d.service\n\
         [Service]\nExecStart=/bin/sleep infinity\n",
    );
    let spec = p.spec.as_ref().expect("a unit");
    assert_eq!(spec.depends_on.as_slice(), ["b.service"]);
    assert_eq!(spec.requires.as_slice(), ["c.service", "d.service"]);
    assert_eq!(
        spec.extras.stop_propagated_from.as_slice(),
        ["b.service", "c.service"]
    );
    assert!(
        p.diagnostics.iter().all(|d| !d.is_error()),
        "{:?}",
        p.diagnostics
    );
}

/// `Type=simple` (and no `Type=`, and `idle`) is started once forked
/// (`started-at-fork`); `exec`, `notify`, `forking`, `oneshot` and `dbus`
/// (a `BusName=` without `Type=`) are not (testsuite-23).
#[test]
fn simple_is_started_at_fork_and_exec_is_not() {
    for (lines, want) in [
        ("", Some(true)),
        ("Type=simple\n", Some(true)),
        ("Type=idle\n", Some(true)),
        ("Type=exec\n", None),
        ("Type=exec\nType=simple\n", Some(true)),
        ("Type=notify\n", None),
        ("Type=forking\nPIDFile=/run/a.pid\n", None),
        ("Type=oneshot\n", None),
        ("BusName=org.example.A\n", None),
    ] {
        let text = format!("[Service]\nExecStart=/bin/x\n{lines}");
        let p = translate_file("f", "a.service", &text);
        assert!(p.diagnostics.is_empty(), "{lines}: {:?}", p.diagnostics);
        let spec = p.spec.expect("loads");
        assert_eq!(spec.extras.started_at_fork, want, "{lines}");
        assert_eq!(spec.started_at_fork(), want == Some(true), "{lines}");
    }
}

/// Every service but a oneshot is judged as systemd judges a daemon: its
/// main process killed by SIGHUP, SIGINT, SIGTERM or SIGPIPE ended
/// cleanly (`daemon-clean-signals`).
#[test]
fn a_daemon_may_die_of_the_clean_signals_and_a_oneshot_not() {
    for (lines, want) in [
        ("", Some(true)),
        ("Type=exec\n", Some(true)),
        ("Type=notify\n", Some(true)),
        ("Type=forking\nPIDFile=/run/a.pid\n", Some(true)),
        ("BusName=org.example.A\n", Some(true)),
        ("Type=oneshot\n", None),
    ] {
        let text = format!("[Service]\nExecStart=/bin/x\n{lines}");
        let p = translate_file("f", "a.service", &text);
        assert!(p.diagnostics.is_empty(), "{lines}: {:?}", p.diagnostics);
        let spec = p.spec.expect("loads");
        assert_eq!(spec.extras.daemon_clean_signals, want, "{lines}");
    }
}

/// `DynamicUser=yes` (`dynamic-user`) implies its sandbox, which the
/// unit's own keys override; `no` implies nothing.
#[test]
fn dynamic_user_is_read_with_its_sandbox() {
    use flotilla_units::context::Key;
    let implied = [
        "ProtectSystem",
        "ProtectHome",
        "PrivateTmp",
        "RemoveIPC",
        "NoNewPrivileges",
        "RestrictSUIDSGID",
    ];
    for (lines, want) in [
        ("DynamicUser=yes\n", Some(true)),
        ("DynamicUser=no\n", Some(false)),
        ("", None),
    ] {
        let text = format!("[Service]\nExecStart=/bin/x\n{lines}");
        let p = translate_file("f", "a.service", &text);
        assert!(p.diagnostics.is_empty(), "{lines}: {:?}", p.diagnostics);
        let spec = p.spec.expect("loads");
        assert_eq!(spec.extras.dynamic_user, want, "{lines}");
        for k in implied {
            let key = Key::from_name(k).expect("a context key");
            assert_eq!(
                spec.extras.context.is_set(key),
                want == Some(true),
                "{lines}{k}"
            );
        }
    }
    // The unit's own key wins.
    let text = "[Service]\nExecStart=/bin/x\nDynamicUser=yes\nPrivateTmp=no\n";
    let spec = translate_file("f", "a.service", text).spec.expect("loads");
    assert!(!spec.extras.context.sandbox.private_tmp);
}

/// `ExecCondition=` lines are kept in order with their prefixes (as
/// every `Exec*` key's), an empty value resets them; `PermissionsStartOnly=`
/// makes them `+` as the other control commands.
#[test]
fn exec_condition_lines_are_kept_with_their_prefixes() {
    use flotilla_units::spec::Privileges;
    let p = translate_file(
        "f",
        "a.service",
        "[Service]\nExecStart=/bin/x\nExecCondition=-/bin/a\nExecCondition=:@/bin/b b0 ${X}\n\
         ExecCondition=!/bin/c\n",
    );
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    let spec = p.spec.expect("loads");
    let c = &spec.extras.exec_condition;
    assert_eq!(c.len(), 3);
    assert!(c[0].ignore_failure && c[0].expand_env);
    assert_eq!(c[1].argv, ["/bin/b", "b0", "${X}"]);
    assert!(c[1].argv0 && !c[1].expand_env && !c[1].ignore_failure);
    assert_eq!(c[2].privileges, Privileges::NoUserChange);

    let p = translate_file(
        "f",
        "a.service",
        "[Service]\nExecStart=/bin/x\nExecCondition=/bin/a\nExecCondition=\n\
         ExecCondition=/bin/b\nPermissionsStartOnly=yes\n",
    );
    let spec = p.spec.expect("loads");
    let c = &spec.extras.exec_condition;
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].argv, ["/bin/b"]);
    assert_eq!(c[0].privileges, Privileges::Full);
}

/// `ExitType=`: `main` (the default) and `cgroup` are read; a value
/// systemd does not know is an error.
#[test]
fn exit_type_is_read() {
    use flotilla_units::spec::ExitType;
    for (value, want) in [
        ("main", Ok(ExitType::Main)),
        ("", Ok(ExitType::Main)),
        ("cgroup", Ok(ExitType::Cgroup)),
        ("group", Err("invalid ExitType=group (main, cgroup)")),
    ] {
        let text = format!("[Service]\nExecStart=/bin/x\nExitType={value}\n");
        let p = translate_file("f", "a.service", &text);
        let got = match p.spec {
            Some(s) if p.diagnostics.is_empty() => Ok(s.extras.exit_type),
            _ => Err(p.diagnostics[0].message.as_str()),
        };
        assert_eq!(got, want, "{value}");
    }
}

/// `NotifyAccess=`: each of systemd's values is read (`none` too: the
/// service gets no notify socket); another value is an error.
#[test]
fn notify_access_is_read() {
    use flotilla_units::spec::NotifyAccess;
    for (value, want) in [
        ("", Ok(None)),
        ("none", Ok(Some(NotifyAccess::None))),
        ("main", Ok(Some(NotifyAccess::Main))),
        ("exec", Ok(Some(NotifyAccess::Exec))),
        ("all", Ok(Some(NotifyAccess::All))),
        (
            "some",
            Err("invalid NotifyAccess=some (none, main, exec, all)"),
        ),
    ] {
        let text = format!("[Service]\nType=oneshot\nExecStart=/bin/x\nNotifyAccess={value}\n");
        let p = translate_file("f", "a.service", &text);
        let got = match p.spec {
            Some(s) if p.diagnostics.is_empty() => Ok(s.extras.notify_access),
            _ => Err(p.diagnostics[0].message.as_str()),
        };
        assert_eq!(got, want, "{value}");
    }
}

/// A socket's `[Socket]` takes the commands systemd.socket(5) gives it
/// (`ExecStartPre=`, `ExecStartPost=`, `ExecStopPost=`) and systemd.exec(5)'s
/// keys for them, its directories among them (systemd's test 33's
/// `test-service.socket`); a `[Service]` section in a socket file and a
/// `[Socket] Exec…=` in a service are not theirs.
#[test]
fn a_socket_runs_commands_with_a_context() {
    let p = translate_file(
        "f",
        "test-service.socket",
        "[Socket]\nListenSequentialPacket=/run/test-service.socket\nRemoveOnStop=yes\n\
         ExecStartPre=true\nExecStartPost=/bin/echo up\nExecStopPost=-/bin/rm -f /run/x\n\
         ConfigurationDirectory=test-socket\nRuntimeDirectory=test-socket\n\
         StateDirectory=test-socket\nCacheDirectory=test-socket\nLogsDirectory=test-socket\n",
    );
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    let spec = p.spec.expect("loads");
    let words = |c: &flotilla_units::spec::Command| c.argv.iter().collect::<Vec<_>>().join(" ");
    assert_eq!(
        spec.exec_start_pre.iter().map(words).collect::<Vec<_>>(),
        ["true"]
    );
    assert_eq!(
        spec.extras
            .exec_start_post
            .iter()
            .map(words)
            .collect::<Vec<_>>(),
        ["/bin/echo up"]
    );
    assert_eq!(spec.extras.exec_stop_post.len(), 1);
    assert!(spec.extras.exec_stop_post[0].ignore_failure);
    use flotilla_units::context::dirs::DirKind;
    for kind in [
        DirKind::Runtime,
        DirKind::State,
        DirKind::Cache,
        DirKind::Logs,
        DirKind::Configuration,
    ] {
        let names = &spec.extras.context.directories.get(kind).names;
        assert_eq!(
            names,
            &[std::path::PathBuf::from("test-socket")],
            "{kind:?}"
        );
    }
    assert_eq!(spec.extras.triggers, ["test-service.service"]);

    let p = translate_file(
        "f",
        "w.socket",
        "[Socket]\nListenStream=80\n[Service]\nExecStartPre=true\nRuntimeDirectory=w\n",
    );
    let spec = p.spec.expect("loads");
    assert!(spec.exec_start_pre.is_empty());
    assert!(spec
        .extras
        .context
        .directories
        .get(DirKind::Runtime)
        .names
        .is_empty());
    assert_eq!(p.diagnostics.len(), 2, "{:?}", p.diagnostics);
    let p = translate_file(
        "f",
        "w.service",
        "[Service]\nExecStart=/bin/true\n[Socket]\nExecStartPre=true\n",
    );
    let spec = p.spec.expect("loads");
    assert!(spec.exec_start_pre.is_empty());
    assert_eq!(p.diagnostics.len(), 1, "{:?}", p.diagnostics);
}

/// A `.slice` file: `[Slice]` takes the resource-control keys, its place
/// and default description come from its name, and what is not a
/// slice's is warned about (docs/systemd-units.md, "Slices").
#[test]
fn a_slice_file_takes_resource_control_in_its_section() {
    let p = translate_file(
        "f",
        "a-b.slice",
        "[Unit]\nDocumentation=man:a man:b\n[Slice]\nMemoryMax=1000000001\nSlice=x.slice\nNice=3\n\
         [Service]\nExecStart=/bin/true\n",
    );
    let s = p.spec.expect("a slice");
    assert_eq!(s.kind, UnitType::Slice);
    assert_eq!(s.description.as_deref(), Some("Slice /a/b"));
    let r = &s.extras.context.resources;
    assert_eq!(
        r.memory_max,
        Some(flotilla_units::context::resources::Amount::Absolute(
            1_000_000_001
        ))
    );
    assert_eq!(r.slice.as_deref(), Some("a.slice"));
    assert_eq!(s.extras.documentation.to_vec(), ["man:a", "man:b"]);
    assert_eq!(s.remain_after_exit, None);
    let warned: Vec<String> = p.diagnostics.iter().map(|d| d.message.clone()).collect();
    assert_eq!(warned.len(), 3, "{warned:?}");
    assert!(warned.iter().any(|w| w.contains("Slice=")), "{warned:?}");
    assert!(warned.iter().any(|w| w.contains("Nice=")), "{warned:?}");
    assert!(
        warned.iter().any(|w| w.contains("[Service] ExecStart=")),
        "{warned:?}"
    );
    assert!(flotilla_units::keys::validate(s).is_ok());

    let bad = translate_file("f", "a--b.slice", "");
    assert!(bad.spec.is_none());
}

/// `RuntimeMaxSec=` and `RuntimeRandomizedExtraSec=`: systemd's time spans, `infinity` (the default) no limit,
/// 0 a limit; a bad value is an error that names the key.
#[test]
fn runtime_max_is_read() {
    use std::time::Duration;
    let secs = Duration::from_secs;
    for (lines, want) in [
        ("RuntimeMaxSec=5s", Ok(Some((secs(5), Duration::ZERO)))),
        (
            "RuntimeMaxSec=1min\nRuntimeRandomizedExtraSec=500ms",
            Ok(Some((secs(60), Duration::from_millis(500)))),
        ),
        ("RuntimeMaxSec=infinity", Ok(None)),
        (
            "RuntimeMaxSec=0",
            Ok(Some((Duration::ZERO, Duration::ZERO))),
        ),
        ("RuntimeMaxSec=5s\nRuntimeMaxSec=", Ok(None)),
        ("RuntimeRandomizedExtraSec=3s", Ok(None)),
        ("RuntimeMaxSec=5x", Err("invalid RuntimeMaxSec=5x")),
        (
            "RuntimeRandomizedExtraSec=-1",
            Err("invalid RuntimeRandomizedExtraSec=-1"),
        ),
    ] {
        let text = format!("[Service]\nExecStart=/bin/x\n{lines}\n");
        let p = translate_file("f", "a.service", &text);
        let got = match p.spec {
            Some(s) if p.diagnostics.is_empty() => Ok(s.runtime_max()),
            _ => Err(p.diagnostics[0].message.as_str()),
        };
        match (&got, &want) {
            (Err(g), Err(w)) => assert!(g.starts_with(w), "{lines}: {g}"),
            _ => assert_eq!(got, want, "{lines}"),
        }
    }
}

/// A transient timer goes once it has elapsed for good, not while it
/// remains after its elapse (`RemainAfterElapse=yes`, a unit file's
/// default): `flotilla_units::collect` over the translated timer.
#[test]
fn a_timer_goes_once_it_elapsed_not_to_remain() {
    let timer = |remain: &str| {
        let text = format!("[Timer]\nOnActiveSec=1\nRemainAfterElapse={remain}\n");
        let mut s = translate_file("t.timer", "t.timer", &text)
            .spec
            .unwrap_or_else(|| panic!("t.timer"));
        s.extras.collect_mode = Some(flotilla_units::spec::CollectMode::Inactive);
        s
    };
    let elapsed = flotilla_units::collect::Now {
        state: flotilla_units::state::UnitState::Exited,
        skipped: false,
        restarting: false,
    };
    assert!(flotilla_units::collect::collectable(&timer("no"), elapsed));
    assert!(!flotilla_units::collect::collectable(
        &timer("yes"),
        elapsed
    ));
    let waiting = flotilla_units::collect::Now {
        state: flotilla_units::state::UnitState::Running,
        ..elapsed
    };
    assert!(!flotilla_units::collect::collectable(&timer("no"), waiting));
}

/// `LogNamespace=` (systemd's TEST-44): the context has the namespace,
/// and the unit requires and is ordered after the namespace's two
/// journald sockets, at the key's line; no other unit gets them, and a
/// bad name is an error at its line.
#[test]
fn a_log_namespace_requires_its_journald_sockets() {
    use flotilla_units::spec::TargetList;
    let text = "[Unit]\nRequires=a.service\n[Service]\nExecStart=/bin/echo hi\n\
                LogNamespace=foobar\n";
    let p = translate_file("f", "run-u17.service", text);
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    let spec = p.spec.as_ref().expect("a unit");
    let ns = spec.extras.context.log_namespace.as_ref().expect("set");
    assert_eq!(ns.as_str(), "foobar");
    assert_eq!(
        spec.depends_on,
        [
            "systemd-journald@foobar.socket",
            "systemd-journald-varlink@foobar.socket"
        ]
    );
    assert_eq!(spec.requires, ["a.service"], "After= is only the sockets'");
    let at: Vec<u32> = p
        .origin
        .positions(TargetList::DependsOn)
        .iter()
        .map(|p| p.line)
        .collect();
    assert_eq!(at, [5, 5]);

    let p = translate_file("f", "b.service", "[Service]\nExecStart=/bin/x\n");
    assert!(p.spec.expect("loads").depends_on.is_empty());
    let p = translate_file(
        "f",
        "c.service",
        "[Service]\nExecStart=/bin/x\nLogNamespace=a/b\n",
    );
    assert!(p.spec.is_none());
    assert_eq!(p.diagnostics[0].pos.line, 3);
    assert!(
        p.diagnostics[0]
            .message
            .contains("`a/b` is not a journal namespace's name"),
        "{:?}",
        p.diagnostics
    );
}

/// A `.scope` file (the one flotilla-busd makes for a scope made over
/// D-Bus, with its drop-ins at a reload): `[Scope]` takes the runtime
/// limit, the stop timeout and the keys `context::scope` lists; a scope
/// is left by `isolate`, never restarted, has no output of its own, and
/// what is not a scope's is warned about.
#[test]
fn a_scope_file_takes_its_limits_and_cgroup_keys_in_its_section() {
    let p = translate_file(
        "f",
        "run-x.scope",
        "[Unit]\nDescription=probe\nAfter=a.service\n[Scope]\nRuntimeMaxSec=5s\n\
         TimeoutStopSec=3s\nSlice=x.slice\nDelegate=yes\nTasksMax=10\nSendSIGHUP=yes\n\
         MemoryMax=1G\n[Service]\nExecStart=/bin/true\n",
    );
    let s = p.spec.expect("a scope");
    assert_eq!(s.kind, UnitType::Scope);
    assert_eq!(s.description.as_deref(), Some("probe"));
    assert_eq!(s.after, ["a.service"]);
    assert_eq!(s.extras.runtime_max, Some(Duration::from_secs(5)));
    assert_eq!(s.stop_timeout, Duration::from_secs(3));
    let c = &s.extras.context;
    assert_eq!(c.resources.slice.as_deref(), Some("x.slice"));
    assert!(c.send_sighup);
    assert_eq!(s.extras.ignore_on_isolate, Some(true));
    assert_eq!(s.restart, RestartPolicy::No);
    assert_eq!(s.remain_after_exit, None);
    assert_eq!(c.standard_output, None);
    let warned: Vec<String> = p.diagnostics.iter().map(|d| d.message.clone()).collect();
    assert_eq!(warned.len(), 2, "{warned:?}");
    assert!(
        warned.iter().any(|w| w.contains("MemoryMax=")),
        "{warned:?}"
    );
    assert!(
        warned.iter().any(|w| w.contains("[Service] ExecStart=")),
        "{warned:?}"
    );
    assert!(flotilla_units::keys::validate(s).is_ok());
    // `TimeoutStopSec=0` is no timeout, as a service's.
    let p = translate_file("f", "y.scope", "[Scope]\nTimeoutStopSec=0\n");
    assert_eq!(p.spec.expect("a scope").stop_timeout, TIMESPAN_INFINITY);
    // A service's `[Scope]` is not its own.
    let p = translate_file(
        "f",
        "a.service",
        "[Service]\nExecStart=/bin/x\n[Scope]\nRuntimeMaxSec=5s\n",
    );
    assert_eq!(p.spec.expect("a service").extras.runtime_max, None);
    assert_eq!(p.diagnostics.len(), 1, "{:?}", p.diagnostics);
}
