//! A unit's life in the loop: boot, a crash and its back-off restart, a
//! flooding unit, shutdown.

use super::*;
use crate::outpipe::READ_BUDGET;
use crate::sys::{FileOwner, Interest, Token, UserInfo};
use flotilla_units::protocol::ShutdownKind;

const DB: &str = "unit: db\nexec-start: /bin/db\n";
const WEB: &str = "unit: web\nexec-start: /bin/web --port 80\ndepends-on: db\n";
const DEFAULT: &str = "unit: default\ntype: virtual\ndepends-on: web\n";

/// Boot: the loop sets itself up, reads the directory (its time and its
/// entries' taken first: `crate::pathstamp`), starts `db`, then `web`
/// (which depends on it), and sleeps with no time-out: nothing is polled.
#[test]
fn boot() {
    let sys = fake_with(&[("db", DB), ("web", WEB), ("default", DEFAULT)]);
    let h = Harness::start(sys, "default");
    let calls = h.sys().calls();
    let setup: Vec<Call> = calls.iter().take(15).cloned().collect();
    let file = |n: &str| Call::ReadFile {
        path: format!("{UNITS}/{n}.yaml").into(),
        max: flotilla_units::load::MAX_FILE_SIZE + 1,
    };
    let mtime = |n: &str| Call::FileMtime(format!("{UNITS}/{n}.yaml").into());
    assert_eq!(
        setup,
        [
            Call::OpenEvents,
            Call::CreateDir("/run/init".into()),
            Call::BindListener(CONTROL.into()),
            Call::Watch(Token(1), Interest::Read),
            Call::CreateDir("/run/init/notify".into()),
            Call::SetChildSubreaper,
            Call::FileMtime(UNITS.into()),
            Call::ReadDir(UNITS.into()),
            mtime("db"),
            mtime("default"),
            mtime("web"),
            file("db"),
            file("default"),
            file("web"),
            Call::ReleaseFreeMemory,
        ]
    );
    assert_eq!(
        processes_and_waits(&calls),
        [
            "spawn /bin/db = 1000",
            "spawn /bin/web --port 80 = 1001",
            // The pipes of both ended (the fake's children write nothing
            // and close them only when they exit): nothing to wait for.
            "wait None",
        ]
    );
    let db = h.sys().spawns()[0].clone();
    assert_eq!(db.env_var("INIT_UNIT").as_deref(), Some("db"));
    assert_eq!(db.env_var("INIT_CONTROL").as_deref(), Some(CONTROL));
    assert_eq!(db.env_var("NOTIFY_SOCKET"), None);
    // Each process's stdout and stderr are pipes, watched for its log.
    let watched = calls
        .iter()
        .filter(|c| matches!(c, Call::Watch(t, Interest::Read) if t.0 >= 16))
        .count();
    assert_eq!(watched, 4);
    assert_eq!(h.state("default"), UnitState::Running);
    assert!(h
        .sys()
        .console_lines()
        .contains(&"[  OK  ] started web".to_string()));
}

/// A crash: the unit fails, its restart waits `restart-delay` (the loop
/// sleeps exactly that long), and the delay doubles at the next crash.
#[test]
fn crash_and_back_off_restart() {
    let svc = "unit: svc\nexec-start: /bin/svc\nrestart: on-failure\nrestart-delay: 1s\n";
    let sys = fake_with(&[("svc", svc)]);
    let mut h = Harness::start(sys, "svc");
    let first = h.pid("svc");
    h.sys().take_calls();
    let t0 = h.sys().monotonic_now();
    h.exit("svc", ExitStatus::Exited(3));
    h.turn();
    assert_eq!(h.state("svc"), UnitState::Failed);
    assert!(h
        .sys()
        .console_lines()
        .iter()
        .any(|l| l.starts_with("[FAILED] svc")));
    h.turn_until("svc restarted", |h| h.state("svc") == UnitState::Running);
    let restarted_at = h.sys().monotonic_now().since(t0);
    assert_eq!(restarted_at, Duration::from_secs(1));
    assert_eq!(
        processes_and_waits(&h.sys().take_calls()),
        [
            // The exit, reaped.
            "wait None",
            // What the process left in its group is killed.
            "killpg 1000 9",
            // Nothing happens until the restart is due.
            "wait Some(1s)",
            "spawn /bin/svc = 1001",
        ]
    );
    assert_ne!(h.pid("svc"), first);
    // It crashes again at once: twice the delay.
    h.exit(
        "svc",
        ExitStatus::Signaled {
            signal: libc::SIGSEGV,
            core_dumped: true,
        },
    );
    h.turn_until("svc restarted again", |h| {
        h.state("svc") == UnitState::Running && h.pid("svc") != 1001
    });
    assert!(waits(&h.sys().calls()).contains(&Some(Duration::from_secs(2))));
}

