//! Every accepted and refused command line.

use super::*;
use std::time::Duration;

fn ok(args: &[&str]) -> Invocation {
    parse(args.iter().copied()).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn cmd(args: &[&str]) -> Command {
    ok(args).command
}

fn err(args: &[&str]) -> UsageError {
    match parse(args.iter().copied()) {
        Ok(i) => panic!("{args:?} parsed as {i:?}"),
        Err(e) => e,
    }
}

#[test]
fn status_and_list() {
    assert_eq!(
        cmd(&["status"]),
        Command::Status {
            names: vec![],
            json: false
        }
    );
    assert_eq!(
        cmd(&["status", "maddy"]),
        Command::Status {
            names: vec!["maddy".into()],
            json: false
        }
    );
    assert_eq!(
        cmd(&["status", "--json", "web"]),
        Command::Status {
            names: vec!["web".into()],
            json: true
        }
    );
    assert_eq!(
        cmd(&["status", "web", "--json"]),
        Command::Status {
            names: vec!["web".into()],
            json: true
        }
    );
    assert_eq!(
        cmd(&["--json", "status"]),
        Command::Status {
            names: vec![],
            json: true
        }
    );
    assert_eq!(
        cmd(&["status", "--", "-odd"]),
        Command::Status {
            names: vec!["-odd".into()],
            json: false
        }
    );
    assert_eq!(
        cmd(&["status", "a", "b", "--json"]),
        Command::Status {
            names: vec!["a".into(), "b".into()],
            json: true
        }
    );
    assert_eq!(
        cmd(&["list"]),
        Command::List {
            json: false,
            degraded: false
        }
    );
    assert_eq!(
        cmd(&["list", "--json"]),
        Command::List {
            json: true,
            degraded: false
        }
    );
    assert_eq!(
        cmd(&["list", "--degraded"]),
        Command::List {
            json: false,
            degraded: true
        }
    );
    assert_eq!(
        cmd(&["analyze", "security", "redis", "--json"]),
        Command::Analyze(crate::command::Analyze::Security(
            Some("redis".into()),
            true
        ))
    );
}

#[test]
fn control_before_or_after_the_verb() {
    let i = ok(&["--control", "/tmp/s", "status"]);
    assert_eq!(i.control, Some(PathBuf::from("/tmp/s")));
    let i = ok(&["--control=/tmp/s", "list"]);
    assert_eq!(i.control, Some(PathBuf::from("/tmp/s")));
    let i = ok(&["reload", "--control", "/tmp/t"]);
    assert_eq!(i.control, Some(PathBuf::from("/tmp/t")));
    assert_eq!(i.command, Command::Reload { unit: None });
    let i = ok(&["--", "reload"]);
    assert_eq!(i.command, Command::Reload { unit: None });
    assert_eq!(ok(&["status"]).control, None);
}

#[test]
fn set_target_forms() {
    assert_eq!(
        cmd(&["set-target", "rescue"]),
        Command::SetTarget {
            target: "rescue".into(),
            wait: false,
            timeout: None
        }
    );
    assert_eq!(
        cmd(&["set-target", "--wait", "rescue"]),
        Command::SetTarget {
            target: "rescue".into(),
            wait: true,
            timeout: None
        }
    );
    assert_eq!(
        cmd(&["set-target", "rescue", "--wait", "--timeout", "2s"]),
        Command::SetTarget {
            target: "rescue".into(),
            wait: true,
            timeout: Some(Duration::from_secs(2))
        }
    );
    assert_eq!(
        cmd(&["set-target", "rescue", "--timeout=500ms"]),
        Command::SetTarget {
            target: "rescue".into(),
            wait: true,
            timeout: Some(Duration::from_millis(500))
        }
    );
    assert_eq!(
        cmd(&["set-target", "-w", "-t", "1m", "x"]),
        Command::SetTarget {
            target: "x".into(),
            wait: true,
            timeout: Some(Duration::from_secs(60))
        }
    );
    assert_eq!(
        cmd(&["set-target", "x", "--timeout", "0"]),
        Command::SetTarget {
            target: "x".into(),
            wait: true,
            timeout: None
        }
    );
    assert_eq!(
        cmd(&["set-target", "x", "--timeout", "3"]),
        Command::SetTarget {
            target: "x".into(),
            wait: true,
            timeout: Some(Duration::from_secs(3))
        }
    );
}

#[test]
fn logs_forms() {
    let logs = |lines, follow| {
        Command::Logs(crate::cmd::logs::Ask {
            unit: "web".into(),
            lines,
            since: None,
            follow,
            verbose: false,
        })
    };
    assert_eq!(cmd(&["logs", "web"]), logs(None, false));
    assert_eq!(cmd(&["logs", "web", "-n", "5"]), logs(Some(5), false));
    assert_eq!(cmd(&["logs", "-n5", "web"]), logs(Some(5), false));
    assert_eq!(
        cmd(&["logs", "--lines=7", "web", "-f"]),
        logs(Some(7), true)
    );
    assert_eq!(
        cmd(&["logs", "--lines", "0", "--follow", "web"]),
        logs(Some(0), true)
    );
    assert_eq!(cmd(&["logs", "-fn", "3", "web"]), logs(Some(3), true));
    assert_eq!(cmd(&["logs", "-fn3", "web"]), logs(Some(3), true));
    assert_eq!(
        cmd(&["logs", "web", "--since", "2026-11-22", "-v"]),
        Command::Logs(crate::cmd::logs::Ask {
            unit: "web".into(),
            lines: None,
            since: Some(crate::since::Since::At(1_795_305_600_000)),
            follow: false,
            verbose: true,
        })
    );
    assert_eq!(
        cmd(&["logs", "-S", "-5m", "--verbose", "web"]),
        Command::Logs(crate::cmd::logs::Ask {
            unit: "web".into(),
            lines: None,
            since: Some(crate::since::Since::Ago(Duration::from_secs(300))),
            follow: false,
            verbose: true,
        })
    );
}

#[test]
fn other_verbs() {
    assert_eq!(cmd(&["reload"]), Command::Reload { unit: None });
    assert_eq!(
        cmd(&["reload", "web"]),
        Command::Reload {
            unit: Some("web".into())
        }
    );
    assert_eq!(
        cmd(&["restart", "db"]),
        Command::Restart { unit: "db".into() }
    );
    assert_eq!(
        cmd(&["start", "db", "web.service"]),
        Command::Systemctl(crate::command::Systemctl::Start(
            vec!["db".into(), "web.service".into()],
            true
        ))
    );
    assert_eq!(
        cmd(&["start", "--no-block", "db"]),
        Command::Systemctl(crate::command::Systemctl::Start(vec!["db".into()], false))
    );
    assert_eq!(
        cmd(&["preset", "web.service", "db.service"]),
        Command::UnitFiles(crate::command::UnitFiles::Preset(vec![
            "web.service".into(),
            "db.service".into()
        ]))
    );
    assert_eq!(
        cmd(&["stop", "db"]),
        Command::Systemctl(crate::command::Systemctl::Stop(vec!["db".into()], true))
    );
    assert_eq!(
        cmd(&["poweroff"]),
        Command::Shutdown(ShutdownKind::Poweroff)
    );
    assert_eq!(cmd(&["reboot"]), Command::Shutdown(ShutdownKind::Reboot));
    assert_eq!(cmd(&["halt"]), Command::Shutdown(ShutdownKind::Halt));
    assert_eq!(cmd(&["analyze", "blame"]), Command::Analyze(Analyze::Blame));
    assert_eq!(
        cmd(&["analyze", "critical-chain"]),
        Command::Analyze(Analyze::CriticalChain(None))
    );
    assert_eq!(
        cmd(&["analyze", "critical-chain", "web"]),
        Command::Analyze(Analyze::CriticalChain(Some("web".into())))
    );
    assert_eq!(cmd(&["analyze", "plot"]), Command::Analyze(Analyze::Plot));
    assert_eq!(cmd(&["analyze", "dot"]), Command::Analyze(Analyze::Dot));
    assert_eq!(cmd(&["--version"]), Command::Version);
    assert_eq!(cmd(&["-V"]), Command::Version);
}

#[test]
fn cluster_arguments_pass_through_untouched() {
    assert_eq!(
        cmd(&[
            "cluster",
            "--endpoint",
            "http://x",
            "list-units",
            "--json",
            "-h"
        ]),
        Command::Cluster(vec![
            "--endpoint".into(),
            "http://x".into(),
            "list-units".into(),
            "--json".into(),
            "-h".into()
        ])
    );
    let i = ok(&["--control", "/s", "cluster"]);
    assert_eq!(i.command, Command::Cluster(vec![]));
}

#[test]
fn help_everywhere() {
    assert_eq!(cmd(&["--help"]), Command::Help(Topic::Main));
    assert_eq!(cmd(&["-h"]), Command::Help(Topic::Main));
    assert_eq!(cmd(&["help"]), Command::Help(Topic::Main));
    assert_eq!(cmd(&["help", "logs"]), Command::Help(Topic::Logs));
    assert_eq!(cmd(&["help", "reboot"]), Command::Help(Topic::Shutdown));
    assert_eq!(cmd(&["status", "--help"]), Command::Help(Topic::Status));
    assert_eq!(cmd(&["set-target", "-h"]), Command::Help(Topic::SetTarget));
    assert_eq!(cmd(&["logs", "--bogus", "-h"]), Command::Help(Topic::Logs));
    assert_eq!(cmd(&["analyze", "-h"]), Command::Help(Topic::Analyze));
    assert_eq!(
        cmd(&["reload", "--json", "--help"]),
        Command::Help(Topic::Reload)
    );
    // After `--`, -h is an argument.
    assert_eq!(
        cmd(&["status", "--", "-h"]),
        Command::Status {
            names: vec!["-h".into()],
            json: false
        }
    );
}

/// No command line of up to three of these tokens makes the parser panic,
/// and every refusal has a message.
#[test]
fn never_panics() {
    let tokens = [
        "",
        "-",
        "--",
        "-h",
        "--json",
        "--control",
        "--control=",
        "status",
        "logs",
        "set-target",
        "analyze",
        "critical-chain",
        "-n",
        "-n5",
        "-fn",
        "-é",
        "--timeout",
        "1s",
        "x",
        "cluster",
        "help",
        "--lines=",
        "-w",
    ];
    for a in tokens {
        for b in tokens {
            for c in tokens {
                if let Err(e) = parse([a, b, c]) {
                    assert!(!e.message.is_empty());
                }
            }
        }
    }
}

/// Every refused command line, the message it gets and whose usage is shown.
#[test]
fn bad_command_lines() {
    let cases: &[(&[&str], &str, Topic)] = &[
        (&[], "missing command", Topic::Main),
        (&["--"], "missing command", Topic::Main),
        (&["--control", "/s"], "missing command", Topic::Main),
        (&["frobnicate"], "unknown command 'frobnicate'", Topic::Main),
        (
            &["--bogus", "status"],
            "unknown option '--bogus'",
            Topic::Main,
        ),
        (&["-x"], "unknown option '-x'", Topic::Main),
        (
            &["--control"],
            "option '--control' needs a value",
            Topic::Main,
        ),
        (
            &["--json=yes", "status"],
            "option '--json' takes no value",
            Topic::Main,
        ),
        (
            &["help", "frob"],
            "no help for unknown command 'frob'",
            Topic::Main,
        ),
        (
            &["help", "status", "x"],
            "unexpected argument 'x'",
            Topic::Main,
        ),
        (
            &["status", "--all"],
            "unknown option '--all' for 'status'",
            Topic::Status,
        ),
        (
            &["status", "--control"],
            "option '--control' needs a value",
            Topic::Status,
        ),
        (&["list", "x"], "unexpected argument 'x'", Topic::List),
        (
            &["set-target"],
            "'set-target' needs a target name",
            Topic::SetTarget,
        ),
        (
            &["set-target", ""],
            "'set-target' needs a target name",
            Topic::SetTarget,
        ),
        (
            &["set-target", "a", "b"],
            "unexpected argument 'b'",
            Topic::SetTarget,
        ),
        (
            &["set-target", "a", "--timeout"],
            "option '--timeout' needs a value",
            Topic::SetTarget,
        ),
        (
            &["set-target", "a", "--timeout", "soon"],
            "--timeout: invalid duration 'soon'",
            Topic::SetTarget,
        ),
        (
            &["set-target", "a", "--timeout=-1s"],
            "--timeout: invalid duration '-1s'",
            Topic::SetTarget,
        ),
        (
            &["set-target", "a", "--wait=yes"],
            "option '--wait' takes no value",
            Topic::SetTarget,
        ),
        (
            &["set-target", "a", "--json"],
            "--json does not apply to 'set-target'",
            Topic::SetTarget,
        ),
        (
            &["--json", "reload"],
            "--json does not apply to 'reload'",
            Topic::Reload,
        ),
        (
            &["reload", "web", "now"],
            "unexpected argument 'now'",
            Topic::Reload,
        ),
        (
            &["reload", "-f"],
            "unknown option '-f' for 'reload'",
            Topic::Reload,
        ),
        (&["restart"], "'restart' needs a unit name", Topic::Restart),
        (&["start"], "'start' needs a unit name", Topic::Start),
        (&["preset"], "'preset' needs a unit name", Topic::UnitFiles),
        (&["stop", "--now", "db"], "unknown option '--now' for 'stop'", Topic::Start),
        (&["stop", "--json", "db"], "--json does not apply to 'stop'", Topic::Start),
        (
            &["restart", "a", "b"],
            "unexpected argument 'b'",
            Topic::Restart,
        ),
        (&["logs"], "'logs' needs a unit name", Topic::Logs),
        (
            &["logs", "web", "--since", "soon"],
            "--since: invalid time 'soon' (write e.g. 2026-11-22, '2026-11-22 04:00', yesterday, -10m or '1h ago')",
            Topic::Logs,
        ),
        (
            &["logs", "web", "-n"],
            "option '-n' needs a value",
            Topic::Logs,
        ),
        (
            &["logs", "web", "-n", "-3"],
            "-n: invalid number of lines '-3'",
            Topic::Logs,
        ),
        (
            &["logs", "web", "-n", "ten"],
            "-n: invalid number of lines 'ten'",
            Topic::Logs,
        ),
        (
            &["logs", "web", "--lines="],
            "--lines: invalid number of lines ''",
            Topic::Logs,
        ),
        (
            &["logs", "web", "-x"],
            "unknown option '-x' for 'logs'",
            Topic::Logs,
        ),
        (
            &["logs", "web", "-fx"],
            "unknown option '-x' for 'logs'",
            Topic::Logs,
        ),
        (
            &["logs", "web", "--follow=1"],
            "option '--follow' takes no value",
            Topic::Logs,
        ),
        (
            &["poweroff", "now"],
            "unexpected argument 'now'",
            Topic::Shutdown,
        ),
        (
            &["reboot", "--force"],
            "unknown option '--force' for 'reboot'",
            Topic::Shutdown,
        ),
        (
            &["analyze"],
            "'analyze' needs one of: blame, critical-chain, plot, dot",
            Topic::Analyze,
        ),
        (
            &["analyze", "time"],
            "unknown analyze command 'time'",
            Topic::Analyze,
        ),
        (
            &["analyze", "blame", "x"],
            "unexpected argument 'x'",
            Topic::Analyze,
        ),
        (
            &["analyze", "critical-chain", "a", "b"],
            "unexpected argument 'b'",
            Topic::Analyze,
        ),
        (
            &["analyze", "dot", "--json"],
            "--json does not apply to 'analyze'",
            Topic::Analyze,
        ),
        (
            &["--json", "cluster", "list-units"],
            "--json does not apply to 'cluster'",
            Topic::Cluster,
        ),
    ];
    for (args, message, topic) in cases {
        let e = err(args);
        assert!(
            e.message.starts_with(message),
            "{args:?}: got '{}', want '{message}'",
            e.message
        );
        assert_eq!(e.topic, *topic, "{args:?}");
    }
}

#[test]
fn kill() {
    assert_eq!(
        cmd(&["kill", "web"]),
        Command::Kill {
            units: vec!["web".into()],
            signal: 15,
            main_only: false
        }
    );
    assert_eq!(
        cmd(&["kill", "-s", "HUP", "--kill-whom=main", "a", "b"]),
        Command::Kill {
            units: vec!["a".into(), "b".into()],
            signal: 1,
            main_only: true
        }
    );
    assert_eq!(err(&["kill"]).message, "'kill' needs a unit name");
    assert_eq!(
        err(&["kill", "-s", "NOPE", "web"]).message,
        "'NOPE' is not a signal"
    );
    assert_eq!(
        err(&["kill", "--kill-whom=control", "web"]).topic,
        Topic::Kill
    );
}

#[test]
fn reset_failed() {
    assert_eq!(cmd(&["reset-failed"]), Command::ResetFailed(vec![]));
    assert_eq!(
        cmd(&["reset-failed", "web", "db"]),
        Command::ResetFailed(vec!["web".into(), "db".into()])
    );
    assert_eq!(err(&["reset-failed", "--now"]).topic, Topic::Kill);
}
