//! The state model and the planner.
//!
//! # The state model
//!
//! The init satisfies exactly one **target**. The **required set** R is the
//! provider of that target plus every unit reachable from it over
//! `depends-on`, `depends-ms` and `waits-for` ([`Graph::required_set`]).
//! Everything outside R is driven to `disabled`. Nothing is started or stopped
//! by command: every start and stop below follows from the graph, the target
//! and the facts the init reports, by these rules.
//!
//! Each unit has a visible **state** ([`UnitState`]) and an internal
//! **phase**, which says which of its processes exist:
//!
//! | phase      | processes                               | state shown            |
//! |------------|-----------------------------------------|------------------------|
//! | `Idle`     | none                                    | disabled, waiting, exited or failed |
//! | `Pre`      | an `exec-start-pre` command             | starting               |
//! | `Main`     | the main process (or start script), not yet ready | starting     |
//! | `Up`       | the main process (if any), ready        | running                |
//! | `Reloading`| the main process, and `exec-reload` if any | reloading           |
//! | `Stopping` | the main process and/or `exec-stop`     | stopping               |
//! | `StopPost` | an `exec-stop-post` command             | stopping               |
//!
//! A unit is **up** in `Pre`, `Main`, `Up` and `Reloading`; **active** when
//! its state is `running`, `reloading` or `exited`.
//!
//! ## Events and what they move
//!
//! | event (fact)                       | in phase   | effect |
//! |------------------------------------|------------|--------|
//! | start rule holds (below)           | Idle       | `Pre` (first pre command) or `Main`; `virtual` goes `Up` at once |
//! | pre command exits 0 (or ignored)   | Pre        | next pre command, or `Main` |
//! | pre command fails / spawn fails    | Pre        | failure |
//! | main spawned                       | Main       | `foreground-supervised` with no `ready-*`: `Up` |
//! | `READY=1`                          | Main       | `Up` (`foreground-notified`) |
//! | `READY=1`                          | Reloading  | `Up` |
//! | `RELOADING=1`                      | Up         | `Reloading` |
//! | `STOPPING=1`                       | Up         | `Stopping` (the unit stops by itself; its exit then counts as in `Up`) |
//! | `ready-grep` line matched          | Main       | `Up` |
//! | `ready-wait` timer                 | Main       | `Up` |
//! | start command exits 0              | Main       | `oneshot`: `Idle`/`exited`; `background-scripted`: `Up` (no PID); `background-pidfile`: read the pidfile |
//! | pidfile read: PID                  | Main       | `Up`, the PID is the main process |
//! | pidfile unreadable (not yet written, or its PID is not running) | Main | read again (10 ms doubling to 250 ms) until `start-timeout`, then failure |
//! | main exits                         | Main       | failure (it never became ready) |
//! | main exits 0                       | Up         | `restart: always`: failure path with a restart; else stop-post, then `exited` |
//! | main exits non-zero / by a signal  | Up, Reloading | failure (what it left in its process group gets SIGKILL) |
//! | `exec-reload` exits                | Reloading  | `Up` |
//! | `start-timeout`                    | Pre, Main  | stop, then failure |
//! | stop rule holds (below)            | Pre, Main, Up, Reloading | `Stopping`: `exec-stop` if any, else `kill-signal` to the process group |
//! | main (and `exec-stop`) gone        | Stopping   | leftovers in the group get SIGKILL; `StopPost` or `Idle` |
//! | `stop-timeout`                     | Stopping   | SIGKILL to the group; after another `stop-timeout` the processes are abandoned |
//! | stop-post commands done            | StopPost   | `Idle`: `failed` after a failure, else `waiting` (still required) or `disabled` |
//! | restart timer                      | Idle/failed| back to the start rule |
//!
//! A **failure** stops what is left of the unit (running `exec-stop-post`)
//! and leaves it `failed`. If `restart` allows it (`on-failure`: a non-zero
//! exit, a signal, a timeout; `always`: any exit the init did not ask for), a
//! restart is scheduled after `restart-delay`, doubling with each consecutive
//! failure up to `restart-max-delay`; the count starts over once the unit has
//! been active for 60 s. While it waits, the unit is `failed` and reports
//! when the next attempt is.
//!
//! ## The rules
//!
//! - **Start rule**: a unit in R, phase `Idle`, state `disabled` or
//!   `waiting` (or `failed` with its restart time reached), not shutting
//!   down, starts when every `depends-on` and `depends-ms` provider is active
//!   (and not about to stop) and every `waits-for` provider is active or
//!   failed (a missing `waits-for` target counts as settled; a missing hard
//!   target blocks). At most `max-concurrent-starts` units are in `Pre`/`Main`
//!   at once; the rest wait their turn in name order.
//! - **Stop rule**: an up unit is to stop when it is outside R, when the
//!   system shuts down, when it was asked to restart (command, changed
//!   definition on reload), or when a `depends-on` provider is not active or
//!   is itself to stop. It begins stopping once no up unit that depends on it
//!   (any kind) is also to stop: **dependents stop before their
//!   dependencies**. A unit stopped because of a `depends-on` provider goes
//!   back to `waiting` and starts again by the start rule once the provider is
//!   active again; `depends-ms` and `waits-for` do not stop anything.
//! - **blocked-by**: a waiting unit whose `depends-on`/`depends-ms` target is
//!   missing, failed, or itself blocked names the root target. For a
//!   `waits-for` dependent a blocked unit counts as settled, like a failed
//!   one: a bad unit never holds up what merely waits for it.
//! - **degraded**: an active unit with a dependency (any kind, direct or
//!   transitive) that is not active, or a missing `waits-for` target.
//! - **coincidental**: a target provided by a non-disabled unit that nothing
//!   in R depends on (and that is not the system's target).
//! - `oneshot` that exited 0 stays `exited` (active) while required; a
//!   `failed` unit without a pending restart stays failed until the target is
//!   set again, the unit is restarted, or its definition changes.
//! - **Shutdown**: every unit is to stop; everything drains to `disabled`.
//!
//! # The planner
//!
//! [`Planner`] holds the graph, the target, and the run-time record of each
//! unit. The init feeds it [`Fact`]s (what the kernel reported) and the time;
//! it answers with [`Action`]s (spawn, signal, read a pidfile) and the list
//! of units whose state changed. Changes propagate through a work list, never
//! by recursion, and each fact costs work proportional to what it changes.
//! Deadlines (timeouts, `ready-wait`, restarts) are kept in a heap;
//! [`Planner::next_deadline`] is the init's poll timeout.

use crate::graph::{Graph, UnitId};
use crate::protocol::Applied;
use crate::spec::{defaults, Command, Origin, RestartPolicy, Signal, UnitSpec, UnitType};
use crate::state::{DepKind, UnitState};
use crate::time::Instant;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The smallest delay the restart back-off doubles from.
pub const MIN_RESTART_DELAY: Duration = Duration::from_millis(100);

/// Which of a unit's commands a process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// `exec-start-pre` number `n`.
    Pre(u16),
    /// The main process (`exec-start`).
    Main,
    /// `exec-stop`.
    Stop,
    /// `exec-stop-post` number `n`.
    StopPost(u16),
    /// `exec-reload`.
    Reload,
}

impl Role {
    /// The command of `spec` this role runs, if it has one.
    pub fn command(self, spec: &UnitSpec) -> Option<&Command> {
        match self {
            Role::Pre(n) => spec.exec_start_pre.get(n as usize),
            Role::Main => spec.exec_start.as_ref(),
            Role::Stop => spec.exec_stop.as_ref(),
            Role::StopPost(n) => spec.exec_stop_post.get(n as usize),
            Role::Reload => spec.exec_reload.as_ref(),
        }
    }

    /// The unit-file key of the command.
    pub fn key(self) -> &'static str {
        match self {
            Role::Pre(_) => "exec-start-pre",
            Role::Main => "exec-start",
            Role::Stop => "exec-stop",
            Role::StopPost(_) => "exec-stop-post",
            Role::Reload => "exec-reload",
        }
    }
}

/// The words a process of `role` runs: the command of `role` in `spec`,
/// every `$MAINPID` (and `${MAINPID}`) replaced by `mainpid` (or nothing).
/// Shared with the spec (no copy) when no word mentions it. `None` when the
/// spec has no such command (the planner asks only for commands it has).
fn spawn_argv(spec: &UnitSpec, role: Role, mainpid: Option<i32>) -> Option<Arc<[String]>> {
    let cmd = role.command(spec)?;
    Some(if cmd.mentions_mainpid() {
        cmd.with_mainpid(mainpid).into()
    } else {
        cmd.argv.clone()
    })
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExitStatus {
    /// It exited with this status.
    Code(i32),
    /// A signal killed it.
    Signal(i32),
}

impl ExitStatus {
    /// Exit status 0.
    pub fn success(self) -> bool {
        self == ExitStatus::Code(0)
    }

    /// `exit status 3`, `killed by SIGKILL`.
    pub fn describe(self) -> String {
        match self {
            ExitStatus::Code(c) => format!("exit status {c}"),
            ExitStatus::Signal(s) => format!("killed by {}", Signal(s).name()),
        }
    }
}

/// An sd_notify message (SPEC §4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notify {
    /// `READY=1`.
    Ready,
    /// `RELOADING=1`.
    Reloading,
    /// `STOPPING=1`.
    Stopping,
    /// `STATUS=...`.
    Status(String),
    /// `MAINPID=...`.
    MainPid(i32),
    /// `ERRNO=...`.
    Errno(i32),
    /// `EXTEND_TIMEOUT_USEC=...`.
    ExtendTimeout(Duration),
    /// `WATCHDOG=1`.
    Watchdog,
}

/// Something the init observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fact {
    /// A [`Action::Spawn`] was carried out.
    Spawned {
        /// The unit.
        unit: UnitId,
        /// Which command.
        role: Role,
        /// The new process.
        pid: i32,
    },
    /// A [`Action::Spawn`] could not be carried out.
    SpawnFailed {
        /// The unit.
        unit: UnitId,
        /// Which command.
        role: Role,
        /// Why, for people.
        error: String,
    },
    /// A child process ended (any child: unknown PIDs are ignored).
    Exited {
        /// The process.
        pid: i32,
        /// How.
        status: ExitStatus,
    },
    /// A message on the unit's notify socket.
    Notify {
        /// The unit.
        unit: UnitId,
        /// The message.
        msg: Notify,
    },
    /// A line of the unit's output matched `ready-grep`.
    ReadyLine {
        /// The unit.
        unit: UnitId,
    },
    /// A [`Action::ReadPidfile`] was carried out.
    Pidfile {
        /// The unit.
        unit: UnitId,
        /// The PID read, or why none could be.
        result: Result<i32, String>,
    },
}

/// Something the init must do. Each action is complete: the init carries
/// it out without asking the planner anything.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Start a process for `unit` running `argv`, in the process context of
    /// `spec`, its output captured; it leads a new process group. Answer
    /// with [`Fact::Spawned`] or [`Fact::SpawnFailed`].
    Spawn {
        /// The unit.
        unit: UnitId,
        /// Which command.
        role: Role,
        /// The command's words, `$MAINPID` already replaced.
        argv: Arc<[String]>,
        /// The definition the process runs with (user, environment, ...).
        spec: Arc<UnitSpec>,
        /// The unit's main PID, for `$MAINPID` in the environment.
        mainpid: Option<i32>,
    },
    /// Send `signal` to whom [`Whom`] says.
    Kill {
        /// The unit the processes belong to.
        unit: UnitId,
        /// The process, the process group, or both.
        whom: Whom,
        /// The signal.
        signal: Signal,
    },
    /// Read the unit's pidfile; answer with [`Fact::Pidfile`].
    ReadPidfile {
        /// The unit.
        unit: UnitId,
        /// The file.
        path: PathBuf,
    },
}

/// Whom an [`Action::Kill`] signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Whom {
    /// This process alone.
    Process(i32),
    /// The process group with this number alone. Its leader is gone (or was
    /// never tracked), so the number may be another process's now; the
    /// group's number cannot be reused while it has members.
    Group(i32),
    /// The process group this process leads, and the process itself (a
    /// daemon that left its group gets the signal too).
    GroupAndLeader(i32),
}

impl Whom {
    /// The PID or group number signalled.
    pub fn pid(self) -> i32 {
        match self {
            Whom::Process(p) | Whom::Group(p) | Whom::GroupAndLeader(p) => p,
        }
    }
}

/// Options of the planner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlannerOptions {
    /// At most this many units starting at once (`None`: no limit).
    pub max_concurrent_starts: Option<usize>,
}

/// Why the target is not known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTarget(pub String);

/// Why a unit cannot be reloaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReloadError {
    /// No such unit.
    UnknownUnit(String),
    /// It is not running (or already reloading).
    NotRunning(String),
    /// It has no `exec-reload`.
    NoReloadCommand(String),
}

/// Why a unit cannot be restarted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestartError {
    /// No such unit.
    UnknownUnit(String),
    /// The current target does not require it.
    NotRequired(String),
    /// The system is shutting down.
    ShuttingDown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    Pre(u16),
    Main,
    Up,
    Reloading,
    Stopping { killed: bool },
    StopPost(u16),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timer {
    Start,
    ReadyWait,
    Reload,
    Stop,
    Abandon,
    Restart,
    /// Read the pidfile again (it was not there yet).
    Pidfile,
}

