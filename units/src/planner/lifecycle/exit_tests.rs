//! The exit statuses a unit names (`success-exit-status`,
//! `restart-prevent-exit-status`, `restart-force-exit-status`), a
//! oneshot's further commands and `exec-start-post`, through the
//! planner's public facts.

use super::super::facts::{Action, Fact, Role};
use super::super::{Planner, PlannerOptions};
use crate::exits::ExitStatus;
use crate::graph::{Graph, UnitId};
use crate::spec::{Command, Origin, RestartPolicy, UnitSpec, UnitType};
use crate::state::UnitState;
use crate::time::Instant;

const U: UnitId = UnitId(0);

struct T {
    p: Planner,
    next_pid: i32,
}

impl T {
    fn new(spec: UnitSpec) -> T {
        let (g, d) = Graph::build(vec![(spec, Origin::unplaced("svc.yaml"))]);
        assert!(d.is_empty(), "{d:?}");
        T {
            p: Planner::new(g, "svc", Instant(0), PlannerOptions::default()),
            next_pid: 10,
        }
    }

    /// The role of the one spawn asked for, answered with a new PID.
    fn spawn(&mut self) -> (Role, i32) {
        let spawns: Vec<Role> = self
            .p
            .take_actions()
            .into_iter()
            .filter_map(|a| match a {
                Action::Spawn { role, .. } => Some(role),
                _ => None,
            })
            .collect();
        assert_eq!(spawns.len(), 1, "{spawns:?}");
        let pid = self.next_pid;
        self.next_pid += 1;
        self.p.fact(
            Fact::Spawned {
                unit: U,
                role: spawns[0],
                pid,
            },
            Instant(1),
        );
        (spawns[0], pid)
    }

    fn exit(&mut self, pid: i32, status: ExitStatus) {
        self.p.fact(Fact::Exited { pid, status }, Instant(2));
    }

    fn state(&self) -> UnitState {
        self.p.state(U)
    }

    fn restart_due(&self) -> bool {
        self.p.records[0].restart_due
    }
}

fn unit(kind: UnitType) -> UnitSpec {
    let mut s = UnitSpec::new("svc", kind);
    s.exec_start = Some(Command::new(["/bin/svc"]));
    s.restart = RestartPolicy::OnFailure;
    s
}

#[test]
fn a_success_exit_status_is_success() {
    let mut s = unit(UnitType::ForegroundSupervised);
    s.extras.success_exit_status.assign("143 SIGTERM").unwrap();
    let mut t = T::new(s);
    let (_, pid) = t.spawn();
    t.exit(pid, ExitStatus::Code(143));
    assert_eq!(t.state(), UnitState::Exited);
}

#[test]
fn restart_prevent_and_force() {
    let mut s = unit(UnitType::ForegroundSupervised);
    s.extras.restart_prevent_exit_status.assign("3").unwrap();
    let mut t = T::new(s);
    let (_, pid) = t.spawn();
    t.exit(pid, ExitStatus::Code(3));
    assert_eq!(t.state(), UnitState::Failed);
    assert!(!t.restart_due(), "prevented");

    let mut s = unit(UnitType::ForegroundSupervised);
    s.restart = RestartPolicy::No;
    s.extras
        .restart_force_exit_status
        .assign("SIGKILL")
        .unwrap();
    let mut t = T::new(s);
    let (_, pid) = t.spawn();
    t.exit(pid, ExitStatus::Signal(9));
    assert_eq!(t.state(), UnitState::Failed);
    assert!(t.restart_due(), "forced");
}

