//! Timer units in the planner, on a fake clock: a timer in the required
//! set fires its unit at the elapse, the unit is required until it settles,
//! and the timer is armed again (`OnCalendar=`, `OnUnitActiveSec=`,
//! `Persistent=` catch-up, a wall-clock jump, `RandomizedDelaySec=`).

use super::facts::{Action, Fact};
use super::{Planner, PlannerOptions, TimerEnv};
use crate::exits::ExitStatus;
use crate::graph::Graph;
use crate::spec::{Command, Origin, UnitSpec, UnitType};
use crate::state::UnitState;
use crate::time::Instant;
use crate::trigger;

const S: u64 = 1_000_000;
/// 2024-01-01 00:00:00 UTC, in microseconds.
const T0: u64 = 1_704_067_200 * S;

fn secs(s: u64) -> Instant {
    Instant(s * 1_000_000_000)
}

/// The planner, a fake clock, and what happened.
struct Sim {
    p: Planner,
    now: Instant,
    next_pid: i32,
    /// The main processes started, by unit name.
    starts: Vec<(String, Instant)>,
    /// The stamps the planner asked to keep.
    stamps: Vec<(String, u64)>,
    /// Main processes running (`job` oneshots exit at once; `daemon` runs).
    running: Vec<i32>,
}

/// `sys` (the target, virtual) depends on `tick`, a timer with `keys`
/// triggering `job`, a oneshot (or `daemon`, a long-running service).
fn units(keys: &[(&str, &str)], triggered: UnitType) -> Vec<UnitSpec> {
    let mut sys = UnitSpec::new("sys", UnitType::Virtual);
    sys.depends_on = vec!["tick".into()].into();
    let mut tick = UnitSpec::new("tick", UnitType::Timer);
    tick.extras.triggers = vec!["job".into()].into();
    for (k, v) in keys {
        trigger::set(&mut tick.extras.activation, UnitType::Timer, k, v).unwrap();
    }
    let mut job = UnitSpec::new("job", triggered);
    job.exec_start = Some(Command::new(["/bin/job"]));
    vec![sys, tick, job]
}

impl Sim {
    /// Starts at monotonic 100 s, wall clock `T0 + 100 s`, the init
    /// started at 5 s.
    fn new(keys: &[(&str, &str)], triggered: UnitType, env: TimerEnv) -> Sim {
        let specs = units(keys, triggered);
        let (g, d) = Graph::build(
            specs
                .into_iter()
                .map(|s| {
                    let o = Origin::unplaced(format!("{}.yaml", s.name));
                    (s, o)
                })
                .collect(),
        );
        assert!(d.is_empty(), "{d:?}");
        let now = secs(100);
        let env = TimerEnv {
            realtime_us: T0 + 100 * S,
            at: now,
            init_start: secs(5),
            ..env
        };
        let p = Planner::with_timer_env(g, "sys", now, PlannerOptions::default(), env);
        let mut s = Sim {
            p,
            now,
            next_pid: 100,
            starts: Vec::new(),
            stamps: Vec::new(),
            running: Vec::new(),
        };
        s.settle();
        s
    }