/// The run-time record of a unit, hot part: what the rules read on every
/// evaluation, and what a unit's neighbours read of it (its
/// [`dep_flags`] and [`stop_flags`]). 20 bytes, in one array
/// ([`Planner::rt`]), so that the evaluation loop and the walks over
/// dependents stream a few bytes per unit, not the whole record
/// ([`Cold`], written on transitions).
#[derive(Debug, Clone)]
struct Rt {
    phase: Phase,
    state: UnitState,
    to_stop: bool,
    degraded: bool,
    /// `Cold::blocked_by.is_some()`.
    blocked: bool,
    queued: bool,
    /// Evaluated because the queue gave it a start slot.
    queued_turn: bool,
    /// The next restart attempt is allowed (the restart timer fired).
    restart_ready: bool,
    restart_requested: bool,
    spec_changed: bool,
    /// What `Cold::status` says, as a key, when it is what the waiting
    /// rule writes: 1 for `waiting`, `j + 2` for `waiting for` dependency
    /// `j`; 0 for anything else (or not known). Compared by
    /// [`Planner::evaluate`] without reading the cold record or any text.
    status_key: u32,
}

/// The run-time record of a unit, cold part: written when it moves
/// (starts, stops, fails), read for status replies.
#[derive(Debug, Clone)]
struct Cold {
    since: Instant,
    /// The main process.
    main_pid: Option<i32>,
    /// A helper process (pre, stop, stop-post, reload) and its role.
    aux: Option<(Role, Option<i32>)>,
    /// The definition the current processes run with.
    active: Option<Arc<UnitSpec>>,
    timer: Option<(Instant, Timer)>,
    timer_gen: u64,
    /// Exit status of the main process, to decide on restarts.
    restart_due: bool,
    attempt: u32,
    restarts: u32,
    /// The status text, as a [`Status`]: formatted only when asked for.
    status: Status,
    notify_status: Option<String>,
    start_at: Option<Instant>,
    active_at: Option<Instant>,
    end_at: Option<Instant>,
    ready_seen: bool,
    /// The main process exited 0 by itself (the unit is `exited` after stop-post).
    exit_ok: bool,
    /// The unit said `STOPPING=1`: it is stopping by itself, so its exit
    /// is judged as an exit while `Up`, not as a stop the init asked for.
    self_stop: bool,
    /// The main process that just ended, whose process group (every spawn
    /// leads one; a forking daemon's `setsid` makes one) is SIGKILLed once
    /// the unit is down, so that nothing it left behind keeps running.
    dead_leader: Option<i32>,
    /// The fields that are seldom set ([`Rare`]): none until one is.
    rare: Option<Box<Rare>>,
}

/// The rare part of a unit's cold record, boxed: set only after a failure,
/// while blocked, for a `background-scripted` unit or a pidfile read again,
/// so that the record every unit has stays small ([`Cold::rare`]).
#[derive(Debug, Clone, Default)]
struct Rare {
    /// Why the current stop happens, when it is a failure.
    failure: Option<String>,
    blocked_by: Option<String>,
    /// The process group a `background-scripted` start script left behind
    /// (its PID: it led the group); what a stop signals when there is no
    /// main process.
    script_group: Option<i32>,
    /// Reads of the pidfile that found no usable PID in this start.
    pidfile_tries: u32,
    /// The start-timeout deadline while the pidfile is awaited (the retry
    /// timer takes the unit's one timer slot).
    pidfile_deadline: Option<Instant>,
}

/// What [`Cold::rare`] reads when a unit has no rare part.
static NO_RARE: Rare = Rare {
    failure: None,
    blocked_by: None,
    script_group: None,
    pidfile_tries: 0,
    pidfile_deadline: None,
};

/// A unit's status text, kept unformatted: most are fixed texts, and the
/// waiting rule's `waiting for X` names a dependency by its index, so that
/// neither is allocated or copied when it is written (the text is made by
/// [`Planner::status_text`] for status replies).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Status {
    /// A fixed text.
    Fixed(&'static str),
    /// `waiting for ` and the target of the unit's dependency number `j`
    /// (in the current graph: [`Planner::replace_units`] turns it into
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

impl Rt {
    fn new() -> Rt {
        Rt {
            phase: Phase::Idle,
            state: UnitState::Disabled,
            to_stop: false,
            degraded: false,
            blocked: false,
            queued: false,
            queued_turn: false,
            restart_ready: false,
            restart_requested: false,
            spec_changed: false,
            status_key: 0,
        }
    }

    fn up(&self) -> bool {
        matches!(
            self.phase,
            Phase::Pre(_) | Phase::Main | Phase::Up | Phase::Reloading
        )
    }

    fn starting(&self) -> bool {
        matches!(self.phase, Phase::Pre(_) | Phase::Main)
    }
}

impl Cold {
    fn new(now: Instant) -> Cold {
        Cold {
            since: now,
            main_pid: None,
            aux: None,
            active: None,
            timer: None,
            timer_gen: 0,
            restart_due: false,
            attempt: 0,
            restarts: 0,
            status: Status::Fixed(""),
            notify_status: None,
            start_at: None,
            active_at: None,
            end_at: None,
            ready_seen: false,
            exit_ok: false,
            self_stop: false,
            dead_leader: None,
            rare: None,
        }
    }

    /// The rare part (all unset when there is none).
    fn rare(&self) -> &Rare {
        self.rare.as_deref().unwrap_or(&NO_RARE)
    }

    /// The rare part, made if there is none: for a write that sets a field.
    fn rare_mut(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Box::default)
    }

    /// Resets fields of the rare part, if there is one (none reads as reset).
    fn rare_reset(&mut self, f: impl FnOnce(&mut Rare)) {
        if let Some(r) = self.rare.as_deref_mut() {
            f(r);
        }
    }
}

/// A unit's state as the planner knows it, for status replies.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitView {
    /// The state.
    pub state: UnitState,
    /// When it entered the state.
    pub since: Instant,
    /// The main process.
    pub pid: Option<i32>,
    /// Active with something below it not active.
    pub degraded: bool,
    /// The failed or missing target it waits on.
    pub blocked_by: Option<String>,
    /// How many restarts after failures.
    pub restarts: u32,
    /// Status text.
    pub status: String,
    /// When the next restart is due.
    pub restart_at: Option<Instant>,
    /// Required by the current target.
    pub required: bool,
    /// When the last start began.
    pub start_at: Option<Instant>,
    /// When it last became active.
    pub active_at: Option<Instant>,
    /// When it last stopped or failed.
    pub end_at: Option<Instant>,
}

/// The planner: see the module documentation.
#[derive(Debug)]
pub struct Planner {
    graph: Graph,
    /// Per unit, the hot part of its record.
    rt: Vec<Rt>,
    /// Per unit, the cold part.
    cold: Vec<Cold>,
    target: String,
    /// `graph.provider(&target)`, looked up when either changes (not
    /// hashed on every `run`).
    target_provider: Option<UnitId>,
    required: Vec<bool>,
    shutting_down: bool,
    opts: PlannerOptions,
    now: Instant,
    work: Vec<UnitId>,
    in_work: Vec<bool>,
    ready_queue: BTreeSet<UnitId>,
    starting: usize,
    heap: BinaryHeap<Reverse<(Instant, u32, u64)>>,
    pids: HashMap<i32, (UnitId, Role), BuildHasherDefault<PidHasher>>,
    actions: Vec<Action>,
    changed: Vec<UnitId>,
    changed_flag: Vec<bool>,
    target_set_at: Instant,
    target_active_at: Option<Instant>,
    /// Per unit, what its dependencies add up to ([`DepCounts`]), kept
    /// current as providers change, so that evaluating a unit does not walk
    /// its dependencies.
    counts: Vec<DepCounts>,
    /// Per unit, the [`dep_flags`] its dependents' counts were last told.
    told: Vec<u8>,
    /// Per provider, its dependents with the index of the dependency in
    /// their list and its kind: the edges [`Planner::sync`] updates, in the
    /// order of [`crate::graph::Node::dependents`]. Flat: provider `p`'s
    /// are `rdeps[rdep_at[p]..rdep_at[p + 1]]` (no pointer to chase, no
    /// allocation per unit).
    rdeps: Vec<(UnitId, u32, DepKind)>,
    rdep_at: Vec<u32>,
    /// Per unit, its dependencies' providers and kinds, in the order of
    /// [`crate::graph::Node::deps`], flat like `rdeps`: what the hot paths
    /// read of a dependency, without the 40-byte [`crate::graph::Dep`].
    fdeps: Vec<(Option<UnitId>, DepKind)>,
    fdep_at: Vec<u32>,
    /// Per unit, [`U_GHOST`] and [`U_VIRTUAL`]: read on every evaluation,
    /// kept here so that it does not touch the graph node and the spec.
    ukind: Vec<u8>,
    /// Per unit, a dependency index before which no dependency is waited
    /// on: where the search for the one its status names starts.
    waited_from: Vec<u32>,
    /// Per unit, the same for the dependencies that block it.
    blocked_from: Vec<u32>,
    /// Per unit, the [`dep_flags`] and [`stop_flags`] its neighbours were
    /// last pushed for ([`Planner::push_neighbours`]).
    seen: Vec<(u8, u8)>,
}

impl Planner {
    /// A planner for `graph` with nothing running yet. It starts reaching
    /// `target` at once if some unit provides it; otherwise every unit stays
    /// `disabled` until [`Planner::set_target`] names a known target.
    pub fn new(graph: Graph, target: &str, now: Instant, opts: PlannerOptions) -> Planner {
        let n = graph.len();
        let mut p = Planner {
            rt: vec![Rt::new(); n],
            cold: (0..n).map(|_| Cold::new(now)).collect(),
            required: vec![false; n],
            graph,
            target: target.to_string(),
            target_provider: None,
            shutting_down: false,
            opts,
            now,
            work: Vec::new(),
            in_work: vec![false; n],
            ready_queue: BTreeSet::new(),
            starting: 0,
            heap: BinaryHeap::new(),
            pids: HashMap::default(),
            actions: Vec::new(),
            changed: Vec::new(),
            changed_flag: vec![false; n],
            target_set_at: now,
            target_active_at: None,
            counts: Vec::new(),
            told: Vec::new(),
            rdeps: Vec::new(),
            rdep_at: Vec::new(),
            fdeps: Vec::new(),
            fdep_at: Vec::new(),
            ukind: Vec::new(),
            waited_from: Vec::new(),
            blocked_from: Vec::new(),
            seen: Vec::new(),
        };
        p.recount();
        p.target_provider = p.graph.provider(target);
        p.required = p.required_set(target).unwrap_or_else(|| vec![false; n]);
        p.push_all();
        p.run();
        p
    }

    // ----- queries -------------------------------------------------------

    /// The graph.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The current target.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Whether the system is shutting down.
    pub fn shutting_down(&self) -> bool {
        self.shutting_down
    }

    /// Whether `id` is required by the current target.
    pub fn is_required(&self, id: UnitId) -> bool {
        self.required.get(id.index()).copied().unwrap_or(false)
    }

    /// The state of unit `id`.
    pub fn state(&self, id: UnitId) -> UnitState {
        self.rt.get(id.index()).map(|r| r.state).unwrap_or_default()
    }

    /// The full view of unit `id`.
    pub fn view(&self, id: UnitId) -> Option<UnitView> {
        let r = self.rt.get(id.index())?;
        let c = self.cold.get(id.index())?;
        let restart_at = match c.timer {
            Some((t, Timer::Restart)) => Some(t),
            _ => None,
        };
        let status = if let Some(s) = c.notify_status.as_ref().filter(|_| r.up()) {
            s.clone()
        } else if let Some(t) = restart_at {
            let d = t.since(self.now);
            format!("{}; restart in {}", self.status_text(id), short(d))
        } else {
            self.status_text(id)
        };
        Some(UnitView {
            state: r.state,
            since: c.since,
            pid: c.main_pid,
            degraded: r.degraded,
            blocked_by: c.rare().blocked_by.clone(),
            restarts: c.restarts,
            status,
            restart_at,
            required: self.is_required(id),
            start_at: c.start_at,
            active_at: c.active_at,
            end_at: c.end_at,
        })
    }

    /// The status text of unit `id` ([`Cold::status`] formatted).
    fn status_text(&self, id: UnitId) -> String {
        match self.cold.get(id.index()).map(|c| &c.status) {
            Some(Status::Fixed(s)) => (*s).to_string(),
            Some(Status::WaitingFor(j)) => format!("waiting for {}", self.dep_target(id, *j)),
            Some(Status::Text(s)) => s.clone(),
            None => String::new(),
        }
    }

    /// The target name of dependency `j` of `u`.
    fn dep_target(&self, u: UnitId, j: u32) -> &str {
        self.graph
            .get(u)
            .and_then(|n| n.deps.get(j as usize))
            .map_or("", |d| d.target.as_str())
    }

