//! The init's control protocol: newline-delimited JSON over a unix stream socket.
//!
//! Every request is one line, a JSON object with the protocol version `v` and
//! an `op`; every reply is one line with a `reply` tag. Most requests get
//! exactly one reply; `set-target` with `wait`, `logs` with `follow` and
//! `subscribe` get a stream of replies ending with a final one (see
//! [`Reply::is_final`]). A connection may carry any number of requests, one
//! after the other. The full description, with examples, is
//! `docs/control-protocol.md`.
//!
//! Versioning: `v` is [`PROTOCOL_VERSION`]. A server refuses a request with a
//! different major version with [`ErrorCode::UnsupportedVersion`]; fields are
//! only ever added, and unknown fields are ignored by both sides.

use crate::spec::UnitSpec;
use crate::state::UnitState;
use serde::{Deserialize, Serialize};

mod analyze;
mod exec;
mod logs;
mod parse_time;
mod settings;
mod socket;
mod status;
pub use crate::context::policy::NotApplied;
pub use analyze::{AnalyzeData, Edge, SecurityData, UnitTiming};
pub use exec::ExecList;
pub use logs::{LogAck, LogBatch, LogChunk, LogFailure, LogLine, LogSource};
pub use parse_time::parse_rfc3339;
pub use settings::Settings;
pub use socket::{control_socket_path, unprivileged_control_socket, SYSTEM_CONTROL_SOCKET};
pub use status::{
    Connections, Dependencies, DeviceLink, LogWriterStatus, SystemStatus, TargetProviders,
    TimerTimes, UnitStatus, Usage, SLICE_SOURCE,
};

/// The protocol version this crate speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// The longest request line a server accepts (bytes, newline excluded).
pub const MAX_REQUEST_LINE: usize = 4 * 1024 * 1024;

/// A request line: the version and the operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// Protocol version of the sender.
    pub v: u32,
    /// What is asked.
    #[serde(flatten)]
    pub request: Request,
}

impl Envelope {
    /// Wraps a request with this crate's protocol version.
    pub fn new(request: Request) -> Envelope {
        Envelope {
            v: PROTOCOL_VERSION,
            request,
        }
    }
}

/// Why a request line is not a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadRequest {
    /// Its protocol version is not this crate's.
    #[error("unsupported protocol version {0} (this init speaks {PROTOCOL_VERSION})")]
    UnsupportedVersion(u64),
    /// Anything else: not JSON, no version, an unknown or malformed request.
    #[error("{0}")]
    Malformed(String),
}

/// Decodes one request line (without its newline). The version is checked
/// before the request, so that a newer client's unknown request is answered
/// with [`BadRequest::UnsupportedVersion`] rather than a parse error.
pub fn decode_request(line: &[u8]) -> Result<Envelope, BadRequest> {
    let v: serde_json::Value = serde_json::from_slice(line)
        .map_err(|e| BadRequest::Malformed(format!("not JSON: {e}")))?;
    match v.get("v").and_then(serde_json::Value::as_u64) {
        None => {
            return Err(BadRequest::Malformed(
                "missing protocol version `v`".to_string(),
            ))
        }
        Some(x) if x != u64::from(PROTOCOL_VERSION) => {
            return Err(BadRequest::UnsupportedVersion(x))
        }
        Some(_) => {}
    }
    serde_json::from_value(v).map_err(|e| BadRequest::Malformed(format!("bad request: {e}")))
}

/// How to end the system (or, not as PID 1, the supervisor).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShutdownKind {
    /// Stop everything and power off (not PID 1: exit 0).
    Poweroff,
    /// Stop everything and reboot.
    Reboot,
    /// Stop everything and halt.
    Halt,
}

