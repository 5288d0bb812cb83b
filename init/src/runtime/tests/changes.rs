//! Changes to what runs: a target switch (and when `--wait` says it has
//! settled), a reload, transient sets, and who may ask.

use super::*;
use flotilla_units::protocol::ErrorCode;
use flotilla_units::spec::{Command, UnitSpec, UnitType};

const SVC: &str = "unit: svc\nexec-start: /bin/svc\n";
/// A unit whose stop command takes as long as the test wants.
const SLOW: &str = "unit: slow\nexec-start: /bin/slow\nexec-stop: /bin/slow-stop\n";
const DEFAULT: &str = "unit: default\ntype: virtual\ndepends-on: [svc, slow]\n";
const RESCUE: &str = "unit: rescue\ntype: virtual\n";

/// `set-target rescue --wait`: the units outside the new set are
/// stopped; the wait settles only once they all have, not when `rescue`
/// is active (which it is at once).
#[test]
fn a_switch_settles_when_the_old_units_have_stopped() {
    let sys = fake_with(&[
        ("svc", SVC),
        ("slow", SLOW),
        ("default", DEFAULT),
        ("rescue", RESCUE),
    ]);
    let mut h = Harness::start(sys, "default");
    let (svc, slow) = (h.pid("svc"), h.pid("slow"));
    // The stop command takes its time: no stop-timeout runs out.
    h.sys().hold_clock(true);
    h.sys().take_calls();
    let mut c = h.connect();
    c.send(&Request::SetTarget {
        target: "rescue".into(),
        wait: true,
        isolate: false,
    });
    h.turn_until("slow's stop command running", |h| {
        h.sys()
            .spawns()
            .iter()
            .any(|s| s.argv == ["/bin/slow-stop"])
    });
    // svc gets SIGTERM and obeys; slow's stop command is still running.
    h.exit(
        "svc",
        ExitStatus::Signaled {
            signal: libc::SIGTERM,
            core_dumped: false,
        },
    );
    h.settle();
    assert_eq!(h.state("rescue"), UnitState::Running);
    assert_eq!(h.state("svc"), UnitState::Disabled);
    assert_eq!(h.state("slow"), UnitState::Stopping);
    let replies = c.replies();
    assert!(
        replies.iter().all(|r| matches!(r, Reply::Progress(_))),
        "not settled while slow stops: {replies:?}"
    );
    let Some(Reply::Progress(p)) = replies.last() else {
        panic!("{replies:?}")
    };
    assert_eq!(p.stopping, ["slow"]);
    assert_eq!((p.active, p.total), (1, 1));
    // The stop command ends, and the main process with it.
    let stop = spawned_pid(h.sys(), "/bin/slow-stop");
    h.sys().exit(stop, ExitStatus::Exited(0));
    h.sys().exit(slow, ExitStatus::Exited(0));
    let replies = h.replies_until_final(&mut c);
    assert!(
        matches!(replies.last(), Some(Reply::Settled { target, ok: true, .. }) if target == "rescue"),
        "{replies:?}"
    );
    assert_eq!(h.state("slow"), UnitState::Disabled);
    // svc got its kill-signal; slow's stop command ran first, and only
    // when it had finished did what was left of slow get the signal.
    let calls = processes_and_waits(&h.sys().calls());
    let at = |c: &str| calls.iter().position(|x| x.starts_with(c));
    assert!(at(&format!("killpg {svc} {}", libc::SIGTERM)).is_some());
    assert!(
        at("spawn /bin/slow-stop") < at(&format!("killpg {slow} {}", libc::SIGTERM)),
        "{calls:?}"
    );
}

