//! Where the units are loaded (docs/pid1.md, "Loading the units"): in the
//! unit loader, a child of the init (`crate::loader`), when the init
//! knows its own binary; in process otherwise (the runtime's tests on the
//! fake system, which has no binary to run). At boot the init waits for
//! the child before the loop runs ([`at_boot`]); at a reload the loop goes
//! on and the child's exit, reaped like any child's, hands the units over
//! (`reloading.rs`).

use super::childwait;
use crate::args::Settings;
use crate::loader::{self, Job, Loading, Output, LIMIT};
use crate::sys::env::Env;
use crate::sys::{ExitStatus, Sys};
use crate::unitdir;
use flotilla_systemd::load::LoadedPath;
use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

/// How long past the loader's own limit the init waits for it at boot
/// before it kills it.
const GRACE: Duration = Duration::from_secs(5);

/// Starts the loader child for `settings`, making the instances `named`;
/// `None` when the init's binary is not known (then the caller loads in
/// process).
pub(super) fn start(
    sys: &dyn Sys,
    settings: &Settings,
    named: &[String],
) -> Option<Result<Loading, String>> {
    let exe = crate::sys::reexec::own_image()?;
    let job = Job::new(settings, named);
    Some(loader::spawn(sys, &exe, &job, &Env::from_current()))
}

/// A load of the search path: the units, and the watch the load added
/// what it read to (`crate::pathstamp::Seen::watched`), if it had one.
pub(super) struct Loaded {
    /// The units, or why there are none.
    pub path: Result<LoadedPath, String>,
    /// The watch ([`Loading::watch`]).
    pub watch: Option<OwnedFd>,
}

/// The units the loader `l` handed over, given how it ended (`None`: it
/// did not end within its limit and was killed), with its watch.
pub(super) fn finish(l: Loading, status: Option<ExitStatus>) -> Loaded {
    Loaded {
        watch: l.watch,
        path: outcome(l.output, status),
    }
}

/// What the loader that wrote to `output` handed over, given how it ended.
fn outcome(output: Output, status: Option<ExitStatus>) -> Result<LoadedPath, String> {
    match status {
        None => Err(format!(
            "the unit loader did not finish within {} s; killed",
            (LIMIT + GRACE).as_secs()
        )),
        Some(ExitStatus::Signaled {
            signal: libc::SIGALRM,
            ..
        }) => Err(format!(
            "the unit loader did not finish within {} s; it ended itself",
            LIMIT.as_secs()
        )),
        Some(s) if !s.success() => Err(format!("the unit loader failed: {s}")),
        Some(_) => output.read(),
    }
}

/// Loads in process, as the child does, each path added to a new watch
/// before it is read (a reload without a loader, a read on demand).
pub(super) fn in_process(sys: &dyn Sys, settings: &Settings, named: &[String]) -> Loaded {
    let watch = sys.path_stamp_instance().ok();
    let fd = watch.as_ref().map(AsFd::as_fd);
    Loaded {
        path: unitdir::load_units_watched(sys, settings, named, fd).map_err(|e| e.to_string()),
        watch,
    }
}

/// The units of the search path at boot, the target made when it is an
/// instance, and the signals that arrived while the init waited for the
/// loader. A loader that cannot be started is said on the console and the
/// units are loaded in process; one that fails or hangs is a failed load
/// (no unit, as for a units directory that cannot be read), which the init
/// survives.
pub(super) fn at_boot(sys: &dyn Sys, settings: &Settings) -> (Loaded, Vec<i32>) {
    let named = [settings.target.clone()];
    match start(sys, settings, &named) {
        None => (in_process(sys, settings, &named), Vec::new()),
        Some(Err(e)) => {
            sys.console(&format!("init: {e}; loading in process"));
            (in_process(sys, settings, &named), Vec::new())
        }
        Some(Ok(l)) => {
            let waited = childwait::wait_for(sys, l.pid, LIMIT + GRACE);
            (finish(l, waited.status), waited.signals)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::loader::{write, Output};

    fn wrote(loaded: &Result<LoadedPath, String>) -> Loading {
        let output = Output::new().unwrap();
        write(output.try_clone_file().unwrap(), loaded).unwrap();
        Loading {
            pid: 4242,
            output,
            watch: None,
        }
    }

    #[test]
    fn how_the_loader_ended_decides() {
        let ok = Ok(LoadedPath::default());
        let path = |l, status| finish(l, status).path;
        assert_eq!(path(wrote(&ok), Some(ExitStatus::Exited(0))), ok);
        let failed = Err("cannot list /u: No such file or directory".to_string());
        assert_eq!(path(wrote(&failed), Some(ExitStatus::Exited(0))), failed);
        // What a loader that did not end well wrote is not read.
        let cases = [
            (None, "the unit loader did not finish within 65 s; killed"),
            (
                Some(ExitStatus::Signaled {
                    signal: libc::SIGALRM,
                    core_dumped: false,
                }),
                "the unit loader did not finish within 60 s; it ended itself",
            ),
            (
                Some(ExitStatus::Signaled {
                    signal: libc::SIGSEGV,
                    core_dumped: true,
                }),
                "the unit loader failed: killed by SIGSEGV (core dumped)",
            ),
            (
                Some(ExitStatus::Exited(1)),
                "the unit loader failed: exited with status 1",
            ),
        ];
        for (status, said) in cases {
            assert_eq!(path(wrote(&ok), status), Err(said.to_string()));
        }
    }
}
