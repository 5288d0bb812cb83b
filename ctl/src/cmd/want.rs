//! `start` and `stop` of one unit (`initctl start|stop`, `systemctl
//! start|stop`) in flotilla's declarative model: the current target decides
//! what runs, so `start` of a unit the target does not require adds it to
//! the running target as a transient want (the protocol's `want`, until the
//! next `set-target`), and `stop` drops such a want. A unit the target
//! requires is not stopped: that is refused with a message naming the
//! target and what does stop it (`initctl mask`, `disable --now`, another
//! target). Both wait, as systemctl's jobs do, until the unit is active or
//! failed (`start`) or stopped (`stop`), following the init's `changed`
//! stream; the wait is bounded by [`WAIT`].

use super::{eprint_line, Ctx};
use crate::client::{unexpected, Connection, Received};
use crate::error::{CtlError, EXIT_FAILED, EXIT_OK};
use flotilla_units::protocol::{Reply, Request, UnitStatus};
use flotilla_units::state::UnitState;
use std::time::{Duration, Instant};

/// How long `start`/`stop` wait for the unit (a unit's own start and stop
/// timeouts end their attempts well before this, by default).
const WAIT: Duration = Duration::from_secs(120);

/// Whether a state ends a start: active or failed.
fn started(state: UnitState) -> bool {
    state.is_active() || state == UnitState::Failed
}

/// Whether a state ends a stop.
fn stopped(state: UnitState) -> bool {
    matches!(state, UnitState::Disabled | UnitState::Failed)
}

/// `start` of unit `s` (known to the init): 0 once it is active (without
/// `block`: once the init took the request), 1 if it is masked, refused
/// or fails.
pub fn start(ctx: &mut Ctx<'_>, s: &UnitStatus, block: bool) -> Result<i32, CtlError> {
    let u = &s.unit;
    if s.masked {
        eprint_line(&format!("Failed to start {u}: Unit {u} is masked."));
        return Ok(EXIT_FAILED);
    }
    let request = if !s.required {
        Request::Want { unit: u.clone() }
    } else if s.state == UnitState::Failed {
        Request::Restart { unit: u.clone() }
    } else if s.state.is_active() {
        return Ok(EXIT_OK);
    } else {
        // Required, on its way up: only wait.
        Request::Status {
            name: Some(u.clone()),
        }
    };
    want_and_wait(ctx, u, request, EXIT_FAILED, block)
}

/// `start` of `u`, an instance the init does not have yet: wanting it makes
/// it from its template (`refused` is the exit status when the init cannot,
/// e.g. no template), then as [`start`].
pub fn start_instance(
    ctx: &mut Ctx<'_>,
    u: &str,
    refused: i32,
    block: bool,
) -> Result<i32, CtlError> {
    let request = Request::Want {
        unit: u.to_string(),
    };
    want_and_wait(ctx, u, request, refused, block)
}

/// Sends `request` for `u` and (with `block`) waits until `u` is active
/// or failed.
fn want_and_wait(
    ctx: &mut Ctx<'_>,
    u: &str,
    request: Request,
    refused: i32,
    block: bool,
) -> Result<i32, CtlError> {
    let wanted = matches!(request, Request::Want { .. });
    let mut w = Waiter::subscribe(ctx, u)?;
    match w.ask(request)? {
        Reply::Accepted { .. } => {}
        Reply::Unit(now) => w.last = Some(now.state),
        Reply::Error { message, .. } => {
            eprint_line(&format!("Failed to start {u}: {message}"));
            return Ok(refused);
        }
        other => return Err(unexpected(&other, "accepted")),
    }
    if wanted {
        let target = ctx.current_target()?;
        eprint_line(&format!(
            "{u}: wanted besides the target {target} until the next set-target \
             (to keep it, enable it or make the target depend on it)"
        ));
    }
    if !block {
        return Ok(EXIT_OK);
    }
    match w.until(ctx, started)? {
        Some(state) if state.is_active() => Ok(EXIT_OK),
        Some(_) => {
            eprint_line(&format!(
                "Job for {u} failed. See \"systemctl status {u}\" and \"initctl logs {u}\" \
                 for details."
            ));
            Ok(EXIT_FAILED)
        }
        None => {
            eprint_line(&format!(
                "Failed to start {u}: still not active after {}s",
                WAIT.as_secs()
            ));
            Ok(EXIT_FAILED)
        }
    }
}

