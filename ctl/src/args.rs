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

use crate::duration;
use flotilla_units::protocol::ShutdownKind;
use std::collections::VecDeque;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;
use unit_files::unit_files;

mod unit_files;

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
    Systemctl(crate::systemctl::Systemctl),
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

impl Topic {
    /// The topic of a verb, as typed.
    pub fn of_verb(verb: &str) -> Option<Topic> {
        Some(match verb {
            "status" => Topic::Status,
            "list" => Topic::List,
            "set-target" => Topic::SetTarget,
            "reload" => Topic::Reload,
            "restart" => Topic::Restart,
            "logs" => Topic::Logs,
            "poweroff" | "reboot" | "halt" => Topic::Shutdown,
            "analyze" => Topic::Analyze,
            "cluster" => Topic::Cluster,
            "enable" | "disable" | "is-enabled" | "cat" | "show" | "list-unit-files" | "preset" => {
                Topic::UnitFiles
            }
            "daemon-reload" | "reexec" | "daemon-reexec" => Topic::Reload,
            "mask" | "unmask" => Topic::Mask,
            "set-alternative" => Topic::SetAlternative,
            "run" | "add" | "stop-transient" => Topic::Transient,
            "start" | "stop" => Topic::Start,
            "help" => Topic::Main,
            _ => return None,
        })
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

/// Parses the arguments after the program name.
pub fn parse<I, S>(args: I) -> Result<Invocation, UsageError>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let mut args: VecDeque<String> = args.into_iter().map(Into::into).collect();
    let mut control = None;
    let mut json = false;

    // Global options, up to the verb.
    let verb = loop {
        let Some(arg) = args.pop_front() else {
            return Err(usage(Topic::Main, "missing command"));
        };
        if arg == "--" {
            match args.pop_front() {
                Some(verb) => break verb,
                None => return Err(usage(Topic::Main, "missing command")),
            }
        }
        if !arg.starts_with('-') || arg == "-" {
            break arg;
        }
        let (name, inline) = split_long(&arg);
        match name {
            "-h" | "--help" => return Ok(help(control, Topic::Main)),
            "-V" | "--version" => {
                return Ok(Invocation {
                    control,
                    command: Command::Version,
                })
            }
            "--control" => {
                control = Some(PathBuf::from(value(Topic::Main, name, inline, &mut args)?))
            }
            "--json" => {
                no_value(Topic::Main, name, inline)?;
                json = true;
            }
            _ => return Err(usage(Topic::Main, format!("unknown option '{arg}'"))),
        }
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
                crate::systemctl::Systemctl::Start(units, block)
            } else {
                crate::systemctl::Systemctl::Stop(units, block)
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

/// `--name=value` -> (`--name`, `value`); `-n5` -> (`-n`, `5`); others whole.
fn split_long(arg: &str) -> (&str, Option<&str>) {
    if arg.starts_with("--") {
        match arg.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (arg, None),
        }
    } else if arg.starts_with('-') && arg.len() > 2 && arg.is_char_boundary(2) {
        (&arg[..2], Some(&arg[2..]))
    } else {
        (arg, None)
    }
}

/// The value of an option: inline, or the next argument.
fn value(
    topic: Topic,
    name: &str,
    inline: Option<&str>,
    args: &mut VecDeque<String>,
) -> Result<String, UsageError> {
    match inline {
        Some(v) => Ok(v.to_string()),
        None => args
            .pop_front()
            .ok_or_else(|| usage(topic, format!("option '{name}' needs a value"))),
    }
}

fn no_value(topic: Topic, name: &str, inline: Option<&str>) -> Result<(), UsageError> {
    match inline {
        Some(_) => Err(usage(topic, format!("option '{name}' takes no value"))),
        None => Ok(()),
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
        while let Some(arg) = self.args.pop_front() {
            if arg == "--" {
                self.positionals.extend(self.args.drain(..));
                break;
            }
            if !arg.starts_with('-') || arg == "-" {
                self.positionals.push(arg);
                continue;
            }
            let (name, inline) = split_long(&arg);
            let (name, mut inline) = (name.to_string(), inline.map(str::to_string));
            let takes_value = name == "--control" || with_value.contains(&name.as_str());
            // A short flag without a value followed by more letters: a bundle.
            if !takes_value && !name.starts_with("--") {
                if let Some(rest) = inline.take() {
                    self.args.push_front(format!("-{rest}"));
                }
            }
            let v = if takes_value {
                Some(value(self.topic, &name, inline.as_deref(), &mut self.args)?)
            } else {
                no_value(self.topic, &name, inline.as_deref())?;
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
