//! System tests of the local init, part 2: the dependency kinds, the states
//! they lead to (`blocked_by`, `degraded`, `coincidental`), restarts with
//! back-off and the restart policies, `max-concurrent-starts`, target
//! switching (`set-target --wait` exit codes, dependents stop first),
//! `initctl restart`, and ordering (`after`, `before`) and `conflicts`,
//! through the real `init` and `initctl` binaries.
//!
//! Orders of events are recorded by the units themselves (exec-stop scripts
//! appending to a shared file) or observed on the init's `subscribe`
//! stream; nothing sleeps for a fixed time.

use flotilla_tests::init::TestDir;
use flotilla_tests::{procs, wait_for, WAIT};
use flotilla_units::protocol::parse_rfc3339;
use flotilla_units::state::UnitState;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// A long-running unit: `sleep 100`, with extra YAML lines.
fn sleeper(dir: &TestDir, name: &str, extra: &str) {
    dir.unit(
        name,
        &format!("unit: {name}\nexec-start: sleep 100\n{extra}"),
    );
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

fn virtual_unit(dir: &TestDir, name: &str, extra: &str) {
    dir.unit(name, &format!("unit: {name}\ntype: virtual\n{extra}"));
}

/// depends-on: when the dependency dies, the dependent is stopped; it
/// comes back by itself once the dependency is active again (after its
/// restart back-off).
#[test]
fn depends_on_dependent_stops_and_comes_back() {
    let dir = TestDir::new();
    sleeper(&dir, "db", "restart-delay: 100ms\n");
    sleeper(&dir, "web", "depends-on: db\n");
    virtual_unit(&dir, "default", "waits-for: web\n");
    let init = dir.start("default");
    let s = init.wait_all(&["db", "web", "default"], UnitState::Running);
    let pid = |n: &str| s.units.iter().find(|u| u.unit == n).unwrap().pid.unwrap();
    let (db0, web0) = (pid("db"), pid("web"));

    let mut sub = init.subscribe();
    procs::signal(db0, libc::SIGKILL);
    let seen = sub.until("web running again", |u| {
        u.unit == "web" && u.state == UnitState::Running
    });
    let web: Vec<UnitState> = seen
        .iter()
        .filter(|u| u.unit == "web")
        .map(|u| u.state)
        .collect();
    assert_eq!(
        web.iter().filter(|s| **s == UnitState::Stopping).count(),
        1,
        "{seen:?}"
    );
    assert!(web.contains(&UnitState::Waiting), "{web:?}");
    let db_failed = seen
        .iter()
        .position(|u| u.unit == "db" && u.state == UnitState::Failed)
        .expect("db failed");
    let db_back = seen
        .iter()
        .position(|u| u.unit == "db" && u.state == UnitState::Running)
        .expect("db running again");
    let web_start = seen
        .iter()
        .position(|u| u.unit == "web" && u.state == UnitState::Starting)
        .unwrap_or(seen.len() - 1);
    assert!(db_failed < db_back && db_back < web_start, "{seen:?}");
    assert!(!procs::alive(web0), "the old web process was stopped");
    let s = init.status();
    let web = s.units.iter().find(|u| u.unit == "web").unwrap();
    let db = s.units.iter().find(|u| u.unit == "db").unwrap();
    assert_ne!(web.pid, Some(web0));
    assert_eq!(db.restarts, 1);
    assert_eq!(web.restarts, 0, "a stop for a dependency is not a failure");
}

/// depends-ms: needed to start, not to stay up. The dependent keeps its
/// process when the dependency fails, and it (and what waits for it) is
/// `degraded`.
#[test]
fn depends_ms_does_not_stop_the_dependent() {
    let dir = TestDir::new();
    sleeper(&dir, "net", "restart: no\n");
    sleeper(&dir, "app", "depends-ms: net\n");
    virtual_unit(&dir, "default", "waits-for: app\n");
    let init = dir.start("default");
    let s = init.wait_all(&["net", "app", "default"], UnitState::Running);
    let app0 = s.units.iter().find(|u| u.unit == "app").unwrap().pid;
    let net = s
        .units
        .iter()
        .find(|u| u.unit == "net")
        .unwrap()
        .pid
        .unwrap();
    procs::signal(net, libc::SIGKILL);
    init.wait_state("net", UnitState::Failed);
    let app = init.wait_unit("app", "degraded", |u| u.degraded);
    assert_eq!(app.state, UnitState::Running);
    assert_eq!(app.pid, app0, "same process");
    let root = init.wait_unit("default", "degraded", |u| u.degraded);
    assert_eq!(root.state, UnitState::Running);
    assert!(init.status().degraded);
}

/// waits-for: ordering only. The dependent waits while the dependency is
/// starting, starts once it failed, and is then `degraded`.
#[test]
fn waits_for_orders_and_tolerates_failure() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    dir.unit(
        "setup",
        &format!(
            "unit: setup\ntype: oneshot\n\
             exec-start: [sh, -c, 'while [ ! -e {d}/go ]; do sleep 0.01; done; exit 1']\n"
        ),
    );
    sleeper(&dir, "app", "waits-for: setup\n");
    virtual_unit(&dir, "default", "depends-on: app\n");
    let init = dir.start("default");
    init.wait_state("setup", UnitState::Starting);
    let app = init.wait_state("app", UnitState::Waiting);
    assert_eq!(app.blocked_by, None, "waits-for never blocks");
    assert_eq!(app.pid, None);
    dir.file("go", "");
    init.wait_state("setup", UnitState::Failed);
    let app = init.wait_unit("app", "running, degraded", |u| {
        u.state == UnitState::Running && u.degraded
    });
    assert!(app.pid.is_some());
    let s = init.wait_state("default", UnitState::Running);
    assert!(s.degraded, "transitively degraded: {s:?}");
}

