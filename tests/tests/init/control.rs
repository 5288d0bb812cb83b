//! System tests of the local init, part 3: the interfaces. `initctl`'s
//! commands, outputs and exit codes (docs/contract.md §5), `init --check` and bad flags
//! (docs/contract.md §2), the control socket under bad input, reload (refused whole;
//! unchanged units keep their PID), SIGHUP, log capture (`logs -n`, `-f`,
//! a flooding unit, the log files), transient units (docs/contract.md §7's `cluster`
//! pattern) and orderly shutdown (SIGTERM, `initctl poweroff`), through the
//! real `init` and `initctl` binaries.

use flotilla_tests::control::{Client, RecvError};
use flotilla_tests::init::{Init, TestDir};
use flotilla_tests::{procs, wait_for, WAIT};
use flotilla_units::protocol::{ErrorCode, Reply, Request};
use flotilla_units::spec::{Command, UnitSpec, UnitType};
use flotilla_units::state::UnitState;
use std::io::{Read, Write};
use std::time::Instant;

fn sleeper(dir: &TestDir, name: &str, extra: &str) {
    dir.unit(
        name,
        &format!("unit: {name}\nexec-start: sleep 100\n{extra}"),
    );
}

fn virtual_unit(dir: &TestDir, name: &str, extra: &str) {
    dir.unit(name, &format!("unit: {name}\ntype: virtual\n{extra}"));
}

/// A long-running unit whose stop appends its name to `order`.
fn recorded(dir: &TestDir, name: &str, extra: &str) {
    let d = dir.path().display().to_string();
    dir.unit(
        name,
        &format!(
            "unit: {name}\nexec-start: sleep 100\n\
             exec-stop: [sh, -c, 'echo {name} >> {d}/order; kill $MAINPID']\n{extra}"
        ),
    );
}

fn keys(v: &serde_json::Value) -> Vec<String> {
    let mut k: Vec<String> = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .cloned()
        .collect();
    k.sort();
    k
}

fn has_keys(v: &serde_json::Value, want: &[&str]) {
    let k = keys(v);
    for w in want {
        assert!(k.iter().any(|x| x == w), "missing key {w} in {v}");
    }
}

const UNIT_KEYS: [&str; 11] = [
    "unit",
    "type",
    "state",
    "degraded",
    "pid",
    "provides",
    "coincidental",
    "restarts",
    "blocked_by",
    "status",
    "since",
];

/// `status --json`, `status NAME --json` and `list --json` have docs/contract.md §5's
/// keys and value types.
#[test]
fn json_shapes() {
    let dir = TestDir::new();
    sleeper(&dir, "maddy", "provides: imapd, smtpd\n");
    virtual_unit(&dir, "default", "depends-on: imapd\n");
    let init = dir.start("default");
    init.wait_all(&["maddy", "default"], UnitState::Running);

    let out = init.ctl(&["status", "--json"]).expect(0).stdout.clone();
    let v: serde_json::Value = serde_json::from_str(&out).expect("status --json is JSON");
    has_keys(&v, &["target", "target_state", "degraded", "units"]);
    assert_eq!(v["target"], "default");
    assert_eq!(v["target_state"], "running");
    assert_eq!(v["degraded"], false);
    let units = v["units"].as_array().unwrap();
    assert_eq!(units.len(), 2);
    let maddy = &units[1];
    has_keys(maddy, &UNIT_KEYS);
    assert_eq!(maddy["unit"], "maddy");
    assert_eq!(maddy["type"], "foreground-supervised");
    assert_eq!(maddy["state"], "running");
    assert_eq!(maddy["degraded"], false);
    assert!(maddy["pid"].as_i64().unwrap() > 1);
    assert_eq!(maddy["provides"], serde_json::json!(["imapd", "smtpd"]));
    assert_eq!(maddy["coincidental"], serde_json::json!(["smtpd"]));
    assert_eq!(maddy["restarts"], 0);
    assert!(maddy["blocked_by"].is_null());
    assert!(maddy["status"].is_string());
    let since = maddy["since"].as_str().unwrap();
    assert!(
        since.len() >= 20 && since.ends_with('Z') && &since[10..11] == "T",
        "RFC 3339 UTC: {since}"
    );
    assert!(units[0]["pid"].is_null(), "a virtual unit has no PID");

    let one = init
        .ctl(&["status", "maddy", "--json"])
        .expect(0)
        .stdout
        .clone();
    let one: serde_json::Value = serde_json::from_str(&one).unwrap();
    has_keys(&one, &UNIT_KEYS);
    assert_eq!(one["unit"], "maddy");
    // By target: the provider.
    let t = init
        .ctl(&["status", "smtpd", "--json"])
        .expect(0)
        .stdout
        .clone();
    let t: serde_json::Value = serde_json::from_str(&t).unwrap();
    assert_eq!(t["unit"], "maddy");

    let list = init.ctl(&["list", "--json"]).expect(0).stdout.clone();
    let list: serde_json::Value = serde_json::from_str(&list).unwrap();
    let lu = list["units"].as_array().unwrap();
    assert_eq!(lu.len(), 2);
    for u in lu {
        has_keys(u, &["unit", "type", "state", "pid", "provides"]);
    }

    let text = init.ctl(&["list"]).expect(0).stdout.clone();
    assert!(text.lines().next().unwrap().starts_with("UNIT"), "{text}");
    assert!(text.contains("maddy"), "{text}");
    let text = init.ctl(&["status"]).expect(0).stdout.clone();
    assert!(text.contains("Target:   default"), "{text}");
}

