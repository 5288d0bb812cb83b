//! The table: each shape of property systemd-run sends, and the
//! unit-file line it stands for.

use super::*;
use zbus::zvariant::Value;

fn v<'a>(x: impl Into<Value<'a>>) -> OwnedValue {
    OwnedValue::try_from(x.into()).unwrap()
}

fn one(property: &str, value: OwnedValue) -> Result<Vec<(String, String)>, BusError> {
    Ok(lines(vec![(property.to_string(), value)])?
        .into_iter()
        .map(|l| (l.key, l.value))
        .collect())
}

fn line(property: &str, value: OwnedValue) -> String {
    let got = one(property, value).unwrap();
    let texts: Vec<String> = got.iter().map(|(k, v)| format!("{k}={v}")).collect();
    texts.join("\n")
}

fn strings(words: &[&str]) -> Vec<String> {
    words.iter().map(ToString::to_string).collect()
}

#[test]
fn each_shape_is_the_unit_file_line_it_stands_for() {
    let cases: Vec<(&str, OwnedValue, &str)> = vec![
        ("User", v("idontexist"), "User=idontexist"),
        ("Description", v("50% done"), "Description=50%% done"),
        ("RemainAfterExit", v(true), "RemainAfterExit=yes"),
        ("DynamicUser", v(false), "DynamicUser=no"),
        ("RuntimeMaxUSec", v(5_000_000u64), "RuntimeMaxSec=5000000us"),
        ("TimeoutStopUSec", v(u64::MAX), "TimeoutStopSec=infinity"),
        ("TasksMax", v(u64::MAX), "TasksMax=infinity"),
        ("MemoryMax", v(1024u64), "MemoryMax=1024"),
        ("CPUQuotaPerSecUSec", v(100_000u64), "CPUQuota=10%"),
        ("CPUQuotaPerSecUSec", v(123_456u64), "CPUQuota=12.34%"),
        ("CPUQuotaPerSecUSec", v(u64::MAX), "CPUQuota="),
        ("Nice", v(-5i32), "Nice=-5"),
        // systemd's test 15: `-p StandardInputData=eHh4Cg==` ("xxx\n").
        (
            "StandardInputData",
            v(b"xxx\n".to_vec()),
            "StandardInputData=eHh4Cg==",
        ),
        (
            "StandardInputData",
            v(b"ab".to_vec()),
            "StandardInputData=YWI=",
        ),
        (
            "StandardInputData",
            v(b"abc".to_vec()),
            "StandardInputData=YWJj",
        ),
        ("UMask", v(0o027u32), "UMask=0027"),
        ("StateDirectoryMode", v(0o700u32), "StateDirectoryMode=0700"),
        (
            "StandardOutputFile",
            v("/tmp/out"),
            "StandardOutput=file:/tmp/out",
        ),
        (
            "StandardErrorFileToAppend",
            v("/tmp/err"),
            "StandardError=append:/tmp/err",
        ),
        (
            "Environment",
            v(strings(&["A=1", "B=two words", "C=\"q\""])),
            "Environment=A=1 \"B=two words\" \"C=\\\"q\\\"\"",
        ),
        (
            "After",
            v(strings(&["a.service", "b.target"])),
            "After=a.service b.target",
        ),
        (
            "DelegateControllers",
            v(strings(&["cpu", "pids"])),
            "Delegate=cpu pids",
        ),
        (
            "ExecStart",
            v(vec![(
                "/bin/sh".to_string(),
                strings(&["/bin/sh", "-c", "echo $X; exit 0"]),
                false,
            )]),
            "ExecStart=/bin/sh -c \"echo $X; exit 0\"",
        ),
        (
            "ExecStartPre",
            v(vec![(
                "/bin/true".to_string(),
                strings(&["true", ";", "%n"]),
                true,
            )]),
            "ExecStartPre=-@/bin/true true \";\" %%n",
        ),
        (
            "ExecStartPostEx",
            v(vec![(
                "/bin/touch".to_string(),
                strings(&["/bin/touch", "/tmp/a"]),
                strings(&["ambient", "ignore-failure"]),
            )]),
            "ExecStartPost=!!-/bin/touch /tmp/a",
        ),
        (
            "ExecStopPostEx",
            v(vec![(
                "/bin/echo".to_string(),
                strings(&["/bin/echo", "$X"]),
                strings(&["privileged", "no-env-expand"]),
            )]),
            "ExecStopPost=+:/bin/echo $X",
        ),
        (
            "ExecReload",
            v(Vec::<(String, Vec<String>, bool)>::new()),
            "ExecReload=",
        ),
        (
            "EnvironmentFiles",
            v(vec![
                ("/etc/a".to_string(), true),
                ("/etc/b".to_string(), false),
            ]),
            "EnvironmentFile=-/etc/a\nEnvironmentFile=/etc/b",
        ),
        (
            "SuccessExitStatus",
            v((vec![0i32, 75], vec![15i32])),
            "SuccessExitStatus=0 75 SIGTERM",
        ),
        ("KillSignal", v(2i32), "KillSignal=2"),
    ];
    for (property, value, want) in cases {
        assert_eq!(line(property, value), want, "{property}");
    }
}

