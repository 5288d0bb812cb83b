//! What a command line asks for: the [`Invocation`] that `initctl`'s
//! grammar (`args.rs`) and systemctl's (`systemctl.rs`) read arguments
//! into, and the [`UsageError`] they refuse one with. The commands
//! (`cmd/`) run these; nothing here parses.

use flotilla_units::protocol::ShutdownKind;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// A parsed command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    /// `--control PATH`, if given.
    pub control: Option<PathBuf>,
    /// What to do.
    pub command: Command,
}

/// What `initctl` was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Print help for a topic on stdout.
    Help(Topic),
    /// Print the version.
    Version,
    /// `status [NAME...] [--json]`.
    Status {
        /// Units or targets (none: the whole system).
        names: Vec<String>,
        /// Print JSON.
        json: bool,
    },
    /// `list [--json] [--degraded]`.
    List {
        /// Print JSON.
        json: bool,
        /// Only the units some of whose settings were not applied.
        degraded: bool,
    },
    /// `set-target NAME [--wait] [--timeout DUR]`.
    SetTarget {
        /// The target.
        target: String,
        /// Wait until it is active or failed.
        wait: bool,
        /// Give up waiting after this long (implies `wait`).
        timeout: Option<Duration>,
    },
    /// `reload [UNIT]`: the unit directory, or one unit's `exec-reload`.
    Reload {
        /// The unit, if only one unit is reloaded.
        unit: Option<String>,
    },
    /// `reexec` (`daemon-reexec`): the init executes its binary again.
    Reexec,
    /// `restart UNIT`.
    Restart {
        /// The unit.
        unit: String,
    },
    /// `reset-failed [UNIT...]`: the failures of these units, or of every
    /// unit, forgotten.
    ResetFailed(Vec<String>),
    /// `kill [-s SIGNAL] [--kill-whom=all|main] UNIT...`.
    Kill {
        /// The units.
        units: Vec<String>,
        /// The signal's number.
        signal: i32,
        /// Only each unit's main process.
        main_only: bool,
    },
    /// `logs UNIT [-n N] [--since TIME] [-f] [--verbose]`.
    Logs(crate::cmd::logs::Ask),
    /// `poweroff`, `reboot`, `halt`.
    Shutdown(ShutdownKind),
    /// `analyze ...`.
    Analyze(Analyze),
    /// `cluster ...`: the arguments after `cluster`, untouched.
    Cluster(Vec<String>),
    /// `mask UNIT` (`mask: true`) or `unmask UNIT`.
    Mask {
        /// The unit.
        unit: String,
        /// Mask, or unmask.
        mask: bool,
    },
    /// `run [--name N] [--depends-on T]... -- COMMAND...`.
    Run {
        /// `--name`.
        name: Option<String>,
        /// `--depends-on`, in order.
        depends_on: Vec<String>,
        /// The command's words.
        argv: Vec<String>,
    },
    /// `add FILE`.
    Add {
        /// The unit file.
        file: PathBuf,
    },
    /// `stop-transient NAME`.
    StopTransient {
        /// The transient unit.
        name: String,
    },
    /// `set-alternative TARGET UNIT`.
    SetAlternative {
        /// The target.
        target: String,
        /// The provider to run.
        unit: String,
    },
    /// `enable`, `disable`, `is-enabled`, `cat`, `show`, `list-unit-files`:
    /// the unit files of the search path (docs/contract.md §3c).
    UnitFiles(UnitFiles),
    /// A systemctl verb with systemctl's own behaviour (`initctl` run as
    /// `systemctl`).
    Systemctl(Systemctl),
}

/// The unit-file commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnitFiles {
    /// `enable [--now] UNIT...`.
    Enable {
        /// The units.
        units: Vec<String>,
        /// `--now`.
        now: bool,
    },
    /// `disable [--now] UNIT...`.
    Disable {
        /// The units.
        units: Vec<String>,
        /// `--now`.
        now: bool,
    },
    /// `is-enabled [--quiet] UNIT...`.
    IsEnabled {
        /// The units.
        units: Vec<String>,
        /// Print nothing, only the exit status.
        quiet: bool,
    },
    /// `cat UNIT...`.
    Cat(Vec<String>),
    /// `show [-p KEY]... UNIT`.
    Show {
        /// The unit.
        unit: String,
        /// Only these keys.
        keys: Vec<String>,
    },
    /// `list-unit-files`.
    List,
    /// `preset UNIT...`: enable or disable each as the preset files say.
    Preset(Vec<String>),
}

/// The `analyze` sub-commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Analyze {
    /// Units by the time they took to start.
    Blame,
    /// The chain of units that delayed a unit or target (default: the
    /// current target).
    CriticalChain(Option<String>),
    /// An SVG timeline.
    Plot,
    /// The graph in Graphviz dot.
    Dot,
    /// Declared confinement against what the running processes have: one
    /// unit or every running one; `--json`.
    Security(Option<String>, bool),
}