/// Unknown names exit 4 with a message naming them; without a running
/// init, exit 2 with a message naming the socket.
#[test]
fn unknown_names_and_no_init() {
    let dir = TestDir::new();
    virtual_unit(&dir, "default", "");
    let init = dir.start("default");
    init.wait_state("default", UnitState::Running);
    for args in [
        &["status", "nosuch"][..],
        &["status", "nosuch", "--json"],
        &["logs", "nosuch"],
        &["restart", "nosuch"],
        &["set-target", "nosuch"],
        &["analyze", "critical-chain", "nosuch"],
    ] {
        let out = init.ctl(args);
        assert_eq!(out.code, 4, "{args:?}: {out:?}");
        assert!(out.stderr.contains("nosuch"), "{args:?}: {out:?}");
    }

    // Several names, as `systemctl status a b`: a block each, an unknown
    // one said on stderr and exit 4; as `systemctl`, the first code that
    // is not 0 (here: the unknown one's).
    sleeper(&dir, "b", "");
    init.ctl(&["reload"]).expect(0);
    init.wait_state("default", UnitState::Running);
    let out = init.ctl(&["status", "default", "b"]);
    out.expect(0);
    let firsts: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.is_empty())
        .collect();
    assert_eq!(firsts.len(), 2, "{out:?}");
    assert!(
        firsts[0].starts_with("default") && firsts[1].starts_with("b"),
        "{out:?}"
    );
    let out = init.ctl(&["status", "default", "nosuch", "b"]);
    assert_eq!(out.code, 4, "{out:?}");
    assert!(out.stderr.contains("nosuch"), "{out:?}");
    assert!(
        out.stdout.starts_with("default") && out.stdout.contains("\nb"),
        "{out:?}"
    );
    let out = init.ctl(&["status", "default", "b", "--json"]);
    out.expect(0);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let names: Vec<&str> = v
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|u| u["unit"].as_str())
        .collect();
    assert_eq!(names, ["default", "b"]);
    let out = dir.systemctl(&["status", "nosuch", "default"]);
    assert_eq!(out.code, 4, "{out:?}");
    assert!(
        out.stderr
            .contains("Unit nosuch.service could not be found."),
        "{out:?}"
    );
    assert!(out.stdout.starts_with("default"), "{out:?}");
    drop(init);

    let other = TestDir::new();
    let out = other.ctl(&["status"]);
    out.expect(2);
    assert!(
        out.stderr.contains(&other.control().display().to_string()),
        "{out:?}"
    );
}

/// Peer credentials: `nobody` may read (status) but every mutating command
/// is refused with exit 3, and nothing changes.
#[test]
fn non_root_mutations_are_refused() {
    let dir = TestDir::new();
    sleeper(&dir, "svc", "");
    virtual_unit(&dir, "default", "depends-on: svc\n");
    virtual_unit(&dir, "other", "");
    let init = dir.start("default");
    let pid = init.wait_state("svc", UnitState::Running).pid;
    let out = dir.ctl_as_nobody(&["status"]);
    out.expect(0);
    assert!(out.stdout.contains("svc"), "{out:?}");
    for args in [
        &["set-target", "other"][..],
        &["reload"],
        &["restart", "svc"],
        &["poweroff"],
    ] {
        let out = dir.ctl_as_nobody(args);
        assert_eq!(out.code, 3, "{args:?}: {out:?}");
    }
    let s = init.status();
    assert_eq!(s.target, "default");
    assert!(!s.shutting_down);
    assert_eq!(init.unit("svc").pid, pid);
}

/// `analyze blame`, `critical-chain`, `plot` and `dot` for a real run of a
/// three-unit chain. `db` is ready only when the test says so (a line it
/// reads from a FIFO), and the test says so once the init's own clock has
/// had `db` starting for longer than `net` took: `db` is slower than `net`
/// whatever the machine's speed.
#[test]
fn analyze_views() {
    let dir = TestDir::new();
    let fifo = dir.join("db.go");
    let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: mkfifo(3) on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    sleeper(&dir, "net", "ready-wait: 100ms\n");
    dir.unit(
        "db",
        &format!(
            "unit: db\ndepends-on: net\nready-grep: ^ready$\n\
             exec-start: [sh, -c, 'read go < {}; echo ready; exec sleep 100']\n",
            fifo.display()
        ),
    );
    sleeper(&dir, "web", "depends-ms: db\n");
    virtual_unit(&dir, "default", "depends-on: web\n");
    let init = dir.start("default");
    init.wait_state("db", UnitState::Starting);
    wait_for(
        WAIT,
        "db to have been starting longer than net took",
        || {
            let Reply::Analyze(a) = init.client().call(Request::Analyze) else {
                return None;
            };
            let span = |n: &str| {
                let u = a.units.iter().find(|u| u.unit == n)?;
                Some((u.start_ms?, u.active_ms))
            };
            let (net_start, net_active) = span("net")?;
            let (db_start, _) = span("db")?;
            let net_took = net_active? - net_start;
            (a.now_ms > db_start + net_took + 20).then_some(())
        },
    );
    std::fs::write(&fifo, "go\n").unwrap();
    init.wait_state("default", UnitState::Running);

    let blame = init.ctl(&["analyze", "blame"]).expect(0).stdout.clone();
    let order: Vec<&str> = blame
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    // `db` is slower than `net` by construction. `web` is ready at its
    // exec, but on a loaded machine that exec alone has taken 200 ms, so
    // where it falls is the machine's: the lines only keep their times'
    // order.
    let at = |n: &str| order.iter().position(|u| *u == n);
    assert!(
        at("db").is_some() && at("db") < at("net"),
        "db before net: {blame}"
    );
    // `235ms`, or `1.234s` from a second on.
    let ms_of = |t: &str| match t.strip_suffix("ms") {
        Some(ms) => ms.parse::<f64>().ok(),
        None => t.strip_suffix('s')?.parse::<f64>().ok().map(|s| s * 1000.0),
    };
    let ms: Vec<f64> = blame
        .lines()
        .filter_map(|l| ms_of(l.split_whitespace().next()?))
        .collect();
    assert_eq!(ms.len(), order.len(), "every line in ms: {blame}");
    assert!(
        ms.windows(2).all(|w| w[0] >= w[1]),
        "slowest first: {blame}"
    );

    let chain = init
        .ctl(&["analyze", "critical-chain"])
        .expect(0)
        .stdout
        .clone();
    let pos = |n: &str| {
        chain
            .find(&format!("{n} @"))
            .unwrap_or_else(|| panic!("{n} in {chain}"))
    };
    assert!(pos("default") < pos("web") && pos("web") < pos("db") && pos("db") < pos("net"));

    let plot = init.ctl(&["analyze", "plot"]).expect(0).stdout.clone();
    assert!(plot.trim_start().starts_with("<?xml") || plot.trim_start().starts_with("<svg"));
    assert!(plot.trim_end().ends_with("</svg>"), "{plot}");
    for n in ["net", "db", "web"] {
        assert!(plot.contains(n), "{n} in the plot");
    }

    let dot = init.ctl(&["analyze", "dot"]).expect(0).stdout.clone();
    assert!(dot.trim_start().starts_with("digraph"), "{dot}");
    assert!(dot.trim_end().ends_with('}'), "{dot}");
    assert!(dot.contains("\"db\" -> \"net\""), "{dot}");
    assert!(dot.contains("\"web\" -> \"db\""), "{dot}");
}