#[test]
fn a_limit_is_its_soft_and_hard_values() {
    let got = lines(vec![
        ("LimitNOFILE".to_string(), v(4096u64)),
        ("LimitNOFILESoft".to_string(), v(1024u64)),
        ("LimitCORE".to_string(), v(u64::MAX)),
        ("LimitCORESoft".to_string(), v(u64::MAX)),
    ])
    .unwrap();
    let texts: Vec<String> = got
        .iter()
        .map(|l| format!("{}={}", l.key, l.value))
        .collect();
    assert_eq!(
        texts,
        ["LimitNOFILE=1024:4096", "LimitCORE=infinity:infinity"]
    );
    let e = one("LimitNOFILESoft", v(1u64)).unwrap_err();
    assert!(e.message.contains("LimitNOFILESoft"), "{}", e.message);
}

#[test]
fn placement_is_the_lines_systemd_run_was_given() {
    // What `systemd-run -p NUMAPolicy=bind -p NUMAMask=0 -p CPUAffinity=…`
    // sends (systemd's test 36).
    let cases = [
        ("NUMAPolicy", v(2i32), "NUMAPolicy=bind"),
        ("NUMAPolicy", v(4i32), "NUMAPolicy=local"),
        ("NUMAMask", v(vec![1u8]), "NUMAMask=0"),
        ("NUMAMask", v(Vec::<u8>::new()), "NUMAMask="),
        ("CPUAffinity", v(vec![0b1011u8, 1]), "CPUAffinity=0-1 3 8"),
        ("CPUAffinityFromNUMA", v(true), "CPUAffinity=numa"),
        ("CPUAffinityFromNUMA", v(false), "CPUAffinity="),
    ];
    for (p, value, want) in cases {
        assert_eq!(line(p, value), want, "{p}");
    }
    let e = one("NUMAPolicy", v(9i32)).unwrap_err();
    assert!(
        e.message.contains("9 is not a NUMA policy"),
        "{}",
        e.message
    );
}

#[test]
fn bookkeeping_is_left_out() {
    for (p, value) in [
        ("AddRef", v(true)),
        ("CollectMode", v("inactive-or-failed")),
    ] {
        assert_eq!(one(p, value).unwrap(), [], "{p}");
    }
}

#[test]
fn the_slice_and_the_cgroup_keys_are_lines_of_the_unit() {
    let cases = [
        (
            "Slice",
            v("system-foo-bar-baz.slice"),
            "Slice=system-foo-bar-baz.slice",
        ),
        ("IOAccounting", v(true), "IOAccounting=yes"),
        ("Delegate", v(true), "Delegate=yes"),
        ("DelegateControllers", v(Vec::<String>::new()), "Delegate="),
        (
            "DelegateControllers",
            v(vec!["memory".to_string(), "pids".to_string()]),
            "Delegate=memory pids",
        ),
    ];
    for (p, value, want) in cases {
        assert_eq!(line(p, value), want, "{p}");
    }
}

