//! The table of unit types: for each [`UnitType`], what it runs, when it is
//! up, the systemd names that become it and its defaults, in one row
//! ([`UnitType::row`]). The rest of the code asks the row, never compares
//! types: a new type is a variant, its row (the `match` in `row` does not
//! compile without it) and the cells the compiler then asks for, such as
//! the `match`es on [`Ready`] in the planner's lifecycle
//! (`docs/design.md`, "Where a change goes"). [`UnitType`] and
//! [`RestartPolicy`] are here, below the spec, so that what the spec holds
//! (a trigger's settings) can name a type without importing the spec.

use serde::{Deserialize, Serialize};

/// The kind of process a unit runs and how its readiness is known.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "kebab-case")]
pub enum UnitType {
    /// A foreground process that reports readiness with sd_notify `READY=1`.
    ForegroundNotified,
    /// A foreground process, ready on spawn, after `ready-wait`, or after a
    /// `ready-grep` match.
    #[default]
    ForegroundSupervised,
    /// A forking daemon, supervised through the PID in its pidfile.
    BackgroundPidfile,
    /// Started by a script that exits 0 once the service is up; stopped by a
    /// stop script.
    BackgroundScripted,
    /// A command run once: `starting` while it runs, `exited` on status 0.
    Oneshot,
    /// No process: exists for the dependency graph.
    Virtual,
    /// No process: starts its unit at times (systemd's `.timer`).
    Timer,
    /// No process: sockets the init listens on, handed to its unit, which
    /// starts at the first connection (systemd's `.socket`).
    Socket,
    /// No process: starts its unit when watched paths change (systemd's
    /// `.path`).
    Path,
    /// Processes someone else started, adopted by the init at the unit's
    /// start (systemd's `.scope`, made over D-Bus by `StartTransientUnit`:
    /// logind's sessions, `systemd-run --scope`).
    Scope,
    /// No process: a level of the cgroup tree that holds the units placed
    /// in it, with the resource limits its `[Slice]` section gives
    /// (systemd's `.slice`; it needs no file).
    Slice,
}

impl UnitType {
    /// The name used in unit files and in the protocol.
    pub fn as_str(self) -> &'static str {
        self.row().name
    }

    /// Every type, in the order the docs list them.
    pub const ALL: [UnitType; 11] = [
        UnitType::ForegroundNotified,
        UnitType::ForegroundSupervised,
        UnitType::BackgroundPidfile,
        UnitType::BackgroundScripted,
        UnitType::Oneshot,
        UnitType::Virtual,
        UnitType::Timer,
        UnitType::Socket,
        UnitType::Path,
        UnitType::Scope,
        UnitType::Slice,
    ];

    /// A trigger: a `timer`, `socket` or `path` unit, which has no process
    /// and starts the unit it `triggers`.
    pub fn is_trigger(self) -> bool {
        self.row().runs == Runs::Trigger
    }

    /// Whether units of this type run processes (every type but `virtual`
    /// and the triggers).
    pub fn runs_processes(self) -> bool {
        self.row().runs == Runs::Process
    }

    /// Parses a type name as written in a unit file.
    pub fn parse(s: &str) -> Option<UnitType> {
        UnitType::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// When a unit's process is started again after it ends. A YAML unit
/// says `no`, `on-failure` or `always`; a systemd unit may also say one of
/// `Restart=`'s narrower policies, which [`RestartPolicy::restarts_after`]
/// judges by systemd's table (docs/systemd-units.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RestartPolicy {
    /// Never.
    No,
    /// After an exit with a non-zero status, a signal, or a timeout.
    OnFailure,
    /// After any exit that the init did not ask for.
    Always,
    /// After a clean exit only (systemd's `on-success`).
    OnSuccess,
    /// After a signal, a timeout, a watchdog timeout or a failure of
    /// another kind, not after a non-zero exit status (`on-abnormal`).
    OnAbnormal,
    /// After an uncaught signal only (`on-abort`).
    OnAbort,
    /// After a watchdog timeout only (`on-watchdog`).
    OnWatchdog,
}

