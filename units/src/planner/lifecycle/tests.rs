//! One test per cell of the lifecycle table ([`Planner::step`]), and one
//! for its empty cells. Each test brings one unit `svc` into a phase the
//! way the init would (facts for the processes it spawned), applies one
//! event through the table alone (the rules do not run after it), and
//! checks the phase, the state and the actions it asked for.

use super::super::facts::{Action, Fact, Notify, Role};
use super::super::record::{Failure, Phase, Timer};
use super::super::{Planner, PlannerOptions};
use super::Event;
use crate::exits::ExitStatus;
use crate::graph::{Graph, UnitId};
use crate::spec::{Command, Origin, RestartPolicy, UnitSpec, UnitType};
use crate::state::{FailureKind, UnitState};
use crate::time::Instant;

const U: UnitId = UnitId(0);

mod no_main_pid_tests;

/// `svc` of `kind` with every command: one pre command, two stop-post
/// commands, a stop and a reload command (and a pidfile where it needs one).
fn svc(kind: UnitType) -> UnitSpec {
    let mut s = UnitSpec::new("svc", kind);
    s.exec_start_pre = vec![Command::new(["/bin/pre"])].into();
    s.exec_start = Some(Command::new(["/bin/svc"]));
    s.exec_stop = Some(Command::new(["/bin/stop"]));
    s.extras.exec_stop_post =
        vec![Command::new(["/bin/post0"]), Command::new(["/bin/post1"])].into();
    s.extras.exec_reload = Some(Command::new(["/bin/reload"]));
    s.restart = RestartPolicy::OnFailure;
    if kind == UnitType::BackgroundPidfile {
        s.extras.pidfile = Some("/run/svc.pid".into());
    }
    s
}

/// The planner, and the PIDs handed out so far.
struct T {
    p: Planner,
    next_pid: i32,
    now: Instant,
}

impl T {
    /// A planner with `spec` as its one unit, required by the target.
    fn new(spec: UnitSpec) -> T {
        let (g, d) = Graph::build(vec![(spec, Origin::unplaced("svc.yaml"))]);
        assert!(d.is_empty(), "{d:?}");
        T {
            p: Planner::new(g, "svc", Instant(0), PlannerOptions::default()),
            next_pid: 10,
            now: Instant(1),
        }
    }

    /// Changes the definition the unit runs with by `f` (as if it had
    /// been started so); returns the changed definition.
    fn running_with(&mut self, f: impl FnOnce(&mut UnitSpec)) -> UnitSpec {
        let running = self.p.records[0].running_spec.as_deref().cloned();
        let mut spec = running.expect("a running spec");
        f(&mut spec);
        self.p.records[0].running_spec = Some(spec.clone().into());
        spec
    }

    /// Reports the pending spawn of `role` as done; returns its PID.
    fn spawned(&mut self, role: Role) -> i32 {
        let a = self.p.take_actions();
        assert!(
            a.iter()
                .any(|a| matches!(a, Action::Spawn { role: r, .. } if *r == role)),
            "no spawn of {role:?} in {a:?}"
        );
        let pid = self.next_pid;
        self.next_pid += 1;
        self.p.fact(Fact::Spawned { unit: U, role, pid }, self.now);
        pid
    }

    fn exited(&mut self, pid: i32, status: ExitStatus) {
        self.p.fact(Fact::Exited { pid, status }, self.now);
    }

    fn notify(&mut self, msg: Notify) {
        self.p.fact(Fact::Notify { unit: U, msg }, self.now);
    }

    fn phase(&self) -> Phase {
        self.p.units[0].phase
    }

    fn state(&self) -> UnitState {
        self.p.state(U)
    }

    fn status(&self) -> String {
        self.p.view(U).map(|v| v.status).unwrap_or_default()
    }

    /// Applies `e` through the table alone, with the bookkeeping the
    /// planner does before it (as `fact` and `tick` do, without the rules
    /// after it); returns the actions it asked for, described.
    fn step(&mut self, e: Event) -> Vec<String> {
        self.p.take_actions();
        let to_table = match &e {
            Event::Spawned(role, pid) => {
                self.p.pids.insert(*pid, (U, *role));
                true
            }
            Event::SpawnFailed(role, _) => self.p.forget_spawn(U, *role),
            Event::Exited(role, pid, status) => {
                self.p.pids.remove(pid);
                self.p.forget_process(U, *role, *pid, *status)
            }
            Event::Timer(_) => {
                self.p.records[0].timer = None;
                true
            }
            _ => true,
        };
        if to_table {
            self.p.step(U, e);
        }
        self.p.take_actions().iter().map(describe).collect()
    }
}

fn describe(a: &Action) -> String {
    match a {
        Action::Spawn { role, .. } => format!("spawn {role:?}"),
        Action::Kill { whom, signal, .. } => format!("{} to {whom:?}", signal.name()),
        Action::ReadPidfile { .. } => "read pidfile".to_string(),
        Action::GuessMainPid { .. } => "guess the main PID".to_string(),
        Action::CheckConditions { .. } => "check conditions".to_string(),
        Action::SaveTimerStamp { .. } => "save the timer's stamp".to_string(),
        Action::Arm { .. } => "arm".to_string(),
        Action::Adopt { .. } => "adopt".to_string(),
        Action::Disarm { .. } => "disarm".to_string(),
        Action::AwaitEmpty { .. } => "await an empty cgroup".to_string(),
    }
}

const OK: ExitStatus = ExitStatus::Code(0);
const FAILED: ExitStatus = ExitStatus::Code(1);

// ----- reaching each phase ----------------------------------------------------

/// `Pre(0)`, the pre command (PID 10) running.
fn pre(kind: UnitType) -> T {
    let mut t = T::new(svc(kind));
    t.spawned(Role::Pre(0));
    assert_eq!(t.phase(), Phase::Pre(0));
    t
}

/// `Main`, the main process (PID 11) spawned.
fn main(kind: UnitType) -> T {
    let mut t = main_spawn_pending(kind);
    t.spawned(Role::Main);
    assert_eq!(t.phase(), Phase::Main);
    t
}

/// `Main`, the main process asked for and not reported yet.
fn main_spawn_pending(kind: UnitType) -> T {
    let mut t = pre(kind);
    t.exited(10, OK);
    assert_eq!(t.phase(), Phase::Main);
    t
}

/// `Up`: a notified unit whose main process (PID 11) said `READY=1`.
fn up() -> T {
    let mut t = main(UnitType::ForegroundNotified);
    t.notify(Notify::Ready);
    assert_eq!(t.phase(), Phase::Up);
    t
}