/// systemd's `Restart=` table, through the planner: whether the unit
/// waits to restart after each way its main process can end.
#[test]
fn restart_policies_restart_after_their_kinds_of_end() {
    let ends = [
        ("exit 0", ExitStatus::Code(0)),
        ("exit 1", ExitStatus::Code(1)),
        ("SIGABRT", ExitStatus::Signal(6)),
    ];
    let table = [
        (RestartPolicy::No, [false, false, false]),
        (RestartPolicy::Always, [true, true, true]),
        (RestartPolicy::OnSuccess, [true, false, false]),
        (RestartPolicy::OnFailure, [false, true, true]),
        (RestartPolicy::OnAbnormal, [false, false, true]),
        (RestartPolicy::OnAbort, [false, false, true]),
        (RestartPolicy::OnWatchdog, [false, false, false]),
    ];
    for (policy, restarts) in table {
        for ((what, status), restart) in ends.into_iter().zip(restarts) {
            let mut s = unit(UnitType::ForegroundSupervised);
            s.restart = policy;
            let mut t = T::new(s);
            let (_, pid) = t.spawn();
            t.exit(pid, status);
            assert_eq!(t.restart_due(), restart, "{} after {what}", policy.as_str());
            let end = match (status, restart) {
                (ExitStatus::Code(0), false) => UnitState::Exited,
                _ => UnitState::Failed,
            };
            assert_eq!(t.state(), end, "{} after {what}", policy.as_str());
        }
    }
}

/// A daemon (`daemon-clean-signals`, every systemd service but a
/// oneshot) killed by SIGTERM or SIGHUP ended cleanly: `exited`, not
/// restarted by `on-failure`; SIGKILL and SIGSEGV fail it. Without the
/// setting (a YAML unit) every signal fails it.
#[test]
fn a_daemon_killed_by_a_clean_signal_ended_cleanly() {
    for (daemon, signal, clean) in [
        (true, 15, true),
        (true, 1, true),
        (true, 2, true),
        (true, 13, true),
        (true, 9, false),
        (true, 11, false),
        (false, 15, false),
    ] {
        let mut s = unit(UnitType::ForegroundSupervised);
        s.extras.daemon_clean_signals = daemon.then_some(true);
        let mut t = T::new(s);
        let (_, pid) = t.spawn();
        t.exit(pid, ExitStatus::Signal(signal));
        let want = if clean {
            UnitState::Exited
        } else {
            UnitState::Failed
        };
        assert_eq!(t.state(), want, "daemon {daemon}, signal {signal}");
        assert_eq!(t.restart_due(), !clean, "daemon {daemon}, signal {signal}");
    }
}

#[test]
fn a_oneshots_commands_run_in_order() {
    let mut s = unit(UnitType::Oneshot);
    s.extras.exec_start_then =
        vec![Command::new(["/bin/two"]), Command::new(["/bin/three"])].into();
    let mut t = T::new(s.clone());
    let (role, pid) = t.spawn();
    assert_eq!(role, Role::Main);
    t.exit(pid, ExitStatus::Code(0));
    assert_eq!(t.state(), UnitState::Starting);
    let (role, pid) = t.spawn();
    assert_eq!(role, Role::Then(0));
    t.exit(pid, ExitStatus::Code(0));
    let (role, pid) = t.spawn();
    assert_eq!(role, Role::Then(1));
    t.exit(pid, ExitStatus::Code(0));
    assert_eq!(t.state(), UnitState::Exited);

    // A failure of one stops the list; a leading `-` lets it go on.
    s.extras.exec_start_then[0].ignore_failure = true;
    let mut t = T::new(s);
    let (_, pid) = t.spawn();
    t.exit(pid, ExitStatus::Code(0));
    let (_, pid) = t.spawn();
    t.exit(pid, ExitStatus::Code(1));
    let (role, pid) = t.spawn();
    assert_eq!(role, Role::Then(1));
    t.exit(pid, ExitStatus::Code(2));
    assert_eq!(t.state(), UnitState::Failed);
}

