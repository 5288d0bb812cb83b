//! `GuessMainPID=no` (every service Debian's `systemd-sysv-generator`
//! writes, `postfix@.service`): a forking daemon without a pidfile has no
//! main PID, and lives on its cgroup as systemd's with none known
//! (`service_enter_running`, `unit_kill_context`): up while the cgroup
//! holds a process, and stopped by `KillMode=`.

use super::super::super::record::{Phase, Timer};
use super::super::Event;
use super::{svc, Role, OK, T};
use crate::context::process::KillMode;
use crate::spec::{Command, UnitType};
use crate::state::UnitState;

/// `svc` as the SysV generator writes it (`Type=forking`,
/// `GuessMainPID=no`, no pidfile, `exec-stop`, no `exec-stop-post`), with
/// `kill_mode` and `remain_after_exit`, its start command (PID 11) exited:
/// up, awaiting its empty cgroup.
fn up(kill_mode: KillMode, remain: bool) -> T {
    let mut s = svc(UnitType::BackgroundPidfile);
    s.extras.pidfile = None;
    s.extras.guess_main_pid = Some(false);
    s.extras.exec_stop_post = Vec::new().into();
    s.extras.context.kill_mode = kill_mode;
    s.remain_after_exit = Some(remain);
    let mut t = T::new(s);
    t.spawned(Role::Pre(0));
    t.exited(10, OK);
    t.spawned(Role::Main);
    let a = t.step(Event::Exited(Role::Main, 11, OK));
    assert_eq!(a, ["await an empty cgroup"]);
    assert_eq!((t.phase(), t.state()), (Phase::Up, UnitState::Running));
    assert_eq!(t.p.records[0].main_pid, None);
    t
}

/// Its stop: `exec-stop` runs (PID 12) and exits; the actions then.
fn stopped_by_exec_stop(t: &mut T) -> Vec<String> {
    assert_eq!(t.step(Event::Stop("stop")), ["spawn Stop"]);
    let stop = t.next_pid;
    t.step(Event::Spawned(Role::Stop, stop));
    t.step(Event::Exited(Role::Stop, stop, OK))
}

fn idle_without_failure(t: &T) {
    assert_eq!(t.phase(), Phase::Idle);
    assert!(t.p.records[0].rare().failure.is_none());
    assert_ne!(t.state(), UnitState::Failed);
}

/// The cgroup empty while up: done, a success, `exited` (active with
/// `RemainAfterExit=yes`), whatever `KillMode=`.
#[test]
fn an_empty_cgroup_ends_it_cleanly() {
    for remain in [true, false] {
        for mode in [KillMode::ControlGroup, KillMode::Process] {
            let mut t = up(mode, remain);
            assert!(t.step(Event::CgroupEmpty).is_empty());
            idle_without_failure(&t);
            assert_eq!(t.state(), UnitState::Exited, "{mode:?} {remain}");
        }
    }
    // Its `exec-stop-post` then with `RemainAfterExit=no` (a stop that
    // is over); at its stop, not now, with `yes` (`exited`, as systemd's).
    for (remain, actions) in [(false, vec!["spawn StopPost(0)"]), (true, vec![])] {
        let mut t = up(KillMode::Process, remain);
        t.running_with(|s| s.extras.exec_stop_post = vec![Command::new(["/bin/post"])].into());
        assert_eq!(t.step(Event::CgroupEmpty), actions, "{remain}");
    }
}

/// `KillMode=process` and `none` (the SysV generator's `process`): there
/// is no main process to signal, so nothing is, and the stop ends once
/// `exec-stop` has: what the cgroup holds keeps running (TEST-26's
/// `issue-24990`, whose daemons outlive its stop), with
/// `RemainAfterExit=` either way.
#[test]
fn kill_mode_process_ends_the_stop_with_exec_stop() {
    for remain in [true, false] {
        for mode in [KillMode::Process, KillMode::None] {
            let mut t = up(mode, remain);
            assert!(stopped_by_exec_stop(&mut t).is_empty(), "{mode:?}");
            idle_without_failure(&t);
            // A late word that the cgroup emptied is stale.
            assert!(t.step(Event::CgroupEmpty).is_empty());
            assert_eq!(t.phase(), Phase::Idle);
        }
    }
}

/// `KillMode=control-group`: the cgroup gets the stop signal, and the
/// stop waits for it to be empty; `SIGKILL` to it at the stop timeout,
/// and the processes abandoned after another.
#[test]
fn kill_mode_control_group_waits_for_the_cgroup() {
    for remain in [true, false] {
        let mut t = up(KillMode::ControlGroup, remain);
        assert_eq!(stopped_by_exec_stop(&mut t), ["SIGTERM to Rest"]);
        assert_eq!(t.phase(), Phase::Stopping);
        assert!(t.step(Event::CgroupEmpty).is_empty());
        idle_without_failure(&t);
    }

    let mut t = up(KillMode::ControlGroup, true);
    stopped_by_exec_stop(&mut t);
    assert_eq!(t.step(Event::Timer(Timer::Stop)), ["SIGKILL to Rest"]);
    assert_eq!(t.phase(), Phase::Stopping);
    t.step(Event::Timer(Timer::Abandon));
    assert_eq!(t.phase(), Phase::Idle);
}

/// `KillMode=mixed`: its stop signal is the main process's alone, and
/// there is none, so (as systemd's `service_enter_signal`) the cgroup gets
/// `SIGKILL` at once and the stop waits for it; with `SendSIGKILL=no`
/// nothing is signalled and the stop ends at once.
#[test]
fn kill_mode_mixed_kills_the_cgroup_at_once() {
    let mut t = up(KillMode::Mixed, true);
    assert_eq!(stopped_by_exec_stop(&mut t), ["SIGKILL to Rest"]);
    assert_eq!(t.phase(), Phase::Stopping);
    t.step(Event::CgroupEmpty);
    idle_without_failure(&t);

    let mut t = up(KillMode::Mixed, true);
    t.running_with(|s| s.extras.context.no_sigkill = true);
    assert!(stopped_by_exec_stop(&mut t).is_empty());
    idle_without_failure(&t);
}