/// `Reloading`, `exec-reload` (PID 12) running.
fn reloading() -> T {
    let mut t = reloading_spawn_pending();
    t.spawned(Role::Reload);
    t
}

/// `Reloading`, `exec-reload` asked for and not reported yet.
fn reloading_spawn_pending() -> T {
    let mut t = up();
    t.p.reload_unit("svc", t.now).unwrap();
    assert_eq!(t.phase(), Phase::Reloading);
    t
}

/// `Stopping` (shutdown), `exec-stop` (PID 12) running, the main process
/// (PID 11) still there.
fn stopping() -> T {
    let mut t = stopping_spawn_pending();
    t.spawned(Role::Stop);
    t
}

/// `Stopping`, `exec-stop` asked for and not reported yet.
fn stopping_spawn_pending() -> T {
    let mut t = up();
    t.p.shutdown(t.now);
    assert_eq!(t.phase(), Phase::Stopping);
    t
}

/// `StopPost(0)`, the first stop-post command (PID 13) running.
fn stop_post() -> T {
    let mut t = stop_post_spawn_pending();
    t.spawned(Role::StopPost(0));
    t
}

/// `StopPost(0)`, its command asked for and not reported yet.
fn stop_post_spawn_pending() -> T {
    let mut t = stopping();
    t.exited(12, OK);
    t.exited(11, ExitStatus::Signal(15));
    assert_eq!(t.phase(), Phase::StopPost(0));
    t
}

/// `Idle`, `failed` with a restart pending (the pre command failed).
fn idle_failed() -> T {
    let mut t = pre(UnitType::ForegroundNotified);
    t.exited(10, FAILED);
    let a = t.spawned(Role::StopPost(0));
    t.exited(a, OK);
    let b = t.spawned(Role::StopPost(1));
    t.exited(b, OK);
    assert_eq!((t.phase(), t.state()), (Phase::Idle, UnitState::Failed));
    t
}

/// `Idle`, `disabled`: nothing requires the unit.
fn idle_disabled() -> T {
    let (g, _) = Graph::build(vec![(
        svc(UnitType::ForegroundNotified),
        Origin::unplaced("svc.yaml"),
    )]);
    T {
        p: Planner::new(g, "nothing", Instant(0), PlannerOptions::default()),
        next_pid: 10,
        now: Instant(1),
    }
}

// ----- Idle --------------------------------------------------------------------

#[test]
fn idle_start_runs_the_first_pre_command() {
    let mut t = idle_disabled();
    assert_eq!(t.step(Event::Start), ["spawn Pre(0)"]);
    assert_eq!((t.phase(), t.state()), (Phase::Pre(0), UnitState::Starting));
}

#[test]
fn idle_stop_runs_exec_stop_of_an_exited_unit() {
    let mut t = idle_disabled();
    assert_eq!(t.step(Event::Stop("not required")), ["spawn Stop"]);
    assert_eq!(
        (t.phase(), t.state()),
        (Phase::Stopping, UnitState::Stopping)
    );
}

#[test]
fn idle_restart_timer_allows_the_next_attempt() {
    let mut t = idle_failed();
    assert!(t.step(Event::Timer(Timer::Restart)).is_empty());
    assert!(t.p.units[0].restart_ready);
    assert_eq!(t.state(), UnitState::Failed);
}

// ----- Pre ---------------------------------------------------------------------

#[test]
fn pre_exit_0_starts_the_main_process() {
    let mut t = pre(UnitType::ForegroundNotified);
    assert_eq!(t.step(Event::Exited(Role::Pre(0), 10, OK)), ["spawn Main"]);
    assert_eq!((t.phase(), t.state()), (Phase::Main, UnitState::Starting));
}

#[test]
fn pre_failure_fails_the_start() {
    let mut t = pre(UnitType::ForegroundNotified);
    assert_eq!(
        t.step(Event::Exited(Role::Pre(0), 10, FAILED)),
        ["spawn StopPost(0)"]
    );
    assert_eq!(
        (t.phase(), t.state()),
        (Phase::StopPost(0), UnitState::Stopping)
    );
}

#[test]
fn pre_spawn_failed_fails_the_start() {
    let mut t = T::new(svc(UnitType::ForegroundNotified));
    let a = t.step(Event::SpawnFailed(Role::Pre(0), "no such file".into()));
    assert_eq!(a, ["spawn StopPost(0)"]);
    assert_eq!(t.phase(), Phase::StopPost(0));
    assert_eq!(
        t.p.records[0].rare().failure,
        Some(Failure::new(
            FailureKind::Resources,
            "exec-start-pre: no such file".into()
        ))
    );
}

#[test]
fn pre_start_timeout_stops_and_fails() {
    let mut t = pre(UnitType::ForegroundNotified);
    assert_eq!(
        t.step(Event::Timer(Timer::Start)),
        ["SIGKILL to GroupAndLeader(10)"]
    );
    assert_eq!(
        (t.phase(), t.state()),
        (Phase::Stopping, UnitState::Stopping)
    );
    assert_eq!(t.status(), "start timed out");
}

#[test]
fn pre_stop_kills_the_pre_command() {
    let mut t = pre(UnitType::ForegroundNotified);
    assert_eq!(
        t.step(Event::Stop("not required")),
        ["SIGKILL to GroupAndLeader(10)"]
    );
    assert_eq!(
        (t.phase(), t.state()),
        (Phase::Stopping, UnitState::Stopping)
    );
}

// ----- Main --------------------------------------------------------------------

#[test]
fn main_spawned_waits_for_readiness_or_is_up() {
    let mut t = main_spawn_pending(UnitType::ForegroundNotified);
    assert!(t.step(Event::Spawned(Role::Main, 11)).is_empty());
    assert_eq!((t.phase(), t.state()), (Phase::Main, UnitState::Starting));
    assert_eq!(t.p.records[0].main_pid, Some(11));

    let mut t = main_spawn_pending(UnitType::ForegroundSupervised);
    assert!(t.step(Event::Spawned(Role::Main, 11)).is_empty());
    assert_eq!((t.phase(), t.state()), (Phase::Up, UnitState::Running));
}

#[test]
fn main_spawn_failed_fails_the_start() {
    let mut t = main_spawn_pending(UnitType::ForegroundNotified);
    let a = t.step(Event::SpawnFailed(Role::Main, "no such file".into()));
    assert_eq!(a, ["spawn StopPost(0)"]);
    assert_eq!(t.phase(), Phase::StopPost(0));
}