/// An operation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Request {
    /// The whole system ([`Reply::Status`]), or one unit or target ([`Reply::Unit`]).
    Status {
        /// A unit or target name; none for the whole system.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// Every unit ([`Reply::List`]).
    List,
    /// Switch to `target`. Without `wait`: [`Reply::Accepted`]. With `wait`:
    /// [`Reply::Progress`] lines, then [`Reply::Settled`].
    SetTarget {
        /// The target to satisfy.
        target: String,
        /// Stream progress until the target is active or failed.
        #[serde(default)]
        wait: bool,
        /// `systemctl isolate`: refused unless the target's unit allows it
        /// (`allow-isolate`, systemd's `AllowIsolate=`).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        isolate: bool,
    },
    /// Re-read the unit directory ([`Reply::Applied`] or an error listing
    /// every problem). Changed units that are up restart with their new
    /// definition (`initctl reload`), unless `keep_running`.
    Reload {
        /// systemd's daemon-reload (what `flotilla-busd` asks): nothing
        /// restarts; a changed unit that is up keeps running and takes its
        /// new definition as systemd's units do
        /// ([`crate::planner::OnChange::Keep`]).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        keep_running: bool,
    },
    /// Execute the init's binary again, carrying its state over
    /// (`docs/operations.md`): [`Reply::Accepted`] from the new image, or
    /// an error from the old one, which goes on as it was.
    Reexec,
    /// Restart one required unit ([`Reply::Accepted`]).
    Restart {
        /// The unit's name.
        unit: String,
    },
    /// Run a running unit's `exec-reload` ([`Reply::Accepted`]); the unit is
    /// `reloading` until the command exits (or, for `foreground-notified`,
    /// until `READY=1`).
    ReloadUnit {
        /// The unit's name.
        unit: String,
    },
    /// Forget the failure of a failed unit, or of every failed unit, as
    /// systemd's `ResetFailed` (`systemctl reset-failed`) does
    /// ([`Reply::Accepted`], saying how many).
    ResetFailed {
        /// The unit (none: every unit).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
    },
    /// Send a signal to a unit's processes, as systemd's `KillUnit`
    /// (`systemctl kill`) does ([`Reply::Accepted`]): to its main process,
    /// and unless `main_only` to every process of its process group and
    /// cgroup, whatever its `kill-mode`. Nothing else changes: what the
    /// processes do with it is theirs.
    KillUnit {
        /// The unit's name.
        unit: String,
        /// The signal's number.
        signal: i32,
        /// Only the main process.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        main_only: bool,
    },
    /// Remove a unit's directories, as systemd's `CleanUnit` (`systemctl
    /// clean`) does ([`Reply::Accepted`] once they are gone): `what` in
    /// systemd's words (`runtime`, `state`, `cache`, `logs`,
    /// `configuration`, `fdstore`, `all`; `units/src/context/clean.rs`).
    /// Refused (`not-possible`) unless the unit is down, or when nothing
    /// named exists for it; the removal runs in a child of the init.
    Clean {
        /// The unit's name.
        unit: String,
        /// The resources to remove.
        #[serde(default)]
        what: Vec<String>,
    },
    /// Bind a path of the host into a running service's mount namespace,
    /// as systemd's `BindMountUnit` (`systemctl bind`) does
    /// ([`Reply::Accepted`] once the mount is made). The refusals are
    /// systemd's, in its words (`units/src/context/binds.rs`), with
    /// `invalid`: a source or destination not absolute and normal, a unit
    /// not a service, a destination at or below one of its
    /// `InaccessiblePaths=`, a unit with no mount namespace of its own, a
    /// unit not running. The mount is made by a child of the init that
    /// enters the namespace of the unit's main process; its failure is
    /// `failed`, with the error the kernel gave.
    BindMount {
        /// The unit's name.
        unit: String,
        /// The host's path.
        source: String,
        /// Where the unit sees it; empty: the source's path.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        destination: String,
        /// Read-only, with everything below it.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        read_only: bool,
        /// Make a missing destination first (its parents, then a
        /// directory or an empty file, as the source is).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        mkdir: bool,
    },
    /// Freeze (or, with `thaw`, thaw) a running unit's cgroup, or a
    /// slice's that has a directory, with cgroup v2's `cgroup.freeze`, as
    /// systemd's `FreezeUnit`/`ThawUnit` ([`Reply::Accepted`] once the
    /// kernel says it is done, at once when it already was;
    /// `units/src/freezer.rs`). Refused (`not-possible`) when the unit is
    /// not running, has no cgroup with a freezer, or another freeze or
    /// thaw of it is under way. A stop of a frozen unit thaws it first.
    Freeze {
        /// The unit's (or slice's) name.
        unit: String,
        /// Thaw instead.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        thaw: bool,
    },
    /// Move processes into a running delegated unit's cgroup, or a
    /// cgroup below it, as systemd's `AttachProcessesToUnit` does
    /// ([`Reply::Accepted`] once every one was moved;
    /// `units/src/attach.rs` has the rules). `uid` is the user the move
    /// is asked for (flotilla-busd's caller): root and the init's own
    /// user move any process, another user only its own, into a unit of
    /// its own. Refused with `invalid` (a bad subcgroup, a unit not
    /// delegated or not active, a PID that cannot be moved),
    /// `permission-denied` (not the user's process) or `not-possible` (no
    /// such process); nothing is moved then.
    Attach {
        /// The unit's name.
        unit: String,
        /// Below the unit's cgroup: empty, or an absolute path (`/sub`).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        subcgroup: String,
        /// The processes.
        pids: Vec<u32>,
        /// The user asking.
        uid: u32,
    },
    /// D-Bus names taken or given up on the system bus, as
    /// `flotilla-busd` sees them ([`Reply::Accepted`]): a unit with
    /// `ready-bus-name` (systemd's `Type=dbus`) is ready once its name is
    /// owned. `whole`: `owned` lists every name owned now.
    BusNames {
        /// Names now owned.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        owned: Vec<String>,
        /// Names no longer owned.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        released: Vec<String>,
        /// `owned` is the whole list.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        whole: bool,
    },
    /// A unit's captured output ([`Reply::Log`] lines, then [`Reply::LogEnd`]
    /// unless `follow`).
    Logs {
        /// The unit's name.
        unit: String,
        /// Only the last `lines` lines.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lines: Option<usize>,
        /// Keep the connection open and send new lines as they come.
        #[serde(default)]
        follow: bool,
        /// Say first where the older lines are ([`Reply::LogSource`]), so
        /// that the client can read them from the log directory.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        source: bool,
    },
    /// Orderly shutdown ([`Reply::Accepted`]).
    Shutdown {
        /// Power off, reboot or halt.
        kind: ShutdownKind,
    },
    /// Timing and graph data for `initctl analyze` ([`Reply::Analyze`]).
    Analyze,
    /// What `initctl analyze security` compares with `/proc`: the declared
    /// context and main PID of one unit, or of every running unit
    /// ([`Reply::Security`]; an unknown unit is `unknown-unit`).
    Security {
        /// The unit; `None`: every running unit.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// Replace the transient unit set named `set` with `units` (an empty list
    /// removes it). Units that did not change keep running; changed running
    /// ones restart; removed ones stop. [`Reply::Applied`], or an error with
    /// every problem and nothing changed.
    TransientApply {
        /// The set's name, e.g. `cluster`.
        set: String,
        /// The complete new contents of the set.
        units: Vec<UnitSpec>,
    },
    /// Change some units of the transient set named `set`, leaving the rest
    /// as they are: each unit of `upsert` replaces the set's unit of the same
    /// name or joins the set; each name of `remove` leaves it (a set left
    /// empty is removed). Unchanged units keep running, changed ones
    /// restart, removed ones stop. [`Reply::Applied`], or an error listing
    /// every problem (a name to remove that is not in the set among them)
    /// with nothing changed.
    TransientPatch {
        /// The set's name, e.g. `cluster`.
        set: String,
        /// Units to add or replace.
        #[serde(default)]
        upsert: Vec<UnitSpec>,
        /// Names of units to take out of the set.
        #[serde(default)]
        remove: Vec<String>,
    },
    /// A lease on the transient set `set` ([`crate::transient_lease`]):
    /// the units it covers are taken out of the set at `stop_at` and every
    /// process left of them gets SIGKILL at `kill_at`, unless a renewal (the
    /// same request again) moves them on first. Both instants are
    /// `CLOCK_MONOTONIC` nanoseconds; without them the set's lease is
    /// cancelled. [`Reply::Accepted`] ([`Reply::LeaseFired`] when the lease
    /// had fired before it), or an error with every problem (no such set,
    /// `kill_at` before `stop_at`, a unit not in the set) and nothing
    /// changed. Emptying the set cancels its lease too.
    TransientLease {
        /// The set's name, e.g. `cluster`.
        set: String,
        /// When the covered units are taken out of the set.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop_at: Option<u64>,
        /// When what is left of them is killed (not before `stop_at`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kill_at: Option<u64>,
        /// The units of the set it covers; absent: those it covered
        /// before (none for a new lease), less any that left the set.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        units: Option<Vec<String>>,
    },
    /// Every state change as it happens ([`Reply::Changed`] lines, never final).
    Subscribe,
    /// The log writer's request (`flotilla-logd`): the connection becomes
    /// the init's one log writer; `ack` says how the last batch went, and
    /// the reply is the next [`Reply::LogBatch`], sent once there are lines
    /// the log directory does not have yet. See `docs/control-protocol.md`.
    LogPull {
        /// The outcome of the last batch received.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ack: Option<LogAck>,
        /// Hand over again the units whose lines the writer could not write.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        retry: bool,
        /// At most about this many bytes of text in a batch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_bytes: Option<usize>,
        /// The writer is stopping: the init sends what it has, then a
        /// batch marked `last` once nothing more is to come (at shutdown:
        /// once every other unit has stopped).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        leaving: bool,
    },
    /// Mask a unit: it never starts, by any path, until unmasked; kept
    /// across reboots ([`Reply::Applied`]).
    Mask {
        /// The unit's name.
        unit: String,
    },
    /// Take a unit's mask away ([`Reply::Applied`]).
    Unmask {
        /// The unit's name.
        unit: String,
    },
    /// Add one transient unit (`initctl run`, `initctl add`) to the
    /// transient set `initctl`; it is required besides the target's set
    /// until `stop-transient` (or a reboot). A unit with an empty name is
    /// named `run-N`. [`Reply::Applied`] (its name in `added`, and its
    /// `aux` units'), or an error and nothing changed.
    TransientAdd {
        /// The unit (boxed: a request is small otherwise).
        unit: Box<UnitSpec>,
        /// A `scope`'s processes, which its start moves into it (the
        /// first is its main PID); empty for any other type.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        adopt: Vec<i32>,
        /// The standard streams the descriptors sent with this request
        /// line (`SCM_RIGHTS`) stand for, in their order: every process of
        /// the unit gets them there in place of what its context says
        /// (`systemd-run --pipe`'s `StandardInputFileDescriptor`, …;
        /// docs/control-protocol.md). A service's only.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        stdio: Vec<StdStream>,
        /// Units added with it to the set, not wanted: what it triggers
        /// (a transient timer's service, `StartTransientUnit`'s auxiliary
        /// units). Each goes as the unit does.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        aux: Vec<UnitSpec>,
        /// The unit's file as systemd writes it (`flotilla-busd`'s): the
        /// init writes it into the search path's directory of transient
        /// units when it takes the unit, before its start, and removes it
        /// when it lets the unit go, so that a unit that ends at once
        /// leaves no file behind for a reload to read.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file: Option<String>,
    },
    /// Stop a transient unit of `initctl run`/`add` and take it out of
    /// the unit set ([`Reply::Applied`]).
    StopTransient {
        /// The unit's name.
        name: String,
    },
    /// Load the unit `unit` if no unit has that name and the search path
    /// defines it now, its file written since the last reload (what
    /// systemd's `LoadUnit` and a `systemctl show` of it do; docs/units.md,
    /// "Units loaded when first asked for"): [`Reply::Accepted`] when the
    /// init has the unit then, an `unknown_unit` error otherwise.
    Load {
        /// The unit's name.
        unit: String,
    },
    /// Require a unit besides the target's set until the next target
    /// switch (what `systemctl start` means): [`Reply::Accepted`].
    Want {
        /// The unit's name.
        unit: String,
    },
    /// A [`Request::Want`] whose unit starts at once, not waiting for the
    /// units it is ordered after or requires to be up (systemd's
    /// `--job-mode=ignore-dependencies`): [`Reply::Accepted`]. Once
    /// started it is held by its requirements as any unit.
    StartAtOnce {
        /// The unit's name.
        unit: String,
    },
    /// Drop a [`Request::Want`] (what `systemctl stop` means for a unit
    /// the target does not require): [`Reply::Accepted`].
    Unwant {
        /// The unit's name.
        unit: String,
    },
    /// Make `unit` the provider the alternative `target` runs, kept across
    /// reboots ([`Reply::Accepted`]).
    SetAlternative {
        /// The target, declared `alternative` in the config.
        target: String,
        /// One of its providers.
        unit: String,
    },
    /// Set the init's log level and/or target (systemd's `LogLevel`,
    /// `LogTarget`), until it stops or re-executes ([`Reply::Accepted`]);
    /// [`SystemStatus::log`] reports them.
    SetLog {
        /// The new level.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        level: Option<crate::loglevel::LogLevel>,
        /// The new target.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<crate::loglevel::LogTarget>,
    },
    /// Change the environment every unit's processes get on top of the
    /// init's own (systemd's `UnsetAndSetEnvironment`,
    /// [`crate::manager_env`]): what `unset` names taken out, then each
    /// `NAME=VALUE` of `set`; until the init stops, kept across a reload
    /// and a re-exec ([`Reply::Accepted`]; a bad name: `bad-request`);
    /// [`SystemStatus::environment`] reports the result.
    SetEnvironment {
        /// Names (or `NAME=VALUE`: only while it has that value).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        unset: Vec<String>,
        /// `NAME=VALUE` assignments.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        set: Vec<String>,
    },
    /// Turn the service watchdogs on or off (systemd's `ServiceWatchdogs`,
    /// `systemctl service-watchdogs`): off, a missed `WATCHDOG=1` is
    /// logged and ignored ([`Reply::Accepted`]); kept across a re-exec;
    /// [`SystemStatus::service_watchdogs`] reports it.
    SetServiceWatchdogs {
        /// On.
        on: bool,
    },
}

/// One of a process's standard streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StdStream {
    /// Descriptor 0.
    Stdin,
    /// Descriptor 1.
    Stdout,
    /// Descriptor 2.
    Stderr,
}

