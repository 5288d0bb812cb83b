//! Integration tests: the real `initctl` binary against a fake init on a
//! temp unix socket. Each test checks the request sent, the output and the
//! exit code.

mod util;

use flotilla_units::protocol::{
    AnalyzeData, Applied, Edge, ErrorCode, LogLine, LogSource, Progress, Reply, SystemStatus,
    UnitStatus, UnitTiming,
};
use flotilla_units::spec::UnitType;
use flotilla_units::state::{DepKind, UnitState};
use serde_json::json;
use std::io::{BufRead, BufReader, Read};
use std::process::Stdio;
use std::time::{Duration, Instant};
use util::{initctl, run, run_bare, FakeInit, Step};

fn unit(name: &str, state: UnitState) -> UnitStatus {
    UnitStatus {
        unit: name.into(),
        kind: UnitType::ForegroundSupervised,
        state,
        provides: vec![name.into()],
        since: "2026-11-22T04:00:00.000Z".into(),
        required: true,
        ..Default::default()
    }
}

fn system() -> SystemStatus {
    let mut maddy = unit("maddy", UnitState::Running);
    maddy.kind = UnitType::ForegroundNotified;
    maddy.pid = Some(123);
    maddy.provides = vec!["imapd".into(), "smtpd".into()];
    maddy.status = "ready".into();
    let mut web = unit("web", UnitState::Waiting);
    web.blocked_by = Some("db".into());
    SystemStatus {
        target: "default".into(),
        target_state: UnitState::Waiting,
        degraded: false,
        units: vec![maddy, web],
        pid1: false,
        shutting_down: false,
        load_errors: vec![],
        log_writer: None,
        units_path: vec![],
        log: Default::default(),
        default_limits: Default::default(),
        environment: Vec::new(),
        service_watchdogs: true,
    }
}

fn error(code: ErrorCode, message: &str) -> Reply {
    Reply::error(code, message)
}

fn log(line: &str) -> Reply {
    Reply::Log(LogLine {
        time: "2026-11-22T04:00:00.000Z".into(),
        stream: "stdout".into(),
        line: line.into(),
        seq: None,
        cut: false,
    })
}

fn progress(active: usize, waiting: &[&str]) -> Reply {
    Reply::Progress(Progress {
        target: "web".into(),
        total: 3,
        active,
        failed: 0,
        starting: vec![],
        waiting: waiting.iter().map(|s| s.to_string()).collect(),
        starting_more: 0,
        waiting_more: 0,
        stopping: vec![],
        stopping_more: 0,
    })
}

fn timing(name: &str, start: u64, active: Option<u64>, deps: Vec<Edge>) -> UnitTiming {
    UnitTiming {
        unit: name.into(),
        kind: UnitType::ForegroundSupervised,
        state: if active.is_some() {
            UnitState::Running
        } else {
            UnitState::Failed
        },
        provides: vec![name.into()],
        deps,
        required: true,
        start_ms: Some(start),
        active_ms: active,
        end_ms: if active.is_some() {
            None
        } else {
            Some(start + 700)
        },
    }
}

fn edge(kind: DepKind, target: &str, provider: Option<&str>) -> Edge {
    Edge {
        kind,
        target: target.into(),
        provider: provider.map(str::to_string),
    }
}

fn analyze_data() -> AnalyzeData {
    AnalyzeData {
        target: "default".into(),
        target_set_ms: 0,
        target_active_ms: Some(1500),
        now_ms: 0,
        units: vec![
            timing("net", 0, Some(100), vec![]),
            timing(
                "db",
                100,
                Some(1100),
                vec![edge(DepKind::DependsOn, "net", Some("net"))],
            ),
            timing("opt", 0, None, vec![]),
            timing(
                "default",
                1100,
                Some(1500),
                vec![
                    edge(DepKind::DependsOn, "db", Some("db")),
                    edge(DepKind::WaitsFor, "opt", Some("opt")),
                    edge(DepKind::DependsMs, "ghost", None),
                ],
            ),
        ],
    }
}

// ---- status -------------------------------------------------------------