impl RestartPolicy {
    /// Every policy, in systemd's order of `Restart=` values.
    pub const ALL: [RestartPolicy; 7] = [
        RestartPolicy::No,
        RestartPolicy::OnSuccess,
        RestartPolicy::OnFailure,
        RestartPolicy::OnAbnormal,
        RestartPolicy::OnWatchdog,
        RestartPolicy::OnAbort,
        RestartPolicy::Always,
    ];

    /// The name used in unit files.
    pub fn as_str(self) -> &'static str {
        match self {
            RestartPolicy::No => "no",
            RestartPolicy::OnFailure => "on-failure",
            RestartPolicy::Always => "always",
            RestartPolicy::OnSuccess => "on-success",
            RestartPolicy::OnAbnormal => "on-abnormal",
            RestartPolicy::OnAbort => "on-abort",
            RestartPolicy::OnWatchdog => "on-watchdog",
        }
    }

    /// Whether a unit that ended by itself is started again, `failure`
    /// being why it ended (`None`: a clean exit). A start skipped by
    /// `exec-condition` is never restarted; a request to stop never
    /// reaches here.
    pub fn restarts_after(self, failure: Option<crate::state::FailureKind>) -> bool {
        use crate::state::FailureKind as F;
        use RestartPolicy as R;
        match failure {
            Some(F::ExecCondition) => false,
            None => matches!(self, R::Always | R::OnSuccess),
            Some(F::ExitCode) => matches!(self, R::Always | R::OnFailure),
            Some(F::Signal) => {
                matches!(self, R::Always | R::OnFailure | R::OnAbnormal | R::OnAbort)
            }
            Some(F::Watchdog) => {
                matches!(
                    self,
                    R::Always | R::OnFailure | R::OnAbnormal | R::OnWatchdog
                )
            }
            Some(_) => matches!(self, R::Always | R::OnFailure | R::OnAbnormal),
        }
    }
}

/// What a unit of a type runs while it is active.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// No process: the unit exists for the dependency graph (`virtual`,
    /// systemd's `.target`).
    Nothing,
    /// No process of its own: the init arms a timer, binds sockets or
    /// watches paths, and starts the unit it `triggers`.
    Trigger,
    /// Processes: `exec-start` (and the `exec-*` commands around it).
    Process,
}

/// When a unit of a type is up (`running`, or `exited` for a `oneshot`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ready {
    /// As soon as it starts: nothing to wait for.
    AtOnce,
    /// Once the planner armed its timer (its elapse is the planner's own
    /// clock).
    Clock,
    /// Once the init bound its sockets or watches its paths.
    Armed(Arm),
    /// When the main process is spawned, or after `ready-wait`, or at a
    /// `ready-grep` match.
    Spawned,
    /// At sd_notify `READY=1` from the main process.
    Notified,
    /// When the start command exits 0 and the pidfile names the daemon it
    /// left behind.
    Pidfile,
    /// When the start script exits 0, leaving its service running.
    ScriptExited,
    /// When the command exits 0: the unit is then `exited`, its work done.
    Exited,
    /// When the init moved the processes it was given into the unit (a
    /// `scope`); it is up while any of them (or, with a cgroup, any
    /// process in its cgroup) is alive.
    Adopted,
}

impl Ready {
    /// Whether the start command ends by handing over (a oneshot's work is
    /// done, a start script or a forking daemon left the service running):
    /// its exit 0 is no failure, and its process group is not killed.
    pub fn start_command_hands_over(self) -> bool {
        match self {
            Ready::Pidfile | Ready::ScriptExited | Ready::Exited => true,
            Ready::AtOnce
            | Ready::Clock
            | Ready::Armed(_)
            | Ready::Spawned
            | Ready::Notified
            | Ready::Adopted => false,
        }
    }
}