/// A target no unit provides: `depends-on` keeps the dependent waiting
/// with `blocked_by` naming it; `waits-for` counts as settled and makes
/// the dependent degraded. When a reload brings a provider, the waiting
/// unit starts.
#[test]
fn missing_targets_block_or_degrade() {
    let dir = TestDir::new();
    sleeper(&dir, "hard", "depends-on: nowhere\n");
    sleeper(&dir, "soft", "waits-for: nowhere\n");
    virtual_unit(&dir, "default", "waits-for: hard, soft\n");
    let init = dir.start("default");
    let soft = init.wait_state("soft", UnitState::Running);
    assert!(soft.degraded, "{soft:?}");
    let hard = init.wait_state("hard", UnitState::Waiting);
    assert_eq!(hard.blocked_by.as_deref(), Some("nowhere"));
    let out = init.ctl(&["status"]).expect(0).stdout.clone();
    assert!(out.contains("blocked by nowhere"), "{out}");

    sleeper(&dir, "nowhere", "");
    init.ctl(&["reload"]).expect(0);
    let hard = init.wait_state("hard", UnitState::Running);
    assert_eq!(hard.blocked_by, None);
    let soft = init.wait_unit("soft", "not degraded", |u| !u.degraded);
    assert_eq!(soft.state, UnitState::Running);
}

/// blocked_by names the root of the failure: a failed hard dependency two
/// levels down blocks both units above it, and the target is reported
/// failed to `set-target --wait` (exit 1).
#[test]
fn blocked_by_names_the_failed_root() {
    let dir = TestDir::new();
    dir.unit(
        "c",
        "unit: c\ntype: oneshot\nexec-start: [sh, -c, 'exit 1']\n",
    );
    sleeper(&dir, "b", "depends-on: c\n");
    sleeper(&dir, "a", "depends-ms: b\n");
    virtual_unit(&dir, "top", "depends-on: a\n");
    virtual_unit(&dir, "idle", "");
    let init = dir.start("idle");
    let out = init.ctl(&["set-target", "top", "--wait"]);
    out.expect(1);
    assert!(out.stderr.contains("target 'top' failed"), "{out:?}");
    let s = init.status();
    for n in ["b", "a", "top"] {
        let u = s.units.iter().find(|u| u.unit == n).unwrap();
        assert_eq!(u.state, UnitState::Waiting, "{u:?}");
        assert_eq!(u.blocked_by.as_deref(), Some("c"), "{u:?}");
    }
    assert_eq!(s.target_state, UnitState::Waiting);
    assert!(s.degraded);
}