impl StdStream {
    /// Its descriptor number.
    pub fn index(self) -> usize {
        match self {
            StdStream::Stdin => 0,
            StdStream::Stdout => 1,
            StdStream::Stderr => 2,
        }
    }
}

impl Request {
    /// How many descriptors are sent with the request's line
    /// (`SCM_RIGHTS`): a server takes that many of those it received on
    /// the connection, in order, for this request.
    pub fn passed_fds(&self) -> usize {
        match self {
            Request::TransientAdd { stdio, .. } => stdio.len(),
            _ => 0,
        }
    }

    /// True for requests that change the system: only root or the init's own
    /// user may send them.
    pub fn is_mutating(&self) -> bool {
        matches!(
            self,
            Request::SetTarget { .. }
                | Request::Reload { .. }
                | Request::Reexec
                | Request::Restart { .. }
                | Request::ReloadUnit { .. }
                | Request::KillUnit { .. }
                | Request::BusNames { .. }
                | Request::ResetFailed { .. }
                | Request::Clean { .. }
                | Request::BindMount { .. }
                | Request::Freeze { .. }
                | Request::Attach { .. }
                | Request::Shutdown { .. }
                | Request::TransientApply { .. }
                | Request::TransientPatch { .. }
                | Request::TransientLease { .. }
                | Request::LogPull { .. }
                | Request::Mask { .. }
                | Request::Unmask { .. }
                | Request::SetAlternative { .. }
                | Request::SetLog { .. }
                | Request::SetEnvironment { .. }
                | Request::SetServiceWatchdogs { .. }
                | Request::TransientAdd { .. }
                | Request::StopTransient { .. }
                | Request::Want { .. }
                | Request::StartAtOnce { .. }
                | Request::Unwant { .. }
        )
    }
}

