//! `initctl` run under the name `systemctl` (docs/contract.md §3c): systemctl's common
//! verbs and options read into flotilla's commands. Verbs that are the
//! same request (`restart`, `reload`, `daemon-reload`, `enable`, `cat`,
//! `isolate`, `poweroff`, …) become the [`Command`] `initctl` runs; the
//! ones with systemctl's own output or exit codes (`is-active`, `status`,
//! `start`, `stop`, `mask`, `list-units`, …) are [`Systemctl`] commands
//! (`cmd/systemctl.rs`). A unit named without a suffix is a `.service`, as
//! systemctl takes it (`cmd/systemctl.rs` also tries the bare name, for
//! YAML units). Display options (`--no-pager`, `--plain`, `--no-legend`,
//! `--full`, `--system`, `--no-ask-password`) are accepted; `--no-block`
//! makes `start` and `stop` return once the init has taken the request.

use crate::args::{usage, Command, Invocation, Topic, UnitFiles, UsageError};
use flotilla_units::protocol::ShutdownKind;

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

/// A systemctl command line (the arguments after the program name).
pub fn parse(raw: Vec<String>) -> Result<Invocation, UsageError> {
    let mut quiet = false;
    let mut block = true;
    let mut all = false;
    let mut now = false;
    let mut failed = false;
    let mut no_legend = false;
    let mut kinds = Vec::new();
    let mut props = Vec::new();
    let mut words = Vec::new();
    let mut it = raw.into_iter();
    while let Some(a) = it.next() {
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let mut value = |what: &str| {
            inline
                .clone()
                .or_else(|| it.next())
                .ok_or_else(|| usage(Topic::Main, format!("{what} needs a value")))
        };
        match name.as_str() {
            "-h" | "--help" => {
                return Ok(Invocation {
                    control: None,
                    command: Command::Help(Topic::Main),
                })
            }
            "-q" | "--quiet" => quiet = true,
            "--now" => now = true,
            "--failed" => failed = true,
            "--no-legend" => no_legend = true,
            "-t" | "--type" => kinds.extend(value("--type")?.split(',').map(str::to_string)),
            "-p" | "--property" => {
                props.extend(value("--property")?.split(',').map(str::to_string))
            }
            "--no-block" => block = false,
            "--all" | "-a" => all = true,
            "--no-pager" | "--plain" | "--full" | "-l" | "--system" | "--no-ask-password" => {}
            s if s.starts_with('-') && s.len() > 1 => {
                return Err(usage(Topic::Main, format!("unknown option '{a}'")))
            }
            _ => words.push(a),
        }
    }
    let mut words = words.into_iter();
    let Some(verb) = words.next() else {
        return Err(usage(Topic::Main, "missing command"));
    };
    let units: Vec<String> = words.collect();
    let need = |units: &Vec<String>| {
        if units.is_empty() {
            Err(usage(Topic::Main, format!("'{verb}' needs a unit name")))
        } else {
            Ok(())
        }
    };
    let services = |units: Vec<String>| units.into_iter().map(|u| service(&u)).collect();
    let sys = |s: Systemctl| Command::Systemctl(s);
    let command = match verb.as_str() {
        "status" => sys(Systemctl::Status(units)),
        "is-active" | "is-failed" | "start" | "stop" | "restart" | "try-restart"
        | "reload-or-restart" | "mask" | "unmask" | "reload" => {
            need(&units)?;
            match verb.as_str() {
                "is-active" => sys(Systemctl::IsActive(units, quiet)),
                "is-failed" => sys(Systemctl::IsFailed(units, quiet)),
                "start" => sys(Systemctl::Start(units, block)),
                "stop" => sys(Systemctl::Stop(units, block)),
                "restart" => sys(Systemctl::Restart(units)),
                "try-restart" => sys(Systemctl::TryRestart(units)),
                "reload-or-restart" => sys(Systemctl::ReloadOrRestart(units)),
                "mask" => sys(Systemctl::Mask(services(units))),
                "unmask" => sys(Systemctl::Unmask(services(units))),
                _ => Command::Reload {
                    unit: units.first().cloned(),
                },
            }
        }
        "enable" | "disable" | "is-enabled" | "cat" | "show" | "preset" => {
            need(&units)?;
            let units: Vec<String> = services(units);
            Command::UnitFiles(match verb.as_str() {
                "enable" => UnitFiles::Enable { units, now },
                "disable" => UnitFiles::Disable { units, now },
                "is-enabled" => UnitFiles::IsEnabled { units, quiet },
                "cat" => UnitFiles::Cat(units),
                "preset" => UnitFiles::Preset(units),
                _ => UnitFiles::Show {
                    unit: units.into_iter().next().unwrap_or_default(),
                    keys: props,
                },
            })
        }
        "list-unit-files" => Command::UnitFiles(UnitFiles::List),
        "list-units" => sys(Systemctl::ListUnits {
            failed,
            kinds,
            no_legend,
        }),
        "list-timers" => sys(Systemctl::ListTimers { all, no_legend }),
        "list-sockets" => sys(Systemctl::ListSockets { all, no_legend }),
        "daemon-reload" => Command::Reload { unit: None },
        "daemon-reexec" => Command::Reexec,
        "isolate" => {
            sys(Systemctl::Isolate(units.first().cloned().ok_or_else(
                || usage(Topic::Main, "'isolate' needs a target"),
            )?))
        }
        "poweroff" => Command::Shutdown(ShutdownKind::Poweroff),
        "reboot" => Command::Shutdown(ShutdownKind::Reboot),
        "halt" => Command::Shutdown(ShutdownKind::Halt),
        other => {
            return Err(usage(
                Topic::Main,
                format!(
                "unknown command '{other}' (systemctl verbs flotilla takes: see 'initctl help')"
            ),
            ))
        }
    };
    Ok(Invocation {
        control: None,
        command,
    })
}

