//! What `status` reports: one unit ([`UnitStatus`]) and the whole system
//! ([`SystemStatus`]), with the parts they carry.

use crate::context::limits::{Rlimit, RlimitValue};
use crate::context::policy::NotApplied;
use crate::state::UnitState;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The [`UnitStatus::source`] of a slice the init serves from its cgroup
/// directory while a unit below it runs (a slice is a place in the cgroup
/// tree, not a unit of the set: docs/service-context.md, "Slices").
pub const SLICE_SOURCE: &str = "slice";

/// One unit as the protocol reports it (docs/contract.md §5's `--json` shape).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct UnitStatus {
    /// The unit's name.
    pub unit: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: crate::spec::UnitType,
    /// Its state.
    pub state: UnitState,
    /// Active, but some dependency (direct or transitive) is not active.
    pub degraded: bool,
    /// The main process, if any.
    pub pid: Option<i32>,
    /// The targets it provides.
    pub provides: Vec<String>,
    /// The provided targets that are up only because another one is required.
    pub coincidental: Vec<String>,
    /// How many times it was restarted after a failure.
    pub restarts: u32,
    /// The failed or missing dependency target it waits on, if any.
    pub blocked_by: Option<String>,
    /// Free-form status: sd_notify `STATUS=`, or what the init knows
    /// (`ready`, `exit status 1`, `restart in 2s`, ...).
    pub status: String,
    /// When the unit entered its state, RFC 3339 UTC.
    pub since: String,
    /// The unit's description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the current target requires it.
    #[serde(default)]
    pub required: bool,
    /// The unit's source (file, or `transient:SET`).
    #[serde(default)]
    pub source: String,
    /// Milliseconds until the next restart attempt, when waiting to restart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_in_ms: Option<u64>,
    /// Masked (`initctl mask`, or a unit file linked to `/dev/null`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub masked: bool,
    /// Running on though a reload no longer found its unit file:
    /// systemd's `not-found` (docs/systemd-units.md, "A running unit
    /// whose file is gone").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_found: bool,
    /// A target declared `group` or `alternative` in the config: its
    /// providers and, for an alternative, which one runs and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub providers: Option<TargetProviders>,
    /// What the unit's processes use now, from its cgroup: in the answer
    /// to `status` of one unit, when it has a cgroup (not in lists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The unit's dependencies as its unit file and the links name them,
    /// in systemd's terms: in the answer to `status` of one unit (not in
    /// lists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<Dependencies>,
    /// The unit's commands, as systemd's `Exec*` properties list them:
    /// in the answer to `status` of one unit that runs processes (not in
    /// lists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<Vec<super::ExecList>>,
    /// Its restart, timeout, kill and user settings, as systemd's
    /// properties show them: in the answer to `status` of one unit that
    /// runs processes (not in lists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<super::Settings>,
    /// A condition failed at its last start: nothing ran (`exited`, the
    /// status says which condition).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
    /// A socket unit's sockets while it is up, each as `KIND ADDRESS`
    /// (`stream 127.0.0.1:80`, `datagram /run/x.sock`, `fifo /run/x`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listening: Vec<String>,
    /// A trigger unit's (timer, socket, path) unit: what it activates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activates: Option<String>,
    /// A socket unit with `Accept=yes`: the connections it holds now
    /// (each with its service instance) and has accepted since the init
    /// started, as systemd's `NConnections` and `NAccepted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<Connections>,
    /// A timer unit's elapses (timer units only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer: Option<TimerTimes>,
    /// The settings of the unit's current (or last) start that the init
    /// lacked the privilege to apply, or applied only in part, each with
    /// why (docs/service-context.md, "Where a privilege is missing").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_applied: Vec<NotApplied>,
    /// While the unit's output is over its rate limit: the lines dropped
    /// so far in the window (`initctl logs` gets a line with the count
    /// when the window ends or the output does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropping_lines: Option<u64>,
    /// While the unit is failed: why, in systemd's words (`exit-code`,
    /// `signal`, `timeout`, `watchdog`, `start-limit-hit`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<crate::state::FailureKind>,
    /// With `result`: the exit status of the process whose end was the
    /// failure, or the number of the signal that killed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    /// The last reload failed, so (systemd's `ReloadResult`); absent
    /// while it succeeded, or none ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reload_result: Option<crate::state::FailureKind>,
    /// From a path unit's or timer's start of the unit until it is
    /// inactive again (`disabled`, `failed`): systemd's activation details, as name and value
    /// pairs (`trigger_unit`, `trigger_path`,
    /// `trigger_timer_realtime_usec`, `trigger_timer_monotonic_usec`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub activation: Vec<(String, String)>,
    /// `exited`, and the unit does not remain after its exit (a service
    /// without `remain-after-exit`, systemd's `RemainAfterExit=`): it ran
    /// to its end, which systemd shows as `inactive` (`dead`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ended: bool,
    /// The resource limits its processes get (systemd's `LimitNOFILE`,
    /// `LimitNOFILESoft`, …): its own `Limit*=`, else the manager's
    /// default ([`SystemStatus::default_limits`]). In the answer to
    /// `status` of one unit that runs processes (not in lists).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: BTreeMap<Rlimit, RlimitValue>,
    /// What `systemctl clean` may remove of the unit, in systemd's words
    /// (`CanClean`: `runtime`, `state`, `cache`, `logs`, `configuration`,
    /// `fdstore`; `units/src/context/clean.rs`): in the answer to `status`
    /// of one unit (not in lists).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub can_clean: Vec<String>,
    /// Its directories are being removed (`clean`): systemd's
    /// `maintenance` state (`cleaning`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cleaning: bool,
    /// Its freezer state (systemd's `FreezerState`, `units/src/freezer.rs`):
    /// absent while `running`.
    #[serde(
        default,
        skip_serializing_if = "crate::freezer::FreezerState::is_running"
    )]
    pub freezer: crate::freezer::FreezerState,
    /// Its cgroup has cgroup v2's freezer (`cgroup.freeze`): systemd's
    /// `CanFreeze`. In the answer to `status` of one unit (not in lists).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub can_freeze: bool,
    /// Its `Documentation=` URIs, in order (systemd's `Documentation`).
    /// In the answer to `status` of one unit (not in lists).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub documentation: Vec<String>,
    /// Its `MemoryMax=` in bytes, for a unit with a cgroup setting of it
    /// (systemd's `MemoryMax`, `infinity` when absent); a share of the
    /// machine's memory (`50%`) is not given. In the answer to `status`
    /// of one unit (not in lists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_max: Option<u64>,
    /// The stamp of the unit file and drop-ins it was read from, as the
    /// read saw them (`crate::load::files_stamp`; 0: not read from a unit
    /// file), for the bus to tell whether they changed since
    /// (`NeedDaemonReload`). In the answer to `status` of one unit (not
    /// in lists).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub files_stamp: u32,
    /// A device unit's device (docs/systemd-units.md, "Device units"):
    /// what systemd's `SysFSPath` and `Following` say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceLink>,
    /// A mount unit's place and what its file mounts there, in the status
    /// of one unit: the bus side shows them, or the mount table's entry
    /// while the place is mounted (docs/dbus.md, "Mount points").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount: Option<crate::spec::MountParams>,
}

