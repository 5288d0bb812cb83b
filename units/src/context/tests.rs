//! [`ServiceContext::set`] for every key: a good value, a bad one and the
//! error it gets, resets, and the JSON form.

use super::caps::CapSet;
use super::limits::{Rlimit, RlimitValue, INFINITY};
use super::process::{KillMode, Output};
use super::resources::Amount;
use super::sandbox::{PathRule, ProtectHome, ProtectSystem};
use super::syscalls::Deny;
use super::*;

fn set(c: &mut ServiceContext, key: &str, value: &str) -> Result<(), String> {
    let k = Key::from_name(key).unwrap_or_else(|| panic!("no key {key}"));
    c.set(k, value)
}

/// Every key with a good value, a bad value, and the start of the bad
/// value's error.
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "RuntimeDirectory",
        "redis",
        "/run/redis",
        "`/run/redis` is absolute",
    ),
    ("StateDirectory", "a/b", "../x", "`../x` contains `..`"),
    ("CacheDirectory", "c c:d", "c:../d", "`../d` contains `..`"),
    ("LogsDirectory", "l", ".", "`.` names no directory"),
    (
        "ConfigurationDirectory",
        "conf",
        "/etc/x",
        "`/etc/x` is absolute",
    ),
    (
        "RuntimeDirectoryMode",
        "0750",
        "0999",
        "`0999` is not an octal mode",
    ),
    (
        "StateDirectoryMode",
        "0700",
        "x",
        "`x` is not an octal mode",
    ),
    (
        "CacheDirectoryMode",
        "0750",
        "77777",
        "`77777` is more than 07777",
    ),
    (
        "LogsDirectoryMode",
        "2750",
        "-1",
        "`-1` is not an octal mode",
    ),
    (
        "ConfigurationDirectoryMode",
        "0750",
        "abc",
        "`abc` is not an octal mode",
    ),
    (
        "RuntimeDirectoryPreserve",
        "restart",
        "sometimes",
        "`sometimes` is not a RuntimeDirectoryPreserve= value",
    ),
    ("UMask", "0027", "0800", "`0800` is not an octal mode"),
    (
        "CPUAffinity",
        "0-1 3",
        "2-1",
        "`2-1` is a range that ends before it starts",
    ),
    (
        "NUMAPolicy",
        "bind",
        "weighted",
        "`weighted` is not a NUMA policy",
    ),
    ("NUMAMask", "0", "node0", "`node0` is not a number"),
    ("Nice", "-5", "-21", "-21 is out of range"),
    ("OOMScoreAdjust", "-900", "2000", "2000 is out of range"),
    (
        "StandardInput",
        "tty-force",
        "keyboard",
        "`keyboard` is not an input",
    ),
    ("StandardInputText", "hello", r"\q", "invalid escape \\q"),
    ("StandardInputData", "aGk=", "a*", "not valid Base64"),
    (
        "TTYPath",
        "/dev/ttyS0",
        "ttyS0",
        "`ttyS0` is not an absolute path",
    ),
    ("TTYReset", "yes", "maybe", "`maybe` is not a boolean"),
    ("TTYVHangup", "yes", "maybe", "`maybe` is not a boolean"),
    (
        "TTYVTDisallocate",
        "yes",
        "maybe",
        "`maybe` is not a boolean",
    ),
    (
        "StandardOutput",
        "append:/var/log/a.log",
        "file:a.log",
        "`file:a.log`: `a.log` is not an absolute path",
    ),
    (
        "StandardError",
        "null",
        "speaker",
        "`speaker` is not an output",
    ),
    (
        "KillMode",
        "mixed",
        "everything",
        "`everything` is not a kill mode",
    ),
    (
        "OOMPolicy",
        "continue",
        "ignore",
        "`ignore` is not an OOM policy",
    ),
    ("LimitCPU", "10min", "forever", "`forever`: "),
    ("LimitFSIZE", "1G", "1Q", "`1Q` is not a size"),
    ("LimitDATA", "infinity", "lots", "`lots` is not a size"),
    (
        "LimitSTACK",
        "8M:16M",
        "16M:8M",
        "`16M:8M`: the soft limit is above the hard limit",
    ),
    ("LimitCORE", "0", "-1", "`-1` is negative"),
    ("LimitRSS", "1G", "G", "`G` is not a size"),
    ("LimitNPROC", "512", "many", "`many` is not a number"),
    ("LimitNOFILE", "65536", "1.5", "`1.5` is not a number"),
    ("LimitAS", "4G", "4X", "`4X` is not a size"),
    ("LimitMEMLOCK", "64K", "64KiB", "`64KiB` is not a size"),
    ("LimitLOCKS", "100", "x", "`x` is not a number"),
    ("LimitSIGPENDING", "1000", "-5", "`-5` is not a number"),
    ("LimitMSGQUEUE", "800K", "eight", "`eight` is not a size"),
    ("LimitNICE", "+5", "+20", "`+20` is not a nice limit"),
    ("LimitRTPRIO", "50", "high", "`high` is not a number"),
    ("LimitRTTIME", "1s", "1parsec", "`1parsec`: unknown unit"),
    (
        "MemoryMax",
        "512M",
        "101%",
        "`101%` is more than 100% of the memory",
    ),
    ("MemoryHigh", "40%", "soon", "`soon` is not a size"),
    ("CPUWeight", "200", "10001", "10001 is out of range"),
    (
        "CPUQuota",
        "20%",
        "0%",
        "`0%`: a CPU quota must be above 0%",
    ),
    ("TasksMax", "256", "0", "`0` is not a task limit"),
    ("IOWeight", "500", "0", "0 is out of range"),
    (
        "Delegate",
        "pids memory cpuacct",
        "pids net_cls",
        "`net_cls` is not a controller (yes, no, or of: cpu, cpuset, io",
    ),
    (
        "Slice",
        "system-foo-bar.slice",
        "a--b.slice",
        "a--b.slice: a slice's name has no empty part",
    ),
    ("IOAccounting", "yes", "maybe", "`maybe` is not a boolean"),
    ("MemoryAccounting", "true", "2", "`2` is not a boolean"),
    ("TasksAccounting", "on", "x", "`x` is not a boolean"),
    (
        "NoNewPrivileges",
        "yes",
        "perhaps",
        "`perhaps` is not a boolean",
    ),
    (
        "CapabilityBoundingSet",
        "CAP_NET_BIND_SERVICE",
        "CAP_NET_BIND",
        "`CAP_NET_BIND` is not a capability",
    ),
    (
        "AmbientCapabilities",
        "CAP_NET_BIND_SERVICE",
        "NET_ADMIN",
        "`NET_ADMIN` is not a capability",
    ),
    (
        "PrivateTmp",
        "true",
        "private",
        "`private` is not a boolean",
    ),
    ("PrivateDevices", "1", "2", "`2` is not a boolean"),
    ("PrivateNetwork", "on", "lan", "`lan` is not a boolean"),
    (
        "ProtectSystem",
        "strict",
        "stricter",
        "`stricter` is not a ProtectSystem= value",
    ),
    (
        "ProtectHome",
        "read-only",
        "readonly",
        "`readonly` is not a ProtectHome= value",
    ),
    (
        "ReadWritePaths",
        "-/var/lib/x",
        "var/lib/x",
        "`var/lib/x` is not an absolute path",
    ),
    (
        "ReadOnlyPaths",
        "/etc",
        "/etc/../root",
        "`/etc/../root` contains `..`",
    ),
    (
        "InaccessiblePaths",
        "-/secret",
        "\"/open",
        "unterminated \" quote",
    ),
    (
        "BindPaths",
        "-/srv/data:/data:norbind",
        "/srv:data",
        "`data` is not an absolute path",
    ),
    (
        "TemporaryFileSystem",
        "/var/lib:ro,size=1M",
        "var/lib",
        "`var/lib` is not an absolute path",
    ),
    (
        "BindReadOnlyPaths",
        "/etc/app.conf",
        "/a:/b:ro",
        "`ro` is not a bind option (write rbind or norbind)",
    ),
    (
        "ProtectKernelTunables",
        "yes",
        "ro",
        "`ro` is not a boolean",
    ),
    ("ProtectKernelModules", "yes", "x", "`x` is not a boolean"),
    ("ProtectKernelLogs", "yes", "x", "`x` is not a boolean"),
    (
        "ProtectControlGroups",
        "yes",
        "private",
        "`private` is not a boolean",
    ),
    ("ProtectHostname", "yes", "x", "`x` is not a boolean"),
    ("ProtectClock", "yes", "x", "`x` is not a boolean"),
    (
        "RestrictNamespaces",
        "~user",
        "~users",
        "`users` is not a namespace kind",
    ),
    (
        "RestrictAddressFamilies",
        "AF_UNIX AF_INET",
        "AF_UNIX INET",
        "`INET` is not an address family",
    ),
    ("RestrictSUIDSGID", "yes", "x", "`x` is not a boolean"),
    ("LockPersonality", "yes", "x", "`x` is not a boolean"),
    ("MemoryDenyWriteExecute", "yes", "x", "`x` is not a boolean"),
    ("RestrictRealtime", "yes", "x", "`x` is not a boolean"),
    ("PrivateMounts", "yes", "x", "`x` is not a boolean"),
    (
        "ProtectProc",
        "invisible",
        "hidden",
        "`hidden` is not a ProtectProc= value",
    ),
    (
        "ProcSubset",
        "pid",
        "pids",
        "`pids` is not a ProcSubset= value",
    ),
    ("IgnoreSIGPIPE", "no", "maybe", "`maybe` is not a boolean"),
    ("NoExecPaths", "/", "tmp", "`tmp` is not an absolute path"),
    (
        "ExecPaths",
        "/usr/bin/redis-server /usr/lib",
        "/usr/../lib",
        "`/usr/../lib` contains `..`",
    ),
    (
        "PrivateUsers",
        "yes",
        "identity",
        "`identity` is not a boolean",
    ),
    ("RemoveIPC", "yes", "x", "`x` is not a boolean"),
    (
        "LoadCredential",
        "tls.key:/etc/ssl/private/web.pem",
        "tls/key:/etc/web.pem",
        "`tls/key` is not a credential ID",
    ),
    (
        "SetCredential",
        "user:web",
        "user",
        "`user` has no `:` between the ID and the value",
    ),
    ("LogLevelMax", "info", "loud", "`loud` is not a log level"),
    (
        "LogNamespace",
        "foobar",
        "foo/bar",
        "`foo/bar` is not a journal namespace's name",
    ),
    (
        "LogExtraFields",
        "FOO=bar",
        "_PID=1",
        "`_PID` is not a journal field a unit may set",
    ),
    (
        "ImportCredential",
        "tty.serial.ttyS0.agetty.*:agetty.",
        "agetty.?x:y.",
        "`agetty.?x` does not end in `*`",
    ),
    (
        "CPUSchedulingPolicy",
        "idle",
        "deadline",
        "`deadline` is not a scheduling policy (write other, batch, idle, fifo or rr)",
    ),
    (
        "CPUSchedulingPriority",
        "50",
        "100",
        "100 is out of range (a CPU scheduling priority is from 0 to 99)",
    ),
    (
        "CPUSchedulingResetOnFork",
        "yes",
        "x",
        "`x` is not a boolean",
    ),
    (
        "IOSchedulingClass",
        "idle",
        "lazy",
        "`lazy` is not an I/O scheduling class (write realtime, best-effort, idle or none)",
    ),
    (
        "IOSchedulingPriority",
        "7",
        "8",
        "8 is out of range (an I/O scheduling priority is from 0 to 7)",
    ),
    (
        "UnsetEnvironment",
        "LANG LC_ALL=C",
        "=C",
        "`=C` is not a variable name or an assignment",
    ),
    ("SendSIGHUP", "yes", "x", "`x` is not a boolean"),
    ("SendSIGKILL", "no", "x", "`x` is not a boolean"),
    (
        "AppArmorProfile",
        "-system_tor",
        "a b",
        "`a b` is not an AppArmor profile name",
    ),
    (
        "PAMName",
        "systemd-user",
        "../shadow",
        "`../shadow` is not a PAM service (the name of a file in /etc/pam.d)",
    ),
    (
        "SyslogIdentifier",
        "nginx",
        "a\nb",
        "an identifier is one line",
    ),
    (
        "SyslogLevel",
        "warning",
        "loud",
        "`loud` is not a log level (write emerg, alert, crit, err, warning, notice, info, debug)",
    ),
    ("SyslogLevelPrefix", "no", "x", "`x` is not a boolean"),
    (
        "DevicePolicy",
        "strict",
        "open",
        "`open` is not a device policy (write auto, closed or strict)",
    ),
    (
        "IPAddressAllow",
        "localhost",
        "home",
        "`home` is not an address, ADDRESS/LENGTH, any, localhost, link-local or multicast",
    ),
    (
        "IPAddressDeny",
        "any",
        "10.0.0.0/40",
        "`10.0.0.0/40`: a prefix of at most 32 bits",
    ),
    (
        "DeviceAllow",
        "/dev/null rw",
        "/dev/null x",
        "`x` is not an access (write r, w and m)",
    ),
    (
        "SystemCallFilter",
        "@system-service",
        "@systemd-service",
        "`@systemd-service` is not a system call group",
    ),
    (
        "SystemCallArchitectures",
        "native",
        "amd64",
        "`amd64` is not an architecture",
    ),
    (
        "SystemCallErrorNumber",
        "EPERM",
        "EPERMISSION",
        "`EPERMISSION` is not an error name",
    ),
    (
        "X-SkipUnsupported",
        "ProtectClock memory-max",
        "ProtectEverything",
        "`ProtectEverything` is not a key of the service context",
    ),
    (
        "X-Sandbox",
        "strict",
        "loose",
        "`loose` is not a sandbox policy: `as-systemd` or `strict`",
    ),
];

