//! The re-exec snapshot: everything the init hands to its next image across
//! `execve` (`initctl reexec`), as plain data, and its encoding.
//!
//! The running init writes a [`Snapshot`] to a memory file, keeps open the
//! descriptors it names (the control socket's listener, the output pipes,
//! the notify sockets, the sockets and stored descriptors) and executes its
//! binary again; the new image reads the snapshot back and rebuilds its
//! state from it instead of booting.
//! This module is the pure part: the types, [`encode`], [`decode`] and the
//! version rule. The descriptors and the `execve` are the init's
//! (`init/src/sys/reexec.rs`); the planner's part of a unit is
//! [`UnitCarry`] (`planner/carry.rs` reads and restores it).
//!
//! **Versions.** The encoding is JSON with a `magic` and a `version`
//! first. A reader takes exactly the versions it knows ([`VERSION`]); any
//! other is refused with [`SnapshotError::Version`] before the rest is
//! read, and the init then adopts what it can without the snapshot
//! (`docs/operations.md`: it never kills a process it cannot place).
//!
//! **Time.** Instants are `CLOCK_MONOTONIC` nanoseconds: that clock is the
//! machine's, unchanged by `execve`, so start and end times carry as they
//! are. A pending timer is carried as the time left when the snapshot was
//! taken ([`TimerCarry::remaining_ns`]), set again from the new image's
//! clock reading: the gap between the two readings (the `execve`) only
//! delays the timer, never fires it early.

use crate::spec::{Origin, UnitSpec};
use crate::state::UnitState;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// What the first field of every snapshot says.
pub const MAGIC: &str = "flotilla-reexec";

/// The version this build writes and reads.
pub const VERSION: u32 = 1;

/// The largest snapshot a reader takes (a bound on the memory file read at
/// start: a corrupt size never makes the init allocate without bound).
pub const MAX_BYTES: usize = 256 << 20;

/// The whole state handed over. See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// [`MAGIC`].
    pub magic: String,
    /// [`VERSION`].
    pub version: u32,
    /// The current target.
    pub target: String,
    /// The units directory's units as loaded (kept as they were: the
    /// directory is read again only by a `reload`).
    pub dir_units: Vec<(UnitSpec, Origin)>,
    /// The directory's problems at start, until a reload succeeds.
    #[serde(default)]
    pub load_errors: Vec<String>,
    /// The transient sets by name.
    #[serde(default)]
    pub transient: BTreeMap<String, Vec<UnitSpec>>,
    /// The leases on transient sets, by set (their instants are
    /// `CLOCK_MONOTONIC`'s, which the re-exec does not move).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub leases: BTreeMap<String, crate::transient_lease::Lease>,
    /// Units wanted besides the target's (`initctl run`, `want`).
    #[serde(default)]
    pub wants: Vec<WantCarry>,
    /// Units stopped by hand, held out of the required set.
    #[serde(default)]
    pub held: Vec<String>,
    /// The planner's record of each unit (by name).
    pub units: Vec<UnitCarry>,
    /// Each unit's I/O: pipes, notify socket, log ring.
    #[serde(default)]
    pub io: Vec<IoCarry>,
    /// The control socket.
    pub control: ControlCarry,
    /// The monotonic clock and the wall clock when the first image
    /// started (uptimes and wall times of instants stay as they were).
    pub mono0: u64,
    /// Seconds and nanoseconds of the wall clock at the first start.
    pub wall0: (i64, u32),
    /// Each later setting of the wall clock (`date -s`): both clocks as
    /// they read then, the monotonic one first (the last 32).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wall_sets: Vec<(u64, (i64, u32))>,
    /// The numbering of notify sockets' file names.
    #[serde(default)]
    pub notify_seq: u64,
    /// The log streams' instance name (the log writer keeps appending to
    /// the same streams) and the number of the next log.
    pub log_instance: String,
    /// See `log_instance`.
    #[serde(default)]
    pub next_log_id: u32,
    /// The scopes made and not started yet, each with the processes its
    /// start adopts (`docs/dbus.md`, "Scopes").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_scopes: Vec<(String, Vec<i32>)>,
    /// The init's log level and target (`set-log`).
    #[serde(default)]
    pub log: crate::loglevel::LogSettings,
    /// The D-Bus names owned on the system bus, as busd told them
    /// (`ready-bus-name`): busd tells the new image only what changes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bus_names: Vec<String>,
    /// What `set-environment` set over the init's own environment.
    #[serde(default)]
    pub manager_env: crate::manager_env::ManagerEnv,
    /// Whether a missed `WATCHDOG=1` fails its unit
    /// (`set-service-watchdogs`).
    #[serde(default = "on")]
    pub service_watchdogs: bool,
}

