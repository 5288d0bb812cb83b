//! What the init and the planner tell each other: the [`Fact`]s the init
//! observed, and the [`Action`]s the planner asks for. An action is
//! complete: the init carries it out without asking the planner anything.

use crate::exits::ExitStatus;
use crate::graph::UnitId;
use crate::spec::{Command, Signal, UnitSpec, Words};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Which of a unit's commands a process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// `exec-condition` number `n`.
    Condition(u16),
    /// `exec-start-pre` number `n`.
    Pre(u16),
    /// The main process (`exec-start`).
    Main,
    /// A oneshot's further `exec-start` command number `n` (systemd's
    /// second and later `ExecStart=` lines).
    Then(u16),
    /// `exec-start-post` number `n`.
    Post(u16),
    /// `exec-stop`.
    Stop,
    /// `exec-stop-post` number `n`.
    StopPost(u16),
    /// `exec-reload`.
    Reload,
    /// A further reload command number `n` (systemd's second and later
    /// `ExecReload=` lines).
    ReloadThen(u16),
}

impl Role {
    /// The command of `spec` this role runs, if it has one.
    pub fn command(self, spec: &UnitSpec) -> Option<&Command> {
        match self {
            Role::Condition(n) => spec.extras.exec_condition.get(n as usize),
            Role::Pre(n) => spec.exec_start_pre.get(n as usize),
            Role::Main => spec.exec_start.as_ref(),
            Role::Then(n) => spec.extras.exec_start_then.get(n as usize),
            Role::Post(n) => spec.extras.exec_start_post.get(n as usize),
            Role::Stop => spec.exec_stop.as_ref(),
            Role::StopPost(n) => spec.extras.exec_stop_post.get(n as usize),
            Role::Reload => spec.extras.exec_reload.as_ref(),
            Role::ReloadThen(n) => spec.extras.exec_reload_then.get(n as usize),
        }
    }

    /// The unit-file key of the command.
    pub fn key(self) -> &'static str {
        match self {
            Role::Condition(_) => "exec-condition",
            Role::Pre(_) => "exec-start-pre",
            Role::Main | Role::Then(_) => "exec-start",
            Role::Post(_) => "exec-start-post",
            Role::Stop => "exec-stop",
            Role::StopPost(_) => "exec-stop-post",
            Role::Reload | Role::ReloadThen(_) => "exec-reload",
        }
    }
}

/// The words a process of `role` runs: the command of `role` in `spec`,
/// every `$MAINPID` (and `${MAINPID}`) replaced by `mainpid` (or nothing).
/// Shared with the spec (no copy) when no word mentions it. `None` when the
/// spec has no such command (the planner asks only for commands it has).
pub(super) fn spawn_argv(spec: &UnitSpec, role: Role, mainpid: Option<i32>) -> Option<Words> {
    let cmd = role.command(spec)?;
    Some(if cmd.mentions_mainpid() {
        cmd.with_mainpid(mainpid)
    } else {
        cmd.argv.clone()
    })
}

