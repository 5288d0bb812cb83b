//! The keys of a unit, in one table ([`KEYS`]): for each, its name in a
//! YAML unit file, the systemd keys that set the same field, the unit types
//! it applies to, and the field of [`UnitSpec`] it sets ([`Key::slot`]),
//! whose kind ([`Slot`]) says how a value is read and checked. The YAML
//! loader, the systemd translator and the validation of transient units
//! ([`validate()`]) all go through it, with the checks of [`check`].
//!
//! A new key is one entry here (its name: the systemd key in lower kebab
//! case, docs/contract.md §3a), its field in `spec/mod.rs` (or, for a key
//! most units leave unset, in `spec/extra.rs` and `spec/boxed.rs`'s
//! `NO_EXTRAS`), and what it does (in the planner or the init). A new kind
//! of value is a [`Slot`] variant, read in `load/read.rs` (YAML) and the
//! `flotilla-systemd` crate's `translate/` (INI) and checked in
//! `validate.rs`. A new unit type is a [`UnitType`] variant, the slices of
//! types below that include it, and its rules in [`RULES`].

use crate::condition::Condition;
use crate::context;
use crate::exits::ExitSet;
use crate::spec::Names;
pub use crate::spec::TargetList;
use crate::spec::{Command, RestartPolicy, Signal, UnitAction, UnitSpec, UnitType};
use crate::trigger::Activation;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub mod check;
mod conditions;
mod trigger;
mod trigger_needs;
mod validate;

pub use trigger_needs::trigger_problems;
pub use validate::{validate, validate_set, Problem, SetProblem, What};

/// One key of a unit.
#[derive(Clone, Copy)]
pub struct Key {
    /// Its name in a YAML unit file.
    pub name: &'static str,
    /// The systemd keys (section, name) that set the same field.
    pub systemd: &'static [(&'static str, &'static str)],
    /// The unit types it applies to.
    pub applies_to: &'static [UnitType],
    /// The field it sets, by kind.
    pub slot: fn(&mut UnitSpec) -> Slot<'_>,
}

impl Key {
    /// Whether the key applies to a unit of type `kind`.
    pub fn applies(&self, kind: UnitType) -> bool {
        self.applies_to.contains(&kind)
    }
}