/// A unit that floods its stdout does not stall the loop: each turn reads
/// at most a budget from it and comes back without sleeping while data is
/// left, and meanwhile another unit's crash is handled at once. When the
/// flood stops the loop sleeps again with no time-out.
#[test]
fn a_flooding_unit() {
    let flood = "unit: flood\nexec-start: /bin/yes\n";
    let calm = "unit: calm\nexec-start: /bin/calm\nrestart-delay: 0s\n";
    let all = "unit: all\ntype: virtual\ndepends-on: [flood, calm]\n";
    let sys = fake_with(&[("flood", flood), ("calm", calm), ("all", all)]);
    let mut h = Harness::start(sys, "all");
    let flood_pid = h.pid("flood");
    let calm_pid = h.pid("calm");
    let line = b"y y y y y y y y y y y y y y y y y y y y y y y y y y y y y y y\n";
    let mut flood_out = Vec::new();
    while flood_out.len() < 8 * READ_BUDGET {
        flood_out.extend_from_slice(line);
    }
    assert_eq!(h.sys().write_output(flood_pid, &flood_out), flood_out.len());
    h.sys().take_calls();
    for _ in 0..3 {
        h.turn();
    }
    // Each turn read a budget's worth and came back without sleeping.
    assert_eq!(
        waits(&h.sys().take_calls()),
        [None, Some(Duration::ZERO), Some(Duration::ZERO)]
    );
    // The other unit crashes while the flood goes on: handled in the turn
    // it is reported in.
    h.sys().exit(calm_pid, ExitStatus::Exited(1));
    h.turn();
    assert_eq!(
        processes_and_waits(&h.sys().take_calls()),
        [
            "wait Some(0ns)".to_string(),
            format!("killpg {calm_pid} {}", libc::SIGKILL),
            // restart-delay 0s: at once.
            "spawn /bin/calm = 1002".to_string(),
        ]
    );
    assert_eq!(h.state("calm"), UnitState::Running);
    // Drained: the last wait sleeps without a time-out.
    h.settle();
    let w = waits(&h.sys().calls());
    assert_eq!(w.last(), Some(&None));
    let io =
        h.rt.planner
            .graph()
            .unit("flood")
            .and_then(|id| h.rt.slots.io(id))
            .unwrap_or_else(|| panic!("flood has a log"));
    assert!(io.log.dropped() > 0, "the ring kept only the newest lines");
    assert!(io.log.bytes() <= 64 * 1024);
}

/// SIGTERM to the init, every signalled child exiting at once, and turns
/// until the loop ends: how it ended and the signals it sent.
fn shut_down(h: &mut Harness) -> (Option<Exit>, Vec<String>) {
    shut_down_by(h, libc::SIGTERM)
}

/// [`shut_down`] by `signo`.
fn shut_down_by(h: &mut Harness, signo: i32) -> (Option<Exit>, Vec<String>) {
    h.sys().take_calls();
    h.sys().set_kill_exits(true);
    h.sys().raise(signo);
    let mut exit = None;
    for _ in 0..100 {
        exit = h.turn();
        if exit.is_some() {
            break;
        }
    }
    let signals = processes_and_waits(&h.sys().take_calls())
        .into_iter()
        .filter(|c| c.starts_with("kill"))
        .collect();
    (exit, signals)
}

/// A stop signals the main process's group, which reaches the main
/// process once; a main process that left its group (`setsid`) is
/// signalled beside the group.
#[test]
fn a_stop_signals_the_main_process_once() {
    let sys = fake_with(&[("db", DB), ("web", WEB), ("default", DEFAULT)]);
    let mut h = Harness::start(sys, "default");
    let (db, web) = (h.pid("db"), h.pid("web"));
    h.sys().set_pgid(db, 4242);
    let (_, signals) = shut_down(&mut h);
    let term: Vec<&String> = signals
        .iter()
        .filter(|c| c.ends_with(&format!(" {}", libc::SIGTERM)))
        .collect();
    assert_eq!(
        term,
        [
            &format!("killpg {web} {}", libc::SIGTERM),
            &format!("killpg {db} {}", libc::SIGTERM),
            &format!("kill {db} {}", libc::SIGTERM),
        ]
    );
}