/// The keys that take no value but the empty one, with their error.
const REFUSED: &[(&str, &str)] = &[
    (
        "LoadCredentialEncrypted",
        "encrypted credentials are not supported: flotilla has no TPM2",
    ),
    (
        "SetCredentialEncrypted",
        "encrypted credentials are not supported: flotilla has no TPM2",
    ),
];

#[test]
fn refused_keys_are_errors_that_name_them() {
    for &(key, error) in REFUSED {
        let mut c = ServiceContext::default();
        let err = set(&mut c, key, "x:/etc/x").expect_err(key);
        assert!(err.starts_with(error), "{key}: {err}");
        assert!(c.is_empty());
        set(&mut c, key, "").unwrap();
    }
}

#[test]
fn every_key_takes_a_good_value_and_refuses_a_bad_one() {
    assert_eq!(
        CASES.len() + REFUSED.len(),
        Key::all().count(),
        "a case per key"
    );
    for &(key, good, bad, error) in CASES {
        let mut c = ServiceContext::default();
        set(&mut c, key, good).unwrap_or_else(|e| panic!("{key}={good}: {e}"));
        assert!(!c.is_empty(), "{key}={good} changed nothing");
        let before = c.clone();
        let err = set(&mut c, key, bad).expect_err(key);
        assert!(err.starts_with(error), "{key}={bad}: {err}");
        assert_eq!(c, before, "{key}={bad} changed the context");
    }
}

