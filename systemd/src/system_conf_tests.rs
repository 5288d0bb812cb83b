use super::*;
use flotilla_units::context::limits::INFINITY;

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
            "[Manager]\nDefaultLimitNOFILE=1:2\nDefaultRestartSec=90s\nDefaultTimeoutStartSec=90s\nDefaultLimitCORE=0\n",
        ),
        (
            "/run/systemd/system.conf.d/x.conf",
            "[Manager]\nDefaultLimitNOFILE=10000:16384\nDefaultLimitCORE=\n",
        ),
    ]);
    // Read and checked, not applied: the one warning.
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(
        diags[0]
            .to_string()
            .contains("does not apply `DefaultRestartSec=`"),
        "{diags:?}"
    );
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
    // Each line but the applied timeout's is read (and checked) but not
    // applied, so each warns.
    assert_eq!(diags.len(), 3, "{diags:?}");
    assert!(!diags
        .iter()
        .any(|d| d.to_string().contains("DefaultTimeoutStopSec")));
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
fn keys_not_applied_warn_with_file_and_line_other_sections_are_left_alone() {
    let text = "[Manager]\nLogLevel=debug\nCPUAffinity=1\n[Other]\nDefaultLimitNOFILE=5\n";
    let (cfg, diags) = parse_manager_config(&[("/etc/systemd/system.conf", text)]);
    let shown: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert_eq!(shown.len(), 2, "{shown:?}");
    for (line, key) in [(2, "LogLevel"), (3, "CPUAffinity")] {
        let at = format!("/etc/systemd/system.conf:{line}:");
        assert!(
            shown.iter().any(|d| d.starts_with(&at)
                && d.contains(&format!("does not apply `{key}=`"))
                && d.ends_with("the setting is ignored")),
            "{key}: {shown:?}"
        );
    }
    assert!(diags.iter().all(|d| !d.is_error()), "{shown:?}");
    assert_eq!(cfg, ManagerConfig::default());
}

#[test]
fn a_units_own_limit_wins_whole_the_default_fills_the_rest() {
    let mut cfg = ManagerConfig::default();
    cfg.default_limits.insert(Rlimit::Nofile, lim(10000, 16384));
    cfg.default_limits.insert(Rlimit::Core, lim(0, INFINITY));
    let own = |pairs: &[(Rlimit, RlimitValue)]| pairs.iter().copied().collect::<BTreeMap<_, _>>();
    type Limits<'a> = &'a [(Rlimit, RlimitValue)];
    let cases: &[(Limits, Limits)] = &[
        // No key of its own: every default.
        (
            &[],
            &[
                (Rlimit::Core, lim(0, INFINITY)),
                (Rlimit::Nofile, lim(10000, 16384)),
            ],
        ),
        // Its own NOFILE, soft and hard, replaces the default's pair.
        (
            &[(Rlimit::Nofile, lim(5, 5))],
            &[
                (Rlimit::Core, lim(0, INFINITY)),
                (Rlimit::Nofile, lim(5, 5)),
            ],
        ),
        // A resource without a default is its own.
        (
            &[(Rlimit::Nproc, lim(7, 9))],
            &[
                (Rlimit::Core, lim(0, INFINITY)),
                (Rlimit::Nproc, lim(7, 9)),
                (Rlimit::Nofile, lim(10000, 16384)),
            ],
        ),
    ];
    for (mine, want) in cases {
        assert_eq!(cfg.limits_for(&own(mine)), own(want), "{mine:?}");
    }
    // Without defaults a unit has its own limits only.
    let none = ManagerConfig::default();
    assert_eq!(
        none.limits_for(&own(&[(Rlimit::Nproc, lim(7, 9))])),
        own(&[(Rlimit::Nproc, lim(7, 9))])
    );
}

