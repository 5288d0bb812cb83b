//! Conditions and assertions at start, through the loop: the init answers
//! the planner's check at once from the machine ([`FakeSys::set_machine`]),
//! and a skipped or failed unit never spawns.

use super::*;
use flotilla_units::condition::{ScriptedFacts, ScriptedPath};
use flotilla_units::protocol::Reply;

const SETUP: &str =
    "unit: setup\ntype: oneshot\nexec-start: /bin/setup\ncondition-path-exists: /etc/setup.conf\n";
const GUARD: &str =
    "unit: guard\ntype: oneshot\nexec-start: /bin/guard\nassert-path-exists: /etc/guard\n";
const WEB: &str = "unit: web\nexec-start: /bin/web\ndepends-on: setup\n";
const DEFAULT: &str = "unit: default\ntype: virtual\ndepends-on: web\nwaits-for: guard\n";

fn unit_status(h: &mut Harness, name: &str) -> flotilla_units::protocol::UnitStatus {
    let r = h.request(Request::Status {
        name: Some(name.to_string()),
    });
    match r.first() {
        Some(Reply::Unit(u)) => u.clone(),
        _ => panic!("{r:?}"),
    }
}

#[test]
fn a_failed_condition_skips_and_a_failed_assertion_fails_without_a_spawn() {
    let sys = fake_with(&[
        ("setup", SETUP),
        ("guard", GUARD),
        ("web", WEB),
        ("default", DEFAULT),
    ]);
    let mut h = Harness::start(sys, "default");
    let calls = h.sys().calls();
    let checked: Vec<&Call> = calls
        .iter()
        .filter(|c| matches!(c, Call::CheckConditions(_)))
        .collect();
    assert_eq!(
        checked,
        [
            &Call::CheckConditions("guard".into()),
            &Call::CheckConditions("setup".into())
        ]
    );
    // Only `web` ran: `setup` was skipped (and `web` went on), `guard`
    // failed its assertion.
    assert_eq!(
        processes_and_waits(&calls),
        ["spawn /bin/web = 1000", "wait None"]
    );
    let setup = unit_status(&mut h, "setup");
    assert_eq!(setup.state, UnitState::Exited);
    assert!(setup.skipped);
    assert_eq!(
        setup.status,
        "skipped: ConditionPathExists=/etc/setup.conf was not met"
    );
    let json = serde_json::to_value(&setup).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(json["skipped"], true);
    let guard = unit_status(&mut h, "guard");
    assert_eq!(guard.state, UnitState::Failed);
    assert!(!guard.skipped);
    assert_eq!(
        guard.status,
        "assertion failed: AssertPathExists=/etc/guard was not met"
    );
    assert_eq!(guard.restart_in_ms, None);
    assert_eq!(h.state("default"), UnitState::Running);

    // The file appears: a restart checks again, and this time it runs.
    h.sys()
        .set_machine(ScriptedFacts::default().with_path("/etc/setup.conf", ScriptedPath::File));
    let r = h.request(Request::Restart {
        unit: "setup".into(),
    });
    assert!(matches!(r.first(), Some(Reply::Accepted { .. })), "{r:?}");
    h.settle();
    let spawned: Vec<String> = h.sys().spawns().iter().map(|s| s.argv.join(" ")).collect();
    assert!(spawned.contains(&"/bin/setup".to_string()), "{spawned:?}");
    let setup = unit_status(&mut h, "setup");
    assert!(!setup.skipped);
    let json = serde_json::to_value(&setup).unwrap_or_else(|e| panic!("{e}"));
    assert!(json.get("skipped").is_none(), "{json}");
}