/// Shutdown by SIGTERM: dependents stop first (`web` is signalled, exits,
/// then `db`), the loop ends, and closing removes the control socket.
#[test]
fn shutdown() {
    let sys = fake_with(&[("db", DB), ("web", WEB), ("default", DEFAULT)]);
    let mut h = Harness::start(sys, "default");
    let (exit, signals) = shut_down(&mut h);
    assert_eq!(exit, Some(Exit::Shutdown(ShutdownKind::Poweroff)));
    assert_eq!(
        signals,
        [
            // web first (its group, which it leads, so it gets the signal
            // once); once it exited, what it left in its group is killed;
            // then db.
            format!("killpg 1001 {}", libc::SIGTERM),
            format!("killpg 1001 {}", libc::SIGKILL),
            format!("killpg 1000 {}", libc::SIGTERM),
            format!("killpg 1000 {}", libc::SIGKILL),
        ]
    );
    assert!(h
        .sys()
        .console_lines()
        .contains(&"init: SIGTERM: stopping every unit (poweroff)".to_string()));
    h.rt.close();
    assert_eq!(h.sys().take_calls(), [Call::RemoveSocket(CONTROL.into())]);
}

/// systemd's signals to PID 1 (`sys/io/signals.rs`): `SIGRTMIN+3` (what `podman
/// stop` sends an init) halts with every unit stopped in order, `+5`
/// reboots so; `+14` powers off at once: the loop ends in its next turn,
/// no unit signalled (the final sequence ends the processes).
#[test]
fn systemds_signals_to_pid1() {
    let pid1 = || {
        let sys = fake_with(&[("db", DB), ("web", WEB), ("default", DEFAULT)]);
        let rt = Runtime::new(sys, settings("default"), true).unwrap_or_else(|e| panic!("{e}"));
        let mut h = Harness { rt };
        h.settle();
        h
    };
    let ordered = |h: &Harness| {
        [
            format!("killpg {} {}", h.pid("web"), libc::SIGTERM),
            format!("killpg {} {}", h.pid("web"), libc::SIGKILL),
            format!("killpg {} {}", h.pid("db"), libc::SIGTERM),
            format!("killpg {} {}", h.pid("db"), libc::SIGKILL),
        ]
    };
    let rtmin = crate::sys::signals::SYSTEMD_RTMIN;
    for (plus, kind) in [
        (3, ShutdownKind::Halt),
        (4, ShutdownKind::Poweroff),
        (5, ShutdownKind::Reboot),
    ] {
        let mut h = pid1();
        let want = ordered(&h);
        let (exit, signals) = shut_down_by(&mut h, rtmin + plus);
        assert_eq!(exit, Some(Exit::Shutdown(kind)), "+{plus}");
        assert_eq!(signals, want, "+{plus}");
        let line = format!("init: SIGRTMIN+{plus}: stopping every unit");
        assert!(
            h.sys().console_lines().iter().any(|l| l.starts_with(&line)),
            "{:?}",
            h.sys().console_lines()
        );
    }
    let mut h = pid1();
    h.sys().take_calls();
    h.sys().raise(rtmin + 14);
    // The turn that reads the signal, then the one that ends.
    assert_eq!(h.turn(), None);
    assert_eq!(h.turn(), Some(Exit::Shutdown(ShutdownKind::Poweroff)));
    let kills: Vec<String> = processes_and_waits(&h.sys().take_calls())
        .into_iter()
        .filter(|c| c.starts_with("kill"))
        .collect();
    assert!(kills.is_empty(), "{kills:?}");
    assert!(h.sys().console_lines().contains(
        &"init: SIGRTMIN+14: poweroff at once, the units not stopped one by one".to_string()
    ));
}

