//! A unit's process reaped killed by `SIGKILL` while its cgroup counts a
//! new OOM kill: the planner hears of it before the exit, and the unit
//! fails with `oom-kill` (`OOMPolicy=stop`, the default), or as any
//! signal's end (`continue`); a `SIGKILL` with no OOM kill is a signal.

use super::{fake_with, Harness};
use crate::sys::ExitStatus;
use flotilla_units::state::{FailureKind, UnitState};

const KILLED: ExitStatus = ExitStatus::Signaled {
    signal: libc::SIGKILL,
    core_dumped: false,
};

/// The failure kind of unit `name` after its main process was killed,
/// with `oom` kills counted in its cgroup and `in_init` in the init's.
fn killed(yaml: &str, oom: u32, in_init: u32) -> Option<FailureKind> {
    let mut h = Harness::start(fake_with(&[("svc", yaml)]), "svc");
    assert_eq!(h.state("svc"), UnitState::Running);
    h.sys().set_oom_kills(oom);
    h.sys().set_init_oom_kills(in_init);
    h.exit("svc", KILLED);
    h.turn_until("svc failed", |h| h.state("svc") == UnitState::Failed);
    let p = &h.rt.planner;
    p.graph()
        .unit("svc")
        .and_then(|id| p.view(id))
        .and_then(|v| v.failure)
        .map(|f| f.0)
}

#[test]
fn an_oom_kill_is_the_units_result() {
    let svc = "unit: svc\nexec-start: /bin/svc\nmemory-max: 32M\n";
    assert_eq!(killed(svc, 1, 0), Some(FailureKind::OomKill));
}

#[test]
fn a_sigkill_without_an_oom_kill_is_a_signal() {
    let svc = "unit: svc\nexec-start: /bin/svc\nmemory-max: 32M\n";
    assert_eq!(killed(svc, 0, 0), Some(FailureKind::Signal));
}

#[test]
fn oom_policy_continue_judges_the_exit_alone() {
    let svc = "unit: svc\nexec-start: /bin/svc\nmemory-max: 32M\noom-policy: continue\n";
    assert_eq!(killed(svc, 1, 0), Some(FailureKind::Signal));
}

/// A child killed before its `execve` had given it memory of its own is
/// counted in the init's cgroup, not its unit's: still the unit's OOM kill.
#[test]
fn a_kill_counted_in_the_inits_cgroup_is_the_units_too() {
    let svc = "unit: svc\nexec-start: /bin/svc\n";
    assert_eq!(killed(svc, 0, 1), Some(FailureKind::OomKill));
}