    /// Whether unit `u`'s status says the same as `new`, compared without
    /// formatting either: two `waiting for` dependencies with different
    /// providers name different targets (a target's provider is looked up
    /// by its name), so only the flat edge list is read for them.
    fn status_same(&self, u: UnitId, new: &Status) -> bool {
        fn text(s: &Status) -> Option<&str> {
            match s {
                Status::Fixed(t) => Some(t),
                Status::Text(t) => Some(t.as_str()),
                Status::WaitingFor(_) => None,
            }
        }
        let cur = &self.cold[u.index()].status;
        match (cur, new) {
            (Status::WaitingFor(a), Status::WaitingFor(b)) => {
                let prov = |j: u32| {
                    edges_of(&self.fdep_at, &self.fdeps, u.index())
                        .get(j as usize)
                        .map(|d| d.0)
                };
                a == b || (prov(*a) == prov(*b) && self.dep_target(u, *a) == self.dep_target(u, *b))
            }
            (Status::WaitingFor(j), other) | (other, Status::WaitingFor(j)) => text(other)
                .and_then(|t| t.strip_prefix("waiting for "))
                .is_some_and(|t| t == self.dep_target(u, *j)),
            (x, y) => text(x) == text(y),
        }
    }

    /// The state of the current target (its provider's), or `None` if no
    /// unit provides it.
    pub fn target_state(&self) -> Option<UnitState> {
        self.graph.provider(&self.target).map(|p| self.state(p))
    }

    /// Whether anything in the required set is not active, or the target's
    /// provider is degraded.
    pub fn degraded(&self) -> bool {
        match self.graph.provider(&self.target) {
            Some(p) => self.rt[p.index()].degraded || !self.rt[p.index()].state.is_active(),
            None => true,
        }
    }

    /// When the target was last set, and when it last became active.
    pub fn target_times(&self) -> (Instant, Option<Instant>) {
        (self.target_set_at, self.target_active_at)
    }

    /// The targets of `id` that are up only because another of its targets
    /// is required.
    pub fn coincidental(&self, id: UnitId) -> Vec<String> {
        let Some(node) = self.graph.get(id) else {
            return Vec::new();
        };
        if self.state(id) == UnitState::Disabled || node.ghost {
            return Vec::new();
        }
        node.spec
            .provides
            .iter()
            .filter(|t| {
                **t != self.target
                    && !node.dependents.iter().any(|&(_, d)| {
                        self.is_required(d)
                            && self.graph.node(d).deps.iter().any(|dep| dep.target == **t)
                    })
            })
            .cloned()
            .collect()
    }

    /// Whether the target is settled: `Some(true)` when its provider is
    /// active, `Some(false)` when it failed or is blocked, `None` while it is
    /// still on its way (or the target is unknown).
    pub fn target_settled(&self) -> Option<bool> {
        let p = self.graph.provider(&self.target)?;
        let r = &self.rt[p.index()];
        if r.state.is_active() {
            Some(true)
        } else if r.state == UnitState::Failed || (r.state == UnitState::Waiting && r.blocked) {
            Some(false)
        } else {
            None
        }
    }

    /// The required units that are failed.
    pub fn failed_units(&self) -> Vec<UnitId> {
        self.graph
            .ids()
            .filter(|&i| self.is_required(i) && self.state(i) == UnitState::Failed)
            .collect()
    }

    /// Whether every unit is idle and disabled (after shutdown).
    pub fn drained(&self) -> bool {
        self.rt
            .iter()
            .all(|r| r.phase == Phase::Idle && r.state == UnitState::Disabled)
    }

    /// The unit and role a PID belongs to, if any.
    pub fn owner(&self, pid: i32) -> Option<(UnitId, Role)> {
        self.pids.get(&pid).copied()
    }

    /// The earliest pending deadline: the init's poll timeout.
    pub fn next_deadline(&mut self) -> Option<Instant> {
        while let Some(Reverse((t, u, gen))) = self.heap.peek().copied() {
            let live = self
                .cold
                .get(u as usize)
                .is_some_and(|r| r.timer_gen == gen && r.timer.is_some());
            if live {
                return Some(t);
            }
            self.heap.pop();
        }
        None
    }

    /// Takes the actions decided so far.
    pub fn take_actions(&mut self) -> Vec<Action> {
        std::mem::take(&mut self.actions)
    }

    /// Moves the actions decided so far to the end of `out`, in order: what
    /// [`Planner::take_actions`] returns, but the planner keeps its buffer
    /// (and its capacity), and so can the caller (no allocation per call).
    pub fn drain_actions_into(&mut self, out: &mut impl Extend<Action>) {
        out.extend(self.actions.drain(..));
    }

    /// Takes the units whose state (or status) changed since the last call.
    pub fn take_changed(&mut self) -> Vec<UnitId> {
        for &u in &self.changed {
            if let Some(f) = self.changed_flag.get_mut(u.index()) {
                *f = false;
            }
        }
        std::mem::take(&mut self.changed)
    }

    // ----- inputs --------------------------------------------------------

    /// Switches to `target`. Units outside its required set stop (dependents
    /// first); failed units inside it get a fresh start.
    pub fn set_target(&mut self, target: &str, now: Instant) -> Result<(), UnknownTarget> {
        self.now = now;
        let req = self
            .required_set(target)
            .ok_or_else(|| UnknownTarget(target.to_string()))?;
        if self.shutting_down {
            return Ok(());
        }
        self.target = target.to_string();
        self.target_provider = self.graph.provider(target);
        self.target_set_at = now;
        self.target_active_at = None;
        let flipped: Vec<UnitId> = (0..req.len())
            .filter(|&i| req[i] != self.required[i])
            .map(|i| UnitId(i as u32))
            .collect();
        for u in flipped {
            self.push(u);
        }
        self.required = req;
        for i in 0..self.rt.len() {
            if self.required[i]
                && self.rt[i].state == UnitState::Failed
                && self.rt[i].phase == Phase::Idle
            {
                self.reset_failed(UnitId(i as u32));
            }
        }
        self.run();
        Ok(())
    }

    /// Restarts one required unit: stops it (dependents that hard-depend on
    /// it stop first and come back after it) and starts it again; a failed or
    /// waiting unit gets a fresh start.
    pub fn restart(&mut self, name: &str, now: Instant) -> Result<UnitId, RestartError> {
        self.now = now;
        let id = self
            .graph
            .unit(name)
            .ok_or_else(|| RestartError::UnknownUnit(name.to_string()))?;
        if self.shutting_down {
            return Err(RestartError::ShuttingDown);
        }
        if !self.is_required(id) {
            return Err(RestartError::NotRequired(name.to_string()));
        }
        let r = &mut self.rt[id.index()];
        if r.up() {
            r.restart_requested = true;
            self.cold[id.index()].attempt = 0;
        } else if r.phase == Phase::Idle {
            self.reset_failed(id);
            if self.rt[id.index()].state == UnitState::Exited {
                self.set_state(id, UnitState::Waiting, "restart requested");
            }
        }
        self.push(id);
        self.run();
        Ok(id)
    }

    /// Runs a running unit's `exec-reload`: the unit is `reloading` until
    /// the command exits (a `foreground-notified` unit that sends
    /// `RELOADING=1` stays so until `READY=1`), bounded by `start-timeout`.
    pub fn reload_unit(&mut self, name: &str, now: Instant) -> Result<UnitId, ReloadError> {
        self.now = now;
        let id = self
            .graph
            .unit(name)
            .filter(|&i| !self.graph.node(i).ghost)
            .ok_or_else(|| ReloadError::UnknownUnit(name.to_string()))?;
        let i = id.index();
        if self.rt[i].phase != Phase::Up || self.rt[i].to_stop {
            return Err(ReloadError::NotRunning(name.to_string()));
        }
        let spec = self.spec_of(id);
        if spec.exec_reload.is_none() {
            return Err(ReloadError::NoReloadCommand(name.to_string()));
        }
        let start_timeout = spec.start_timeout;
        self.rt[i].phase = Phase::Reloading;
        self.set_timer(id, start_timeout, Timer::Reload);
        self.set_state(id, UnitState::Reloading, "reloading");
        self.spawn(id, Role::Reload);
        self.run();
        Ok(id)
    }

    /// Begins an orderly shutdown: every unit stops, dependents first.
    pub fn shutdown(&mut self, now: Instant) {
        self.now = now;
        self.shutting_down = true;
        self.push_all();
        self.run();
    }

    /// Feeds one fact.
    pub fn fact(&mut self, fact: Fact, now: Instant) {
        self.now = now;
        match fact {
            Fact::Spawned { unit, role, pid } => self.on_spawned(unit, role, pid),
            Fact::SpawnFailed { unit, role, error } => self.on_spawn_failed(unit, role, error),
            Fact::Exited { pid, status } => {
                if let Some((unit, role)) = self.pids.remove(&pid) {
                    self.on_exit(unit, role, pid, status);
                }
            }
            Fact::Notify { unit, msg } => self.on_notify(unit, msg),
            Fact::ReadyLine { unit } => {
                if self
                    .rt
                    .get(unit.index())
                    .is_some_and(|r| r.phase == Phase::Main)
                {
                    self.become_up(unit, "ready (output matched)");
                }
            }
            Fact::Pidfile { unit, result } => self.on_pidfile(unit, result),
        }
        self.run();
    }

    /// Handles every deadline up to `now`.
    pub fn tick(&mut self, now: Instant) {
        self.now = now;
        while let Some(Reverse((t, u, gen))) = self.heap.peek().copied() {
            if t > now {
                break;
            }
            self.heap.pop();
            let Some(r) = self.cold.get(u as usize) else {
                continue;
            };
            if r.timer_gen != gen {
                continue;
            }
            let Some((_, kind)) = r.timer else { continue };
            self.cold[u as usize].timer = None;
            self.on_timer(UnitId(u), kind);
        }
        self.run();
    }

    /// Replaces the unit set (reload, transient units). Unchanged units keep
    /// their processes; changed ones that are up restart with the new
    /// definition; removed ones that are up stop (as "ghosts" that provide
    /// nothing). With `strict`, any error refuses the whole set and nothing
    /// changes. Returns what changed, the warnings, and for each old unit id
    /// its new id.
    pub fn replace_units(
        &mut self,
        units: Vec<(UnitSpec, Origin)>,
        strict: bool,
        now: Instant,
    ) -> Result<(Applied, Vec<Option<UnitId>>), Vec<crate::diag::Diagnostic>> {
        self.now = now;
        let ghosts: Vec<(Arc<UnitSpec>, Origin)> = self
            .graph
            .ids()
            .filter(|&i| self.rt[i.index()].phase != Phase::Idle)
            .filter(|&i| {
                let name = &self.graph.node(i).spec.name;
                self.graph.node(i).ghost || !units.iter().any(|(s, _)| &s.name == name)
            })
            .map(|i| {
                let n = self.graph.node(i);
                (
                    self.cold[i.index()]
                        .active
                        .clone()
                        .unwrap_or_else(|| n.spec.clone()),
                    n.origin.clone(),
                )
            })
            .collect();
        let built = if strict {
            Graph::build_with_ghosts(units, ghosts)
        } else {
            let (g, d) = {
                let (g, d) = Graph::build(units);
                // Lenient: rebuild with ghosts from the surviving units.
                let survivors: Vec<(UnitSpec, Origin)> =
                    g.units().map(|(s, o)| ((**s).clone(), o.clone())).collect();
                match Graph::build_with_ghosts(survivors, ghosts) {
                    Ok((g2, _)) => (g2, d),
                    Err(_) => (g, d),
                }
            };
            Ok((g, d))
        };
        let (graph, diags) = built?;
        let mut applied = Applied {
            warnings: diags
                .iter()
                .filter(|d| !d.is_error())
                .map(|d| d.to_string())
                .collect(),
            ..Applied::default()
        };
        let old = std::mem::replace(&mut self.graph, graph);
        self.target_provider = self.graph.provider(&self.target);
        let mut old_rt = std::mem::take(&mut self.rt);
        let mut old_cold = std::mem::take(&mut self.cold);
        let n = self.graph.len();
        let mut map: Vec<Option<UnitId>> = vec![None; old.len()];
        let mut rt = Vec::with_capacity(n);
        let mut cold = Vec::with_capacity(n);
        for id in self.graph.ids() {
            let node = self.graph.node(id);
            match old.unit(&node.spec.name) {
                Some(oid) => {
                    map[oid.index()] = Some(id);
                    let mut r = std::mem::replace(&mut old_rt[oid.index()], Rt::new());
                    let mut c = std::mem::replace(&mut old_cold[oid.index()], Cold::new(now));
                    // The dependency indices may move: a status that names
                    // one becomes text, from the old graph.
                    if let Status::WaitingFor(j) = c.status {
                        let t = old
                            .node(oid)
                            .deps
                            .get(j as usize)
                            .map_or("", |d| d.target.as_str());
                        c.status = Status::Text(format!("waiting for {t}"));
                    }
                    let onode = old.node(oid);
                    if !node.ghost && (onode.spec != node.spec || onode.ghost) {
                        if !onode.ghost {
                            applied.changed.push(node.spec.name.clone());
                        } else {
                            applied.added.push(node.spec.name.clone());
                        }
                        if r.up() {
                            r.spec_changed = true;
                        }
                        c.attempt = 0;
                        if r.phase == Phase::Idle && r.state == UnitState::Failed {
                            r.state = UnitState::Waiting;
                            c.timer = None;
                            c.rare_reset(|r| r.failure = None);
                        }
                    } else if !node.ghost {
                        applied.unchanged += 1;
                    }
                    rt.push(r);
                    cold.push(c);
                }
                None => {
                    applied.added.push(node.spec.name.clone());
                    rt.push(Rt::new());
                    cold.push(Cold::new(now));
                }
            }
        }
        for oid in old.ids() {
            let onode = old.node(oid);
            if !onode.ghost
                && self
                    .graph
                    .unit(&onode.spec.name)
                    .is_none_or(|i| self.graph.node(i).ghost)
            {
                applied.removed.push(onode.spec.name.clone());
            }
        }
        self.rt = rt;
        self.cold = cold;
        for r in &mut self.rt {
            r.queued = false;
            // The dependency indices may have moved.
            r.status_key = 0;
        }
        self.pids = self
            .pids
            .drain()
            .filter_map(|(pid, (u, role))| {
                map.get(u.index())
                    .copied()
                    .flatten()
                    .map(|nu| (pid, (nu, role)))
            })
            .collect();
        self.heap.clear();
        for (i, r) in self.cold.iter().enumerate() {
            if let Some((t, _)) = r.timer {
                self.heap.push(Reverse((t, i as u32, r.timer_gen)));
            }
        }
        self.ready_queue.clear();
        self.starting = self.rt.iter().filter(|r| r.starting()).count();
        self.in_work = vec![false; n];
        self.work.clear();
        self.changed_flag = vec![false; n];
        self.changed = self
            .changed
            .iter()
            .filter_map(|u| map.get(u.index()).copied().flatten())
            .collect();
        for &u in &self.changed {
            self.changed_flag[u.index()] = true;
        }
        self.actions = std::mem::take(&mut self.actions)
            .into_iter()
            .filter_map(|a| remap_action(a, &map))
            .collect();
        self.recount();
        self.required = self
            .required_set(&self.target)
            .unwrap_or_else(|| vec![false; n]);
        self.push_all();
        self.run();
        Ok((applied, map))
    }