/// A `User=` unit of type `foreground-notified` whose user may not search
/// a directory on the way to its notify socket: the init says so at the
/// spawn, on the console and in the unit's log, with the unit, the socket
/// and the directory (the unit would otherwise sit in `starting` until its
/// time-out with no word why). A user who may reach it gets no such line.
#[test]
fn notify_socket_out_of_reach_is_reported_at_spawn() {
    let unit = |name: &str| {
        format!("unit: {name}\ntype: foreground-notified\nexec-start: /bin/{name}\nuser: alice\n")
    };
    let sys = fake_with(&[("shut", &unit("shut")), ("open", &unit("open"))]);
    sys.add_user(UserInfo {
        name: "alice".into(),
        uid: 1000,
        gid: 1000,
        groups: vec![1000],
        home: "/home/alice".into(),
        shell: "/bin/sh".into(),
    });
    // Private: owner root, no search for others.
    let private = FileOwner {
        uid: 0,
        gid: 0,
        mode: 0o700,
    };
    sys.set_owner("/run/init", private);
    // The start would time out and restart, again and again: the test
    // looks at the first spawn only.
    sys.hold_clock(true);
    let mut h = Harness::start(sys, "shut");
    let socket = h.sys().spawns()[0].env_var("NOTIFY_SOCKET").unwrap();
    let note = format!(
        "shut: notify socket {socket} is out of reach of user alice: it may not search /run/init \
         (owner 0:0, mode 0700), so READY=1 cannot arrive and the start will time out"
    );
    assert!(h.sys().console_lines().contains(&format!("init: {note}")));
    let logged: Vec<String> = h
        .request(Request::Logs {
            unit: "shut".into(),
            lines: None,
            follow: false,
            source: false,
        })
        .into_iter()
        .filter_map(|r| match r {
            Reply::Log(l) => Some(l.line),
            _ => None,
        })
        .collect();
    assert_eq!(logged[0], note);

    // The same unit when its user may pass (the directory searchable by
    // others): no note.
    h.sys().set_owner(
        "/run/init",
        FileOwner {
            mode: 0o711,
            ..private
        },
    );
    h.request(Request::SetTarget {
        target: "open".into(),
        wait: false,
        isolate: false,
    });
    h.turn_until("open spawned", |h| h.sys().spawns().len() == 2);
    assert!(!h
        .sys()
        .console_lines()
        .iter()
        .any(|l| l.contains("open: notify socket")));
}

/// `ready-bus-name` (systemd's `Type=dbus`): the unit stays `starting`
/// until `flotilla-busd` reports its name owned (`bus-names`); a report of
/// other names changes nothing.
#[test]
fn a_unit_with_a_bus_name_is_up_when_busd_reports_it_owned() {
    let sys = fake_with(&[(
        "web",
        "unit: web\nexec-start: /bin/web\nready-bus-name: org.example.Web\n",
    )]);
    // Not settled: the start timeout is the only deadline left, and it
    // would fail the start.
    let rt = Runtime::new(sys, settings("web"), false).unwrap_or_else(|e| panic!("{e}"));
    let mut h = Harness { rt };
    h.turn_until("web starting", |h| h.state("web") == UnitState::Starting);
    let names = |owned: &[&str], whole| Request::BusNames {
        owned: owned.iter().map(|n| n.to_string()).collect(),
        released: Vec::new(),
        whole,
    };
    let r = h.request(names(&["org.example.Other"], true));
    assert!(
        matches!(r.last(), Some(Reply::Accepted { message }) if message == "1 bus names owned, 0 released"),
        "{r:?}"
    );
    assert_eq!(h.state("web"), UnitState::Starting);
    h.request(names(&["org.example.Web"], false));
    h.turn_until("web running", |h| h.state("web") == UnitState::Running);
}