    fn settle(&mut self) {
        for _ in 0..1000 {
            let actions = self.p.take_actions();
            if actions.is_empty() {
                return;
            }
            for a in actions {
                match a {
                    Action::Spawn { unit, role, .. } => {
                        let pid = self.next_pid;
                        self.next_pid += 1;
                        let name = self.p.graph().node(unit).spec.name.clone();
                        self.starts.push((name, self.now));
                        self.p.fact(Fact::Spawned { unit, role, pid }, self.now);
                        if self.p.graph().node(unit).spec.kind == UnitType::Oneshot {
                            let status = ExitStatus::Code(0);
                            self.p.fact(Fact::Exited { pid, status }, self.now);
                        } else {
                            self.running.push(pid);
                        }
                    }
                    Action::Kill { whom, .. } => {
                        let pid = whom.pid();
                        if self.running.contains(&pid) {
                            self.running.retain(|&p| p != pid);
                            let status = ExitStatus::Signal(15);
                            self.p.fact(Fact::Exited { pid, status }, self.now);
                        }
                    }
                    Action::SaveTimerStamp {
                        timer, realtime_us, ..
                    } => self.stamps.push((timer, realtime_us)),
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
        panic!("the planner did not settle");
    }

    /// Moves the clock to `end`, handling every deadline on the way.
    fn advance_to(&mut self, end: Instant) {
        loop {
            match self.p.next_deadline() {
                Some(t) if t <= end => {
                    self.now = self.now.max(t);
                    self.p.tick(self.now);
                    self.settle();
                }
                _ => break,
            }
        }
        self.now = end;
        self.p.tick(end);
        self.settle();
    }

    fn state(&self, name: &str) -> UnitState {
        self.p.state(self.p.graph().unit(name).unwrap())
    }

    fn status(&self, name: &str) -> String {
        let id = self.p.graph().unit(name).unwrap();
        self.p.view(id).unwrap().status
    }

    fn start_times(&self) -> Vec<u64> {
        self.starts
            .iter()
            .map(|(_, t)| t.0 / 1_000_000_000)
            .collect()
    }
}

#[test]
fn on_active_sec_fires_the_oneshot_once_and_it_settles() {
    let mut s = Sim::new(
        &[("OnActiveSec", "10s"), ("AccuracySec", "1us")],
        UnitType::Oneshot,
        TimerEnv::default(),
    );
    assert_eq!(s.state("tick"), UnitState::Running);
    assert_eq!(
        s.state("job"),
        UnitState::Disabled,
        "a timer pulls nothing in"
    );
    assert!(
        s.status("tick")
            .starts_with("next elapse 2024-01-01T00:01:50.000Z (in 10.0s); not triggered yet"),
        "{}",
        s.status("tick")
    );
    s.advance_to(secs(109));
    assert!(s.starts.is_empty());
    s.advance_to(secs(200));
    assert_eq!(s.start_times(), [110]);
    // The oneshot ran and settled: it left T, and R does not require it.
    assert_eq!(s.state("job"), UnitState::Disabled);
    assert_eq!(s.state("tick"), UnitState::Exited, "nothing left to fire");
    assert!(s
        .status("tick")
        .contains("last trigger 2024-01-01T00:01:50.000Z"));
    assert!(s.stamps.is_empty(), "not persistent");
}

#[test]
fn on_unit_active_sec_rearms_from_each_run() {
    let mut s = Sim::new(
        &[
            ("OnActiveSec", "1s"),
            ("OnUnitActiveSec", "30s"),
            ("AccuracySec", "1us"),
        ],
        UnitType::Oneshot,
        TimerEnv::default(),
    );
    s.advance_to(secs(200));
    assert_eq!(s.start_times(), [101, 131, 161, 191]);
    assert_eq!(s.state("tick"), UnitState::Running);
}

#[test]
fn on_calendar_fires_on_the_wall_clock_and_follows_a_jump() {
    // Every full minute, UTC; the wall clock is at 00:01:40.
    let mut s = Sim::new(
        &[("OnCalendar", "*:*:00 UTC"), ("AccuracySec", "1us")],
        UnitType::Oneshot,
        TimerEnv::default(),
    );
    s.advance_to(secs(200));
    // 00:02:00 and 00:03:00 are monotonic 120 s and 180 s.
    assert_eq!(s.start_times(), [120, 180]);
    // The wall clock is set back by 30 s at monotonic 200 (from 00:03:20
    // to 00:02:50): the last trigger (00:03:00) is now in the future, so
    // it counts as now, and 00:03:00 comes again 10 s later, then 00:04:00
    // (systemd's `timer_time_change`: "allow the future triggers to happen
    // again").
    s.p.wall_clock_set(T0 + 170 * S, secs(200));
    s.settle();
    s.advance_to(secs(209));
    assert_eq!(s.start_times(), [120, 180]);
    s.advance_to(secs(271));
    assert_eq!(s.start_times(), [120, 180, 210, 270]);
}

#[test]
fn a_persistent_timer_catches_up_at_start_and_stamps_each_trigger() {
    // Daily at midnight; the last trigger was two days ago: missed while
    // the machine was down, so it fires at once.
    let mut env = TimerEnv::default();
    env.stamps.insert("tick".into(), T0 - 2 * 86_400 * S);
    let mut s = Sim::new(
        &[
            ("OnCalendar", "daily UTC"),
            ("Persistent", "yes"),
            ("AccuracySec", "1us"),
        ],
        UnitType::Oneshot,
        env,
    );
    s.advance_to(secs(101));
    assert_eq!(s.start_times(), [100]);
    assert_eq!(s.stamps, [("tick".to_string(), T0 + 100 * S)]);
    // Then the next midnight, not before.
    assert!(s
        .status("tick")
        .contains("next elapse 2024-01-02T00:00:00.000Z"));

    // Without `Persistent=`, the stamp is not read: nothing until midnight.
    let mut env = TimerEnv::default();
    env.stamps.insert("tick".into(), T0 - 2 * 86_400 * S);
    let mut s = Sim::new(
        &[("OnCalendar", "daily UTC"), ("AccuracySec", "1us")],
        UnitType::Oneshot,
        env,
    );
    s.advance_to(secs(1000));
    assert!(s.starts.is_empty());
}

#[test]
fn randomized_delay_is_drawn_from_the_seed() {
    let run = |seed: u64| {
        let env = TimerEnv {
            seed,
            ..TimerEnv::default()
        };
        let mut s = Sim::new(
            &[
                ("OnActiveSec", "10s"),
                ("RandomizedDelaySec", "100s"),
                ("AccuracySec", "1us"),
            ],
            UnitType::Oneshot,
            env,
        );
        s.advance_to(secs(300));
        s.start_times()
    };
    let a = run(7);
    assert_eq!(a, run(7), "the same seed, the same delay");
    assert_eq!(a.len(), 1);
    assert!((110..=210).contains(&a[0]), "{a:?}");
    let others: Vec<_> = (0..8).map(run).collect();
    assert!(others.iter().any(|o| o != &a), "the seed moves the delay");
}

#[test]
fn a_long_running_service_stays_required_until_it_ends_and_the_timer_stops_with_r() {
    let mut s = Sim::new(
        &[("OnActiveSec", "1s"), ("AccuracySec", "1us")],
        UnitType::ForegroundSupervised,
        TimerEnv::default(),
    );
    s.advance_to(secs(150));
    assert_eq!(s.start_times(), [101]);
    assert_eq!(s.state("job"), UnitState::Running);
    let id = s.p.graph().unit("job").unwrap();
    assert_eq!(s.p.triggered_by(id), Some("tick"));
    // It is told when the timer elapsed (systemd's TRIGGER_TIMER_*).
    let told = s.p.activated_by(id).expect("the timer's details").env();
    assert_eq!(
        told,
        [
            ("TRIGGER_UNIT", "tick".to_string()),
            ("TRIGGER_TIMER_REALTIME_USEC", (T0 + 101 * S).to_string()),
            ("TRIGGER_TIMER_MONOTONIC_USEC", (101 * S).to_string()),
        ]
    );
    assert!(
        s.status("job").ends_with("(triggered by tick)"),
        "{}",
        s.status("job")
    );
    // The target goes: the timer stops, and what it started goes with it.
    s.p.shutdown(s.now);
    s.settle();
    assert_eq!(s.state("tick"), UnitState::Disabled);
    assert_eq!(s.state("job"), UnitState::Disabled);
    assert!(s.running.is_empty());
}

#[test]
fn on_clock_change_fires_at_each_change_of_the_clock_and_only_then() {
    let mut s = Sim::new(
        &[("OnClockChange", "yes")],
        UnitType::Oneshot,
        TimerEnv::default(),
    );
    // Nothing to wait for but the clock: running, no deadline.
    s.advance_to(secs(10_000));
    assert!(s.starts.is_empty());
    assert_eq!(s.state("tick"), UnitState::Running);
    assert!(s.status("tick").contains("waiting for the clock to change"));
    // A day ahead, then back: each change fires it once.
    s.now = secs(10_001);
    s.p.wall_clock_set(T0 + 86_400 * S, s.now);
    s.settle();
    s.advance_to(secs(10_200));
    s.p.wall_clock_set(T0 + 10_200 * S, s.now);
    s.settle();
    s.advance_to(secs(20_000));
    assert_eq!(s.start_times(), [10_001, 10_200]);
    assert_eq!(s.state("tick"), UnitState::Running);
    // A reload gives the timers their environment again (zones, stamps):
    // no change of the clock, nothing fires.
    let env = s.p.timer_env().clone();
    s.p.set_timer_env(env, s.now);
    s.settle();
    assert_eq!(s.start_times(), [10_001, 10_200]);
}

#[test]
fn a_daily_timer_runs_once_when_the_clock_jumps_a_day() {
    let mut s = Sim::new(
        &[("OnCalendar", "daily UTC"), ("AccuracySec", "1us")],
        UnitType::Oneshot,
        TimerEnv::default(),
    );
    s.advance_to(secs(1000));
    assert!(s.starts.is_empty());
    // `date -s '+1 day'`: midnight is behind the clock now.
    s.now = secs(1001);
    s.p.wall_clock_set(T0 + 86_400 * S + 1001 * S, s.now);
    s.settle();
    s.advance_to(secs(5000));
    assert_eq!(s.start_times(), [1001]);
    assert!(s
        .status("tick")
        .contains("next elapse 2024-01-03T00:00:00.000Z"));
}

#[test]
fn the_clock_set_back_after_a_jump_counts_the_last_trigger_as_now() {
    let mut s = Sim::new(
        &[("OnCalendar", "daily UTC"), ("AccuracySec", "1us")],
        UnitType::Oneshot,
        TimerEnv::default(),
    );
    // A day ahead: it runs once (its last trigger on 2024-01-02).
    s.now = secs(1001);
    s.p.wall_clock_set(T0 + 86_400 * S + 1001 * S, s.now);
    s.settle();
    s.advance_to(secs(1100));
    assert_eq!(s.start_times(), [1001]);
    // Put back: the trigger is in the future, so it counts as now
    // (2024-01-01 00:18:20) and the next elapse is the coming midnight,
    // not the one after 2024-01-02, as systemd's `timer_time_change`.
    s.p.wall_clock_set(T0 + 1100 * S, s.now);
    s.settle();
    let status = s.status("tick");
    assert!(
        status.contains("next elapse 2024-01-02T00:00:00.000Z")
            && status.contains("last trigger 2024-01-01T00:18:20.000Z"),
        "{status}"
    );
    s.advance_to(secs(86_400 - 1));
    assert_eq!(s.start_times(), [1001]);
    s.advance_to(secs(86_400 + 1));
    assert_eq!(s.start_times(), [1001, 86_400]);
}

#[test]
fn a_persistent_timer_without_a_stamp_makes_one_and_shows_a_kept_one_as_its_last_trigger() {
    let keys = [
        ("OnCalendar", "daily UTC"),
        ("Persistent", "yes"),
        ("AccuracySec", "1us"),
    ];
    // No stamp: the start makes one (its time), nothing runs.
    let mut s = Sim::new(&keys, UnitType::Oneshot, TimerEnv::default());
    assert_eq!(s.stamps, [("tick".to_string(), T0 + 100 * S)]);
    s.advance_to(secs(1000));
    assert!(s.starts.is_empty());
    assert!(s.status("tick").ends_with("; not triggered yet"));
    // The next boot's init, two days later, finds that stamp: a midnight
    // was missed, so it runs at once, and stamps the run.
    let mut env = TimerEnv::default();
    env.stamps
        .insert("tick".into(), T0 + 100 * S - 2 * 86_400 * S);
    let mut s = Sim::new(&keys, UnitType::Oneshot, env);
    s.advance_to(secs(101));
    assert_eq!(s.start_times(), [100]);
    assert_eq!(s.stamps, [("tick".to_string(), T0 + 100 * S)]);
    // A kept stamp that missed nothing is the last trigger (systemd's
    // `LastTriggerUSec`, `systemctl list-timers`' LAST), and no new one.
    let mut env = TimerEnv::default();
    env.stamps.insert("tick".into(), T0 + 50 * S);
    let s = Sim::new(&keys, UnitType::Oneshot, env);
    assert!(s.stamps.is_empty());
    let id = s.p.graph().unit("tick").unwrap();
    assert_eq!(
        s.p.timer_times(id),
        Some((Some(T0 + 86_400 * S), Some(T0 + 50 * S)))
    );
    // A stamp in the future is not used (the clock is wrong) nor replaced.
    let mut env = TimerEnv::default();
    env.stamps
        .insert("tick".into(), T0 + 86_400 * S * 3 + 500 * S);
    let mut s = Sim::new(&keys, UnitType::Oneshot, env);
    assert!(s.stamps.is_empty());
    assert!(s.status("tick").ends_with("; not triggered yet"));
    // Nor later, once the clock has passed it, as systemd reads the stamp
    // at the timer's start only: the clock set three days ahead, past
    // the stamp, the midnight after the start was missed and fires at
    // once (counted from the start, not from the stale stamp).
    s.now = secs(1000);
    s.p.wall_clock_set(T0 + 3 * 86_400 * S + 1000 * S, s.now);
    s.settle();
    s.advance_to(secs(1100));
    assert_eq!(s.start_times(), [1000]);
}