    /// [`Graph::required_set`], walked over the flat dependency lists
    /// (the same set, without touching every graph node).
    fn required_set(&self, target: &str) -> Option<Vec<bool>> {
        let root = self.graph.provider(target)?;
        let mut req = vec![false; self.rt.len()];
        let mut work = vec![root];
        req[root.index()] = true;
        while let Some(u) = work.pop() {
            for &(p, _) in edges_of(&self.fdep_at, &self.fdeps, u.index()) {
                if let Some(p) = p {
                    if !req[p.index()] {
                        req[p.index()] = true;
                        work.push(p);
                    }
                }
            }
        }
        Some(req)
    }

    // ----- the work list ---------------------------------------------------

    fn push(&mut self, id: UnitId) {
        if let Some(f) = self.in_work.get_mut(id.index()) {
            if !*f {
                *f = true;
                self.work.push(id);
            }
        }
    }

    fn push_all(&mut self) {
        for i in (0..self.rt.len()).rev() {
            self.push(UnitId(i as u32));
        }
    }

    /// Pushes the neighbours of `id` that read something of it that
    /// changed since they were last pushed for it: its dependents when its
    /// [`dep_flags`] moved (or `blocked_moved`: they show its `blocked_by`);
    /// its providers on their way down when one of its [`stop_flags`] went
    /// off (a provider waits for its dependents to stop). A neighbour that
    /// reads nothing new would evaluate to what it is, so it is not pushed:
    /// a fact's work stays proportional to what it changes, even around a
    /// unit with thousands of neighbours.
    fn push_neighbours(&mut self, id: UnitId) {
        self.push_neighbours_or_blocked(id, false);
    }

    fn push_neighbours_or_blocked(&mut self, id: UnitId, blocked_moved: bool) {
        let i = id.index();
        let Some(r) = self.rt.get(i) else {
            return;
        };
        let now = (dep_flags(r), stop_flags(r));
        let was = match self.seen.get_mut(i) {
            Some(s) => std::mem::replace(s, now),
            None => return,
        };
        let Planner {
            in_work,
            work,
            rt,
            rdeps,
            rdep_at,
            fdeps,
            fdep_at,
            ..
        } = self;
        let mut push = |u: UnitId| {
            if let Some(f) = in_work.get_mut(u.index()) {
                if !*f {
                    *f = true;
                    work.push(u);
                }
            }
        };
        if was.0 != now.0 || blocked_moved {
            for &(d, _, _) in edges_of(rdep_at, rdeps, i) {
                push(d);
            }
        }
        // Whether a dependent still holds its providers' stop back is
        // monotone in these flags: only a flag going off can release one,
        // and only a provider on its way down (to stop, or an exited unit
        // that may leave) waits for that.
        if was.1 & !now.1 != 0 {
            for p in edges_of(fdep_at, fdeps, i).iter().filter_map(|d| d.0) {
                if rt
                    .get(p.index())
                    .is_some_and(|r| r.to_stop || r.state == UnitState::Exited)
                {
                    push(p);
                }
            }
        }
    }

    fn run(&mut self) {
        loop {
            while let Some(u) = self.work.pop() {
                self.in_work[u.index()] = false;
                self.evaluate(u);
            }
            // Start slots freed: let queued units try again, in name order.
            let cap = self.opts.max_concurrent_starts.unwrap_or(usize::MAX);
            let mut progressed = false;
            while self.starting < cap {
                let Some(u) = self.ready_queue.pop_first() else {
                    break;
                };
                self.rt[u.index()].queued = false;
                self.rt[u.index()].queued_turn = true;
                progressed = true;
                self.evaluate(u);
                self.rt[u.index()].queued_turn = false;
            }
            if !progressed && self.work.is_empty() {
                break;
            }
        }
        if self.target_active_at.is_none()
            && self
                .target_provider
                .is_some_and(|p| self.state(p).is_active())
        {
            self.target_active_at = Some(self.now);
        }
    }

    /// The rules of the module documentation, for one unit.
    fn evaluate(&mut self, u: UnitId) {
        let i = u.index();
        let ghost = self.ukind[i] & U_GHOST != 0;
        let required = self.required[i] && !self.shutting_down && !ghost;

        // Hard dependencies: all active (and not leaving)? Read from the
        // running counts, so that a unit with thousands of dependencies (a
        // target over a whole fleet of services) costs O(1) here; what blocks
        // it and what it waits on are looked up only when it is waiting.
        let c = self.counts[i];
        debug_assert_eq!(c, self.scan_counts(u), "dependency counts of {u:?}");
        let hard_ok = c.hard_bad == 0;
        let hold_ok = c.hold_bad == 0; // depends-on providers still fine for staying up
        let waits_ok = c.waits_bad == 0;
        let degraded = c.degraded > 0;

        let r = &self.rt[i];
        let degraded = degraded && r.state.is_active();
        let to_stop = r.up() && (!required || r.restart_requested || r.spec_changed || !hold_ok);
        let mut changed = false;
        let mut blocked_moved = false;
        let degraded_changed = r.degraded != degraded;
        if degraded_changed || r.to_stop != to_stop {
            changed = true;
        }
        {
            let r = &mut self.rt[i];
            r.degraded = degraded;
            r.to_stop = to_stop;
        }
        self.sync(u);
        // `degraded` is part of what a unit's status reports: watchers
        // (subscribe) hear of it like a state change. It used to change
        // silently.
        if degraded_changed {
            self.mark_changed(u);
        }

        match self.rt[i].phase {
            Phase::Idle => {
                let state = self.rt[i].state;
                let leaving_exited = state == UnitState::Exited && (!required || !hold_ok);
                // Only an exited unit that is leaving looks at its stop
                // commands (the spec is not read on every evaluation).
                let has_stop = leaving_exited && {
                    let sp = self.cold[i]
                        .active
                        .as_ref()
                        .unwrap_or(&self.graph.node(u).spec);
                    sp.exec_stop.is_some() || !sp.exec_stop_post.is_empty()
                };
                if leaving_exited && self.dependents_block_stop(u) {
                    // Dependents first.
                } else if leaving_exited && has_stop {
                    // An exited oneshot with exec-stop: "stopping" runs it.
                    let why = if required {
                        "dependency not active"
                    } else {
                        "not required"
                    };
                    self.stop_exited(u, why);
                    changed = true;
                } else if !required {
                    if state != UnitState::Disabled {
                        self.clear_timer(u);
                        self.rt[i].restart_ready = false;
                        self.set_blocked(i, None);
                        self.set_state(u, UnitState::Disabled, "not required");
                        changed = true;
                    }
                } else if state == UnitState::Exited {
                    if !hold_ok {
                        self.set_state(u, UnitState::Waiting, "dependency not active");
                        changed = true;
                        self.push(u);
                    }
                } else if state == UnitState::Failed && !self.rt[i].restart_ready {
                    // Stays failed until its restart timer or a reset.
                } else if hard_ok && waits_ok {
                    // With a cap, every start goes through the queue so that
                    // slots are handed out in name order.
                    let capped = self.opts.max_concurrent_starts.is_some();
                    if self.ukind[i] & U_VIRTUAL == 0 && capped && !self.rt[i].queued_turn {
                        if !self.rt[i].queued {
                            self.rt[i].queued = true;
                            self.ready_queue.insert(u);
                        }
                        if state != UnitState::Waiting {
                            self.set_state(u, UnitState::Waiting, "waiting for a start slot");
                            changed = true;
                        }
                    } else {
                        self.rt[i].queued_turn = false;
                        self.set_blocked(i, None);
                        self.begin_start(u);
                        changed = true;
                    }
                } else {
                    let blocked = if c.blocking > 0 {
                        self.first_blocked(u)
                    } else {
                        None
                    };
                    let waited = if blocked.is_none() && c.waited > 0 {
                        self.first_waited_on(u)
                    } else {
                        None
                    };
                    // The hot flag says whether there is a name to compare.
                    let blocked_changed = (self.rt[i].blocked || blocked.is_some())
                        && self.cold[i].rare().blocked_by != blocked;
                    blocked_moved = blocked_changed;
                    // The status, compared before it is formatted: most
                    // evaluations of a waiting unit leave it as it is.
                    // The status as a key ([`Rt::status_key`]): when it is
                    // the one the status was last written for, the text is
                    // the same and neither it nor the target name is read.
                    let key = match (&blocked, waited) {
                        (Some(_), _) => 0,
                        (None, Some(j)) => j as u32 + 2,
                        (None, None) => 1,
                    };
                    let why = if key != 0 && self.rt[i].status_key == key {
                        None
                    } else {
                        let new = match (&blocked, waited) {
                            (Some(b), _) => Status::Text(format!("blocked by {b}")),
                            (None, Some(j)) => Status::WaitingFor(j as u32),
                            (None, None) => Status::Fixed("waiting"),
                        };
                        if self.status_same(u, &new) {
                            None
                        } else {
                            Some(new)
                        }
                    };
                    if state != UnitState::Waiting && state != UnitState::Failed {
                        let why = why.unwrap_or_else(|| self.cold[i].status.clone());
                        self.set_blocked(i, blocked);
                        self.set_state(u, UnitState::Waiting, why);
                        self.rt[i].status_key = key;
                        changed = true;
                    } else {
                        if blocked_changed {
                            self.set_blocked(i, blocked);
                            self.mark_changed(u);
                            changed = true;
                        }
                        // What it waits for changes as its dependencies
                        // start: the status says what it waits for now
                        // (it used to keep naming the first one).
                        if state == UnitState::Waiting {
                            if let Some(why) = why {
                                self.cold[i].status = why;
                                self.mark_changed(u);
                            }
                            self.rt[i].status_key = key;
                        }
                    }
                }
            }
            Phase::Pre(_) | Phase::Main | Phase::Up | Phase::Reloading => {
                if to_stop {
                    // Dependents stop first.
                    if !self.dependents_block_stop(u) {
                        let why = if !required {
                            if self.shutting_down {
                                "shutting down"
                            } else {
                                "not required"
                            }
                        } else if self.rt[i].spec_changed {
                            "definition changed"
                        } else if self.rt[i].restart_requested {
                            "restart requested"
                        } else {
                            "dependency not active"
                        };
                        self.begin_stop(u, why);
                        changed = true;
                    }
                }
            }
            Phase::Stopping { .. } | Phase::StopPost(_) => {}
        }
        self.sync(u);
        if changed {
            self.push_neighbours_or_blocked(u, blocked_moved);
        }
    }

    // ----- dependency counts -----------------------------------------------