/// systemd's `Type=simple` against `Type=exec` (testsuite-23): a main
/// process that fails before its program runs (its user not found, an
/// `execve` refused) fails the start of an `exec` unit, and is the failure
/// of a `simple` one after its start was done, with systemd's status.
#[test]
fn main_spawn_failed_at_fork_is_up_then_the_process_failure() {
    for (status, kind) in [(217, FailureKind::ExitCode), (203, FailureKind::ExitCode)] {
        let mut spec = svc(UnitType::ForegroundSupervised);
        spec.extras.started_at_fork = Some(true);
        let mut t = T::new(spec);
        t.spawned(Role::Pre(0));
        t.exited(10, OK);
        let a = t.step(Event::SpawnFailed(
            Role::Main,
            "user idontexist: no such user".into(),
        ));
        assert!(a.is_empty(), "{a:?}");
        assert_eq!((t.phase(), t.state()), (Phase::Up, UnitState::Running));
        assert!(t.p.records[0].rare().failed_at_fork);

        let a = t.step(Event::ExecFailed(
            status,
            "user idontexist: no such user".into(),
        ));
        assert_eq!(a, ["spawn StopPost(0)"]);
        assert_eq!(t.phase(), Phase::StopPost(0));
        assert_eq!(
            t.p.records[0].rare().failure,
            Some(Failure {
                kind,
                exit: Some(status),
                why: "user idontexist: no such user".into()
            })
        );
        assert!(!t.p.records[0].rare().failed_at_fork);
    }
    // The same unit as `Type=exec`: its start fails (as
    // `main_spawn_failed_fails_the_start`), and a later report changes
    // nothing.
    let mut t = main_spawn_pending(UnitType::ForegroundSupervised);
    let a = t.step(Event::SpawnFailed(Role::Main, "no such file".into()));
    assert_eq!(a, ["spawn StopPost(0)"]);
    assert!(!t.p.records[0].rare().failed_at_fork);
    assert!(t.step(Event::ExecFailed(203, "x".into())).is_empty());
    assert_eq!(t.phase(), Phase::StopPost(0));
}

/// A `started-at-fork` unit with `exec-start-post`: the post command runs
/// once the main process is forked, as systemd's; the failure stops it.
#[test]
fn main_spawn_failed_at_fork_runs_exec_start_post_first() {
    let mut spec = svc(UnitType::ForegroundSupervised);
    spec.extras.started_at_fork = Some(true);
    spec.extras.exec_start_post = vec![Command::new(["/bin/poststart"])].into();
    let mut t = T::new(spec);
    t.spawned(Role::Pre(0));
    t.exited(10, OK);
    let a = t.step(Event::SpawnFailed(Role::Main, "x".into()));
    assert_eq!(a, ["spawn Post(0)"]);
    assert_eq!((t.phase(), t.state()), (Phase::Main, UnitState::Starting));
    let a = t.step(Event::Spawned(Role::Post(0), 12));
    assert!(a.is_empty(), "{a:?}");
    let a = t.step(Event::ExecFailed(217, "x".into()));
    assert_eq!(a, ["SIGKILL to GroupAndLeader(12)"]);
    assert_eq!(
        (t.phase(), t.state()),
        (Phase::Stopping, UnitState::Stopping)
    );
    assert_eq!(
        t.p.records[0].rare().failure.as_ref().map(|f| f.exit),
        Some(Some(217))
    );
}

#[test]
fn main_ready_is_up() {
    let mut t = main(UnitType::ForegroundNotified);
    assert!(t.step(Event::Ready).is_empty());
    assert_eq!((t.phase(), t.state()), (Phase::Up, UnitState::Running));
    assert_eq!(t.status(), "ready");
}

#[test]
fn main_ready_line_is_up() {
    let mut t = main(UnitType::ForegroundNotified);
    assert!(t.step(Event::ReadyLine).is_empty());
    assert_eq!(
        (t.phase(), t.status()),
        (Phase::Up, "ready (output matched)".into())
    );
}

#[test]
fn main_with_a_bus_name_waits_for_it() {
    let mut spec = svc(UnitType::ForegroundSupervised);
    spec.extras.ready_bus_name = Some("org.example.Svc".into());
    let mut t = T::new(spec.clone());
    t.spawned(Role::Pre(0));
    t.exited(10, OK);
    t.spawned(Role::Main);
    assert_eq!((t.phase(), t.state()), (Phase::Main, UnitState::Starting));
    // Another name, or the name given up, changes nothing.
    let names = |owned: &[&str], released: &[&str], whole| Fact::BusNames {
        owned: owned.iter().map(|n| n.to_string()).collect(),
        released: released.iter().map(|n| n.to_string()).collect(),
        whole,
    };
    t.p.fact(
        names(&["org.example.Other"], &["org.example.Svc"], false),
        t.now,
    );
    assert_eq!(t.phase(), Phase::Main);
    t.p.fact(names(&["org.example.Svc"], &[], false), t.now);
    assert_eq!(
        (t.phase(), t.status()),
        (Phase::Up, "ready (its D-Bus name is taken)".into())
    );
    // Given up while up: stopped, as systemd stops a `Type=dbus` service
    // whose name is gone (its end then judged as one it asked for).
    t.p.fact(names(&[], &["org.example.Svc"], false), t.now);
    assert_eq!(
        (t.phase(), t.status()),
        (
            Phase::Stopping,
            "stopping (its D-Bus name was released)".into()
        )
    );
    assert!(t.p.records[0].self_stop);

    // A name already owned (the whole list) when the main process starts:
    // up at once.
    let mut t = T::new(spec.clone());
    t.p.fact(
        names(&["org.example.Svc", "org.example.Other"], &[], true),
        t.now,
    );
    t.spawned(Role::Pre(0));
    t.exited(10, OK);
    t.spawned(Role::Main);
    assert_eq!(t.phase(), Phase::Up);
    // A whole list without it (busd on a new bus: `systemctl restart
    // dbus`, and the daemon did not come back onto it): forgotten, and the
    // unit, up, is stopped.
    t.p.fact(names(&["org.example.Other"], &[], true), t.now);
    assert!(!t.p.bus_name_owned(U));
    assert_eq!(t.phase(), Phase::Stopping);

    // Carried across a re-exec; and a unit up whose name the planner was
    // never told (an older image's re-exec) is stopped all the same by a
    // whole list without it, or by its release.
    let mut t = T::new(spec.clone());
    t.p.resume_bus_names(vec!["org.example.Svc".into()]);
    assert_eq!(t.p.carry_bus_names(), ["org.example.Svc"]);
    for report in [
        names(&["org.example.Other"], &[], true),
        names(&[], &["org.example.Svc"], false),
    ] {
        let mut t = T::new(spec.clone());
        t.p.fact(names(&["org.example.Svc"], &[], true), t.now);
        t.spawned(Role::Pre(0));
        t.exited(10, OK);
        t.spawned(Role::Main);
        assert_eq!(t.phase(), Phase::Up);
        t.p.resume_bus_names(Vec::new());
        t.p.fact(report, t.now);
        assert_eq!(t.phase(), Phase::Stopping);
    }
}

