//! The system's locale in the manager's environment, as systemd's PID 1
//! keeps it (docs/dbus.md, "The manager's environment"): read when the
//! loop is set up (at start and after a re-exec) and again at every
//! reload, before the generators run, so that `localectl set-locale`
//! followed by `systemctl daemon-reload` shows in `show-environment` and
//! in every unit started after. The rule (the kernel command line, then
//! the files, then the default; what is not set taken out) is
//! `units/src/locale.rs`'s; here the files are read through [`Sys`].
//! Only PID 1 reads it: an init run as a supervisor keeps the environment
//! it was given, as systemd's `--user` manager passes its own on.

use super::Runtime;
use crate::sys::env::{parse_env_file, Env};
use crate::sys::{Errno, Os, Sys, SysError};
use flotilla_units::locale::{manager_locale, FileRead};
use std::path::Path;

/// The most of a locale file read (a few lines in practice).
const MAX_LOCALE_FILE: usize = 64 * 1024;

/// One locale file read and parsed as an environment file.
fn read(sys: &dyn Sys, path: &str) -> FileRead {
    let lossy = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    match sys.read_file_limited(Path::new(path), MAX_LOCALE_FILE) {
        Ok(bytes) => match parse_env_file(&bytes) {
            Ok(vars) => FileRead::Read(
                vars.into_iter()
                    .map(|(k, v)| (lossy(k), lossy(v)))
                    .collect(),
            ),
            Err(e) => FileRead::Failed(format!("{path}: {e}")),
        },
        Err(SysError::Read {
            errno: Os(Errno::ENOENT),
            ..
        }) => FileRead::Missing,
        Err(e) => FileRead::Failed(e.to_string()),
    }
}

/// Sets the locale's variables of `env` as the locale now says, taking
/// out those it does not set (`cmdline`: the kernel command line, where it
/// is read). Returns the console line when a file could not be read.
pub(super) fn apply(sys: &dyn Sys, cmdline: Option<&str>, env: &mut Env) -> Option<String> {
    let locale = manager_locale(cmdline, |p| read(sys, p));
    for name in locale.unset() {
        env.remove(name);
    }
    for (k, v) in locale.set() {
        // The names are valid and the values hold no NUL (the parser
        // refuses one).
        let _ = env.set(k, v);
    }
    locale
        .problem
        .map(|p| format!("init: {p}; no locale in the manager's environment"))
}

impl<S: Sys> Runtime<S> {
    /// Reads the locale again (a reload), as PID 1.
    pub(super) fn reread_locale(&mut self) {
        if !self.pid1 {
            return;
        }
        let cmdline = self.settings.kernel_cmdline.as_deref();
        if let Some(line) = apply(&self.sys, cmdline, &mut self.base_env) {
            self.sys.console(&line);
        }
    }
}