    /// Recomputes every unit's [`DepCounts`] from scratch (a new graph).
    fn recount(&mut self) {
        let n = self.rt.len();
        self.told = self.rt.iter().map(dep_flags).collect();
        self.seen = self
            .rt
            .iter()
            .map(|r| (dep_flags(r), stop_flags(r)))
            .collect();
        self.waited_from = vec![0; n];
        self.blocked_from = vec![0; n];
        // Flat edge lists, by counting: same order as the graph's lists.
        let mut fdep_at = Vec::with_capacity(n + 1);
        let mut fdeps = Vec::new();
        let mut rdep_at = vec![0u32; n + 1];
        let mut ukind = Vec::with_capacity(n);
        for u in self.graph.ids() {
            let node = self.graph.node(u);
            fdep_at.push(fdeps.len() as u32);
            let mut k = 0;
            if node.ghost {
                k |= U_GHOST;
            }
            if node.spec.kind == UnitType::Virtual {
                k |= U_VIRTUAL;
            }
            ukind.push(k);
            for d in &node.deps {
                fdeps.push((d.provider, d.kind));
                if let Some(c) = d.provider.and_then(|p| rdep_at.get_mut(p.index() + 1)) {
                    *c += 1;
                }
            }
        }
        fdep_at.push(fdeps.len() as u32);
        for i in 0..n {
            rdep_at[i + 1] += rdep_at[i];
        }
        let mut fill: Vec<u32> = rdep_at[..n].to_vec();
        let mut rdeps = vec![(UnitId(0), 0u32, DepKind::DependsOn); rdep_at[n] as usize];
        for u in self.graph.ids() {
            let (a, b) = (fdep_at[u.index()] as usize, fdep_at[u.index() + 1] as usize);
            for (j, &(prov, kind)) in fdeps[a..b].iter().enumerate() {
                if let Some(p) = prov {
                    if let Some(f) = fill.get_mut(p.index()) {
                        rdeps[*f as usize] = (u, j as u32, kind);
                        *f += 1;
                    }
                }
            }
        }
        // The counts, from the flat lists ([`Planner::scan_counts`] without
        // reading every graph node again).
        let told = &self.told;
        self.counts = (0..n)
            .map(|u| {
                let mut c = DepCounts::default();
                for &(p, kind) in edges_of(&fdep_at, &fdeps, u) {
                    c.add(DepCounts::edge(kind, p.map(|p| told[p.index()])));
                }
                c
            })
            .collect();
        self.rdeps = rdeps;
        self.rdep_at = rdep_at;
        self.fdeps = fdeps;
        self.fdep_at = fdep_at;
        self.ukind = ukind;
    }

    /// `u`'s counts as a scan of its dependencies finds them now.
    fn scan_counts(&self, u: UnitId) -> DepCounts {
        let mut c = DepCounts::default();
        for d in &self.graph.node(u).deps {
            c.add(DepCounts::edge(
                d.kind,
                d.provider.map(|p| dep_flags(&self.rt[p.index()])),
            ));
        }
        c
    }

    /// Tells `u`'s dependents that its [`dep_flags`] changed, if they did.
    /// Called wherever a unit's state, `to_stop`, `degraded` or
    /// `blocked_by` may have moved, so that the counts are always current:
    /// O(1) when nothing changed, O(dependents) when something did.
    fn sync(&mut self, u: UnitId) {
        let i = u.index();
        let new = dep_flags(&self.rt[i]);
        let Some(told) = self.told.get_mut(i) else {
            return;
        };
        let old = std::mem::replace(told, new);
        if old == new {
            return;
        }
        let Planner {
            rdeps,
            rdep_at,
            counts,
            waited_from,
            blocked_from,
            ..
        } = self;
        for &(d, j, kind) in edges_of(rdep_at, rdeps, i) {
            let (was, now) = (
                DepCounts::edge(kind, Some(old)),
                DepCounts::edge(kind, Some(new)),
            );
            if let Some(c) = counts.get_mut(d.index()) {
                c.sub(was);
                c.add(now);
            }
            if now.waited > was.waited {
                if let Some(w) = waited_from.get_mut(d.index()) {
                    *w = (*w).min(j);
                }
            }
            if now.blocking > was.blocking {
                if let Some(b) = blocked_from.get_mut(d.index()) {
                    *b = (*b).min(j);
                }
            }
        }
    }

    /// What blocks `u`: the first missing hard target, failed hard
    /// provider, or hard provider's own `blocked_by`, in dependency order.
    /// Searched from where the last search ended, as
    /// [`Planner::first_waited_on`].
    fn first_blocked(&mut self, u: UnitId) -> Option<String> {
        let i = u.index();
        let from = self.blocked_from.get(i).copied().unwrap_or(0) as usize;
        let deps = &self.graph.node(u).deps;
        let found = deps.iter().enumerate().skip(from).find(|(_, d)| {
            let f = d.provider.map(|p| dep_flags(&self.rt[p.index()]));
            DepCounts::edge(d.kind, f).blocking > 0
        });
        if let Some(b) = self.blocked_from.get_mut(i) {
            *b = found.map_or(deps.len(), |(j, _)| j) as u32;
        }
        let (_, d) = found?;
        match d.provider {
            Some(p) if self.rt[p.index()].state != UnitState::Failed => {
                self.cold[p.index()].rare().blocked_by.clone()
            }
            _ => Some(d.target.clone()),
        }
    }

    /// The index of the first dependency (in order) that `u` still waits
    /// on. The search starts where the last one ended ([`Planner::sync`]
    /// moves that point back when an earlier dependency is waited on
    /// again), so a unit waiting on thousands of dependencies costs O(1)
    /// amortized per evaluation.
    fn first_waited_on(&mut self, u: UnitId) -> Option<usize> {
        let i = u.index();
        let from = self.waited_from.get(i).copied().unwrap_or(0) as usize;
        let deps = edges_of(&self.fdep_at, &self.fdeps, i);
        let found = deps
            .iter()
            .enumerate()
            .skip(from)
            .find_map(|(j, &(p, kind))| {
                let f = dep_flags(&self.rt[p?.index()]);
                (DepCounts::edge(kind, Some(f)).waited > 0).then_some(j)
            });
        if let Some(w) = self.waited_from.get_mut(i) {
            *w = found.unwrap_or(deps.len()) as u32;
        }
        found
    }

    /// Whether some dependent of `u` is still up (or active) and will stop,
    /// so that `u` must wait: dependents stop before their dependencies.
    /// A dependent's own flag may be stale here (it may be evaluated later),
    /// so this anticipates: hard dependents always go first, and so does
    /// anything that is no longer required.
    fn dependents_block_stop(&self, u: UnitId) -> bool {
        edges_of(&self.rdep_at, &self.rdeps, u.index())
            .iter()
            .any(|&(d, _, kind)| {
                let dr = &self.rt[d.index()];
                let will_stop = dr.to_stop
                    || kind == DepKind::DependsOn
                    || !self.required[d.index()]
                    || self.shutting_down;
                ((dr.up() || dr.state.is_active()) && will_stop)
                    || matches!(dr.phase, Phase::Stopping { .. } | Phase::StopPost(_))
            })
    }

    // ----- transitions -----------------------------------------------------

    fn set_state(&mut self, u: UnitId, state: UnitState, status: impl Into<Status>) {
        let now = self.now;
        let i = u.index();
        let r = &mut self.rt[i];
        let c = &mut self.cold[i];
        let moved = r.state != state;
        if moved {
            c.since = now;
            if state.is_active() && !r.state.is_active() {
                c.active_at = Some(now);
            }
            if matches!(state, UnitState::Failed | UnitState::Disabled)
                && r.state != UnitState::Waiting
            {
                c.end_at = Some(now);
            }
        }
        r.state = state;
        c.status = status.into();
        r.status_key = 0;
        self.sync(u);
        self.mark_changed(u);
        if moved {
            self.push(u);
            self.push_neighbours(u);
        }
    }

    /// Sets `blocked_by` (cold) and its hot flag.
    fn set_blocked(&mut self, i: usize, b: Option<String>) {
        if self.rt[i].blocked || b.is_some() {
            self.rt[i].blocked = b.is_some();
            if b.is_some() {
                self.cold[i].rare_mut().blocked_by = b;
            } else {
                self.cold[i].rare_reset(|r| r.blocked_by = None);
            }
        }
    }

    fn mark_changed(&mut self, u: UnitId) {
        if let Some(f) = self.changed_flag.get_mut(u.index()) {
            if !*f {
                *f = true;
                self.changed.push(u);
            }
        }
    }

    fn set_timer(&mut self, u: UnitId, after: Duration, kind: Timer) {
        let t = self.now.after(after);
        let r = &mut self.cold[u.index()];
        r.timer_gen += 1;
        r.timer = Some((t, kind));
        self.heap.push(Reverse((t, u.0, r.timer_gen)));
    }

    fn clear_timer(&mut self, u: UnitId) {
        let r = &mut self.cold[u.index()];
        if r.timer.is_some() {
            r.timer = None;
            r.timer_gen += 1;
        }
    }

    fn reset_failed(&mut self, u: UnitId) {
        self.clear_timer(u);
        let i = u.index();
        self.rt[i].restart_ready = false;
        self.cold[i].attempt = 0;
        self.cold[i].rare_reset(|r| r.failure = None);
        if self.rt[i].state == UnitState::Failed {
            self.set_state(u, UnitState::Waiting, "reset");
        }
    }

    /// The definition unit `u`'s processes run with: the one it started
    /// with, or (idle) the graph's. Borrowed: most callers read a field or
    /// two, and cloning the `Arc` touched its count on a cold line.
    fn spec_of(&self, u: UnitId) -> &UnitSpec {
        active_spec(&self.cold[u.index()], &self.graph, u)
    }

    /// Asks for the process of `role` of unit `u`, its command taken from
    /// [`Planner::spec_of`] (the caller has checked that it exists).
    fn spawn(&mut self, u: UnitId, role: Role) {
        let i = u.index();
        let Planner {
            cold,
            graph,
            actions,
            ..
        } = self;
        let spec = active_spec(&cold[i], graph, u);
        let mainpid = cold[i].main_pid;
        let Some(argv) = spawn_argv(spec, role, mainpid) else {
            debug_assert!(false, "{role:?} of {u:?} has no command");
            return;
        };
        actions.push(Action::Spawn {
            unit: u,
            role,
            argv,
            spec: spec.clone(),
            mainpid,
        });
        if role != Role::Main {
            cold[i].aux = Some((role, None));
        }
    }

    /// Asks for `signal` to the process group `pid` leads (every spawn
    /// leads one). The process itself gets it too while the planner still
    /// tracks it as `u`'s (a daemon may have left its group); an untracked
    /// PID may be free again, so only its group is signalled, and a number
    /// that now belongs to another unit's process is not signalled at all.
    fn kill_group(&mut self, u: UnitId, pid: i32, signal: Signal) {
        let whom = match self.pids.get(&pid) {
            Some(&(owner, _)) if owner == u => Whom::GroupAndLeader(pid),
            Some(_) => return,
            None => Whom::Group(pid),
        };
        self.actions.push(Action::Kill {
            unit: u,
            whom,
            signal,
        });
    }

    fn begin_start(&mut self, u: UnitId) {
        let i = u.index();
        let spec = &self.graph.node(u).spec;
        let (kind, start_timeout, has_pre) = (
            spec.kind,
            spec.start_timeout,
            !spec.exec_start_pre.is_empty(),
        );
        let spec = spec.clone();
        let r = &mut self.rt[i];
        let c = &mut self.cold[i];
        if r_restarting(r) {
            c.restarts += 1;
        }
        r.restart_ready = false;
        r.restart_requested = false;
        r.spec_changed = false;
        c.active = Some(spec);
        c.rare_reset(|r| {
            r.failure = None;
            r.script_group = None;
            r.pidfile_tries = 0;
            r.pidfile_deadline = None;
        });
        c.notify_status = None;
        c.ready_seen = false;
        c.exit_ok = false;
        c.self_stop = false;
        c.dead_leader = None;
        c.start_at = Some(self.now);
        c.main_pid = None;
        self.clear_timer(u);
        if kind == UnitType::Virtual {
            self.rt[i].phase = Phase::Up;
            self.set_state(u, UnitState::Running, "active");
            return;
        }
        self.starting += 1;
        self.set_timer(u, start_timeout, Timer::Start);
        if !has_pre {
            self.start_main(u);
        } else {
            self.rt[i].phase = Phase::Pre(0);
            self.set_state(u, UnitState::Starting, "running exec-start-pre");
            self.spawn(u, Role::Pre(0));
        }
    }

    fn start_main(&mut self, u: UnitId) {
        let has_main = self.spec_of(u).exec_start.is_some();
        self.rt[u.index()].phase = Phase::Main;
        self.cold[u.index()].aux = None;
        self.set_state(u, UnitState::Starting, "starting");
        if has_main {
            self.spawn(u, Role::Main);
        } else {
            self.fail(u, "no exec-start".to_string(), false);
        }
    }

    fn leave_starting(&mut self, u: UnitId) {
        if self.rt[u.index()].starting() {
            self.starting = self.starting.saturating_sub(1);
        }
    }

    fn become_up(&mut self, u: UnitId, status: &'static str) {
        self.leave_starting(u);
        self.clear_timer(u);
        self.rt[u.index()].phase = Phase::Up;
        self.cold[u.index()].aux = None;
        self.set_state(u, UnitState::Running, status);
    }