/// `stop` of unit `s` (known to the init): 0 once it is stopped (without
/// `block`: once the init has taken the stop), or if it was not required
/// at all; 1 when its unit refuses a stop by hand. A unit the target
/// requires is held stopped until it is started again or the target
/// switches.
pub fn stop(ctx: &mut Ctx<'_>, s: &UnitStatus, block: bool) -> Result<i32, CtlError> {
    let u = &s.unit;
    if !s.required {
        return Ok(EXIT_OK);
    }
    let mut w = Waiter::subscribe(ctx, u)?;
    match w.ask(Request::Unwant { unit: u.clone() })? {
        Reply::Accepted { .. } => {}
        Reply::Error { message, .. } => {
            eprint_line(&format!("Failed to stop {u}: {message}"));
            return Ok(EXIT_FAILED);
        }
        other => return Err(unexpected(&other, "accepted")),
    }
    let now = match ctx.call(Request::Status {
        name: Some(u.clone()),
    })? {
        Reply::Unit(now) => now,
        other => return Err(unexpected(&other, "unit")),
    };
    if !block || stopped(now.state) {
        return Ok(EXIT_OK);
    }
    match w.until(ctx, stopped)? {
        Some(_) => Ok(EXIT_OK),
        None => {
            eprint_line(&format!(
                "Failed to stop {u}: still not stopped after {}s",
                WAIT.as_secs()
            ));
            Ok(EXIT_FAILED)
        }
    }
}

/// A connection subscribed to the init's changes, following one unit.
struct Waiter {
    conn: Connection,
    unit: String,
    /// The unit's last state seen in the stream.
    last: Option<UnitState>,
    deadline: Instant,
}

impl Waiter {
    /// Subscribes (before the request, so that no change is missed).
    fn subscribe(ctx: &Ctx<'_>, unit: &str) -> Result<Waiter, CtlError> {
        let mut conn = ctx.connect()?;
        conn.send(Request::Subscribe)?;
        let deadline = Instant::now() + WAIT;
        conn.set_deadline(Some(deadline));
        Ok(Waiter {
            conn,
            unit: unit.to_string(),
            last: None,
            deadline,
        })
    }

    /// The next stream line: a change (noting the unit's), or `None` at
    /// the deadline.
    fn next(&mut self) -> Result<Option<Reply>, CtlError> {
        match self.conn.recv()? {
            Received::TimedOut => Ok(None),
            Received::Reply(Reply::Changed(s)) => {
                if s.unit == self.unit {
                    self.last = Some(s.state);
                }
                Ok(Some(Reply::Changed(s)))
            }
            Received::Reply(r) => Ok(Some(r)),
        }
    }

    /// Sends `request` on the subscribed connection; its reply (the
    /// changes before it are noted).
    fn ask(&mut self, request: Request) -> Result<Reply, CtlError> {
        self.conn.send(request)?;
        loop {
            match self.next()? {
                None => return Err(CtlError::Failed("timed out".into())),
                Some(Reply::Changed(_)) => {}
                Some(r) => return Ok(r),
            }
        }
    }

    /// Waits until the unit's state satisfies `done`: that state, or
    /// `None` at the deadline. The unit's state now is asked for once,
    /// so a unit that got there before the stream said so is seen too.
    fn until(
        &mut self,
        ctx: &Ctx<'_>,
        done: fn(UnitState) -> bool,
    ) -> Result<Option<UnitState>, CtlError> {
        if self.last.is_none() {
            match ctx.call(Request::Status {
                name: Some(self.unit.clone()),
            })? {
                Reply::Unit(s) => self.last = Some(s.state),
                other => return Err(unexpected(&other, "unit")),
            }
        }
        loop {
            if let Some(s) = self.last.filter(|s| done(*s)) {
                return Ok(Some(s));
            }
            if Instant::now() >= self.deadline || self.next()?.is_none() {
                return Ok(None);
            }
        }
    }
}
