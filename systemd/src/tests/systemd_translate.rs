//! The systemd unit translator (docs/contract.md §7): every key it honours, every
//! warning and every error, with the exact diagnostic text.

use crate::{translate, translate_file};
use flotilla_units::diag::Pos;
use flotilla_units::fleet::UnitOption;
use flotilla_units::load::ParsedUnit;
use flotilla_units::spec::{Command, RestartPolicy, Signal, TargetList, UnitSpec, UnitType};
use flotilla_units::timespan::TIMESPAN_INFINITY;
use std::path::PathBuf;
use std::time::Duration;

const F: &str = "u/web.service";

fn tr(text: &str) -> ParsedUnit {
    translate_file(F, "web.service", text)
}

/// A unit with `body` in its `[Service]` section: the body starts on line 2.
fn svc(body: &str) -> ParsedUnit {
    tr(&format!("[Service]\n{body}\n"))
}

fn diags(p: &ParsedUnit) -> Vec<String> {
    p.diagnostics.iter().map(ToString::to_string).collect()
}

/// The spec of a unit that must translate without any diagnostic.
fn clean(p: ParsedUnit) -> UnitSpec {
    assert_eq!(diags(&p), Vec::<String>::new());
    p.spec.expect("a spec")
}

/// The spec of a unit that must translate with exactly these warnings.
fn warned(p: ParsedUnit, want: &[&str]) -> UnitSpec {
    assert_eq!(diags(&p), want);
    assert!(p.diagnostics.iter().all(|d| !d.is_error()));
    p.spec.expect("warnings alone keep the spec")
}

/// A unit that must be refused with exactly these diagnostics.
fn refused(p: ParsedUnit, want: &[&str]) {
    assert_eq!(diags(&p), want);
    assert!(p.spec.is_none(), "an error leaves no spec");
}

/// A systemd command line: `$NAME` and `${NAME}` are substituted when it
/// starts (no `:` prefix).
fn cmd(argv: &[&str]) -> Command {
    Command {
        expand_env: true,
        ..Command::new(argv.iter().copied())
    }
}

fn ignored(argv: &[&str]) -> Command {
    Command {
        ignore_failure: true,
        ..cmd(argv)
    }
}

#[test]
fn minimal_unit_gets_systemds_defaults() {
    let s = clean(svc("ExecStart=/bin/sleep 100"));
    assert_eq!(s.name, "web.service");
    assert_eq!(s.provides, ["web.service"]);
    assert_eq!(s.kind, UnitType::ForegroundSupervised);
    assert_eq!(s.exec_start, Some(cmd(&["/bin/sleep", "100"])));
    // systemd's defaults, not flotilla's YAML ones: no restart, 90 s both ways.
    assert_eq!(s.restart, RestartPolicy::No);
    assert_eq!(s.start_timeout, Duration::from_secs(90));
    assert_eq!(s.stop_timeout, Duration::from_secs(90));
    assert_eq!(s.restart_delay, Duration::from_secs(1));
    assert_eq!(s.restart_max_delay, Duration::from_secs(60));
    assert_eq!(s.kill_signal, Signal::TERM);
    assert_eq!(s.description, None);
    assert!(s.depends_on.is_empty() && s.waits_for.is_empty() && s.depends_ms.is_empty());
    assert!(s.exec_start_pre.is_empty() && s.extras.exec_stop_post.is_empty());
    assert_eq!(
        (&s.exec_stop, &s.extras.exec_reload, &s.extras.pidfile),
        (&None, &None, &None)
    );
    assert_eq!(
        (
            s.extras.user.as_deref(),
            s.extras.group.as_deref(),
            s.extras.working_directory.as_deref()
        ),
        (None, None, None)
    );
    assert!(s.extras.environment.is_empty() && s.extras.environment_files.is_empty());
    let p = svc("ExecStart=/bin/true");
    assert_eq!(p.origin.file, F);
    assert_eq!(p.origin.pos, Pos::new(1, 1));
}

#[test]
fn types() {
    let cases = [
        ("simple", UnitType::ForegroundSupervised),
        ("exec", UnitType::ForegroundSupervised),
        ("idle", UnitType::ForegroundSupervised),
        ("notify", UnitType::ForegroundNotified),
        ("oneshot", UnitType::Oneshot),
        ("", UnitType::ForegroundSupervised),
    ];
    for (ty, kind) in cases {
        let s = clean(svc(&format!("Type={ty}\nExecStart=/bin/x")));
        assert_eq!(s.kind, kind, "Type={ty}");
    }
    // forking: background-pidfile with its PIDFile=; a relative one is under /run.
    let s = clean(svc(
        "Type=forking\nPIDFile=/run/web.pid\nExecStart=/usr/sbin/web -d",
    ));
    assert_eq!(s.kind, UnitType::BackgroundPidfile);
    assert_eq!(s.extras.pidfile, Some(PathBuf::from("/run/web.pid")));
    let s = clean(svc(
        "Type=forking\nPIDFile=web/web.pid\nExecStart=/usr/sbin/web -d",
    ));
    assert_eq!(s.extras.pidfile, Some(PathBuf::from("/run/web/web.pid")));
    // The last Type= wins.
    let s = clean(svc("Type=forking\nType=simple\nExecStart=/bin/x"));
    assert_eq!(s.kind, UnitType::ForegroundSupervised);
    // Type=dbus: ready once BusName= is owned, whichever key comes first;
    // for any other type BusName= is only a label.
    for text in [
        "Type=dbus\nBusName=org.x.Web\nExecStart=/bin/x",
        "BusName=org.x.Web\nType=dbus\nExecStart=/bin/x",
    ] {
        let s = clean(svc(text));
        assert_eq!(s.kind, UnitType::ForegroundSupervised);
        assert_eq!(s.extras.ready_bus_name.as_deref(), Some("org.x.Web"));
    }
    // No Type= (or an empty one): a BusName= makes it Type=dbus, as
    // systemd's default type is (Debian's systemd-logind.service).
    for text in [
        "BusName=org.x.Web\nExecStart=/bin/x",
        "Type=\nBusName=org.x.Web\nExecStart=/bin/x",
    ] {
        let s = clean(svc(text));
        assert_eq!(s.kind, UnitType::ForegroundSupervised);
        assert_eq!(
            s.extras.ready_bus_name.as_deref(),
            Some("org.x.Web"),
            "{text}"
        );
    }
    for text in [
        "Type=simple\nBusName=org.x.Web\nExecStart=/bin/x",
        "BusName=org.x.Web\nBusName=\nExecStart=/bin/x",
    ] {
        let s = clean(svc(text));
        assert_eq!(s.extras.ready_bus_name, None, "{text}");
    }
    let p = svc("Type=dbus\nExecStart=/bin/x");
    assert_eq!(
        diags(&p),
        ["u/web.service:2:1: Type=dbus needs BusName= (the name whose taking makes it ready)"]
    );
    let p = svc("Type=dbus\nBusName=org.x.1\nExecStart=/bin/x");
    assert!(
        diags(&p)
            .iter()
            .any(|d| d.ends_with("invalid BusName=org.x.1: not a D-Bus well-known name")),
        "{:?}",
        diags(&p)
    );
    // Types run as the nearest flotilla type, with a warning.
    let s = warned(
        svc("Type=notify-reload\nExecStart=/bin/x"),
        &["u/web.service:2:1: warning: Type=notify-reload is run as foreground-notified: reloading by signal is not supported"],
    );
    assert_eq!(s.kind, UnitType::ForegroundNotified);
}

