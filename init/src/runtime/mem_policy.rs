//! The manager's own NUMA memory policy (`NUMAPolicy=` and `NUMAMask=` of
//! its settings, docs/systemd-units.md, "The manager's settings"), set at
//! boot and at each reload as systemd's PID 1 sets it: every process the
//! init starts afterwards inherits it. A policy the kernel refuses is a
//! warning, and the init goes on with the one it had.

use super::Runtime;
use crate::sys::{MemOutcome, Sys, SysError};

/// syslog's priorities of the two messages.
const WARNING: u8 = 4;
const DEBUG: u8 = 7;

impl<S: Sys> Runtime<S> {
    /// Sets the policy the manager's settings give, if they give one.
    /// Inline, so that a system without one never touches the rest.
    #[inline]
    pub(super) fn apply_mem_policy(&self) {
        let m = &self.units.manager;
        if m.numa_policy.is_some() || m.numa_mask.is_some() {
            self.set_mem_policy();
        }
    }

    fn set_mem_policy(&self) {
        let Some(request) = self.units.manager.mem_policy() else {
            return;
        };
        match self.sys.set_mempolicy(&request) {
            Ok(MemOutcome::Set) => {}
            Ok(MemOutcome::Unsupported) => {
                self.journal_own(DEBUG, "NUMA support not available, ignoring.");
            }
            Err(e) => {
                let why = match e {
                    SysError::Call { errno, .. } => errno.0.desc().to_string(),
                    other => other.to_string(),
                };
                let text = format!("Failed to set NUMA memory policy, ignoring: {why}");
                self.sys.console(&format!("init: {text}"));
                self.journal_own(WARNING, &text);
            }
        }
    }
}