/// `init --check`: exit 0 with the required set; exit 1 with every
/// problem as FILE:LINE:COL; a missing target is a warning; nothing starts.
/// Bad flags exit 2.
#[test]
fn init_check_and_bad_flags() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    sleeper(&dir, "a", "waits-for: ghost\n");
    sleeper(&dir, "unused", "");
    virtual_unit(&dir, "default", "depends-on: a\n");
    let units = dir.units().display().to_string();
    let out = dir.run_init(&["--check", "--units", &units, "--target", "default"]);
    out.expect(0);
    assert!(out.stdout.contains("a default"), "{out:?}");
    assert!(!out.stdout.contains("unused"), "{out:?}");
    assert!(out.stdout.contains("warning"), "{out:?}");
    assert!(out.stdout.contains("ghost"), "{out:?}");
    assert!(
        out.stdout.contains(&format!("{d}/units/a.yaml:3:12")),
        "{out:?}"
    );
    assert!(!dir.control().exists(), "--check starts nothing");

    dir.unit(
        "bad",
        "unit: bad\nexec-start: sleep 1\ndepend-on: a\nrestart: sometimes\n",
    );
    dir.unit(
        "worse",
        "unit: worse\ntype: oneshot\nexec-start: [unclosed\n",
    );
    let out = dir.run_init(&["--check", "--units", &units]);
    out.expect(1);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(all.contains(&format!("{d}/units/bad.yaml:3:1:")), "{all}");
    assert!(all.contains("depends-on"), "did you mean: {all}");
    assert!(all.contains(&format!("{d}/units/bad.yaml:4:10:")), "{all}");
    assert!(all.contains(&format!("{d}/units/worse.yaml:")), "{all}");

    for args in [&["--bogus"][..], &["--units"], &["--check", "--target"]] {
        let out = dir.run_init(args);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert!(out.stderr.contains("usage"), "{args:?}: {out:?}");
    }
    // A bad config file: exit 2, every problem as FILE:LINE:COL.
    let cfg = dir.file("init.yaml", "max-concurrent-starts: 0\nbogus: 1\n");
    let cfg = cfg.display().to_string();
    let control = dir.control().display().to_string();
    let out = dir.run_init(&["--config", &cfg, "--units", &units, "--control", &control]);
    out.expect(2);
    assert!(out.stderr.contains(&format!("{cfg}:1:24:")), "{out:?}");
    assert!(out.stderr.contains(&format!("{cfg}:2:1:")), "{out:?}");
    assert!(!dir.control().exists(), "nothing started");
}

