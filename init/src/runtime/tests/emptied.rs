//! `ExitType=cgroup` where the init has no cgroup for the unit (the fake
//! system gives none): the wait for an empty cgroup is answered at once,
//! so the service ends with its main process as under `ExitType=main`,
//! judged by that exit.

use super::{fake_with, Harness, UNITS};
use crate::sys::ExitStatus;
use flotilla_units::state::UnitState;

/// `svc.service` with `ExitType=cgroup`, running, then its main process
/// ended with `status`: its state once the loop settled.
fn ended(status: ExitStatus) -> UnitState {
    let sys = fake_with(&[]);
    sys.set_file(
        format!("{UNITS}/svc.service"),
        "[Service]\nExecStart=/bin/svc\nExitType=cgroup\n",
    );
    let mut h = Harness::start(sys, "svc.service");
    assert_eq!(h.state("svc.service"), UnitState::Running);
    h.exit("svc.service", status);
    h.turn_until("svc.service settled", |h| {
        matches!(
            h.state("svc.service"),
            UnitState::Exited | UnitState::Failed
        )
    });
    h.state("svc.service")
}

#[test]
fn without_a_cgroup_the_service_ends_with_its_main_process() {
    assert_eq!(ended(ExitStatus::Exited(0)), UnitState::Exited);
    assert_eq!(
        ended(ExitStatus::Signaled {
            signal: libc::SIGKILL,
            core_dumped: false,
        }),
        UnitState::Failed
    );
}
