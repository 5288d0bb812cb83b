//! When the init runs systemd's generators (docs/generators.md): at boot,
//! before it reads the units ([`boot`]: the loop does not run yet, so the
//! init waits for the runner, as systemd's PID 1 waits for its
//! generators), and at every reload (`initctl reload`, `daemon-reload`,
//! SIGHUP: the runner is started, the loop goes on, and the units are read
//! again when its exit is reaped; the clients that asked get the reload's
//! reply then). The runner itself is `crate::sys::generators`.

use super::Runtime;
use crate::args::Generators;
use crate::control::{ConnId, Watch};
use crate::sys::conditions::{first_boot_at_start, Machine};
use crate::sys::env::Env;
use crate::sys::events::Event;
use crate::sys::generators::{Run, RUN_FLAG};
use crate::sys::{Pid, SpawnRequest, Stdio, Sys};
use flotilla_units::load::generators::{env, Facts};
use flotilla_units::protocol::Reply;
use flotilla_units::systemd::ConditionFacts;
use std::time::Duration;

/// A run under way at a reload.
#[derive(Debug)]
pub(super) struct Pending {
    /// The runner's PID.
    pid: Pid,
    /// The connections waiting for the reload's reply, with their serials
    /// (a slot is reused once its connection closes).
    waiting: Vec<(ConnId, u64)>,
}

/// How long past the generators' own limit the init waits for the runner
/// at boot before it kills it: the runner kills them at their limit and
/// then exits at once.
const RUNNER_GRACE: Duration = Duration::from_secs(5);

/// Starts the runner for `g` with `base` (the environment units start
/// from) and systemd's variables for generators.
fn spawn_runner(sys: &dyn Sys, g: &Generators, base: &Env) -> Result<Pid, String> {
    let exe = crate::sys::reexec::exe()
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
    let deadline = sys.monotonic_now().after(g.timeout + RUNNER_GRACE);
    let mut signals = Vec::new();
    let mut events = Vec::new();
    loop {
        while let Ok(Some((p, _))) = sys.wait_any() {
            if p == pid {
                return signals;
            }
        }
        let now = sys.monotonic_now();
        if now >= deadline {
            sys.console("init: the generator runner did not end; killed");
            let _ = sys.kill(pid, libc::SIGKILL);
            return signals;
        }
        events.clear();
        if sys.wait(&mut events, Some(deadline.since(now))).is_err() {
            continue;
        }
        for ev in &events {
            if let Event::Signal(s) = *ev {
                if s != libc::SIGCHLD {
                    signals.push(s);
                }
            }
        }
    }
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

impl<S: Sys> Runtime<S> {
    /// A reload asked by `conn` (`None`: SIGHUP): with generators, they run
    /// first and the reload follows their end ([`Runtime::generators_done`]);
    /// without, it happens now. Returns the reply when there is one now.
    pub(super) fn reload_with_generators(&mut self, conn: Option<ConnId>) -> Option<Reply> {
        let Some(g) = self.settings.generators.clone() else {
            return Some(self.reload());
        };
        if self.gens.is_none() {
            match spawn_runner(&self.sys, &g, &self.base_env) {
                Ok(pid) => {
                    self.gens = Some(Pending {
                        pid,
                        waiting: Vec::new(),
                    })
                }
                Err(e) => {
                    // The units are read all the same, with the last
                    // run's output.
                    self.sys.console(&format!("init: {e}"));
                    return Some(self.reload());
                }
            }
        }
        if let (Some(c), Some(p)) = (conn, self.gens.as_mut()) {
            if let Some(conn) = self.control.conn_mut(c) {
                conn.watch = Watch::Reload;
                p.waiting.push((c, conn.serial));
            }
        }
        None
    }

    /// Whether `pid` is the generator runner of a reload; if so, its run
    /// has ended: the units are read again and every client waiting is
    /// answered.
    pub(super) fn generators_done(&mut self, pid: Pid) -> bool {
        if self.gens.as_ref().is_none_or(|p| p.pid != pid) {
            return false;
        }
        let Some(p) = self.gens.take() else {
            return false;
        };
        let r = self.reload();
        if let Reply::Error {
            message, details, ..
        } = &r
        {
            if p.waiting.is_empty() {
                self.sys
                    .console(&format!("init: reload refused: {message}"));
                for d in details {
                    self.sys.console(&format!("init: {d}"));
                }
            }
        }
        for (c, serial) in p.waiting {
            let Some(conn) = self.control.conn_mut(c) else {
                continue;
            };
            if conn.serial != serial || conn.watch != Watch::Reload {
                continue;
            }
            conn.watch = Watch::None;
            self.reply(c, r.clone());
        }
        true
    }
}