/// systemd's `Type=simple` against `Type=exec` (testsuite-23): the user of
/// a `started-at-fork` unit is not found. Its start is told done (the
/// console's `started`, in a turn of its own), then its main process's
/// failure with systemd's `EXIT_USER`, 217; without `started-at-fork` the
/// start itself fails.
#[test]
fn a_user_not_found_fails_a_simple_unit_after_its_start() {
    let simple = "unit: two\nexec-start: /bin/sleep infinity\nuser: idontexist\n\
                  started-at-fork: true\nrestart: no\n";
    let sys = fake_with(&[("two", simple)]);
    let mut h = Harness::start(sys, "two");
    assert_eq!(h.state("two"), UnitState::Failed);
    let console = h.sys().console_lines();
    let started = console.iter().position(|l| l == "[  OK  ] started two");
    let failed = console
        .iter()
        .position(|l| l.contains("FAILED") && l.contains("two"));
    assert!(
        matches!((started, failed), (Some(s), Some(f)) if s < f),
        "{console:?}"
    );
    let r = h.request(Request::Status {
        name: Some("two".to_string()),
    });
    match r.first() {
        Some(Reply::Unit(u)) => {
            assert_eq!(u.exit_status, Some(217), "{u:?}");
            assert_eq!(u.result, Some(flotilla_units::state::FailureKind::ExitCode));
        }
        _ => panic!("{r:?}"),
    }
    assert!(h.sys().spawns().is_empty(), "nothing is spawned");

    let exec = "unit: five\nexec-start: /bin/sleep infinity\nuser: idontexist\nrestart: no\n";
    let sys = fake_with(&[("five", exec)]);
    let mut h = Harness::start(sys, "five");
    assert_eq!(h.state("five"), UnitState::Failed);
    let console = h.sys().console_lines();
    assert!(
        !console.iter().any(|l| l == "[  OK  ] started five"),
        "{console:?}"
    );
    let r = h.request(Request::Status {
        name: Some("five".to_string()),
    });
    match r.first() {
        Some(Reply::Unit(u)) => {
            assert_eq!(
                u.result,
                Some(flotilla_units::state::FailureKind::Resources)
            );
        }
        _ => panic!("{r:?}"),
    }
}

/// `DynamicUser=yes` (`dynamic-user`): each unit runs as a UID and equal
/// GID of 61184–65519 hashed from its user name, the next one when the
/// passwd database or another unit's dynamic user holds it; given back
/// when the unit's run ends.
#[test]
fn a_dynamic_user_is_picked_free_held_and_given_back() {
    use flotilla_units::dynamic_user::{hashed, FIRST, LAST};
    let next = |n: u32| if n == LAST { FIRST } else { n + 1 };
    let a = "unit: a\nexec-start: /bin/a\ndynamic-user: true\nrestart: no\n\
             state-directory: a\n";
    // Its user named as `a`'s stem: the same hash.
    let b = "unit: b\nexec-start: /bin/b\ndynamic-user: true\nuser: a\nrestart: no\n";
    let default = "unit: default\ntype: virtual\ndepends-on: [a, b]\n";
    let sys = fake_with(&[("a", a), ("b", b), ("default", default)]);
    // The hashed number is a user of the passwd database.
    sys.add_user(UserInfo {
        name: "taken".into(),
        uid: hashed("a"),
        gid: hashed("a"),
        groups: vec![hashed("a")],
        home: "/".into(),
        shell: "/bin/sh".into(),
    });
    let mut h = Harness::start(sys, "default");
    let creds = |h: &Harness, argv0: &str| {
        h.sys()
            .spawns()
            .iter()
            .find(|s| s.argv.first().map(String::as_str) == Some(argv0))
            .and_then(|s| s.credentials.clone())
            .unwrap_or_else(|| panic!("{argv0} has no credentials"))
    };
    let (ca, cb) = (creds(&h, "/bin/a"), creds(&h, "/bin/b"));
    let first = next(hashed("a"));
    let second = next(first);
    // Which of the two came first is the start order's: both are free
    // and distinct.
    let mut got = [ca.uid, cb.uid];
    got.sort_unstable();
    let mut want = [Some(first), Some(second)];
    want.sort_unstable();
    assert_eq!(got, want, "{ca:?} {cb:?}");
    assert_eq!(
        (ca.gid, ca.groups.clone()),
        (ca.uid, ca.uid.map(|u| vec![u]))
    );
    assert_eq!(h.rt.dynamic_users.len(), 2);
    // `a`'s directories are kept below `private/` (`dirs.rs`); `b` has
    // none, so nothing is.
    let runs = h.sys().take_runs();
    let private: Vec<(&str, bool)> = runs.iter().map(|(n, d)| (n.as_str(), d.private)).collect();
    assert!(private.contains(&("a", true)), "{private:?}");
    assert!(private.contains(&("b", false)), "{private:?}");
    h.exit("a", ExitStatus::Exited(0));
    h.turn_until("a's run ended", |h| h.rt.dynamic_users.len() == 1);
    assert_eq!(h.rt.dynamic_users, [("b".to_string(), cb.uid.unwrap_or(0))]);
}
