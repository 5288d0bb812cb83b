//! A reload (`initctl reload`, `daemon-reload`, SIGHUP) in its stages,
//! none of which the loop waits for: systemd's generators when the config
//! runs them (`generators.rs`), then the unit loader, a child of the init
//! (`loading.rs`), then the new set handed to the planner
//! ([`Runtime::reload_from`]). Each child's exit, reaped like any child's,
//! starts the next stage; the clients that asked get the reload's reply at
//! the end, and a reload asked while one is under way joins it. The
//! journal gets systemd's `Reloading.` and `Reloading finished in N ms.`
//! about `init.scope`.

use super::{generators, loading, Runtime};
use crate::control::{ConnId, Watch};
use crate::loader::Loading;
use crate::sys::{ExitStatus, Pid, Sys};
use flotilla_units::planner::OnChange;
use flotilla_units::protocol::Reply;
use flotilla_units::time::Instant;

/// A reload under way.
#[derive(Debug)]
pub(super) struct Pending {
    /// The child it waits for.
    stage: Stage,
    /// The connections waiting for the reload's reply, with their serials
    /// (a slot is reused once its connection closes).
    waiting: Vec<(ConnId, u64)>,
    /// What becomes of changed units that are up: [`OnChange::Keep`]
    /// only when every request joined asked for it (a daemon-reload
    /// joining an `initctl reload` does not take that reload's restarts
    /// away).
    on_change: OnChange,
    /// When it began, for the journal's `Reloading finished in N ms.`
    begun: Instant,
}

/// syslog's `info`: the manager's messages about a reload.
const INFO: u8 = 6;

/// The child a reload waits for.
#[derive(Debug)]
enum Stage {
    /// The generator runner (its PID).
    Generators(Pid),
    /// The unit loader.
    Loading(Loading),
}

/// What starting a stage gave.
enum Next {
    /// Its child runs.
    Wait(Stage),
    /// The units, loaded in process (no binary to run, or it could not be
    /// started); boxed, as the set is large and the child the usual case.
    Loaded(Box<loading::Loaded>),
}

impl<S: Sys> Runtime<S> {
    /// A reload asked by `conn` (`None`: SIGHUP), doing `on_change` with
    /// changed units that are up. Returns the reply when there is one now
    /// (the units were loaded in process).
    pub(super) fn begin_reload(
        &mut self,
        conn: Option<ConnId>,
        on_change: OnChange,
    ) -> Option<Reply> {
        // As systemd's reload sets the manager's defaults before its
        // generators run: the locale read again.
        self.reread_locale();
        match self.reloading.as_mut() {
            Some(p) => {
                if on_change == OnChange::Restart {
                    p.on_change = OnChange::Restart;
                }
            }
            None => {
                // As systemd's PID 1 says it (`journalctl -u init.scope`).
                self.journal_own(INFO, "Reloading.");
                let begun = self.now();
                let stage = match self.first_stage() {
                    Next::Wait(stage) => stage,
                    Next::Loaded(loaded) => {
                        let r = self.reload_from(loaded.path, loaded.watch, on_change);
                        self.reload_finished(begun, &r);
                        return Some(r);
                    }
                };
                self.reloading = Some(Pending {
                    stage,
                    waiting: Vec::new(),
                    on_change,
                    begun,
                });
            }
        }
        if let (Some(c), Some(p)) = (conn, self.reloading.as_mut()) {
            if let Some(conn) = self.control.conn_mut(c) {
                conn.watch = Watch::Reload;
                p.waiting.push((c, conn.serial));
            }
        }
        None
    }

    /// The generators when they run, else the loader; or the units loaded
    /// in process.
    fn first_stage(&mut self) -> Next {
        if let Some(g) = &self.settings.generators {
            match generators::spawn_runner(&self.sys, g, &self.base_env) {
                Ok(pid) => return Next::Wait(Stage::Generators(pid)),
                // The units are read all the same, with the last run's
                // output.
                Err(e) => self.sys.console(&format!("init: {e}")),
            }
        }
        self.start_loader()
    }

    /// Starts the loader for a reload: the instances it makes are those
    /// still named (`instances.rs`).
    fn start_loader(&mut self) -> Next {
        let named = self.named_instances();
        match loading::start(&self.sys, &self.settings, &named) {
            Some(Ok(l)) => return Next::Wait(Stage::Loading(l)),
            Some(Err(e)) => self.sys.console(&format!("init: {e}; loading in process")),
            None => {}
        }
        let loaded = loading::in_process(&self.sys, &self.settings, &named);
        Next::Loaded(Box::new(loaded))
    }

    /// Whether `pid` is the child a reload waits for; if so, the reload
    /// goes on: after the generators the loader starts, after the loader
    /// the units it loaded are taken and every client waiting answered.
    pub(super) fn reload_child_ended(&mut self, pid: Pid, status: ExitStatus) -> bool {
        let ours = match self.reloading.as_ref().map(|p| &p.stage) {
            Some(Stage::Generators(p)) => *p == pid,
            Some(Stage::Loading(l)) => l.pid == pid,
            None => false,
        };
        if !ours {
            return false;
        }
        let Some(mut p) = self.reloading.take() else {
            return false;
        };
        let loaded = match p.stage {
            Stage::Generators(_) => match self.start_loader() {
                Next::Wait(stage) => {
                    p.stage = stage;
                    self.reloading = Some(p);
                    return true;
                }
                Next::Loaded(loaded) => *loaded,
            },
            Stage::Loading(l) => loading::finish(l, Some(status)),
        };
        let r = self.reload_from(loaded.path, loaded.watch, p.on_change);
        self.reload_finished(p.begun, &r);
        self.answer_reload(p.waiting, &r);
        true
    }

    /// systemd's `Reloading finished in N ms.` in the journal, for a
    /// reload that was taken.
    fn reload_finished(&self, begun: Instant, r: &Reply) {
        if matches!(r, Reply::Applied(_)) {
            let ms = self.now().since(begun).as_millis();
            self.journal_own(INFO, &format!("Reloading finished in {ms} ms."));
        }
    }

    /// Sends `r` to the clients `waiting` still there; with none, an error
    /// goes to the console.
    fn answer_reload(&mut self, waiting: Vec<(ConnId, u64)>, r: &Reply) {
        if let Reply::Error {
            message, details, ..
        } = r
        {
            if waiting.is_empty() {
                self.sys
                    .console(&format!("init: reload refused: {message}"));
                for d in details {
                    self.sys.console(&format!("init: {d}"));
                }
            }
        }
        for (c, serial) in waiting {
            let Some(conn) = self.control.conn_mut(c) else {
                continue;
            };
            if conn.serial != serial || conn.watch != Watch::Reload {
                continue;
            }
            conn.watch = Watch::None;
            self.reply(c, r.clone());
        }
    }
}
