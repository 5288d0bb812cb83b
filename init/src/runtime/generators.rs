//! When the init runs systemd's generators (docs/generators.md): at boot,
//! before it reads the units ([`boot`]: the loop does not run yet, so the
//! init waits for the runner, as systemd's PID 1 waits for its
//! generators), and at every reload (`initctl reload`, `daemon-reload`,
//! SIGHUP: the runner is started, the loop goes on, and the units are read
//! again when its exit is reaped, `reloading.rs`). The runner itself is
//! `crate::sys::generators`.

use super::childwait;
use crate::args::Generators;
use crate::sys::conditions::{first_boot_at_start, Machine};
use crate::sys::env::Env;
use crate::sys::generators::{Run, RUN_FLAG};
use crate::sys::{Pid, SpawnRequest, Stdio, Sys};
use flotilla_systemd::load::generators::{env, Facts};
use flotilla_units::condition::ConditionFacts;
use std::time::Duration;

/// How long past the generators' own limit the init waits for the runner
/// at boot before it kills it: the runner kills them at their limit and
/// then exits at once.
const RUNNER_GRACE: Duration = Duration::from_secs(5);

/// Starts the runner for `g` with `base` (the environment units start
/// from) and systemd's variables for generators.
pub(super) fn spawn_runner(sys: &dyn Sys, g: &Generators, base: &Env) -> Result<Pid, String> {
    let exe = crate::sys::reexec::own_image()
        .ok_or_else(|| format!("cannot run the generators ({RUN_FLAG}): own binary unknown"))?;
    let run = Run {
        output: g.output.clone(),
        timeout: g.timeout,
        dirs: g.dirs.clone(),
    };
    let argv = run.argv(&exe);
    let machine = Machine;
    let facts = Facts {
        in_initrd: std::path::Path::new("/etc/initrd-release").exists(),
        first_boot: Some(first_boot_at_start()),
        virtualization: machine.virtualization(),
        architecture: machine.architecture(),
    };
    let mut e = base.clone();
    e.remove("INIT_CONTROL");
    for (k, v) in env(&facts) {
        let _ = e.set(&k, &v);
    }
    let mut req = SpawnRequest::new(&argv, &e);
    req.stdout = Stdio::Inherit;
    req.stderr = Stdio::Inherit;
    sys.spawn(&req)
        .map_err(|e| format!("cannot run the generators: {e}"))
}

/// Runs the generators at boot, before the units are read, and waits for
/// them (at most their limit and a grace; then the runner is killed and
/// the boot goes on with what they wrote). The event queue is open:
/// other children that end meanwhile are reaped (none are the init's
/// units yet), and the signals that arrive are returned to be handled once
/// the loop is set up.
pub(super) fn boot(sys: &dyn Sys, g: &Generators) -> Vec<i32> {
    let base = boot_env();
    let pid = match spawn_runner(sys, g, &base) {
        Ok(p) => p,
        Err(e) => {
            sys.console(&format!("init: {e}"));
            return Vec::new();
        }
    };
    let waited = childwait::wait_for(sys, pid, g.timeout + RUNNER_GRACE);
    if waited.status.is_none() {
        sys.console("init: the generator runner did not end; killed");
    }
    waited.signals
}

/// The environment the generators start from at boot: the init's own, as
/// the units get it.
fn boot_env() -> Env {
    let mut e = Env::from_current();
    for k in [
        "NOTIFY_SOCKET",
        "LISTEN_FDS",
        "LISTEN_FDNAMES",
        "LISTEN_PID",
    ] {
        e.remove(k);
    }
    e
}