#[test]
fn what_is_not_decoded_is_refused_naming_it() {
    // A capability mask: names systemd's client turned into bits.
    let e = one("AmbientCapabilities", v(1u64 << 25)).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.NotSupported");
    assert!(
        e.message.contains("AmbientCapabilities (D-Bus type t)"),
        "{}",
        e.message
    );
    // A shape no row knows: bytes of another property.
    let e = one("RootHashSignature", v(vec![1u8, 2])).unwrap_err();
    assert!(
        e.message.contains("RootHashSignature (D-Bus type ay)"),
        "{}",
        e.message
    );
    // Pairs, which no row decodes.
    let e = one(
        "LoadCredential",
        v(vec![("a".to_string(), "/etc/a".to_string())]),
    )
    .unwrap_err();
    assert!(
        e.message.contains("LoadCredential (D-Bus type a(ss))"),
        "{}",
        e.message
    );
}

#[test]
fn a_value_a_line_cannot_hold_is_invalid() {
    for bad in ["two\nlines", "trailing\\", "nul\0"] {
        let e = one("Description", v(bad)).unwrap_err();
        assert_eq!(e.name, "org.freedesktop.DBus.Error.InvalidArgs", "{bad:?}");
        assert!(e.message.contains("property Description"), "{}", e.message);
    }
    let e = one(
        "ExecStartEx",
        v(vec![(
            "/bin/true".to_string(),
            strings(&["/bin/true"]),
            strings(&["sometimes"]),
        )]),
    )
    .unwrap_err();
    assert!(e.message.contains("sometimes"), "{}", e.message);
}

#[test]
fn each_line_goes_to_its_section_and_names_its_property() {
    let ls = lines(vec![
        (
            "ExecStart".to_string(),
            v(vec![(
                "/bin/true".to_string(),
                strings(&["/bin/true"]),
                false,
            )]),
        ),
        ("Description".to_string(), v("d")),
        ("RuntimeMaxUSec".to_string(), v(1u64)),
    ])
    .unwrap();
    let (text, by_line) = unit_file(&ls);
    assert_eq!(
        text,
        "[Unit]\nDescription=d\n[Service]\nExecStart=/bin/true\nRuntimeMaxSec=1us\n"
    );
    assert_eq!(by_line[2].as_deref(), Some("Description"));
    assert_eq!(by_line[5].as_deref(), Some("RuntimeMaxUSec"));
    assert_eq!(by_line[3], None);
}

/// systemd's test 23 (its issue 20933): a command whose argv is empty is
/// refused, alone or between others; one with its argv is taken.
#[test]
fn a_command_without_argv_is_invalid() {
    let cmd = |argv: &[&str]| ("/usr/bin/sleep".to_string(), strings(argv), true);
    let good = || cmd(&["/usr/bin/sleep", "1"]);
    for cmds in [vec![cmd(&[])], vec![good(), cmd(&[]), good()]] {
        let e = one("ExecStart", v(cmds)).unwrap_err();
        assert_eq!(e.name, "org.freedesktop.DBus.Error.InvalidArgs");
        assert!(e.message.contains("cannot be empty"), "{}", e.message);
    }
    assert!(one("ExecStart", v(vec![good()])).is_ok());
}

/// systemd's TEST-34: `systemd-run -p StateDirectory=zzz:xxx -p
/// TemporaryFileSystem=/var/lib:ro` sends the directories (`as`), their
/// links (`a(sst)`) and the tmpfs (`a(ss)`).
#[test]
fn a_temporary_file_system_and_directory_links_are_their_lines() {
    let tmpfs = vec![
        ("/var/lib".to_string(), String::new()),
        ("/run".to_string(), "ro,size=1M".to_string()),
    ];
    assert_eq!(
        line("TemporaryFileSystem", v(tmpfs)),
        "TemporaryFileSystem=/var/lib\nTemporaryFileSystem=/run:ro,size=1M"
    );
    assert_eq!(
        line("TemporaryFileSystem", v(Vec::<(String, String)>::new())),
        "TemporaryFileSystem="
    );
    let links = vec![
        ("zzz".to_string(), "xxx".to_string(), 0u64),
        ("zzz".to_string(), "x:yz".to_string(), 0u64),
    ];
    assert_eq!(
        line("StateDirectorySymlink", v(links)),
        "StateDirectory=zzz:xxx\nStateDirectory=zzz:x\\:yz"
    );
    let flagged = vec![("zzz".to_string(), "xxx".to_string(), 1u64)];
    assert!(one("RuntimeDirectorySymlink", v(flagged)).is_err());
    let spaced = vec![("z z".to_string(), "xxx".to_string(), 0u64)];
    assert!(one("CacheDirectorySymlink", v(spaced)).is_err());
}