fn on() -> bool {
    true
}

/// A want, as `planner/wants.rs` keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WantCarry {
    /// The unit.
    pub unit: String,
    /// Kept until dropped (else: until the next `set-target`).
    pub kept: bool,
}

/// The control socket's listener and the connection that asked for the
/// re-exec (answered by the new image).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlCarry {
    /// The listening socket's descriptor.
    pub listener: i32,
    /// Its `st_dev` and `st_ino` (to remove only our own socket file).
    pub dev: u64,
    /// See `dev`.
    pub ino: u64,
    /// The connection that asked, to be answered then closed.
    pub requester: Option<i32>,
}

/// A unit's phase (the planner's `Phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PhaseCarry {
    /// No process.
    Idle,
    /// `exec-condition` number `n`.
    Condition(u16),
    /// `exec-start-pre` number `n`.
    Pre(u16),
    /// The main process, not yet ready.
    Main,
    /// Ready.
    Up,
    /// Reloading.
    Reloading,
    /// Stopping.
    Stopping,
    /// `exec-stop-post` number `n`.
    StopPost(u16),
}

/// Which command a process runs (the planner's `Role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RoleCarry {
    /// `exec-condition` number `n`.
    Condition(u16),
    /// `exec-start-pre` number `n`.
    Pre(u16),
    /// The main process.
    Main,
    /// A oneshot's further `exec-start` number `n`.
    Then(u16),
    /// `exec-start-post` number `n`.
    Post(u16),
    /// `exec-stop`.
    Stop,
    /// `exec-stop-post` number `n`.
    StopPost(u16),
    /// `exec-reload`.
    Reload,
    /// A further `exec-reload` command, number `n`.
    ReloadThen(u16),
}

/// What a unit's timer is for (the planner's `Timer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimerKind {
    /// `start-timeout`.
    Start,
    /// `ready-wait`.
    ReadyWait,
    /// A reload outlived `start-timeout`.
    Reload,
    /// `stop-timeout`.
    Stop,
    /// Stop waiting for the processes.
    Abandon,
    /// The restart back-off is over.
    Restart,
    /// Read the pidfile again.
    Pidfile,
    /// The watchdog.
    Watchdog,
    /// The runtime limit (`runtime-max-sec`).
    RuntimeMax,
    /// A timer unit's next elapse.
    Elapse,
}

/// A pending timer: the time left, and what it is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimerCarry {
    /// Nanoseconds left when the snapshot was taken.
    pub remaining_ns: u64,
    /// What it is for.
    pub kind: TimerKind,
}

