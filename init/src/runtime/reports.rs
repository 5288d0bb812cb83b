//! Telling what changed: the console lines (`[  OK  ] started web`), the
//! notes in each unit's log, and the watchers of the control socket
//! (`subscribe`, `set-target --wait`, `logs -f`); and the status views
//! the replies are made of.
//!
//! A target switch has settled when the target is active or failed *and*
//! every unit outside its set has stopped: `set-target --wait` waits for
//! both, as `systemctl isolate` waits for its stop jobs.

use super::Runtime;
use crate::control::{ConnId, Watch};
use crate::logbuf::Tail;
use crate::outpipe::Stream;
use crate::sys::Sys;
use flotilla_units::context::limits::{Rlimit, RlimitValue};
use flotilla_units::context::slice;
use flotilla_units::graph::UnitId;
use flotilla_units::loglevel::LogLevel;
use flotilla_units::protocol::{
    LogLine, Progress, Reply, ShutdownKind, SystemStatus, UnitStatus, PROGRESS_NAMES,
};
use flotilla_units::spec::{Runs, UnitAction};
use flotilla_units::state::UnitState;
use flotilla_units::time::Instant;
use std::collections::BTreeMap;

/// The console line for a unit that went from `last` to `now`, if the
/// change is worth one, with its level: a failure is an error, the rest
/// is information (written at the default level, `info`).
fn console_line(unit: &str, last: UnitState, st: &UnitStatus) -> Option<(LogLevel, String)> {
    let level = match st.state {
        UnitState::Failed => LogLevel::Err,
        _ => LogLevel::Info,
    };
    let line = match st.state {
        UnitState::Running | UnitState::Exited if !last.is_active() => {
            if st.not_applied.is_empty() {
                Some(format!("[  OK  ] started {unit}"))
            } else {
                let names: Vec<&str> = st.not_applied.iter().map(|n| n.setting.as_str()).collect();
                Some(format!(
                    "[  OK  ] started {unit} (not applied: {}; see initctl status {unit})",
                    names.join(", ")
                ))
            }
        }
        UnitState::Failed => Some(format!("[FAILED] {unit}: {}", st.status)),
        UnitState::Stopping if last.is_active() || last == UnitState::Starting => {
            Some(format!("[  ..  ] stopping {unit}"))
        }
        UnitState::Disabled if last != UnitState::Waiting => {
            Some(format!("[  OK  ] stopped {unit}"))
        }
        UnitState::Starting => Some(format!("[  ..  ] starting {unit}")),
        _ => None,
    };
    line.map(|l| (level, l))
}

/// Whether a unit in `state` has processes (or is about to): anything but
/// `disabled`, `waiting`, `exited` and `failed`.
pub(super) fn has_processes(state: UnitState) -> bool {
    matches!(
        state,
        UnitState::Starting | UnitState::Running | UnitState::Reloading | UnitState::Stopping
    )
}

impl<S: Sys> Runtime<S> {
    /// An instant as RFC 3339 wall time.
    pub(super) fn wall_of(&self, t: Instant) -> String {
        self.wall.wall_of(t).rfc3339()
    }

    /// An instant as milliseconds since the init started.
    pub(super) fn ms_of(&self, t: Instant) -> u64 {
        t.since(self.mono0).as_millis() as u64
    }

    /// The name of unit `u`.
    pub(super) fn unit_name(&self, u: UnitId) -> String {
        self.planner
            .graph()
            .get(u)
            .map(|n| n.spec.name.clone())
            .unwrap_or_default()
    }

    /// A note from the init about a unit, in its log.
    pub(super) fn unit_note(&mut self, unit: UnitId, text: &str) {
        let wall = self.sys.wall_now();
        if let Some(io) = self.slots.io_mut(unit) {
            io.log.push_text(wall, Stream::Init, text.as_bytes(), false);
            if let Some(slot) = self.slots.id_of(unit) {
                self.queue_log(slot);
            }
        }
    }

