//! The control requests: who may ask what, and each request's reply. The
//! framing and buffering of the socket is `control.rs`'s; changes to the
//! unit set are `unitset.rs`'s.

use super::reports::log_replies;
use super::{kind_name, Runtime};
use crate::control::{ConnId, Incoming, Watch};
use crate::sys::Sys;
use flotilla_units::planner::{Fact, OnChange, ReloadError, RestartError};
use flotilla_units::protocol::{
    AnalyzeData, BadRequest, Edge, ErrorCode, LogSource, Reply, Request, UnitTiming,
};
use flotilla_units::spec::Signal;

impl<S: Sys> Runtime<S> {
    /// Answers one request.
    pub(super) fn on_request(&mut self, inc: Incoming) {
        let c = inc.conn;
        // Its connection closed after the request was read (a subscriber
        // or the log writer gone, a reset, output past its bound), and the
        // slot may hold a client accepted later in the turn: that one
        // must get no reply it did not ask for, and lend the request
        // neither its credentials nor its place as the log writer.
        if !self.control.is_open(c, inc.serial) {
            return;
        }
        let env = match inc.request {
            Ok(e) => e,
            Err(bad) => {
                let code = match bad {
                    BadRequest::UnsupportedVersion(_) => ErrorCode::UnsupportedVersion,
                    BadRequest::Malformed(_) => ErrorCode::BadRequest,
                };
                self.reply(c, Reply::error(code, bad.to_string()));
                return;
            }
        };
        let uid = self.control.conn(c).map_or(u32::MAX, |x| x.uid);
        if env.request.is_mutating() && uid != 0 && uid != self.sys.geteuid() {
            self.reply(
                c,
                Reply::error(
                    ErrorCode::PermissionDenied,
                    format!("uid {uid} may not change the system; ask root"),
                ),
            );
            return;
        }
        // The log writer goes on during a shutdown: the last lines of the
        // system are for it.
        if self.shutdown.is_some()
            && env.request.is_mutating()
            && !matches!(
                env.request,
                Request::Shutdown { .. } | Request::LogPull { .. }
            )
        {
            self.reply(
                c,
                Reply::error(ErrorCode::NotPossible, "the system is shutting down"),
            );
            return;
        }
        match env.request {
            Request::Status { name: None } => {
                let s = self.system_status();
                self.reply(c, Reply::Status(s));
            }
            Request::Status { name: Some(n) } => {
                let g = self.planner.graph();
                let id = g
                    .unit(&n)
                    .filter(|&i| self.is_listed(i))
                    .or_else(|| g.provider(&n));
                let found = id
                    .and_then(|i| self.unit_status_with_usage(i))
                    .map(|s| self.with_slice_dir(s));
                let r = match found.or_else(|| self.slice_status(&n)) {
                    Some(s) => Reply::Unit(s),
                    None => Reply::error(
                        ErrorCode::UnknownUnit,
                        format!("no unit or target named `{n}`"),
                    ),
                };
                self.reply(c, r);
            }
            Request::List => {
                let mut units = self.all_units();
                // The declared targets (config `targets:`), each a row too.
                let g = self.planner.graph();
                let declared: Vec<_> = g.node_ids().skip(g.unit_count()).collect();
                units.extend(declared.into_iter().filter_map(|i| self.unit_status(i)));
                self.reply(c, Reply::List { units });
            }
            Request::SetTarget {
                target,
                wait,
                isolate,
            } => self.set_target(c, target, wait, isolate),
            Request::Reload { keep_running } => {
                let on_change = if keep_running {
                    OnChange::Keep
                } else {
                    OnChange::Restart
                };
                if let Some(r) = self.begin_reload(Some(c), on_change) {
                    self.reply(c, r);
                }
            }
            Request::Reexec => self.reexec(c),
            Request::Restart { unit } => {
                let r = self.restart(&unit);
                self.reply(c, r);
            }
            Request::ReloadUnit { unit } => {
                let r = self.reload_unit(&unit);
                self.reply(c, r);
            }
            Request::ResetFailed { unit } => {
                let r = self.reset_failed(unit.as_deref());
                self.reply(c, r);
            }
            Request::Clean { unit, what } => {
                if let Some(r) = self.clean(c, &unit, &what) {
                    self.reply(c, r);
                }
            }
            Request::BindMount {
                unit,
                source,
                destination,
                read_only,
                mkdir,
            } => {
                let asked = super::binding::Asked {
                    unit: &unit,
                    source: &source,
                    destination: &destination,
                    read_only,
                    mkdir,
                };
                if let Some(r) = self.bind_mount(c, &asked) {
                    self.reply(c, r);
                }
            }
            Request::Freeze { unit, thaw } => {
                if let Some(r) = self.freeze(c, &unit, thaw) {
                    self.reply(c, r);
                }
            }
            Request::Attach {
                unit,
                subcgroup,
                pids,
                uid,
            } => {
                let r = self.attach(&unit, &subcgroup, &pids, uid);
                self.reply(c, r);
            }
            Request::KillUnit {
                unit,
                signal,
                main_only,
            } => {
                let r = self.kill_unit(&unit, signal, main_only);
                self.reply(c, r);
            }
            Request::BusNames {
                owned,
                released,
                whole,
            } => {
                let message = format!(
                    "{} bus names owned, {} released",
                    owned.len(),
                    released.len()
                );
                self.fact(Fact::BusNames {
                    owned,
                    released,
                    whole,
                });
                self.reply(c, Reply::Accepted { message });
            }
            Request::Logs {
                unit,
                lines,
                follow,
                source,
            } => self.logs(c, &unit, lines, follow, source),
            Request::Shutdown { kind } => {
                self.reply(
                    c,
                    Reply::Accepted {
                        message: format!("{} in progress", kind_name(kind)),
                    },
                );
                self.begin_shutdown(kind, "requested");
            }
            Request::Analyze => {
                let a = self.analyze();
                self.reply(c, Reply::Analyze(a));
            }
            Request::Security { name } => {
                let r = self.security(name.as_deref());
                self.reply(c, r);
            }
            Request::TransientApply { set, units } => {
                let r = self.apply_transient(set, units);
                self.reply(c, r);
            }
            Request::TransientPatch {
                set,
                upsert,
                remove,
            } => {
                let r = self.patch_transient(set, upsert, remove);
                self.reply(c, r);
            }
            Request::TransientLease {
                set,
                stop_at,
                kill_at,
                units,
            } => {
                let r = self.lease_transient(set, stop_at, kill_at, units);
                self.reply(c, r);
            }
            Request::Mask { unit } => {
                let r = self.mask(&unit);
                self.reply(c, r);
            }
            Request::Unmask { unit } => {
                let r = self.unmask(&unit);
                self.reply(c, r);
            }
            Request::TransientAdd {
                unit,
                adopt,
                stdio,
                aux,
                file,
            } => {
                let r = self.add_transient(*unit, aux, adopt, file, (&stdio, inc.fds));
                self.reply(c, r);
            }
            Request::StopTransient { name } => {
                let r = self.stop_transient(&name);
                self.reply(c, r);
            }
            Request::Load { unit } => {
                let r = self.load(&unit);
                self.reply(c, r);
            }
            Request::Want { unit } => {
                let r = self.want(&unit, false);
                self.reply(c, r);
            }
            Request::StartAtOnce { unit } => {
                let r = self.want(&unit, true);
                self.reply(c, r);
            }
            Request::Unwant { unit } => {
                let r = self.unwant(&unit);
                self.reply(c, r);
            }
            Request::SetAlternative { target, unit } => {
                let r = self.set_alternative(&target, &unit);
                self.reply(c, r);
            }
            Request::SetLog { level, target } => {
                let r = self.set_log(level, target);
                self.reply(c, r);
            }
            Request::SetEnvironment { unset, set } => {
                let r = self.set_environment(&unset, &set);
                self.reply(c, r);
            }
            Request::SetServiceWatchdogs { on } => {
                let r = self.set_service_watchdogs(on);
                self.reply(c, r);
            }
            Request::Subscribe => {
                if let Some(conn) = self.control.conn_mut(c) {
                    conn.watch = Watch::Changes;
                }
            }
            Request::LogPull {
                ack,
                retry,
                max_bytes,
                leaving,
            } => self.log_pull(c, ack, retry, max_bytes, leaving),
        }
        self.drive();
    }