/// The planner's record of one unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitCarry {
    /// The unit's name.
    pub name: String,
    /// Its phase.
    pub phase: PhaseCarry,
    /// Its state.
    pub state: UnitState,
    /// When it entered its state.
    pub since: u64,
    /// The main process.
    #[serde(default)]
    pub main_pid: Option<i32>,
    /// The helper process: its role, and its PID once spawned.
    #[serde(default)]
    pub helper: Option<(RoleCarry, Option<i32>)>,
    /// The pending timer.
    #[serde(default)]
    pub timer: Option<TimerCarry>,
    /// The restart policy allows a restart of the current failure.
    #[serde(default)]
    pub restart_due: bool,
    /// The restart timer fired.
    #[serde(default)]
    pub restart_ready: bool,
    /// `initctl restart` in progress.
    #[serde(default)]
    pub restart_requested: bool,
    /// Its definition changed on reload: it restarts.
    #[serde(default)]
    pub spec_changed: bool,
    /// Consecutive failed attempts.
    #[serde(default)]
    pub attempt: u32,
    /// Restarts after failures.
    #[serde(default)]
    pub restarts: u32,
    /// The status text.
    #[serde(default)]
    pub status: String,
    /// The last sd_notify `STATUS=`.
    #[serde(default)]
    pub notify_status: Option<String>,
    /// When the last start began.
    #[serde(default)]
    pub start_at: Option<u64>,
    /// When it last became active.
    #[serde(default)]
    pub active_at: Option<u64>,
    /// When it last stopped or failed.
    #[serde(default)]
    pub end_at: Option<u64>,
    /// The main process exited 0 by itself.
    #[serde(default)]
    pub exit_ok: bool,
    /// The unit said `STOPPING=1`.
    #[serde(default)]
    pub self_stop: bool,
    /// The main process that just ended (its group is killed once down).
    #[serde(default)]
    pub dead_leader: Option<i32>,
    /// Why the current stop happens, when it is a failure.
    #[serde(default)]
    pub failure: Option<String>,
    /// The failure's kind, in systemd's words (absent: from a snapshot
    /// written before the kind was kept; read as `resources`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_kind: Option<crate::state::FailureKind>,
    /// The failure's exit status or signal number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_exit: Option<i32>,
    /// The target a waiting unit is blocked by.
    #[serde(default)]
    pub blocked_by: Option<String>,
    /// The process group a start script left behind.
    #[serde(default)]
    pub script_group: Option<i32>,
    /// Pidfile reads in this start.
    #[serde(default)]
    pub pidfile_tries: u32,
    /// The start-timeout deadline while a pidfile is awaited.
    #[serde(default)]
    pub pidfile_deadline: Option<u64>,
    /// The definition its processes run with, when it is not the unit
    /// set's (changed by a reload since they started).
    #[serde(default)]
    pub running_spec: Option<UnitSpec>,
    /// The trigger that has it in the triggered set (it stays required
    /// until it settles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triggered_by: Option<String>,
    /// A condition failed at its last start: it was skipped (systemd's
    /// `inactive`, not `active (exited)`, over D-Bus).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
}

impl UnitCarry {
    /// A record of `name` with nothing running: the fields the planner
    /// fills in.
    pub fn idle(name: impl Into<String>) -> UnitCarry {
        UnitCarry {
            name: name.into(),
            phase: PhaseCarry::Idle,
            state: UnitState::Disabled,
            since: 0,
            main_pid: None,
            helper: None,
            timer: None,
            restart_due: false,
            restart_ready: false,
            restart_requested: false,
            spec_changed: false,
            attempt: 0,
            restarts: 0,
            status: String::new(),
            notify_status: None,
            start_at: None,
            active_at: None,
            end_at: None,
            exit_ok: false,
            self_stop: false,
            dead_leader: None,
            failure: None,
            failure_kind: None,
            failure_exit: None,
            blocked_by: None,
            script_group: None,
            pidfile_tries: 0,
            pidfile_deadline: None,
            running_spec: None,
            triggered_by: None,
            skipped: false,
        }
    }

    /// Every PID the record names (main, helper, leftovers' group, script
    /// group).
    pub fn pids(&self) -> impl Iterator<Item = i32> + '_ {
        self.main_pid
            .into_iter()
            .chain(self.helper.and_then(|h| h.1))
            .chain(self.dead_leader)
            .chain(self.script_group)
    }
}