    /// The status of unit `id`.
    pub(super) fn unit_status(&self, id: UnitId) -> Option<UnitStatus> {
        let node = self.planner.graph().get(id)?;
        let v = self.planner.view(id)?;
        let now = self.now();
        Some(UnitStatus {
            unit: node.spec.name.clone(),
            kind: node.spec.kind,
            state: v.state,
            degraded: v.degraded,
            pid: v.pid,
            provides: node.spec.provides.to_vec(),
            coincidental: self.planner.coincidental(id),
            restarts: v.restarts,
            blocked_by: v.blocked_by,
            status: v.status,
            since: self.wall_of(v.since),
            description: node.spec.description.clone(),
            required: v.required,
            // A ghost is masked by the file that replaced its own.
            source: match self.planner.graph().shape().masks.get(&node.spec.name) {
                Some(m) if node.ghost => m.path().display().to_string(),
                _ => node.origin.file.clone(),
            },
            restart_in_ms: v.restart_at.map(|t| t.since(now).as_millis() as u64),
            masked: node.masked,
            not_found: node.not_found(),
            providers: self.planner.target_view(id).map(|t| {
                flotilla_units::protocol::TargetProviders {
                    mode: t.mode,
                    units: t.providers,
                    chosen: t.chosen,
                    why: t.why,
                }
            }),
            usage: None,
            dependencies: None,
            mount: None,
            device: self.devices.link(&node.spec.name),
            limits: Default::default(),
            exec: None,
            settings: None,
            skipped: v.skipped,
            listening: self.listening(id),
            activates: node
                .spec
                .kind
                .is_trigger()
                .then(|| node.spec.extras.triggers.first().cloned())
                .flatten(),
            connections: node.spec.socket().filter(|s| s.accept).map(|_| {
                let (now, accepted) = self.accepts.counts(&node.spec.name);
                flotilla_units::protocol::Connections { now, accepted }
            }),
            timer: self.planner.timer_times(id).map(|(next, last)| {
                flotilla_units::protocol::TimerTimes {
                    next_elapse_usec: next,
                    last_trigger_usec: last,
                }
            }),
            not_applied: match node.spec.kind.row().holds_units {
                true => slice::limits_not_applied(&node.spec.extras.context.resources),
                false => self
                    .slots
                    .get(id)
                    .and_then(|s| s.run.as_deref())
                    .map_or_else(Vec::new, |r| r.not_applied()),
            },
            dropping_lines: self
                .slots
                .get(id)
                .and_then(|s| s.io.as_deref())
                .and_then(|io| io.limiter.dropping(now, io.limit)),
            result: v.failure.map(|(kind, _)| kind),
            exit_status: v.failure.and_then(|(_, exit)| exit),
            reload_result: v.reload_failure,
            activation: self.planner.activated_by(id).map_or_else(Vec::new, |a| {
                a.pairs()
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect()
            }),
            ended: v.state == flotilla_units::state::UnitState::Exited
                && node.spec.kind.row().runs != flotilla_units::spec::Runs::Nothing
                && !node.spec.kind.is_trigger()
                && !node.spec.kind.row().adopts()
                && !node.spec.remain_after_exit(),
            can_clean: Vec::new(),
            cleaning: self.is_cleaning(&node.spec.name),
            freezer: self.freezer_shown(id),
            can_freeze: false,
            documentation: Vec::new(),
            memory_max: None,
            files_stamp: 0,
        })
    }

    /// The status of unit `id` with what it uses now (its cgroup's
    /// counters: a few reads of kernel memory, for one unit when asked)
    /// and its dependencies (for one unit only: lists stay small).
    pub(super) fn unit_status_with_usage(&self, id: UnitId) -> Option<UnitStatus> {
        let mut st = self.unit_status(id)?;
        let g = self.planner.graph();
        // An alias (`b1.service`, a link to `b.service`) by its unit's
        // name, as systemd shows it; a YAML unit's targets as written.
        let id_of = |name: &str| {
            g.provider(name)
                .map(|p| &g.node(p).spec.name)
                .filter(|p| p.contains('.') && name.contains('.'))
                .map_or_else(|| name.to_string(), |p| p.clone())
        };
        st.can_freeze = self.can_freeze(id);
        if let Some(n) = g.get(id) {
            use flotilla_units::context::resources::Amount;
            // The bus compares it with the files on disk now: the init
            // only says what it read (`flotilla_units::load::files_stamp`).
            st.files_stamp = n.origin.files;
            st.documentation = n.spec.extras.documentation.to_vec();
            st.mount = n.spec.extras.mount.as_deref().cloned();
            st.memory_max = match n.spec.extras.context.resources.memory_max {
                Some(Amount::Absolute(b)) => Some(b),
                _ => None,
            };
        }
        st.dependencies = g
            .get(id)
            .map(|n| flotilla_units::protocol::Dependencies::of(&n.spec, &n.origin).renamed(id_of));
        if let Some(n) = self.planner.graph().get(id) {
            st.can_clean = flotilla_units::context::clean::can_clean(
                &n.spec.extras.context.directories,
                n.spec.extras.file_descriptor_store_max.unwrap_or(0),
            )
            .into_iter()
            .map(|r| r.as_str().to_string())
            .collect();
        }
        let runs = self
            .planner
            .graph()
            .get(id)
            .filter(|n| n.spec.kind.row().runs != flotilla_units::spec::Runs::Nothing);
        st.exec = runs.map(|n| flotilla_units::protocol::ExecList::of(&n.spec));
        st.settings = runs.map(|n| flotilla_units::protocol::Settings::of(&n.spec));
        st.usage = self
            .slots
            .get(id)
            .and_then(|s| s.run.as_deref())
            .and_then(|run| self.sys.unit_usage(run));
        if let Some(n) = self.planner.graph().get(id).filter(|n| {
            let row = n.spec.kind.row();
            row.runs == Runs::Process && !row.adopts()
        }) {
            st.limits = self.effective_limits(&n.spec.extras.context.limits);
        }
        Some(st)
    }