#[test]
fn places_below_a_root() {
    let (main, dirs) = places(Path::new("/"));
    assert_eq!(main, CONF_FILE);
    assert_eq!(dirs, DROPIN_DIRS.map(String::from).to_vec());
    let (main, dirs) = places(Path::new("/tmp/copy"));
    assert_eq!(main, "/tmp/copy/etc/systemd/system.conf");
    assert_eq!(dirs[1], "/tmp/copy/run/systemd/system.conf.d");
    let listings = [(dirs[1].as_str(), vec!["rlimits.conf".to_string()])];
    assert_eq!(
        config_files_of(&main, &listings),
        vec![
            main.clone(),
            "/tmp/copy/run/systemd/system.conf.d/rlimits.conf".to_string()
        ]
    );
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
        let text = format!("[Manager]\nDefaultLimitCORE=0\n{bad}\nDefaultLimitNPROC=2\n");
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
        assert_eq!(
            cfg.default_limits.get(&Rlimit::Nproc),
            Some(&lim(2, 2)),
            "{bad}"
        );
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

#[test]
fn read_under_a_root_lists_and_reads_through_the_caller() {
    let root = Path::new("/r");
    let mut listed = Vec::new();
    let mut list = |d: &str| {
        listed.push(d.to_string());
        match d {
            "/r/run/systemd/system.conf.d" => vec!["rlimits.conf".to_string(), "x.txt".into()],
            "/r/usr/lib/systemd/system.conf.d" => vec!["rlimits.conf".to_string()],
            _ => Vec::new(),
        }
    };
    let mut read = |f: &str| match f {
        "/r/etc/systemd/system.conf" => Some("[Manager]\nDefaultLimitCORE=0\n".to_string()),
        "/r/run/systemd/system.conf.d/rlimits.conf" => {
            Some("[Manager]\nDefaultLimitNOFILE=10000:16384\n".to_string())
        }
        // Hidden by /run's file of the same name: never read.
        "/r/usr/lib/systemd/system.conf.d/rlimits.conf" => {
            Some("[Manager]\nDefaultLimitNOFILE=1\n".to_string())
        }
        _ => None,
    };
    let (cfg, diags) = read_under(root, &mut list, &mut read);
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(
        cfg.default_limits.get(&Rlimit::Nofile),
        Some(&lim(10000, 16384))
    );
    assert_eq!(cfg.default_limits.get(&Rlimit::Core), Some(&lim(0, 0)));
    assert_eq!(listed.len(), DROPIN_DIRS.len());
    // No file at all: the built-in defaults, no word.
    let (cfg, diags) = read_under(root, &mut |_| Vec::new(), &mut |_| None);
    assert_eq!((cfg, diags.len()), (ManagerConfig::default(), 0));
}

#[test]
fn the_managers_numa_policy_is_read_and_checked_by_systemds_rules() {
    use flotilla_units::context::placement::{InvalidPolicy, NumaPolicy};
    let conf = |text: &str| parse_manager_config(&[("/run/systemd/system.conf.d/numa.conf", text)]);
    let (cfg, diags) = conf("[Manager]\nNUMAPolicy=bind\nNUMAMask=0\n");
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(cfg.numa_policy, Some(NumaPolicy::Bind));
    let req = cfg.mem_policy().unwrap().unwrap();
    assert_eq!(
        (req.mode, req.max_node(), req.nodes),
        (2, 64, Some(vec![1]))
    );
    // The test's own files write an empty mask: the policy alone.
    let (cfg, _) = conf("[Manager]\nNUMAPolicy=default\nNUMAMask=\n");
    assert_eq!(cfg.mem_policy().unwrap().unwrap().nodes, None);
    let (cfg, _) = conf("[Manager]\nNUMAPolicy=interleave\nNUMAMask=\n");
    assert_eq!(cfg.mem_policy(), Some(Err(InvalidPolicy)));
    // Neither key: nothing to set.
    assert_eq!(conf("[Manager]\n").0.mem_policy(), None);
    // A bad value warns and is left out.
    let (cfg, diags) = conf("[Manager]\nNUMAPolicy=weighted\n");
    assert_eq!((cfg.numa_policy, diags.len()), (None, 1));
}