/// The device a device unit stands for.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeviceLink {
    /// Its sysfs directory (`/sys/devices/…`).
    pub sysfs_path: String,
    /// The unit named after it that this one follows (`None` for that
    /// unit itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub following: Option<String>,
}

impl UnitStatus {
    /// systemd's `LoadState` of the unit: `masked`, `not-found` (running
    /// on though its file is gone) or `loaded`.
    pub fn load_state(&self) -> &'static str {
        if self.masked {
            "masked"
        } else if self.not_found {
            "not-found"
        } else {
            "loaded"
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A socket unit's connections ([`UnitStatus::connections`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connections {
    /// Held now: each has an instance of the socket's service.
    pub now: u32,
    /// Accepted in all (those closed over a limit not counted).
    pub accepted: u64,
}

/// A timer's next elapse and last trigger, in microseconds since the
/// epoch, as systemd's `NextElapseUSecRealtime` and `LastTriggerUSec`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimerTimes {
    /// When it elapses next; absent when it will not (a one-off that
    /// elapsed, or a timer that is not running).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_elapse_usec: Option<u64>,
    /// When it last triggered its unit (kept across restarts of the init
    /// for `Persistent=` timers); absent when it has not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_trigger_usec: Option<u64>,
}

/// A unit's use of the machine, read from its cgroup when asked; a field
/// is absent when its controller is not enabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Memory in use (`memory.current`), bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// CPU time used since the unit started (`cpu.stat` `usage_usec`),
    /// microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_usec: Option<u64>,
    /// Processes and threads (`pids.current`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<u64>,
}

/// What a unit depends on ([`UnitStatus::dependencies`]), by the names
/// of the targets it names (a systemd unit's are unit names), as
/// systemd's properties of the same names show them: `requires` the hard
/// pulls (`depends-on`, `depends-ms`, `Requires=`, `BindsTo=`,
/// `NAME.requires/`), `wants` the soft ones (`waits-for`, `Wants=`,
/// `NAME.wants/`), `after` every ordering after (an `After=` and each
/// ordered dependency), `before` and `conflicts` as written. Each list
/// sorted, no name twice.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Dependencies {
    /// Hard pulls.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
    /// Soft pulls.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wants: Vec<String>,
    /// Ordered after.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
    /// Ordered before.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<String>,
    /// Cannot run together with.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<String>,
    /// Whether systemd's default dependencies are among these (a unit
    /// file without `DefaultDependencies=no`: `Origin::default_dependencies`),
    /// for the bus side, which puts the mount table's in their place while
    /// a mount unit's place is mounted (docs/dbus.md, "Mount points").
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub default_dependencies: bool,
}