    fn on_spawned(&mut self, u: UnitId, role: Role, pid: i32) {
        let (Some(r), Some(c)) = (self.rt.get(u.index()), self.cold.get_mut(u.index())) else {
            return;
        };
        self.pids.insert(pid, (u, role));
        if role == Role::Main {
            if r.phase != Phase::Main || c.main_pid.is_some() {
                // The unit moved on before the spawn was reported: the
                // process is not wanted.
                self.kill_group(u, pid, Signal::KILL);
                return;
            }
            c.main_pid = Some(pid);
            let spec = self.spec_of(u);
            let (kind, ready_wait, ready_grep) =
                (spec.kind, spec.ready_wait, spec.ready_grep.is_some());
            if kind == UnitType::ForegroundSupervised {
                if let Some(w) = ready_wait {
                    // One timer per unit: a ready-wait that would end after
                    // the start timeout leaves the start timeout in place
                    // (the start then times out, as it should).
                    let start_left = match self.cold[u.index()].timer {
                        Some((t, Timer::Start)) => Some(t.since(self.now)),
                        _ => None,
                    };
                    if start_left.is_none_or(|left| w < left) {
                        self.set_timer(u, w, Timer::ReadyWait);
                    }
                } else if !ready_grep {
                    self.become_up(u, "running");
                }
            }
            self.mark_changed(u);
        } else {
            match c.aux {
                Some((ar, None)) if ar == role => c.aux = Some((role, Some(pid))),
                _ => self.kill_group(u, pid, Signal::KILL),
            }
        }
    }

    fn on_spawn_failed(&mut self, u: UnitId, role: Role, error: String) {
        if self.rt.get(u.index()).is_none() {
            return;
        }
        let msg = format!("{}: {error}", role.key());
        match role {
            Role::Pre(_) | Role::Main => {
                if self.rt[u.index()].starting() {
                    self.fail(u, msg, false);
                }
            }
            Role::Reload => {
                self.cold[u.index()].aux = None;
                if self.rt[u.index()].phase == Phase::Reloading {
                    self.rt[u.index()].phase = Phase::Up;
                    self.set_state(u, UnitState::Running, msg);
                }
            }
            Role::Stop => {
                // Fall back to the kill signal.
                self.cold[u.index()].aux = None;
                self.cold[u.index()].status = Status::Text(msg);
                self.rt[u.index()].status_key = 0;
                self.signal_main(u, false);
                self.check_stopped(u);
            }
            Role::StopPost(n) => {
                self.cold[u.index()].aux = None;
                self.stop_post(u, n + 1);
            }
        }
    }

    fn on_exit(&mut self, u: UnitId, role: Role, pid: i32, status: ExitStatus) {
        let i = u.index();
        let (kind, restart) = {
            let s = self.spec_of(u);
            (s.kind, s.restart)
        };
        match role {
            Role::Main => {
                if self.cold[i].main_pid != Some(pid) {
                    return;
                }
                self.cold[i].main_pid = None;
                // What the main process left in its group is killed once the
                // unit is down (`finish_main`), unless this is a start
                // command whose exit 0 hands over to what it started.
                let hands_over = self.rt[i].phase == Phase::Main
                    && status.success()
                    && matches!(
                        kind,
                        UnitType::Oneshot
                            | UnitType::BackgroundScripted
                            | UnitType::BackgroundPidfile
                    );
                if !hands_over {
                    self.cold[i].dead_leader = Some(pid);
                }
                match self.rt[i].phase {
                    Phase::Main => match kind {
                        UnitType::Oneshot if status.success() => {
                            self.leave_starting(u);
                            self.clear_timer(u);
                            self.rt[i].phase = Phase::Idle;
                            self.cold[i].attempt = 0;
                            self.set_state(u, UnitState::Exited, "exit status 0");
                        }
                        UnitType::BackgroundScripted if status.success() => {
                            self.cold[i].rare_mut().script_group = Some(pid);
                            self.become_up(u, "started");
                        }
                        UnitType::BackgroundPidfile if status.success() => {
                            if let Some(path) = self.spec_of(u).pidfile.clone() {
                                self.actions.push(Action::ReadPidfile { unit: u, path });
                            } else {
                                self.fail(u, "no pidfile".to_string(), false);
                            }
                        }
                        UnitType::Oneshot => self.fail(u, status.describe(), true),
                        _ => {
                            let what = format!("{} before it was ready", status.describe());
                            self.fail(u, what, true);
                        }
                    },
                    Phase::Up | Phase::Reloading => {
                        if status.success() && restart != RestartPolicy::Always {
                            self.cold[i].rare_reset(|r| r.failure = None);
                            self.cold[i].exit_ok = true;
                            self.cold[i].status = Status::Fixed("exit status 0");
                            self.rt[i].status_key = 0;
                            self.finish_main(u, true);
                        } else {
                            self.fail(u, status.describe(), true);
                        }
                    }
                    Phase::Stopping { .. } => {
                        // After `STOPPING=1` the unit ends by itself: judge
                        // the exit as in `Up` (a clean exit is `exited`,
                        // anything else a failure). As a stop the init had
                        // asked for, it would go back to `waiting` and start
                        // again at once.
                        if std::mem::take(&mut self.cold[i].self_stop) {
                            if status.success() && restart != RestartPolicy::Always {
                                self.cold[i].rare_reset(|r| r.failure = None);
                                self.cold[i].exit_ok = true;
                                self.cold[i].status = Status::Fixed("exit status 0");
                                self.rt[i].status_key = 0;
                            } else {
                                self.cold[i].restart_due = restart != RestartPolicy::No;
                                self.cold[i].rare_mut().failure = Some(status.describe());
                            }
                        }
                        self.check_stopped(u)
                    }
                    _ => {}
                }
            }
            Role::Pre(n) => {
                if self.cold[i].aux.map(|a| a.0) != Some(role) {
                    return;
                }
                self.cold[i].aux = None;
                let (ignore, pres) = {
                    let pre = &self.spec_of(u).exec_start_pre;
                    (
                        pre.get(n as usize).is_some_and(|c| c.ignore_failure),
                        pre.len(),
                    )
                };
                if self.rt[i].phase != Phase::Pre(n) {
                    if matches!(self.rt[i].phase, Phase::Stopping { .. }) {
                        self.check_stopped(u);
                    }
                    return;
                }
                if status.success() || ignore {
                    let next = n + 1;
                    if (next as usize) < pres {
                        self.rt[i].phase = Phase::Pre(next);
                        self.spawn(u, Role::Pre(next));
                    } else {
                        self.start_main(u);
                    }
                } else {
                    self.fail(u, format!("exec-start-pre: {}", status.describe()), true);
                }
            }
            Role::Stop => {
                if self.cold[i].aux.map(|a| a.0) != Some(role) {
                    return;
                }
                self.cold[i].aux = None;
                if !status.success() {
                    self.cold[i].status = Status::Text(format!("exec-stop: {}", status.describe()));
                    self.rt[i].status_key = 0;
                }
                // What exec-stop left running gets the kill signal.
                self.signal_main(u, false);
                self.check_stopped(u);
            }
            Role::StopPost(n) => {
                if self.cold[i].aux.map(|a| a.0) != Some(role) {
                    return;
                }
                self.cold[i].aux = None;
                if self.rt[i].phase == Phase::StopPost(n) {
                    self.stop_post(u, n + 1);
                }
            }
            Role::Reload => {
                if self.cold[i].aux.map(|a| a.0) != Some(role) {
                    return;
                }
                self.cold[i].aux = None;
                if self.rt[i].phase == Phase::Reloading {
                    self.clear_timer(u);
                    self.rt[i].phase = Phase::Up;
                    let st = if status.success() {
                        Status::Fixed("reloaded")
                    } else {
                        Status::Text(format!("exec-reload: {}", status.describe()))
                    };
                    self.set_state(u, UnitState::Running, st);
                }
            }
        }
    }

    fn on_pidfile(&mut self, u: UnitId, result: Result<i32, String>) {
        let (Some(r), Some(c)) = (self.rt.get(u.index()), self.cold.get(u.index())) else {
            return;
        };
        if r.phase != Phase::Main {
            // Stopped while the daemon was starting: it must not stay behind.
            if let Ok(pid) = result {
                let signal = c
                    .active
                    .as_ref()
                    .map(|s| s.kill_signal)
                    .unwrap_or(Signal::TERM);
                self.kill_group(u, pid, signal);
                // The init does not track this PID, so a group signal would
                // not reach a daemon that is not a group leader: signal the
                // process itself too.
                self.actions.push(Action::Kill {
                    unit: u,
                    whom: Whom::Process(pid),
                    signal,
                });
            }
            return;
        }
        match result {
            Ok(pid) => {
                self.cold[u.index()].main_pid = Some(pid);
                self.pids.insert(pid, (u, Role::Main));
                self.become_up(u, "running");
            }
            Err(e) => {
                // A forking daemon often writes its pidfile only after the
                // command that started it has exited (redis does): read it
                // again, 10 ms, 20 ms, ... at most 250 ms apart, until the
                // start-timeout. Failing at the first miss left the daemon
                // running unsupervised, and the restart started a second one.
                let i = u.index();
                let deadline = match (self.cold[i].rare().pidfile_deadline, self.cold[i].timer) {
                    (Some(d), _) => d,
                    (None, Some((t, Timer::Start))) => t,
                    (None, _) => self.now,
                };
                if self.now >= deadline {
                    self.fail(u, format!("pidfile: {e} (start timed out)"), true);
                    return;
                }
                let rare = self.cold[i].rare_mut();
                let tries = rare.pidfile_tries;
                rare.pidfile_tries = tries.saturating_add(1);
                rare.pidfile_deadline = Some(deadline);
                self.cold[i].status = Status::Text(format!("waiting for the pidfile ({e})"));
                self.rt[i].status_key = 0;
                self.mark_changed(u);
                let step =
                    Duration::from_millis(10u64 << tries.min(5)).min(Duration::from_millis(250));
                self.set_timer(u, step.min(deadline.since(self.now)), Timer::Pidfile);
            }
        }
    }

    fn on_notify(&mut self, u: UnitId, msg: Notify) {
        let i = u.index();
        let (Some(r), Some(c)) = (self.rt.get_mut(i), self.cold.get_mut(i)) else {
            return;
        };
        let kind = c.active.as_ref().map(|s| s.kind);
        match msg {
            Notify::Ready => {
                c.ready_seen = true;
                match r.phase {
                    Phase::Main if kind == Some(UnitType::ForegroundNotified) => {
                        self.become_up(u, "ready")
                    }
                    Phase::Reloading if c.aux.is_none() => {
                        self.clear_timer(u);
                        self.rt[i].phase = Phase::Up;
                        self.set_state(u, UnitState::Running, "reloaded");
                    }
                    _ => {}
                }
            }
            Notify::Reloading => {
                if r.phase == Phase::Up {
                    r.phase = Phase::Reloading;
                    let t = c
                        .active
                        .as_ref()
                        .map(|s| s.start_timeout)
                        .unwrap_or(defaults::START_TIMEOUT);
                    self.set_timer(u, t, Timer::Reload);
                    self.set_state(u, UnitState::Reloading, "reloading");
                }
            }
            Notify::Stopping => {
                if matches!(r.phase, Phase::Up | Phase::Reloading) {
                    // The service is on its way down by itself: wait for its exit.
                    r.phase = Phase::Stopping { killed: false };
                    c.rare_reset(|r| r.failure = None);
                    c.self_stop = true;
                    let t = c
                        .active
                        .as_ref()
                        .map(|s| s.stop_timeout)
                        .unwrap_or(defaults::STOP_TIMEOUT);
                    self.set_timer(u, t, Timer::Stop);
                    self.set_state(u, UnitState::Stopping, "stopping (STOPPING=1)");
                }
            }
            Notify::Status(s) => {
                c.notify_status = Some(s);
                self.mark_changed(u);
            }
            Notify::MainPid(pid) => {
                if pid > 1 && r.up() {
                    if let Some(old) = c.main_pid.replace(pid) {
                        self.pids.remove(&old);
                    }
                    self.pids.insert(pid, (u, Role::Main));
                    self.mark_changed(u);
                }
            }
            Notify::Errno(e) => {
                c.status = Status::Text(format!("errno {e}"));
                r.status_key = 0;
                self.mark_changed(u);
            }
            Notify::ExtendTimeout(d) => {
                if let Some((t, kind)) = c.timer {
                    if matches!(kind, Timer::Start | Timer::Stop | Timer::Reload) {
                        let want = self.now.after(d);
                        if want > t {
                            self.set_timer(u, d, kind);
                        }
                    }
                }
            }
            Notify::Watchdog => {}
        }
    }