#[test]
fn main_ready_wait_is_up() {
    let mut t = main(UnitType::ForegroundNotified);
    assert!(t.step(Event::Timer(Timer::ReadyWait)).is_empty());
    assert_eq!(
        (t.phase(), t.status()),
        (Phase::Up, "running (ready-wait elapsed)".into())
    );
}

#[test]
fn main_start_timeout_stops_and_fails() {
    let mut t = main(UnitType::ForegroundNotified);
    assert_eq!(
        t.step(Event::Timer(Timer::Start)),
        ["SIGTERM to GroupAndLeader(11)"]
    );
    assert_eq!(
        (t.phase(), t.status()),
        (Phase::Stopping, "start timed out".into())
    );
}

#[test]
fn main_exit_before_ready_is_a_failure_or_hands_over() {
    let mut t = main(UnitType::ForegroundNotified);
    let a = t.step(Event::Exited(Role::Main, 11, OK));
    assert_eq!(a, ["SIGKILL to Group(11)", "spawn StopPost(0)"]);
    assert_eq!(
        t.p.records[0].rare().failure,
        Some(Failure::of_exit(
            OK,
            "exit status 0 before it was ready".into()
        ))
    );
    assert_eq!(
        t.p.records[0].rare().failure.as_ref().map(|f| f.kind),
        Some(FailureKind::Protocol)
    );

    // A oneshot's exit 0 is `exited`.
    let mut t = main(UnitType::Oneshot);
    assert!(t.step(Event::Exited(Role::Main, 11, OK)).is_empty());
    assert_eq!((t.phase(), t.state()), (Phase::Idle, UnitState::Exited));

    // A start script's exit 0: up, its group kept as the service's.
    let mut t = main(UnitType::BackgroundScripted);
    assert!(t.step(Event::Exited(Role::Main, 11, OK)).is_empty());
    assert_eq!((t.phase(), t.status()), (Phase::Up, "started".into()));
    assert_eq!(t.p.records[0].rare().script_group, Some(11));

    // A forking daemon's exit 0: its pidfile is read.
    let mut t = main(UnitType::BackgroundPidfile);
    assert_eq!(t.step(Event::Exited(Role::Main, 11, OK)), ["read pidfile"]);
    assert_eq!(t.phase(), Phase::Main);
}

/// A forking daemon without a pidfile whose start command left nothing
/// (Debian's `rpc-statd-notify.service`: `sm-notify` exits 0): done, as
/// systemd's, `exited` with `RemainAfterExit=yes`, else inactive; a
/// success either way, after its `exec-start-post`.
#[test]
fn main_no_main_process_ends_as_a_oneshot() {
    let forking = |remain: bool, post: bool| {
        let mut s = svc(UnitType::BackgroundPidfile);
        s.extras.pidfile = None;
        s.remain_after_exit = Some(remain);
        if post {
            s.extras.exec_start_post = vec![Command::new(["/bin/post"])].into();
        }
        let mut t = T::new(s);
        t.spawned(Role::Pre(0));
        t.exited(10, OK);
        t.spawned(Role::Main);
        t.exited(11, OK);
        t
    };
    let mut t = forking(true, false);
    assert!(t.step(Event::NoMainProcess).is_empty());
    assert_eq!((t.phase(), t.state()), (Phase::Idle, UnitState::Exited));
    assert_eq!(t.p.records[0].main_pid, None);
    assert!(t.p.records[0].rare().failure.is_none());

    let mut t = forking(false, false);
    t.step(Event::NoMainProcess);
    assert_eq!(t.phase(), Phase::Idle);
    assert!(t.p.records[0].rare().failure.is_none());
    assert_ne!(t.state(), UnitState::Failed);

    let mut t = forking(true, true);
    assert_eq!(t.step(Event::NoMainProcess), ["spawn Post(0)"]);
    assert_eq!(t.phase(), Phase::Main);
    let post = t.next_pid;
    t.step(Event::Spawned(Role::Post(0), post));
    t.step(Event::Exited(Role::Post(0), post, OK));
    assert_eq!((t.phase(), t.state()), (Phase::Idle, UnitState::Exited));
}

#[test]
fn main_pidfile_read_is_up_or_read_again() {
    let mut t = main(UnitType::BackgroundPidfile);
    t.exited(11, OK);
    assert!(t.step(Event::Pidfile(Ok(42))).is_empty());
    assert_eq!((t.phase(), t.p.records[0].main_pid), (Phase::Up, Some(42)));

    let mut t = main(UnitType::BackgroundPidfile);
    t.exited(11, OK);
    assert!(t
        .step(Event::Pidfile(Err("no such file".into())))
        .is_empty());
    assert_eq!(t.phase(), Phase::Main);
    assert_eq!(t.status(), "waiting for the pidfile (no such file)");
    assert!(matches!(t.p.records[0].timer, Some((_, Timer::Pidfile))));
}

/// systemd's rule for a forking daemon that moves to a new main process
/// (nginx's binary upgrade): when the main process exits while up, the
/// pidfile is read again; a new running PID is the main process, and only
/// a file that names none makes the exit count.
#[test]
fn up_pidfile_daemon_follows_its_pidfile_when_the_main_exits() {
    let mut t = main(UnitType::BackgroundPidfile);
    t.exited(11, OK);
    assert!(t.step(Event::Pidfile(Ok(42))).is_empty());
    assert_eq!(t.phase(), Phase::Up);

    // The old master exits; the pidfile names the new one.
    assert_eq!(t.step(Event::Exited(Role::Main, 42, OK)), ["read pidfile"]);
    assert!(t.step(Event::Pidfile(Ok(43))).is_empty());
    assert_eq!((t.phase(), t.state()), (Phase::Up, UnitState::Running));
    assert_eq!(t.p.records[0].main_pid, Some(43));
    assert_eq!(
        t.status(),
        "running (main process now 43, from the pidfile)"
    );
    assert!(t.p.records[0].rare().following.is_none());

    // Then it dies, and the pidfile names nobody running: a failure.
    assert_eq!(
        t.step(Event::Exited(Role::Main, 43, FAILED)),
        ["read pidfile"]
    );
    t.step(Event::Pidfile(Err("PID 43 is not running".into())));
    assert_eq!(t.state(), UnitState::Stopping, "what it left is stopped");
    assert_eq!(
        t.p.records[0]
            .rare()
            .failure
            .as_ref()
            .map(|f| f.why.as_str()),
        Some("exit status 1")
    );
}

