//! `flotilla-pam`: see the library's documentation.
//!
//! No Rust `main`: the standard library's start-up sets `SIGPIPE` to be
//! ignored, and the unit's program must get the dispositions the init's
//! child left (`IgnoreSIGPIPE=`), so this program starts as C does.
#![no_main]

use flotilla_pam::args::{self, Parsed, USAGE};
use flotilla_pam::session;
use std::ffi::c_int;

#[no_mangle]
extern "C" fn main(_argc: c_int, _argv: *const *const u8) -> c_int {
    let args = match args::parse(std::env::args().skip(1)) {
        Ok(Parsed::Run(a)) => a,
        Ok(Parsed::Help) => {
            print!("{USAGE}");
            return 0;
        }
        Err(e) => {
            eprintln!("flotilla-pam: {e}\n{USAGE}");
            return 2;
        }
    };
    let failure = session::run(&args);
    eprintln!("flotilla-pam: {}", failure.message);
    c_int::from(failure.status)
}
