//! Every key of a YAML unit file, both forms of target lists and commands,
//! and every default (docs/contract.md §3).

use flotilla_units::diag::Pos;
use flotilla_units::load::{parse_yaml, ParsedUnit, UNIT_KEYS};
use flotilla_units::spec::{Command, RestartPolicy, Signal, UnitSpec, UnitType};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Parses `text` as `file` and insists on no diagnostic at all.
fn clean(file: &str, text: &str) -> ParsedUnit {
    let p = parse_yaml(file, text);
    let shown: Vec<String> = p.diagnostics.iter().map(ToString::to_string).collect();
    assert!(shown.is_empty(), "unexpected diagnostics: {shown:#?}");
    assert!(p.spec.is_some());
    p
}

fn spec(file: &str, text: &str) -> UnitSpec {
    clean(file, text).spec.unwrap_or_else(|| unreachable!())
}

fn cmd(words: &[&str]) -> Command {
    Command::new(words.iter().copied())
}

/// A command whose failure is ignored (a leading `-`).
fn ignoring(words: &[&str]) -> Command {
    let mut c = cmd(words);
    c.ignore_failure = true;
    c
}

#[test]
fn every_key_of_a_foreground_supervised_unit() {
    let s = spec(
        "web.yaml",
        r#"
unit: web
description: The web server
type: foreground-supervised
provides: [http, https]
depends-on: [db]
depends-ms: [network-online]
waits-for: [dns, ntp]
exec-start-pre:
  - /bin/mkdir -p /run/web
  - "-/bin/rm -f /run/web/stale"
exec-start: /usr/bin/web --port 80 --name "my site"
exec-stop: /bin/kill -TERM $MAINPID
exec-stop-post: [-/bin/rm -rf /run/web]
exec-reload: /bin/kill -HUP $MAINPID
ready-grep: ^listening on
start-timeout: 30s
stop-timeout: 1m30s
restart: always
restart-delay: 500ms
restart-max-delay: 2m
kill-signal: SIGINT
user: www-data
group: 33
working-directory: /srv/web
environment:
  PORT: 80
  DEBUG: false
  RATIO: 1.50
  MODE: production
  ANSWER: "yes"
  UMASK: 0022
environment-file: [/etc/default/web, -/etc/web.env]
"#,
    );
    let mut expected = UnitSpec::new("web", UnitType::ForegroundSupervised);
    expected.description = Some("The web server".into());
    expected.provides = vec!["http".into(), "https".into()].into();
    expected.depends_on = vec!["db".into()].into();
    expected.depends_ms = vec!["network-online".into()].into();
    expected.waits_for = vec!["dns".into(), "ntp".into()].into();
    expected.exec_start_pre = vec![
        cmd(&["/bin/mkdir", "-p", "/run/web"]),
        ignoring(&["/bin/rm", "-f", "/run/web/stale"]),
    ]
    .into();
    expected.exec_start = Some(cmd(&["/usr/bin/web", "--port", "80", "--name", "my site"]));
    expected.exec_stop = Some(cmd(&["/bin/kill", "-TERM", "$MAINPID"]));
    expected.extras.exec_stop_post = vec![ignoring(&["/bin/rm", "-rf", "/run/web"])].into();
    expected.extras.exec_reload = Some(cmd(&["/bin/kill", "-HUP", "$MAINPID"]));
    expected.extras.ready_grep = Some("^listening on".into());
    expected.start_timeout = Duration::from_secs(30);
    expected.stop_timeout = Duration::from_secs(90);
    expected.restart = RestartPolicy::Always;
    expected.restart_delay = Duration::from_millis(500);
    expected.restart_max_delay = Duration::from_secs(120);
    expected.kill_signal = Signal(2);
    expected.extras.user = Some("www-data".into());
    expected.extras.group = Some("33".into());
    expected.extras.working_directory = Some(PathBuf::from("/srv/web"));
    // Numbers and booleans become text as written (`1.50`, `0022`), and
    // `yes` is not a boolean (YAML 1.2).
    expected.extras.environment = BTreeMap::from(
        [
            ("PORT", "80"),
            ("DEBUG", "false"),
            ("RATIO", "1.50"),
            ("MODE", "production"),
            ("ANSWER", "yes"),
            ("UMASK", "0022"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    expected.extras.environment_files = vec![
        (PathBuf::from("/etc/default/web"), false),
        (PathBuf::from("/etc/web.env"), true),
    ];
    assert_eq!(s, expected);
}

#[test]
fn the_keys_the_docs_list() {
    // 37 keys of every unit (with `exec-start-post` and `exec-condition`), `after`, `before`, `conflicts`, `triggers`,
    // `wanted-by`, `on-failure`, `on-success`, `success-action`, `failure-action`,
    // `refuse-manual-start`, `refuse-manual-stop`, `ignore-on-isolate`,
    // `start-limit-interval-sec`, `start-limit-burst`, `wants`, `requires`,
    // `requisite`, `part-of`, `upholds`, `sockets`, `restart-kill-signal`,
    // `working-directory-optional`, `allow-isolate`, `reload-propagated-from`,
    // `propagates-reload-to`, `stop-propagated-from`, `propagates-stop-to`,
    // `ready-bus-name`, `file-descriptor-store-max`, `non-blocking`,
    // `started-at-fork`, `daemon-clean-signals`, `dynamic-user`,
    // `runtime-max-sec`, `runtime-randomized-extra-sec` and
    // `guess-main-pid` (36), 53 trigger settings, 33 conditions and 33
    // assertions.
    assert_eq!(UNIT_KEYS.len(), 37 + 36 + 53 + 66);
    for key in [
        "unit",
        "name",
        "after",
        "wants",
        "requires",
        "on-calendar",
        "listen-stream",
        "condition-path-exists",
        "assert-host",
        "exec-start-pre",
        "exec-condition",
        "exec-stop-post",
        "environment-file",
        "log-rate-limit-interval-sec",
        "log-rate-limit-burst",
        "remain-after-exit",
        "success-exit-status",
        "restart-prevent-exit-status",
        "restart-force-exit-status",
        "watchdog-sec",
        "runtime-max-sec",
        "runtime-randomized-extra-sec",
        "preference",
        "wanted-by",
        "on-failure",
        "success-action",
        "failure-action",
        "refuse-manual-start",
        "refuse-manual-stop",
        "sockets",
        "ignore-on-isolate",
        "restart-kill-signal",
        "requisite",
        "working-directory-optional",
        "allow-isolate",
        "part-of",
        "start-limit-interval-sec",
        "start-limit-burst",
        "ready-bus-name",
        "file-descriptor-store-max",
    ] {
        assert!(UNIT_KEYS.contains(&key), "{key}");
    }
}

/// `runtime-max-sec` and `runtime-randomized-extra-sec` take durations;
/// a bad one is an error that names the key.
#[test]
fn runtime_max() {
    let s = spec(
        "job.yaml",
        "unit: job\nexec-start: /bin/job\nruntime-max-sec: 1m\nruntime-randomized-extra-sec: 500ms\n",
    );
    assert_eq!(
        s.runtime_max(),
        Some((Duration::from_secs(60), Duration::from_millis(500)))
    );
    let errors = parse_yaml(
        "job.yaml",
        "unit: job\nexec-start: /bin/job\nruntime-max-sec: soon\n",
    )
    .diagnostics;
    assert!(
        errors
            .iter()
            .any(|d| d.is_error() && d.to_string().contains("runtime-max-sec")),
        "{errors:?}"
    );
}

#[test]
fn ready_wait_and_pidfile() {
    let s = spec(
        "slow.yaml",
        "unit: slow\nexec-start: /bin/slow\nready-wait: 1.5\n",
    );
    assert_eq!(s.extras.ready_wait, Some(Duration::from_millis(1500)));
    let s = spec(
        "sshd.yaml",
        "unit: sshd\ntype: background-pidfile\npidfile: /run/sshd.pid\nexec-start: /usr/sbin/sshd\n",
    );
    assert_eq!(s.kind, UnitType::BackgroundPidfile);
    assert_eq!(s.extras.pidfile, Some(PathBuf::from("/run/sshd.pid")));
}

#[test]
fn every_type_parses() {
    for t in UnitType::ALL {
        let extra = match t {
            UnitType::Virtual | UnitType::Slice => "",
            UnitType::Timer => "triggers: d.service\non-boot-sec: 5m\n",
            UnitType::Socket => "triggers: d.service\nlisten-stream: /run/d.sock\n",
            UnitType::Path => "triggers: d.service\npath-exists: /run/d.flag\n",
            UnitType::BackgroundPidfile => "exec-start: /bin/d\npidfile: /run/d.pid\n",
            UnitType::BackgroundScripted => {
                "exec-start: /etc/rc.d/d start\nexec-stop: /etc/rc.d/d stop\n"
            }
            _ => "exec-start: /bin/d\n",
        };
        let s = spec("d.yaml", &format!("unit: d\ntype: {}\n{extra}", t.as_str()));
        assert_eq!(s.kind, t);
    }
}

#[test]
fn defaults_of_spec_section_3() {
    let s = spec("x.yaml", "unit: x\nexec-start: /bin/x\n");
    assert_eq!(s, {
        let mut e = UnitSpec::new("x", UnitType::ForegroundSupervised);
        e.exec_start = Some(cmd(&["/bin/x"]));
        e
    });
    // Spelled out, so that a change of `UnitSpec::new` cannot hide here.
    assert_eq!(s.kind, UnitType::ForegroundSupervised);
    assert_eq!(s.provides, ["x"]);
    assert!(s.depends_on.is_empty() && s.depends_ms.is_empty() && s.waits_for.is_empty());
    assert_eq!(s.description, None);
    assert_eq!(s.exec_stop, None);
    assert_eq!(s.extras.exec_reload, None);
    assert!(s.exec_start_pre.is_empty() && s.extras.exec_stop_post.is_empty());
    assert_eq!(s.extras.ready_wait, None);
    assert_eq!(s.extras.ready_grep, None);
    assert_eq!(s.extras.pidfile, None);
    assert_eq!(s.start_timeout, Duration::from_secs(90));
    assert_eq!(s.stop_timeout, Duration::from_secs(10));
    assert_eq!(s.restart, RestartPolicy::OnFailure);
    assert_eq!(s.restart_delay, Duration::from_secs(1));
    assert_eq!(s.restart_max_delay, Duration::from_secs(60));
    assert_eq!(s.kill_signal, Signal::TERM);
    assert_eq!(s.extras.user, None);
    assert_eq!(s.extras.group, None);
    assert_eq!(s.extras.working_directory, None);
    assert!(s.extras.environment.is_empty());
    assert!(s.extras.environment_files.is_empty());
}

#[test]
fn oneshot_defaults_to_no_restart() {
    let s = spec("o.yaml", "unit: o\ntype: oneshot\nexec-start: /bin/o\n");
    assert_eq!(s.restart, RestartPolicy::No);
    let s = spec(
        "o.yaml",
        "unit: o\ntype: oneshot\nexec-start: /bin/o\nrestart: on-failure\n",
    );
    assert_eq!(s.restart, RestartPolicy::OnFailure);
}

#[test]
fn restart_no_in_every_spelling() {
    // Unquoted `no` is text for our parser (YAML 1.2), `"no"` too, and a
    // YAML 1.1 habit of writing the boolean `false` means the same.
    for v in ["no", "\"no\"", "'no'", "false", "False"] {
        let s = spec(
            "r.yaml",
            &format!("unit: r\nexec-start: /bin/r\nrestart: {v}\n"),
        );
        assert_eq!(s.restart, RestartPolicy::No, "{v}");
    }
    let s = spec(
        "r.yaml",
        "unit: r\nexec-start: /bin/r\nrestart: on-failure\n",
    );
    assert_eq!(s.restart, RestartPolicy::OnFailure);
}

#[test]
fn name_is_an_alias_of_unit() {
    let s = spec("irc-bot.yaml", "name: irc-bot\nexec-start: /bin/bot\n");
    assert_eq!(s.name, "irc-bot");
    assert_eq!(s.provides, ["irc-bot"]);
}

#[test]
fn target_lists_in_both_forms() {
    let block = spec(
        "a.yaml",
        "unit: a\nexec-start: /bin/a\nprovides:\n  - x\n  - y\ndepends-on:\n  - b\n  - c\n",
    );
    let flow = spec(
        "a.yaml",
        "unit: a\nexec-start: /bin/a\nprovides: [x, y]\ndepends-on: [b, c]\n",
    );
    let commas = spec(
        "a.yaml",
        "unit: a\nexec-start: /bin/a\nprovides: x, y\ndepends-on: ' b ,c '\n",
    );
    let one = spec("a.yaml", "unit: a\nexec-start: /bin/a\nprovides: x\n");
    assert_eq!(block, flow);
    assert_eq!(flow, commas);
    assert_eq!(commas.provides, ["x", "y"]);
    assert_eq!(commas.depends_on, ["b", "c"]);
    assert_eq!(one.provides, ["x"]);
    // Names may be numbers as far as YAML is concerned.
    let n = spec(
        "a.yaml",
        "unit: a\nexec-start: /bin/a\nwaits-for: [1, 2.5]\n",
    );
    assert_eq!(n.waits_for, ["1", "2.5"]);
    // An empty dependency list is fine.
    let e = spec("a.yaml", "unit: a\nexec-start: /bin/a\ndepends-on: []\n");
    assert!(e.depends_on.is_empty());
}

#[test]
fn commands_in_both_forms() {
    let split = spec(
        "c.yaml",
        "unit: c\nexec-start: /bin/sh -c 'echo \"$MAINPID\" > /run/c.pid'\n",
    );
    let words = spec(
        "c.yaml",
        "unit: c\nexec-start: [/bin/sh, -c, 'echo \"$MAINPID\" > /run/c.pid']\n",
    );
    assert_eq!(split, words);
    assert_eq!(
        split.exec_start.as_ref().map(|c| c.argv.to_vec()),
        Some(vec![
            "/bin/sh".to_string(),
            "-c".into(),
            "echo \"$MAINPID\" > /run/c.pid".into()
        ])
    );
    // Numbers in the list of words are words as written.
    let s = spec("c.yaml", "unit: c\nexec-start: [/bin/sleep, 0.50]\n");
    assert_eq!(s.exec_start, Some(cmd(&["/bin/sleep", "0.50"])));
    // A block scalar works too; its newlines separate words.
    let s = spec(
        "c.yaml",
        "unit: c\nexec-start: >\n  /usr/bin/long\n  --flag one\n  --other two\n",
    );
    assert_eq!(
        s.exec_start,
        Some(cmd(&["/usr/bin/long", "--flag", "one", "--other", "two"]))
    );
}

#[test]
fn pre_and_post_commands() {
    // One command as a string; a list of strings and lists of words; a `-`
    // before a command ignores its failure.
    let s = spec(
        "p.yaml",
        "unit: p\nexec-start: /bin/p\nexec-start-pre: /bin/prepare --all\n\
         exec-stop-post:\n  - -/bin/cleanup\n  - [-/bin/rm, -f, /run/p]\n  - /bin/log done\n",
    );
    assert_eq!(s.exec_start_pre, [cmd(&["/bin/prepare", "--all"])]);
    assert_eq!(
        s.extras.exec_stop_post,
        [
            ignoring(&["/bin/cleanup"]),
            ignoring(&["/bin/rm", "-f", "/run/p"]),
            cmd(&["/bin/log", "done"]),
        ]
    );
}

#[test]
fn durations_in_every_form() {
    for (text, d) in [
        ("500ms", Duration::from_millis(500)),
        ("2s", Duration::from_secs(2)),
        ("1m", Duration::from_secs(60)),
        ("1h", Duration::from_secs(3600)),
        ("45", Duration::from_secs(45)),
        ("2.5", Duration::from_millis(2500)),
        ("1m30s", Duration::from_secs(90)),
        ("1m 30s", Duration::from_secs(90)),
        ("\"10 s\"", Duration::from_secs(10)),
    ] {
        let s = spec(
            "d.yaml",
            &format!("unit: d\nexec-start: /bin/d\nstart-timeout: {text}\n"),
        );
        assert_eq!(s.start_timeout, d, "{text}");
    }
}

/// The output rate limit: unset (journald's defaults, in the init),
/// given, or zero (no limit); bad values are refused where they are.
#[test]
fn log_rate_limit() {
    let s = spec("l.yaml", "unit: l\nexec-start: /bin/l\n");
    assert_eq!(s.extras.log_rate_limit_interval, None);
    assert_eq!(s.extras.log_rate_limit_burst, None);
    let s = spec(
        "l.yaml",
        "unit: l\nexec-start: /bin/l\nlog-rate-limit-interval-sec: 1m\nlog-rate-limit-burst: 500\n",
    );
    assert_eq!(
        s.extras.log_rate_limit_interval,
        Some(Duration::from_secs(60))
    );
    assert_eq!(s.extras.log_rate_limit_burst, Some(500));
    let s = spec(
        "l.yaml",
        "unit: l\nexec-start: /bin/l\nlog-rate-limit-interval-sec: 0\nlog-rate-limit-burst: \"0\"\n",
    );
    assert_eq!(s.extras.log_rate_limit_interval, Some(Duration::ZERO));
    assert_eq!(s.extras.log_rate_limit_burst, Some(0));
    for (value, why) in [
        (
            "-1",
            "bad number for `log-rate-limit-burst`: not a whole number from 0 to 4294967295",
        ),
        (
            "1e3",
            "bad number for `log-rate-limit-burst`: not a whole number from 0 to 4294967295",
        ),
        (
            "4294967296",
            "bad number for `log-rate-limit-burst`: not a whole number from 0 to 4294967295",
        ),
        (
            "[1]",
            "expected a whole number for `log-rate-limit-burst`, found a list",
        ),
    ] {
        let p = parse_yaml(
            "l.yaml",
            &format!("unit: l\nexec-start: /bin/l\nlog-rate-limit-burst: {value}\n"),
        );
        let shown: Vec<String> = p.diagnostics.iter().map(ToString::to_string).collect();
        assert_eq!(shown, [format!("l.yaml:3:23: {why}")], "{value}");
        assert!(p.spec.is_none());
    }
    let p = parse_yaml(
        "l.yaml",
        "unit: l\ntype: virtual\nlog-rate-limit-burst: 5\n",
    );
    let shown: Vec<String> = p.diagnostics.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        ["l.yaml:3:1: `log-rate-limit-burst` does not apply to a `virtual` unit (it runs no process)"]
    );
}

#[test]
fn signals() {
    for (text, n) in [
        ("SIGKILL", 9),
        ("TERM", 15),
        ("sigusr1", 10),
        ("2", 2),
        ("SIGWINCH", 28),
    ] {
        let s = spec(
            "k.yaml",
            &format!("unit: k\nexec-start: /bin/k\nkill-signal: {text}\n"),
        );
        assert_eq!(s.kill_signal, Signal(n), "{text}");
    }
}

#[test]
fn environment_file_as_one_string() {
    let s = spec(
        "e.yaml",
        "unit: e\nexec-start: /bin/e\nenvironment-file: -/etc/e.env\n",
    );
    assert_eq!(
        s.extras.environment_files,
        [(PathBuf::from("/etc/e.env"), true)]
    );
}

#[test]
fn virtual_units_need_no_command() {
    let s = spec(
        "network-online.yaml",
        "unit: network-online\ntype: virtual\ndescription: up\ndepends-on: netif, dhcp, dns\n",
    );
    assert_eq!(s.exec_start, None);
    assert_eq!(s.depends_on, ["netif", "dhcp", "dns"]);
}

#[test]
fn origin_positions_of_every_entry() {
    let p = clean(
        "a.yaml",
        "# comment\nunit: a\nexec-start: /bin/a\nprovides: x,  y\ndepends-on:\n  - b\n  - c\n\
         depends-ms: [d]\nwaits-for: \"e, f\"\n",
    );
    let o = p.origin;
    assert_eq!(o.file, "a.yaml");
    assert_eq!(o.pos, Pos::new(2, 7));
    // In a comma string, each name's own column.
    assert_eq!(o.provides_pos(), [Pos::new(4, 11), Pos::new(4, 15)]);
    assert_eq!(o.depends_on_pos(), [Pos::new(6, 5), Pos::new(7, 5)]);
    assert_eq!(o.depends_ms_pos(), [Pos::new(8, 14)]);
    // Inside quotes too.
    assert_eq!(o.waits_for_pos(), [Pos::new(9, 13), Pos::new(9, 16)]);
}

#[test]
fn default_provides_is_placed_at_the_name() {
    let p = clean("a.yaml", "exec-start: /bin/a\nunit: a\n");
    assert_eq!(p.origin.pos, Pos::new(2, 7));
    assert_eq!(p.origin.provides_pos(), [Pos::new(2, 7)]);
}

#[test]
fn yaml_features_that_work() {
    // Anchors and aliases, merge keys, comments, a document marker, flow
    // mappings, quoted keys, CRLF line ends and a byte-order mark.
    let s = spec(
        "y.yaml",
        "\u{feff}%YAML 1.2\n---\n\"unit\": y # the name\nexec-start: &cmd [/bin/y, --flag]\n\
         exec-reload: *cmd\nenvironment: {<<: {A: 1}, B: 2}\n...\n",
    );
    assert_eq!(s.extras.exec_reload, s.exec_start);
    assert_eq!(s.extras.environment.get("A").map(String::as_str), Some("1"));
    assert_eq!(s.extras.environment.get("B").map(String::as_str), Some("2"));
    let crlf = spec("y.yaml", "unit: y\r\nexec-start: /bin/y\r\n");
    assert_eq!(crlf.exec_start, Some(cmd(&["/bin/y"])));
}

#[test]
fn wanted_by_is_a_list_of_target_names() {
    let s = spec(
        "web.yaml",
        "unit: web\nexec-start: /bin/web\nwanted-by: [multi-user.target, default]\n",
    );
    assert_eq!(s.extras.wanted_by, ["multi-user.target", "default"]);
    let s = spec(
        "web.yaml",
        "unit: web\nexec-start: /bin/web\nwanted-by: default\n",
    );
    assert_eq!(s.extras.wanted_by, ["default"]);
    // It adds no dependency: it is for `initctl enable`.
    assert!(s.depends_on.is_empty() && s.waits_for.is_empty());
    let bad = flotilla_units::load::parse_yaml(
        "web.yaml",
        "unit: web\nexec-start: /bin/web\nwanted-by: [\"no/such\"]\n",
    );
    assert!(bad.spec.is_none(), "{:?}", bad.spec);
    let text = bad.diagnostics[0].to_string();
    assert!(text.starts_with("web.yaml:3:"), "{text}");
}
