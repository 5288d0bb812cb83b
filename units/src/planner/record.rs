//! A unit's run-time record, in two parts: [`Unit`], what the rules read and
//! set on every evaluation (its phase, state and flags), small and kept in
//! one array so that the evaluation loop and the walks over neighbours read
//! a few bytes per unit; and [`Record`], the rest (processes, timer, restart
//! count, times, status text), written on transitions and read for views.

use super::facts::Role;
use crate::exits::ExitStatus;
use crate::spec::UnitSpec;
use crate::state::{FailureKind, UnitState};
use crate::time::Instant;
use std::sync::Arc;
use std::time::Duration;

/// Which of a unit's processes exist (the module documentation's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// None.
    Idle,
    /// None yet: the init checks the unit's conditions.
    Check,
    /// `exec-condition` number `n`.
    Condition(u16),
    /// `exec-start-pre` number `n`.
    Pre(u16),
    /// The main process (or start script), not yet ready.
    Main,
    /// The main process (if any), ready.
    Up,
    /// The main process, and `exec-reload` if any.
    Reloading,
    /// The main process and/or `exec-stop`.
    Stopping,
    /// `exec-stop-post` number `n`.
    StopPost(u16),
}

impl Phase {
    /// Check, Condition, Pre, Main, Up or Reloading: the unit is up.
    pub fn up(self) -> bool {
        matches!(
            self,
            Phase::Check
                | Phase::Condition(_)
                | Phase::Pre(_)
                | Phase::Main
                | Phase::Up
                | Phase::Reloading
        )
    }

    /// Check, Condition, Pre or Main: the unit takes a start slot.
    pub fn starting(self) -> bool {
        matches!(
            self,
            Phase::Check | Phase::Condition(_) | Phase::Pre(_) | Phase::Main
        )
    }

    /// Stopping or StopPost: on its way down.
    pub fn stopping(self) -> bool {
        matches!(self, Phase::Stopping | Phase::StopPost(_))
    }
}

/// What a unit's one timer is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Timer {
    /// `start-timeout`.
    Start,
    /// `ready-wait`.
    ReadyWait,
    /// `exec-reload` (or `RELOADING=1`) outlived `start-timeout`.
    Reload,
    /// `stop-timeout`: SIGKILL.
    Stop,
    /// Another `stop-timeout` after SIGKILL: stop waiting for the processes.
    Abandon,
    /// The restart back-off is over.
    Restart,
    /// Read the pidfile again (it was not there yet).
    Pidfile,
    /// `watchdog-sec` passed without a `WATCHDOG=1`.
    Watchdog,
    /// `runtime-max-sec` passed since the unit became active.
    RuntimeMax,
    /// A timer unit's next elapse.
    Elapse,
}

/// What a node of the graph is, as the rules see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NodeKind {
    /// A unit.
    Unit,
    /// A group target's node: up while a provider is active.
    Group,
    /// An alternative target's node: its chosen provider's state.
    Alternative,
}

/// A unit as the rules see it: read on every evaluation, and what its
/// neighbours read of it ([`super::deps::ProviderFlags`],
/// [`super::deps::StopFlags`]).
#[derive(Debug, Clone)]
pub(super) struct Unit {
    pub phase: Phase,
    pub state: UnitState,
    /// Up, and the stop rule holds.
    pub to_stop: bool,
    /// Active with a dependency (direct or transitive) not active.
    pub degraded: bool,
    /// Waiting on a failed, missing or blocked hard dependency
    /// ([`Rare::blocked_by`] names it).
    pub blocked: bool,
    /// In the start queue (`max-concurrent-starts`).
    pub queued: bool,
    /// Evaluated because the start queue gave it a slot.
    pub queued_turn: bool,
    /// The restart timer fired: the next attempt is allowed.
    pub restart_ready: bool,
    /// `initctl restart`: stop, then start again.
    pub restart_requested: bool,
    /// Start at its next evaluation, whatever its dependencies
    /// ([`Planner::start_at_once`](super::Planner::start_at_once)); taken
    /// by that evaluation.
    pub start_at_once: bool,
    /// Its definition changed on reload: stop, then start with the new one.
    pub spec_changed: bool,
    /// Removed from the unit set but still stopping: provides nothing.
    pub ghost: bool,
    /// A `virtual` unit: no process.
    pub is_virtual: bool,
    /// Masked: never required, never started.
    pub masked: bool,
    /// A unit, or a declared target's node.
    pub kind: NodeKind,
    /// In the required set (what an `after` edge on it reads).
    pub required: bool,
    /// Failed after a trigger started it, and then left the triggered
    /// set: it stays `failed` outside the required set.
    pub kept_failed: bool,
}

impl Unit {
    /// A unit with nothing running, `disabled`.
    pub fn new() -> Unit {
        Unit {
            phase: Phase::Idle,
            state: UnitState::Disabled,
            to_stop: false,
            degraded: false,
            blocked: false,
            queued: false,
            queued_turn: false,
            restart_ready: false,
            restart_requested: false,
            start_at_once: false,
            spec_changed: false,
            ghost: false,
            is_virtual: false,
            masked: false,
            kind: NodeKind::Unit,
            required: false,
            kept_failed: false,
        }
    }

