//! The init's journald, where it runs one (its `systemd-journald.socket`
//! listens): a spawn's output stream to it, and the manager's own
//! messages about each unit (docs/systemd-units.md, "The manager's
//! messages in the journal").

use super::stdio::journal_targets;
use super::Runtime;
use crate::sys::journal::{JournalStream, STDOUT_SOCKET};
use crate::sys::Sys;
use flotilla_units::graph::UnitId;
use flotilla_units::protocol::UnitStatus;
use flotilla_units::spec::{Ready, Runs, UnitSpec};
use flotilla_units::state::UnitState;
use flotilla_units::unit_messages::{Change, Kind, Message};
use std::path::Path;

/// journald's units: its service, and the socket that says it is there.
pub(super) const JOURNALD: &str = "systemd-journald";
pub(super) const JOURNALD_SOCKET: &str = "systemd-journald.socket";

impl<S: Sys> Runtime<S> {
    /// Whether the init runs journald and its socket listens.
    pub(super) fn journald_listens(&self) -> bool {
        self.planner
            .graph()
            .unit(JOURNALD_SOCKET)
            .is_some_and(|s| self.planner.state(s) == UnitState::Running)
    }

    /// The journal stream for a process of `spec` running `program`, when
    /// its output goes to the journal and the init runs journald (its
    /// `systemd-journald.socket` is listening; with `LogNamespace=`, the
    /// namespace's `systemd-journald@NAME.socket`, whose stdout socket it
    /// is then); never for journald itself, whose output would come back
    /// to it; nor for a stream its caller handed it (`passed`).
    pub(super) fn journal_stream(
        &self,
        spec: &UnitSpec,
        program: &str,
        passed: [Option<i32>; 3],
    ) -> Option<JournalStream> {
        let ctx = &spec.extras.context;
        let [out, err] = journal_targets(ctx);
        let [_, p_out, p_err] = passed;
        let (out, err) = (out && p_out.is_none(), err && p_err.is_none());
        if !(out || err) || spec.name.starts_with(JOURNALD) {
            return None;
        }
        let header = ctx.syslog.stream_header(&spec.name, program);
        if let Some(ns) = &ctx.log_namespace {
            let socket = self.planner.graph().unit(&ns.stream_socket_unit())?;
            if self.planner.state(socket) != UnitState::Running {
                return None;
            }
            return JournalStream::new(&ns.stdout_socket(), header, out, err);
        }
        if !self.journald_listens() {
            return None;
        }
        JournalStream::new(Path::new(STDOUT_SOCKET), header, out, err)
    }

    /// A message of the manager about itself in the journal, where the init
    /// runs journald, about `init.scope`: `journalctl -u init.scope` shows
    /// it, as it shows systemd's own (whose PID 1 is in that cgroup; the
    /// init, as PID 1, stays in the root one, so the message names it).
    pub(super) fn journal_own(&self, priority: u8, text: &str) {
        if self.journald_listens() {
            let m = Message {
                priority,
                id: "",
                text: text.to_string(),
                fields: Vec::new(),
            };
            self.sys.journal_send(&m.native("init.scope"));
        }
    }

    /// The manager's messages about unit `id`'s change from `last` to
    /// `st` (`Started …`, `Stopped …`: `flotilla_units::unit_messages`)
    /// in the journal, where the init runs journald, as systemd's PID 1
    /// writes them: `journalctl -u` shows them. A message of a lower
    /// priority than the unit's `LogLevelMax=` is left out, as systemd's
    /// PID 1 leaves out its own messages about such a unit (journald
    /// applies the level to what the unit's processes send, not to what
    /// the manager says of it).
    pub(super) fn journal_change(&self, id: UnitId, last: UnitState, st: &UnitStatus) {
        let Some(node) = self.planner.graph().get(id) else {
            return;
        };
        if !self.journald_listens() {
            return;
        }
        let spec = &node.spec;
        let kind = if spec.name.ends_with(".target") {
            Kind::Target
        } else if spec.kind.row().ready == Ready::Exited && spec.kind.row().runs == Runs::Process {
            Kind::Oneshot
        } else {
            Kind::Other
        };
        let change = Change {
            unit: &spec.name,
            description: spec.description.as_deref(),
            kind,
            last,
            now: st.state,
            result: st.result,
            ended: st.ended,
        };
        let level_max = spec.extras.context.syslog.level_max;
        for m in change.messages() {
            if level_max.is_none_or(|max| m.priority <= max) {
                self.sys.journal_send(&m.native(&spec.name));
            }
        }
    }
}