/// A bad unit file at boot is left out (reported in `status`) and the rest
/// boots; what hard-depends on it waits, blocked by its target, and a
/// target that needs it is reported failed to `set-target --wait`.
#[test]
fn bad_unit_at_boot_is_left_out() {
    let dir = TestDir::new();
    sleeper(&dir, "good", "");
    dir.unit(
        "bad",
        "unit: bad\nexec-start: sleep 100\nstop-timeout: forever\n",
    );
    sleeper(&dir, "needs-bad", "depends-on: bad\n");
    virtual_unit(&dir, "default", "depends-on: good\n");
    virtual_unit(&dir, "more", "depends-on: good, needs-bad\n");
    virtual_unit(&dir, "root", "waits-for: good, needs-bad\n");
    let init = dir.start("default");
    init.wait_all(&["good", "default"], UnitState::Running);
    let s = init.status();
    assert!(s.units.iter().all(|u| u.unit != "bad"));
    assert!(
        s.load_errors.iter().any(|e| e.contains("bad.yaml:3:15")),
        "{:?}",
        s.load_errors
    );
    let out = init.ctl(&["status"]).expect(0).stdout.clone();
    assert!(out.contains("bad.yaml:3:15"), "{out}");

    let out = init.ctl(&["set-target", "more", "--wait"]);
    out.expect(1);
    let n = init.unit("needs-bad");
    assert_eq!(n.state, UnitState::Waiting);
    assert_eq!(n.blocked_by.as_deref(), Some("bad"));
    assert_eq!(init.unit("good").state, UnitState::Running);

    // A target that only waits for the blocked unit still comes up,
    // degraded: the bad unit does not hold up the rest of the system.
    let out = init.ctl(&["set-target", "root", "--wait"]);
    out.expect(0);
    let root = init.unit("root");
    assert_eq!(root.state, UnitState::Running);
    assert!(root.degraded, "{root:?}");

    // A reload tolerates the error the set already had (bad.yaml as it
    // was: still left out, said as a warning) and takes the new unit.
    sleeper(&dir, "late", "");
    let out = init.ctl(&["reload"]);
    out.expect(0);
    assert!(
        out.stderr.contains("bad.yaml:3:15") && out.stderr.contains("(as before: left out)"),
        "{out:?}"
    );
    assert!(init.status().units.iter().any(|u| u.unit == "late"));
    // A new error refuses it whole, naming that error alone.
    dir.unit(
        "worse",
        "unit: worse
exec-start: sleep 100
frob: 1
",
    );
    sleeper(&dir, "later", "");
    let out = init.ctl(&["reload"]);
    out.expect(1);
    assert!(
        out.stderr.contains("1 error(s)")
            && out.stderr.contains("worse.yaml:3:1")
            && !out.stderr.contains("bad.yaml"),
        "{out:?}"
    );
    assert!(init.status().units.iter().all(|u| u.unit != "later"));
    // bad.yaml mended (and worse.yaml gone): it joins, the errors are gone.
    std::fs::remove_file(dir.units().join("worse.yaml")).expect("rm");
    dir.unit(
        "bad",
        "unit: bad
exec-start: sleep 100
",
    );
    init.ctl(&["reload"]).expect(0);
    init.wait_state("needs-bad", UnitState::Running);
    assert!(init.status().load_errors.is_empty());
}

/// Bad input on the control socket gets a clear error reply, the
/// connection (except after an over-long line) and the init keep working.
#[test]
fn bad_control_input() {
    let dir = TestDir::new();
    sleeper(&dir, "svc", "");
    virtual_unit(&dir, "default", "depends-on: svc\n");
    let init = dir.start("default");
    init.wait_state("svc", UnitState::Running);
    let mut c = init.client();
    let deadline = || Instant::now() + WAIT;
    let expect_error = |c: &mut Client, line: &[u8], code: ErrorCode, text: &str| {
        c.send_raw(line);
        match c.recv(deadline()) {
            Ok(Reply::Error {
                code: got, message, ..
            }) => {
                assert_eq!(got, code, "{message}");
                assert!(message.contains(text), "{message}");
            }
            other => panic!("{}: {other:?}", String::from_utf8_lossy(line)),
        }
    };
    expect_error(&mut c, b"garbage\n", ErrorCode::BadRequest, "not JSON");
    expect_error(
        &mut c,
        b"{\"op\":\"status\"}\n",
        ErrorCode::BadRequest,
        "`v`",
    );
    expect_error(
        &mut c,
        b"{\"v\":99,\"op\":\"status\"}\n",
        ErrorCode::UnsupportedVersion,
        "99",
    );
    expect_error(
        &mut c,
        b"{\"v\":1,\"op\":\"explode\"}\n",
        ErrorCode::BadRequest,
        "explode",
    );
    expect_error(
        &mut c,
        b"{\"v\":1,\"op\":\"restart\"}\n",
        ErrorCode::BadRequest,
        "unit",
    );
    // Blank lines are ignored; the same connection still answers.
    c.send_raw(b"\n  \n");
    assert_eq!(c.status().target, "default");

    // A client that shuts its side down after its request still gets the
    // reply (the connection used to be closed first).
    let mut half = std::os::unix::net::UnixStream::connect(&init.control).unwrap();
    half.write_all(b"{\"v\":1,\"op\":\"list\"}\n").unwrap();
    half.shutdown(std::net::Shutdown::Write).unwrap();
    half.set_read_timeout(Some(WAIT)).unwrap();
    let mut reply = String::new();
    half.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("{\"reply\":\"list\""), "{reply}");

    // A line over 4 MiB: an error, then the connection is closed.
    let mut big = Client::connect(&init.control).unwrap();
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..5 {
        if big.try_send_raw(&chunk).is_err() {
            break;
        }
    }
    match big.recv(deadline()) {
        Ok(Reply::Error { code, message, .. }) => {
            assert_eq!(code, ErrorCode::BadRequest);
            assert!(message.contains("longer than"), "{message}");
        }
        other => panic!("over-long line: {other:?}"),
    }
    assert_eq!(big.recv(deadline()).err(), Some(RecvError::Eof));
    // A client that connects and says nothing does not block others.
    let _idle = Client::connect(&init.control).unwrap();
    assert_eq!(init.status().target, "default");
    assert_eq!(init.unit("svc").state, UnitState::Running);
}