#[test]
fn main_pidfile_timer_reads_it_again() {
    let mut t = main(UnitType::BackgroundPidfile);
    assert_eq!(t.step(Event::Timer(Timer::Pidfile)), ["read pidfile"]);
}

#[test]
fn main_stop_signals_the_main_process() {
    let mut t = main(UnitType::ForegroundNotified);
    assert_eq!(
        t.step(Event::Stop("not required")),
        ["SIGTERM to GroupAndLeader(11)"]
    );
    assert_eq!(t.phase(), Phase::Stopping);
}

// ----- Up ----------------------------------------------------------------------

#[test]
fn up_reload_runs_exec_reload() {
    let mut t = up();
    assert_eq!(t.step(Event::Reload), ["spawn Reload"]);
    assert_eq!(
        (t.phase(), t.state()),
        (Phase::Reloading, UnitState::Reloading)
    );
}

#[test]
fn up_reloading_message_is_reloading() {
    let mut t = up();
    assert!(t.step(Event::Reloading).is_empty());
    assert_eq!(
        (t.phase(), t.state()),
        (Phase::Reloading, UnitState::Reloading)
    );
}

#[test]
fn up_main_exit_is_exited_or_a_failure() {
    let mut t = up();
    let a = t.step(Event::Exited(Role::Main, 11, OK));
    assert_eq!(a, ["SIGKILL to Group(11)", "spawn StopPost(0)"]);
    assert!(t.p.records[0].exit_ok);

    let mut t = up();
    let a = t.step(Event::Exited(Role::Main, 11, ExitStatus::Signal(9)));
    assert_eq!(a, ["SIGKILL to Group(11)", "spawn StopPost(0)"]);
    assert_eq!(
        t.p.records[0].rare().failure,
        Some(Failure {
            kind: FailureKind::Signal,
            exit: Some(9),
            why: "killed by SIGKILL".into()
        })
    );
}

#[test]
fn up_stopping_message_stops_by_itself() {
    let mut t = up();
    assert!(t.step(Event::Stopping).is_empty());
    assert_eq!(
        (t.phase(), t.state()),
        (Phase::Stopping, UnitState::Stopping)
    );
    assert!(t.p.records[0].self_stop);
}

#[test]
fn up_stop_runs_exec_stop() {
    let mut t = up();
    assert_eq!(t.step(Event::Stop("not required")), ["spawn Stop"]);
    assert_eq!(
        (t.phase(), t.status()),
        (Phase::Stopping, "not required".into())
    );
}

// ----- Reloading ---------------------------------------------------------------

#[test]
fn reloading_ready_without_a_reload_command_is_up() {
    let mut t = up();
    t.notify(Notify::Reloading);
    assert!(t.step(Event::Ready).is_empty());
    assert_eq!((t.phase(), t.status()), (Phase::Up, "reloaded".into()));
}

#[test]
fn reloading_reload_command_exit_is_up() {
    let mut t = reloading();
    assert!(t.step(Event::Exited(Role::Reload, 12, OK)).is_empty());
    assert_eq!((t.phase(), t.status()), (Phase::Up, "reloaded".into()));

    assert_eq!(t.p.records[0].rare().reload_failure, None);

    // A failed reload: the unit stays up and running, the reload failed
    // (systemd's `ReloadResult=exit-code`, the job failed).
    let mut t = reloading();
    assert!(t.step(Event::Exited(Role::Reload, 12, FAILED)).is_empty());
    assert_eq!(
        (t.phase(), t.state(), t.status()),
        (
            Phase::Up,
            UnitState::Running,
            "exec-reload: exit status 1".into()
        )
    );
    assert_eq!(
        t.p.view(U).and_then(|v| v.reload_failure),
        Some(FailureKind::ExitCode)
    );
    // The next reload starts afresh.
    assert_eq!(t.step(Event::Reload), ["spawn Reload"]);
    assert_eq!(t.p.view(U).and_then(|v| v.reload_failure), None);
}

/// `up` with `svc`'s reload commands replaced by `commands`, the first
/// one `exec-reload`, the others after it.
fn up_reloading_with(commands: Vec<Command>) -> T {
    let mut spec = svc(UnitType::ForegroundNotified);
    let mut commands = commands.into_iter();
    spec.extras.exec_reload = commands.next();
    spec.extras.exec_reload_then = commands.collect::<Vec<_>>().into();
    let mut t = T::new(spec);
    t.spawned(Role::Pre(0));
    t.exited(10, OK);
    t.spawned(Role::Main);
    t.notify(Notify::Ready);
    assert_eq!(t.phase(), Phase::Up);
    assert_eq!(t.step(Event::Reload), ["spawn Reload"]);
    t
}

#[test]
fn reloading_runs_every_reload_command_until_one_fails() {
    let c = |w: &str| Command::new([w]);
    let mut t = up_reloading_with(vec![c("/bin/true"), c("/bin/false"), c("/bin/true")]);
    assert_eq!(
        t.step(Event::Exited(Role::Reload, 12, OK)),
        ["spawn ReloadThen(0)"]
    );
    assert_eq!(t.phase(), Phase::Reloading);
    // The second fails: the third never runs, the unit stays up.
    assert!(t
        .step(Event::Exited(Role::ReloadThen(0), 13, FAILED))
        .is_empty());
    assert_eq!((t.phase(), t.state()), (Phase::Up, UnitState::Running));
    assert_eq!(
        t.p.records[0].rare().reload_failure,
        Some(FailureKind::ExitCode)
    );

    // Every one succeeds: reloaded after the last.
    let mut t = up_reloading_with(vec![c("/bin/a"), c("/bin/b"), c("/bin/c")]);
    assert_eq!(
        t.step(Event::Exited(Role::Reload, 12, OK)),
        ["spawn ReloadThen(0)"]
    );
    assert_eq!(
        t.step(Event::Exited(Role::ReloadThen(0), 13, OK)),
        ["spawn ReloadThen(1)"]
    );
    assert!(t
        .step(Event::Exited(Role::ReloadThen(1), 14, OK))
        .is_empty());
    assert_eq!((t.phase(), t.status()), (Phase::Up, "reloaded".into()));
    assert_eq!(t.p.records[0].rare().reload_failure, None);

    // A command that may fail (`-`): its failure is not the reload's, and
    // a signal is a failure of its own kind.
    let mut may_fail = c("/bin/false");
    may_fail.ignore_failure = true;
    let mut t = up_reloading_with(vec![may_fail, c("/bin/b")]);
    assert_eq!(
        t.step(Event::Exited(Role::Reload, 12, FAILED)),
        ["spawn ReloadThen(0)"]
    );
    assert!(t
        .step(Event::Exited(
            Role::ReloadThen(0),
            13,
            ExitStatus::Signal(9)
        ))
        .is_empty());
    assert_eq!(
        t.p.records[0].rare().reload_failure,
        Some(FailureKind::Signal)
    );
}

