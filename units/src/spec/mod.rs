//! The validated model of one unit.
//!
//! Everything here has passed validation: names are well formed, the options
//! fit the type, durations are parsed. The loaders ([`crate::load`] for YAML,
//! `flotilla_systemd` for systemd unit files) produce it; the graph, the
//! planner and the init consume it. Two specs compare equal exactly when
//! running one instead of the other would make no difference, which is what
//! `initctl reload` uses to decide which units restart (the file position is
//! kept apart, in [`Origin`]).

use crate::context::ServiceContext;
use crate::exits::ExitSet;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

mod boxed;
mod extra;
mod mount;
mod origin;
mod pull;
mod words;

pub use crate::signal::Signal;
pub use crate::unit_name::{valid_name, valid_systemd_name};
pub use crate::unit_type::{Arm, Ready, RestartPolicy, Runs, TypeRow, UnitType, SPAWNING};
pub use boxed::{Context, Extras};
pub use extra::ExtraFields;
pub use mount::MountParams;
pub use origin::{Origin, TargetList, NO_FILES};
pub use words::Words;

/// What the whole system does when a unit ends (systemd's
/// `SuccessAction=` and `FailureAction=`): flotilla's shutdowns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnitAction {
    /// Stop every unit and power off (`poweroff`; not PID 1: exit).
    Poweroff,
    /// Stop every unit and reboot (`reboot`).
    Reboot,
    /// Stop every unit and halt (`halt`).
    Halt,
    /// Stop every unit and exit (`exit`: a container's init; on a machine
    /// it powers off).
    Exit,
}

impl UnitAction {
    /// systemd's name of the action.
    pub fn name(self) -> &'static str {
        match self {
            UnitAction::Poweroff => "poweroff",
            UnitAction::Reboot => "reboot",
            UnitAction::Halt => "halt",
            UnitAction::Exit => "exit",
        }
    }

    /// systemd's value: `none` is no action; the `-force` and
    /// `-immediate` variants are the same action, since flotilla always
    /// stops every unit first (an orderly shutdown is never skipped).
    /// `kexec` and `soft-reboot` are refused: flotilla has neither.
    pub fn parse(value: &str) -> Result<Option<UnitAction>, String> {
        let v = value.trim();
        let base = v
            .strip_suffix("-force")
            .or_else(|| v.strip_suffix("-immediate"))
            .unwrap_or(v);
        match base {
            "" | "none" => Ok(None),
            "poweroff" => Ok(Some(UnitAction::Poweroff)),
            "reboot" => Ok(Some(UnitAction::Reboot)),
            "halt" => Ok(Some(UnitAction::Halt)),
            "exit" if !v.ends_with("-immediate") => Ok(Some(UnitAction::Exit)),
            "kexec" | "soft-reboot" => Err(format!("`{v}`: flotilla has no {base}")),
            _ => Err(format!(
                "`{v}` is not an action (none, exit, poweroff, reboot, halt, each with \
                 -force; poweroff, reboot, halt with -immediate)"
            )),
        }
    }
}

/// A command to run: the program and its arguments. No shell is involved.
///
/// The flags are systemd's prefixes of command lines (`-`, `@`, `+`, `!`,
/// and `:` turning off [`Command::expand_env`]); a YAML command has none.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Command {
    /// `argv[0]` is the program (a path, or a name looked up in `PATH`).
    /// Shared: the planner hands the same words to every spawn of the
    /// command (a count, not a copy of every word).
    pub argv: Words,
    /// A failure of this command is ignored (systemd's leading `-`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignore_failure: bool,
    /// `$NAME` (a word of its own: split at blanks) and `${NAME}` (inside
    /// a word: as it is) are replaced from the process's environment when
    /// it starts, and `$$` by `$`: a systemd command line without `:`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expand_env: bool,
    /// `argv[1]` is the `argv[0]` the program sees, and `argv[0]` only its
    /// path (systemd's `@`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub argv0: bool,
    /// What of the unit's context the command runs without (systemd's `+`
    /// and `!`).
    #[serde(default, skip_serializing_if = "Privileges::is_unit")]
    pub privileges: Privileges,
}