    /// The limits a unit's processes get: its own `Limit*=`, else the
    /// manager's `DefaultLimit*=`, else the init's own (inherited).
    fn effective_limits(
        &self,
        own: &BTreeMap<Rlimit, RlimitValue>,
    ) -> BTreeMap<Rlimit, RlimitValue> {
        let mut all = crate::sys::rlimits::own_limits();
        all.extend(self.units.manager.limits_for(own));
        all
    }

    /// Every unit, and the ghosts (removed units) still stopping or
    /// masked (a unit masked by its file's link to `/dev/null` is gone
    /// from the unit set, but listed as masked).
    pub(super) fn all_units(&self) -> Vec<UnitStatus> {
        self.planner
            .graph()
            .ids()
            .filter(|&i| self.is_listed(i))
            .filter_map(|i| self.unit_status(i))
            .collect()
    }

    /// Whether unit `i` is shown (listed, and found by name): a unit of
    /// the set, or a ghost still stopping or masked. A stopped transient
    /// unit is shown until its processes are gone, so that whoever waits
    /// for its stop (systemctl through the bus) sees the stop end there.
    pub(super) fn is_listed(&self, i: UnitId) -> bool {
        let n = self.planner.graph().node(i);
        !n.ghost || n.masked || self.planner.state(i) != UnitState::Disabled
    }

    /// What `analyze security` reads: the declared context and main PID
    /// of unit `name`, or of every unit with a main process. The reading
    /// of `/proc` is initctl's (docs/initctl.md says why).
    pub(super) fn security(&self, name: Option<&str>) -> Reply {
        let g = self.planner.graph();
        let one = |i| {
            let node = g.get(i)?;
            let st = self.unit_status(i)?;
            Some(flotilla_units::protocol::SecurityData {
                unit: st.unit,
                pid: st.pid,
                user: node.spec.extras.user.clone(),
                context: (*node.spec.extras.context).clone(),
                not_applied: st.not_applied,
            })
        };
        match name {
            Some(n) => match g.unit(n).filter(|&i| !g.node(i).ghost).and_then(one) {
                Some(d) => Reply::Security { units: vec![d] },
                None => Reply::error(
                    flotilla_units::protocol::ErrorCode::UnknownUnit,
                    format!("no unit named `{n}`"),
                ),
            },
            None => Reply::Security {
                units: g
                    .ids()
                    .filter(|&i| self.planner.view(i).is_some_and(|v| v.pid.is_some()))
                    .filter_map(one)
                    .collect(),
            },
        }
    }

    /// The whole system.
    pub(super) fn system_status(&self) -> SystemStatus {
        SystemStatus {
            target: self.planner.target().to_string(),
            target_state: self.planner.target_state().unwrap_or(UnitState::Waiting),
            degraded: self.planner.degraded(),
            units: self.all_units(),
            pid1: self.pid1,
            shutting_down: self.shutdown.is_some(),
            load_errors: self.units.load_errors().to_vec(),
            log_writer: self.log_writer_status(),
            units_path: self
                .settings
                .units_path()
                .iter()
                .map(|d| d.display().to_string())
                .collect(),
            log: self.log,
            default_limits: self.effective_limits(&BTreeMap::new()),
            environment: self.environment_lines(),
            service_watchdogs: self.planner.service_watchdogs(),
        }
    }