/// SIGHUP reloads the directory: a changed unit restarts with its new
/// command, a new one starts, a removed one stops, an unchanged one is
/// left alone.
#[test]
fn a_reload() {
    let keep = "unit: keep\nexec-start: /bin/keep\n";
    let change = "unit: change\nexec-start: /bin/change --old\n";
    let gone = "unit: gone\nexec-start: /bin/gone\n";
    let all = "unit: all\ntype: virtual\nwaits-for: [keep, change, gone, new]\n";
    let sys = fake_with(&[
        ("keep", keep),
        ("change", change),
        ("gone", gone),
        ("all", all),
    ]);
    let mut h = Harness::start(sys, "all");
    let (keep_pid, change_pid, gone_pid) = (h.pid("keep"), h.pid("change"), h.pid("gone"));
    h.sys().set_kill_exits(true);
    h.sys().take_calls();
    h.sys().set_file(
        format!("{UNITS}/change.yaml"),
        "unit: change\nexec-start: /bin/change --new\n",
    );
    h.sys()
        .remove_file(std::path::Path::new(&format!("{UNITS}/gone.yaml")));
    h.sys().set_file(
        format!("{UNITS}/new.yaml"),
        "unit: new\nexec-start: /bin/new\n",
    );
    h.sys().raise(libc::SIGHUP);
    h.settle();
    let calls = processes_and_waits(&h.sys().take_calls());
    let term = libc::SIGTERM;
    let at = |c: &str| calls.iter().position(|x| x.starts_with(c));
    for expected in [
        format!("killpg {change_pid} {term}"),
        format!("killpg {gone_pid} {term}"),
        "spawn /bin/change --new".to_string(),
        "spawn /bin/new".to_string(),
    ] {
        assert!(at(&expected).is_some(), "{expected} in {calls:?}");
    }
    // The changed unit starts again once its old process has gone.
    assert!(at(&format!("killpg {change_pid} {}", libc::SIGKILL)) < at("spawn /bin/change --new"));
    assert!(!calls.iter().any(|c| c.contains(&keep_pid.to_string())));
    assert_eq!(h.pid("keep"), keep_pid);
    assert!(!h.rt.all_units().iter().any(|u| u.unit == "gone"));
    assert!(h
        .sys()
        .console_lines()
        .contains(&"init: reloaded: 1 added, 1 changed, 1 removed, 2 unchanged".to_string()));
}

fn transient(name: &str, cmd: &str) -> UnitSpec {
    let mut u = UnitSpec::new(name, UnitType::ForegroundSupervised);
    u.exec_start = Some(Command::new([cmd]));
    u
}

/// `transient-patch` changes some units of a set: the one left out of the
/// patch keeps its process, the replaced one restarts, the removed one
/// stops; a bad patch changes nothing and names every problem.
#[test]
fn transient_patches() {
    let all = "unit: all\ntype: virtual\nwaits-for: [a, b, c, d]\n";
    let sys = fake_with(&[("all", all)]);
    let mut h = Harness::start(sys, "all");
    h.sys().set_kill_exits(true);
    let r = h.request(Request::TransientApply {
        set: "fleet".into(),
        units: vec![
            transient("a", "/bin/a"),
            transient("b", "/bin/b"),
            transient("c", "/bin/c"),
        ],
    });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    h.settle();
    let (a, b, c) = (h.pid("a"), h.pid("b"), h.pid("c"));
    h.sys().take_calls();
    let r = h.request(Request::TransientPatch {
        set: "fleet".into(),
        upsert: vec![transient("b", "/bin/b2"), transient("d", "/bin/d")],
        remove: vec!["c".into()],
    });
    let Some(Reply::Applied(applied)) = r.last() else {
        panic!("{r:?}")
    };
    assert_eq!(applied.added, ["d"]);
    assert_eq!(applied.changed, ["b"]);
    assert_eq!(applied.removed, ["c"]);
    h.settle();
    let calls = processes_and_waits(&h.sys().take_calls());
    let term = libc::SIGTERM;
    let at = |c: &str| calls.iter().position(|x| x.starts_with(c));
    for expected in [
        format!("killpg {b} {term}"),
        format!("killpg {c} {term}"),
        "spawn /bin/b2".to_string(),
        "spawn /bin/d".to_string(),
    ] {
        assert!(at(&expected).is_some(), "{expected} in {calls:?}");
    }
    assert!(
        !calls.iter().any(|x| x.contains(&a.to_string())),
        "{calls:?}"
    );
    // The set and the graph share each unit's spec: a patch copies none
    // (its cost is the graph's, not the set's size in copies).
    let g = h.rt.planner.graph();
    for u in &h.rt.units.transient_sets()["fleet"] {
        let node = g.node(g.unit(&u.name).unwrap());
        assert!(std::sync::Arc::ptr_eq(u, &node.spec), "{} copied", u.name);
    }
    // A bad patch: every problem, nothing changed.
    let mut clash = transient("all", "/bin/x");
    clash.provides = vec!["all".into()].into();
    let r = h.request(Request::TransientPatch {
        set: "fleet".into(),
        upsert: vec![clash],
        remove: vec!["nope".into()],
    });
    let Some(Reply::Error { code, details, .. }) = r.last() else {
        panic!("{r:?}")
    };
    assert_eq!(*code, ErrorCode::Invalid);
    assert!(
        details
            .iter()
            .any(|d| d == "`nope` is not in the transient set `fleet`"),
        "{details:?}"
    );
    assert!(details.iter().any(|d| d.contains("all")), "{details:?}");
    assert!(details.len() >= 2, "{details:?}");
    h.settle();
    assert!(processes_and_waits(&h.sys().take_calls())
        .iter()
        .all(|c| c.starts_with("wait")));
}