/// When a service is over (systemd's `ExitType=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExitType {
    /// When its main process exits.
    #[default]
    Main,
    /// When its main process has exited and its cgroup is empty: the
    /// result is still the main process's exit.
    Cgroup,
}

/// When a transient unit leaves the unit set by itself (systemd's
/// `CollectMode=`): once it is inactive (ran to its end, skipped by a
/// condition), or also once it failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CollectMode {
    /// Inactive (systemd's default; a failed unit stays until
    /// `reset-failed`).
    Inactive,
    /// Inactive or failed (`systemd-run -G`).
    InactiveOrFailed,
}

/// Which processes of a service may send notify messages (systemd's
/// `NotifyAccess=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NotifyAccess {
    /// None: the service gets no notify socket.
    None,
    /// Its main process.
    Main,
    /// Its main process and the commands the init runs for it.
    Exec,
    /// Every process of the service.
    All,
}

impl ExitType {
    /// The default.
    pub fn is_main(&self) -> bool {
        *self == ExitType::Main
    }
}

/// What of its unit's context a command runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Privileges {
    /// All of it (no prefix).
    #[default]
    Unit,
    /// Everything but the change of user and group (`!`): it runs
    /// as the init's user, sandboxed.
    NoUserChange,
    /// Only its cgroup (`+`): no change of user or group, no sandbox, no
    /// resource limits of the process.
    Full,
}

impl Privileges {
    /// The default: the unit's whole context.
    pub fn is_unit(&self) -> bool {
        *self == Privileges::Unit
    }
}

impl Command {
    /// A command from its words, failures not ignored.
    pub fn new<I, S>(argv: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Command {
            argv: Words::new(argv),
            ignore_failure: false,
            expand_env: false,
            argv0: false,
            privileges: Privileges::Unit,
        }
    }

    /// Whether a word mentions `$MAINPID` (or `${MAINPID}`) that the
    /// planner replaces: a command that expands its environment gets it
    /// from there, with the other variables.
    pub fn mentions_mainpid(&self) -> bool {
        !self.expand_env && self.argv.iter().any(|w| w.contains("MAINPID"))
    }

    /// The words with every `$MAINPID` (and `${MAINPID}`) replaced by `pid`.
    pub fn with_mainpid(&self, pid: Option<i32>) -> Words {
        let p = pid.map(|p| p.to_string()).unwrap_or_default();
        self.argv
            .iter()
            .map(|w| w.replace("${MAINPID}", &p).replace("$MAINPID", &p))
            .collect()
    }
}

/// A spec's list of target names (`depends-on`, `after`, …): one word
/// wide in the spec and nothing allocated while empty, as most of a
/// unit's lists are (a `Vec` is three words in every spec, used or not).
pub type Names = thin_vec::ThinVec<String>;

/// A list of commands (`exec-start-pre`, `exec-stop-post`, …): one word in
/// the spec, nothing allocated while empty, as most are.
pub type Commands = thin_vec::ThinVec<Command>;