/// coincidental: a unit providing two targets, only one of which is
/// required, reports the other as coincidental.
#[test]
fn coincidental_targets() {
    let dir = TestDir::new();
    sleeper(&dir, "mail", "provides: imapd, smtpd\n");
    virtual_unit(&dir, "default", "depends-on: imapd\n");
    let init = dir.start("default");
    let mail = init.wait_state("mail", UnitState::Running);
    assert_eq!(mail.provides, ["imapd", "smtpd"]);
    assert_eq!(mail.coincidental, ["smtpd"]);
    // A target's status is its provider's.
    let smtpd = init.unit("smtpd");
    assert_eq!(smtpd.unit, "mail");
    let out = init.ctl(&["status"]).expect(0).stdout.clone();
    assert!(out.contains("imapd,smtpd*"), "{out}");
    // Required through both targets: nothing coincidental.
    virtual_unit(&dir, "default", "depends-on: imapd, smtpd\n");
    init.ctl(&["reload"]).expect(0);
    init.wait_unit("mail", "not coincidental", |u| u.coincidental.is_empty());
}

/// Restart back-off: a unit that keeps failing is `failed` between
/// attempts with the time of the next one (`restart_in_ms`, `restart in`
/// in its status), its restart count grows, and the delays double.
#[test]
fn restart_back_off_doubles() {
    let dir = TestDir::new();
    dir.unit(
        "flaky",
        "unit: flaky\nexec-start: [sh, -c, 'exit 1']\nrestart-delay: 100ms\nrestart-max-delay: 400ms\n",
    );
    virtual_unit(&dir, "idle", "");
    virtual_unit(&dir, "default", "waits-for: flaky\n");
    let init = dir.start("idle");
    let mut sub = init.subscribe();
    init.ctl(&["set-target", "default"]).expect(0);
    let mut starts = Vec::new();
    let mut waiting = None;
    let seen = sub.until("four starts", |u| {
        // Ready at spawn: `running` marks each start.
        // The init's own time of each start: a client's receiving time
        // would shrink a gap whenever one update is read late (a loaded
        // machine), and a lower bound on it would fail for that.
        if u.unit == "flaky" && u.state == UnitState::Running {
            starts.push(parse_rfc3339(&u.since).expect("since"));
        }
        if u.unit == "flaky" && u.state == UnitState::Failed && u.restart_in_ms.is_some() {
            waiting.get_or_insert_with(|| u.clone());
        }
        starts.len() == 4
    });
    let w = waiting.expect("a failed state with a restart time");
    assert!(w.status.contains("restart in"), "{w:?}");
    assert!(w.restart_in_ms.unwrap() <= 100, "{w:?}");
    let restarts: Vec<u32> = seen
        .iter()
        .filter(|u| u.unit == "flaky" && u.state == UnitState::Running)
        .map(|u| u.restarts)
        .collect();
    assert_eq!(restarts, [0, 1, 2, 3]);
    let gaps: Vec<Duration> = starts
        .windows(2)
        .map(|w| Duration::from_millis(u64::try_from(w[1] - w[0]).unwrap_or(0)))
        .collect();
    // 100 ms, 200 ms, 400 ms (a little more for the process itself).
    assert!(gaps[0] >= Duration::from_millis(90), "{gaps:?}");
    assert!(gaps[1] >= Duration::from_millis(190), "{gaps:?}");
    assert!(gaps[2] >= Duration::from_millis(390), "{gaps:?}");
    let flaky = init.unit("flaky");
    assert!(flaky.restarts >= 3);
}