    /// How far the switch to the current target is.
    pub(super) fn progress(&self) -> Progress {
        let g = self.planner.graph();
        let mut p = Progress {
            target: self.planner.target().to_string(),
            total: 0,
            active: 0,
            failed: 0,
            starting: Vec::new(),
            waiting: Vec::new(),
            starting_more: 0,
            waiting_more: 0,
            stopping: Vec::new(),
            stopping_more: 0,
        };
        // The first names of each list, the others only counted: a reply
        // of a few hundred bytes, not tens of KB, at every turn of a big
        // launch.
        for i in g.ids() {
            let name = &g.node(i).spec.name;
            let state = self.planner.state(i);
            if !self.planner.is_required(i) {
                if has_processes(state) {
                    if p.stopping.len() < PROGRESS_NAMES {
                        p.stopping.push(name.clone());
                    } else {
                        p.stopping_more += 1;
                    }
                }
                continue;
            }
            p.total += 1;
            match state {
                s if s.is_active() => p.active += 1,
                UnitState::Failed => p.failed += 1,
                UnitState::Starting if p.starting.len() < PROGRESS_NAMES => {
                    p.starting.push(name.clone())
                }
                UnitState::Starting => p.starting_more += 1,
                UnitState::Waiting if p.waiting.len() < PROGRESS_NAMES => {
                    let why = self.planner.view(i).map(|v| v.status).unwrap_or_default();
                    p.waiting.push(format!("{name} ({why})"));
                }
                UnitState::Waiting => p.waiting_more += 1,
                _ => {}
            }
        }
        p
    }

    /// Whether the switch to the current target has settled: `Some(true)`
    /// when the target is active, `Some(false)` when it failed, either
    /// only once every unit outside the target's set has stopped; `None`
    /// while either is still on its way.
    pub(super) fn switch_settled(&self) -> Option<bool> {
        let ok = self.planner.target_settled()?;
        let g = self.planner.graph();
        let stopping = g
            .ids()
            .any(|i| !self.planner.is_required(i) && has_processes(self.planner.state(i)));
        (!stopping).then_some(ok)
    }

    /// Prints, notes and sends what changed since the last turn.
    pub(super) fn report_changes(&mut self) {
        self.untold.clear();
        let changed = self.planner.take_changed();
        let watchers = self.control.watchers();
        if changed.is_empty() && watchers.is_empty() {
            return;
        }
        // Each status is sent to those who watch every change as it is
        // made and then dropped: a target switch changes every unit in one
        // turn, and a thousand statuses kept to the end of it were the
        // peak of a launch's heap (docs/performance.md, "Init memory").
        let to_changes: Vec<ConnId> = (watchers.iter().copied())
            .filter(|&c| {
                self.control
                    .conn(c)
                    .is_some_and(|x| x.watch == Watch::Changes)
            })
            .collect();
        let mut any = false;
        for id in changed {
            let Some(st) = self.unit_status(id) else {
                continue;
            };
            any = true;
            let last = self.slots.reported(id);
            if last != st.state {
                match console_line(&st.unit, last, &st) {
                    Some((level, line)) if self.log.writes(level) => self.sys.console(&line),
                    _ => {}
                }
                self.journal_change(id, last, &st);
                let note = format!("[init] {}: {}", st.state, st.status);
                self.unit_note(id, &note);
                self.slots.set_reported(id, st.state);
                // Stopped or failed: nothing of the unit may run on.
                // Exited: what its processes left running stays only if
                // the unit says so (`remain-after-exit`).
                let remains = || {
                    self.planner
                        .graph()
                        .get(id)
                        .is_some_and(|n| n.spec.remain_after_exit())
                };
                match st.state {
                    UnitState::Disabled => self.end_run(id, false),
                    UnitState::Failed => self.end_run(id, true),
                    UnitState::Exited if !remains() => self.end_run(id, false),
                    _ => {}
                }
                self.take_unit_action(id, &st);
            }
            // Stopped for good (not on its way back): its descriptor store
            // is emptied (`fdstore.rs`); checked at every change, as a
            // pending restart given up leaves the state as it was.
            if flotilla_units::fdstore::released_in(st.state, st.restart_in_ms.is_some()) {
                self.release_store(id);
            }
            if let Some((&last, rest)) = to_changes.split_last() {
                for &c in rest {
                    self.control.send(c, &Reply::Changed(st.clone()), &self.sys);
                }
                self.control.send(last, &Reply::Changed(st), &self.sys);
            }
        }
        for c in watchers {
            let watch = match self.control.conn(c) {
                Some(conn) => conn.watch.clone(),
                None => continue,
            };
            match watch {
                Watch::Target(t) => {
                    if !any {
                        continue;
                    }
                    if t != self.planner.target() {
                        let failed = vec![format!("target switched to {}", self.planner.target())];
                        self.settle(c, &t, false, failed);
                        continue;
                    }
                    self.control
                        .send(c, &Reply::Progress(self.progress()), &self.sys);
                    self.settle_if_done(c, &t);
                }
                Watch::Logs { unit, next } => self.follow_logs(c, unit, next),
                // Sent above, each change as it was made.
                Watch::Changes => {}
                Watch::None
                | Watch::LogWriter
                | Watch::Reload
                | Watch::Clean
                | Watch::BindMount
                | Watch::Freeze => {}
            }
        }
    }