/// One validated unit.
///
/// Its JSON form (the control protocol's `transient-apply`) has every field
/// at the top level, in this order, the fields of [`ExtraFields`] last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitSpec {
    /// The unit's name, `[A-Za-z0-9:_.@-]+`.
    pub name: String,
    /// Free text for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// How the unit runs.
    #[serde(rename = "type")]
    pub kind: UnitType,
    /// Targets this unit provides (at least one; the unit's name by default).
    pub provides: Names,
    /// Among the providers of an `alternative` target, the higher runs
    /// (ties by name) unless the config chooses one (docs/contract.md §3b).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub preference: i32,
    /// Hard dependencies: must be active to start and to stay up.
    #[serde(default)]
    pub depends_on: Names,
    /// Milestone dependencies: must be active to start.
    #[serde(default)]
    pub depends_ms: Names,
    /// Ordering only: must be active or failed before this starts.
    #[serde(default)]
    pub waits_for: Names,
    /// Pulled in, no ordering: started with this one; what becomes of
    /// them changes nothing here (systemd's `Wants=` without `After=`).
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub wants: Names,
    /// Pulled in, no ordering: started with this one, which is stopped
    /// while one of them is failed, blocked or stopping (systemd's
    /// `Requires=` without `After=`).
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub requires: Names,
    /// Commands run in order before `exec_start`; one failing (not ignored) fails the start.
    #[serde(default)]
    pub exec_start_pre: Commands,
    /// The main command (`None` only for `virtual`).
    #[serde(default)]
    pub exec_start: Option<Command>,
    /// How to stop; `None` sends `kill_signal` to the process group.
    #[serde(default)]
    pub exec_stop: Option<Command>,
    /// How long `starting` may last.
    pub start_timeout: Duration,
    /// How long `stopping` may last before SIGKILL.
    pub stop_timeout: Duration,
    /// When to restart.
    pub restart: RestartPolicy,
    /// The first restart delay; it doubles on each failed attempt.
    pub restart_delay: Duration,
    /// The largest restart delay.
    pub restart_max_delay: Duration,
    /// What a stop sends when there is no `exec_stop`.
    pub kill_signal: Signal,
    /// Ordering only: when both are required, start after these targets'
    /// providers are settled (and stop before them).
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub after: Names,
    /// Ordering only: the other side of `after`.
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub before: Names,
    /// Units that cannot run together with this one.
    #[serde(default, skip_serializing_if = "Names::is_empty")]
    pub conflicts: Names,
    /// Whether the unit stays `exited` with what its processes left
    /// running after its main process exits by itself with success
    /// (`RemainAfterExit=`): `None` for its type's default, which
    /// [`UnitSpec::remain_after_exit`] says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remain_after_exit: Option<bool>,
    /// The fields that are seldom set (user, group, working directory,
    /// environment, the service context, exit statuses, the watchdog, the
    /// rarer commands and lists, a type's own settings): out of line, and
    /// not allocated at all when every one of them is unset, as for most
    /// units.
    #[serde(flatten)]
    pub extras: Extras,
}

/// `preference` is left out of a spec's JSON form when it is the default.
fn is_zero(n: &i32) -> bool {
    *n == 0
}

/// Defaults of docs/contract.md §3.
pub mod defaults {
    use std::time::Duration;
    /// `start-timeout`.
    pub const START_TIMEOUT: Duration = Duration::from_secs(90);
    /// systemd's `DefaultStartLimitIntervalSec=`, for a unit that sets
    /// only `start-limit-burst`.
    pub const START_LIMIT_INTERVAL: Duration = Duration::from_secs(10);
    /// systemd's `DefaultStartLimitBurst=`, for a unit that sets only
    /// `start-limit-interval-sec`.
    pub const START_LIMIT_BURST: u32 = 5;
    /// `stop-timeout`.
    pub const STOP_TIMEOUT: Duration = Duration::from_secs(10);
    /// `restart-delay`.
    pub const RESTART_DELAY: Duration = Duration::from_secs(1);
    /// `restart-max-delay`.
    pub const RESTART_MAX_DELAY: Duration = Duration::from_secs(60);
    /// After this long active, the restart count and delay start over.
    pub const RESTART_RESET_AFTER: Duration = Duration::from_secs(60);
}

impl UnitSpec {
    /// A trigger's settings (a timer's, socket's or path unit's), which
    /// live in the extras: what reads them asks here.
    pub fn activation(&self) -> Option<&crate::trigger::Activation> {
        self.extras.activation.as_deref()
    }

    /// A timer's settings, if the unit has them.
    pub fn timer(&self) -> Option<&crate::timer::TimerSettings> {
        self.activation()
            .and_then(crate::trigger::Activation::timer)
    }

    /// A socket unit's settings, if the unit has them.
    pub fn socket(&self) -> Option<&crate::trigger::SocketSettings> {
        self.activation()
            .and_then(crate::trigger::Activation::socket)
    }

    /// A path unit's settings, if the unit has them.
    pub fn path(&self) -> Option<&crate::trigger::PathSettings> {
        self.activation().and_then(crate::trigger::Activation::path)
    }

    /// The watchdog's interval: `None` when there is none (no
    /// `watchdog-sec`, or 0 or infinity, which turn it off as in systemd).
    pub fn watchdog(&self) -> Option<Duration> {
        self.extras
            .watchdog
            .filter(|d| !d.is_zero() && *d != crate::timespan::TIMESPAN_INFINITY)
    }