impl Dependencies {
    /// The dependencies `spec` declares, and the links of `origin` to
    /// units not found (`Origin::unfound_links`), which systemd lists too.
    pub fn of(spec: &crate::spec::UnitSpec, origin: &crate::spec::Origin) -> Self {
        use crate::spec::TargetList;
        let unfound = |list: TargetList| -> Vec<String> {
            (origin.unfound_links().iter())
                .filter(|(l, _)| *l == list)
                .map(|(_, n)| n.clone())
                .collect()
        };
        let (requires, wants) = (unfound(TargetList::Requires), unfound(TargetList::Wants));
        let list = |lists: &[&[String]]| {
            let mut v: Vec<String> = lists.iter().flat_map(|l| l.iter().cloned()).collect();
            v.sort();
            v.dedup();
            v
        };
        Dependencies {
            requires: list(&[
                &spec.depends_on,
                &spec.depends_ms,
                &spec.requires,
                &requires,
            ]),
            wants: list(&[&spec.waits_for, &spec.wants, &wants]),
            after: list(&[
                &spec.after,
                &spec.depends_on,
                &spec.depends_ms,
                &spec.waits_for,
            ]),
            before: list(&[&spec.before]),
            conflicts: list(&[&spec.conflicts]),
            default_dependencies: origin.default_dependencies,
        }
    }

    /// Each name replaced by `id(name)` (an alias by its unit's name, as
    /// systemd names a dependency by the unit it loaded), each list sorted
    /// again, no name twice.
    pub fn renamed(self, id: impl Fn(&str) -> String) -> Self {
        let map = |v: Vec<String>| {
            let mut v: Vec<String> = v.iter().map(|n| id(n)).collect();
            v.sort();
            v.dedup();
            v
        };
        Dependencies {
            requires: map(self.requires),
            wants: map(self.wants),
            after: map(self.after),
            before: map(self.before),
            conflicts: map(self.conflicts),
            default_dependencies: self.default_dependencies,
        }
    }
}

/// The providers of a declared target, as [`UnitStatus::providers`] shows
/// them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetProviders {
    /// `group` or `alternative`.
    pub mode: crate::targets::TargetMode,
    /// Each provider (in the order an alternative takes them) and its state.
    pub units: Vec<(String, UnitState)>,
    /// The provider an alternative runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen: Option<String>,
    /// Why it runs.
    pub why: String,
}

/// The whole system (`initctl status --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SystemStatus {
    /// The current target.
    pub target: String,
    /// Its state (its provider's).
    pub target_state: UnitState,
    /// Whether anything the target needs is not active.
    pub degraded: bool,
    /// Every unit, in name order.
    pub units: Vec<UnitStatus>,
    /// Running as PID 1.
    #[serde(default)]
    pub pid1: bool,
    /// Shutting down.
    #[serde(default)]
    pub shutting_down: bool,
    /// Problems found when the unit set was loaded (the units left out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_errors: Vec<String>,
    /// The log directory and its writer, when the init has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_writer: Option<LogWriterStatus>,
    /// The unit search path, first directory first (docs/contract.md §3c): where
    /// `initctl enable`, `cat` and `list-unit-files` look.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub units_path: Vec<String>,
    /// The init's log level and target (systemd's `LogLevel`,
    /// `LogTarget`; `set-log`).
    #[serde(default)]
    pub log: crate::loglevel::LogSettings,
    /// The limits a unit without `Limit*=` of its own gets, every
    /// resource (systemd's `DefaultLimitNOFILE`, …): the manager's
    /// `DefaultLimit*=` (`system-conf`), else the init's own, which its
    /// children inherit.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub default_limits: BTreeMap<Rlimit, RlimitValue>,
    /// The environment every unit's processes get before their own
    /// settings (`NAME=VALUE`, in name order): the init's own, with what
    /// `set-environment` set over it (systemd's `Environment`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub environment: Vec<String>,
    /// Whether a missed `WATCHDOG=1` fails its unit (systemd's
    /// `ServiceWatchdogs`; `set-service-watchdogs`).
    #[serde(default = "on")]
    pub service_watchdogs: bool,
}

fn on() -> bool {
    true
}

/// How the units' output gets to the log directory (`initctl status`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogWriterStatus {
    /// The log directory (`--log-dir`).
    pub dir: String,
    /// Whether a log writer is connected.
    pub connected: bool,
    /// The writer's process, while connected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// The unit the writer runs as, if the init knows its process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// Lines in memory that the log directory does not have yet.
    pub waiting: u64,
    /// Lines that left the init's memory before they were written.
    pub lost: u64,
    /// Why the writer could not write, until it writes again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