/// What a help text or usage line is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    /// `initctl` as a whole.
    Main,
    /// `status`.
    Status,
    /// `list`.
    List,
    /// `set-target`.
    SetTarget,
    /// `reload`.
    Reload,
    /// `restart`.
    Restart,
    /// `kill`, `reset-failed`.
    Kill,
    /// `logs`.
    Logs,
    /// `poweroff`, `reboot`, `halt`.
    Shutdown,
    /// `analyze`.
    Analyze,
    /// `cluster`.
    Cluster,
    /// `enable`, `disable`, `is-enabled`, `cat`, `show`, `list-unit-files`.
    UnitFiles,
    /// `mask`, `unmask`.
    Mask,
    /// `set-alternative`.
    SetAlternative,
    /// `run`, `add`, `stop-transient`.
    Transient,
    /// `start`, `stop`.
    Start,
}

/// Every verb and the topic of its help, in the order the short usage
/// lists them: the one list of what `initctl` answers to.
pub const VERBS: &[(&str, Topic)] = &[
    ("status", Topic::Status),
    ("list", Topic::List),
    ("set-target", Topic::SetTarget),
    ("reload", Topic::Reload),
    ("start", Topic::Start),
    ("stop", Topic::Start),
    ("restart", Topic::Restart),
    ("kill", Topic::Kill),
    ("reset-failed", Topic::Kill),
    ("logs", Topic::Logs),
    ("poweroff", Topic::Shutdown),
    ("reboot", Topic::Shutdown),
    ("halt", Topic::Shutdown),
    ("analyze", Topic::Analyze),
    ("cluster", Topic::Cluster),
    ("enable", Topic::UnitFiles),
    ("disable", Topic::UnitFiles),
    ("is-enabled", Topic::UnitFiles),
    ("cat", Topic::UnitFiles),
    ("show", Topic::UnitFiles),
    ("list-unit-files", Topic::UnitFiles),
    ("preset", Topic::UnitFiles),
    ("daemon-reload", Topic::Reload),
    ("reexec", Topic::Reload),
    ("daemon-reexec", Topic::Reload),
    ("mask", Topic::Mask),
    ("unmask", Topic::Mask),
    ("set-alternative", Topic::SetAlternative),
    ("run", Topic::Transient),
    ("add", Topic::Transient),
    ("stop-transient", Topic::Transient),
    ("help", Topic::Main),
];

impl Topic {
    /// The topic of a verb, as typed.
    pub fn of_verb(verb: &str) -> Option<Topic> {
        VERBS.iter().find(|(v, _)| *v == verb).map(|&(_, t)| t)
    }
}

/// A command line that cannot be run; `main` prints the message and the
/// topic's usage on stderr and exits 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError {
    /// What is wrong.
    pub message: String,
    /// Whose usage to show.
    pub topic: Topic,
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

pub(crate) fn usage(topic: Topic, message: impl Into<String>) -> UsageError {
    UsageError {
        message: message.into(),
        topic,
    }
}

/// lexopt's errors in initctl's words.
pub(crate) fn lexopt_error(topic: Topic, e: lexopt::Error) -> UsageError {
    match e {
        lexopt::Error::UnexpectedValue { option, .. } => {
            usage(topic, format!("option '{option}' takes no value"))
        }
        lexopt::Error::MissingValue {
            option: Some(option),
        } => usage(topic, format!("option '{option}' needs a value")),
        other => usage(topic, other.to_string()),
    }
}

/// The systemctl verbs with systemctl's own behaviour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Systemctl {
    /// `status [UNIT]`: exit 0 active, 3 not active, 4 unknown.
    Status(Vec<String>),
    /// `is-active [--quiet] UNIT...`: exit 0 if all are active, else 3.
    IsActive(Vec<String>, Quiet),
    /// `is-failed [--quiet] UNIT...`: exit 0 if one has failed, else 1.
    IsFailed(Vec<String>, Quiet),
    /// `start UNIT...` (with `--no-block`: without waiting).
    Start(Vec<String>, Block),
    /// `stop UNIT...` (with `--no-block`: without waiting).
    Stop(Vec<String>, Block),
    /// `restart UNIT...`.
    Restart(Vec<String>),
    /// `try-restart UNIT...`: restart only those that are active.
    TryRestart(Vec<String>),
    /// `reload-or-restart UNIT...`.
    ReloadOrRestart(Vec<String>),
    /// `mask UNIT...`: a link to `/dev/null` where systemctl makes it.
    Mask(Vec<String>),
    /// `unmask UNIT...`.
    Unmask(Vec<String>),
    /// `isolate TARGET`: `set-target`, refused for a target whose unit
    /// does not allow it.
    Isolate(String),
    /// `list-units [--failed] [--type T]`.
    ListUnits {
        /// Only failed units.
        failed: bool,
        /// Only units of these kinds (`service`, `target`, …).
        kinds: Vec<String>,
        /// No header and footer.
        no_legend: bool,
    },
    /// `list-timers [--all]`.
    ListTimers {
        /// Also the timers that are not running.
        all: bool,
        /// No header and footer.
        no_legend: bool,
    },
    /// `list-sockets [--all]`.
    ListSockets {
        /// Also the socket units that are not listening.
        all: bool,
        /// No header and footer.
        no_legend: bool,
    },
}

/// `--quiet`: print nothing, only the exit code.
pub type Quiet = bool;

/// Whether `start`/`stop` wait until the unit is up or down (systemctl's
/// job wait): false with `--no-block`, which returns once the init has
/// taken the request.
pub type Block = bool;