    /// The runtime limit (`runtime-max-sec`, systemd's `RuntimeMaxSec=`)
    /// and the most its random part adds (`runtime-randomized-extra-sec`):
    /// `None` without a limit (none given, or infinity, the default). 0 is
    /// a limit, as in systemd: the unit is stopped as soon as it runs.
    pub fn runtime_max(&self) -> Option<(Duration, Duration)> {
        let max = self
            .extras
            .runtime_max
            .filter(|d| *d < crate::timespan::TIMESPAN_INFINITY)?;
        let extra = self.extras.runtime_randomized_extra.unwrap_or_default();
        Some((max, extra))
    }

    /// A unit of `kind` named `name` with every default of docs/contract.md §3:
    /// it provides its own name, depends on nothing, has no command.
    pub fn new(name: impl Into<String>, kind: UnitType) -> UnitSpec {
        let name = name.into();
        UnitSpec {
            provides: thin_vec::thin_vec![name.clone()],
            preference: 0,
            name,
            description: None,
            kind,
            depends_on: Names::new(),
            depends_ms: Names::new(),
            waits_for: Names::new(),
            wants: Names::new(),
            requires: Names::new(),
            exec_start_pre: Commands::new(),
            exec_start: None,
            exec_stop: None,
            start_timeout: defaults::START_TIMEOUT,
            stop_timeout: defaults::STOP_TIMEOUT,
            restart: kind.row().default_restart,
            restart_delay: defaults::RESTART_DELAY,
            restart_max_delay: defaults::RESTART_MAX_DELAY,
            kill_signal: Signal::TERM,
            remain_after_exit: None,
            after: Names::new(),
            before: Names::new(),
            conflicts: Names::new(),
            extras: Extras::default(),
        }
    }

    /// Whether the unit's start is done once its main process is forked,
    /// not once its program runs (`started-at-fork`, systemd's
    /// `Type=simple`): the planner and the init ask here.
    pub fn started_at_fork(&self) -> bool {
        self.kind.row().ready == Ready::Spawned && self.extras.started_at_fork == Some(true)
    }

    /// Whether the unit stays `exited`, with what its processes left
    /// running, after its main process exits by itself with success:
    /// `remain-after-exit` as given, else yes for a `oneshot` (what its
    /// `exited` state has always meant) and no for the other types.
    pub fn remain_after_exit(&self) -> bool {
        self.remain_after_exit
            .unwrap_or(self.kind.row().remains_after_exit)
    }

    /// How many starts the unit may make in how long, if it is limited:
    /// only when it sets `start-limit-interval-sec` or `start-limit-burst`
    /// (flotilla backs restarts off instead of limiting them by default),
    /// the other taking systemd's default (5 in 10 s); either at zero
    /// means no limit.
    pub fn start_limit(&self) -> Option<(Duration, u32)> {
        let (interval, burst) = (
            self.extras.start_limit_interval,
            self.extras.start_limit_burst,
        );
        if interval.is_none() && burst.is_none() {
            return None;
        }
        let interval = interval.unwrap_or(defaults::START_LIMIT_INTERVAL);
        let burst = burst.unwrap_or(defaults::START_LIMIT_BURST);
        (!interval.is_zero() && burst > 0).then_some((interval, burst))
    }

    /// The system action the unit's new `state` sets off: `success-action`
    /// once it has done its work (`exited`; a unit with no process: up),
    /// `failure-action` once it failed for good (`failed`, no restart
    /// pending).
    pub fn action_on(
        &self,
        state: crate::state::UnitState,
        restarting: bool,
    ) -> Option<UnitAction> {
        use crate::state::UnitState;
        match state {
            UnitState::Exited => self.extras.success_action,
            UnitState::Running if self.kind.row().runs == Runs::Nothing => {
                self.extras.success_action
            }
            UnitState::Failed if !restarting => self.extras.failure_action,
            _ => None,
        }
    }

    /// Whether `status` counts as success for the unit's commands: status
    /// 0, or one of `success-exit-status`.
    pub fn success(&self, status: crate::exits::ExitStatus) -> bool {
        status.success() || self.extras.success_exit_status.contains(status)
    }
}

#[cfg(test)]
mod tests;