/// At most this many names in each list of a [`Progress`] (the others are
/// counted in `starting_more` and `waiting_more`): a reply stays small when
/// a thousand units are waiting.
pub const PROGRESS_NAMES: usize = 16;

/// Progress of a target switch (`set-target --wait`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// The target being reached.
    pub target: String,
    /// Units in the required set.
    pub total: usize,
    /// Of those, how many are active.
    pub active: usize,
    /// Of those, how many failed.
    pub failed: usize,
    /// Units being started now (the first [`PROGRESS_NAMES`] in name order).
    pub starting: Vec<String>,
    /// Units still waiting, with what they wait on (the first
    /// [`PROGRESS_NAMES`] in name order).
    pub waiting: Vec<String>,
    /// Units being started that `starting` leaves out (0 from an init that
    /// listed them all).
    #[serde(default)]
    pub starting_more: usize,
    /// Units waiting that `waiting` leaves out (same).
    #[serde(default)]
    pub waiting_more: usize,
    /// Units outside the target's set that have not stopped yet (the first
    /// [`PROGRESS_NAMES`] in name order): the switch has settled only once
    /// they have.
    #[serde(default)]
    pub stopping: Vec<String>,
    /// Units still stopping that `stopping` leaves out.
    #[serde(default)]
    pub stopping_more: usize,
}

