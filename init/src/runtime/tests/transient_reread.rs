//! A running transient service read again at systemd's daemon-reload
//! from its file in `/run/systemd/transient`, with the drop-ins found
//! then (systemd's test 16): a new `RuntimeMaxSec=` applies to it as it
//! runs; it is not restarted, stays in its transient set, and keeps the
//! `CollectMode` it was asked with. A scope's file is read the same way
//! (through Debian's `systemctl`: `tests/tests/dbus_systemctl/scopes.rs`),
//! and only for a scope the init has.

use super::*;
use flotilla_units::spec::{CollectMode, Command, UnitSpec, UnitType};
use flotilla_units::state::FailureKind;

const TRANSIENT: &str = "/run/systemd/transient";

/// The loop started on `app` with [`TRANSIENT`] on its path (`hold_clock`:
/// the fake's clock held until the test lets it go).
fn with_transient_dir(hold_clock: bool) -> Harness {
    let sys = fake_with(&[("app", "unit: app\ntype: virtual\n")]);
    sys.add_dir(TRANSIENT);
    sys.hold_clock(hold_clock);
    let mut s = settings("app");
    s.more_units_dirs.push(TRANSIENT.into());
    let rt = Runtime::new(sys, s, false).unwrap_or_else(|e| panic!("{e}"));
    let mut h = Harness { rt };
    h.settle();
    h
}

#[test]
fn a_drop_in_written_for_a_running_transient_service_applies_at_a_reload() {
    let mut h = with_transient_dir(true);
    // As flotilla-busd makes it: the unit, then its file.
    let mut unit = UnitSpec::new("long.service", UnitType::ForegroundSupervised);
    unit.exec_start = Some(Command::new(["/bin/tool"]));
    unit.extras.collect_mode = Some(CollectMode::InactiveOrFailed);
    let r = h.request(Request::TransientAdd {
        unit: Box::new(unit),
        adopt: Vec::new(),
        stdio: Vec::new(),
        aux: Vec::new(),
    });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    h.sys().set_file(
        format!("{TRANSIENT}/long.service"),
        "[Service]\nExecStart=/bin/tool\n",
    );
    h.turn_until("long.service running", |h| {
        h.state("long.service") == UnitState::Running
    });
    let pid = h.pid("long.service");

    h.sys().add_dir(format!("{UNITS}/long.service.d"));
    h.sys().set_file(
        format!("{UNITS}/long.service.d/limit.conf"),
        "[Service]\nRuntimeMaxSec=5s\n",
    );
    let r = h.request(Request::Reload { keep_running: true });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    let g = h.rt.planner.graph();
    let spec = g.unit("long.service").map(|id| g.node(id).spec.clone());
    let spec = spec.unwrap_or_else(|| panic!("long.service is gone"));
    assert_eq!(
        spec.runtime_max().map(|(max, _)| max),
        Some(Duration::from_secs(5))
    );
    assert_eq!(
        spec.extras.collect_mode,
        Some(CollectMode::InactiveOrFailed)
    );
    assert!(h.rt.units.transient_names().contains("long.service"));
    assert_eq!(h.state("long.service"), UnitState::Running);
    assert_eq!(h.pid("long.service"), pid, "not restarted");

    // The limit counts from its start, and stops it.
    h.sys().set_kill_exits(true);
    h.sys().hold_clock(false);
    h.turn_until("long.service ended", |h| {
        h.state("long.service") != UnitState::Running
            && h.state("long.service") != UnitState::Stopping
    });
    assert!(!h.sys().is_live(pid));
    let p = &h.rt.planner;
    let view = p.graph().unit("long.service").and_then(|id| p.view(id));
    let failure = view.and_then(|v| v.failure).map(|f| f.0);
    assert_eq!(failure, Some(FailureKind::Timeout));
}

/// The file of a scope the init does not have (its scope ended before
/// flotilla-busd wrote it) makes no unit at a reload: a scope is made of
/// the processes given when it was made.
#[test]
fn a_scopes_file_without_its_scope_makes_no_unit_at_a_reload() {
    let mut h = with_transient_dir(false);
    h.sys().set_file(
        format!("{TRANSIENT}/gone.scope"),
        "[Scope]\nRuntimeMaxSec=5s\n",
    );
    let r = h.request(Request::Reload { keep_running: true });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    assert!(h.rt.planner.graph().unit("gone.scope").is_none());
}