/// reload: a set with an error is refused whole (exit 1, every problem as
/// FILE:LINE:COL, nothing changed); a good one keeps unchanged units (same
/// PID), restarts changed ones, stops removed ones and starts new ones.
#[test]
fn reload_refused_whole_then_applied() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    sleeper(&dir, "same", "");
    sleeper(&dir, "changed", "");
    sleeper(&dir, "removed", "");
    virtual_unit(&dir, "default", "waits-for: same, changed, removed\n");
    let init = dir.start("default");
    let s = init.wait_all(&["same", "changed", "removed"], UnitState::Running);
    let pid = |s: &flotilla_units::protocol::SystemStatus, n: &str| {
        s.units.iter().find(|u| u.unit == n).and_then(|u| u.pid)
    };
    let (same0, changed0, removed0) = (pid(&s, "same"), pid(&s, "changed"), pid(&s, "removed"));

    // The new set, with two broken files.
    dir.unit(
        "changed",
        "unit: changed\nexec-start: sleep 200\nrestart: on-failure\n",
    );
    dir.remove_unit("removed");
    sleeper(&dir, "added", "");
    virtual_unit(&dir, "default", "waits-for: same, changed, added\n");
    dir.unit(
        "broken",
        "unit: broken\nexec-start: sleep 1\nkill-signal: SIGNOPE\n",
    );
    dir.unit("cyc1", "unit: cyc1\ntype: virtual\ndepends-on: cyc2\n");
    dir.unit("cyc2", "unit: cyc2\ntype: virtual\ndepends-on: cyc1\n");
    let out = init.ctl(&["reload"]);
    out.expect(1);
    assert!(out.stderr.contains("reload refused"), "{out:?}");
    assert!(
        out.stderr.contains(&format!("{d}/units/broken.yaml:3:14:")),
        "{out:?}"
    );
    let s = init.status();
    assert_eq!(pid(&s, "changed"), changed0, "nothing changed");
    assert_eq!(pid(&s, "removed"), removed0);
    assert!(s.units.iter().all(|u| u.unit != "added"));
    // SIGHUP with the same broken set: refused too, the init carries on.
    init.signal(libc::SIGHUP);
    wait_for(WAIT, "the refusal on the console", || {
        init.output().contains("reload refused").then_some(())
    });
    // Every problem at once: the graph's cycle (with its whole path) too,
    // not only the file's error.
    let out = init.ctl(&["reload"]);
    out.expect(1);
    assert!(out.stderr.contains("broken.yaml:3:14:"), "{out:?}");
    assert!(out.stderr.contains("cycle"), "{out:?}");
    assert!(
        out.stderr.contains("cyc1") && out.stderr.contains("cyc2"),
        "{out:?}"
    );

    dir.remove_unit("broken");
    dir.remove_unit("cyc1");
    dir.remove_unit("cyc2");
    let out = init.ctl(&["reload"]);
    out.expect(0);
    assert!(out.stdout.contains("added:     added"), "{out:?}");
    let changed = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("changed:"))
        .unwrap_or_else(|| panic!("{out:?}"));
    let mut changed: Vec<&str> = changed
        .trim()
        .trim_end_matches("(restarted if running)")
        .split(',')
        .map(str::trim)
        .collect();
    changed.sort_unstable();
    assert_eq!(changed, ["changed", "default"], "{out:?}");
    assert!(out.stdout.contains("removed:   removed"), "{out:?}");
    let s = init.wait("reload applied", |s| {
        let st = |n: &str| s.units.iter().find(|u| u.unit == n).map(|u| u.state);
        st("added") == Some(UnitState::Running)
            && st("changed") == Some(UnitState::Running)
            && pid(s, "changed") != changed0
            && s.units.iter().all(|u| u.unit != "removed")
    });
    assert_eq!(pid(&s, "same"), same0, "unchanged keeps its process");
    assert!(procs::alive(same0.unwrap()));
    // Restarted with the new definition (the status may come before the
    // new process has finished its exec).
    let new = pid(&s, "changed").unwrap();
    wait_for(WAIT, "the new changed process to run sleep 200", || {
        (procs::cmdline(new) == "sleep 200").then_some(())
    });
    wait_for(WAIT, "the removed and old processes to go", || {
        (!procs::alive(removed0.unwrap()) && !procs::alive(changed0.unwrap())).then_some(())
    });
    // Nothing to do: no changes.
    let out = init.ctl(&["reload"]);
    out.expect(0);
    assert!(out.stdout.contains("no changes"), "{out:?}");
}

/// SIGHUP reloads the unit directory like `initctl reload`.
#[test]
fn sighup_reloads() {
    let dir = TestDir::new();
    virtual_unit(&dir, "default", "waits-for: later\n");
    let init = dir.start("default");
    let d = init.wait_state("default", UnitState::Running);
    assert!(d.degraded, "waits for a missing target");
    sleeper(&dir, "later", "");
    init.signal(libc::SIGHUP);
    init.wait_state("later", UnitState::Running);
    init.wait_unit("default", "no longer degraded", |u| !u.degraded);
}