/// A unit name as systemctl takes it: without a suffix, a `.service`.
pub fn service(name: &str) -> String {
    let suffixes = [
        ".service",
        ".target",
        ".socket",
        ".timer",
        ".path",
        ".mount",
        ".slice",
        ".scope",
        ".device",
        ".swap",
        ".automount",
    ];
    if suffixes.iter().any(|s| name.ends_with(s)) {
        name.to_string()
    } else {
        format!("{name}.service")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn cmd(args: &[&str]) -> Command {
        parse(args.iter().map(|a| a.to_string()).collect())
            .unwrap()
            .command
    }

    #[test]
    fn verbs_become_flotillas_commands() {
        assert_eq!(
            cmd(&["is-active", "--quiet", "nginx"]),
            Command::Systemctl(Systemctl::IsActive(vec!["nginx".into()], true))
        );
        assert_eq!(
            cmd(&["--no-pager", "enable", "--now", "nginx"]),
            Command::UnitFiles(UnitFiles::Enable {
                units: vec!["nginx.service".into()],
                now: true
            })
        );
        assert_eq!(
            cmd(&["show", "-p", "ExecStart", "web.service"]),
            Command::UnitFiles(UnitFiles::Show {
                unit: "web.service".into(),
                keys: vec!["ExecStart".into()]
            })
        );
        assert_eq!(
            cmd(&["preset", "nginx"]),
            Command::UnitFiles(UnitFiles::Preset(vec!["nginx.service".into()]))
        );
        assert_eq!(
            cmd(&["start", "--no-block", "nginx"]),
            Command::Systemctl(Systemctl::Start(vec!["nginx".into()], false))
        );
        assert_eq!(
            cmd(&["stop", "nginx"]),
            Command::Systemctl(Systemctl::Stop(vec!["nginx".into()], true))
        );
        assert_eq!(cmd(&["daemon-reload"]), Command::Reload { unit: None });
        assert_eq!(
            cmd(&["isolate", "rescue.target"]),
            Command::Systemctl(Systemctl::Isolate("rescue.target".into()))
        );
        assert_eq!(
            cmd(&[
                "list-units",
                "--failed",
                "--type=service",
                "--plain",
                "--no-legend"
            ]),
            Command::Systemctl(Systemctl::ListUnits {
                failed: true,
                kinds: vec!["service".into()],
                no_legend: true
            })
        );
    }

    #[test]
    fn bad_command_lines() {
        let err = |args: &[&str]| {
            parse(args.iter().map(|a| a.to_string()).collect())
                .unwrap_err()
                .message
        };
        assert_eq!(err(&[]), "missing command");
        assert_eq!(err(&["start"]), "'start' needs a unit name");
        assert_eq!(err(&["--bogus", "status"]), "unknown option '--bogus'");
        assert!(err(&["frobnicate"]).starts_with("unknown command 'frobnicate'"));
    }
}