    /// The system action (`SuccessAction=`, `FailureAction=`) unit `id`'s
    /// new state sets off, if any: an orderly shutdown of that kind.
    fn take_unit_action(&mut self, id: UnitId, st: &UnitStatus) {
        let action = self
            .planner
            .graph()
            .get(id)
            .and_then(|n| n.spec.action_on(st.state, st.restart_in_ms.is_some()));
        let Some(action) = action else { return };
        let kind = match action {
            UnitAction::Poweroff | UnitAction::Exit => ShutdownKind::Poweroff,
            UnitAction::Reboot => ShutdownKind::Reboot,
            UnitAction::Halt => ShutdownKind::Halt,
        };
        let which = if st.state == UnitState::Failed {
            "FailureAction"
        } else {
            "SuccessAction"
        };
        self.begin_shutdown(kind, &format!("{}: {which}={}", st.unit, action.name()));
    }

    /// Sends a `logs -f` watcher the lines after `next`.
    fn follow_logs(&mut self, c: ConnId, unit: String, next: u64) {
        let Some(io) = self
            .planner
            .graph()
            .unit(&unit)
            .and_then(|id| self.slots.io(id))
        else {
            return;
        };
        let (lines, last) = log_replies(io.log.after(next.saturating_sub(1)));
        let next = last.map_or(next, |seq| seq + 1);
        if let Some(conn) = self.control.conn_mut(c) {
            conn.watch = Watch::Logs { unit, next };
        }
        for l in lines {
            self.control.send(c, &Reply::Log(l), &self.sys);
        }
    }

    /// Ends a `set-target --wait` stream once the switch has settled.
    pub(super) fn settle_if_done(&mut self, c: ConnId, target: &str) {
        if let Some(ok) = self.switch_settled() {
            let failed = self
                .planner
                .failed_units()
                .into_iter()
                .map(|u| self.unit_name(u))
                .collect();
            self.settle(c, target, ok, failed);
        }
    }

    fn settle(&mut self, c: ConnId, target: &str, ok: bool, failed: Vec<String>) {
        let state = self.planner.target_state().unwrap_or(UnitState::Waiting);
        let reply = Reply::Settled {
            target: target.to_string(),
            state,
            ok,
            failed,
        };
        if let Some(conn) = self.control.conn_mut(c) {
            conn.watch = Watch::None;
        }
        self.control.send(c, &reply, &self.sys);
        self.control.finish(c, &self.sys);
    }
}

/// A log tail as protocol lines (an overflow mark first when lines were
/// dropped), and the sequence number of its last line.
pub(super) fn log_replies(tail: Tail<'_>) -> (Vec<LogLine>, Option<u64>) {
    let mut out = Vec::new();
    if let Some(mark) = tail.overflow_mark() {
        out.push(LogLine {
            time: String::new(),
            stream: "init".into(),
            line: mark,
            seq: None,
            cut: false,
        });
    }
    let mut last = None;
    for l in tail.lines {
        last = Some(l.seq);
        out.push(LogLine {
            time: l.time.rfc3339(),
            stream: l.stream.as_str().to_string(),
            line: l.text.to_string(),
            seq: Some(l.seq),
            cut: l.cut,
        });
    }
    (out, last)
}