/// logs: `-n N` gives the last N lines, the log file in --log-dir has
/// them too (written by the log writer), and `-f` follows new lines as
/// they come.
#[test]
fn logs_tail_file_and_follow() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    dir.log_writer("");
    dir.unit(
        "talker",
        &format!(
            "unit: talker\nexec-start: [sh, -c, 'for i in 1 2 3 4 5; do echo line $i; done; echo oops >&2; \
             while :; do if [ -e {d}/go ]; then rm {d}/go; echo more; fi; sleep 0.01; done']\n"
        ),
    );
    virtual_unit(
        &dir,
        "default",
        "depends-on: talker\nwaits-for: log-writer\n",
    );
    let init = dir.start("default");
    init.wait_state("talker", UnitState::Running);
    wait_for(WAIT, "oops in the log", || {
        init.ctl(&["logs", "talker"])
            .stdout
            .contains("oops")
            .then_some(())
    });
    let out = init
        .ctl(&["logs", "talker", "-n", "2"])
        .expect(0)
        .stdout
        .clone();
    assert_eq!(out.lines().collect::<Vec<_>>(), ["line 5", "oops"], "{out}");
    let all = init.ctl(&["logs", "talker"]).expect(0).stdout.clone();
    for i in 1..=5 {
        assert!(all.contains(&format!("line {i}\n")), "{all}");
    }
    let file = wait_for(WAIT, "oops in the log file", || {
        std::fs::read_to_string(dir.logs().join("talker.log"))
            .ok()
            .filter(|f| f.contains("oops"))
    });
    assert!(file.contains(" stdout line 1\n"), "{file}");
    assert!(file.contains(" stderr oops\n"), "{file}");

    let follow = init.follow(&["logs", "talker", "-f", "-n", "1"]);
    let first = follow.next("the last line");
    assert_eq!(first, "oops");
    dir.file("go", "");
    let next = follow.next("a followed line");
    assert_eq!(next, "more");
    dir.file("go", "");
    assert_eq!(follow.next("another"), "more");
}

/// A unit flooding its output (`yes`) stalls neither the control socket
/// nor other units, even with a `logs -f` client that never reads: every
/// status request is answered while the flood goes on, another unit
/// starts, the flood's last lines are in its log and the log writer gets
/// its lines to the files. (What "never stalls" means here is that
/// answers come while the flood has not ended, not how fast: the flood
/// never ends.)
#[test]
fn flooding_unit_does_not_stall_the_init() {
    let dir = TestDir::new();
    dir.log_writer("");
    dir.unit("flood", "unit: flood\nexec-start: yes flooding\n");
    sleeper(&dir, "quiet", "ready-wait: 100ms\n");
    virtual_unit(
        &dir,
        "default",
        "depends-on: flood\nwaits-for: log-writer\n",
    );
    virtual_unit(&dir, "both", "depends-on: default, quiet\n");
    let init = dir.start("default");
    init.wait_all(&["flood", "flotilla-logd"], UnitState::Running);
    // A follower that never reads what it asked for.
    let mut stuck = init.client();
    stuck.send(Request::Logs {
        unit: "flood".into(),
        lines: Some(0),
        follow: true,
        source: false,
    });
    wait_for(WAIT, "the flood in the log files", || {
        let n = dir
            .log_file_lines("flood")
            .iter()
            .filter(|(_, t)| t == "flooding")
            .count();
        (n > 1000).then_some(())
    });
    let flood = init.pid_of("flood");
    for _ in 0..10 {
        let s = init.status();
        assert_eq!(s.target, "default");
        assert!(procs::alive(flood), "the flood goes on");
    }
    init.ctl(&["set-target", "both", "--wait"]).expect(0);
    let out = init
        .ctl(&["logs", "flood", "-n", "6"])
        .expect(0)
        .stdout
        .clone();
    // The flood's last lines; once the test has outlived the rate limit's
    // 30 s window (a loaded machine), one of them may be the count of the
    // lines it dropped, which comes before a kept line, never last. The
    // init's own notes on the unit (`[init] …`, a change of its state as
    // the target changes) may fall among them and are left out.
    let flood: Vec<&str> = out.lines().filter(|l| !l.starts_with("[init] ")).collect();
    let lines = &flood[flood.len().saturating_sub(3)..];
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines
            .iter()
            .all(|l| *l == "flooding" || l.starts_with("-- rate limit: ")),
        "{out}"
    );
    assert_eq!(lines[2], "flooding", "{out}");
    assert!(procs::alive(init.pid_of("flood")));
    drop(stuck);
}

fn transient(name: &str, argv: &[&str]) -> UnitSpec {
    let mut u = UnitSpec::new(name, UnitType::ForegroundSupervised);
    u.exec_start = Some(Command::new(argv.iter().copied()));
    u
}

fn cluster_target(units: &[&str]) -> UnitSpec {
    let mut c = UnitSpec::new("cluster", UnitType::Virtual);
    c.waits_for = units.iter().map(|s| s.to_string()).collect();
    c
}

fn apply(init: &Init, set: &str, units: Vec<UnitSpec>) -> Reply {
    init.client().call(Request::TransientApply {
        set: set.to_string(),
        units,
    })
}

