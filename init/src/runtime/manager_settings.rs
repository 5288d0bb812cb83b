//! Two settings of the manager that apply to every unit, set at run time
//! through `flotilla-busd` (docs/dbus.md, "The manager's environment"):
//! the environment every unit's processes get on top of the init's own
//! (`set-environment`: systemd's `SetEnvironment`, `UnsetEnvironment`;
//! the rules in `units/src/manager_env.rs`), and whether a missed
//! `WATCHDOG=1` fails its unit (`set-service-watchdogs`: systemd's
//! `ServiceWatchdogs`, the rule in the planner). Both last until the init
//! stops: a reload keeps them, a re-exec carries them.

use super::Runtime;
use crate::sys::env::Env;
use crate::sys::Sys;
use flotilla_units::protocol::{ErrorCode, Reply};

impl<S: Sys> Runtime<S> {
    /// `set-environment`: what `unset` names taken out, then `set` set.
    pub(super) fn set_environment(&mut self, unset: &[String], set: &[String]) -> Reply {
        match self.manager_env.modify(unset, set) {
            Ok(()) => Reply::Accepted {
                message: "environment changed".to_string(),
            },
            Err(message) => Reply::Error {
                code: ErrorCode::BadRequest,
                message,
                details: Vec::new(),
            },
        }
    }

    /// `set-service-watchdogs`.
    pub(super) fn set_service_watchdogs(&mut self, on: bool) -> Reply {
        self.planner.set_service_watchdogs(on);
        let message = format!("service watchdogs {}", if on { "on" } else { "off" });
        self.sys.console(&format!("init: {message}"));
        Reply::Accepted { message }
    }

    /// The environment a unit's process starts from: the init's own, with
    /// what `set-environment` set over it.
    pub(super) fn unit_base_env(&self) -> Env {
        let mut env = self.base_env.clone();
        for (k, v) in self.manager_env.iter() {
            // Names and values were checked when they were set.
            let _ = env.set(k, v);
        }
        env
    }

    /// [`Runtime::unit_base_env`] as `NAME=VALUE` lines, in name order
    /// (`status`'s `environment`).
    pub(super) fn environment_lines(&self) -> Vec<String> {
        self.unit_base_env()
            .iter()
            .map(|(k, v)| {
                format!(
                    "{}={}",
                    String::from_utf8_lossy(k),
                    String::from_utf8_lossy(v)
                )
            })
            .collect()
    }
}
