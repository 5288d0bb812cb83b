//! A unit's reload through the loop: a reload command that fails leaves
//! the unit running and says so in its status (`reload_result`, what
//! flotilla-busd fails the reload job on, as systemd does).

use super::*;
use flotilla_units::state::FailureKind;

const SVC: &str = "unit: svc\nexec-start: /bin/svc\nexec-reload: /bin/reload-svc\n";
const DEFAULT: &str = "unit: default\ntype: virtual\ndepends-on: svc\n";

/// The unit's status as the control socket tells it.
fn status(h: &mut Harness) -> flotilla_units::protocol::UnitStatus {
    match h
        .request(Request::Status {
            name: Some("svc".into()),
        })
        .first()
    {
        Some(Reply::Unit(u)) => u.clone(),
        r => panic!("{r:?}"),
    }
}

/// Asks for a reload and ends the reload command with `status`.
fn reload(h: &mut Harness, status: ExitStatus) {
    let before = h.sys().spawns().len();
    let r = h.request(Request::ReloadUnit { unit: "svc".into() });
    assert!(matches!(r.first(), Some(Reply::Accepted { .. })), "{r:?}");
    h.turn_until("the reload command runs", |h| {
        h.sys().spawns().len() > before
    });
    let spawn = h.sys().spawns().pop().unwrap_or_else(|| panic!("no spawn"));
    assert_eq!(spawn.argv, ["/bin/reload-svc"]);
    assert_eq!(h.state("svc"), UnitState::Reloading);
    h.sys()
        .exit(spawn.pid.unwrap_or_else(|| panic!("no PID")), status);
    h.turn_until("the reload ends", |h| {
        h.state("svc") != UnitState::Reloading
    });
}

#[test]
fn a_failed_reload_keeps_the_unit_running_and_is_told() {
    let sys = fake_with(&[("svc", SVC), ("default", DEFAULT)]);
    let mut h = Harness::start(sys, "default");
    assert_eq!(h.state("svc"), UnitState::Running);
    let main = h.pid("svc");

    reload(&mut h, ExitStatus::Exited(1));
    let s = status(&mut h);
    assert_eq!((s.state, s.pid), (UnitState::Running, Some(main)));
    assert_eq!(s.reload_result, Some(FailureKind::ExitCode));
    assert_eq!(s.status, "exec-reload: exit status 1");
    let json = serde_json::to_value(&s).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(json["reload_result"], "exit-code");

    // A reload that succeeds clears it.
    reload(&mut h, ExitStatus::Exited(0));
    let s = status(&mut h);
    assert_eq!((s.state, s.reload_result), (UnitState::Running, None));
    let json = serde_json::to_value(&s).unwrap_or_else(|e| panic!("{e}"));
    assert!(json.get("reload_result").is_none(), "{json}");
}