#[test]
fn status_prints_the_header_and_a_table() {
    let init = FakeInit::replying(vec![Reply::Status(system())]);
    let r = run(&init, &["status"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with(
            "Target:   default\nState:    waiting\nDegraded: no\nInit:     supervisor (not PID 1)\n"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("UNIT   TYPE                   STATE    PID  PROVIDES     STATUS\n"),
        "{}",
        r.stdout
    );
    assert!(r
        .stdout
        .contains("maddy  foreground-notified    running  123  imapd,smtpd  ready\n"));
    assert!(r
        .stdout
        .contains("web    foreground-supervised  waiting  -    web          blocked by db\n"));
    assert_eq!(init.request(), json!({"v": 1, "op": "status"}));
}

#[test]
fn status_json_is_the_server_object() {
    let init = FakeInit::replying(vec![Reply::Status(system())]);
    let r = run(&init, &["status", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v, serde_json::to_value(system()).unwrap());
    assert_eq!(v["target"], "default");
    assert_eq!(v["target_state"], "waiting");
    assert_eq!(v["degraded"], false);
    assert_eq!(v["units"][0]["type"], "foreground-notified");
    assert_eq!(v["units"][0]["pid"], 123);
    assert_eq!(v["units"][1]["blocked_by"], "db");
    assert!(v.get("reply").is_none());
}

#[test]
fn status_of_one_unit() {
    let mut u = unit("maddy", UnitState::Running);
    u.pid = Some(7);
    let init = FakeInit::replying(vec![Reply::Unit(u)]);
    let r = run(&init, &["status", "maddy"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("maddy\n"), "{}", r.stdout);
    assert!(r.stdout.contains("   PID: 7\n"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains(" State: running since 2026-11-22T04:00:00.000Z"),
        "{}",
        r.stdout
    );
    assert_eq!(
        init.request(),
        json!({"v": 1, "op": "status", "name": "maddy"})
    );
}

#[test]
fn status_of_a_target_json() {
    let init = FakeInit::replying(vec![Reply::Unit(unit("maddy", UnitState::Running))]);
    let r = run(&init, &["--json", "status", "imapd"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["unit"], "maddy");
    assert_eq!(v["state"], "running");
    for key in [
        "type",
        "degraded",
        "pid",
        "provides",
        "coincidental",
        "restarts",
        "blocked_by",
        "status",
        "since",
    ] {
        assert!(v.get(key).is_some(), "{key}");
    }
    assert_eq!(
        init.request(),
        json!({"v": 1, "op": "status", "name": "imapd"})
    );
}

#[test]
fn status_of_an_unknown_name_exits_4() {
    for code in [ErrorCode::UnknownUnit, ErrorCode::UnknownTarget] {
        let init = FakeInit::replying(vec![error(code, "no unit or target named 'nope'")]);
        let r = run(&init, &["status", "nope"]);
        assert_eq!(r.code, 4);
        assert_eq!(r.stdout, "");
        assert_eq!(r.stderr, "initctl: no unit or target named 'nope'\n");
    }
}

// ---- list ---------------------------------------------------------------

#[test]
fn list_table_and_json() {
    let init = FakeInit::replying(vec![Reply::List {
        units: system().units,
    }]);
    let r = run(&init, &["list"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "UNIT   TYPE                   STATE    PID  PROVIDES\n\
         maddy  foreground-notified    running  123  imapd,smtpd\n\
         web    foreground-supervised  waiting  -    web\n"
    );
    assert_eq!(init.request(), json!({"v": 1, "op": "list"}));

    let init = FakeInit::replying(vec![Reply::List {
        units: system().units,
    }]);
    let r = run(&init, &["list", "--json"]);
    assert_eq!(r.code, 0);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v,
        json!({"units": serde_json::to_value(system().units).unwrap()})
    );
}

// ---- set-target ---------------------------------------------------------

#[test]
fn set_target_without_wait() {
    let init = FakeInit::replying(vec![Reply::Accepted {
        message: "switching to target 'rescue'".into(),
    }]);
    let r = run(&init, &["set-target", "rescue"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "switching to target 'rescue'\n");
    assert_eq!(
        init.request(),
        json!({"v": 1, "op": "set-target", "target": "rescue", "wait": false})
    );
}

#[test]
fn set_target_wait_prints_a_line_per_change() {
    let init = FakeInit::replying(vec![
        progress(0, &["web (db)"]),
        progress(0, &["web (db)"]),
        progress(2, &[]),
        Reply::Settled {
            target: "web".into(),
            state: UnitState::Running,
            ok: true,
            failed: vec![],
        },
    ]);
    let r = run(&init, &["set-target", "web", "--wait"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "web: 0/3 active; waiting: web (db)\nweb: 2/3 active\ntarget 'web' is active (running)\n"
    );
    assert_eq!(
        init.request(),
        json!({"v": 1, "op": "set-target", "target": "web", "wait": true})
    );
}

#[test]
fn set_target_wait_failed_exits_1() {
    let init = FakeInit::replying(vec![Reply::Settled {
        target: "web".into(),
        state: UnitState::Failed,
        ok: false,
        failed: vec!["db".into()],
    }]);
    let r = run(&init, &["set-target", "web", "--wait"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        "initctl: target 'web' failed (failed); failed units: db\n"
    );
}

#[test]
fn set_target_failed_error_exits_1() {
    let init = FakeInit::replying(vec![
        progress(1, &[]),
        error(ErrorCode::Failed, "target 'web' failed"),
    ]);
    let r = run(&init, &["set-target", "web", "--wait"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.stderr, "initctl: target 'web' failed\n");
}

#[test]
fn set_target_unknown_exits_4() {
    let init = FakeInit::replying(vec![error(
        ErrorCode::UnknownTarget,
        "no unit provides target 'nope'",
    )]);
    let r = run(&init, &["set-target", "nope", "--wait"]);
    assert_eq!(r.code, 4);
    assert_eq!(r.stderr, "initctl: no unit provides target 'nope'\n");
    let init = FakeInit::replying(vec![error(
        ErrorCode::UnknownTarget,
        "no unit provides target 'nope'",
    )]);
    assert_eq!(run(&init, &["set-target", "nope"]).code, 4);
}

#[test]
fn set_target_timeout_gives_up_and_exits_1() {
    let init = FakeInit::start(vec![
        Step::reply(progress(1, &["web (db)"])),
        Step::Sleep(Duration::from_millis(2500)),
    ]);
    let started = Instant::now();
    let r = run(&init, &["set-target", "web", "--timeout", "300ms"]);
    let took = started.elapsed();
    assert_eq!(r.code, 1);
    assert!(took < Duration::from_secs(2), "took {took:?}");
    assert!(took >= Duration::from_millis(300), "took {took:?}");
    assert_eq!(r.stdout, "web: 1/3 active; waiting: web (db)\n");
    assert_eq!(r.stderr, "initctl: timed out after 300ms waiting for target 'web' (1/3 active); the switch goes on\n");
    // --timeout implies --wait.
    assert_eq!(init.request()["wait"], true);
}

// ---- reload -------------------------------------------------------------

#[test]
fn reload_prints_what_changed() {
    let init = FakeInit::replying(vec![Reply::Applied(Applied {
        added: vec!["new".into()],
        changed: vec!["web".into()],
        removed: vec![],
        unchanged: 4,
        warnings: vec!["units/web.yaml:3:1: warning: depends on missing target 'x'".into()],
    })]);
    let r = run(&init, &["reload"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "added:     new\nchanged:   web (restarted if running)\nunchanged: 4\n"
    );
    assert_eq!(
        r.stderr,
        "units/web.yaml:3:1: warning: depends on missing target 'x'\n"
    );
    assert_eq!(init.request(), json!({"v": 1, "op": "reload"}));
}

#[test]
fn reload_refused_prints_every_problem_and_exits_1() {
    let init = FakeInit::replying(vec![Reply::Error {
        code: ErrorCode::Invalid,
        message: "2 error(s) in units; nothing changed".into(),
        details: vec![
            "units/a.yaml:1:1: unknown key 'x'".into(),
            "units/b.yaml:2:5: bad name".into(),
        ],
    }]);
    let r = run(&init, &["reload"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr,
        "initctl: reload refused: 2 error(s) in units; nothing changed\n\
         units/a.yaml:1:1: unknown key 'x'\n\
         units/b.yaml:2:5: bad name\n"
    );
}

// ---- restart ------------------------------------------------------------

#[test]
fn restart_codes() {
    let init = FakeInit::replying(vec![Reply::Accepted {
        message: "restarting db".into(),
    }]);
    let r = run(&init, &["restart", "db"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "restarting db\n"));
    assert_eq!(
        init.request(),
        json!({"v": 1, "op": "restart", "unit": "db"})
    );

    let init = FakeInit::replying(vec![error(ErrorCode::UnknownUnit, "no unit named 'x'")]);
    assert_eq!(run(&init, &["restart", "x"]).code, 4);

    let init = FakeInit::replying(vec![error(
        ErrorCode::NotPossible,
        "unit 'old' is not required",
    )]);
    let r = run(&init, &["restart", "old"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.stderr, "initctl: unit 'old' is not required\n");
}

// ---- start, stop ---------------------------------------------------------

#[test]
fn start_and_stop_that_change_nothing() {
    // stop of a unit the target does not require: stopped already.
    let mut idle = unit("db", UnitState::Disabled);
    idle.required = false;
    let init = FakeInit::replying(vec![Reply::Unit(idle)]);
    let r = run(&init, &["stop", "db"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(
        init.request(),
        json!({"v": 1, "op": "status", "name": "db.service"})
    );
    // start of a masked unit: systemctl's words, exit 1.
    let mut masked = unit("db", UnitState::Disabled);
    masked.masked = true;
    let init = FakeInit::replying(vec![Reply::Unit(masked)]);
    let r = run(&init, &["start", "db"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (1, "Failed to start db: Unit db is masked.\n")
    );
    // start of a required unit that is running: nothing to do.
    let init = FakeInit::replying(vec![Reply::Unit(unit("db", UnitState::Running))]);
    assert_eq!(run(&init, &["start", "db"]).code, 0);
}

#[test]
fn permission_denied_exits_3() {
    let init = FakeInit::replying(vec![error(
        ErrorCode::PermissionDenied,
        "only root or uid 0 may restart units",
    )]);
    let r = run(&init, &["restart", "db"]);
    assert_eq!(r.code, 3);
    assert_eq!(
        r.stderr,
        "initctl: permission denied: only root or uid 0 may restart units\n"
    );
}

// ---- logs ---------------------------------------------------------------

/// What an init says before a unit's lines: no log directory, lines
/// `first` to `next - 1` in memory.
fn source(first: u64, next: u64) -> Reply {
    Reply::LogSource(LogSource {
        dir: None,
        stream: "1.0-1/0".into(),
        persisted: 0,
        first,
        next,
    })
}

#[test]
fn logs_prints_plain_lines() {
    let init = FakeInit::replying(vec![
        source(1, 5),
        log("before"),
        log("hello"),
        log("  two  spaces "),
        log(""),
        Reply::LogEnd,
    ]);
    let r = run(&init, &["logs", "web", "-n", "3"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "hello\n  two  spaces \n\n");
    assert_eq!(
        init.request(),
        json!({"v": 1, "op": "logs", "unit": "web", "follow": false, "source": true})
    );
}

#[test]
fn logs_without_lines_sends_no_lines_field() {
    let init = FakeInit::replying(vec![source(1, 1), Reply::LogEnd]);
    let r = run(&init, &["logs", "web"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    assert_eq!(
        init.request(),
        json!({"v": 1, "op": "logs", "unit": "web", "follow": false, "source": true})
    );
}

#[test]
fn logs_unknown_unit_exits_4() {
    let init = FakeInit::replying(vec![error(ErrorCode::UnknownUnit, "no unit named 'x'")]);
    let r = run(&init, &["logs", "x"]);
    assert_eq!(r.code, 4);
    assert_eq!(r.stderr, "initctl: no unit named 'x'\n");
}

#[test]
fn logs_follow_streams_live_and_ends_when_the_init_goes() {
    let init = FakeInit::start(vec![
        Step::reply(source(1, 1)),
        Step::reply(log("first")),
        Step::Sleep(Duration::from_millis(200)),
        Step::reply(log("second")),
    ]);
    let mut child = initctl()
        .arg("--control")
        .arg(init.socket())
        .args(["logs", "-f", "web"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    // The first line arrives before the second is even sent: it is flushed.
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "first\n");
    line.clear();
    out.read_to_string(&mut line).unwrap();
    assert_eq!(line, "second\n");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(
        init.request(),
        json!({"v": 1, "op": "logs", "unit": "web", "follow": true, "source": true})
    );
}

#[test]
fn closed_stdout_is_not_an_error() {
    // Like `initctl logs -f web | head -1`.
    let mut script = vec![
        Step::reply(source(1, 1)),
        Step::reply(log("one")),
        Step::Sleep(Duration::from_millis(300)),
    ];
    script.extend((0..100).map(|i| Step::reply(log(&format!("line {i}")))));
    script.push(Step::Sleep(Duration::from_millis(500)));
    let init = FakeInit::start(script);
    let mut child = initctl()
        .arg("--control")
        .arg(init.socket())
        .args(["logs", "-f", "web"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "one\n");
    drop(out);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

// ---- shutdown -----------------------------------------------------------

#[test]
fn shutdown_verbs() {
    for (verb, kind) in [
        ("poweroff", "poweroff"),
        ("reboot", "reboot"),
        ("halt", "halt"),
    ] {
        let init = FakeInit::replying(vec![Reply::Accepted {
            message: format!("{kind}: stopping all units"),
        }]);
        let r = run(&init, &[verb]);
        assert_eq!(r.code, 0, "{verb}: {}", r.stderr);
        assert_eq!(r.stdout, format!("{kind}: stopping all units\n"));
        assert_eq!(
            init.request(),
            json!({"v": 1, "op": "shutdown", "kind": kind})
        );
    }
}

#[test]
fn shutdown_counts_a_vanished_init_as_done() {
    let init = FakeInit::replying(vec![]);
    let r = run(&init, &["poweroff"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

// ---- analyze ------------------------------------------------------------

#[test]
fn analyze_blame() {
    let init = FakeInit::replying(vec![Reply::Analyze(analyze_data())]);
    let r = run(&init, &["analyze", "blame"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "   1s db\n700ms opt (failed)\n400ms default\n100ms net\n"
    );
    assert_eq!(init.request(), json!({"v": 1, "op": "analyze"}));
}

#[test]
fn analyze_critical_chain() {
    let init = FakeInit::replying(vec![Reply::Analyze(analyze_data())]);
    let r = run(&init, &["analyze", "critical-chain"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let tree: Vec<&str> = r.stdout.lines().skip(4).collect();
    assert_eq!(
        tree,
        [
            "default @1.5s +400ms",
            "└─db @1.1s +1s",
            "  └─net @100ms +100ms"
        ]
    );

    let init = FakeInit::replying(vec![Reply::Analyze(analyze_data())]);
    let r = run(&init, &["analyze", "critical-chain", "db"]);
    assert_eq!(
        r.stdout.lines().skip(4).collect::<Vec<_>>(),
        ["db @1.1s +1s", "└─net @100ms +100ms"]
    );

    let init = FakeInit::replying(vec![Reply::Analyze(analyze_data())]);
    let r = run(&init, &["analyze", "critical-chain", "nope"]);
    assert_eq!(r.code, 4);
    assert_eq!(r.stderr, "initctl: no unit or target named 'nope'\n");
}

#[test]
fn analyze_plot_is_svg() {
    let init = FakeInit::replying(vec![Reply::Analyze(analyze_data())]);
    let r = run(&init, &["analyze", "plot"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("<?xml version=\"1.0\""));
    assert!(r.stdout.trim_end().ends_with("</svg>"));
    for name in ["net", "db", "opt", "default"] {
        assert!(r.stdout.contains(&format!(">{name}</text>")), "{name}");
    }
}

#[test]
fn analyze_dot_is_a_digraph() {
    let init = FakeInit::replying(vec![Reply::Analyze(analyze_data())]);
    let r = run(&init, &["analyze", "dot"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("digraph flotilla {"));
    assert!(r.stdout.contains("\"default\" -> \"db\" [style=solid"));
    assert!(r.stdout.contains("\"default\" -> \"opt\" [style=dotted"));
    assert!(r
        .stdout
        .contains("\"default\" -> \"missing:ghost\" [style=dashed"));
}

// ---- failures -----------------------------------------------------------

#[test]
fn no_init_at_the_socket_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nothing.sock");
    let r = run_bare(&["--control", path.to_str().unwrap(), "status"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!(
            "initctl: cannot reach the init at {}: no such file or directory (is init running?)\n",
            path.display()
        )
    );

    // A socket file with nobody listening.
    let path = dir.path().join("dead.sock");
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    let r = run_bare(&["--control", path.to_str().unwrap(), "list"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        format!(
            "initctl: cannot reach the init at {}: connection refused (is init running?)\n",
            path.display()
        )
    );
}

#[test]
fn unreadable_reply_exits_1() {
    let init = FakeInit::start(vec![Step::Raw("this is not json\n".into())]);
    let r = run(&init, &["status"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .starts_with("initctl: unreadable reply from the init"),
        "{}",
        r.stderr
    );
}

#[test]
fn wrong_reply_exits_1() {
    let init = FakeInit::replying(vec![Reply::LogEnd]);
    let r = run(&init, &["status"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        "initctl: unexpected reply from the init: 'log-end' (wanted 'status')\n"
    );
}

#[test]
fn connection_closed_early_exits_1() {
    let init = FakeInit::start(vec![Step::Raw("{\"reply\":\"sta".into())]);
    let r = run(&init, &["status"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        format!(
            "initctl: the init at {} closed the connection before it answered\n",
            init.socket().display()
        )
    );
}

#[test]
fn other_server_errors_exit_1() {
    let init = FakeInit::replying(vec![error(
        ErrorCode::UnsupportedVersion,
        "protocol version 1 is not spoken here",
    )]);
    let r = run(&init, &["list"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        "initctl: the init refused the request (unsupported-version): protocol version 1 is not spoken here\n"
    );
}

// ---- socket resolution ----------------------------------------------------

#[test]
fn socket_from_init_control() {
    let init = FakeInit::replying(vec![Reply::List { units: vec![] }]);
    let r: util::Run = initctl()
        .env("INIT_CONTROL", init.socket())
        .arg("list")
        .output()
        .unwrap()
        .into();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(init.request(), json!({"v": 1, "op": "list"}));
}

#[test]
fn control_flag_wins_over_init_control() {
    let init = FakeInit::replying(vec![Reply::List { units: vec![] }]);
    let r: util::Run = initctl()
        .env("INIT_CONTROL", "/nonexistent/control.sock")
        .args(["list", "--control"])
        .arg(init.socket())
        .output()
        .unwrap()
        .into();
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn default_socket_depends_on_the_user() {
    // SAFETY: geteuid(2) cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let dir = tempfile::tempdir().unwrap();
    let r: util::Run = initctl()
        .env("XDG_RUNTIME_DIR", dir.path())
        .arg("status")
        .output()
        .unwrap()
        .into();
    assert_eq!(r.code, 2);
    let expected = if root {
        "/run/init/control.sock".to_string()
    } else {
        dir.path().join("init/control.sock").display().to_string()
    };
    assert!(
        r.stderr
            .starts_with(&format!("initctl: cannot reach the init at {expected}: ")),
        "{}",
        r.stderr
    );
    if !root {
        let r: util::Run = initctl().arg("status").output().unwrap().into();
        assert_eq!(r.code, 2);
        assert!(
            r.stderr.contains("XDG_RUNTIME_DIR is not set"),
            "{}",
            r.stderr
        );
    }
}

// ---- usage ----------------------------------------------------------------

#[test]
fn usage_errors_exit_2_with_usage() {
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &[],
            "initctl: missing command\n",
            "Usage: initctl [--control PATH] COMMAND",
        ),
        (
            &["frob"],
            "initctl: unknown command 'frob'\n",
            "Usage: initctl [--control PATH] COMMAND",
        ),
        (
            &["set-target"],
            "initctl: 'set-target' needs a target name\n",
            "Usage: initctl set-target NAME",
        ),
        (
            &["set-target", "x", "--timeout", "soon"],
            "initctl: --timeout: invalid duration 'soon'",
            "Usage: initctl set-target",
        ),
        (
            &["logs", "x", "-n", "many"],
            "initctl: -n: invalid number of lines 'many'\n",
            "Usage: initctl logs UNIT",
        ),
        (
            &["status", "--bogus"],
            "initctl: unknown option '--bogus' for 'status'\n",
            "Usage: initctl status",
        ),
        (
            &["restart"],
            "initctl: 'restart' needs a unit name\n",
            "Usage: initctl restart UNIT",
        ),
        (
            &["start"],
            "initctl: 'start' needs a unit name\n",
            "Usage: initctl start [--no-block] UNIT...",
        ),
        (
            &["analyze"],
            "initctl: 'analyze' needs one of",
            "Usage: initctl analyze blame",
        ),
        (
            &["reload", "--json"],
            "initctl: --json does not apply to 'reload'\n",
            "Usage: initctl reload",
        ),
    ];
    for (args, message, usage) in cases {
        let r = run_bare(args);
        assert_eq!(r.code, 2, "{args:?}");
        assert_eq!(r.stdout, "", "{args:?}");
        assert!(r.stderr.starts_with(message), "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(usage), "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.ends_with("Run 'initctl --help' for more.\n"),
            "{args:?}"
        );
    }
}

#[test]
fn help_goes_to_stdout_and_exits_0() {
    for args in [&["--help"][..], &["-h"], &["help"]] {
        let r = run_bare(args);
        assert_eq!(r.code, 0);
        assert!(
            r.stdout.starts_with("initctl: control the flotilla init\n"),
            "{args:?}"
        );
        assert!(r.stdout.contains("Exit status:"));
    }
    for (args, first) in [
        (
            &["status", "--help"][..],
            "Usage: initctl status [NAME...] [--json]",
        ),
        (
            &["help", "set-target"],
            "Usage: initctl set-target NAME [--wait] [--timeout DUR]",
        ),
        (
            &["logs", "-h"],
            "Usage: initctl logs UNIT [-n N] [--since TIME] [-f] [--verbose]",
        ),
        (&["help", "halt"], "Usage: initctl poweroff | reboot | halt"),
        (&["analyze", "--help"], "Usage: initctl analyze blame"),
        (&["list", "-h"], "Usage: initctl list [--json]"),
        (&["reload", "-h"], "Usage: initctl reload"),
        (&["restart", "-h"], "Usage: initctl restart UNIT"),
    ] {
        let r = run_bare(args);
        assert_eq!(r.code, 0, "{args:?}");
        assert!(r.stdout.starts_with(first), "{args:?}: {}", r.stdout);
        assert_eq!(r.stderr, "");
    }
    let r = run_bare(&["--version"]);
    assert_eq!((r.code, r.stdout.starts_with("initctl ")), (0, true));
}

#[test]
fn cluster_arguments_reach_the_cluster_client() {
    // Help comes from the cluster client, not from initctl's own parser.
    let r = run_bare(&["cluster", "--help"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("initctl cluster"), "{}", r.stdout);
    assert!(r.stdout.contains("list-machines"), "{}", r.stdout);
    // `--control` before `cluster` is initctl's; the rest is passed on.
    let r = run_bare(&[
        "--control",
        "/nonexistent/control.sock",
        "cluster",
        "--endpoint",
        "unix:///nonexistent/fleet.sock",
        "list-machines",
    ]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("/nonexistent/fleet.sock"), "{}", r.stderr);
}
