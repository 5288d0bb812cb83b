//! `flotilla-logd`: see the library's documentation.

use flotilla_logd::args::{self, USAGE};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = match args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("flotilla-logd: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if args.help {
        print!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let Some(control) = flotilla_client::control_path(args.control) else {
        eprintln!("flotilla-logd: no control socket: give --control, or set INIT_CONTROL");
        return ExitCode::from(2);
    };
    match flotilla_logd::writer::run(&control, args.rotation) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("flotilla-logd: {e}");
            ExitCode::FAILURE
        }
    }
}