/// What the init arms for a trigger that waits for an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arm {
    /// Binds sockets and listens (`.socket`).
    Sockets,
    /// Watches paths with inotify (`.path`).
    Paths,
}

impl Arm {
    /// The unit's status while the init arms it.
    pub fn arming_status(self) -> &'static str {
        match self {
            Arm::Sockets => "binding sockets",
            Arm::Paths => "watching paths",
        }
    }

    /// The unit's status once armed, waiting for its event.
    pub fn armed_status(self) -> &'static str {
        match self {
            Arm::Sockets => "listening",
            Arm::Paths => "waiting",
        }
    }
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeRow {
    /// Its name in unit files and the control protocol.
    pub name: &'static str,
    /// What it runs.
    pub runs: Runs,
    /// When it is up.
    pub ready: Ready,
    /// The systemd unit-file suffixes that become this type (a `.service`
    /// becomes one of the process types by its `Type=`).
    pub systemd_suffixes: &'static [&'static str],
    /// The values of a `.service`'s `Type=` that become this type.
    pub systemd_types: &'static [&'static str],
    /// `restart` when the unit file does not say.
    pub default_restart: RestartPolicy,
    /// Whether the unit stays `exited` after its main process exits with
    /// success, when `remain-after-exit` is not given.
    pub remains_after_exit: bool,
    /// Whether a unit of the type needs a file to be loaded. One that does
    /// not (a slice: its name says where it is, its defaults are whole)
    /// is made from its drop-ins alone when something asks for it, and
    /// is loaded with them before a `StartTransientUnit` of its name
    /// applies its properties (docs/systemd-units.md, "Slices").
    pub needs_file: bool,
    /// Whether units are placed in a unit of the type (a slice: its
    /// cgroup directory, named by its name, holds theirs; its `[Slice]`
    /// takes the resource-control keys; it is active while a unit in it
    /// runs, and stopping it stops them).
    pub holds_units: bool,
}

impl TypeRow {
    /// Whether a unit of the type is made of processes already running,
    /// handed over when it starts (`Ready::Adopted`, a `scope`): such a
    /// unit is made over D-Bus (`StartTransientUnit` with its PIDs), never
    /// written in a unit file; it is over, `inactive` in systemd's words,
    /// once they have all ended.
    pub fn adopts(&self) -> bool {
        self.ready == Ready::Adopted
    }
}