    fn on_timer(&mut self, u: UnitId, kind: Timer) {
        let i = u.index();
        match kind {
            Timer::Start => {
                if self.rt[i].starting() {
                    self.fail(u, "start timed out".to_string(), true);
                }
            }
            Timer::ReadyWait => {
                if self.rt[i].phase == Phase::Main {
                    self.become_up(u, "running (ready-wait elapsed)");
                }
            }
            Timer::Reload => {
                if self.rt[i].phase == Phase::Reloading {
                    if let Some((Role::Reload, Some(pid))) = self.cold[i].aux {
                        self.kill_group(u, pid, Signal::KILL);
                    }
                    self.cold[i].aux = None;
                    self.rt[i].phase = Phase::Up;
                    self.set_state(u, UnitState::Running, "reload timed out");
                }
            }
            Timer::Stop => {
                if let Phase::Stopping { .. } = self.rt[i].phase {
                    self.rt[i].phase = Phase::Stopping { killed: true };
                    self.kill_everything(u, Signal::KILL);
                    let t = self.stop_timeout(u);
                    self.set_timer(u, t, Timer::Abandon);
                    self.cold[i].status = Status::Fixed("stop timed out; sent SIGKILL");
                    self.rt[i].status_key = 0;
                    self.mark_changed(u);
                }
            }
            Timer::Abandon => {
                if let Phase::Stopping { .. } = self.rt[i].phase {
                    // The processes did not die even of SIGKILL (uninterruptible
                    // sleep): stop waiting for them.
                    if let Some(pid) = self.cold[i].main_pid.take() {
                        self.pids.remove(&pid);
                    }
                    if let Some((_, Some(pid))) = self.cold[i].aux.take() {
                        self.pids.remove(&pid);
                    }
                    self.cold[i].status = Status::Fixed("processes did not die; abandoned");
                    self.rt[i].status_key = 0;
                    self.check_stopped(u);
                }
            }
            Timer::Restart => {
                if self.rt[i].phase == Phase::Idle && self.rt[i].state == UnitState::Failed {
                    self.rt[i].restart_ready = true;
                    self.push(u);
                }
            }
            Timer::Pidfile => {
                let path = self.cold[i].active.as_ref().and_then(|s| s.pidfile.clone());
                if let (Phase::Main, Some(path)) = (self.rt[i].phase, path) {
                    self.actions.push(Action::ReadPidfile { unit: u, path });
                }
            }
        }
    }

    fn stop_timeout(&self, u: UnitId) -> Duration {
        self.cold[u.index()]
            .active
            .as_ref()
            .map(|s| s.stop_timeout)
            .unwrap_or(defaults::STOP_TIMEOUT)
    }

    /// A failure: record why, stop what is left, and (after stop-post) be
    /// `failed`. `restartable` says whether `restart: on-failure` applies.
    fn fail(&mut self, u: UnitId, why: String, restartable: bool) {
        let i = u.index();
        let policy = self.cold[i]
            .active
            .as_ref()
            .map(|s| s.restart)
            .unwrap_or(RestartPolicy::No);
        // Every failure (exit, signal, timeout, spawn or pidfile error) counts
        // for `on-failure`; `always` also restarts after a clean exit, which
        // reaches here from the exit handler.
        let _ = restartable;
        self.cold[i].restart_due = policy != RestartPolicy::No;
        self.cold[i].rare_mut().failure = Some(why.clone());
        match self.rt[i].phase {
            Phase::Idle => {}
            Phase::Stopping { .. } | Phase::StopPost(_) => {}
            Phase::Pre(_) | Phase::Main | Phase::Up | Phase::Reloading => {
                if self.cold[i].main_pid.is_some() || self.cold[i].aux.is_some() {
                    self.begin_stop(u, Status::Text(why));
                } else {
                    self.finish_main(u, false);
                }
            }
        }
    }

    /// Stops a unit that is up: `exec-stop`, or the kill signal.
    fn begin_stop(&mut self, u: UnitId, why: impl Into<Status>) {
        let i = u.index();
        self.leave_starting(u);
        let spec = self.spec_of(u);
        let (kind, stop_timeout, has_stop) =
            (spec.kind, spec.stop_timeout, spec.exec_stop.is_some());
        let was = self.rt[i].phase;
        if kind == UnitType::Virtual {
            self.rt[i].phase = Phase::Idle;
            self.after_stop(u);
            return;
        }
        self.rt[i].phase = Phase::Stopping { killed: false };
        self.clear_timer(u);
        self.set_timer(u, stop_timeout, Timer::Stop);
        self.set_state(u, UnitState::Stopping, why);
        // A helper still running (pre, reload) is killed outright.
        if let Some((role, Some(pid))) = self.cold[i].aux {
            if role != Role::Stop {
                self.kill_group(u, pid, Signal::KILL);
            }
        }
        let can_exec_stop =
            matches!(was, Phase::Up | Phase::Reloading) && self.cold[i].rare().failure.is_none();
        if has_stop && can_exec_stop {
            self.spawn(u, Role::Stop);
        } else {
            self.signal_main(u, false);
            self.check_stopped(u);
        }
    }

    /// Stops an `exited` unit that has stop commands: runs `exec-stop`, then
    /// `exec-stop-post`.
    fn stop_exited(&mut self, u: UnitId, why: &'static str) {
        let i = u.index();
        if self.cold[i].active.is_none() {
            self.cold[i].active = Some(self.graph.node(u).spec.clone());
        }
        let spec = self.spec_of(u);
        let (stop_timeout, has_stop) = (spec.stop_timeout, spec.exec_stop.is_some());
        self.cold[i].exit_ok = false;
        self.cold[i].rare_reset(|r| r.failure = None);
        self.rt[i].phase = Phase::Stopping { killed: false };
        self.set_timer(u, stop_timeout, Timer::Stop);
        self.set_state(u, UnitState::Stopping, why);
        if has_stop {
            self.spawn(u, Role::Stop);
        } else {
            self.check_stopped(u);
        }
    }

    /// Sends the unit's kill signal (or SIGKILL) to its main process group.
    fn signal_main(&mut self, u: UnitId, kill: bool) {
        let r = &self.cold[u.index()];
        let signal = if kill {
            Signal::KILL
        } else {
            r.active
                .as_ref()
                .map(|s| s.kill_signal)
                .unwrap_or(Signal::TERM)
        };
        // A `background-scripted` unit has no main process once its start
        // script exited: the process group that script left behind gets
        // the signal (it used to get nothing, so the service never stopped).
        if let Some(pid) = r.main_pid.or(r.rare().script_group) {
            self.kill_group(u, pid, signal);
        }
    }

    fn kill_everything(&mut self, u: UnitId, signal: Signal) {
        let r = &self.cold[u.index()];
        let (main, aux) = (r.main_pid, r.aux.and_then(|a| a.1));
        for pid in main.into_iter().chain(aux) {
            self.kill_group(u, pid, signal);
        }
    }

    /// In `Stopping`: once the main process and any helper are gone, on to
    /// stop-post.
    fn check_stopped(&mut self, u: UnitId) {
        let (r, c) = (&self.rt[u.index()], &self.cold[u.index()]);
        if !matches!(r.phase, Phase::Stopping { .. }) || c.main_pid.is_some() || c.aux.is_some() {
            return;
        }
        self.finish_main(u, false);
    }

    /// The main process is gone: clean the process group, run stop-post.
    fn finish_main(&mut self, u: UnitId, clean_exit: bool) {
        let i = u.index();
        self.leave_starting(u);
        self.clear_timer(u);
        // Leftovers in the dead main process's group (an nginx master killed
        // by SIGKILL leaves its workers) get SIGKILL. The group outlives its
        // leader while it has members, so its number cannot have been
        // reused; the init signals it as a group only (no fallback to the
        // PID, which is free again).
        if let Some(pgid) = self.cold[i].dead_leader.take() {
            self.kill_group(u, pgid, Signal::KILL);
        }
        if clean_exit {
            self.cold[i].rare_reset(|r| r.failure = None);
        }
        self.stop_post(u, 0);
    }

    fn stop_post(&mut self, u: UnitId, n: u16) {
        let i = u.index();
        let spec = self.spec_of(u);
        let (has_cmd, stop_timeout) = ((n as usize) < spec.exec_stop_post.len(), spec.stop_timeout);
        if has_cmd {
            if self.rt[i].phase != Phase::StopPost(n)
                && !matches!(self.rt[i].phase, Phase::StopPost(_))
            {
                self.set_state(u, UnitState::Stopping, "running exec-stop-post");
                self.set_timer(u, stop_timeout, Timer::Stop);
            }
            self.rt[i].phase = Phase::StopPost(n);
            self.spawn(u, Role::StopPost(n));
        } else {
            self.rt[i].phase = Phase::Idle;
            self.after_stop(u);
        }
    }

    /// The unit is idle again: failed (maybe restarting), exited, waiting or disabled.
    fn after_stop(&mut self, u: UnitId) {
        let i = u.index();
        self.clear_timer(u);
        let now = self.now;
        let r = &mut self.rt[i];
        let c = &mut self.cold[i];
        c.main_pid = None;
        c.aux = None;
        r.to_stop = false;
        c.notify_status = None;
        c.self_stop = false;
        c.dead_leader = None;
        c.rare_reset(|r| r.script_group = None);
        let was_active_long = c
            .active_at
            .is_some_and(|t| now.since(t) >= defaults::RESTART_RESET_AFTER)
            && r.state.is_active();
        let requested = r.restart_requested || r.spec_changed;
        r.restart_requested = false;
        r.spec_changed = false;
        // The restart delays, from the definition the unit ran with (it is
        // let go of here).
        let (restart_delay, restart_max_delay) = {
            let spec = active_spec(c, &self.graph, u);
            (spec.restart_delay, spec.restart_max_delay)
        };
        c.active = None;
        if let Some(why) = c.rare().failure.clone() {
            if was_active_long {
                c.attempt = 0;
            }
            let restart = c.restart_due && !self.shutting_down && !requested;
            if restart {
                // A zero delay (systemd's `RestartSec=0`) would never back
                // off: after the first attempt the doubling starts from at
                // least MIN_RESTART_DELAY.
                let first = restart_delay.max(MIN_RESTART_DELAY);
                let mult = 1u32.checked_shl(c.attempt.min(31)).unwrap_or(u32::MAX);
                let delay = if c.attempt == 0 {
                    restart_delay
                } else {
                    first.saturating_mul(mult).min(restart_max_delay.max(first))
                };
                c.attempt = c.attempt.saturating_add(1);
                self.set_state(u, UnitState::Failed, why);
                self.set_timer(u, delay, Timer::Restart);
            } else {
                self.set_state(u, UnitState::Failed, why);
            }
        } else if self.cold[i].exit_ok && !requested && self.is_required(u) && !self.shutting_down {
            self.set_state(u, UnitState::Exited, "exit status 0");
        } else {
            let st = if self.is_required(u) && !self.shutting_down {
                UnitState::Waiting
            } else {
                UnitState::Disabled
            };
            let why = if st == UnitState::Disabled {
                Status::Fixed("stopped")
            } else {
                self.cold[i].status.clone()
            };
            self.set_state(u, st, why);
            if requested && st == UnitState::Waiting {
                self.cold[i].status = Status::Fixed("restarting");
                self.rt[i].status_key = 0;
            }
        }
        self.sync(u);
        self.push(u);
        self.push_neighbours(u);
    }
}

/// [`Planner::spec_of`], for a caller that holds other fields of the
/// planner borrowed.
fn active_spec<'a>(c: &'a Cold, graph: &'a Graph, u: UnitId) -> &'a Arc<UnitSpec> {
    c.active.as_ref().unwrap_or_else(|| &graph.node(u).spec)
}

/// [`Planner::ukind`] bits: a ghost unit, a `virtual` unit.
const U_GHOST: u8 = 1;
const U_VIRTUAL: u8 = 2;

/// Unit `i`'s part of a flat edge list (`at` holds the starts, and the end).
fn edges_of<'a, T>(at: &[u32], edges: &'a [T], i: usize) -> &'a [T] {
    match (at.get(i), at.get(i + 1)) {
        (Some(&a), Some(&b)) => &edges[a as usize..b as usize],
        _ => &[],
    }
}

/// The hasher of the PID map: a PID is a small integer the kernel hands
/// out, not chosen by an attacker, so one multiply (FxHash's) spreads it
/// well enough; SipHash cost more than the rest of a fact's map work.
#[derive(Default)]
struct PidHasher(u64);

