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

use crate::command::{
    lexopt_error, usage, Command, Invocation, Systemctl, Topic, UnitFiles, UsageError,
};
use flotilla_units::cli::{self, Word};
use flotilla_units::protocol::ShutdownKind;
use flotilla_units::spec::Signal;

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
    let mut signal = Signal::TERM;
    let mut main_only = false;
    let mut words = Vec::new();
    let mut p = cli::parser(raw);
    loop {
        let arg = match p.next() {
            Ok(Some(arg)) => arg,
            Ok(None) => break,
            Err(e) => return Err(lexopt_error(Topic::Main, e)),
        };
        let name = match cli::word(arg) {
            Word::Value(word) => {
                words.push(word);
                continue;
            }
            Word::Flag(name) => name,
        };
        let mut value = |what: &str| match p.value() {
            Ok(v) => Ok(v.to_string_lossy().into_owned()),
            Err(_) => Err(usage(Topic::Main, format!("{what} needs a value"))),
        };
        match name.as_str() {
            "-h" | "--help" => {
                return Ok(Invocation {
                    control: None,
                    command: Command::Help(Topic::Main),
                })
            }
            "-q" | "--quiet" => quiet = true,
            "-s" | "--signal" => {
                signal = crate::cmd::kill::signal(&value("--signal")?, Topic::Kill)?
            }
            "--kill-whom" | "--kill-who" => {
                main_only = crate::cmd::kill::main_only(&value("--kill-whom")?, Topic::Kill)?
            }
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
            _ => {
                let written = cli::as_written(&name, &mut p);
                return Err(usage(Topic::Main, format!("unknown option '{written}'")));
            }
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
        "reset-failed" => Command::ResetFailed(services(units)),
        "kill" => {
            need(&units)?;
            Command::Kill {
                units: services(units),
                signal: signal.0,
                main_only,
            }
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
    fn kill_takes_systemctls_options() {
        assert_eq!(
            cmd(&["kill", "-s", "HUP", "rsyslog"]),
            Command::Kill {
                units: vec!["rsyslog.service".into()],
                signal: 1,
                main_only: false
            }
        );
        assert_eq!(
            cmd(&[
                "kill",
                "--kill-whom=main",
                "--signal=SIGUSR1",
                "web.service"
            ]),
            Command::Kill {
                units: vec!["web.service".into()],
                signal: 10,
                main_only: true
            }
        );
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
        assert_eq!(err(&["--bogus=1", "status"]), "unknown option '--bogus=1'");
        assert_eq!(err(&["-x", "status"]), "unknown option '-x'");
        assert_eq!(err(&["show", "x", "-p"]), "--property needs a value");
        assert_eq!(
            err(&["--quiet=yes", "is-active", "x"]),
            "option '--quiet' takes no value"
        );
    }

    /// systemctl's own ways of writing options: bundled short flags, a
    /// short option's value attached, `--` before names that look like
    /// options.
    #[test]
    fn options_as_systemctl_takes_them() {
        assert_eq!(
            cmd(&["-aq", "is-active", "x"]),
            Command::Systemctl(Systemctl::IsActive(vec!["x".into()], true))
        );
        assert_eq!(
            cmd(&["show", "-pMainPID", "x"]),
            Command::UnitFiles(UnitFiles::Show {
                unit: "x.service".into(),
                keys: vec!["MainPID".into()]
            })
        );
        assert_eq!(
            cmd(&["is-active", "--", "-x"]),
            Command::Systemctl(Systemctl::IsActive(vec!["-x".into()], false))
        );
    }
}