impl UnitType {
    /// The type's row of the table.
    pub const fn row(self) -> &'static TypeRow {
        match self {
            UnitType::ForegroundNotified => &TypeRow {
                name: "foreground-notified",
                runs: Runs::Process,
                ready: Ready::Notified,
                systemd_suffixes: &[],
                systemd_types: &["notify", "notify-reload"],
                default_restart: RestartPolicy::OnFailure,
                remains_after_exit: false,
                needs_file: true,
                holds_units: false,
            },
            UnitType::ForegroundSupervised => &TypeRow {
                name: "foreground-supervised",
                runs: Runs::Process,
                ready: Ready::Spawned,
                systemd_suffixes: &["service"],
                systemd_types: &["", "simple", "exec", "idle"],
                default_restart: RestartPolicy::OnFailure,
                remains_after_exit: false,
                needs_file: true,
                holds_units: false,
            },
            UnitType::BackgroundPidfile => &TypeRow {
                name: "background-pidfile",
                runs: Runs::Process,
                ready: Ready::Pidfile,
                systemd_suffixes: &[],
                systemd_types: &["forking"],
                default_restart: RestartPolicy::OnFailure,
                remains_after_exit: false,
                needs_file: true,
                holds_units: false,
            },
            UnitType::BackgroundScripted => &TypeRow {
                name: "background-scripted",
                runs: Runs::Process,
                ready: Ready::ScriptExited,
                systemd_suffixes: &[],
                systemd_types: &[],
                default_restart: RestartPolicy::OnFailure,
                remains_after_exit: false,
                needs_file: true,
                holds_units: false,
            },
            UnitType::Oneshot => &TypeRow {
                name: "oneshot",
                runs: Runs::Process,
                ready: Ready::Exited,
                // mount(8) to start, umount(8) to stop
                // (`flotilla-systemd`'s `translate/mount.rs`).
                systemd_suffixes: &["mount"],
                systemd_types: &["oneshot"],
                default_restart: RestartPolicy::No,
                remains_after_exit: true,
                needs_file: true,
                holds_units: false,
            },
            UnitType::Virtual => &TypeRow {
                name: "virtual",
                runs: Runs::Nothing,
                ready: Ready::AtOnce,
                systemd_suffixes: &["target"],
                systemd_types: &[],
                default_restart: RestartPolicy::OnFailure,
                remains_after_exit: false,
                needs_file: true,
                holds_units: false,
            },
            UnitType::Timer => &TypeRow {
                name: "timer",
                runs: Runs::Trigger,
                ready: Ready::Clock,
                systemd_suffixes: &["timer"],
                systemd_types: &[],
                default_restart: RestartPolicy::OnFailure,
                remains_after_exit: false,
                needs_file: true,
                holds_units: false,
            },
            UnitType::Socket => &TypeRow {
                name: "socket",
                runs: Runs::Trigger,
                ready: Ready::Armed(Arm::Sockets),
                systemd_suffixes: &["socket"],
                systemd_types: &[],
                default_restart: RestartPolicy::OnFailure,
                remains_after_exit: false,
                needs_file: true,
                holds_units: false,
            },
            UnitType::Path => &TypeRow {
                name: "path",
                runs: Runs::Trigger,
                ready: Ready::Armed(Arm::Paths),
                systemd_suffixes: &["path"],
                systemd_types: &[],
                default_restart: RestartPolicy::OnFailure,
                remains_after_exit: false,
                needs_file: true,
                holds_units: false,
            },
            // Made of running processes, over D-Bus: its file is the one
            // flotilla-busd makes, in `/run/systemd/transient`, read again
            // at a reload (systemd loads no other `.scope` file).
            UnitType::Scope => &TypeRow {
                name: "scope",
                runs: Runs::Process,
                ready: Ready::Adopted,
                systemd_suffixes: &["scope"],
                systemd_types: &[],
                default_restart: RestartPolicy::No,
                remains_after_exit: false,
                needs_file: true,
                holds_units: false,
            },
            // Runs nothing: the init makes its cgroup directory, with its
            // limits, while it is started or a unit in it runs.
            UnitType::Slice => &TypeRow {
                name: "slice",
                runs: Runs::Nothing,
                ready: Ready::AtOnce,
                systemd_suffixes: &["slice"],
                systemd_types: &[],
                default_restart: RestartPolicy::No,
                remains_after_exit: false,
                needs_file: false,
                holds_units: true,
            },
        }
    }

    /// The type a systemd unit file of this suffix becomes before its
    /// `Type=` is read (a `.service` is then one of the process types).
    pub fn of_systemd_suffix(suffix: &str) -> Option<UnitType> {
        UnitType::ALL
            .into_iter()
            .find(|t| t.row().systemd_suffixes.contains(&suffix))
    }

    /// The type a `.service`'s `Type=` value becomes.
    pub fn of_systemd_type(value: &str) -> Option<UnitType> {
        UnitType::ALL
            .into_iter()
            .find(|t| t.row().systemd_types.contains(&value))
    }

    /// The `Type=` a service of this type shows (systemd's `Type`
    /// property): the first of its row's values, else `oneshot` for one
    /// that is up once its script has exited, else `simple`.
    pub fn systemd_type(self) -> &'static str {
        let row = self.row();
        match row.systemd_types.iter().find(|t| !t.is_empty()) {
            Some(t) => t,
            None if row.ready == Ready::ScriptExited => "oneshot",
            None => "simple",
        }
    }
}