#[test]
fn reloading_spawn_failed_is_up() {
    let mut t = reloading_spawn_pending();
    let a = t.step(Event::SpawnFailed(Role::Reload, "no such file".into()));
    assert!(a.is_empty());
    assert_eq!(
        (t.phase(), t.status()),
        (Phase::Up, "exec-reload: no such file".into())
    );
    assert_eq!(
        t.p.records[0].rare().reload_failure,
        Some(FailureKind::Resources)
    );
}

#[test]
fn reloading_timeout_kills_the_reload_command() {
    let mut t = reloading();
    assert_eq!(
        t.step(Event::Timer(Timer::Reload)),
        ["SIGKILL to GroupAndLeader(12)"]
    );
    assert_eq!(
        (t.phase(), t.status()),
        (Phase::Up, "reload timed out".into())
    );
    assert_eq!(
        t.p.records[0].rare().reload_failure,
        Some(FailureKind::Timeout)
    );
}

#[test]
fn reloading_main_exit_is_like_up() {
    let mut t = reloading();
    let a = t.step(Event::Exited(Role::Main, 11, FAILED));
    assert_eq!(a, ["SIGKILL to GroupAndLeader(12)"], "the reload command");
    assert_eq!(
        (t.phase(), t.status()),
        (Phase::Stopping, "exit status 1".into())
    );
}

#[test]
fn reloading_stopping_message_stops_by_itself() {
    let mut t = reloading();
    assert!(t.step(Event::Stopping).is_empty());
    assert_eq!(t.phase(), Phase::Stopping);
}

#[test]
fn reloading_stop_runs_exec_stop_and_kills_the_reload_command() {
    let mut t = reloading();
    assert_eq!(
        t.step(Event::Stop("not required")),
        ["SIGKILL to GroupAndLeader(12)", "spawn Stop"]
    );
    assert_eq!(t.phase(), Phase::Stopping);
}

// ----- Stopping ----------------------------------------------------------------

#[test]
fn stopping_main_exit_waits_for_exec_stop() {
    let mut t = stopping();
    assert!(t
        .step(Event::Exited(Role::Main, 11, ExitStatus::Signal(15)))
        .is_empty());
    assert_eq!(t.phase(), Phase::Stopping);
}

#[test]
fn stopping_pre_exit_moves_on_to_stop_post() {
    let mut t = pre(UnitType::ForegroundNotified);
    t.step(Event::Stop("not required"));
    let a = t.step(Event::Exited(Role::Pre(0), 10, ExitStatus::Signal(9)));
    assert_eq!(a, ["spawn StopPost(0)"]);
    assert_eq!(t.phase(), Phase::StopPost(0));
}

#[test]
fn stopping_exec_stop_exit_signals_what_is_left() {
    let mut t = stopping();
    assert_eq!(
        t.step(Event::Exited(Role::Stop, 12, FAILED)),
        ["SIGTERM to GroupAndLeader(11)"]
    );
    assert_eq!(
        (t.phase(), t.status()),
        (Phase::Stopping, "exec-stop: exit status 1".into())
    );
}

#[test]
fn stopping_sends_sighup_after_the_kill_signal_when_asked() {
    let mut t = stopping();
    // As if `svc` had been started with `SendSIGHUP=yes`.
    let mut spec = t.running_with(|s| s.extras.context.send_sighup = true);
    assert_eq!(
        t.step(Event::Exited(Role::Stop, 12, FAILED)),
        [
            "SIGTERM to GroupAndLeader(11)",
            "SIGHUP to GroupAndLeader(11)"
        ]
    );
    // None after a SIGKILL: nothing is left to hear it.
    let mut t = stopping();
    spec.kill_signal = crate::spec::Signal::KILL;
    t.p.records[0].running_spec = Some(spec.into());
    assert_eq!(
        t.step(Event::Exited(Role::Stop, 12, FAILED)),
        ["SIGKILL to GroupAndLeader(11)"]
    );
}

/// `RestartKillSignal=`: the stop that begins a restart asked for by hand
/// sends it; any other stop sends the kill signal.
#[test]
fn a_restart_by_hand_stops_with_the_restart_kill_signal() {
    let mut t = stopping();
    let spec =
        t.running_with(|s| s.extras.restart_kill_signal = crate::spec::Signal::parse("SIGUSR2"));
    assert_eq!(
        t.step(Event::Exited(Role::Stop, 12, FAILED)),
        ["SIGTERM to GroupAndLeader(11)"]
    );
    let mut t = stopping();
    t.p.records[0].running_spec = Some(spec.into());
    t.p.units[0].restart_requested = true;
    assert_eq!(
        t.step(Event::Exited(Role::Stop, 12, FAILED)),
        ["SIGUSR2 to GroupAndLeader(11)"]
    );
}

#[test]
fn stopping_exec_stop_spawn_failed_sends_the_kill_signal() {
    let mut t = stopping_spawn_pending();
    assert_eq!(
        t.step(Event::SpawnFailed(Role::Stop, "no such file".into())),
        ["SIGTERM to GroupAndLeader(11)"]
    );
    assert_eq!(t.status(), "exec-stop: no such file");
}

#[test]
fn stopping_timeout_sends_sigkill_to_everything() {
    let mut t = stopping();
    assert_eq!(
        t.step(Event::Timer(Timer::Stop)),
        [
            "SIGKILL to GroupAndLeader(11)",
            "SIGKILL to GroupAndLeader(12)"
        ]
    );
    assert!(matches!(t.p.records[0].timer, Some((_, Timer::Abandon))));
}

/// `SendSIGKILL=no` (systemd: "timed out. Skipping SIGKILL."): no signal,
/// the processes abandoned at once, and the unit `failed` with `timeout`.
#[test]
fn stopping_timeout_with_send_sigkill_no_abandons_and_fails() {
    let mut t = stopping();
    t.running_with(|s| s.extras.context.no_sigkill = true);
    assert_eq!(t.step(Event::Timer(Timer::Stop)), ["spawn StopPost(0)"]);
    assert!(t.p.owner(11).is_none() && t.p.owner(12).is_none());
    for n in 0..2 {
        let pid = 13 + i32::from(n);
        t.step(Event::Spawned(Role::StopPost(n), pid));
        t.step(Event::Exited(Role::StopPost(n), pid, OK));
    }
    assert_eq!((t.phase(), t.state()), (Phase::Idle, UnitState::Failed));
    let failure = t.p.records[0].rare().failure.clone();
    assert_eq!(failure.map(|f| f.kind), Some(FailureKind::Timeout));
}

