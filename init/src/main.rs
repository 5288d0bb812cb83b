//! `init`: flotilla's init, as PID 1 or as a foreground supervisor.
//!
//! `main` is flags and glue: as PID 1 it hands over to
//! [`flotilla_init::pid1::main`] (see `docs/pid1.md`); otherwise it resolves
//! the settings, then either checks the unit directory (`--check`) or runs
//! the event loop until an orderly shutdown. Exit codes: 0 after an orderly
//! shutdown or a clean check; 1 for a check with errors or a loop that
//! could not start; 2 for bad flags or settings. A container's PID 1 has its
//! own (0, 1, 2, 133: `docs/pid1.md`).

use flotilla_init::args::{self, Args, Context};
use flotilla_init::loader;
use flotilla_init::sys::real::RealSys;
use flotilla_init::sys::Sys;
use flotilla_init::sys::{bind_mount, clean, generators, reexec};
use std::process::ExitCode;

mod check;

fn main() -> ExitCode {
    // As PID 1 everything is in `pid1.rs`: it never exits on a machine and
    // takes its arguments leniently (the kernel passes unknown words).
    if RealSys::new().getpid() == 1 {
        return flotilla_init::pid1::main(std::env::args().skip(1));
    }
    // The generator runner: a child the init starts (docs/generators.md).
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some(generators::RUN_FLAG) {
        return match generators::Run::parse(argv.get(1..).unwrap_or_default()) {
            Some(run) => ExitCode::from(generators::main(&run)),
            None => {
                eprintln!("init: {} OUTPUT TIMEOUT_MS DIR...", generators::RUN_FLAG);
                ExitCode::from(2)
            }
        };
    }
    // The cleaner: a child the init starts for `systemctl clean`
    // (docs/dbus.md).
    if argv.first().map(String::as_str) == Some(clean::RUN_FLAG) {
        return ExitCode::from(clean::main(argv.get(1..).unwrap_or_default()));
    }
    // The binder: a child the init starts for `systemctl bind`
    // (docs/dbus.md).
    if argv.first().map(String::as_str) == Some(bind_mount::RUN_FLAG) {
        return ExitCode::from(bind_mount::main(argv.get(1..).unwrap_or_default()));
    }
    // The unit loader: a child the init starts (docs/pid1.md).
    if argv.first().map(String::as_str) == Some(loader::RUN_FLAG) {
        return match argv.get(1..) {
            Some([job]) => ExitCode::from(loader::main(job)),
            _ => {
                eprintln!("init: {} JOB", loader::RUN_FLAG);
                ExitCode::from(2)
            }
        };
    }
    let args = match Args::parse(argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("init: {e}\n{}", args::USAGE);
            return ExitCode::from(2);
        }
    };
    if args.help {
        print!("{}", args::USAGE);
        return ExitCode::SUCCESS;
    }
    if args.version {
        println!("init (flotilla) {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    let sys = RealSys::new();
    reexec::remember_exe();
    let ctx = Context::from_env(false, sys.geteuid() == 0, None);
    let settings = match args::resolve(&args, &ctx, |p| args::read_config(&sys, p)) {
        Ok(s) => s,
        Err(errors) => {
            for e in errors {
                eprintln!("init: {e}");
            }
            return ExitCode::from(2);
        }
    };
    if args.check {
        return check::run(&sys, &settings);
    }
    let inherited = reexec::inherited();
    let mut rt = match flotilla_init::runtime::start(sys, settings, false, inherited) {
        Ok(rt) => rt,
        Err(e) => {
            sys.console(&format!("init: {e}"));
            return ExitCode::from(1);
        }
    };
    let exit = rt.run();
    let cmd = rt.cmd_status();
    rt.close();
    sys.console(&format!("init: {exit:?}: every unit stopped"));
    match cmd {
        // The command after `--`: its status is the init's.
        Some(st) => ExitCode::from(flotilla_init::cmd::exit_code(st)),
        None => ExitCode::SUCCESS,
    }
}