#[test]
fn an_empty_value_resets_every_key_but_the_bounding_set_and_delegate() {
    for &(key, good, _, _) in CASES {
        let mut c = ServiceContext::default();
        set(&mut c, key, good).unwrap();
        set(&mut c, key, "").unwrap();
        if key == "CapabilityBoundingSet" {
            assert_eq!(c.sandbox.capability_bounding_set, Some(CapSet::EMPTY));
        } else if key == "AmbientCapabilities" {
            assert_eq!(c.sandbox.ambient_capabilities, Some(CapSet::EMPTY));
        } else if key == "Delegate" {
            let none = super::resources::Delegation::Controllers(Vec::new());
            assert_eq!(c.resources.delegate, Some(none));
        } else {
            assert!(c.is_empty(), "{key}= did not reset: {c:?}");
        }
    }
}

#[test]
fn values_are_typed() {
    let mut c = ServiceContext::default();
    for (k, v) in [
        ("UMask", "0027"),
        ("Nice", "5"),
        ("OOMScoreAdjust", "-500"),
        ("LimitNOFILE", "1024:4096"),
        ("LimitCORE", "infinity"),
        ("StandardOutput", "file:/var/log/svc.log"),
        ("StandardError", "journal"),
        ("KillMode", "process"),
        ("MemoryMax", "1G"),
        ("TasksMax", "10%"),
        ("CPUQuota", "150%"),
        ("ProtectSystem", "full"),
        ("ProtectHome", "tmpfs"),
        ("ReadOnlyDirectories", "-/srv"),
        ("SystemCallErrorNumber", "kill"),
    ] {
        set(&mut c, k, v).unwrap();
    }
    assert_eq!(c.umask, Some(0o027));
    assert_eq!(c.nice, Some(5));
    assert_eq!(c.oom_score_adjust, Some(-500));
    assert_eq!(
        c.limits.get(&Rlimit::Nofile),
        Some(&RlimitValue {
            soft: 1024,
            hard: 4096
        })
    );
    assert_eq!(c.limits.get(&Rlimit::Core).map(|l| l.hard), Some(INFINITY));
    assert_eq!(
        c.standard_output,
        Some(Output::File("/var/log/svc.log".into()))
    );
    assert_eq!(c.standard_error, Some(Output::Log));
    assert_eq!(c.kill_mode, KillMode::Process);
    assert_eq!(c.resources.memory_max, Some(Amount::Absolute(1 << 30)));
    assert_eq!(c.resources.tasks_max, Some(Amount::Share(1000)));
    assert_eq!(c.resources.cpu_quota, Some(15000));
    assert_eq!(c.sandbox.protect_system, ProtectSystem::Full);
    assert_eq!(c.sandbox.protect_home, ProtectHome::Tmpfs);
    assert_eq!(
        c.sandbox.read_only_paths,
        [PathRule {
            path: "/srv".into(),
            optional: true
        }]
    );
    assert_eq!(c.sandbox.system_call_error_number, Some(Deny::Kill));
    // PrivateTmp= takes systemd 257's `disconnected`.
    set(&mut c, "PrivateTmp", "disconnected").unwrap();
    assert!(c.sandbox.private_tmp);
}