/// restart: no keeps a failed unit failed; on-failure restarts a failure
/// but not a clean exit (that is `exited`); always restarts a clean exit
/// too.
#[test]
fn restart_policies() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    let counted = |name: &str, code: i32, policy: &str| {
        dir.unit(
            name,
            &format!(
                "unit: {name}\nexec-start: [sh, -c, 'echo x >> {d}/{name}.runs; sleep 0.05; exit {code}']\n\
                 restart: {policy}\nrestart-delay: 100ms\n"
            ),
        );
    };
    counted("no", 1, "no");
    counted("onfail-ok", 0, "on-failure");
    counted("onfail-bad", 1, "on-failure");
    counted("always", 0, "always");
    virtual_unit(
        &dir,
        "default",
        "waits-for: no, onfail-ok, onfail-bad, always\n",
    );
    let init = dir.start("default");
    init.wait_unit("always", "restarted twice", |u| u.restarts >= 2);
    init.wait_unit("onfail-bad", "restarted twice", |u| u.restarts >= 2);
    let s = init.status();
    let get = |n: &str| s.units.iter().find(|u| u.unit == n).unwrap().clone();
    let no = get("no");
    assert_eq!(no.state, UnitState::Failed);
    assert_eq!(no.restart_in_ms, None);
    assert_eq!(no.restarts, 0);
    let ok = get("onfail-ok");
    assert_eq!(ok.state, UnitState::Exited, "{ok:?}");
    assert_eq!(ok.restarts, 0);
    assert_eq!(dir.lines("no.runs").len(), 1);
    assert_eq!(dir.lines("onfail-ok.runs").len(), 1);
    // (The third run may not have written its line yet.)
    wait_for(WAIT, "three runs of always", || {
        (dir.lines("always.runs").len() >= 3).then_some(())
    });
}

/// max-concurrent-starts: 2 (config file): never more than two units
/// starting at once, observed on the subscribe stream; all start in the end.
#[test]
fn max_concurrent_starts_caps_the_starting_set() {
    let dir = TestDir::new();
    let names: Vec<String> = (1..=6).map(|i| format!("s{i}")).collect();
    for n in &names {
        sleeper(&dir, n, "ready-wait: 150ms\n");
    }
    virtual_unit(&dir, "idle", "");
    virtual_unit(
        &dir,
        "many",
        &format!("waits-for: [{}]\n", names.join(", ")),
    );
    let config = dir.file("init.yaml", "max-concurrent-starts: 2\n");
    let init = dir.init().target("idle").config(config).start();
    let mut sub = init.subscribe();
    init.ctl(&["set-target", "many"]).expect(0);
    let mut starting = BTreeSet::new();
    let mut max = 0;
    let mut running = BTreeSet::new();
    sub.until("every unit running", |u| {
        if u.state == UnitState::Starting {
            starting.insert(u.unit.clone());
        } else {
            starting.remove(&u.unit);
        }
        if u.state == UnitState::Running && u.unit.starts_with('s') {
            running.insert(u.unit.clone());
        }
        max = max.max(starting.len());
        running.len() == 6
    });
    assert_eq!(max, 2, "at most two starting at once, and two did");
    init.wait_state("many", UnitState::Running);
}