/// The process types that start a command of their own (a `scope`
/// adopts processes instead).
pub const SPAWNING: &[UnitType] = &[
    UnitType::ForegroundNotified,
    UnitType::ForegroundSupervised,
    UnitType::BackgroundPidfile,
    UnitType::BackgroundScripted,
    UnitType::Oneshot,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_is_in_all_once_with_a_name_of_its_own() {
        for (i, t) in UnitType::ALL.iter().enumerate() {
            assert_eq!(UnitType::parse(t.row().name), Some(*t));
            assert!(UnitType::ALL[..i]
                .iter()
                .all(|o| o.row().name != t.row().name));
        }
    }

    /// A type that adopts processes runs them and is never read from a
    /// file: no suffix or `Type=` becomes it, and it restarts nothing.
    #[test]
    fn adopting_types_run_processes_and_are_not_restarted() {
        let adopting: Vec<&TypeRow> = UnitType::ALL
            .iter()
            .map(|t| t.row())
            .filter(|r| r.adopts())
            .collect();
        assert!(!adopting.is_empty());
        for r in adopting {
            assert_eq!(r.runs, Runs::Process, "{}", r.name);
            assert!(r.systemd_types.is_empty());
            assert_eq!(r.default_restart, RestartPolicy::No, "{}", r.name);
        }
    }

    #[test]
    fn each_systemd_name_becomes_one_type() {
        let mut suffixes: Vec<&str> = Vec::new();
        let mut types: Vec<&str> = Vec::new();
        for t in UnitType::ALL {
            suffixes.extend(t.row().systemd_suffixes);
            types.extend(t.row().systemd_types);
        }
        let (n, m) = (suffixes.len(), types.len());
        suffixes.sort();
        suffixes.dedup();
        types.sort();
        types.dedup();
        assert_eq!((suffixes.len(), types.len()), (n, m));
        assert_eq!(
            UnitType::of_systemd_suffix("service"),
            Some(UnitType::ForegroundSupervised)
        );
        assert_eq!(
            UnitType::of_systemd_type("forking"),
            Some(UnitType::BackgroundPidfile)
        );
        assert_eq!(UnitType::of_systemd_type("dbus"), None);
    }

    #[test]
    fn a_type_is_up_as_what_it_runs_allows() {
        for t in UnitType::ALL {
            let row = t.row();
            let ok = match row.runs {
                Runs::Nothing => row.ready == Ready::AtOnce,
                Runs::Trigger => matches!(row.ready, Ready::Clock | Ready::Armed(_)),
                Runs::Process => {
                    !matches!(row.ready, Ready::AtOnce | Ready::Clock | Ready::Armed(_))
                }
            };
            assert!(
                ok,
                "{}: {:?} cannot be up {:?}",
                row.name, row.runs, row.ready
            );
        }
    }

    /// Every type has its entry in the units reference, under its name.
    #[test]
    fn every_type_is_documented() {
        let doc = include_str!("../../docs/units.md");
        for t in UnitType::ALL {
            let entry = format!("`{}`", t.row().name);
            assert!(
                doc.contains(&entry),
                "docs/units.md has no entry for {entry}"
            );
        }
    }

    /// The `Type` busd shows is the one the unit file said, where one type
    /// has one `Type=` value; a scripted unit, which no `Type=` makes, is
    /// systemd's nearest, `oneshot`.
    #[test]
    fn each_service_type_shows_systemds_type() {
        let shown = |t: UnitType| t.systemd_type();
        assert_eq!(shown(UnitType::ForegroundNotified), "notify");
        assert_eq!(shown(UnitType::ForegroundSupervised), "simple");
        assert_eq!(shown(UnitType::BackgroundPidfile), "forking");
        assert_eq!(shown(UnitType::Oneshot), "oneshot");
        assert_eq!(shown(UnitType::BackgroundScripted), "oneshot");
        for t in UnitType::ALL {
            let shown = t.systemd_type();
            let types = t.row().systemd_types;
            assert!(types.is_empty() || types.contains(&shown), "{t:?}: {shown}");
        }
    }
}