#[test]
fn skippable_keys() {
    let mut c = ServiceContext::default();
    set(&mut c, "X-SkipUnsupported", "ProtectClock memory-max").unwrap();
    set(&mut c, "skip-unsupported", "LimitNOFILE").unwrap();
    assert!(c.may_skip(Key::ProtectClock));
    assert!(c.may_skip(Key::MemoryMax));
    assert!(c.may_skip(Key::Limit(Rlimit::Nofile)));
    assert!(!c.may_skip(Key::PrivateTmp));
}

#[test]
fn json_round_trips_and_is_empty_for_no_keys() {
    assert_eq!(
        serde_json::to_string(&ServiceContext::default()).unwrap(),
        "{}"
    );
    let mut c = ServiceContext::default();
    for &(key, good, _, _) in CASES {
        set(&mut c, key, good).unwrap();
    }
    let json = serde_json::to_string(&c).unwrap();
    let back: ServiceContext = serde_json::from_str(&json).unwrap();
    assert_eq!(back, c);
    assert!(json.contains(r#""protect-system":"strict""#), "{json}");
    assert!(
        json.contains(r#""skip-unsupported":["memory-max","protect-clock"]"#),
        "{json}"
    );
    let bad = serde_json::from_str::<ServiceContext>(r#"{"umask":"x"}"#);
    assert!(bad.is_err());
}

#[test]
fn the_streams_of_a_terminal_and_what_follows_standard_input() {
    use super::input::{Input, TtyMode};
    let streams = |pairs: &[(&str, &str)]| {
        let mut c = ServiceContext::default();
        for (k, v) in pairs {
            set(&mut c, k, v).unwrap();
        }
        c
    };
    // serial-getty@.service: the terminal on all three streams.
    let getty = streams(&[
        ("StandardInput", "tty"),
        ("StandardOutput", "tty"),
        ("TTYPath", "/dev/ttyS0"),
        ("TTYReset", "yes"),
        ("TTYVHangup", "yes"),
    ]);
    assert_eq!(
        getty.tty_streams(),
        Some((Some(TtyMode::Wait), [true, true, true]))
    );
    assert!(getty.uses_tty() && getty.tty.prepares());
    // Output follows a terminal input by default; stderr may go elsewhere.
    let c = streams(&[("StandardInput", "tty-fail"), ("StandardError", "null")]);
    assert_eq!(
        c.tty_streams(),
        Some((Some(TtyMode::Fail), [true, true, false]))
    );
    // Output only: a terminal of TTYPath=, never the controlling one.
    let c = streams(&[("StandardOutput", "tty"), ("TTYPath", "/dev/tty5")]);
    assert_eq!(c.tty_streams(), Some((None, [false, true, true])));
    // `tty` output without TTYPath= is the init's console, inherited.
    let c = streams(&[("StandardOutput", "tty")]);
    assert_eq!(c.tty_streams(), None);
    assert!(c.uses_tty());
    // Data: StandardInput= defaults to it; output does not follow it.
    let c = streams(&[("StandardInputText", "x")]);
    assert_eq!(c.input(), Input::Data);
    assert!(!c.output_follows_input() && c.tty_streams().is_none());
    // A socket: both outputs follow it unless told otherwise.
    let c = streams(&[("StandardInput", "socket"), ("StandardError", "journal")]);
    assert!(c.output_follows_input() && !c.error_follows_input());
    let c = streams(&[("StandardInput", "fd:conn")]);
    assert!(c.error_follows_input());
    assert_eq!(ServiceContext::default().input(), Input::Null);
}

/// `Delegate=`: `yes` is every controller; lists add up, systemd's v1
/// names are their v2 controllers, the program names enable nothing; `no`
/// ends the delegation, an empty value resets the list.
#[test]
fn delegate_values_and_the_controllers_they_enable() {
    use super::resources::Delegation;
    let mut c = ServiceContext::default();
    set(&mut c, "Delegate", "yes").unwrap();
    assert_eq!(c.resources.delegate, Some(Delegation::All));
    assert!(
        c.resources.controllers().is_empty(),
        "all: what the parent offers"
    );
    set(&mut c, "Delegate", "pids cpuacct").unwrap();
    set(&mut c, "Delegate", "blkio devices pids").unwrap();
    assert_eq!(
        c.resources.delegate,
        Some(Delegation::Controllers(vec![
            "pids".into(),
            "cpu".into(),
            "io".into(),
            "devices".into()
        ]))
    );
    set(&mut c, "TasksMax", "20").unwrap();
    assert_eq!(
        c.resources.controllers(),
        [
            ("pids", "TasksMax"),
            ("cpu", "Delegate"),
            ("io", "Delegate")
        ]
    );
    set(&mut c, "Delegate", "no").unwrap();
    assert_eq!(c.resources.delegate, None);
    set(&mut c, "Delegate", "memory").unwrap();
    set(&mut c, "Delegate", "").unwrap();
    assert_eq!(
        c.resources.delegate,
        Some(Delegation::Controllers(Vec::new())),
        "empty: delegation on, no controller (systemd.resource-control(5))"
    );
    c.reset(super::Key::Delegate);
    assert_eq!(c.resources.delegate, None);
}

/// `IOAccounting=` and its twins enable their controller with no limit;
/// `no` takes it out again.
#[test]
fn accounting_keys_enable_their_controllers() {
    let mut c = ServiceContext::default();
    set(&mut c, "IOAccounting", "yes").unwrap();
    set(&mut c, "TasksAccounting", "yes").unwrap();
    set(&mut c, "MemoryAccounting", "yes").unwrap();
    set(&mut c, "MemoryAccounting", "no").unwrap();
    assert_eq!(
        c.resources.controllers(),
        [("io", "IOAccounting"), ("pids", "TasksAccounting")]
    );
    set(&mut c, "TasksMax", "20").unwrap();
    assert_eq!(
        c.resources.controllers(),
        [("pids", "TasksMax"), ("io", "IOAccounting")]
    );
}

/// Each key of `MOUNT_KEYS` set alone asks for a mount namespace, and is
/// reported set; keys outside the list (a limit, a capability set, a
/// system call filter) do not ask for one.
#[test]
fn each_mount_key_alone_needs_a_mount_namespace() {
    let value = |k: Key| match k {
        Key::ProtectSystem => "strict",
        Key::ProtectProc => "invisible",
        Key::ProcSubset => "pid",
        Key::ReadWritePaths
        | Key::ReadOnlyPaths
        | Key::InaccessiblePaths
        | Key::NoExecPaths
        | Key::ExecPaths
        | Key::BindPaths
        | Key::BindReadOnlyPaths
        | Key::TemporaryFileSystem => "/srv",
        Key::LogNamespace => "foobar",
        _ => "yes",
    };
    for key in sandbox::MOUNT_KEYS {
        let mut c = ServiceContext::default();
        c.set(key, value(key)).unwrap();
        assert!(c.is_set(key), "{key}");
        assert!(c.needs_mount_namespace(), "{key}");
        c.reset(key);
        assert_eq!(c, ServiceContext::default(), "{key}");
    }
    let mut c = ServiceContext::default();
    c.set(Key::Nice, "5").unwrap();
    c.set(Key::CapabilityBoundingSet, "CAP_NET_BIND_SERVICE")
        .unwrap();
    c.set(Key::SystemCallFilter, "@system-service").unwrap();
    assert!(!c.needs_mount_namespace());
}
