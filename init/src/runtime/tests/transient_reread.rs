//! A running transient service read again at systemd's daemon-reload
//! from its file in `/run/systemd/transient`, with the drop-ins found
//! then (systemd's test 16): a new `RuntimeMaxSec=` applies to it as it
//! runs; it is not restarted, stays in its transient set, and keeps the
//! `CollectMode` it was asked with. A scope's file is read the same way
//! (through Debian's `systemctl`: `tests/tests/dbus_systemctl/scopes.rs`),
//! and only for a scope the init has.

use super::*;
use crate::sys::fake::Op;
use crate::sys::{Errno, Os, SysError};
use flotilla_units::protocol::ErrorCode;
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
    // As flotilla-busd makes it: the unit with its file.
    let mut unit = UnitSpec::new("long.service", UnitType::ForegroundSupervised);
    unit.exec_start = Some(Command::new(["/bin/tool"]));
    unit.extras.collect_mode = Some(CollectMode::InactiveOrFailed);
    let r = h.request(added(unit, "[Service]\nExecStart=/bin/tool\n"));
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
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

/// `transient-add` of `unit` with its file, as flotilla-busd asks.
fn added(unit: UnitSpec, file: &str) -> Request {
    add_request(unit, Vec::new(), Some(file))
}

/// The text of the fake's file at `path`, if there is one.
fn file_text(h: &Harness, path: &str) -> Option<String> {
    let bytes = h
        .sys()
        .read_file_limited(std::path::Path::new(path), 4096)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The init writes a transient unit's file as it takes the unit, before
/// the unit's start, and removes it when it lets the unit go: a unit that
/// ends at once leaves no file for a reload to read (when flotilla-busd
/// wrote it after the init's answer, a unit gone by then left its file).
#[test]
fn a_transient_units_file_is_there_from_before_its_start_until_it_is_let_go() {
    let mut h = with_transient_dir(false);
    h.sys().take_calls();
    let mut unit = UnitSpec::new("brief.service", UnitType::ForegroundSupervised);
    unit.exec_start = Some(Command::new(["/bin/false"]));
    let text = "[Service]\nExecStart=/bin/false\n";
    let r = h.request(added(unit, text));
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    let path = format!("{TRANSIENT}/brief.service");
    assert_eq!(file_text(&h, &path).as_deref(), Some(text));
    h.turn_until("brief.service started", |h| {
        h.state("brief.service") == UnitState::Running
    });
    let calls = h.sys().take_calls();
    let written = calls
        .iter()
        .position(|c| *c == Call::WriteFile(path.clone().into()));
    let spawned = calls.iter().position(|c| matches!(c, Call::Spawn(_)));
    assert!(
        matches!((written, spawned), (Some(w), Some(s)) if w < s),
        "the file written before the start: {calls:?}"
    );

    h.exit("brief.service", ExitStatus::Exited(1));
    h.turn_until("brief.service failed", |h| {
        h.state("brief.service") == UnitState::Failed
    });
    assert!(file_text(&h, &path).is_some(), "kept while the unit is");
    let r = h.request(Request::ResetFailed {
        unit: Some("brief.service".into()),
    });
    assert!(matches!(r.last(), Some(Reply::Accepted { .. })), "{r:?}");
    assert!(h.rt.planner.graph().unit("brief.service").is_none());
    assert_eq!(file_text(&h, &path), None, "removed as it is let go");
}

/// A file the init cannot write refuses the unit, and nothing changes.
#[test]
fn a_transient_unit_whose_file_cannot_be_written_is_refused() {
    let mut h = with_transient_dir(false);
    h.sys().fail_next(
        Op::WriteFile,
        SysError::Call {
            call: "rename".into(),
            errno: Os(Errno::ENOSPC),
        },
    );
    let mut unit = UnitSpec::new("full.service", UnitType::ForegroundSupervised);
    unit.exec_start = Some(Command::new(["/bin/tool"]));
    let r = h.request(added(unit, "[Service]\nExecStart=/bin/tool\n"));
    match r.last() {
        Some(Reply::Error { code, message, .. }) => {
            assert_eq!(*code, ErrorCode::Failed);
            assert!(message.contains("full.service"), "{message}");
            assert!(message.contains("nothing changed"), "{message}");
        }
        other => panic!("refused, not {other:?}"),
    }
    assert!(h.rt.planner.graph().unit("full.service").is_none());
    assert!(!h.rt.units.transient_names().contains("full.service"));
    assert!(h.sys().spawns().is_empty(), "nothing started");
}

/// The file of a scope the init does not have (written by hand, or left
/// by an init that ended without letting its scope go) makes no unit at a
/// reload: a scope is made of the processes given when it was made.
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