/// Transient units (docs/contract.md §7): a set `cluster` with fleet-like units and a
/// virtual `cluster` target that waits for them; the machine's target
/// waits for `cluster`. Add, replace (unchanged keep their PID, changed
/// restart), refuse a bad set whole, remove the set.
#[test]
fn transient_sets() {
    let dir = TestDir::new();
    virtual_unit(&dir, "default", "waits-for: cluster\n");
    let init = dir.start("default");
    let d = init.wait_state("default", UnitState::Running);
    assert!(d.degraded, "no cluster yet");

    let r = apply(
        &init,
        "cluster",
        vec![
            transient("web.service", &["sleep", "100"]),
            transient("worker.service", &["sleep", "101"]),
            cluster_target(&["web.service", "worker.service"]),
        ],
    );
    let Reply::Applied(a) = r else {
        panic!("{r:?}")
    };
    assert_eq!(a.added.len(), 3, "{a:?}");
    let s = init.wait_all(
        &["web.service", "worker.service", "cluster"],
        UnitState::Running,
    );
    let pid = |s: &flotilla_units::protocol::SystemStatus, n: &str| {
        s.units.iter().find(|u| u.unit == n).and_then(|u| u.pid)
    };
    let (web0, worker0) = (pid(&s, "web.service"), pid(&s, "worker.service"));
    let web = s.units.iter().find(|u| u.unit == "web.service").unwrap();
    assert_eq!(web.source, "transient:cluster");
    init.wait_unit("default", "not degraded", |u| !u.degraded);

    // Replace: web unchanged, worker changed, db new.
    let r = apply(
        &init,
        "cluster",
        vec![
            transient("web.service", &["sleep", "100"]),
            transient("worker.service", &["sleep", "102"]),
            transient("db.service", &["sleep", "103"]),
            cluster_target(&["web.service", "worker.service", "db.service"]),
        ],
    );
    let Reply::Applied(a) = r else {
        panic!("{r:?}")
    };
    assert_eq!(a.added, ["db.service"], "{a:?}");
    assert!(a.changed.contains(&"worker.service".to_string()), "{a:?}");
    let s = init.wait("worker restarted, db running", |s| {
        let st = |n: &str| s.units.iter().find(|u| u.unit == n).map(|u| u.state);
        st("db.service") == Some(UnitState::Running)
            && st("worker.service") == Some(UnitState::Running)
            && pid(s, "worker.service") != worker0
    });
    assert_eq!(pid(&s, "web.service"), web0, "unchanged keeps its PID");

    // A bad set is refused whole: a unit name the directory already uses.
    let mut clash = transient("default", &["sleep", "1"]);
    clash.provides = vec!["default".into()].into();
    let r = apply(&init, "other", vec![clash]);
    match r {
        Reply::Error { code, details, .. } => {
            assert_eq!(code, ErrorCode::Invalid);
            assert!(!details.is_empty());
        }
        other => panic!("{other:?}"),
    }
    let r = apply(&init, "cluster", vec![transient("bad name!", &["true"])]);
    assert!(
        matches!(
            r,
            Reply::Error {
                code: ErrorCode::Invalid,
                ..
            }
        ),
        "{r:?}"
    );
    // An invalid field is an error naming the unit and the field.
    let mut grep = transient("grep.service", &["true"]);
    grep.extras.ready_grep = Some("a(b".into());
    match apply(&init, "cluster", vec![grep]) {
        Reply::Error { code, details, .. } => {
            assert_eq!(code, ErrorCode::Invalid);
            assert!(
                details
                    .iter()
                    .any(|d| d.starts_with("grep.service: `ready-grep`: `a(b`:")),
                "{details:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(pid(&init.status(), "web.service"), web0, "nothing changed");

    // Remove the set: everything in it stops.
    let r = apply(&init, "cluster", Vec::new());
    let Reply::Applied(a) = r else {
        panic!("{r:?}")
    };
    assert_eq!(a.removed.len(), 4, "{a:?}");
    init.wait("the set gone", |s| {
        s.units.iter().all(|u| !u.unit.ends_with(".service"))
    });
    wait_for(WAIT, "the processes to go", || {
        (!procs::alive(web0.unwrap())).then_some(())
    });
    init.wait_unit("default", "degraded again", |u| u.degraded);
}

/// Shutdown by SIGTERM: every unit stops, dependents first (their exec-stop
/// commands record the order), the init exits 0, no unit process is left.
#[test]
fn sigterm_stops_everything_in_reverse_order() {
    let dir = TestDir::new();
    recorded(&dir, "net", "");
    recorded(&dir, "db", "depends-on: net\n");
    recorded(&dir, "web", "depends-ms: db\nwaits-for: net\n");
    dir.unit(
        "bg",
        "unit: bg\ntype: background-scripted\nexec-start: [sh, -c, 'sleep 100 & exit 0']\n",
    );
    virtual_unit(&dir, "default", "depends-on: web, bg\n");
    let mut init = dir.start("default");
    let s = init.wait_all(&["net", "db", "web", "bg", "default"], UnitState::Running);
    let pids: Vec<i32> = s.units.iter().filter_map(|u| u.pid).collect();
    assert_eq!(pids.len(), 3);
    assert!(!procs::marked(&dir.mark).is_empty());
    init.signal(libc::SIGTERM);
    assert_eq!(init.wait_exit(), 0, "{}", init.output());
    assert_eq!(dir.lines("order"), ["web", "db", "net"]);
    assert!(pids.iter().all(|&p| !procs::alive(p)));
    wait_for(WAIT, "no unit process left", || {
        procs::marked(&dir.mark).is_empty().then_some(())
    });
    assert!(!dir.control().exists(), "the socket is removed");
}

/// `initctl poweroff` (not PID 1): exit 0, every unit stops in reverse
/// order, the init exits 0; mutating requests during the shutdown are
/// refused.
#[test]
fn poweroff_stops_everything_and_exits() {
    let dir = TestDir::new();
    recorded(&dir, "a", "stop-timeout: 2s\n");
    let d = dir.path().display().to_string();
    dir.unit(
        "b",
        &format!(
            "unit: b\nexec-start: sleep 100\ndepends-on: a\n\
             exec-stop: [sh, -c, 'while [ ! -e {d}/release ]; do sleep 0.01; done; echo b >> {d}/order; kill $MAINPID']\n"
        ),
    );
    virtual_unit(&dir, "default", "depends-on: b\n");
    virtual_unit(&dir, "other", "");
    let mut init = dir.start("default");
    init.wait_all(&["a", "b"], UnitState::Running);
    let out = init.ctl(&["poweroff"]);
    out.expect(0);
    let s = init.wait("shutting down", |s| s.shutting_down);
    assert_eq!(
        s.units.iter().find(|u| u.unit == "b").unwrap().state,
        UnitState::Stopping
    );
    let refused = init.ctl(&["set-target", "other"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(refused.stderr.contains("shutting down"), "{refused:?}");
    dir.file("release", "");
    assert_eq!(init.wait_exit(), 0, "{}", init.output());
    assert_eq!(dir.lines("order"), ["b", "a"]);
    wait_for(WAIT, "no unit process left", || {
        procs::marked(&dir.mark).is_empty().then_some(())
    });
}

/// A supervisor run by an ordinary user (`nobody`): its units run as that
/// user, and that user — the init's own — may change the system, as root
/// may.
#[test]
fn init_as_an_ordinary_user_accepts_its_own_user() {
    let dir = TestDir::new();
    sleeper(&dir, "svc", "");
    virtual_unit(&dir, "default", "depends-on: svc\n");
    virtual_unit(&dir, "other", "");
    let init = dir.init().target("default").as_nobody().start();
    let pid = init.wait_state("svc", UnitState::Running).pid.unwrap();
    assert_eq!(procs::uid(init.pid), Some(65534));
    assert_eq!(procs::uid(pid), Some(65534));
    dir.ctl_as_nobody(&["set-target", "other", "--wait"])
        .expect(0);
    init.wait_state("svc", UnitState::Disabled);
    init.ctl(&["set-target", "default", "--wait"]).expect(0);
}

/// `initctl reload UNIT` runs exec-reload only for a running unit that has
/// one: exit 1 otherwise, 4 for an unknown unit; the unit keeps its PID.
#[test]
fn reload_unit_errors() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    sleeper(&dir, "plain", "");
    dir.unit(
        "hup",
        &format!(
            "unit: hup\nexec-start: [sh, -c, \"trap 'echo hup >> {d}/hups' HUP; echo ready; \
             while :; do sleep 0.05; done\"]\nready-grep: ready\n\
             exec-reload: /bin/kill -HUP $MAINPID\n"
        ),
    );
    virtual_unit(&dir, "default", "depends-on: plain, hup\n");
    let init = dir.start("default");
    // Both awaited: `plain` is asked about below, and its start may still
    // be under way when `hup` is up (a loaded machine), when the answer
    // would be that it is not running rather than that it has no
    // exec-reload.
    let s = init.wait_all(&["hup", "plain"], UnitState::Running);
    let pid = s.units.iter().find(|u| u.unit == "hup").and_then(|u| u.pid);
    init.ctl(&["reload", "hup"]).expect(0);
    wait_for(WAIT, "the HUP trap", || {
        (dir.lines("hups") == ["hup"]).then_some(())
    });
    let u = init.wait_unit("hup", "reloaded", |u| u.status == "reloaded");
    assert_eq!(u.state, UnitState::Running);
    assert_eq!(u.pid, pid);
    let out = init.ctl(&["reload", "plain"]);
    out.expect(1);
    assert!(out.stderr.contains("exec-reload"), "{out:?}");
    assert_eq!(init.unit("plain").state, UnitState::Running);
    init.ctl(&["reload", "nosuch"]).expect(4);
}

/// SIGINT (not PID 1) shuts down like SIGTERM: exit 0, nothing left.
#[test]
fn sigint_shuts_down() {
    let dir = TestDir::new();
    sleeper(&dir, "svc", "");
    virtual_unit(&dir, "default", "depends-on: svc\n");
    let mut init = dir.start("default");
    let pid = init.wait_state("svc", UnitState::Running).pid.unwrap();
    init.signal(libc::SIGINT);
    assert_eq!(init.wait_exit(), 0, "{}", init.output());
    assert!(!procs::alive(pid));
}

/// `initctl kill`: the signal reaches the unit's processes (a trap counts
/// it) and the unit stays as it was; `--kill-whom=main` and a signal
/// number are taken; an unknown unit is 4, a unit with no process 1.
#[test]
fn kill_signals_a_units_processes() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    dir.unit(
        "trap",
        &format!(
            "unit: trap\nexec-start: [sh, -c, 'trap \"echo hup >> {d}/hups\" HUP; echo ready; \
             while :; do sleep 1 & wait; done']\nready-grep: ready\n"
        ),
    );
    virtual_unit(&dir, "idle", "");
    virtual_unit(&dir, "default", "depends-on: trap, idle\n");
    let init = dir.start("default");
    // Running once it said `ready`, after its trap is set: a HUP sent
    // earlier (a loaded machine) would end the shell instead.
    let pid = init.wait_state("trap", UnitState::Running).pid;
    let hups = || {
        std::fs::read_to_string(dir.join("hups"))
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    init.ctl(&["kill", "-s", "HUP", "trap"]).expect(0);
    wait_for(WAIT, "the first HUP", || (hups() == 1).then_some(()));
    init.ctl(&["kill", "--kill-whom=main", "--signal", "1", "trap"])
        .expect(0);
    wait_for(WAIT, "the second HUP", || (hups() == 2).then_some(()));
    let u = init.unit("trap");
    assert_eq!((u.state, u.pid), (UnitState::Running, pid));

    let out = init.ctl(&["kill", "nosuch"]);
    out.expect(4);
    let out = init.ctl(&["kill", "-s", "HUP", "idle"]);
    out.expect(1);
    assert!(out.stderr.contains("has no process"), "{out:?}");
}