/// `exec-start-post` (systemd's `ExecStartPost=`): run in order once the
/// main process is up, the unit `starting` until they are done.
#[test]
fn start_post_commands_run_once_the_main_process_is_up() {
    let mut s = unit(UnitType::ForegroundSupervised);
    s.extras.exec_start_post = vec![Command::new(["/bin/p1"]), Command::new(["/bin/p2"])].into();
    let mut t = T::new(s.clone());
    let (role, _main) = t.spawn();
    assert_eq!(role, Role::Main);
    // Up at spawn (no ready-*): the first post command, still starting.
    let (role, pid) = t.spawn();
    assert_eq!(role, Role::Post(0));
    assert_eq!(t.state(), UnitState::Starting);
    t.exit(pid, ExitStatus::Code(0));
    let (role, pid) = t.spawn();
    assert_eq!(role, Role::Post(1));
    assert_eq!(t.state(), UnitState::Starting);
    t.exit(pid, ExitStatus::Code(0));
    assert_eq!(t.state(), UnitState::Running);

    // One failing (no `-`): the start fails, the main process is stopped.
    s.extras.exec_start_post[1].ignore_failure = true;
    let mut t = T::new(s.clone());
    let (_, main) = t.spawn();
    let (_, pid) = t.spawn();
    t.exit(pid, ExitStatus::Code(1));
    assert_eq!(t.state(), UnitState::Stopping);
    t.exit(main, ExitStatus::Signal(15));
    assert_eq!(t.state(), UnitState::Failed);

    // With `-`, a failure is no failure.
    s.extras.exec_start_post.remove(0);
    let mut t = T::new(s);
    t.spawn();
    let (_, pid) = t.spawn();
    t.exit(pid, ExitStatus::Code(1));
    assert_eq!(t.state(), UnitState::Running);
}

/// A oneshot's `exec-start-post` runs after its commands, before `exited`.
#[test]
fn a_oneshots_start_post_runs_after_its_commands() {
    let mut s = unit(UnitType::Oneshot);
    s.restart = RestartPolicy::No;
    s.extras.exec_start_post = vec![Command::new(["/bin/post"])].into();
    let mut t = T::new(s);
    let (role, pid) = t.spawn();
    assert_eq!(role, Role::Main);
    t.exit(pid, ExitStatus::Code(0));
    assert_eq!(t.state(), UnitState::Starting);
    let (role, pid) = t.spawn();
    assert_eq!(role, Role::Post(0));
    t.exit(pid, ExitStatus::Code(0));
    assert_eq!(t.state(), UnitState::Exited);
}

#[test]
fn a_missed_watchdog_ping_fails_the_unit() {
    let mut s = unit(UnitType::ForegroundSupervised);
    s.extras.watchdog = Some(std::time::Duration::from_secs(5));
    let mut t = T::new(s);
    let (_, _pid) = t.spawn();
    assert_eq!(t.state(), UnitState::Running);
    let sec = |n: u64| Instant(n * 1_000_000_000);
    t.p.tick(sec(4));
    t.p.fact(
        Fact::Notify {
            unit: U,
            msg: super::super::facts::Notify::Watchdog,
        },
        sec(4),
    );
    t.p.tick(sec(8));
    assert_eq!(t.state(), UnitState::Running, "the ping moved the deadline");
    t.p.tick(sec(10));
    assert_eq!(t.state(), UnitState::Stopping);
    assert!(t.restart_due());
    assert!(t.p.view(U).unwrap().status.contains("watchdog timeout"));
}

#[test]
fn with_the_service_watchdogs_off_a_missed_ping_is_ignored_until_the_next() {
    let mut s = unit(UnitType::ForegroundSupervised);
    s.extras.watchdog = Some(std::time::Duration::from_secs(5));
    let mut t = T::new(s);
    let (_, _pid) = t.spawn();
    let sec = |n: u64| Instant(n * 1_000_000_000);
    t.p.set_service_watchdogs(false);
    assert!(!t.p.service_watchdogs());
    t.p.tick(sec(20));
    assert_eq!(t.state(), UnitState::Running, "a missed ping failed it");
    // On again: the next ping arms it, and a ping missed after that fails.
    t.p.set_service_watchdogs(true);
    t.p.tick(sec(30));
    assert_eq!(
        t.state(),
        UnitState::Running,
        "failed before a ping armed it"
    );
    t.p.fact(
        Fact::Notify {
            unit: U,
            msg: super::super::facts::Notify::Watchdog,
        },
        sec(31),
    );
    t.p.tick(sec(37));
    assert_eq!(t.state(), UnitState::Stopping);
    assert!(t.p.view(U).unwrap().status.contains("watchdog timeout"));
}