#[test]
fn stopping_abandon_gives_up_on_the_processes() {
    let mut t = stopping();
    assert_eq!(t.step(Event::Timer(Timer::Abandon)), ["spawn StopPost(0)"]);
    assert_eq!(t.phase(), Phase::StopPost(0));
    assert!(t.p.owner(11).is_none() && t.p.owner(12).is_none());
}

// ----- StopPost ----------------------------------------------------------------

#[test]
fn stop_post_exit_runs_the_next_one_then_idle() {
    let mut t = stop_post();
    assert_eq!(
        t.step(Event::Exited(Role::StopPost(0), 13, FAILED)),
        ["spawn StopPost(1)"]
    );
    assert_eq!(t.phase(), Phase::StopPost(1));
    t.step(Event::Spawned(Role::StopPost(1), 14));
    assert!(t.step(Event::Exited(Role::StopPost(1), 14, OK)).is_empty());
    assert_eq!((t.phase(), t.state()), (Phase::Idle, UnitState::Disabled));
}

#[test]
fn stop_post_spawn_failed_runs_the_next_one() {
    let mut t = stop_post_spawn_pending();
    let a = t.step(Event::SpawnFailed(Role::StopPost(0), "no such file".into()));
    assert_eq!(a, ["spawn StopPost(1)"]);
}

// ----- any phase ---------------------------------------------------------------

#[test]
fn an_unwanted_main_process_is_killed() {
    for mut t in [up(), stopping(), idle_disabled()] {
        assert_eq!(
            t.step(Event::Spawned(Role::Main, 99)),
            ["SIGKILL to GroupAndLeader(99)"]
        );
    }
}

#[test]
fn a_helper_is_kept_if_awaited_else_killed() {
    let mut t = reloading_spawn_pending();
    assert!(t.step(Event::Spawned(Role::Reload, 12)).is_empty());
    assert_eq!(t.p.records[0].helper, Some((Role::Reload, Some(12))));
    assert_eq!(
        t.step(Event::Spawned(Role::Stop, 13)),
        ["SIGKILL to GroupAndLeader(13)"]
    );
}

#[test]
fn a_daemon_read_too_late_is_killed() {
    for mut t in [up(), idle_disabled()] {
        assert_eq!(
            t.step(Event::Pidfile(Ok(42))),
            ["SIGTERM to Group(42)", "SIGTERM to Process(42)"]
        );
    }
}

/// A way to bring the unit into a phase.
type Setup = fn() -> T;

/// The table's empty cells: each of these events leaves the unit as it is
/// in that phase (what the bookkeeping before the table would filter is
/// fed to the table directly).
#[test]
fn unlisted_pairs_change_nothing() {
    use Event as E;
    let exited = |r| E::Exited(r, 77, OK);
    let failed = |r| E::SpawnFailed(r, "x".into());
    let timer = E::Timer;
    let common = || {
        vec![
            E::Reloading,
            E::Stopping,
            E::Pidfile(Err("x".into())),
            E::NoMainProcess,
            timer(Timer::Restart),
            // Stale: no main process failed at its fork.
            E::ExecFailed(217, "x".into()),
        ]
    };
    let cases: Vec<(&str, Setup, Vec<Event>)> = vec![
        (
            "Idle",
            idle_disabled,
            vec![
                E::Reload,
                failed(Role::Main),
                failed(Role::Stop),
                failed(Role::StopPost(0)),
                exited(Role::Main),
                exited(Role::Pre(0)),
                exited(Role::Stop),
                E::Ready,
                E::ReadyLine,
                E::BusName,
                E::Reloading,
                E::Stopping,
                E::Pidfile(Err("x".into())),
                E::NoMainProcess,
                timer(Timer::Start),
                timer(Timer::ReadyWait),
                timer(Timer::Reload),
                timer(Timer::Stop),
                timer(Timer::Abandon),
                timer(Timer::Pidfile),
            ],
        ),
        (
            "Pre",
            || pre(UnitType::ForegroundNotified),
            [
                vec![
                    E::Start,
                    E::Reload,
                    exited(Role::Pre(1)),
                    exited(Role::Stop),
                    exited(Role::Reload),
                    E::Ready,
                    E::ReadyLine,
                    E::BusName,
                    timer(Timer::ReadyWait),
                    timer(Timer::Stop),
                    timer(Timer::Abandon),
                    timer(Timer::Pidfile),
                ],
                common(),
            ]
            .concat(),
        ),
        (
            "Main",
            || main(UnitType::BackgroundPidfile),
            [
                vec![
                    E::Start,
                    E::Reload,
                    E::Ready,
                    exited(Role::Pre(0)),
                    exited(Role::Stop),
                    timer(Timer::Reload),
                    timer(Timer::Stop),
                    timer(Timer::Abandon),
                ],
                vec![E::Reloading, E::Stopping, timer(Timer::Restart)],
            ]
            .concat(),
        ),
        (
            "Up",
            up,
            vec![
                E::Start,
                failed(Role::Main),
                exited(Role::Pre(0)),
                exited(Role::Stop),
                exited(Role::StopPost(0)),
                E::Ready,
                E::ReadyLine,
                E::BusName,
                E::Pidfile(Err("x".into())),
                E::NoMainProcess,
                timer(Timer::Start),
                timer(Timer::ReadyWait),
                timer(Timer::Reload),
                timer(Timer::Stop),
                timer(Timer::Abandon),
                timer(Timer::Restart),
                timer(Timer::Pidfile),
            ],
        ),
        (
            "Reloading",
            reloading,
            vec![
                E::Start,
                E::Reload,
                E::Ready,
                E::ReadyLine,
                E::BusName,
                E::Reloading,
                exited(Role::Stop),
                E::Pidfile(Err("x".into())),
                E::NoMainProcess,
                timer(Timer::Start),
                timer(Timer::Stop),
                timer(Timer::Restart),
                timer(Timer::Pidfile),
            ],
        ),
        (
            "Stopping",
            stopping,
            vec![
                E::Start,
                E::Stop("x"),
                E::Reload,
                E::Ready,
                E::ReadyLine,
                E::BusName,
                exited(Role::Reload),
                timer(Timer::Start),
                timer(Timer::ReadyWait),
                timer(Timer::Reload),
                timer(Timer::Pidfile),
            ]
            .into_iter()
            .chain(common())
            .collect(),
        ),
        (
            "StopPost",
            stop_post,
            vec![
                E::Start,
                E::Stop("x"),
                E::Reload,
                E::Ready,
                E::ReadyLine,
                E::BusName,
                exited(Role::Main),
                exited(Role::StopPost(1)),
                timer(Timer::Start),
                timer(Timer::ReadyWait),
                timer(Timer::Reload),
                timer(Timer::Stop),
                timer(Timer::Abandon),
                timer(Timer::Pidfile),
            ]
            .into_iter()
            .chain(common())
            .collect(),
        ),
    ];
    for (phase, setup, events) in cases {
        for e in events {
            let mut t = setup();
            t.p.take_actions();
            let before = format!("{:?} {:?}", t.p.units[0], t.p.records[0]);
            let what = format!("{phase} + {e:?}");
            // Fed to the table directly: the bookkeeping would drop most.
            t.p.step(U, e);
            assert!(t.p.take_actions().is_empty(), "{what}: no action");
            let after = format!("{:?} {:?}", t.p.units[0], t.p.records[0]);
            assert_eq!(before, after, "{what}: nothing changes");
        }
    }
}