/// Keys whose meaning flotilla has by its nature are accepted silently
/// when their value is valid; a value it does not have is a warning, a
/// malformed one an error.
#[test]
fn keys_flotilla_honours_by_nature() {
    // An unneeded unit is always stopped; an OnFailure= unit is never
    // cancelled; BusName= of a notify service is a label.
    clean(tr(
        "[Unit]\nStopWhenUnneeded=yes\nOnFailureJobMode=replace-irreversibly\n\
         [Service]\nType=notify\nBusName=org.freedesktop.hostname1\nExecStart=/bin/x\n",
    ));
    clean(tr(
        "[Unit]\nStopWhenUnneeded=no\nOnFailureJobMode=replace\n[Service]\nExecStart=/bin/x\n",
    ));
    warned(
        tr("[Unit]\nOnFailureJobMode=isolate\n[Service]\nExecStart=/bin/x\n"),
        &["u/web.service:2:1: warning: OnFailureJobMode=isolate is run as replace: the OnFailure= units are started"],
    );
    refused(
        tr("[Unit]\nStopWhenUnneeded=sometimes\nOnFailureJobMode=later\n\
            [Service]\nBusName=org\nExecStart=/bin/x\nBusName=:1.42\n"),
        &[
            "u/web.service:2:1: invalid StopWhenUnneeded=sometimes: not a boolean",
            "u/web.service:3:1: invalid OnFailureJobMode=later (replace, replace-irreversibly, fail, flush, isolate, ignore-dependencies, ignore-requirements)",
            "u/web.service:5:1: invalid BusName=org: not a D-Bus well-known name",
            "u/web.service:7:1: invalid BusName=:1.42: not a D-Bus well-known name",
        ],
    );
}

#[test]
fn type_errors() {
    // An unknown type: refused.
    refused(
        svc("Type=bogus\nExecStart=/bin/x"),
        &["u/web.service:2:1: invalid Type=bogus (simple, exec, notify, forking, oneshot, idle)"],
    );
    // forking without PIDFile=: the main PID is guessed from the unit's
    // cgroup at run time, as systemd does.
    let s = clean(svc("Type=forking\nExecStart=/usr/sbin/web -d"));
    assert_eq!(
        (s.kind, &s.extras.pidfile),
        (UnitType::BackgroundPidfile, &None)
    );
    // PIDFile= emptied again counts as none.
    let s = clean(svc(
        "Type=forking\nPIDFile=/run/a.pid\nPIDFile=\nExecStart=/usr/sbin/web -d",
    ));
    assert_eq!(s.extras.pidfile, None);
    // PIDFile= on another type: ignored with a warning.
    let s = warned(
        svc("PIDFile=/run/web.pid\nExecStart=/bin/x"),
        &["u/web.service:2:1: warning: PIDFile= is used only with Type=forking, ignored"],
    );
    assert_eq!(s.extras.pidfile, None);
}

#[test]
fn exec_start_splitting() {
    let s = clean(svc(
        r#"ExecStart=/bin/sh -c "echo 'hi there'; exit 0" a\ b 'c d' \x41"#,
    ));
    assert_eq!(
        s.exec_start,
        Some(cmd(&[
            "/bin/sh",
            "-c",
            "echo 'hi there'; exit 0",
            "a b",
            "c d",
            "A"
        ]))
    );
    // A leading - ignores failure.
    let s = clean(svc("ExecStart=-/bin/false"));
    assert_eq!(s.exec_start, Some(ignored(&["/bin/false"])));
    // Continuation lines (kept by the parser) are joined with a space.
    let s = clean(svc(
        "ExecStart=/usr/bin/docker run \\\n  --rm \\\n  busybox",
    ));
    assert_eq!(
        s.exec_start,
        Some(cmd(&["/usr/bin/docker", "run", "--rm", "busybox"]))
    );
    // An empty ExecStart= clears the earlier ones.
    let s = clean(svc("ExecStart=/bin/a\nExecStart=\nExecStart=/bin/b"));
    assert_eq!(s.exec_start, Some(cmd(&["/bin/b"])));
    // The ':' prefix (no substitution) is honoured exactly.
    let s = clean(svc("ExecStart=:/bin/echo $HOME ${X}"));
    let mut plain = cmd(&["/bin/echo", "$HOME", "${X}"]);
    plain.expand_env = false;
    assert_eq!(s.exec_start, Some(plain));
    // $$ stays for the substitution at start, which makes it a literal $.
    let s = clean(svc("ExecStart=/bin/echo $$HOME"));
    assert_eq!(s.exec_start, Some(cmd(&["/bin/echo", "$$HOME"])));
    // \; is a literal ; word.
    let s = clean(svc(r"ExecStart=/usr/bin/find . -exec rm {} \;"));
    assert_eq!(
        s.exec_start,
        Some(cmd(&["/usr/bin/find", ".", "-exec", "rm", "{}", ";"]))
    );
}

#[test]
fn exec_start_specifiers() {
    let p = translate_file(
        "u/web@8080.service",
        "web@8080.service",
        "[Service]\nExecStart=/usr/bin/web --name %p-%i --unit %n --short %N --pct 100%%\n",
    );
    let s = clean(p);
    assert_eq!(
        s.exec_start,
        Some(cmd(&[
            "/usr/bin/web",
            "--name",
            "web-8080",
            "--unit",
            "web@8080.service",
            "--short",
            "web@8080",
            "--pct",
            "100%"
        ]))
    );
    assert_eq!(s.provides, ["web@8080.service"]);
    // Specifiers flotilla cannot know are left as they are, with a warning.
    let s = warned(
        svc("ExecStart=/bin/echo %H %m %H"),
        &[
            "u/web.service:2:1: warning: ExecStart=: specifier %H needs the host name, which is not known here; left as is",
            "u/web.service:2:1: warning: ExecStart=: specifier %m needs the machine ID, which is not known here; left as is",
        ],
    );
    assert_eq!(s.exec_start, Some(cmd(&["/bin/echo", "%H", "%m", "%H"])));
}