/// set-target --wait: 0 when the target is active, 1 when it failed or
/// `--timeout` passed (the switch goes on), 4 for an unknown target.
#[test]
fn set_target_wait_exit_codes() {
    let dir = TestDir::new();
    sleeper(&dir, "good", "");
    dir.unit(
        "bad",
        "unit: bad\ntype: oneshot\nexec-start: [sh, -c, 'exit 2']\n",
    );
    dir.unit(
        "slow",
        "unit: slow\ntype: foreground-notified\nexec-start: sleep 100\n",
    );
    virtual_unit(&dir, "ok", "depends-on: good\n");
    virtual_unit(&dir, "broken", "depends-on: bad\n");
    virtual_unit(&dir, "never", "depends-on: slow\n");
    virtual_unit(&dir, "idle", "");
    let init = dir.start("idle");

    let out = init.ctl(&["set-target", "ok", "--wait"]);
    out.expect(0);
    assert!(out.stdout.contains("target 'ok' is active"), "{out:?}");
    assert_eq!(init.status().target, "ok");

    let out = init.ctl(&["set-target", "broken", "--wait"]);
    out.expect(1);
    assert!(out.stderr.contains("failed"), "{out:?}");
    assert!(out.stderr.contains("bad"), "{out:?}");

    let t0 = Instant::now();
    let out = init.ctl(&["set-target", "never", "--timeout", "300ms"]);
    out.expect(1);
    assert!(t0.elapsed() >= Duration::from_millis(300));
    assert!(out.stderr.contains("timed out"), "{out:?}");
    // The switch went on.
    assert_eq!(init.status().target, "never");
    assert_eq!(init.unit("slow").state, UnitState::Starting);

    // A wait whose target is switched away settles as failed (exit 1).
    let mut waiter = std::process::Command::new(flotilla_tests::bins::initctl())
        .arg("--control")
        .arg(&init.control)
        .args(["set-target", "never", "--wait"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut progress = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(waiter.stdout.take().unwrap()),
        &mut progress,
    )
    .unwrap();
    assert!(progress.starts_with("never: "), "{progress}");
    init.ctl(&["set-target", "ok"]).expect(0);
    let out = flotilla_tests::init::run_child(waiter, WAIT);
    out.expect(1);
    assert!(out.stderr.contains("switched to ok"), "{out:?}");

    let out = init.ctl(&["set-target", "nosuch", "--wait"]);
    out.expect(4);
    assert!(out.stderr.contains("nosuch"), "{out:?}");
    assert_eq!(init.status().target, "ok", "nothing changed");
    init.wait_state("ok", UnitState::Running);
}

/// A target switch stops exactly the units outside the new required set,
/// dependents before their dependencies (the order recorded by their
/// exec-stop commands), and keeps the shared ones running (same PID).
#[test]
fn target_switch_stops_dependents_first() {
    let dir = TestDir::new();
    recorded(&dir, "net", "");
    recorded(&dir, "db", "depends-on: net\n");
    recorded(&dir, "cache", "depends-ms: net\n");
    recorded(&dir, "app", "depends-on: db, setup\nwaits-for: cache\n");
    recorded(&dir, "shared", "");
    // An exited oneshot with exec-stop: its stop runs too, after app's.
    let d = dir.path().display().to_string();
    dir.unit(
        "setup",
        &format!(
            "unit: setup\ntype: oneshot\nexec-start: 'true'\n\
             exec-stop: [sh, -c, 'echo setup >> {d}/order']\n"
        ),
    );
    virtual_unit(&dir, "full", "depends-on: app, shared\n");
    virtual_unit(&dir, "bare", "depends-on: shared\n");
    let init = dir.start("full");
    let s = init.wait_all(&["net", "db", "cache", "app", "shared"], UnitState::Running);
    assert_eq!(init.unit("setup").state, UnitState::Exited);
    let shared = s.units.iter().find(|u| u.unit == "shared").unwrap().pid;
    let mut sub = init.subscribe();
    init.ctl(&["set-target", "bare", "--wait"]).expect(0);
    let mut gone = BTreeSet::new();
    let seen = sub.until("five units disabled", |u| {
        if u.state == UnitState::Disabled && u.unit != "full" {
            gone.insert(u.unit.clone());
        }
        gone.len() == 5
    });
    assert!(
        seen.iter()
            .any(|u| u.unit == "app" && u.state == UnitState::Stopping),
        "stopping observed: {seen:?}"
    );
    let order = dir.lines("order");
    let pos = |n: &str| {
        order
            .iter()
            .position(|x| x == n)
            .unwrap_or_else(|| panic!("{n} not stopped: {order:?}"))
    };
    assert_eq!(order.len(), 5, "{order:?}");
    assert!(pos("app") < pos("setup"), "{order:?}");
    assert!(pos("app") < pos("db"), "{order:?}");
    assert!(pos("app") < pos("cache"), "{order:?}");
    assert!(pos("db") < pos("net"), "{order:?}");
    assert!(pos("cache") < pos("net"), "{order:?}");
    let s = init.status();
    let get = |n: &str| s.units.iter().find(|u| u.unit == n).unwrap();
    assert_eq!(get("shared").pid, shared);
    assert_eq!(get("shared").state, UnitState::Running);
    for n in ["net", "db", "cache", "app", "setup", "full"] {
        assert_eq!(get(n).state, UnitState::Disabled, "{n}");
        assert!(!get(n).required);
    }
}

/// initctl restart: the unit restarts with a new process; what
/// hard-depends on it stops first and comes back; unknown units exit 4,
/// units the target does not require exit 1.
#[test]
fn restart_command() {
    let dir = TestDir::new();
    recorded(&dir, "db", "");
    recorded(&dir, "web", "depends-on: db\n");
    recorded(&dir, "idle", "");
    let d = dir.path().display().to_string();
    dir.unit(
        "once",
        &format!("unit: once\ntype: oneshot\nexec-start: [sh, -c, 'echo run >> {d}/once.runs']\n"),
    );
    virtual_unit(&dir, "default", "depends-on: web, once\n");
    let init = dir.start("default");
    let s = init.wait_all(&["db", "web", "default"], UnitState::Running);
    let pid = |s: &flotilla_units::protocol::SystemStatus, n: &str| {
        s.units.iter().find(|u| u.unit == n).unwrap().pid.unwrap()
    };
    let (db0, web0) = (pid(&s, "db"), pid(&s, "web"));
    let out = init.ctl(&["restart", "db"]);
    out.expect(0);
    assert!(out.stdout.contains("db"), "{out:?}");
    let s = init.wait("db and web running with new processes", |s| {
        ["db", "web"].iter().all(|n| {
            s.units
                .iter()
                .any(|u| u.unit == *n && u.state == UnitState::Running)
        }) && pid(s, "db") != db0
            && pid(s, "web") != web0
    });
    assert_eq!(dir.lines("order"), ["web", "db"]);
    let db = s.units.iter().find(|u| u.unit == "db").unwrap();
    assert_eq!(db.restarts, 0, "a requested restart is not a failure");
    wait_for(WAIT, "old processes gone", || {
        (!procs::alive(db0) && !procs::alive(web0)).then_some(())
    });

    // An exited oneshot runs again.
    init.wait_state("once", UnitState::Exited);
    init.ctl(&["restart", "once"]).expect(0);
    wait_for(WAIT, "a second run of once", || {
        (dir.lines("once.runs").len() == 2).then_some(())
    });
    init.wait_state("once", UnitState::Exited);

    let out = init.ctl(&["restart", "nosuch"]);
    out.expect(4);
    let out = init.ctl(&["restart", "idle"]);
    out.expect(1);
    assert!(out.stderr.contains("not required"), "{out:?}");
}

/// `degraded` changes are reported on the subscribe stream, like state
/// changes: a subscriber (the cluster agent, a dashboard) sees a unit
/// become degraded when a milestone dependency fails.
#[test]
fn degraded_changes_are_reported_to_subscribers() {
    let dir = TestDir::new();
    sleeper(&dir, "net", "restart: no\n");
    sleeper(&dir, "app", "depends-ms: net\n");
    virtual_unit(&dir, "default", "depends-on: app\n");
    let init = dir.start("default");
    let s = init.wait_all(&["net", "app", "default"], UnitState::Running);
    let net = s
        .units
        .iter()
        .find(|u| u.unit == "net")
        .unwrap()
        .pid
        .unwrap();
    let mut sub = init.subscribe();
    procs::signal(net, libc::SIGKILL);
    sub.until("app reported degraded", |u| u.unit == "app" && u.degraded);
    sub.until("default reported degraded", |u| {
        u.unit == "default" && u.degraded
    });
}

/// after/before (YAML, and a systemd unit's Before=) order units that are
/// required anyway: each unit records its start in `order` and checks that
/// what it is after has finished; a unit only named in `after` is not
/// pulled in; stops go the other way round. conflicts: the unit reached
/// first from the target wins, the other is not started.
#[test]
fn after_before_and_conflicts() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    // setup takes a while, then marks itself done.
    dir.unit(
        "setup",
        &format!(
            "unit: setup\ntype: oneshot\n\
             exec-start: [sh, -c, 'sleep 0.3; echo setup >> {d}/order; touch {d}/setup-done']\n"
        ),
    );
    // app starts only once setup is done, or fails at once.
    recorded(
        &dir,
        "app",
        &format!(
            "after: [setup, unrelated]\n\
             exec-start-pre: [[sh, -c, 'test -e {d}/setup-done && echo app >> {d}/order']]\n\
             restart: no\n"
        ),
    );
    // A systemd unit ordered before app; its stop comes after app's.
    dir.file(
        "units/first.service",
        &format!(
            "[Unit]\nBefore=app\n[Service]\n\
             ExecStartPre=/bin/sh -c 'sleep 0.2; echo first >> {d}/order'\n\
             ExecStart=/bin/sleep 100\n\
             ExecStop=/bin/sh -c 'echo stop-first >> {d}/order; kill $MAINPID'\n"
        ),
    );
    sleeper(&dir, "unrelated", "");
    sleeper(&dir, "rival", "conflicts: app\n");
    virtual_unit(
        &dir,
        "default",
        "depends-on: [app, first.service]\nwaits-for: [setup, rival]\n",
    );
    virtual_unit(&dir, "idle", "");
    let init = dir.start("default");
    init.wait_all(&["app", "first.service", "default"], UnitState::Running);
    assert_eq!(init.unit("setup").state, UnitState::Exited);
    assert_eq!(init.unit("unrelated").state, UnitState::Disabled);
    let rival = init.unit("rival");
    assert_eq!(rival.state, UnitState::Disabled);
    assert_eq!(rival.status, "conflicts with app");
    let units = dir.units().display().to_string();
    let check = dir.run_init(&["--check", "--units", &units, "--target", "default"]);
    assert!(
        check.stdout.contains(
            "rival.yaml: warning: rival conflicts with app, which target default requires: \
             rival is not started"
        ),
        "{}",
        check.stdout
    );
    let order = dir.lines("order");
    let at = |n: &str| order.iter().position(|x| x == n).unwrap_or(usize::MAX);
    assert!(at("setup") < at("app"), "{order:?}");
    assert!(at("first") < at("app"), "{order:?}");

    init.ctl(&["set-target", "idle", "--wait"]).expect(0);
    init.wait_all(&["app", "first.service"], UnitState::Disabled);
    let order = dir.lines("order");
    let at = |n: &str| order.iter().position(|x| x == n).unwrap_or(usize::MAX);
    assert!(at("app") < at("stop-first"), "app stops first: {order:?}");

    // Required on its own, the rival runs.
    init.ctl(&["set-target", "rival", "--wait"]).expect(0);
}