impl Progress {
    /// The number of units being started.
    pub fn starting_count(&self) -> usize {
        self.starting.len() + self.starting_more
    }

    /// The number of units waiting.
    pub fn waiting_count(&self) -> usize {
        self.waiting.len() + self.waiting_more
    }

    /// The number of units outside the set still stopping.
    pub fn stopping_count(&self) -> usize {
        self.stopping.len() + self.stopping_more
    }
}

/// What a reload or transient apply changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Applied {
    /// Units that are new.
    pub added: Vec<String>,
    /// Units whose definition changed (restarted if they were running).
    pub changed: Vec<String>,
    /// Units that are gone (stopped if they were running).
    pub removed: Vec<String>,
    /// Units that did not change (they keep running, same PID).
    pub unchanged: usize,
    /// Warnings (`FILE:LINE:COL: warning: ...`).
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// Why a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorCode {
    /// The request line is not valid JSON or not a known request.
    BadRequest,
    /// The request's protocol version is not spoken here.
    UnsupportedVersion,
    /// The sender may not change the system (peer credentials).
    PermissionDenied,
    /// No unit by that name.
    UnknownUnit,
    /// No unit provides that target.
    UnknownTarget,
    /// The unit set has errors; nothing changed. `details` lists them.
    Invalid,
    /// The request cannot be done in the current state (e.g. restarting a unit
    /// that is not required, or anything while shutting down).
    NotPossible,
    /// The unit itself refuses a start or stop by hand
    /// (`refuse-manual-start`, `refuse-manual-stop`).
    Refused,
    /// The target failed or a wait timed out.
    Failed,
    /// Something went wrong inside the init (the message says what).
    Internal,
}

