use super::*;
use crate::context::limits::INFINITY;

fn lim(soft: u64, hard: u64) -> RlimitValue {
    RlimitValue { soft, hard }
}

#[test]
fn files_in_systemd_order_earlier_dir_wins_a_name() {
    let listings = [
        ("/etc/systemd/system.conf.d", vec!["b.conf".to_string()]),
        (
            "/run/systemd/system.conf.d",
            vec!["a.conf".into(), "b.conf".into(), "notes.txt".into()],
        ),
        ("/usr/lib/systemd/system.conf.d", vec!["0.conf".into()]),
    ];
    assert_eq!(
        config_files(&listings),
        vec![
            "/etc/systemd/system.conf",
            "/usr/lib/systemd/system.conf.d/0.conf",
            "/run/systemd/system.conf.d/a.conf",
            "/etc/systemd/system.conf.d/b.conf",
        ]
    );
}

#[test]
fn limit_values_table() {
    let cases: &[(&str, Rlimit, RlimitValue)] = &[
        (
            "DefaultLimitNOFILE=10000:16384",
            Rlimit::Nofile,
            lim(10000, 16384),
        ),
        ("DefaultLimitNOFILE=1024", Rlimit::Nofile, lim(1024, 1024)),
        (
            "DefaultLimitCORE=infinity",
            Rlimit::Core,
            lim(INFINITY, INFINITY),
        ),
        (
            "DefaultLimitCORE=0:infinity",
            Rlimit::Core,
            lim(0, INFINITY),
        ),
        (
            "DefaultLimitMEMLOCK=8M",
            Rlimit::Memlock,
            lim(8 << 20, 8 << 20),
        ),
        (
            "DefaultLimitSTACK=1K:2G",
            Rlimit::Stack,
            lim(1 << 10, 2 << 30),
        ),
        ("DefaultLimitCPU=1min", Rlimit::Cpu, lim(60, 60)),
        (
            "DefaultLimitRTTIME=1s",
            Rlimit::Rttime,
            lim(1_000_000, 1_000_000),
        ),
        ("DefaultLimitNICE=+5", Rlimit::Nice, lim(15, 15)),
        ("DefaultLimitNPROC=100:200", Rlimit::Nproc, lim(100, 200)),
    ];
    for (line, r, want) in cases {
        let text = format!("[Manager]\n{line}\n");
        let (cfg, diags) = parse_manager_config(&[("f.conf", &text)]);
        assert!(diags.is_empty(), "{line}: {diags:?}");
        assert_eq!(cfg.default_limits.get(r), Some(want), "{line}");
    }
}

#[test]
fn every_rlimit_name_is_read() {
    for r in Rlimit::ALL {
        let text = format!("[Manager]\nDefault{}=infinity\n", r.key());
        let (cfg, diags) = parse_manager_config(&[("f", &text)]);
        assert!(diags.is_empty(), "{r:?}: {diags:?}");
        assert_eq!(cfg.default_limits.get(&r), Some(&lim(INFINITY, INFINITY)));
    }
}

#[test]
fn later_file_overrides_and_empty_resets() {
    let (cfg, diags) = parse_manager_config(&[
        (
            CONF_FILE,
            "[Manager]\nDefaultLimitNOFILE=1:2\nDefaultTimeoutStartSec=90s\nDefaultLimitCORE=0\n",
        ),
        (
            "/run/systemd/system.conf.d/x.conf",
            "[Manager]\nDefaultLimitNOFILE=10000:16384\nDefaultLimitCORE=\n",
        ),
    ]);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(
        cfg.default_limits.get(&Rlimit::Nofile),
        Some(&lim(10000, 16384))
    );
    assert_eq!(cfg.default_limits.get(&Rlimit::Core), None);
    assert_eq!(cfg.default_timeout_start, Some(Duration::from_secs(90)));
}

#[test]
fn timeouts_restart_and_environment() {
    let text = "[Manager]\nDefaultTimeoutStopSec=5min\nDefaultRestartSec=250ms\n\
                DefaultEnvironment=A=1 \"B=two words\"\nDefaultEnvironment=A=3 C=\n";
    let (cfg, diags) = parse_manager_config(&[("f", text)]);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(cfg.default_timeout_stop, Some(Duration::from_secs(300)));
    assert_eq!(cfg.default_restart, Some(Duration::from_millis(250)));
    let env: Vec<(&str, &str)> = cfg
        .default_environment
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(env, vec![("B", "two words"), ("A", "3"), ("C", "")]);
    let (cfg, _) = parse_manager_config(&[("f", text), ("g", "[Manager]\nDefaultEnvironment=\n")]);
    assert!(cfg.default_environment.is_empty());
}

#[test]
fn other_sections_and_keys_are_left_alone() {
    let text = "[Manager]\nLogLevel=debug\nCPUAffinity=1\n[Other]\nDefaultLimitNOFILE=5\n";
    let (cfg, diags) = parse_manager_config(&[("f", text)]);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(cfg, ManagerConfig::default());
}

#[test]
fn bad_values_warn_with_file_and_line_and_keep_the_rest() {
    let cases: &[(&str, &str)] = &[
        ("DefaultLimitNOFILE=lots", "DefaultLimitNOFILE=lots"),
        (
            "DefaultLimitNOFILE=20:10",
            "soft limit is above the hard limit",
        ),
        ("DefaultLimitMEMLOCK=12Q", "is not a size"),
        ("DefaultTimeoutStartSec=soon", "DefaultTimeoutStartSec=soon"),
        ("DefaultEnvironment=1A=x", "`1A=x` is not NAME=VALUE"),
        (
            "DefaultEnvironment=NOEQUALS",
            "`NOEQUALS` is not NAME=VALUE",
        ),
    ];
    for (bad, want) in cases {
        let text = format!("[Manager]\nDefaultLimitCORE=0\n{bad}\nDefaultRestartSec=2s\n");
        let (cfg, diags) = parse_manager_config(&[("/etc/systemd/system.conf.d/x.conf", &text)]);
        assert_eq!(diags.len(), 1, "{bad}: {diags:?}");
        let shown = diags[0].to_string();
        assert!(
            shown.starts_with("/etc/systemd/system.conf.d/x.conf:3:"),
            "{bad}: {shown}"
        );
        assert!(shown.contains(want), "{bad}: {shown}");
        assert_eq!(
            cfg.default_limits.get(&Rlimit::Core),
            Some(&lim(0, 0)),
            "{bad}"
        );
        assert_eq!(cfg.default_restart, Some(Duration::from_secs(2)), "{bad}");
        assert!(cfg.default_environment.is_empty(), "{bad}");
    }
}

#[test]
fn a_line_without_equals_is_a_warning_not_a_loss() {
    let text = "[Manager]\nnonsense\nDefaultLimitNOFILE=7\n";
    let (cfg, diags) = parse_manager_config(&[("f", text)]);
    assert!(!diags.is_empty());
    assert!(diags[0].to_string().starts_with("f:2:"), "{diags:?}");
    assert_eq!(cfg.default_limits.get(&Rlimit::Nofile), Some(&lim(7, 7)));
}