/// A systemd `.target` file in the units directory is a virtual unit whose
/// `Wants=` and `Requires=` pull units in.
#[test]
fn a_target_file_pulls_in_its_wants_and_requires() {
    let dir = TestDir::new();
    dir.file(
        "units/multi-user.target",
        "[Unit]\nDescription=Multi-User\nWants=a.service\nRequires=b.service\n",
    );
    for n in ["a", "b", "c"] {
        dir.file(
            &format!("units/{n}.service"),
            "[Service]\nExecStart=/bin/sleep 100\n",
        );
    }
    let init = dir.start("multi-user.target");
    init.wait_all(
        &["multi-user.target", "a.service", "b.service"],
        UnitState::Running,
    );
    assert_eq!(init.unit("c.service").state, UnitState::Disabled);
}

/// Conditions and assertions at start: a YAML unit and a systemd unit
/// whose `ConditionPathExists=` fails are skipped (`exited`, nothing runs,
/// `"skipped": true`), a unit whose `AssertPathExists=` fails is `failed`
/// and does not restart, a unit whose condition holds runs; and Debian's
/// own `rc-local.service` (`ConditionFileIsExecutable=/etc/rc.local`),
/// unchanged, is skipped on a machine without `/etc/rc.local`.
#[test]
fn conditions_skip_and_assertions_fail_at_start() {
    let rc_local = std::path::Path::new("/etc/rc.local");
    assert!(
        !rc_local.exists(),
        "this test expects a machine without /etc/rc.local (Debian's default)"
    );
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    dir.file("present", "");
    dir.unit(
        "yaml-skipped",
        &format!(
            "unit: yaml-skipped\ntype: oneshot\n\
             exec-start: [touch, {d}/yaml-ran]\n\
             condition-path-exists: {d}/absent\n"
        ),
    );
    dir.file(
        "units/skipped.service",
        &format!(
            "[Unit]\nConditionPathExists={d}/absent\n\
             [Service]\nExecStart=/bin/touch {d}/skipped-ran\n\
             ExecStopPost=/bin/touch {d}/skipped-stop-post\n"
        ),
    );
    dir.file(
        "units/asserted.service",
        &format!(
            "[Unit]\nAssertPathExists={d}/absent\n\
             [Service]\nExecStart=/bin/touch {d}/asserted-ran\nRestart=always\n"
        ),
    );
    dir.file(
        "units/holds.service",
        &format!(
            "[Unit]\nConditionPathExists={d}/present\nConditionPathExists=!{d}/absent\n\
             [Service]\nExecStart=/bin/sleep 100\n"
        ),
    );
    let debian = std::fs::read_to_string("/lib/systemd/system/rc-local.service")
        .expect("systemd's rc-local.service");
    dir.file("units/rc-local.service", &debian);
    virtual_unit(
        &dir,
        "default",
        "depends-on: [yaml-skipped, skipped.service, holds.service, rc-local.service]\n\
         waits-for: asserted.service\n",
    );
    let init = dir.start("default");
    init.wait_all(&["default", "holds.service"], UnitState::Running);
    for (name, what) in [
        ("yaml-skipped", format!("ConditionPathExists={d}/absent")),
        ("skipped.service", format!("ConditionPathExists={d}/absent")),
        (
            "rc-local.service",
            "ConditionFileIsExecutable=/etc/rc.local".to_string(),
        ),
    ] {
        let u = init.unit(name);
        assert_eq!(u.state, UnitState::Exited, "{u:?}");
        assert!(u.skipped, "{u:?}");
        assert_eq!(u.status, format!("skipped: {what} was not met"));
    }
    let asserted = init.unit("asserted.service");
    assert_eq!(asserted.state, UnitState::Failed);
    assert!(!asserted.skipped);
    assert_eq!(
        asserted.status,
        format!("assertion failed: AssertPathExists={d}/absent was not met")
    );
    assert_eq!(
        asserted.restart_in_ms, None,
        "an assertion does not restart"
    );
    assert!(!init.unit("holds.service").skipped);
    // Nothing of the skipped or failed units ran.
    for f in [
        "yaml-ran",
        "skipped-ran",
        "skipped-stop-post",
        "asserted-ran",
    ] {
        assert!(!dir.join(f).exists(), "{f} ran");
    }
    // The JSON of `initctl status` says it.
    let out = init.ctl(&["status", "skipped.service", "--json"]);
    out.expect(0);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(v["skipped"], true, "{v}");
    assert_eq!(v["state"], "exited", "{v}");

    // Once the path exists, a restart checks again and the unit runs.
    dir.file("absent", "");
    init.ctl(&["restart", "skipped.service"]).expect(0);
    wait_for(WAIT, "skipped.service ran", || {
        dir.join("skipped-ran").exists().then_some(())
    });
    let u = init.wait_state("skipped.service", UnitState::Exited);
    assert!(!u.skipped, "{u:?}");
}