/// One unit's I/O.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoCarry {
    /// The unit's name.
    pub unit: String,
    /// The state last reported for it (console, log, watchers).
    pub reported: UnitState,
    /// The read ends of its output pipes: descriptor, and `true` for
    /// standard error.
    #[serde(default)]
    pub pipes: Vec<(i32, bool)>,
    /// Its notify socket.
    #[serde(default)]
    pub notify: Option<NotifyCarry>,
    /// Its log ring (none before its first process).
    #[serde(default)]
    pub log: Option<LogCarry>,
    /// It had a run (cgroup, directories) made: made again for it.
    #[serde(default)]
    pub had_run: bool,
    /// A socket unit's sockets, in the order of its `Listen…=` lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listening: Vec<i32>,
    /// An `Accept=yes` socket unit's connections: each one's instance and
    /// descriptor.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<(String, i32)>,
    /// An `Accept=yes` socket unit's count of accepted connections (which
    /// numbers the next instance).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub accepted: u64,
    /// A scope that is up: its processes are watched again after the
    /// exec. Where it has a cgroup, that cgroup's `cgroup.events` (the
    /// list is empty); where it has none, each process still alive and
    /// its pidfd's descriptor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopted: Option<Vec<(i32, i32)>>,
    /// A service's descriptor store (`FDSTORE=1`), in the order stored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stored: Vec<StoredCarry>,
}

/// One descriptor of a service's store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredCarry {
    /// The descriptor.
    pub fd: i32,
    /// Its name in `LISTEN_FDNAMES`.
    pub name: String,
    /// Watched for hang-up (not stored with `FDPOLL=0`).
    pub poll: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A notify socket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotifyCarry {
    /// The socket's descriptor.
    pub fd: i32,
    /// Its path.
    pub path: String,
    /// Its `st_dev` and `st_ino`.
    pub dev: u64,
    /// See `dev`.
    pub ino: u64,
}

/// A unit's log ring.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogCarry {
    /// Its number among the init's logs (its stream's name).
    pub id: u32,
    /// The number of the next line.
    pub next_seq: u64,
    /// The log writer has the lines up to this one.
    pub persisted: u64,
    /// The lines in memory, oldest first.
    #[serde(default)]
    pub lines: Vec<LineCarry>,
}

/// One line of a log ring.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineCarry {
    /// Its number.
    pub seq: u64,
    /// When it was read: seconds and nanoseconds of the wall clock.
    pub time: (i64, u32),
    /// From standard error.
    #[serde(default)]
    pub stderr: bool,
    /// The text.
    pub text: String,
    /// It continues in the next line.
    #[serde(default)]
    pub cut: bool,
}

/// Why a snapshot cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotError {
    /// Not a snapshot at all (no magic).
    NotASnapshot(String),
    /// A snapshot of another version.
    Version {
        /// The version found.
        found: u32,
        /// The one this build reads.
        supported: u32,
    },
    /// The right version, but not readable.
    Malformed(String),
    /// Larger than [`MAX_BYTES`].
    TooLarge(usize),
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotError::NotASnapshot(e) => write!(f, "not a re-exec snapshot: {e}"),
            SnapshotError::Version { found, supported } => write!(
                f,
                "re-exec snapshot version {found}, this init reads version {supported}"
            ),
            SnapshotError::Malformed(e) => write!(f, "bad re-exec snapshot: {e}"),
            SnapshotError::TooLarge(n) => {
                write!(f, "re-exec snapshot of {n} bytes (at most {MAX_BYTES})")
            }
        }
    }
}

impl std::error::Error for SnapshotError {}

/// The fields a reader checks before the rest.
#[derive(Deserialize)]
struct Header {
    magic: String,
    version: u32,
}

/// The snapshot's bytes.
pub fn encode(s: &Snapshot) -> Vec<u8> {
    // Plain data with string keys: serializing it cannot fail.
    serde_json::to_vec(s).unwrap_or_default()
}

/// Reads a snapshot: the magic and the version first, then the rest.
pub fn decode(bytes: &[u8]) -> Result<Snapshot, SnapshotError> {
    if bytes.len() > MAX_BYTES {
        return Err(SnapshotError::TooLarge(bytes.len()));
    }
    let h: Header =
        serde_json::from_slice(bytes).map_err(|e| SnapshotError::NotASnapshot(e.to_string()))?;
    if h.magic != MAGIC {
        return Err(SnapshotError::NotASnapshot(format!(
            "magic `{}`",
            h.magic.chars().take(40).collect::<String>()
        )));
    }
    if h.version != VERSION {
        return Err(SnapshotError::Version {
            found: h.version,
            supported: VERSION,
        });
    }
    serde_json::from_slice(bytes).map_err(|e| SnapshotError::Malformed(e.to_string()))
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests;
