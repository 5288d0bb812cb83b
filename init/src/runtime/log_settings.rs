//! The init's log level and target (systemd's `LogLevel` and
//! `LogTarget`, `systemd-analyze log-level debug` through
//! `flotilla-busd`): the `set-log` request, and the line each action
//! gets at `debug`. What each level writes is docs/dbus.md's
//! ("The manager's log level").

use super::Runtime;
use crate::sys::Sys;
use flotilla_units::loglevel::{LogLevel, LogTarget};
use flotilla_units::planner::{Action, Whom};
use flotilla_units::protocol::Reply;

impl<S: Sys> Runtime<S> {
    /// `set-log`: the new level and/or target, until the init stops (a
    /// re-exec keeps them).
    pub(super) fn set_log(&mut self, level: Option<LogLevel>, target: Option<LogTarget>) -> Reply {
        if let Some(l) = level {
            self.log.level = l;
        }
        if let Some(t) = target {
            self.log.target = t;
        }
        let message = format!(
            "log level {}, log target {}",
            self.log.level.as_str(),
            self.log.target.as_str()
        );
        if self.log.writes(LogLevel::Info) {
            self.sys.console(&format!("init: {message}"));
        }
        Reply::Accepted { message }
    }

    /// At `debug`, writes what the init is about to do for a unit.
    pub(super) fn debug_action(&self, a: &Action) {
        if !self.log.writes(LogLevel::Debug) {
            return;
        }
        let (unit, what) = match a {
            Action::Spawn {
                unit, role, argv, ..
            } => (*unit, format!("spawn {} {}", role.key(), argv.join(" "))),
            Action::Kill { unit, whom, signal } => {
                let whom = match whom {
                    Whom::Process(p) => format!("process {p}"),
                    Whom::Group(g) => format!("process group {g}"),
                    Whom::GroupAndLeader(p) => format!("process {p} and its group"),
                    Whom::Rest => "what is left in its cgroup".to_string(),
                };
                (*unit, format!("send {} to {whom}", signal.name()))
            }
            Action::CheckConditions { unit, .. } => (*unit, "check conditions".to_string()),
            Action::ReadPidfile { unit, path } => {
                (*unit, format!("read pidfile {}", path.display()))
            }
            Action::GuessMainPid { unit } => (*unit, "guess main PID".to_string()),
            Action::Arm { unit, .. } => (*unit, "arm trigger".to_string()),
            Action::Adopt { unit, .. } => (*unit, "adopt processes".to_string()),
            Action::Disarm { unit } => (*unit, "disarm trigger".to_string()),
            Action::AwaitEmpty { unit } => (*unit, "await an empty cgroup".to_string()),
            Action::SaveTimerStamp { unit, .. } => (*unit, "save timer stamp".to_string()),
        };
        let line = format!("init: debug: {}: {what}", self.unit_name(unit));
        self.sys.console(&line);
    }
}
