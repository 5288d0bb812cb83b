//! The command line: raw arguments in, a validated [`Invocation`] or a
//! [`UsageError`] out.
//!
//! Parsing does no system calls: the socket path is resolved afterwards
//! (`flotilla_client::control_path`), so every accepted and refused command line is unit-tested
//! here. The grammar:
//!
//! ```text
//! initctl [--control PATH] [--json] VERB [ARGS...]
//! ```
//!
//! `--control` is also accepted after the verb (except for `cluster`, whose
//! arguments are passed on untouched), `--json` wherever the verb supports it,
//! `-h`/`--help` anywhere, and `--` ends the options. Options that take a
//! value accept it as the next argument or after `=` (`--timeout=2s`, or
//! `-n5` for short ones); short flags without a value may be bundled (`-fn 5`).

use crate::command::{
    lexopt_error, usage, Analyze, Command, Invocation, Systemctl, Topic, UnitFiles, UsageError,
};
use crate::duration;
use flotilla_units::cli::{self, Word};
use flotilla_units::protocol::ShutdownKind;
use flotilla_units::spec::Signal;
use std::collections::VecDeque;
use std::path::PathBuf;
use unit_files::unit_files;

mod unit_files;

/// Parses the arguments after the program name.
pub fn parse<I, S>(args: I) -> Result<Invocation, UsageError>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let mut g = cli::parser(args.into_iter().map(Into::<String>::into));
    let mut control = None;
    let mut json = false;

    // Global options, up to the verb.
    let verb = loop {
        let arg = match g.next() {
            Ok(Some(arg)) => arg,
            Ok(None) => return Err(usage(Topic::Main, "missing command")),
            Err(e) => return Err(lexopt_error(Topic::Main, e)),
        };
        let name = match cli::word(arg) {
            Word::Value(verb) => break verb,
            Word::Flag(name) => name,
        };
        match name.as_str() {
            "-h" | "--help" => return Ok(help(control, Topic::Main)),
            "-V" | "--version" => {
                return Ok(Invocation {
                    control,
                    command: Command::Version,
                })
            }
            "--control" => control = Some(PathBuf::from(value(Topic::Main, &name, &mut g)?)),
            "--json" => json = true,
            _ => {
                let written = cli::as_written(&name, &mut g);
                return Err(usage(Topic::Main, format!("unknown option '{written}'")));
            }
        }
    };
    // What follows the verb is the verb's: taken as written.
    let mut args: VecDeque<String> = match g.raw_args() {
        Ok(raw) => raw.map(|a| a.to_string_lossy().into_owned()).collect(),
        Err(e) => return Err(lexopt_error(Topic::Main, e)),
    };

    let Some(topic) = Topic::of_verb(&verb) else {
        return Err(usage(Topic::Main, format!("unknown command '{verb}'")));
    };
    if verb == "cluster" {
        if json {
            return Err(usage(Topic::Cluster, "--json does not apply to 'cluster'"));
        }
        return Ok(Invocation {
            control,
            command: Command::Cluster(args.into()),
        });
    }
    if verb == "help" {
        let topic = match args.pop_front() {
            None => Topic::Main,
            Some(v) => Topic::of_verb(&v)
                .ok_or_else(|| usage(Topic::Main, format!("no help for unknown command '{v}'")))?,
        };
        if let Some(extra) = args.pop_front() {
            return Err(usage(Topic::Main, format!("unexpected argument '{extra}'")));
        }
        return Ok(help(control, topic));
    }

    // `-h`/`--help` anywhere before `--` wins over everything else.
    if args
        .iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "-h" || a == "--help")
    {
        return Ok(help(control, topic));
    }

    let mut p = VerbArgs {
        topic,
        verb: verb.clone(),
        args,
        positionals: Vec::new(),
        json,
        control,
    };
    let command = match verb.as_str() {
        "status" => {
            p.scan(&[], |_, _, _| Ok(false))?;
            let names = std::mem::take(&mut p.positionals);
            Command::Status {
                names,
                json: p.json,
            }
        }
        "list" => {
            let mut degraded = false;
            p.scan(&[], |name, _, _| {
                if name == "--degraded" {
                    degraded = true;
                    return Ok(true);
                }
                Ok(false)
            })?;
            p.none()?;
            Command::List {
                json: p.json,
                degraded,
            }
        }
        "set-target" => {
            let mut wait = false;
            let mut timeout = None;
            p.scan(&["--timeout", "-t"], |name, value, topic| {
                match name {
                    "--wait" | "-w" => wait = true,
                    "--timeout" | "-t" => {
                        let text = value.unwrap_or_default();
                        let d = duration::parse(&text)
                            .map_err(|e| usage(topic, format!("{name}: {e}")))?;
                        timeout = Some(d).filter(|d| !d.is_zero());
                        wait = true;
                    }
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
            p.no_json()?;
            let target = p.required("a target name")?;
            p.none()?;
            Command::SetTarget {
                target,
                wait,
                timeout,
            }
        }
        "daemon-reload" => {
            p.scan(&[], |_, _, _| Ok(false))?;
            p.no_json()?;
            p.none()?;
            Command::Reload { unit: None }
        }
        "enable" | "disable" | "is-enabled" | "cat" | "show" | "list-unit-files" | "preset" => {
            Command::UnitFiles(unit_files(&verb, &mut p)?)
        }
        "reexec" | "daemon-reexec" => {
            p.scan(&[], |_, _, _| Ok(false))?;
            p.no_json()?;
            p.none()?;
            Command::Reexec
        }
        "reload" => {
            p.scan(&[], |_, _, _| Ok(false))?;
            p.no_json()?;
            let unit = p.optional();
            p.none()?;
            Command::Reload { unit }
        }
        "mask" | "unmask" => {
            p.scan(&[], |_, _, _| Ok(false))?;
            p.no_json()?;
            let unit = p.required("a unit name")?;
            p.none()?;
            Command::Mask {
                unit,
                mask: verb == "mask",
            }
        }
        "run" => {
            let mut name = None;
            let mut depends_on = Vec::new();
            p.scan(&["--name", "--depends-on"], |opt, value, _| {
                match opt {
                    "--name" => name = value,
                    "--depends-on" => depends_on.extend(value),
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
            p.no_json()?;
            let argv = std::mem::take(&mut p.positionals);
            if argv.is_empty() {
                return Err(usage(
                    p.topic,
                    "'run' needs a command: initctl run -- COMMAND...",
                ));
            }
            Command::Run {
                name,
                depends_on,
                argv,
            }
        }
        "add" => {
            p.scan(&[], |_, _, _| Ok(false))?;
            p.no_json()?;
            let file = PathBuf::from(p.required("a unit file")?);
            p.none()?;
            Command::Add { file }
        }
        "stop-transient" => {
            p.scan(&[], |_, _, _| Ok(false))?;
            p.no_json()?;
            let name = p.required("a transient unit's name")?;
            p.none()?;
            Command::StopTransient { name }
        }
        "set-alternative" => {
            p.scan(&[], |_, _, _| Ok(false))?;
            p.no_json()?;
            let target = p.required("a target name")?;
            let unit = p.required("a unit name")?;
            p.none()?;
            Command::SetAlternative { target, unit }
        }
        "reset-failed" => {
            p.scan(&[], |_, _, _| Ok(false))?;
            p.no_json()?;
            Command::ResetFailed(std::mem::take(&mut p.positionals))
        }
        "kill" => {
            let (mut signal, mut main_only) = (Signal::TERM, false);
            p.scan(&["-s", "--signal", "--kill-whom"], |name, value, topic| {
                let value = value.unwrap_or_default();
                match name {
                    "-s" | "--signal" => signal = crate::cmd::kill::signal(&value, topic)?,
                    _ => main_only = crate::cmd::kill::main_only(&value, topic)?,
                }
                Ok(true)
            })?;
            p.no_json()?;
            let mut units = vec![p.required("a unit name")?];
            units.extend(std::mem::take(&mut p.positionals));
            Command::Kill {
                units,
                signal: signal.0,
                main_only,
            }
        }
        "start" | "stop" => {
            let mut block = true;
            p.scan(&[], |name, _, _| {
                Ok(name == "--no-block" && {
                    block = false;
                    true
                })
            })?;
            p.no_json()?;
            let mut units = vec![p.required("a unit name")?];
            units.extend(std::mem::take(&mut p.positionals));
            Command::Systemctl(if verb == "start" {
                Systemctl::Start(units, block)
            } else {
                Systemctl::Stop(units, block)
            })
        }
        "restart" => {
            p.scan(&[], |_, _, _| Ok(false))?;
            p.no_json()?;
            let unit = p.required("a unit name")?;
            p.none()?;
            Command::Restart { unit }
        }
        "logs" => {
            let mut lines = None;
            let mut follow = false;
            let mut since = None;
            let mut verbose = false;
            p.scan(&["-n", "--lines", "-S", "--since"], |name, value, topic| {
                match name {
                    "-f" | "--follow" => follow = true,
                    "-v" | "--verbose" => verbose = true,
                    "-n" | "--lines" => {
                        let text = value.unwrap_or_default();
                        let n = text.parse::<usize>().map_err(|_| {
                            usage(topic, format!("{name}: invalid number of lines '{text}'"))
                        })?;
                        lines = Some(n);
                    }
                    "-S" | "--since" => {
                        let text = value.unwrap_or_default();
                        since = Some(
                            crate::since::parse(&text)
                                .map_err(|e| usage(topic, format!("{name}: {e}")))?,
                        );
                    }
                    _ => return Ok(false),
                }
                Ok(true)
            })?;
            p.no_json()?;
            let unit = p.required("a unit name")?;
            p.none()?;
            Command::Logs(crate::cmd::logs::Ask {
                unit,
                lines,
                since,
                follow,
                verbose,
            })
        }
        "poweroff" | "reboot" | "halt" => {
            p.scan(&[], |_, _, _| Ok(false))?;
            p.no_json()?;
            p.none()?;
            Command::Shutdown(match verb.as_str() {
                "poweroff" => ShutdownKind::Poweroff,
                "reboot" => ShutdownKind::Reboot,
                _ => ShutdownKind::Halt,
            })
        }
        "analyze" => {
            p.scan(&[], |_, _, _| Ok(false))?;
            let Some(sub) = p.optional() else {
                return Err(usage(
                    Topic::Analyze,
                    "'analyze' needs one of: blame, critical-chain, plot, dot, security",
                ));
            };
            if sub != "security" {
                p.no_json()?;
            }
            let analyze = match sub.as_str() {
                "blame" => Analyze::Blame,
                "critical-chain" => Analyze::CriticalChain(p.optional()),
                "plot" => Analyze::Plot,
                "dot" => Analyze::Dot,
                "security" => Analyze::Security(p.optional(), p.json),
                other => {
                    return Err(usage(
                        Topic::Analyze,
                        format!(
                            "unknown analyze command '{other}' (use blame, critical-chain, plot, dot or security)"
                        ),
                    ))
                }
            };
            p.none()?;
            Command::Analyze(analyze)
        }
        _ => return Err(usage(Topic::Main, format!("unknown command '{verb}'"))),
    };
    Ok(Invocation {
        control: p.control,
        command,
    })
}

fn help(control: Option<PathBuf>, topic: Topic) -> Invocation {
    Invocation {
        control,
        command: Command::Help(topic),
    }
}

/// The value of option `name` (`--name VALUE`, `--name=VALUE`, `-n5`).
fn value(topic: Topic, name: &str, p: &mut lexopt::Parser) -> Result<String, UsageError> {
    match p.value() {
        Ok(v) => Ok(v.to_string_lossy().into_owned()),
        Err(_) => Err(usage(topic, format!("option '{name}' needs a value"))),
    }
}

/// The arguments after the verb.
struct VerbArgs {
    topic: Topic,
    verb: String,
    args: VecDeque<String>,
    positionals: Vec<String>,
    json: bool,
    control: Option<PathBuf>,
}

impl VerbArgs {
    /// Reads every option; `own` handles the verb's own options (returns
    /// false for names it does not know) and gets the value of those listed
    /// in `with_value`.
    fn scan<F>(&mut self, with_value: &[&str], mut own: F) -> Result<(), UsageError>
    where
        F: FnMut(&str, Option<String>, Topic) -> Result<bool, UsageError>,
    {
        let mut p = cli::parser(std::mem::take(&mut self.args));
        loop {
            let arg = match p.next() {
                Ok(Some(arg)) => arg,
                Ok(None) => break,
                Err(e) => return Err(lexopt_error(self.topic, e)),
            };
            let name = match cli::word(arg) {
                Word::Value(v) => {
                    self.positionals.push(v);
                    continue;
                }
                Word::Flag(name) => name,
            };
            let takes_value = name == "--control" || with_value.contains(&name.as_str());
            let v = if takes_value {
                Some(value(self.topic, &name, &mut p)?)
            } else {
                None
            };
            match name.as_str() {
                "--control" => self.control = v.map(PathBuf::from),
                "--json" => self.json = true,
                _ => {
                    if !own(&name, v, self.topic)? {
                        return Err(usage(
                            self.topic,
                            format!("unknown option '{name}' for '{}'", self.verb),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    fn no_json(&self) -> Result<(), UsageError> {
        if self.json {
            return Err(usage(
                self.topic,
                format!("--json does not apply to '{}'", self.verb),
            ));
        }
        Ok(())
    }

    /// The next positional argument, if any.
    fn optional(&mut self) -> Option<String> {
        if self.positionals.is_empty() {
            None
        } else {
            Some(self.positionals.remove(0))
        }
    }

    /// The next positional argument, which must be there.
    fn required(&mut self, what: &str) -> Result<String, UsageError> {
        match self.optional() {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(usage(self.topic, format!("'{}' needs {what}", self.verb))),
        }
    }

    /// No positional argument may be left.
    fn none(&mut self) -> Result<(), UsageError> {
        match self.positionals.first() {
            None => Ok(()),
            Some(extra) => Err(usage(self.topic, format!("unexpected argument '{extra}'"))),
        }
    }
}

#[cfg(test)]
mod tests;