/// A reply line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "kebab-case")]
pub enum Reply {
    /// The whole system.
    Status(SystemStatus),
    /// One unit (or the provider of a target).
    Unit(UnitStatus),
    /// Every unit.
    List {
        /// In name order.
        units: Vec<UnitStatus>,
    },
    /// The request was taken; its effect follows.
    Accepted {
        /// What will happen.
        message: String,
    },
    /// A `transient-lease` request taken by a lease that had already fired:
    /// its units left the set at its stop (a client's idea of the set is
    /// stale: it lists it again). Otherwise as `accepted`.
    LeaseFired {
        /// What the lease does now.
        message: String,
    },
    /// A step of `set-target --wait` (not final).
    Progress(Progress),
    /// The end of `set-target --wait`: the target is active, or failed.
    Settled {
        /// The target.
        target: String,
        /// Its state.
        state: UnitState,
        /// Active (true) or failed (false).
        ok: bool,
        /// The units that failed, if any.
        failed: Vec<String>,
    },
    /// What a reload or transient apply changed.
    Applied(Applied),
    /// A line of output (not final).
    Log(LogLine),
    /// Where the unit's older lines are, before its lines (not final; only
    /// when asked for with `source`).
    LogSource(LogSource),
    /// Lines for the log writer (the reply to [`Request::LogPull`]).
    LogBatch(LogBatch),
    /// The end of a non-following `logs` reply.
    LogEnd,
    /// `analyze` data.
    Analyze(AnalyzeData),
    /// `analyze security` data: one entry per unit asked for.
    Security {
        /// The units.
        units: Vec<SecurityData>,
    },
    /// A unit changed state (for `subscribe`; not final).
    Changed(UnitStatus),
    /// The request failed.
    Error {
        /// Why.
        code: ErrorCode,
        /// For people.
        message: String,
        /// Every problem, for `invalid`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        details: Vec<String>,
    },
}

impl Reply {
    /// False for the replies that a stream sends before its last one.
    pub fn is_final(&self) -> bool {
        !matches!(
            self,
            Reply::Progress(_) | Reply::Log(_) | Reply::LogSource(_) | Reply::Changed(_)
        )
    }

    /// An error reply.
    pub fn error(code: ErrorCode, message: impl Into<String>) -> Reply {
        Reply::Error {
            code,
            message: message.into(),
            details: Vec::new(),
        }
    }
}

/// Formats a Unix time as systemd prints timestamps in UTC,
/// `Mon 2026-11-23 06:00:00 UTC`.
pub fn systemd_timestamp(secs: i64) -> String {
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = crate::civil::civil_from_days(days);
    let wd = DAYS[crate::civil::weekday(days) as usize % 7];
    format!(
        "{wd} {y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Formats a Unix time (seconds and nanoseconds) as RFC 3339 UTC with
/// millisecond precision, e.g. `2026-11-22T04:00:00.123Z`.
pub fn rfc3339(secs: i64, nanos: u32) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = crate::civil::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60,
        nanos / 1_000_000
    )
}

#[cfg(test)]
mod tests;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests_security;
