//! `initctl`: the control client of flotilla's init.
//!
//! This file is flags and glue: parse the command line (`args.rs`), find the
//! control socket (`flotilla_client::control_path`), run one command (`cmd/<verb>.rs`), and turn
//! the outcome into a documented exit code (`error.rs`). Everything the
//! commands print comes from the protocol types in `flotilla_units::protocol`.
//! `docs/initctl.md` documents every command, output and exit code.

mod analyze;
mod args;
mod client;
mod cluster;
mod cmd;
mod command;
mod duration;
mod error;
mod help;
mod logfiles;
mod since;
mod systemctl;
mod table;
mod term;
mod timestamp;

use cmd::{eprint_line, Ctx};
use command::{Command, Invocation};
use error::{CtlError, EXIT_OK, EXIT_USAGE};
use std::io::{self, BufWriter, Write};

fn main() {
    std::process::exit(run());
}

fn run() -> i32 {
    let mut raw = Vec::new();
    for arg in std::env::args_os().skip(1) {
        match arg.into_string() {
            Ok(a) => raw.push(a),
            Err(bad) => {
                eprint_line(&format!(
                    "initctl: argument is not valid UTF-8: {}",
                    bad.to_string_lossy()
                ));
                return EXIT_USAGE;
            }
        }
    }
    // Run as `systemctl` (a link to initctl): systemctl's verbs.
    let as_systemctl = std::env::args_os()
        .next()
        .map(std::path::PathBuf::from)
        .is_some_and(|p| p.file_name().is_some_and(|n| n == "systemctl"));
    let parsed = if as_systemctl {
        systemctl::parse(raw)
    } else {
        args::parse(raw)
    };
    let Invocation { control, command } = match parsed {
        Ok(inv) => inv,
        Err(e) => {
            eprint_line(&format!("initctl: {e}"));
            let _ = io::stderr().write_all(format!("\n{}", help::usage(e.topic)).as_bytes());
            return EXIT_USAGE;
        }
    };

    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = match command {
        Command::Help(topic) => write_out(&mut out, help::help(topic)),
        Command::Version => write_out(
            &mut out,
            &format!("initctl {}\n", env!("CARGO_PKG_VERSION")),
        ),
        // `initctl cluster ...` is the fleet API client in ctl/src/cluster/
        // (its own owner); it gets the arguments after `cluster` untouched.
        Command::Cluster(args) => {
            drop(out);
            return cluster::run(&args);
        }
        command => match flotilla_client::control_path(control) {
            None => Err(CtlError::NoSocket),
            Some(path) => {
                let tty = term::stdout_is_tty();
                let color = tty && term::color_wanted();
                let mut ctx = Ctx {
                    socket: &path,
                    out: &mut out,
                    tty,
                    color,
                };
                dispatch(&mut ctx, command)
            }
        },
    };
    let result = result.and_then(|code| out.flush().map(|()| code).map_err(CtlError::output));
    match result {
        Ok(code) => code,
        Err(e) => {
            // The buffered output goes first (ignoring a broken pipe), then
            // the error, so that both appear in order on a terminal.
            let _ = out.flush();
            if !e.is_quiet() {
                eprint_line(&format!("initctl: {e}"));
            }
            e.exit_code()
        }
    }
}

/// Runs a command that talks to the init.
fn dispatch(ctx: &mut Ctx<'_>, command: Command) -> Result<i32, CtlError> {
    match command {
        Command::Status { names, json } => cmd::status::run_names(ctx, &names, json),
        Command::List { json, degraded } => cmd::list::run(ctx, json, degraded),
        Command::SetTarget {
            target,
            wait,
            timeout,
        } => cmd::set_target::run(ctx, target, wait, timeout),
        Command::Reload { unit: None } => cmd::reload::run(ctx),
        Command::Reload { unit: Some(unit) } => cmd::reload::run_unit(ctx, unit),
        Command::Reexec => cmd::reload::reexec(ctx),
        Command::Restart { unit } => cmd::restart::run(ctx, unit),
        Command::Kill {
            units,
            signal,
            main_only,
        } => cmd::kill::run(ctx, units, signal, main_only),
        Command::ResetFailed(units) => cmd::reset_failed::run(ctx, units),
        Command::Mask { unit, mask } => cmd::shape::mask(ctx, unit, mask),
        Command::SetAlternative { target, unit } => cmd::shape::set_alternative(ctx, target, unit),
        Command::Run {
            name,
            depends_on,
            argv,
        } => cmd::transient::run(ctx, name, depends_on, argv),
        Command::Add { file } => cmd::transient::add(ctx, &file),
        Command::StopTransient { name } => cmd::transient::stop(ctx, name),
        Command::Logs(ask) => cmd::logs::run(ctx, ask),
        Command::Shutdown(kind) => cmd::shutdown::run(ctx, kind),
        Command::Analyze(what) => cmd::analyze::run(ctx, what),
        Command::UnitFiles(what) => cmd::unit_files::run(ctx, what),
        Command::Systemctl(what) => cmd::systemctl::run(ctx, what),
        Command::Help(_) | Command::Version | Command::Cluster(_) => Ok(EXIT_OK),
    }
}

fn write_out(out: &mut impl Write, text: &str) -> Result<i32, CtlError> {
    out.write_all(text.as_bytes()).map_err(CtlError::output)?;
    Ok(EXIT_OK)
}