#[test]
fn exec_start_errors() {
    // No command at all: nothing to run.
    refused(
        tr("[Unit]\nDescription=x\n"),
        &["u/web.service: [Service] has no ExecStart="],
    );
    refused(
        svc("ExecStart=/bin/a\nExecStart="),
        &["u/web.service: [Service] has no ExecStart="],
    );
    // Two commands outside oneshot: systemd refuses, so does flotilla.
    refused(
        svc("ExecStart=/bin/a\nExecStart=/bin/b"),
        &["u/web.service:3:1: more than one ExecStart= command: only Type=oneshot may have several"],
    );
    refused(
        svc("ExecStart=/bin/a ; /bin/b"),
        &["u/web.service:2:1: more than one ExecStart= command: only Type=oneshot may have several"],
    );
    // Syntax errors.
    let cases = [
        (r#"ExecStart=/bin/echo "abc"#, "unterminated quote"),
        ("ExecStart=-", "empty command"),
        (
            "ExecStart=@/bin/sh",
            "the @ prefix needs argv[0] after the program",
        ),
    ];
    for (line, why) in cases {
        refused(
            svc(line),
            // Diagnostics without a position come first.
            &[
                "u/web.service: [Service] has no ExecStart=",
                &format!("u/web.service:2:1: invalid ExecStart=: {why}"),
            ],
        );
    }
}

/// An invalid escape in a command line is kept as written, with a
/// warning (systemd's "Invalid escape sequences in line, correcting"):
/// TEST-34's unit has `find \( … \)` in a quoted `bash -c` script.
#[test]
fn an_invalid_escape_is_kept_with_a_warning() {
    let spec = warned(
        svc(r"ExecStart=/bin/sh -c 'find / \( -path /x \) -print'"),
        &[
            r"u/web.service:2:1: warning: ExecStart=: invalid escape sequences kept as written, as systemd corrects them",
        ],
    );
    assert_eq!(
        spec.exec_start.expect("ExecStart=").argv.to_vec(),
        ["/bin/sh", "-c", r"find / \( -path /x \) -print"]
    );
}
#[test]
fn oneshot_with_several_exec_start() {
    // Run in sequence, as systemd does.
    let s = clean(svc(
        "Type=oneshot\nExecStart=/bin/a\nExecStart=/bin/b\nExecStart=/bin/c ; /bin/d",
    ));
    assert_eq!(s.kind, UnitType::Oneshot);
    assert_eq!(s.exec_start, Some(cmd(&["/bin/a"])));
    assert_eq!(
        s.extras.exec_start_then,
        [cmd(&["/bin/b"]), cmd(&["/bin/c"]), cmd(&["/bin/d"])]
    );
    // A oneshot has no start timeout by default, and does not restart.
    assert_eq!(s.start_timeout, TIMESPAN_INFINITY);
    assert_eq!(s.stop_timeout, Duration::from_secs(90));
    assert_eq!(s.restart, RestartPolicy::No);
}

#[test]
fn exec_prefixes() {
    use flotilla_units::spec::Privileges;
    let s = clean(svc("ExecStart=@/bin/sh mysh -c true"));
    let want = Command {
        argv0: true,
        ..cmd(&["/bin/sh", "mysh", "-c", "true"])
    };
    assert_eq!(s.exec_start, Some(want));
    for (prefix, privileges) in [
        ("+", Privileges::Full),
        ("!", Privileges::NoUserChange),
        // A no-op on every kernel with ambient capabilities.
        ("!!", Privileges::Unit),
    ] {
        let s = clean(svc(&format!(
            "User=web\nExecStartPre={prefix}/bin/mkdir -p /run/web\nExecStart=/bin/web"
        )));
        let want = Command {
            privileges,
            ..cmd(&["/bin/mkdir", "-p", "/run/web"])
        };
        assert_eq!(s.exec_start_pre, [want]);
    }
    // Prefixes combine.
    let s = clean(svc("ExecStart=-+/bin/x"));
    let want = Command {
        privileges: Privileges::Full,
        ..ignored(&["/bin/x"])
    };
    assert_eq!(s.exec_start, Some(want));
}

#[test]
fn environment_variables_in_commands() {
    // Substituted when the process starts: kept as written here.
    let s = clean(svc(
        "EnvironmentFile=/etc/environment\nExecStart=/usr/bin/docker run -e IP=${COREOS_PUBLIC_IPV4} $OPTS",
    ));
    assert_eq!(
        s.exec_start,
        Some(cmd(&[
            "/usr/bin/docker",
            "run",
            "-e",
            "IP=${COREOS_PUBLIC_IPV4}",
            "$OPTS"
        ]))
    );
    // $MAINPID is kept for the init to replace; a $ inside a word is literal in systemd too.
    let s = clean(svc("ExecStart=/bin/web --x=$FOO\nExecReload=/bin/kill -HUP $MAINPID\nExecStop=/bin/kill ${MAINPID}"));
    assert_eq!(
        s.extras.exec_reload,
        Some(cmd(&["/bin/kill", "-HUP", "$MAINPID"]))
    );
    assert_eq!(s.exec_stop, Some(cmd(&["/bin/kill", "${MAINPID}"])));
}

#[test]
fn pre_and_post_commands() {
    let s = clean(svc(
        "ExecStartPre=-/usr/bin/docker kill web\nExecStartPre=/usr/bin/docker pull web ; -/bin/rm -f /run/x\nExecStart=/bin/web\nExecStopPost=/bin/a\nExecStopPost=-/bin/b",
    ));
    assert_eq!(
        s.exec_start_pre,
        [
            ignored(&["/usr/bin/docker", "kill", "web"]),
            cmd(&["/usr/bin/docker", "pull", "web"]),
            ignored(&["/bin/rm", "-f", "/run/x"])
        ]
    );
    assert_eq!(
        s.extras.exec_stop_post,
        [cmd(&["/bin/a"]), ignored(&["/bin/b"])]
    );
    // Empty values clear the lists.
    let s = clean(svc("ExecStartPre=/bin/a\nExecStartPre=\nExecStartPre=/bin/b\nExecStart=/bin/web\nExecStopPost=/bin/c\nExecStopPost="));
    assert_eq!(s.exec_start_pre, [cmd(&["/bin/b"])]);
    assert!(s.extras.exec_stop_post.is_empty());
    // A bad one is an error.
    refused(
        svc("ExecStartPre=/bin/a 'x\nExecStart=/bin/web"),
        &["u/web.service:2:1: invalid ExecStartPre=: unterminated quote"],
    );
}

#[test]
fn stop_and_reload() {
    let s = clean(svc(
        "ExecStart=/bin/web\nExecStop=/bin/web stop\nExecReload=/bin/kill -HUP $MAINPID",
    ));
    assert_eq!(s.exec_stop, Some(cmd(&["/bin/web", "stop"])));
    assert_eq!(
        s.extras.exec_reload,
        Some(cmd(&["/bin/kill", "-HUP", "$MAINPID"]))
    );
    // Only the first command of `ExecStop=` is used; every reload command
    // runs, in order.
    let s = warned(
        svc("ExecStart=/bin/web\nExecStop=/bin/a\nExecStop=/bin/b\nExecReload=/bin/c ; /bin/d"),
        &["u/web.service:4:1: warning: ExecStop= ignored: only the first ExecStop= command is used"],
    );
    assert_eq!(s.exec_stop, Some(cmd(&["/bin/a"])));
    assert_eq!(s.extras.exec_reload, Some(cmd(&["/bin/c"])));
    assert_eq!(s.extras.exec_reload_then.to_vec(), [cmd(&["/bin/d"])]);
    let s = clean(svc("ExecStart=/bin/web\nExecStop=/bin/a\nExecStop="));
    assert_eq!(s.exec_stop, None);
}

#[test]
fn restart_policies() {
    let exact = [
        ("no", RestartPolicy::No),
        ("", RestartPolicy::No),
        ("on-success", RestartPolicy::OnSuccess),
        ("on-failure", RestartPolicy::OnFailure),
        ("on-abnormal", RestartPolicy::OnAbnormal),
        ("on-watchdog", RestartPolicy::OnWatchdog),
        ("on-abort", RestartPolicy::OnAbort),
        ("always", RestartPolicy::Always),
    ];
    for (v, policy) in exact {
        assert_eq!(
            clean(svc(&format!("ExecStart=/bin/x\nRestart={v}"))).restart,
            policy,
            "Restart={v}"
        );
    }
    refused(
        svc("ExecStart=/bin/x\nRestart=sometimes"),
        &["u/web.service:3:1: invalid Restart=sometimes (no, on-success, on-failure, on-abnormal, on-watchdog, on-abort, always)"],
    );
    // systemd refuses a oneshot that restarts after success.
    refused(
        svc("Type=oneshot\nExecStart=/bin/x\nRestart=always"),
        &["u/web.service:4:1: Restart=always is not allowed with Type=oneshot"],
    );
    refused(
        svc("Type=oneshot\nExecStart=/bin/x\nRestart=on-success"),
        &["u/web.service:4:1: Restart=on-success is not allowed with Type=oneshot"],
    );
    let s = clean(svc("Type=oneshot\nExecStart=/bin/x\nRestart=on-failure"));
    assert_eq!(s.restart, RestartPolicy::OnFailure);
}

#[test]
fn restart_delay() {
    // RestartSec= is the first delay; the back-off doubles it up to at least a minute.
    let s = clean(svc("ExecStart=/bin/x\nRestart=always\nRestartSec=5"));
    assert_eq!(
        (s.restart_delay, s.restart_max_delay),
        (Duration::from_secs(5), Duration::from_secs(60))
    );
    let s = clean(svc("ExecStart=/bin/x\nRestartSec=2min"));
    assert_eq!(
        (s.restart_delay, s.restart_max_delay),
        (Duration::from_secs(120), Duration::from_secs(120))
    );
    let s = clean(svc("ExecStart=/bin/x\nRestartSec=100ms"));
    assert_eq!(s.restart_delay, Duration::from_millis(100));
    let s = clean(svc("ExecStart=/bin/x\nRestartSec=5\nRestartSec="));
    assert_eq!(
        s.restart_delay,
        Duration::from_secs(1),
        "emptied: flotilla's default"
    );
    refused(
        svc("ExecStart=/bin/x\nRestartSec=5 parsecs"),
        &[
            r#"u/web.service:3:1: invalid RestartSec=5 parsecs: unknown unit "parsecs" (use us, ms, s, min, h, d, w, M, y)"#,
        ],
    );
}

#[test]
fn timeouts() {
    let secs = Duration::from_secs;
    // (lines, start timeout, stop timeout)
    let cases = [
        ("TimeoutStartSec=5", secs(5), secs(90)),
        ("TimeoutStopSec=5s", secs(90), secs(5)),
        ("TimeoutSec=1min 30s", secs(90), secs(90)),
        ("TimeoutSec=2m", secs(120), secs(120)),
        ("TimeoutSec=10\nTimeoutStopSec=3", secs(10), secs(3)),
        ("TimeoutStartSec=infinity", TIMESPAN_INFINITY, secs(90)),
        ("TimeoutStopSec=0", secs(90), TIMESPAN_INFINITY),
        (
            "TimeoutSec=500ms",
            Duration::from_millis(500),
            Duration::from_millis(500),
        ),
        ("TimeoutSec=1h\nTimeoutSec=", secs(90), secs(90)),
        ("TimeoutStartSec=1.5", Duration::from_millis(1500), secs(90)),
    ];
    for (lines, start, stop) in cases {
        let s = clean(svc(&format!("ExecStart=/bin/x\n{lines}")));
        assert_eq!((s.start_timeout, s.stop_timeout), (start, stop), "{lines}");
    }
    let s = clean(svc(
        "Type=oneshot\nExecStart=/bin/x\nTimeoutStartSec=30\nTimeoutStartSec=",
    ));
    assert_eq!(
        s.start_timeout, TIMESPAN_INFINITY,
        "emptied: a oneshot's default"
    );
    refused(
        svc("ExecStart=/bin/x\nTimeoutStartSec=soon"),
        &[r#"u/web.service:3:1: invalid TimeoutStartSec=soon: expected a number at "soon""#],
    );
    refused(
        svc("ExecStart=/bin/x\nTimeoutSec=-5"),
        &["u/web.service:3:1: invalid TimeoutSec=-5: a time span cannot be negative"],
    );
}

/// The manager's `DefaultTimeoutStartSec=` and `DefaultTimeoutStopSec=`
/// (system.conf) are the timeouts of a unit that sets none, as systemd's:
/// a unit's own key wins, an emptied one goes back to the manager's, a
/// oneshot still has no start timeout, and a mount's one timeout is the
/// start default.
#[test]
fn the_managers_default_timeouts() {
    let conf = "[Manager]\nDefaultTimeoutStartSec=5min\nDefaultTimeoutStopSec=7s\n";
    let (manager, diags) = crate::system_conf::parse_manager_config(&[("f", conf)]);
    assert!(diags.is_empty(), "{diags:?}");
    let mut facts = flotilla_units::specifier::SpecifierContext::system("");
    manager.translate_with(&mut facts);
    let with = |name: &str, text: &str| {
        let p = crate::translate_file_with(&facts, "u/x", name, text);
        p.spec
            .unwrap_or_else(|| panic!("{name}: {:?}", p.diagnostics))
    };
    let secs = Duration::from_secs;
    // (unit, body, start timeout, stop timeout)
    let cases = [
        (
            "web.service",
            "[Service]\nExecStart=/bin/x\n",
            secs(300),
            secs(7),
        ),
        (
            "web.service",
            "[Service]\nExecStart=/bin/x\nTimeoutStartSec=9\n",
            secs(9),
            secs(7),
        ),
        (
            "web.service",
            "[Service]\nExecStart=/bin/x\nTimeoutSec=9\nTimeoutSec=\n",
            secs(300),
            secs(7),
        ),
        (
            "job.service",
            "[Service]\nType=oneshot\nExecStart=/bin/x\n",
            TIMESPAN_INFINITY,
            secs(7),
        ),
        (
            "mnt-a.mount",
            "[Mount]\nWhat=/dev/x\nWhere=/mnt/a\n",
            secs(300),
            secs(300),
        ),
    ];
    for (name, body, start, stop) in cases {
        let s = with(name, body);
        assert_eq!((s.start_timeout, s.stop_timeout), (start, stop), "{body}");
    }
    // Without the manager's settings: systemd's built-in 90 s.
    let s = clean(svc("ExecStart=/bin/x"));
    assert_eq!((s.start_timeout, s.stop_timeout), (secs(90), secs(90)));
}

#[test]
fn environment() {
    let s = clean(svc(r#"ExecStart=/bin/x
Environment=A=1 "B=two words" C='x y'
Environment=A=override D=
Environment="E=quote\"inside" F=%n"#));
    let env: Vec<(&str, &str)> = s
        .extras
        .environment
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        env,
        [
            ("A", "override"),
            ("B", "two words"),
            ("C", "x y"),
            ("D", ""),
            ("E", "quote\"inside"),
            ("F", "web.service")
        ]
    );
    // An empty Environment= clears what came before.
    let s = clean(svc(
        "ExecStart=/bin/x\nEnvironment=A=1\nEnvironment=\nEnvironment=B=2",
    ));
    assert_eq!(s.extras.environment.keys().collect::<Vec<_>>(), ["B"]);
    // Words that are not assignments are ignored, as systemd ignores them.
    let s = warned(
        svc("ExecStart=/bin/x\nEnvironment=A=1 1BAD=x novalue"),
        &[
            r#"u/web.service:3:1: warning: Environment=: "1BAD=x" is not a NAME=value assignment, ignored"#,
            r#"u/web.service:3:1: warning: Environment=: "novalue" is not a NAME=value assignment, ignored"#,
        ],
    );
    assert_eq!(s.extras.environment.len(), 1);
    refused(
        svc("ExecStart=/bin/x\nEnvironment=\"A=1"),
        &["u/web.service:3:1: invalid Environment=: unterminated quote"],
    );
}

#[test]
fn environment_files() {
    let s = clean(svc(
        "ExecStart=/bin/x\nEnvironmentFile=/etc/environment\nEnvironmentFile=-/etc/default/web",
    ));
    assert_eq!(
        s.extras.environment_files,
        [
            (PathBuf::from("/etc/environment"), false),
            (PathBuf::from("/etc/default/web"), true)
        ]
    );
    let s = clean(svc(
        "ExecStart=/bin/x\nEnvironmentFile=/a\nEnvironmentFile=\nEnvironmentFile=/b",
    ));
    assert_eq!(s.extras.environment_files, [(PathBuf::from("/b"), false)]);
    refused(
        svc("ExecStart=/bin/x\nEnvironmentFile=web.env"),
        &[r#"u/web.service:3:1: EnvironmentFile= needs an absolute path, not "web.env""#],
    );
}

/// `LogRateLimitIntervalSec=` and `LogRateLimitBurst=`: systemd's time
/// span and number; empty resets to the default (journald's, in the init).
#[test]
fn log_rate_limit() {
    let s = clean(svc(
        "ExecStart=/bin/x\nLogRateLimitIntervalSec=2min\nLogRateLimitBurst=100",
    ));
    assert_eq!(
        s.extras.log_rate_limit_interval,
        Some(Duration::from_secs(120))
    );
    assert_eq!(s.extras.log_rate_limit_burst, Some(100));
    let s = clean(svc(
        "ExecStart=/bin/x\nLogRateLimitIntervalSec=0\nLogRateLimitBurst=0",
    ));
    assert_eq!(s.extras.log_rate_limit_interval, Some(Duration::ZERO));
    assert_eq!(s.extras.log_rate_limit_burst, Some(0));
    let s = clean(svc(
        "ExecStart=/bin/x\nLogRateLimitBurst=100\nLogRateLimitBurst=\nLogRateLimitIntervalSec=5s\nLogRateLimitIntervalSec=",
    ));
    assert_eq!(s.extras.log_rate_limit_interval, None);
    assert_eq!(s.extras.log_rate_limit_burst, None);
    let p = svc("ExecStart=/bin/x\nLogRateLimitIntervalSec=soon\nLogRateLimitBurst=many");
    let shown = diags(&p);
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert!(
        shown[0].starts_with("u/web.service:3:1: invalid LogRateLimitIntervalSec=soon: "),
        "{shown:?}"
    );
    assert_eq!(
        shown[1],
        "u/web.service:4:1: invalid LogRateLimitBurst=many: not a whole number from 0 to 4294967295"
    );
    assert!(p.spec.is_none());
}

#[test]
fn process_context() {
    let s = clean(svc(
        "ExecStart=/bin/x\nUser=www-data\nGroup=%p\nWorkingDirectory=/srv/web\nKillSignal=SIGINT",
    ));
    assert_eq!(s.extras.user.as_deref(), Some("www-data"));
    assert_eq!(s.extras.group.as_deref(), Some("web"));
    assert_eq!(s.extras.working_directory, Some(PathBuf::from("/srv/web")));
    assert_eq!(s.kill_signal, Signal(2));
    let s = clean(svc(
        "ExecStart=/bin/x\nUser=1000\nUser=\nKillSignal=9\nKillSignal=HUP",
    ));
    assert_eq!(s.extras.user, None);
    assert_eq!(s.kill_signal, Signal(1));
    // `-`: a missing directory is no failure; a later line without it
    // makes it one again.
    let s = clean(svc("ExecStart=/bin/x\nWorkingDirectory=-/srv/web"));
    assert_eq!(s.extras.working_directory, Some(PathBuf::from("/srv/web")));
    assert_eq!(s.extras.working_directory_optional, Some(true));
    let s = clean(svc(
        "ExecStart=/bin/x\nWorkingDirectory=-/srv/web\nWorkingDirectory=/srv",
    ));
    assert_eq!(s.extras.working_directory, Some(PathBuf::from("/srv")));
    assert_eq!(s.extras.working_directory_optional, None);
    let s = warned(
        svc("ExecStart=/bin/x\nWorkingDirectory=~"),
        &["u/web.service:3:1: warning: WorkingDirectory=~ (the user's home directory) is not supported, ignored"],
    );
    assert_eq!(s.extras.working_directory, None);
    refused(
        svc("ExecStart=/bin/x\nWorkingDirectory=srv"),
        &[r#"u/web.service:3:1: WorkingDirectory= needs an absolute path, not "srv""#],
    );
    refused(
        svc("ExecStart=/bin/x\nKillSignal=SIGFOO"),
        &["u/web.service:3:1: invalid KillSignal=SIGFOO"],
    );
}

#[test]
fn kill_mode_and_remain_after_exit() {
    use flotilla_units::context::process::KillMode;
    for (mode, want) in [
        ("control-group", KillMode::ControlGroup),
        ("process", KillMode::Process),
        ("mixed", KillMode::Mixed),
        ("none", KillMode::None),
    ] {
        let s = clean(svc(&format!("ExecStart=/bin/x\nKillMode={mode}")));
        assert_eq!(s.extras.context.kill_mode, want);
    }
    let p = svc("ExecStart=/bin/x\nKillMode=all");
    assert!(p.spec.is_none());
    assert!(
        diags(&p)[0].starts_with("u/web.service:3:1: invalid KillMode=all"),
        "{:?}",
        diags(&p)
    );
    // systemd's default is no; a oneshot is `exited` either way.
    let s = clean(svc("Type=oneshot\nExecStart=/bin/x"));
    assert!(!s.remain_after_exit());
    let s = clean(svc("ExecStart=/bin/x\nRemainAfterExit=y"));
    assert!(s.remain_after_exit());
    refused(
        svc("ExecStart=/bin/x\nRemainAfterExit=perhaps"),
        &["u/web.service:3:1: invalid RemainAfterExit=perhaps: not a boolean"],
    );
}

/// `Requires=`, `BindsTo=` and `Wants=` order nothing unless `After=`
/// names the unit (systemd.unit(5)): `requires`/`wants` without it,
/// `depends-on`/`waits-for` with it; `Before=` the other way is no
/// ordering after it. A `.target` is translated the same way: its
/// ordering after what it pulls in is a default dependency, added over
/// the whole unit set (`load/default_deps.rs`).
#[test]
fn requires_and_wants_without_after_order_nothing() {
    let p = tr("[Unit]
Requires=db.service log.service
Wants=cache.service
After=log.service
Before=db.service

[Service]
ExecStart=/bin/web
");
    assert_eq!(p.origin.positions(TargetList::Requires), [Pos::new(2, 1)]);
    assert_eq!(p.origin.depends_on_pos(), [Pos::new(2, 1)]);
    assert_eq!(p.origin.positions(TargetList::Wants), [Pos::new(3, 1)]);
    assert!(p.origin.default_dependencies);
    let s = clean(p);
    assert_eq!(s.requires, ["db.service"]);
    assert_eq!(s.depends_on, ["log.service"]);
    assert_eq!(s.wants, ["cache.service"]);
    assert!(s.waits_for.is_empty());
    assert_eq!(s.before, ["db.service"]);

    // BindsTo= as Requires=: unordered without After=.
    let s = clean(tr(
        "[Unit]\nBindsTo=dev.service\nBindsTo=sto.service\nAfter=sto.service\n[Service]\nExecStart=/bin/web\n",
    ));
    assert_eq!(s.requires, ["dev.service"]);
    assert_eq!(s.depends_on, ["sto.service"]);
    // Wants= with After= is `waits-for`.
    let s = clean(tr(
        "[Unit]\nWants=w.service\nAfter=w.service\n[Service]\nExecStart=/bin/web\n",
    ));
    assert_eq!(s.waits_for, ["w.service"]);
    assert!(s.wants.is_empty());

    let target = |text: &str| translate_file(F, "multi-user.target", text);
    let p = target(
        "[Unit]
Requires=basic.target
Wants=web.service
",
    );
    assert!(p.origin.default_dependencies);
    let t = clean(p);
    assert_eq!(t.requires, ["basic.target"]);
    assert_eq!(t.wants, ["web.service"]);
    let p = target(
        "[Unit]
DefaultDependencies=no
Requires=a.service
Wants=b.service
After=b.service
",
    );
    assert!(!p.origin.default_dependencies);
    let t = clean(p);
    assert_eq!(t.requires, ["a.service"]);
    assert_eq!(t.waits_for, ["b.service"]);
}

#[test]
fn unit_section_and_dependencies() {
    let p = tr("[Unit]
Description=The %n web server
Documentation=man:web(8) https://example.com
Requires=db.service
After=db.service network-online.target
Wants=network-online.target cache.service
BindsTo=storage.service
Requires=db.service
Wants=db.service

[Service]
ExecStart=/bin/web
");
    assert_eq!(diags(&p), Vec::<String>::new());
    assert_eq!(p.origin.depends_on_pos(), [Pos::new(4, 1)]);
    assert_eq!(p.origin.waits_for_pos(), [Pos::new(6, 1)]);
    assert_eq!(p.origin.positions(TargetList::Requires), [Pos::new(7, 1)]);
    assert_eq!(p.origin.positions(TargetList::Wants), [Pos::new(6, 1)]);
    let s = p.spec.unwrap();
    assert_eq!(s.description.as_deref(), Some("The web.service web server"));
    // Requires= with After= of it is `depends-on`, deduplicated; BindsTo=
    // without After= pulls in unordered.
    assert_eq!(s.depends_on, ["db.service"]);
    assert_eq!(s.requires, ["storage.service"]);
    assert_eq!(
        s.waits_for,
        ["network-online.target"],
        "a hard dependency is not also waited for"
    );
    // No After= names it: pulled in without ordering.
    assert_eq!(s.wants, ["cache.service"]);

    let s = warned(
        tr("[Unit]
After=syslog.target
Before=other.service
Requisite=a.service
PartOf=b.service
Conflicts=c.service
OnFailure=d.service
ConditionPathExists=/etc/web
Requires=web.service
[Service]
ExecStart=/bin/web
"),
        &[
            "u/web.service:9:1: warning: Requires=web.service: a unit cannot depend on itself, ignored",
        ],
    );
    assert!(s.depends_on.is_empty());
    // Ordering, requisites, conflicts and conditions are honoured.
    assert_eq!(s.extras.requisite, ["a.service"]);
    assert_eq!(s.extras.part_of, ["b.service"]);
    assert_eq!(s.after, ["syslog.target"]);
    assert_eq!(s.before, ["other.service"]);
    assert_eq!(s.conflicts, ["c.service"]);
    assert_eq!(s.extras.conditions.len(), 1);
    // Ordering against itself is meaningless and silently ignored.
    clean(tr(
        "[Unit]\nAfter=web.service\n[Service]\nExecStart=/bin/web\n",
    ));
    // Specifiers in names; a name with systemd's escapes (`\x2d`) is a
    // name as any other, one with a character no unit name has is refused.
    let s = clean(translate_file(
        "u/web@1.service",
        "web@1.service",
        "[Unit]\nRequires=%p-db@%i.service\nAfter=%p-db@%i.service\n[Service]\nExecStart=/bin/web\n",
    ));
    assert_eq!(s.depends_on, ["web-db@1.service"]);
    let s = clean(tr(
        "[Unit]\nRequires=dev-disk-by\\x2duuid.device\n[Service]\nExecStart=/bin/web\n",
    ));
    let all: Vec<&String> = s.depends_on.iter().chain(&s.requires).collect();
    assert_eq!(all, ["dev-disk-by\\x2duuid.device"], "{s:?}");
    refused(
        tr("[Unit]\nRequires=dev-disk/by.device\n[Service]\nExecStart=/bin/web\n"),
        &["u/web.service:2:1: invalid unit name \"dev-disk/by.device\" in Requires="],
    );
    // DefaultDependencies=: said on the origin, the dependencies added
    // over the whole set (`load/default_deps.rs`).
    let p = tr("[Unit]\nDefaultDependencies=no\n[Service]\nExecStart=/bin/web\n");
    assert!(!p.origin.default_dependencies);
    clean(p);
    let p = tr("[Unit]\nDefaultDependencies=yes\n[Service]\nExecStart=/bin/web\n");
    assert!(p.origin.default_dependencies);
    clean(p);
    refused(
        tr("[Unit]\nDefaultDependencies=maybe\n[Service]\nExecStart=/bin/web\n"),
        &["u/web.service:2:1: invalid DefaultDependencies=maybe: not a boolean"],
    );
    // An empty Description= clears it.
    let s = clean(tr(
        "[Unit]\nDescription=x\nDescription=\n[Service]\nExecStart=/bin/web\n",
    ));
    assert_eq!(s.description, None);
}

#[test]
fn other_sections_and_keys() {
    let s = warned(
        tr("[Unit]
Description=x
X-Custom=ignored by design

[Service]
ExecStart=/bin/web
PrivateTmp=yes
FileDescriptorStorePreserve=yes
Requires=misplaced.service

[Install]
WantedBy=multi-user.target
Alias=w.service

[X-Fleet]
MachineOf=db.service
Conflicts=web@*.service

[X-Other]
Anything=goes

[Socket]
ListenStream=80
"),
        &[
            "u/web.service:8:1: warning: [Service] FileDescriptorStorePreserve= is not supported, ignored",
            "u/web.service:9:1: warning: [Service] Requires= is not supported, ignored",
            "u/web.service:23:1: warning: [Socket] ListenStream= does not apply to a .service unit, ignored",
        ],
    );
    assert!(s.depends_on.is_empty());
}

#[test]
fn unit_names() {
    let text = "[Service]\nExecStart=/bin/x\n";
    // A socket starts the service of its name unless it says otherwise.
    let s = clean(translate_file(
        "u/web.socket",
        "web.socket",
        "[Socket]\nListenStream=80\n",
    ));
    assert_eq!(s.kind, UnitType::Socket);
    assert_eq!(s.extras.triggers, ["web.service"]);
    let p = translate_file("u/web.timer", "web.timer", text);
    assert!(p.spec.is_none(), "a timer with no setting: {:?}", diags(&p));
    refused(
        translate_file("u/web@.service", "web@.service", text),
        &["u/web@.service: web@.service is a template: run an instance such as web@NAME.service"],
    );
    refused(
        translate_file("u/web", "web", text),
        &[r#"u/web: invalid unit name: unit name "web" has no suffix such as .service"#],
    );
    refused(
        translate_file("u/a b.service", "a b.service", text),
        &[
            r#"u/a b.service: invalid unit name: unit name "a b.service" contains ' ' (allowed: A-Z a-z 0-9 : _ . @ - \)"#,
        ],
    );
    let s = clean(translate_file("u/web@1.service", "web@1.service", text));
    assert_eq!(s.name, "web@1.service");
}

#[test]
fn parse_problems_come_with_the_translation() {
    let long = format!("[Service]\nExecStart=/bin/echo {}\n", "x".repeat(3000));
    refused(
        tr(&long),
        &["u/web.service:2:1: line too long: 3020 bytes (fleet and systemd refuse lines of 2048 bytes or more)"],
    );
    warned(
        tr("junk\n[Service]\nExecStart=/bin/x\nbroken line\n"),
        &[
            "u/web.service:1:1: warning: text before the first [section] is ignored",
            "u/web.service:4:1: warning: missing '=', line ignored",
        ],
    );
    refused(
        tr("[Service\nExecStart=/bin/x\n"),
        &["u/web.service:1:1: unterminated section header (no ']')"],
    );
}

#[test]
fn translate_takes_option_lists_without_positions() {
    let o = |s: &str, n: &str, v: &str| UnitOption {
        section: s.into(),
        name: n.into(),
        value: v.into(),
    };
    let p = translate(
        "etcd:web@2.service",
        "web@2.service",
        &[
            o("Unit", "Description", "web %i"),
            o("Service", "ExecStart", "/bin/web --port 80%i"),
            o("Service", "Restart", "on-abort"),
            o("Service", "UtmpIdentifier", "web"),
            o("X-Fleet", "Conflicts", "web@*.service"),
        ],
    );
    assert_eq!(
        diags(&p),
        ["etcd:web@2.service: warning: [Service] UtmpIdentifier= is not supported, ignored"]
    );
    assert_eq!(p.origin.file, "etcd:web@2.service");
    assert_eq!(p.origin.pos, Pos::default());
    let s = p.spec.unwrap();
    assert_eq!(s.description.as_deref(), Some("web 2"));
    assert_eq!(s.exec_start, Some(cmd(&["/bin/web", "--port", "802"])));
    assert_eq!(s.restart, RestartPolicy::OnAbort);
}

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/systemd/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn fixture_fleet_docker_template_instance() {
    let text = fixture("web@.service");
    let p = translate_file("fixtures/web@.service", "web@8080.service", &text);
    // ${COREOS_PUBLIC_IPV4} is substituted from the environment file when
    // the process starts.
    let s = clean(p);
    assert_eq!(s.name, "web@8080.service");
    assert_eq!(s.description.as_deref(), Some("Web server on port 8080"));
    assert_eq!(s.depends_on, ["docker.service"]);
    assert_eq!(
        s.extras.environment_files,
        [(PathBuf::from("/etc/environment"), false)]
    );
    assert_eq!(
        s.exec_start_pre,
        [
            ignored(&["/usr/bin/docker", "kill", "web-8080"]),
            ignored(&["/usr/bin/docker", "rm", "web-8080"]),
            cmd(&[
                "/usr/bin/etcdctl",
                "set",
                "/web/8080",
                "${COREOS_PUBLIC_IPV4}:8080"
            ]),
        ]
    );
    assert_eq!(
        s.exec_start,
        Some(cmd(&[
            "/usr/bin/docker",
            "run",
            "--rm",
            "--name",
            "web-8080",
            "-p",
            "${COREOS_PUBLIC_IPV4}:8080:80",
            "nginx",
        ]))
    );
    assert_eq!(
        s.exec_stop,
        Some(cmd(&["/usr/bin/docker", "stop", "web-8080"]))
    );
    assert_eq!(s.restart, RestartPolicy::Always);
    assert_eq!(s.restart_delay, Duration::from_secs(10));
    assert_eq!(s.start_timeout, Duration::from_secs(300));
    // The template itself cannot run.
    let p = translate_file("fixtures/web@.service", "web@.service", &text);
    assert!(p.spec.is_none());
}

#[test]
fn fixture_forking_daemon() {
    let s = warned(
        translate_file(
            "fixtures/nginx.service",
            "nginx.service",
            &fixture("nginx.service"),
        ),
        &[],
    );
    assert_eq!(s.kind, UnitType::BackgroundPidfile);
    assert_eq!(s.extras.pidfile, Some(PathBuf::from("/run/nginx.pid")));
    assert_eq!(s.exec_start_pre, [cmd(&["/usr/sbin/nginx", "-t"])]);
    assert_eq!(s.exec_start, Some(cmd(&["/usr/sbin/nginx"])));
    assert_eq!(
        s.extras.exec_reload,
        Some(cmd(&["/usr/sbin/nginx", "-s", "reload"]))
    );
    assert_eq!(
        s.exec_stop,
        Some(cmd(&["/bin/kill", "-s", "QUIT", "$MAINPID"]))
    );
    assert_eq!(s.kill_signal, Signal(3));
    assert_eq!(s.stop_timeout, Duration::from_secs(5));
    assert_eq!(s.waits_for, ["network-online.target"]);
}

#[test]
fn fixture_oneshot() {
    let s = clean(translate_file(
        "fixtures/setup.service",
        "setup.service",
        &fixture("setup.service"),
    ));
    assert_eq!(s.kind, UnitType::Oneshot);
    assert_eq!(
        s.exec_start,
        Some(cmd(&[
            "/bin/sh",
            "-c",
            "mkdir -p /var/lib/app && chown app /var/lib/app"
        ]))
    );
    assert_eq!(s.extras.user, None);
    assert_eq!(s.start_timeout, TIMESPAN_INFINITY);
    assert_eq!(
        s.extras.environment.get("LANG").map(String::as_str),
        Some("C.UTF-8")
    );
}

#[test]
fn ignored_keys_are_not_expanded() {
    // One warning for the key, none for the specifiers in a value that is
    // not used anyway.
    warned(
        svc("ExecStart=/bin/x\nUtmpIdentifier=%H-%m"),
        &["u/web.service:3:1: warning: [Service] UtmpIdentifier= is not supported, ignored"],
    );
}

/// A value the key table refuses is refused from a unit file too, at the
/// option's line (found by the fuzzer: a NUL byte in `Description=`).
#[test]
fn values_pass_the_key_tables_checks() {
    let p = tr("[Unit]\nDescription=a\0b\n[Service]\nExecStart=/bin/true\n");
    assert!(p.spec.is_none());
    let d = diags(&p);
    assert_eq!(
        d,
        ["u/web.service:2:1: web.service: `description`: it contains a NUL character"]
    );
}

/// `Sockets=`: the sockets the service is handed besides those that
/// trigger it; as in systemd, each is also wanted and ordered before the
/// service (`waits-for`).
#[test]
fn sockets_names_the_sockets_handed_and_waits_for_them() {
    let s = clean(svc(
        "ExecStart=/bin/x\nSockets=a.socket b.socket\nSockets=c.socket",
    ));
    assert_eq!(s.extras.sockets, ["a.socket", "b.socket", "c.socket"]);
    assert_eq!(s.waits_for, ["a.socket", "b.socket", "c.socket"]);
    refused(
        svc("ExecStart=/bin/x\nSockets=a/b.socket"),
        &["u/web.service:3:1: invalid unit name \"a/b.socket\" in Sockets="],
    );
}

/// `RestartKillSignal=`: the signal of the stop that begins a restart by
/// hand; empty is the kill signal again; a name that is no signal is an
/// error.
#[test]
fn restart_kill_signal() {
    let s = clean(svc("ExecStart=/bin/x\nRestartKillSignal=SIGUSR2"));
    assert_eq!(s.extras.restart_kill_signal, Signal::parse("SIGUSR2"));
    let s = clean(svc(
        "ExecStart=/bin/x\nRestartKillSignal=SIGUSR2\nRestartKillSignal=",
    ));
    assert_eq!(s.extras.restart_kill_signal, None);
    refused(
        svc("ExecStart=/bin/x\nRestartKillSignal=SIGNOPE"),
        &["u/web.service:3:1: invalid RestartKillSignal=SIGNOPE"],
    );
}