/// The field a key sets, by the kind of its value: the kind says how a
/// value is read (from YAML or systemd's INI) and checked.
pub enum Slot<'a> {
    /// The unit's name, `[A-Za-z0-9:_.@-]+`.
    Name(&'a mut String),
    /// The unit's type.
    Type(&'a mut UnitType),
    /// Free text.
    Text(&'a mut Option<String>),
    /// Target names, and which of the unit's lists they are (their
    /// positions are kept in [`crate::spec::Origin`]).
    Targets(&'a mut Names, TargetList),
    /// One command.
    Command(&'a mut Option<Command>),
    /// Commands run in order; a failure may be ignored.
    Commands(&'a mut crate::spec::Commands),
    /// A duration, if given.
    OptionalDuration(&'a mut Option<Duration>),
    /// A whole number from 0 to 2^32 - 1, if given.
    Count(&'a mut Option<u32>),
    /// A duration.
    Duration(&'a mut Duration),
    /// A duration longer than 0.
    Timeout(&'a mut Duration),
    /// A regular expression.
    Regex(&'a mut Option<String>),
    /// A D-Bus well-known name ([`check::bus_name`]).
    BusName(&'a mut Option<String>),
    /// An absolute path.
    Path(&'a mut Option<PathBuf>),
    /// A restart policy.
    Restart(&'a mut RestartPolicy),
    /// A signal.
    Signal(&'a mut Signal),
    /// A signal, if given.
    OptionalSignal(&'a mut Option<Signal>),
    /// A whole number (negative allowed).
    Integer(&'a mut i32),
    /// A user or group, by name or number.
    Account(&'a mut Option<String>),
    /// Environment variables.
    Environment(&'a mut BTreeMap<String, String>),
    /// Files of `NAME=value` lines, each with whether it may be missing.
    EnvironmentFiles(&'a mut Vec<(PathBuf, bool)>),
    /// A boolean, if given.
    Bool(&'a mut Option<bool>),
    /// Exit codes and signals ([`ExitSet`]).
    ExitSet(&'a mut ExitSet),
    /// A system action ([`UnitAction::parse`]), if given.
    Action(&'a mut Option<UnitAction>),
    /// A trigger's setting: the systemd key (of `[Timer]`, `[Socket]` or
    /// `[Path]`), its value read in systemd's syntax by
    /// [`crate::trigger::set`].
    Trigger(&'a mut Option<Box<Activation>>, &'static str),
    /// A condition (`false`) or assertion (`true`) of a kind of
    /// [`crate::condition::CONDITION_KINDS`], its value read in systemd's
    /// syntax by [`crate::condition::parse_value`].
    Condition(&'a mut Vec<Condition>, &'static str, bool),
}

/// Every unit type.
pub const ALL: &[UnitType] = &UnitType::ALL;

/// The trigger types.
pub const TRIGGERS: &[UnitType] = &[UnitType::Timer, UnitType::Socket, UnitType::Path];

/// The types that run a process (all but `virtual` and the triggers).
pub const PROCESS: &[UnitType] = &[
    UnitType::ForegroundNotified,
    UnitType::ForegroundSupervised,
    UnitType::BackgroundPidfile,
    UnitType::BackgroundScripted,
    UnitType::Oneshot,
    UnitType::Scope,
];

/// The types whose units run commands with a service context: the
/// process types, and sockets, whose `ExecStartPre=`, `ExecStartPost=`
/// and `ExecStopPost=` run around their listening (systemd.socket(5)),
/// with the directories and the rest of the context their `[Socket]`
/// section gives.
pub const COMMANDS: &[UnitType] = &[
    UnitType::ForegroundNotified,
    UnitType::ForegroundSupervised,
    UnitType::BackgroundPidfile,
    UnitType::BackgroundScripted,
    UnitType::Oneshot,
    UnitType::Scope,
    UnitType::Socket,
];

pub use crate::unit_type::SPAWNING;

/// `foreground-supervised`: readiness from the process's output or a delay.
const SUPERVISED: &[UnitType] = &[UnitType::ForegroundSupervised];

/// `background-pidfile`: a forking daemon.
const PIDFILE: &[UnitType] = &[UnitType::BackgroundPidfile];

/// Every key, in the order the docs list them: the keys below, then the
/// trigger keys (`trigger.rs`), then the conditions (`conditions.rs`).
/// `unit` has the alias `name`.
pub const KEYS: &[Key] = &ALL_KEYS;

const ALL_KEYS: [Key; BASE_KEYS.len()
    + trigger::TRIGGER_KEYS.len()
    + conditions::CONDITION_KEYS.len()] = concat([
    &BASE_KEYS,
    &trigger::TRIGGER_KEYS,
    &conditions::CONDITION_KEYS,
]);

/// The lists of keys one after the other.
const fn concat<const N: usize>(parts: [&[Key]; 3]) -> [Key; N] {
    let mut out = [parts[0][0]; N];
    let mut at = 0;
    let mut p = 0;
    while p < parts.len() {
        let mut j = 0;
        while j < parts[p].len() {
            out[at] = parts[p][j];
            at += 1;
            j += 1;
        }
        p += 1;
    }
    out
}

/// The keys of every kind of unit, and of processes.
const BASE_KEYS: [Key; 72] = [
    Key {
        name: "unit",
        systemd: &[],
        applies_to: ALL,
        slot: |s| Slot::Name(&mut s.name),
    },
    Key {
        name: "description",
        systemd: &[("Unit", "Description")],
        applies_to: ALL,
        slot: |s| Slot::Text(&mut s.description),
    },
    Key {
        name: "type",
        systemd: &[("Service", "Type")],
        applies_to: ALL,
        slot: |s| Slot::Type(&mut s.kind),
    },
    Key {
        name: "provides",
        systemd: &[],
        applies_to: ALL,
        slot: |s| Slot::Targets(&mut s.provides, TargetList::Provides),
    },
    Key {
        name: "depends-on",
        systemd: &[("Unit", "BindsTo")],
        applies_to: ALL,
        slot: |s| Slot::Targets(&mut s.depends_on, TargetList::DependsOn),
    },
    Key {
        name: "depends-ms",
        systemd: &[],
        applies_to: ALL,
        slot: |s| Slot::Targets(&mut s.depends_ms, TargetList::DependsMs),
    },
    Key {
        name: "waits-for",
        systemd: &[],
        applies_to: ALL,
        slot: |s| Slot::Targets(&mut s.waits_for, TargetList::WaitsFor),
    },
    Key {
        name: "wants",
        systemd: &[("Unit", "Wants")],
        applies_to: ALL,
        slot: |s| Slot::Targets(&mut s.wants, TargetList::Wants),
    },
    Key {
        name: "requires",
        systemd: &[("Unit", "Requires")],
        applies_to: ALL,
        slot: |s| Slot::Targets(&mut s.requires, TargetList::Requires),
    },
    Key {
        name: "requisite",
        systemd: &[("Unit", "Requisite")],
        applies_to: ALL,
        slot: |s| Slot::Targets(&mut s.extras.requisite, TargetList::Requisite),
    },
    Key {
        name: "part-of",
        systemd: &[("Unit", "PartOf")],
        applies_to: ALL,
        slot: |s| Slot::Targets(&mut s.extras.part_of, TargetList::PartOf),
    },
    Key {
        name: "upholds",
        systemd: &[("Unit", "Upholds")],
        applies_to: ALL,
        slot: |s| Slot::Targets(&mut s.extras.upholds, TargetList::Upholds),
    },
    Key {
        name: "reload-propagated-from",
        systemd: &[("Unit", "ReloadPropagatedFrom")],
        applies_to: ALL,
        slot: |s| {
            Slot::Targets(
                &mut s.extras.reload_propagated_from,
                TargetList::ReloadPropagatedFrom,
            )
        },
    },
    Key {
        name: "propagates-reload-to",
        systemd: &[("Unit", "PropagatesReloadTo")],
        applies_to: ALL,
        slot: |s| {
            Slot::Targets(
                &mut s.extras.propagates_reload_to,
                TargetList::PropagatesReloadTo,
            )
        },
    },
    Key {
        name: "stop-propagated-from",
        systemd: &[("Unit", "StopPropagatedFrom")],
        applies_to: ALL,
        slot: |s| {
            Slot::Targets(
                &mut s.extras.stop_propagated_from,
                TargetList::StopPropagatedFrom,
            )
        },
    },
    Key {
        name: "propagates-stop-to",
        systemd: &[("Unit", "PropagatesStopTo")],
        applies_to: ALL,
        slot: |s| {
            Slot::Targets(
                &mut s.extras.propagates_stop_to,
                TargetList::PropagatesStopTo,
            )
        },
    },
    Key {
        name: "preference",
        systemd: &[],
        applies_to: ALL,
        slot: |s| Slot::Integer(&mut s.preference),
    },
    Key {
        name: "after",
        systemd: &[("Unit", "After")],
        applies_to: ALL,
        slot: |s| Slot::Targets(&mut s.after, TargetList::After),
    },
    Key {
        name: "before",
        systemd: &[("Unit", "Before")],
        applies_to: ALL,
        slot: |s| Slot::Targets(&mut s.before, TargetList::Before),
    },
    Key {
        name: "conflicts",
        systemd: &[("Unit", "Conflicts")],
        applies_to: ALL,
        slot: |s| Slot::Targets(&mut s.conflicts, TargetList::Conflicts),
    },
    Key {
        name: "triggers",
        systemd: &[("Timer", "Unit"), ("Path", "Unit"), ("Socket", "Service")],
        applies_to: TRIGGERS,
        slot: |s| Slot::Targets(&mut s.extras.triggers, TargetList::Triggers),
    },
    Key {
        name: "success-action",
        systemd: &[("Unit", "SuccessAction")],
        applies_to: ALL,
        slot: |s| Slot::Action(&mut s.extras.success_action),
    },
    Key {
        name: "failure-action",
        systemd: &[("Unit", "FailureAction")],
        applies_to: ALL,
        slot: |s| Slot::Action(&mut s.extras.failure_action),
    },
    Key {
        name: "refuse-manual-start",
        systemd: &[("Unit", "RefuseManualStart")],
        applies_to: ALL,
        slot: |s| Slot::Bool(&mut s.extras.refuse_manual_start),
    },
    Key {
        name: "refuse-manual-stop",
        systemd: &[("Unit", "RefuseManualStop")],
        applies_to: ALL,
        slot: |s| Slot::Bool(&mut s.extras.refuse_manual_stop),
    },
    Key {
        name: "ignore-on-isolate",
        systemd: &[("Unit", "IgnoreOnIsolate")],
        applies_to: ALL,
        slot: |s| Slot::Bool(&mut s.extras.ignore_on_isolate),
    },
    Key {
        name: "allow-isolate",
        systemd: &[("Unit", "AllowIsolate")],
        applies_to: ALL,
        slot: |s| Slot::Bool(&mut s.extras.allow_isolate),
    },
    Key {
        name: "start-limit-interval-sec",
        systemd: &[
            ("Unit", "StartLimitIntervalSec"),
            ("Service", "StartLimitInterval"),
        ],
        applies_to: ALL,
        slot: |s| Slot::OptionalDuration(&mut s.extras.start_limit_interval),
    },
    Key {
        name: "start-limit-burst",
        systemd: &[("Unit", "StartLimitBurst"), ("Service", "StartLimitBurst")],
        applies_to: ALL,
        slot: |s| Slot::Count(&mut s.extras.start_limit_burst),
    },
    Key {
        name: "on-failure",
        systemd: &[("Unit", "OnFailure")],
        applies_to: ALL,
        slot: |s| Slot::Targets(&mut s.extras.on_failure, TargetList::OnFailure),
    },
    Key {
        name: "on-success",
        systemd: &[("Unit", "OnSuccess")],
        applies_to: ALL,
        slot: |s| Slot::Targets(&mut s.extras.on_success, TargetList::OnSuccess),
    },
    Key {
        name: "sockets",
        systemd: &[("Service", "Sockets")],
        applies_to: PROCESS,
        slot: |s| Slot::Targets(&mut s.extras.sockets, TargetList::Sockets),
    },
    Key {
        // `[Install] WantedBy=` is read by `initctl enable` itself.
        name: "wanted-by",
        systemd: &[],
        applies_to: ALL,
        slot: |s| Slot::Targets(&mut s.extras.wanted_by, TargetList::WantedBy),
    },
    Key {
        name: "exec-condition",
        systemd: &[("Service", "ExecCondition")],
        applies_to: PROCESS,
        slot: |s| Slot::Commands(&mut s.extras.exec_condition),
    },
    Key {
        name: "exec-start-pre",
        systemd: &[("Service", "ExecStartPre"), ("Socket", "ExecStartPre")],
        applies_to: COMMANDS,
        slot: |s| Slot::Commands(&mut s.exec_start_pre),
    },
    Key {
        name: "exec-start",
        systemd: &[("Service", "ExecStart")],
        applies_to: PROCESS,
        slot: |s| Slot::Command(&mut s.exec_start),
    },
    Key {
        name: "exec-stop",
        systemd: &[("Service", "ExecStop")],
        applies_to: PROCESS,
        slot: |s| Slot::Command(&mut s.exec_stop),
    },
    Key {
        name: "exec-start-post",
        systemd: &[("Service", "ExecStartPost"), ("Socket", "ExecStartPost")],
        applies_to: COMMANDS,
        slot: |s| Slot::Commands(&mut s.extras.exec_start_post),
    },
    Key {
        name: "exec-stop-post",
        systemd: &[("Service", "ExecStopPost"), ("Socket", "ExecStopPost")],
        applies_to: COMMANDS,
        slot: |s| Slot::Commands(&mut s.extras.exec_stop_post),
    },
    Key {
        name: "exec-reload",
        systemd: &[("Service", "ExecReload")],
        applies_to: PROCESS,
        slot: |s| Slot::Command(&mut s.extras.exec_reload),
    },
    Key {
        name: "ready-wait",
        systemd: &[],
        applies_to: SUPERVISED,
        slot: |s| Slot::OptionalDuration(&mut s.extras.ready_wait),
    },
    Key {
        name: "ready-grep",
        systemd: &[],
        applies_to: SUPERVISED,
        slot: |s| Slot::Regex(&mut s.extras.ready_grep),
    },
    Key {
        name: "ready-bus-name",
        // Read from `BusName=` only with `Type=dbus` (`rules::OWN`).
        systemd: &[],
        applies_to: SUPERVISED,
        slot: |s| Slot::BusName(&mut s.extras.ready_bus_name),
    },
    Key {
        name: "pidfile",
        systemd: &[("Service", "PIDFile")],
        applies_to: PIDFILE,
        slot: |s| Slot::Path(&mut s.extras.pidfile),
    },
    Key {
        name: "start-timeout",
        systemd: &[("Service", "TimeoutStartSec"), ("Service", "TimeoutSec")],
        applies_to: PROCESS,
        slot: |s| Slot::Timeout(&mut s.start_timeout),
    },
    Key {
        name: "stop-timeout",
        systemd: &[("Service", "TimeoutStopSec"), ("Service", "TimeoutSec")],
        applies_to: PROCESS,
        slot: |s| Slot::Timeout(&mut s.stop_timeout),
    },
    Key {
        name: "restart",
        systemd: &[("Service", "Restart")],
        applies_to: PROCESS,
        slot: |s| Slot::Restart(&mut s.restart),
    },
    Key {
        name: "restart-delay",
        systemd: &[("Service", "RestartSec")],
        applies_to: PROCESS,
        slot: |s| Slot::Duration(&mut s.restart_delay),
    },
    Key {
        name: "restart-max-delay",
        systemd: &[],
        applies_to: PROCESS,
        slot: |s| Slot::Duration(&mut s.restart_max_delay),
    },
    Key {
        name: "kill-signal",
        systemd: &[("Service", "KillSignal")],
        applies_to: PROCESS,
        slot: |s| Slot::Signal(&mut s.kill_signal),
    },
    Key {
        name: "restart-kill-signal",
        systemd: &[("Service", "RestartKillSignal")],
        applies_to: PROCESS,
        slot: |s| Slot::OptionalSignal(&mut s.extras.restart_kill_signal),
    },
    Key {
        name: "guess-main-pid",
        systemd: &[("Service", "GuessMainPID")],
        applies_to: PROCESS,
        slot: |s| Slot::Bool(&mut s.extras.guess_main_pid),
    },
    Key {
        name: "remain-after-exit",
        systemd: &[("Service", "RemainAfterExit")],
        applies_to: PROCESS,
        slot: |s| Slot::Bool(&mut s.remain_after_exit),
    },
    Key {
        name: "success-exit-status",
        systemd: &[("Service", "SuccessExitStatus")],
        applies_to: PROCESS,
        slot: |s| Slot::ExitSet(&mut s.extras.success_exit_status),
    },
    Key {
        name: "restart-prevent-exit-status",
        systemd: &[("Service", "RestartPreventExitStatus")],
        applies_to: PROCESS,
        slot: |s| Slot::ExitSet(&mut s.extras.restart_prevent_exit_status),
    },
    Key {
        name: "restart-force-exit-status",
        systemd: &[("Service", "RestartForceExitStatus")],
        applies_to: PROCESS,
        slot: |s| Slot::ExitSet(&mut s.extras.restart_force_exit_status),
    },
    Key {
        name: "watchdog-sec",
        systemd: &[("Service", "WatchdogSec")],
        applies_to: PROCESS,
        slot: |s| Slot::OptionalDuration(&mut s.extras.watchdog),
    },
    Key {
        name: "runtime-max-sec",
        systemd: &[("Service", "RuntimeMaxSec"), ("Scope", "RuntimeMaxSec")],
        applies_to: PROCESS,
        slot: |s| Slot::OptionalDuration(&mut s.extras.runtime_max),
    },
    Key {
        name: "runtime-randomized-extra-sec",
        systemd: &[
            ("Service", "RuntimeRandomizedExtraSec"),
            ("Scope", "RuntimeRandomizedExtraSec"),
        ],
        applies_to: PROCESS,
        slot: |s| Slot::OptionalDuration(&mut s.extras.runtime_randomized_extra),
    },
    Key {
        name: "user",
        systemd: &[("Service", "User"), ("Scope", "User")],
        applies_to: PROCESS,
        slot: |s| Slot::Account(&mut s.extras.user),
    },
    Key {
        name: "group",
        systemd: &[("Service", "Group")],
        applies_to: PROCESS,
        slot: |s| Slot::Account(&mut s.extras.group),
    },
    Key {
        name: "working-directory",
        systemd: &[("Service", "WorkingDirectory")],
        applies_to: PROCESS,
        slot: |s| Slot::Path(&mut s.extras.working_directory),
    },
    Key {
        // systemd's `WorkingDirectory=-PATH`: the translator's own rule.
        name: "working-directory-optional",
        systemd: &[],
        applies_to: PROCESS,
        slot: |s| Slot::Bool(&mut s.extras.working_directory_optional),
    },
    Key {
        name: "non-blocking",
        systemd: &[("Service", "NonBlocking")],
        applies_to: PROCESS,
        slot: |s| Slot::Bool(&mut s.extras.non_blocking),
    },
    Key {
        // systemd's `Type=simple` (and its default type) against
        // `Type=exec`: the translator's own rule.
        name: "started-at-fork",
        systemd: &[],
        applies_to: PROCESS,
        slot: |s| Slot::Bool(&mut s.extras.started_at_fork),
    },
    Key {
        // systemd's judgement of a daemon's end by a signal it has no
        // handler for: the translator's own rule.
        name: "daemon-clean-signals",
        systemd: &[],
        applies_to: PROCESS,
        slot: |s| Slot::Bool(&mut s.extras.daemon_clean_signals),
    },
    Key {
        name: "dynamic-user",
        systemd: &[("Service", "DynamicUser")],
        applies_to: PROCESS,
        slot: |s| Slot::Bool(&mut s.extras.dynamic_user),
    },
    Key {
        name: "environment",
        systemd: &[("Service", "Environment")],
        applies_to: PROCESS,
        slot: |s| Slot::Environment(&mut s.extras.environment),
    },
    Key {
        name: "environment-file",
        systemd: &[("Service", "EnvironmentFile")],
        applies_to: PROCESS,
        slot: |s| Slot::EnvironmentFiles(&mut s.extras.environment_files),
    },
    Key {
        name: "log-rate-limit-interval-sec",
        systemd: &[("Service", "LogRateLimitIntervalSec")],
        applies_to: PROCESS,
        slot: |s| Slot::OptionalDuration(&mut s.extras.log_rate_limit_interval),
    },
    Key {
        name: "log-rate-limit-burst",
        systemd: &[("Service", "LogRateLimitBurst")],
        applies_to: PROCESS,
        slot: |s| Slot::Count(&mut s.extras.log_rate_limit_burst),
    },
    Key {
        name: "file-descriptor-store-max",
        systemd: &[("Service", "FileDescriptorStoreMax")],
        applies_to: SPAWNING,
        slot: |s| Slot::Count(&mut s.extras.file_descriptor_store_max),
    },
];

/// The alias of `unit`.
pub const NAME_ALIAS: &str = "name";

/// The keys of the service context ([`context::Key`], with their own
/// table of systemd and YAML names in `context/keys.rs`) are keys of a
/// unit too: they apply to the types that run commands ([`COMMANDS`]: a
/// socket's are its commands' context), and each reader
/// hands every value given to [`context::ServiceContext::set`] (once per
/// assignment, in order; a YAML list once per element) on
/// `spec.extras.context`. This is the one place that says so; the YAML
/// key of each is its systemd key in lower kebab case, as for the keys of
/// [`KEYS`].
pub const CONTEXT_APPLIES_TO: &[UnitType] = COMMANDS;

/// The context key named `name` in a YAML unit file.
pub fn context_key(name: &str) -> Option<context::Key> {
    context::Key::from_yaml(name)
}

/// The context key that systemd's `[section] name` sets (the `[Service]`
/// section: the keys of `systemd.exec(5)` and
/// `systemd.resource-control(5)` that flotilla reads).
pub fn systemd_context_key(section: &str, name: &str) -> Option<context::Key> {
    (section == "Service")
        .then(|| context::Key::from_systemd(name))
        .flatten()
}

/// Every key a YAML unit file may have, in the order the docs list them:
/// the names of [`KEYS`] (`name`, the alias of `unit`, after `unit`),
/// then the context keys.
pub fn yaml_names() -> &'static [&'static str] {
    static NAMES: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
        let mut v: Vec<&'static str> = Vec::with_capacity(KEYS.len() + 80);
        for (i, k) in KEYS.iter().enumerate() {
            v.push(k.name);
            if i == 0 {
                v.push(NAME_ALIAS);
            }
        }
        v.extend(context::Key::all().map(context::Key::yaml_name));
        v
    });
    &NAMES
}

/// The key named `name` (or the alias of `unit`).
pub fn key(name: &str) -> Option<&'static Key> {
    let name = if name == NAME_ALIAS { "unit" } else { name };
    KEYS.iter().find(|k| k.name == name)
}

/// The key that systemd's `[section] name` sets, if it is a twin.
pub fn systemd_twin(section: &str, name: &str) -> Option<&'static Key> {
    KEYS.iter()
        .find(|k| k.systemd.iter().any(|&(s, n)| s == section && n == name))
}

/// What a unit of some types must have, or must not combine.
pub enum Rule {
    /// Units of these types need this key, for this reason.
    Needs(&'static [UnitType], &'static str, &'static str),
    /// These two keys cannot be used together.
    Exclusive(&'static str, &'static str),
    /// A unit of this type cannot have this restart policy.
    NoRestart(UnitType, RestartPolicy),
}

/// The rules across keys, by type.
pub const RULES: &[Rule] = &[
    Rule::Needs(SPAWNING, "exec-start", "a command to run"),
    Rule::Needs(TRIGGERS, "triggers", "the unit it starts"),
    Rule::Needs(PIDFILE, "pidfile", "where the daemon writes its PID"),
    Rule::Exclusive("ready-wait", "ready-grep"),
    Rule::Exclusive("ready-wait", "ready-bus-name"),
    Rule::Exclusive("ready-grep", "ready-bus-name"),
    // It would run again every time it finishes.
    Rule::NoRestart(UnitType::Oneshot, RestartPolicy::Always),
    Rule::NoRestart(UnitType::Oneshot, RestartPolicy::OnSuccess),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_named_once_and_its_rules_name_keys() {
        for (i, k) in KEYS.iter().enumerate() {
            assert!(
                KEYS[..i].iter().all(|o| o.name != k.name),
                "{} twice",
                k.name
            );
            assert!(!k.applies_to.is_empty(), "{}", k.name);
        }
        for r in RULES {
            let names: &[&str] = match r {
                Rule::Needs(_, a, _) => &[a],
                Rule::Exclusive(a, b) => &[a, b],
                Rule::NoRestart(..) => &["restart"],
            };
            for n in names {
                assert!(key(n).is_some(), "rule names an unknown key {n}");
            }
        }
        assert_eq!(key("name").map(|k| k.name), Some("unit"));
        assert_eq!(
            systemd_twin("Service", "TimeoutSec").map(|k| k.name),
            Some("start-timeout")
        );
    }

    #[test]
    fn context_keys_are_keys_of_a_unit_with_distinct_names() {
        let names = yaml_names();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "{n} twice");
        }
        assert_eq!(
            context_key("protect-system"),
            Some(context::Key::ProtectSystem)
        );
        assert_eq!(context_key("user"), None);
        assert_eq!(
            systemd_context_key("Service", "LimitNOFILE"),
            Some(context::Key::Limit(context::limits::Rlimit::Nofile))
        );
        assert_eq!(systemd_context_key("Unit", "LimitNOFILE"), None);
        // No context key is also a key of the table.
        for k in context::Key::all() {
            assert!(key(k.yaml_name()).is_none(), "{k}");
            assert!(systemd_twin("Service", k.systemd_name()).is_none(), "{k}");
        }
    }
}