/// `ConditionFirstBoot=` is decided when the init starts, as systemd
/// decides it in PID 1: with `/etc/machine-id` saying `uninitialized` (a
/// file of the test's, bound over it in the init's own mount namespace)
/// this is the first boot, and it stays so after a unit of the boot writes an ID (as
/// `systemd-machine-id-setup` does), for the units that start after it.
#[test]
fn first_boot_is_decided_at_start() {
    let dir = TestDir::new();
    let d = dir.path().display().to_string();
    let id = dir.file("machine-id", "uninitialized\n");
    dir.unit(
        "write-id",
        "unit: write-id\ntype: oneshot\n\
         exec-start: [sh, -c, 'echo 0123456789abcdef0123456789abcdef > /etc/machine-id']\n",
    );
    for (name, want) in [("first", "yes"), ("not-first", "no")] {
        dir.file(
            &format!("units/{name}.service"),
            &format!(
                "[Unit]\nConditionFirstBoot={want}\nRequires=write-id\nAfter=write-id\n\
                 [Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/touch {d}/{name}-ran\n"
            ),
        );
    }
    virtual_unit(
        &dir,
        "default",
        "depends-on: [first.service, not-first.service]\n",
    );
    let init = dir
        .init()
        .target("default")
        .in_mount_namespace(&format!("mount --bind {} /etc/machine-id", id.display()))
        .start();
    init.wait_state("default", UnitState::Running);
    assert_eq!(
        std::fs::read_to_string(&id).expect("the test's machine-id"),
        "0123456789abcdef0123456789abcdef\n",
        "write-id ran before both"
    );
    assert!(
        dir.join("first-ran").exists(),
        "ConditionFirstBoot=yes held"
    );
    assert!(!init.unit("first.service").skipped);
    let not_first = init.unit("not-first.service");
    assert!(not_first.skipped, "{not_first:?}");
    assert_eq!(
        not_first.status,
        "skipped: ConditionFirstBoot=no was not met"
    );
    assert!(!dir.join("not-first-ran").exists());
}