/// An sd_notify message (docs/contract.md §4).
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
    /// The main process of a `started-at-fork` unit, told in an earlier
    /// turn as [`Fact::SpawnFailed`] (which was its start, as systemd's
    /// `Type=simple`), failed before its program ran: its end, with
    /// systemd's exit status for that failure (`EXIT_USER` 217,
    /// `EXIT_EXEC` 203 …).
    ExecFailed {
        /// The unit.
        unit: UnitId,
        /// systemd's exit status for the failure.
        status: i32,
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
    /// The last process of scope `unit` (or of its cgroup) ended: its main
    /// process counts as exited with 0. Told by unit, not by PID: the
    /// scope's first process may be another unit's (logind's session of a
    /// console login adopts the getty's `login`), whose own exit is that
    /// unit's.
    ScopeEnded {
        /// The scope.
        unit: UnitId,
    },
    /// The cgroup of a unit whose main process exited is empty (the
    /// answer to [`Action::AwaitEmpty`]; at once where the unit has no
    /// cgroup).
    CgroupEmpty {
        /// The unit.
        unit: UnitId,
    },
    /// D-Bus names taken or given up on the system bus (`flotilla-busd`
    /// reports them); `whole`: `owned` is every name owned, any other is
    /// not.
    BusNames {
        /// Names now owned.
        owned: Vec<String>,
        /// Names no longer owned.
        released: Vec<String>,
        /// `owned` is the whole list.
        whole: bool,
    },
    /// The kernel's OOM killer killed a process of `unit`'s cgroup (its
    /// `memory.events` counts one more `oom_kill`). Told before that
    /// process's [`Fact::Exited`], as systemd looks before it handles the
    /// exit, so that the unit's result is `oom-kill`.
    OomKilled {
        /// The unit.
        unit: UnitId,
    },
    /// A line of output matched `ready-grep`.
    ReadyLine {
        /// The unit.
        unit: UnitId,
    },
    /// A [`Action::CheckConditions`] was carried out.
    Checked {
        /// The unit.
        unit: UnitId,
        /// What the check found.
        outcome: super::CheckOutcome,
    },
    /// A [`Action::Arm`] was carried out: the trigger's sockets are bound
    /// (its paths watched), or why not.
    Armed {
        /// The trigger.
        unit: UnitId,
        /// `Err`: why, for people (what was bound is closed again).
        result: Result<(), String>,
    },
    /// A trigger's event came: a connection or datagram on one of its
    /// sockets, a change of a watched path. The init watches no more of
    /// its events until [`super::Planner::trigger_waits`] says so.
    Fired {
        /// The trigger.
        unit: UnitId,
        /// A path unit's: the path whose state or change fired it (for
        /// `PathExistsGlob=`, the first match); its unit gets it as
        /// `TRIGGER_PATH` ([`super::Planner::activated_by`]).
        path: Option<std::path::PathBuf>,
    },
    /// A socket unit with `accept: yes` accepted a connection and the init
    /// made `instance` of its template service for it: the instance is
    /// required until it settles, as a fired trigger's unit is (the
    /// connection counts against the trigger limit). The socket goes on
    /// listening.
    Accepted {
        /// The socket unit.
        unit: UnitId,
        /// The instance made for the connection.
        instance: String,
    },
    /// A [`Action::GuessMainPid`] found the unit's cgroup empty: its
    /// start command left no process behind.
    NoMainProcess {
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
    /// The mount table changed: a mount unit's place is mounted now, or
    /// is not (`mount_table.rs`).
    MountTable {
        /// The mount unit.
        unit: UnitId,
        /// Whether something is mounted at its place.
        mounted: bool,
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
        argv: Words,
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
    /// Check the unit's conditions and assertions (`spec.conditions`)
    /// against the machine, at once ([`super::check_unit`]); answer with
    /// [`Fact::Checked`].
    CheckConditions {
        /// The unit.
        unit: UnitId,
        /// The definition it starts with.
        spec: Arc<UnitSpec>,
    },
    /// Read the unit's pidfile; answer with [`Fact::Pidfile`].
    ReadPidfile {
        /// The unit.
        unit: UnitId,
        /// The file.
        path: PathBuf,
    },
    /// A forking daemon without a pidfile: find its main process as
    /// systemd does, the one process of the unit's cgroup whose parent is
    /// not in it; answer with [`Fact::Pidfile`], or [`Fact::NoMainProcess`]
    /// when the cgroup is empty.
    GuessMainPid {
        /// The unit.
        unit: UnitId,
    },
    /// Bind the sockets of socket unit `unit` (listen on them, watch them),
    /// or watch the paths of path unit `unit`, as `spec` says; answer with
    /// [`Fact::Armed`].
    Arm {
        /// The trigger.
        unit: UnitId,
        /// Its definition.
        spec: Arc<UnitSpec>,
    },
    /// Move the processes given for scope `unit` (when it was made) into
    /// it and watch them, as `spec` says (its kill mode); answer with
    /// [`Fact::Spawned`] of its [`Role::Main`] (the first process) or
    /// [`Fact::SpawnFailed`]. Its end comes as [`Fact::Exited`] of that
    /// process once none of them is left.
    Adopt {
        /// The scope.
        unit: UnitId,
        /// Its definition.
        spec: Arc<UnitSpec>,
    },
    /// An `exit-type: cgroup` service's main process exited: tell
    /// [`Fact::CgroupEmpty`] once nothing is left in its cgroup.
    AwaitEmpty {
        /// The service.
        unit: UnitId,
    },
    /// The trigger stopped: close its sockets (and remove their files with
    /// `RemoveOnStop=`), remove its watches. Nothing to answer.
    Disarm {
        /// The trigger.
        unit: UnitId,
    },
    /// A `Persistent=` timer fired: keep its last trigger across restarts
    /// of the init (given back in [`super::TimerEnv::stamps`]).
    SaveTimerStamp {
        /// The timer.
        unit: UnitId,
        /// Its name.
        timer: String,
        /// The trigger, realtime microseconds.
        realtime_us: u64,
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
    /// What is left in the unit's cgroup once its main process exited (an
    /// `exit-type: cgroup` service): no process or group by number, which
    /// may be another's by now.
    Rest,
}

impl Whom {
    /// The PID or group number signalled (0 for [`Whom::Rest`]).
    pub fn pid(self) -> i32 {
        match self {
            Whom::Process(p) | Whom::Group(p) | Whom::GroupAndLeader(p) => p,
            Whom::Rest => 0,
        }
    }
}