    /// Pre, Main, Up or Reloading.
    pub fn up(&self) -> bool {
        self.phase.up()
    }

    /// Failed, and its restart timer fired.
    pub fn restarting(&self) -> bool {
        self.state == UnitState::Failed && self.restart_ready
    }
}

/// The rest of a unit's run-time record.
#[derive(Debug, Clone)]
pub(super) struct Record {
    /// When the unit entered its state.
    pub since: Instant,
    /// The main process.
    pub main_pid: Option<i32>,
    /// The helper process (pre, stop, stop-post, reload): its role, and its
    /// PID once it is spawned.
    pub helper: Option<(Role, Option<i32>)>,
    /// The definition the current processes run with (the graph's may have
    /// changed since they started).
    pub running_spec: Option<Arc<UnitSpec>>,
    /// The one pending deadline, and what it is for.
    pub timer: Option<(Instant, Timer)>,
    /// How many timers were set: an entry of the deadline heap with another
    /// number is stale.
    pub timer_gen: u64,
    /// The current failure allows a restart (the restart policy says so).
    pub restart_due: bool,
    /// Consecutive failed attempts: the exponent of the back-off.
    pub attempt: u32,
    /// Restarts after failures, for status.
    pub restarts: u32,
    /// The status text, unformatted.
    pub status: Status,
    /// When the last start began.
    pub start_at: Option<Instant>,
    /// When it last became active.
    pub active_at: Option<Instant>,
    /// When it last stopped or failed.
    pub end_at: Option<Instant>,
    /// The main process exited 0 by itself: `exited` once stop-post ran.
    pub exit_ok: bool,
    /// The unit said `STOPPING=1`: it stops by itself, so its exit is
    /// judged as an exit while `Up`, not as a stop the init asked for.
    pub self_stop: bool,
    /// The main process that just ended, whose process group (every spawn
    /// leads one; a forking daemon's `setsid` makes one) gets SIGKILL once
    /// the unit is down, so that nothing it left behind keeps running.
    pub dead_leader: Option<i32>,
    /// The fields that are seldom set: none until one is.
    pub rare: Option<Box<Rare>>,
}

/// A unit's failure: what kind it is, the exit status or signal of the
/// process whose end it was, and the words of the status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    /// systemd's word for it.
    pub kind: FailureKind,
    /// The exit status, or the number of the signal that killed it.
    pub exit: Option<i32>,
    /// What the status line says.
    pub why: String,
}

impl Failure {
    /// A failure with no process status.
    pub fn new(kind: FailureKind, why: String) -> Failure {
        Failure {
            kind,
            exit: None,
            why,
        }
    }

    /// A process's end that is a failure, with `why` as its words. A
    /// clean exit is one only by when it came (before the service said it
    /// was ready): systemd calls that `protocol`.
    pub fn of_exit(status: ExitStatus, why: String) -> Failure {
        let (kind, exit) = match status {
            ExitStatus::Code(0) => (FailureKind::Protocol, 0),
            ExitStatus::Code(c) => (FailureKind::ExitCode, c),
            ExitStatus::Signal(s) => (FailureKind::Signal, s),
        };
        Failure {
            kind,
            exit: Some(exit),
            why,
        }
    }
}

/// The part of a [`Record`] that is seldom set (after a failure, while
/// blocked, for a `background-scripted` unit, for a pidfile read again),
/// boxed so that the record every unit has stays small.
#[derive(Debug, Clone, Default)]
pub(super) struct Rare {
    /// Why the current stop happens, when it is a failure.
    pub failure: Option<Failure>,
    /// The failed or missing target a waiting unit is blocked by.
    pub blocked_by: Option<String>,
    /// The process group a `background-scripted` start script left behind
    /// (its PID: it led the group): what a stop signals when there is no
    /// main process.
    pub script_group: Option<i32>,
    /// Reads of the pidfile that found no usable PID in this start.
    pub pidfile_tries: u32,
    /// The start-timeout deadline while the pidfile is awaited (the retry
    /// timer takes the unit's one timer).
    pub pidfile_deadline: Option<Instant>,
    /// A forking daemon's main process exited while up, with this status,
    /// and its pidfile is being read again for a new main process
    /// (`lifecycle/stop.rs`, `main_exited`).
    pub following: Option<ExitStatus>,
    /// An `exit-type: cgroup` service's main process exited while up,
    /// with this status: the unit stays up until its cgroup is empty,
    /// and then ends with it (`lifecycle/stop.rs`, `main_left`).
    pub main_exit: Option<ExitStatus>,
    /// A condition failed at the last start: the unit was skipped.
    pub skipped: bool,
    /// A forking daemon without a pidfile left no process in its cgroup
    /// at this start: it ends as a oneshot's does (`lifecycle/start.rs`,
    /// `no_main_process`).
    pub no_main: bool,
    /// While up: an `EXTEND_TIMEOUT_USEC=` moved the runtime limit
    /// (`runtime-max-sec`) to this instant, later than its own.
    pub runtime_extended: Option<Instant>,
    /// The main process of a `started-at-fork` unit failed before its
    /// program ran and the unit went up: its failure comes next
    /// (`Event::ExecFailed`, `lifecycle/start.rs`).
    pub failed_at_fork: bool,
    /// The last reload failed, so: systemd's `ReloadResult` (none while
    /// it succeeded, or none ran).
    pub reload_failure: Option<FailureKind>,
    /// The last sd_notify `STATUS=` (only units that send one).
    pub notify_status: Option<String>,
    /// A timer unit's run, while it is up.
    pub timer_run: Option<TimerRun>,
    /// A socket or path unit's fires in its trigger limit's window: when
    /// the window began, how many.
    pub fires: Option<(Instant, u32)>,
    /// The starts in the unit's start limit's window (only for a unit with
    /// a start limit): when the window began, how many.
    pub starts: Option<(Instant, u32)>,
    /// The starts of an upheld unit (or of its failed dependencies) in
    /// the window of `uphold.rs`'s bound: when it began, how many.
    pub upholds: Option<(Instant, u32)>,
    /// A path unit or a timer started the unit: what it saw, kept until
    /// the unit is inactive again (`disabled`, `failed`).
    pub activated: Option<super::Activated>,
}