/// Mutating requests only from root or the init's own user; anyone may
/// read.
#[test]
fn who_may_ask() {
    let sys = fake_with(&[("svc", SVC)]);
    let mut h = Harness::start(sys, "svc");
    h.sys().set_peer_uid(1000);
    let r = h.request(Request::Reload {
        keep_running: false,
    });
    assert!(
        matches!(
            r.last(),
            Some(Reply::Error {
                code: ErrorCode::PermissionDenied,
                ..
            })
        ),
        "{r:?}"
    );
    let r = h.request(Request::List);
    assert!(matches!(r.last(), Some(Reply::List { units }) if units.len() == 1));
    // An init run by user 1000 takes requests from user 1000.
    h.sys().set_euid(1000);
    let r = h.request(Request::Reload {
        keep_running: false,
    });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
}

/// A timer first in the set at a reload, in a zone nobody named at start:
/// its zone file is read at the reload (once), so the timer is armed in
/// its zone; a reload of a set without timers reads no zone.
#[test]
fn a_reload_reads_the_zones_of_its_new_timers() {
    let sys = fake_with(&[("svc", SVC)]);
    let berlin = "/usr/share/zoneinfo/Europe/Berlin";
    sys.set_file(
        berlin,
        std::fs::read(berlin).unwrap_or_else(|e| panic!("tzdata's {berlin}: {e}")),
    );
    let mut h = Harness::start(sys, "svc");
    let r = h.request(Request::Reload {
        keep_running: false,
    });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    let zone_reads = |calls: &[Call]| {
        calls
            .iter()
            .filter(|c| matches!(c, Call::ReadFile { path, .. } if path.starts_with("/usr/share/zoneinfo")))
            .count()
    };
    assert_eq!(zone_reads(&h.sys().take_calls()), 0);
    h.sys().set_file(
        format!("{UNITS}/job.yaml"),
        "unit: job\ntype: oneshot\nexec-start: /bin/true\n",
    );
    h.sys().set_file(
        format!("{UNITS}/tick.yaml"),
        "unit: tick\ntype: timer\ntriggers: job\non-calendar: \"*-*-* 06:00:00 Europe/Berlin\"\n",
    );
    h.sys().set_file(
        format!("{UNITS}/svc.yaml"),
        format!("{SVC}depends-on: tick\n"),
    );
    let r = h.request(Request::Reload {
        keep_running: false,
    });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    assert_eq!(zone_reads(&h.sys().take_calls()), 1);
    let env = h.rt.planner.timer_env();
    assert!(
        env.zones.contains_key("Europe/Berlin"),
        "{:?}",
        env.zones.keys()
    );
    let next =
        h.rt.planner
            .graph()
            .unit("tick")
            .and_then(|tick| h.rt.planner.timer_times(tick))
            .and_then(|(next, _)| next);
    assert!(next.is_some(), "armed in its zone");
}

/// A reload whose loader failed (crashed, killed at its limit, wrote what
/// does not parse: `loading.rs`) changes nothing: the reply says why, the
/// units in force stay, and the one running keeps its process.
#[test]
fn a_failed_load_keeps_the_set_in_force() {
    let sys = fake_with(&[("svc", SVC)]);
    let mut h = Harness::start(sys, "svc");
    h.settle();
    let pid = spawned_pid(h.sys(), "/bin/svc");
    h.sys().set_file(
        format!("{UNITS}/other.yaml"),
        "unit: other\nexec-start: /bin/other\n",
    );
    let r = h.rt.reload_from(
        Err("the unit loader failed: killed by SIGSEGV".to_string()),
        None,
        flotilla_units::planner::OnChange::Restart,
    );
    assert!(
        matches!(
            &r,
            Reply::Error { code: ErrorCode::Invalid, message, .. }
                if message == "the unit loader failed: killed by SIGSEGV; nothing changed"
        ),
        "{r:?}"
    );
    h.settle();
    let g = h.rt.planner.graph();
    assert!(g.unit("svc").is_some());
    assert!(g.unit("other").is_none());
    assert_eq!(spawned_pid(h.sys(), "/bin/svc"), pid);
    // The next reload that loads takes the files as they are.
    let r = h.request(Request::Reload {
        keep_running: false,
    });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    assert!(h.rt.planner.graph().unit("other").is_some());
}