    pub(super) fn reply(&mut self, c: ConnId, r: Reply) {
        self.control.send(c, &r, &self.sys);
    }

    fn set_target(&mut self, c: ConnId, target: String, wait: bool, isolate: bool) {
        if let Err(e) = self.instantiate(&target) {
            self.reply(c, Reply::error(ErrorCode::UnknownTarget, e));
            return;
        }
        let g = self.planner.graph();
        let allowed = g
            .provider(&target)
            .is_none_or(|p| g.node(p).spec.extras.allow_isolate == Some(true));
        if isolate && !allowed {
            let why = format!(
                "`{target}` may not be isolated (its unit does not say AllowIsolate=yes); \
                 `initctl set-target {target}` switches to it"
            );
            self.reply(c, Reply::error(ErrorCode::NotPossible, why));
            return;
        }
        let now = self.now();
        if self.planner.set_target(&target, now).is_err() {
            self.reply(
                c,
                Reply::error(
                    ErrorCode::UnknownTarget,
                    format!("no unit provides the target `{target}`"),
                ),
            );
            return;
        }
        self.sys.console(&format!("init: target set to {target}"));
        self.settled = false;
        if !wait {
            self.reply(
                c,
                Reply::Accepted {
                    message: format!("switching to target {target}"),
                },
            );
            return;
        }
        if let Some(conn) = self.control.conn_mut(c) {
            conn.watch = Watch::Target(target.clone());
        }
        self.drive();
        self.control
            .send(c, &Reply::Progress(self.progress()), &self.sys);
        self.settle_if_done(c, &target);
    }