/// A timer unit's run: when it was activated, its last trigger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TimerRun {
    /// When the timer was activated (monotonic).
    pub activated: Instant,
    /// The wall clock then (realtime µs), as it read then: a later jump
    /// of the clock does not move it, so that a calendar elapse counted
    /// from it and jumped over fires (systemd keeps the activation's
    /// realtime stamp the same way).
    pub activated_real: u64,
    /// The last trigger in this activation (monotonic, realtime µs).
    pub last_trigger: Option<(Instant, u64)>,
    /// The next elapse (monotonic deadline, realtime µs), if armed.
    pub next: Option<(Instant, u64)>,
    /// How many times it fired in this activation.
    pub fired: u64,
}

/// Counts one more event in a rate limit's `window` (systemd's
/// ratelimit: a window that began `interval` or longer ago begins again
/// now) and returns the events in it, this one included.
pub(super) fn count_in_window(
    window: &mut Option<(Instant, u32)>,
    now: Instant,
    interval: Duration,
) -> u32 {
    let (since, n) = match *window {
        Some((since, n)) if now < since.after(interval) => (since, n.saturating_add(1)),
        _ => (now, 1),
    };
    *window = Some((since, n));
    n
}

/// What [`Record::rare`] reads when a unit has no rare part.
static NO_RARE: Rare = Rare {
    failure: None,
    reload_failure: None,
    blocked_by: None,
    script_group: None,
    pidfile_tries: 0,
    pidfile_deadline: None,
    following: None,
    main_exit: None,
    skipped: false,
    no_main: false,
    runtime_extended: None,
    failed_at_fork: false,
    notify_status: None,
    timer_run: None,
    fires: None,
    starts: None,
    upholds: None,
    activated: None,
};

/// A unit's status text, kept unformatted: most are fixed texts, and the
/// waiting rule's `waiting for X` names a dependency by its index, so that
/// neither is allocated or copied when it is written (the text is made for
/// views).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Status {
    /// A fixed text.
    Fixed(&'static str),
    /// `waiting for ` and the target of the unit's dependency number `j`
    /// (in the current graph: a replacement of the graph turns it into
    /// text before the dependency indices move).
    WaitingFor(u32),
    /// Any other text.
    Text(String),
}

impl From<&'static str> for Status {
    fn from(s: &'static str) -> Status {
        Status::Fixed(s)
    }
}

impl From<String> for Status {
    fn from(s: String) -> Status {
        Status::Text(s)
    }
}

impl Record {
    /// A record with nothing running, in its state since `now`.
    pub fn new(now: Instant) -> Record {
        Record {
            since: now,
            main_pid: None,
            helper: None,
            running_spec: None,
            timer: None,
            timer_gen: 0,
            restart_due: false,
            attempt: 0,
            restarts: 0,
            status: Status::Fixed(""),
            start_at: None,
            active_at: None,
            end_at: None,
            exit_ok: false,
            self_stop: false,
            dead_leader: None,
            rare: None,
        }
    }

    /// The rare part (all unset when there is none).
    pub fn rare(&self) -> &Rare {
        self.rare.as_deref().unwrap_or(&NO_RARE)
    }

    /// The rare part, made if there is none: for a write that sets a field.
    pub fn rare_mut(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Box::default)
    }

    /// Resets fields of the rare part, if there is one (none reads as reset).
    pub fn rare_reset(&mut self, f: impl FnOnce(&mut Rare)) {
        if let Some(r) = self.rare.as_deref_mut() {
            f(r);
        }
    }

    /// The role of the helper process, if there is one.
    pub fn helper_role(&self) -> Option<Role> {
        self.helper.map(|h| h.0)
    }
}
