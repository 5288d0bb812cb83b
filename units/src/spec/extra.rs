//! The fields of a unit that are seldom set, kept apart from
//! [`UnitSpec`](super::UnitSpec)'s own behind one pointer
//! ([`super::Extras`]).

use super::{
    CollectMode, Command, Commands, Context, ExitType, Names, NotifyAccess, Signal, UnitAction,
};
use crate::exits::ExitSet;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The fields of a [`UnitSpec`] that are seldom set. The first five, and
/// `exec_stop_post`, `exec_reload`, `ready_wait`, `ready_grep` and
/// `pidfile`, are always in its JSON form; the others only when set.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ExtraFields {
    /// Run as this user (name or number).
    pub user: Option<String>,
    /// Run as this group (name or number).
    pub group: Option<String>,
    /// Working directory of the unit's processes.
    pub working_directory: Option<PathBuf>,
    /// `Some(true)`: a working directory that is missing is no failure;
    /// the processes start in the init's (systemd's `WorkingDirectory=-`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_directory_optional: Option<bool>,
    /// `Some(true)`: the sockets handed to the main process as 3, 4, …
    /// keep `O_NONBLOCK` (systemd's `NonBlocking=`); by default they are
    /// handed over blocking, as systemd hands them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_blocking: Option<bool>,
    /// `Some(true)`: the start is done once the main process is forked,
    /// not once its program runs (systemd's `Type=simple`, which the
    /// translator gives a service of its default type): a failure before
    /// the program runs (its user not found, `execve` refused) is then
    /// the main process's failure, with systemd's exit status, after the
    /// start (`planner/lifecycle/start.rs`, `main_failed_at_fork`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at_fork: Option<bool>,
    /// `Some(true)`: a main process that was up and is killed by
    /// `SIGHUP`, `SIGINT`, `SIGTERM` or `SIGPIPE` ended cleanly, as
    /// systemd judges a daemon that has no handler for them (the
    /// translator gives it every systemd service but a oneshot): the unit
    /// is then `exited`, not failed, and `restart: on-failure` does not
    /// restart it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon_clean_signals: Option<bool>,
    /// `Some(true)`: the processes run as a user and group the init picks
    /// for the unit's run (systemd's `DynamicUser=`): a UID and equal GID
    /// of 61184–65519, hashed from the `user` name or the unit's
    /// (`dynamic_user.rs`), free in the passwd and group databases and
    /// among the other dynamic users, held while the unit runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_user: Option<bool>,
    /// When a unit of the transient set of `initctl run` leaves it by
    /// itself (systemd's `CollectMode=`, which busd gives every service
    /// made over D-Bus); `None`: it stays until `stop-transient` (or
    /// `reset-failed` of a failed one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collect_mode: Option<CollectMode>,
    /// Whose notify messages are taken (systemd's `NotifyAccess=`);
    /// `None`: the type's default, the main process of a `notified`
    /// unit, nobody's for the others (their processes get no notify
    /// socket unless the unit has a watchdog or a descriptor store).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notify_access: Option<NotifyAccess>,
    /// Extra environment variables.
    pub environment: BTreeMap<String, String>,
    /// Files of `KEY=value` lines read at each start (`true`: a missing file is fine).
    pub environment_files: Vec<(PathBuf, bool)>,
    /// The output rate limit's window (none: journald's default; zero: no
    /// limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_rate_limit_interval: Option<Duration>,
    /// Lines kept per window (none: journald's default; zero: no limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_rate_limit_burst: Option<u32>,
    /// `FileDescriptorStoreMax=`: how many descriptors the main process
    /// may hand the init to keep for its next start (`FDSTORE=1`, the
    /// store of `init/src/runtime/fdstore.rs`); none or zero: no store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_descriptor_store_max: Option<u32>,
    /// The service context: directories, limits, output, kill mode,
    /// cgroup limits, sandbox (`docs/service-context.md`).
    #[serde(skip_serializing_if = "Context::is_empty")]
    pub context: Context,
    /// A `oneshot`'s further commands (systemd's second and later
    /// `ExecStart=` lines), run in order after `exec_start` exits with
    /// success.
    #[serde(skip_serializing_if = "Commands::is_empty")]
    pub exec_start_then: Commands,
    /// When the service is over (systemd's `ExitType=`): when its main
    /// process exits (`main`), or once its cgroup is empty after that
    /// (`cgroup`).
    #[serde(default, skip_serializing_if = "ExitType::is_main")]
    pub exit_type: ExitType,
    /// Commands run in order before `exec_start_pre` (systemd's
    /// `ExecCondition=`): one exiting with 1 to 254 skips the start
    /// (the unit is not failed, nothing else runs); 255, a signal or a
    /// failed spawn fails it, unless the failure is ignored.
    #[serde(default, skip_serializing_if = "Commands::is_empty")]
    pub exec_condition: Commands,
    /// Commands run in order once the main process is up (ready, or a
    /// oneshot's commands done): the unit is up when they are done; one
    /// failing (not ignored) fails the start (systemd's `ExecStartPost=`).
    #[serde(default, skip_serializing_if = "Commands::is_empty")]
    pub exec_start_post: Commands,
    /// A trigger's settings (its timer, sockets or paths).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation: Option<Box<crate::trigger::Activation>>,
    /// Exit statuses that count as success besides 0.
    #[serde(skip_serializing_if = "ExitSet::is_empty")]
    pub success_exit_status: ExitSet,
    /// Exit statuses after which the unit is not restarted.
    #[serde(skip_serializing_if = "ExitSet::is_empty")]
    pub restart_prevent_exit_status: ExitSet,
    /// Exit statuses after which the unit is restarted, whatever its
    /// `restart`.
    #[serde(skip_serializing_if = "ExitSet::is_empty")]
    pub restart_force_exit_status: ExitSet,
    /// The longest the main process may go without a `WATCHDOG=1` once
    /// the unit is running, as given (`UnitSpec::watchdog` reads it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watchdog: Option<Duration>,
    /// The longest the unit may stay running, as given
    /// (`UnitSpec::runtime_max` reads it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime_max: Option<Duration>,
    /// The most a random part adds to `runtime_max`, as given
    /// (`UnitSpec::runtime_max` reads it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime_randomized_extra: Option<Duration>,
    /// Units started when this one fails for good (no restart pending).
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub on_failure: Names,
    /// Units started when this one becomes inactive without a failure
    /// (stopped, or a oneshot done that does not remain).
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub on_success: Names,
    /// The D-Bus name whose taking makes the unit ready (systemd's
    /// `Type=dbus` with `BusName=`): a `foreground-supervised` unit with
    /// it is `starting` until `flotilla-busd` reports the name owned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_bus_name: Option<String>,
    /// Socket units whose sockets the main process is handed besides
    /// those of the sockets that trigger it (`Sockets=`).
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub sockets: Names,
    /// Targets needed as `depends-on` needs them, but never pulled in: one
    /// that nothing else requires keeps this unit from starting (systemd's
    /// `Requisite=`).
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub requisite: Names,
    /// Targets whose stop or restart this unit follows; never pulled in,
    /// not ordered (systemd's `PartOf=`).
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub part_of: Names,
    /// Targets pulled in as `wants` pulls them, and started again whenever
    /// they stop or fail while this unit is active, as if they said
    /// `restart: always` (systemd's `Upholds=`).
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub upholds: Names,
    /// Units whose reload reloads this unit too, when it is up (systemd's
    /// `ReloadPropagatedFrom=`).
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub reload_propagated_from: Names,
    /// Units reloaded, when they are up, whenever this unit is (systemd's
    /// `PropagatesReloadTo=`).
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub propagates_reload_to: Names,
    /// Units whose end (a stop, an exit, a failure for good) stops this
    /// unit too, as a stop by hand (systemd's `StopPropagatedFrom=`).
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub stop_propagated_from: Names,
    /// Units stopped, as by hand, whenever this unit ends (systemd's
    /// `PropagatesStopTo=`).
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub propagates_stop_to: Names,
    /// What the system does when the unit has done its work: exited with
    /// success, or (a unit with no process) come up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_action: Option<UnitAction>,
    /// What the system does when the unit fails for good.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_action: Option<UnitAction>,
    /// `Some(true)`: `initctl start` of the unit is refused, only a target
    /// brings it up (a shutdown or early-boot target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refuse_manual_start: Option<bool>,
    /// `Some(true)`: `initctl stop` of the unit is refused; only a switch
    /// of the target stops it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refuse_manual_stop: Option<bool>,
    /// `Some(true)`: a switch of the target leaves the unit running if it
    /// is up, as if started by hand (`IgnoreOnIsolate=`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_on_isolate: Option<bool>,
    /// `Some(false)`: a `Type=forking` service without `PIDFile=` has no
    /// main PID guessed from its cgroup (`GuessMainPID=no`); it runs
    /// while its cgroup holds a process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guess_main_pid: Option<bool>,
    /// `Some(true)`: `systemctl isolate` may switch to this unit's target
    /// (`AllowIsolate=`); `initctl set-target` switches to any target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_isolate: Option<bool>,
    /// `Documentation=`: the URIs, in the order the unit's files give
    /// them (systemd keeps every one given, repeats too; an empty
    /// assignment empties the list), shown as systemd's `Documentation`.
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub documentation: Names,
    /// The signal a stop that is part of a restart (`initctl restart`)
    /// sends instead of `kill_signal` (`RestartKillSignal=`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_kill_signal: Option<Signal>,
    /// The start limit's window (`StartLimitIntervalSec=`; zero: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_limit_interval: Option<Duration>,
    /// Starts allowed in the window (`StartLimitBurst=`; zero: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_limit_burst: Option<u32>,
    /// Commands run after the unit stopped, failures logged.
    #[serde(default)]
    pub exec_stop_post: Commands,
    /// How to reload the configuration; `None` means reload restarts.
    #[serde(default)]
    pub exec_reload: Option<Command>,
    /// Further reload commands (systemd's second and later `ExecReload=`
    /// lines), run in order after `exec_reload` succeeds; the reload fails
    /// at the first that fails (not ignored).
    #[serde(default, skip_serializing_if = "Commands::is_empty")]
    pub exec_reload_then: Commands,
    /// `foreground-supervised`: ready this long after spawn.
    #[serde(default)]
    pub ready_wait: Option<Duration>,
    /// `foreground-supervised`: ready when a stdout/stderr line matches.
    #[serde(default)]
    pub ready_grep: Option<String>,
    /// `background-pidfile`: where the daemon writes its PID.
    #[serde(default)]
    pub pidfile: Option<PathBuf>,
    /// A trigger's unit (one name): what a `timer`, `socket` or `path`
    /// starts. With `accept: yes`, a template (`svc@.service`).
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub triggers: Names,
    /// The targets whose `TARGET.wants/` `initctl enable` links the unit
    /// into (`[Install] WantedBy=` of a YAML unit); nothing at run time.
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub wanted_by: Names,
    /// `Condition…=` and `Assert…=`, checked at each start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<crate::condition::Condition>,
    /// A mount unit's place and what it mounts there (boxed: few units
    /// are mounts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount: Option<Box<super::MountParams>>,
}