    fn restart(&mut self, unit: &str) -> Reply {
        // What the restart pulls in that appeared on the path since the
        // last reload; an error there leaves the unit to the planner's
        // answer (an unknown name is one).
        if let Err(e) = self.load_on_demand(unit) {
            self.sys.console(&format!("init: restart {unit}: {e}"));
        }
        let now = self.now();
        match self.planner.restart(unit, now) {
            Ok(_) => Reply::Accepted {
                message: format!("restarting {unit}"),
            },
            Err(RestartError::UnknownUnit(u)) => {
                Reply::error(ErrorCode::UnknownUnit, format!("no unit named `{u}`"))
            }
            Err(RestartError::NotRequired(u)) => Reply::error(
                ErrorCode::NotPossible,
                format!(
                    "`{u}` is not required by the target `{}`",
                    self.planner.target()
                ),
            ),
            Err(RestartError::ShuttingDown) => {
                Reply::error(ErrorCode::NotPossible, "shutting down")
            }
        }
    }

    fn reload_unit(&mut self, unit: &str) -> Reply {
        let now = self.now();
        match self.planner.reload_unit(unit, now) {
            Ok(_) => Reply::Accepted {
                message: format!("reloading {unit}"),
            },
            Err(ReloadError::UnknownUnit(u)) => {
                Reply::error(ErrorCode::UnknownUnit, format!("no unit named `{u}`"))
            }
            Err(ReloadError::NotRunning(u)) => {
                Reply::error(ErrorCode::NotPossible, format!("`{u}` is not running"))
            }
            Err(ReloadError::NoReloadCommand(u)) => {
                Reply::error(ErrorCode::NotPossible, format!("`{u}` has no exec-reload"))
            }
        }
    }

    fn reset_failed(&mut self, unit: Option<&str>) -> Reply {
        // A failed unit of the run set (`initctl run`, `systemd-run`) ran
        // once and failed: reset, it leaves the set, as systemd lets such a
        // unit go, rather than run again as a unit of the set would.
        let g = self.planner.graph();
        let done: Vec<String> = g
            .ids()
            .filter(|&i| self.planner.state(i) == flotilla_units::state::UnitState::Failed)
            .map(|i| g.node(i).spec.name.clone())
            .filter(|n| unit.is_none_or(|u| u == n) && self.is_run(n))
            .collect();
        let gone = done.len();
        if gone > 0 {
            if let Reply::Error { message, .. } = self.drop_runs(done) {
                return Reply::error(ErrorCode::NotPossible, message);
            }
            if unit.is_some() {
                return Reply::Accepted {
                    message: "1 failed unit(s) reset".to_string(),
                };
            }
        }
        let now = self.now();
        match self.planner.reset_failed_units(unit, now) {
            Some(n) => Reply::Accepted {
                message: format!("{} failed unit(s) reset", n + gone),
            },
            None => Reply::error(
                ErrorCode::UnknownUnit,
                format!("no unit named `{}`", unit.unwrap_or_default()),
            ),
        }
    }

