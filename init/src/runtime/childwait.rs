//! Waiting for a child of the init before the loop runs (at boot: the
//! generator runner, the unit loader): its exit is reaped, other children
//! that end meanwhile too (none is a unit yet), and the signals that
//! arrive are kept to be handled once the loop is set up.

use crate::sys::events::Event;
use crate::sys::{ExitStatus, Pid, Sys};
use std::time::Duration;

/// How a wait ended.
#[derive(Debug, Default)]
pub(super) struct Waited {
    /// The child's exit status; `None` when it did not end within the
    /// limit (it was killed) or could not be waited for.
    pub status: Option<ExitStatus>,
    /// The signals that arrived meanwhile (not `SIGCHLD`).
    pub signals: Vec<i32>,
}

/// Waits for `pid` to exit, at most `limit`; then kills it with
/// `SIGKILL`, reaps it and returns.
pub(super) fn wait_for(sys: &dyn Sys, pid: Pid, limit: Duration) -> Waited {
    let deadline = sys.monotonic_now().after(limit);
    let mut waited = Waited::default();
    let mut events = Vec::new();
    loop {
        while let Ok(Some((p, status))) = sys.wait_any() {
            if p == pid {
                waited.status = Some(status);
                return waited;
            }
        }
        let now = sys.monotonic_now();
        if now >= deadline {
            let _ = sys.kill(pid, libc::SIGKILL);
            // Reaped by the loop like any child once it runs.
            return waited;
        }
        events.clear();
        if sys.wait(&mut events, Some(deadline.since(now))).is_err() {
            continue;
        }
        for ev in &events {
            if let Event::Signal(s) = *ev {
                if s != libc::SIGCHLD {
                    waited.signals.push(s);
                }
            }
        }
    }
}
