//! `init`: flotilla's init, as PID 1 or as a foreground supervisor.
//!
//! `main` is flags and glue: resolve the settings, then either check the
//! unit directory (`--check`) or run the event loop until an orderly
//! shutdown. Exit codes: 0 after an orderly shutdown or a clean check; 1 for
//! a check with errors; 2 for bad flags or settings.

use flotilla_init::args::{self, Args, Context};
use flotilla_init::runtime::{console, Runtime};
use flotilla_init::sys::real::RealSys;
use flotilla_init::sys::Sys;
use std::process::ExitCode;

mod check;

fn main() -> ExitCode {
    let args = match Args::parse(std::env::args().skip(1)) {
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
    let pid1 = sys.getpid() == 1;
    let ctx = Context {
        pid1,
        root: nix::unistd::geteuid().is_root(),
        env_control: std::env::var_os("INIT_CONTROL")
            .filter(|v| !v.is_empty())
            .map(Into::into),
        xdg_runtime_dir: std::env::var_os("XDG_RUNTIME_DIR")
            .filter(|v| !v.is_empty())
            .map(Into::into),
        cmdline: if pid1 {
            std::fs::read_to_string("/proc/cmdline").ok()
        } else {
            None
        },
    };
    let settings = match args::resolve(&args, &ctx, |p| std::fs::read_to_string(p)) {
        Ok(s) => s,
        Err(errors) => {
            for e in errors {
                eprintln!("init: {e}");
            }
            return ExitCode::from(2);
        }
    };
    if args.check {
        return check::run(&settings);
    }
    let mut rt = match Runtime::new(sys, settings, pid1) {
        Ok(rt) => rt,
        Err(e) => {
            console(&format!("init: {e}"));
            return ExitCode::from(1);
        }
    };
    let exit = rt.run();
    rt.close();
    console(&format!("init: {exit:?}: every unit stopped"));
    ExitCode::SUCCESS
}