    fn kill_unit(&mut self, unit: &str, signal: i32, main_only: bool) -> Reply {
        let Some(id) = self.planner.graph().unit(unit) else {
            return Reply::error(ErrorCode::UnknownUnit, format!("no unit named `{unit}`"));
        };
        if !(1..=64).contains(&signal) {
            return Reply::error(
                ErrorCode::Invalid,
                format!("{signal} is not a signal number"),
            );
        }
        let signal = Signal(signal);
        let main = self.planner.view(id).and_then(|v| v.pid);
        if self.kill_processes(id, main, signal, main_only) {
            Reply::Accepted {
                message: format!("sent {} to {unit}", signal.name()),
            }
        } else {
            Reply::error(
                ErrorCode::NotPossible,
                format!("`{unit}` has no process to send {} to", signal.name()),
            )
        }
    }

    fn logs(&mut self, c: ConnId, unit: &str, lines: Option<usize>, follow: bool, source: bool) {
        // A unit's I/O goes with it (see `Slots::renumber`).
        let Some(id) = self.planner.graph().unit(unit) else {
            self.reply(
                c,
                Reply::error(ErrorCode::UnknownUnit, format!("no unit named `{unit}`")),
            );
            return;
        };
        if source {
            let (stream, persisted, next, first) = match self.slots.io(id) {
                Some(io) => (
                    self.feed.stream(io.log.id()),
                    io.log.persisted(),
                    io.log.next_seq(),
                    io.log.next_seq() - io.log.len() as u64,
                ),
                None => (String::new(), 0, 1, 1),
            };
            let dir = self.settings.log_dir.as_ref();
            let reply = Reply::LogSource(LogSource {
                dir: dir.map(|d| d.display().to_string()),
                stream,
                persisted,
                first,
                next,
            });
            self.reply(c, reply);
        }
        let (out, next) = match self.slots.io(id) {
            Some(io) => {
                let mut tail = io.log.last(lines.unwrap_or(usize::MAX));
                // A client that asked where the older lines are counts
                // what is in neither place itself.
                if source {
                    tail.missed = 0;
                }
                (log_replies(tail).0, io.log.next_seq())
            }
            None => (Vec::new(), 1),
        };
        for l in out {
            self.reply(c, Reply::Log(l));
        }
        if follow {
            if let Some(conn) = self.control.conn_mut(c) {
                conn.watch = Watch::Logs {
                    unit: unit.to_string(),
                    next,
                };
            }
        } else {
            self.reply(c, Reply::LogEnd);
        }
    }

    fn analyze(&self) -> AnalyzeData {
        let g = self.planner.graph();
        let units = g
            .ids()
            .filter(|&i| !g.node(i).ghost)
            .filter_map(|i| {
                let n = g.node(i);
                let v = self.planner.view(i)?;
                Some(UnitTiming {
                    unit: n.spec.name.clone(),
                    kind: n.spec.kind,
                    state: v.state,
                    provides: n.spec.provides.to_vec(),
                    deps: g
                        .named_deps(i)
                        .map(|d| Edge {
                            kind: d.kind,
                            target: d.target.to_string(),
                            provider: d.provider.map(|p| g.node(p).spec.name.clone()),
                        })
                        .collect(),
                    required: v.required,
                    start_ms: v.start_at.map(|t| self.ms_of(t)),
                    active_ms: v.active_at.map(|t| self.ms_of(t)),
                    end_ms: v.end_at.map(|t| self.ms_of(t)),
                })
            })
            .collect();
        let (set, active) = self.planner.target_times();
        AnalyzeData {
            target: self.planner.target().to_string(),
            target_set_ms: self.ms_of(set),
            target_active_ms: active.map(|t| self.ms_of(t)),
            now_ms: self.ms_of(self.now()),
            units,
        }
    }
}