impl Hasher for PidHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn write_i32(&mut self, n: i32) {
        self.0 =
            (self.0.rotate_left(5) ^ u64::from(n as u32)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// [`dep_flags`] bits.
const F_ACTIVE: u8 = 1;
const F_FAILED: u8 = 2;
const F_TO_STOP: u8 = 4;
const F_DEGRADED: u8 = 8;
const F_BLOCKED: u8 = 16;
const F_WAITING: u8 = 32;

/// What the units that depend on a unit read of it.
fn dep_flags(r: &Rt) -> u8 {
    let mut f = 0;
    if r.state.is_active() {
        f |= F_ACTIVE;
    }
    if r.state == UnitState::Failed {
        f |= F_FAILED;
    }
    if r.state == UnitState::Waiting {
        f |= F_WAITING;
    }
    if r.to_stop {
        f |= F_TO_STOP;
    }
    if r.degraded {
        f |= F_DEGRADED;
    }
    if r.blocked {
        f |= F_BLOCKED;
    }
    f
}

/// What the providers of a unit read of it: whether it still has to stop
/// before them ([`Planner::dependents_block_stop`], which is monotone in
/// each of these bits: setting one never releases a provider).
fn stop_flags(r: &Rt) -> u8 {
    let mut f = 0;
    if r.up() {
        f |= 1;
    }
    if r.state.is_active() {
        f |= 2;
    }
    if r.to_stop {
        f |= 4;
    }
    if matches!(r.phase, Phase::Stopping { .. } | Phase::StopPost(_)) {
        f |= 8;
    }
    f
}

/// A unit's dependencies summed up: how many stand in the way of each rule
/// of [`Planner::evaluate`]. [`Planner::sync`] keeps them current.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct DepCounts {
    /// `depends-on`/`depends-ms` whose provider is missing, not active, or to stop.
    hard_bad: u32,
    /// The same, `depends-on` only.
    hold_bad: u32,
    /// `waits-for` whose provider is not settled (active, failed or
    /// blocked), or is to stop.
    waits_bad: u32,
    /// Missing `waits-for` targets, and providers not active or degraded.
    degraded: u32,
    /// Hard dependencies that make the unit blocked: missing, or a bad
    /// provider that is failed or blocked itself.
    blocking: u32,
    /// Dependencies with a provider that the unit waits on (the bad ones
    /// of `hard_bad` and `waits_bad`): what its status names.
    waited: u32,
}

impl DepCounts {
    /// What one dependency of `kind` on a provider with `flags` (or on a
    /// missing target) adds.
    fn edge(kind: DepKind, flags: Option<u8>) -> DepCounts {
        let hard = matches!(kind, DepKind::DependsOn | DepKind::DependsMs);
        let hold = kind == DepKind::DependsOn;
        let Some(f) = flags else {
            return if hard {
                DepCounts {
                    hard_bad: 1,
                    hold_bad: u32::from(hold),
                    blocking: 1,
                    ..DepCounts::default()
                }
            } else {
                DepCounts {
                    degraded: 1,
                    ..DepCounts::default()
                }
            };
        };
        let active = f & F_ACTIVE != 0;
        let to_stop = f & F_TO_STOP != 0;
        let failed = f & F_FAILED != 0;
        let blocked = f & F_BLOCKED != 0;
        let mut c = DepCounts {
            degraded: u32::from(!active || f & F_DEGRADED != 0),
            ..DepCounts::default()
        };
        if hard {
            let bad = !active || to_stop;
            c.hard_bad = u32::from(bad);
            c.hold_bad = u32::from(bad && hold);
            c.blocking = u32::from(bad && (failed || blocked));
            c.waited = u32::from(bad);
        } else {
            // Settled: active, failed, or blocked (waiting on a failed or
            // missing hard dependency: for ordering, that is a failure).
            let settled = active || failed || (f & F_WAITING != 0 && blocked);
            c.waits_bad = u32::from(!settled || to_stop);
            c.waited = c.waits_bad;
        }
        c
    }

    fn add(&mut self, o: DepCounts) {
        self.hard_bad += o.hard_bad;
        self.hold_bad += o.hold_bad;
        self.waits_bad += o.waits_bad;
        self.degraded += o.degraded;
        self.blocking += o.blocking;
        self.waited += o.waited;
    }

    fn sub(&mut self, o: DepCounts) {
        self.hard_bad -= o.hard_bad;
        self.hold_bad -= o.hold_bad;
        self.waits_bad -= o.waits_bad;
        self.degraded -= o.degraded;
        self.blocking -= o.blocking;
        self.waited -= o.waited;
    }
}

fn r_restarting(r: &Rt) -> bool {
    r.state == UnitState::Failed && r.restart_ready
}

fn remap_action(mut a: Action, map: &[Option<UnitId>]) -> Option<Action> {
    let (Action::Spawn { unit, .. } | Action::Kill { unit, .. } | Action::ReadPidfile { unit, .. }) =
        &mut a;
    *unit = map.get(unit.index()).copied().flatten()?;
    Some(a)
}

/// `1.5s`, `250ms`, `2m` — short, for status lines.
fn short(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}m{}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

/// Regression tests for bugs found by the system tests (`tests/tests/init_*.rs`);
/// the cell and property tests are in `units/tests/planner.rs`.
#[cfg(test)]
mod regressions {
    use super::*;
    use crate::spec::Command;

    fn planner(units: Vec<UnitSpec>) -> Planner {
        let (g, diags) = Graph::build(
            units
                .into_iter()
                .map(|s| {
                    let o = Origin::unplaced(format!("{}.yaml", s.name));
                    (s, o)
                })
                .collect(),
        );
        assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
        Planner::new(g, "svc", Instant(0), PlannerOptions::default())
    }

    fn unit(kind: UnitType) -> UnitSpec {
        let mut s = UnitSpec::new("svc", kind);
        s.exec_start = Some(Command::new(["/bin/svc"]));
        s
    }

    /// Feeds `Spawned` for the main process the planner asked for.
    fn spawn_main(p: &mut Planner, pid: i32) {
        let a = p.take_actions();
        assert!(
            matches!(
                a.as_slice(),
                [Action::Spawn {
                    role: Role::Main,
                    ..
                }]
            ),
            "{a:?}"
        );
        p.fact(
            Fact::Spawned {
                unit: UnitId(0),
                role: Role::Main,
                pid,
            },
            Instant(1),
        );
    }

    /// A notified unit that says STOPPING=1 and exits 0 is `exited`, like
    /// any clean exit; it used to go back to `waiting` and start again at
    /// once, as if the init had stopped it.
    #[test]
    fn stopping_then_clean_exit_is_exited_not_restarted() {
        let mut p = planner(vec![unit(UnitType::ForegroundNotified)]);
        spawn_main(&mut p, 10);
        let id = UnitId(0);
        p.fact(
            Fact::Notify {
                unit: id,
                msg: Notify::Ready,
            },
            Instant(2),
        );
        p.fact(
            Fact::Notify {
                unit: id,
                msg: Notify::Stopping,
            },
            Instant(3),
        );
        assert_eq!(p.state(id), UnitState::Stopping);
        p.fact(
            Fact::Exited {
                pid: 10,
                status: ExitStatus::Code(0),
            },
            Instant(4),
        );
        assert_eq!(p.state(id), UnitState::Exited);
        assert!(
            !p.take_actions()
                .iter()
                .any(|a| matches!(a, Action::Spawn { .. })),
            "not started again"
        );
    }

    /// STOPPING=1 then a failing exit is a failure with a restart.
    #[test]
    fn stopping_then_failing_exit_is_a_failure() {
        let mut p = planner(vec![unit(UnitType::ForegroundNotified)]);
        spawn_main(&mut p, 10);
        let id = UnitId(0);
        for msg in [Notify::Ready, Notify::Stopping] {
            p.fact(Fact::Notify { unit: id, msg }, Instant(2));
        }
        p.fact(
            Fact::Exited {
                pid: 10,
                status: ExitStatus::Code(2),
            },
            Instant(4),
        );
        assert_eq!(p.state(id), UnitState::Failed);
        assert!(p.view(id).is_some_and(|v| v.restart_at.is_some()));
    }

    /// When the main process dies, what it left in its process group (an
    /// nginx master's workers) gets SIGKILL; it used to be left running.
    #[test]
    fn leftovers_of_a_dead_main_process_are_killed() {
        let mut p = planner(vec![unit(UnitType::ForegroundSupervised)]);
        spawn_main(&mut p, 10);
        p.take_actions();
        p.fact(
            Fact::Exited {
                pid: 10,
                status: ExitStatus::Signal(9),
            },
            Instant(2),
        );
        assert_eq!(p.state(UnitId(0)), UnitState::Failed);
        assert!(
            p.take_actions().contains(&Action::Kill {
                unit: UnitId(0),
                whom: Whom::Group(10),
                signal: Signal::KILL,
            }),
            "the dead leader's group is killed"
        );
    }

    /// A pidfile written only after the start command exited (redis) is
    /// read again until it is there; the start still fails at
    /// start-timeout. The first miss used to fail the unit.
    #[test]
    fn pidfile_is_read_again_until_start_timeout() {
        let mut u = unit(UnitType::BackgroundPidfile);
        u.pidfile = Some(PathBuf::from("/run/svc.pid"));
        u.start_timeout = Duration::from_secs(1);
        let mut p = planner(vec![u]);
        let id = UnitId(0);
        spawn_main(&mut p, 10);
        p.fact(
            Fact::Exited {
                pid: 10,
                status: ExitStatus::Code(0),
            },
            Instant(2),
        );
        let read = Action::ReadPidfile {
            unit: id,
            path: PathBuf::from("/run/svc.pid"),
        };
        assert_eq!(p.take_actions(), vec![read.clone()]);
        let missing = || Fact::Pidfile {
            unit: id,
            result: Err("no such file".into()),
        };
        p.fact(missing(), Instant(3));
        assert_eq!(p.state(id), UnitState::Starting);
        let t = p.next_deadline().expect("retry timer");
        assert!(t.since(Instant(3)) <= Duration::from_millis(10));
        p.tick(t);
        assert_eq!(p.take_actions(), vec![read.clone()]);
        p.fact(
            Fact::Pidfile {
                unit: id,
                result: Ok(42),
            },
            t,
        );
        assert_eq!(p.state(id), UnitState::Running);
        assert_eq!(p.view(id).and_then(|v| v.pid), Some(42));

        // Never written: failed at the start-timeout.
        let mut u = unit(UnitType::BackgroundPidfile);
        u.pidfile = Some(PathBuf::from("/run/svc.pid"));
        u.start_timeout = Duration::from_millis(100);
        u.restart = RestartPolicy::No;
        let mut p = planner(vec![u]);
        spawn_main(&mut p, 10);
        p.fact(
            Fact::Exited {
                pid: 10,
                status: ExitStatus::Code(0),
            },
            Instant(2),
        );
        for _ in 0..100 {
            p.take_actions();
            p.fact(missing(), p.now);
            if p.state(id) == UnitState::Failed {
                break;
            }
            let t = p.next_deadline().expect("retry timer");
            p.tick(t);
        }
        assert_eq!(p.state(id), UnitState::Failed);
        assert!(p.now.since(Instant(0)) >= Duration::from_millis(100));
        assert!(p
            .view(id)
            .is_some_and(|v| v.status.contains("start timed out")));
    }

    /// background-scripted without exec-stop: a stop sends the kill
    /// signal to the group its start script left; it used to send nothing.
    #[test]
    fn scripted_stop_signals_the_start_scripts_group() {
        let mut p = planner(vec![unit(UnitType::BackgroundScripted)]);
        let id = UnitId(0);
        spawn_main(&mut p, 10);
        p.fact(
            Fact::Exited {
                pid: 10,
                status: ExitStatus::Code(0),
            },
            Instant(2),
        );
        assert_eq!(p.state(id), UnitState::Running);
        p.shutdown(Instant(3));
        assert!(
            p.take_actions().contains(&Action::Kill {
                unit: id,
                whom: Whom::Group(10),
                signal: Signal::TERM,
            }),
            "the start script's group gets kill-signal"
        );
        assert!(p.drained());
    }

    /// A waiting unit's status names what it waits for now; it used to
    /// keep naming the first dependency that was not active.
    #[test]
    fn waiting_status_follows_the_dependencies() {
        let mut a = UnitSpec::new("a", UnitType::ForegroundNotified);
        a.exec_start = Some(Command::new(["/bin/a"]));
        let mut b = a.clone();
        b.name = "b".into();
        b.provides = vec!["b".into()];
        let mut top = UnitSpec::new("svc", UnitType::Virtual);
        top.depends_on = vec!["a".into(), "b".into()];
        let mut p = planner(vec![a, b, top]);
        let id = |p: &Planner, n: &str| p.graph().unit(n).unwrap();
        for (n, pid) in [("a", 10), ("b", 11)] {
            let unit = id(&p, n);
            p.fact(
                Fact::Spawned {
                    unit,
                    role: Role::Main,
                    pid,
                },
                Instant(1),
            );
        }
        let svc = id(&p, "svc");
        assert_eq!(p.view(svc).unwrap().status, "waiting for a");
        let a = id(&p, "a");
        p.fact(
            Fact::Notify {
                unit: a,
                msg: Notify::Ready,
            },
            Instant(2),
        );
        assert_eq!(p.state(svc), UnitState::Waiting);
        assert_eq!(p.view(svc).unwrap().status, "waiting for b");
    }

    /// A unit that becomes degraded is reported as changed (for
    /// `subscribe`); it used to change silently.
    #[test]
    fn becoming_degraded_is_a_change() {
        let mut net = UnitSpec::new("net", UnitType::ForegroundSupervised);
        net.exec_start = Some(Command::new(["/bin/net"]));
        net.restart = RestartPolicy::No;
        let mut top = UnitSpec::new("svc", UnitType::Virtual);
        top.depends_ms = vec!["net".into()];
        let mut p = planner(vec![net, top]);
        let net = p.graph().unit("net").unwrap();
        let svc = p.graph().unit("svc").unwrap();
        p.fact(
            Fact::Spawned {
                unit: net,
                role: Role::Main,
                pid: 10,
            },
            Instant(1),
        );
        assert_eq!(p.state(svc), UnitState::Running);
        p.take_changed();
        p.fact(
            Fact::Exited {
                pid: 10,
                status: ExitStatus::Signal(9),
            },
            Instant(2),
        );
        assert!(p.view(svc).unwrap().degraded);
        assert!(p.take_changed().contains(&svc));
    }

    /// A start script that exits 0 hands over to what it started: its
    /// group (where the service may live) is not killed.
    #[test]
    fn a_start_script_exit_kills_nothing() {
        let mut p = planner(vec![unit(UnitType::BackgroundScripted)]);
        spawn_main(&mut p, 10);
        p.fact(
            Fact::Exited {
                pid: 10,
                status: ExitStatus::Code(0),
            },
            Instant(2),
        );
        assert_eq!(p.state(UnitId(0)), UnitState::Running);
        assert!(
            !p.take_actions()
                .iter()
                .any(|a| matches!(a, Action::Kill { .. })),
            "nothing killed"
        );
    }
}