// ----- a scope: processes adopted, not spawned -----------------------------

/// A scope as logind makes one over D-Bus: no command, its processes
/// given.
fn scope() -> T {
    let mut s = UnitSpec::new("svc", UnitType::Scope);
    s.restart = RestartPolicy::No;
    s.extras.context.send_sighup = true;
    T::new(s)
}

/// Its start asks the init to adopt its processes, and it is up once the
/// first of them is reported as its main process; their end (the init
/// reports the main process's exit once none is left) ends it without a
/// failure.
#[test]
fn a_scope_is_adopted_up_at_once_and_ends_with_its_processes() {
    let mut t = scope();
    let a = t.p.take_actions();
    assert_eq!(a.iter().map(describe).collect::<Vec<_>>(), ["adopt"]);
    assert_eq!(t.phase(), Phase::Main);
    assert_eq!(t.state(), UnitState::Starting);
    let pid = 4242;
    t.p.fact(
        Fact::Spawned {
            unit: U,
            role: Role::Main,
            pid,
        },
        t.now,
    );
    assert_eq!(t.phase(), Phase::Up);
    assert_eq!(t.state(), UnitState::Running);
    t.p.fact(Fact::ScopeEnded { unit: U }, t.now);
    assert_eq!(t.phase(), Phase::Idle);
    assert_ne!(t.state(), UnitState::Failed);
}

/// logind's session of a console login adopts the getty's `login`, the
/// getty's main process: its exit stays the getty's, and the scope ends
/// when the init says its processes are gone (`ScopeEnded`), not at that
/// exit.
#[test]
fn a_scope_adopting_another_units_process_leaves_its_exit_to_that_unit() {
    let mut getty = UnitSpec::new("getty", UnitType::ForegroundSupervised);
    getty.exec_start = Some(Command::new(["/sbin/agetty"]));
    let mut session = UnitSpec::new("session", UnitType::Scope);
    session.restart = RestartPolicy::No;
    let mut all = UnitSpec::new("all", UnitType::Virtual);
    all.depends_on = vec!["getty".into(), "session".into()].into();
    let units = [getty, session, all].map(|s| (s, Origin::unplaced("u.yaml")));
    let (g, d) = Graph::build(units.into());
    assert!(d.is_empty(), "{d:?}");
    let id = |n: &str| g.unit(n).expect(n);
    let (getty, session) = (id("getty"), id("session"));
    let mut p = Planner::new(g, "all", Instant(0), PlannerOptions::default());
    p.take_actions();
    let now = Instant(1);
    let login = 500;
    for unit in [getty, session] {
        let role = Role::Main;
        p.fact(
            Fact::Spawned {
                unit,
                role,
                pid: login,
            },
            now,
        );
    }
    assert_eq!(p.state(getty), UnitState::Running);
    assert_eq!(p.state(session), UnitState::Running);
    // The scope's processes end: the scope ends, the getty runs on.
    p.fact(Fact::ScopeEnded { unit: session }, now);
    assert_ne!(p.state(session), UnitState::Running);
    assert_eq!(p.state(getty), UnitState::Running);
    // `login` exits: the getty's main process.
    let status = ExitStatus::Code(0);
    p.fact(Fact::Exited { pid: login, status }, now);
    assert_ne!(p.state(getty), UnitState::Running);
}

/// A scope whose processes cannot be adopted (gone already) fails.
#[test]
fn a_scope_that_cannot_adopt_fails() {
    let mut t = scope();
    t.p.take_actions();
    t.p.fact(
        Fact::SpawnFailed {
            unit: U,
            role: Role::Main,
            error: "process 4242: no such process".into(),
        },
        t.now,
    );
    assert_eq!(t.state(), UnitState::Failed);
}

/// Its stop signals its processes (the kill signal, then SIGHUP as
/// `SendSIGHUP=` asks), and it stops once they are gone.
#[test]
fn a_scope_stops_by_signalling_its_processes() {
    let mut t = scope();
    t.p.take_actions();
    let pid = 4242;
    t.p.fact(
        Fact::Spawned {
            unit: U,
            role: Role::Main,
            pid,
        },
        t.now,
    );
    t.p.shutdown(t.now);
    assert_eq!(t.phase(), Phase::Stopping);
    let kills: Vec<String> = t.p.take_actions().iter().map(describe).collect();
    assert!(kills.iter().any(|k| k.contains("SIGTERM")), "{kills:?}");
    assert!(kills.iter().any(|k| k.contains("SIGHUP")), "{kills:?}");
    t.exited(pid, ExitStatus::Signal(15));
    assert_eq!(t.phase(), Phase::Idle);
}

/// A restart by hand of a oneshot that remained active (a mount unit:
/// its start mounted, its stop unmounts) runs its stop commands, then its
/// start again, as systemd restarts it (systemd's test 37: the tmpfs of
/// `systemctl restart tmp-aaa.mount` is a new one).
#[test]
fn a_restart_of_an_exited_oneshot_runs_its_stop_then_its_start() {
    let mut s = UnitSpec::new("svc", UnitType::Oneshot);
    s.exec_start = Some(Command::new(["/bin/mount"]));
    s.exec_stop = Some(Command::new(["/bin/umount"]));
    s.remain_after_exit = Some(true);
    let mut t = T::new(s);
    let pid = t.spawned(Role::Main);
    t.exited(pid, OK);
    assert_eq!((t.phase(), t.state()), (Phase::Idle, UnitState::Exited));
    t.p.restart("svc", t.now).unwrap();
    let stop = t.spawned(Role::Stop);
    assert_eq!(t.state(), UnitState::Stopping);
    t.exited(stop, OK);
    let again = t.spawned(Role::Main);
    t.exited(again, OK);
    assert_eq!((t.phase(), t.state()), (Phase::Idle, UnitState::Exited));
}
