//! `initctl logs UNIT [-n N] [-f]`: a unit's captured output, one line per
//! line and nothing else, so that `initctl logs x | grep y` works.
//!
//! With `-f` each line is flushed as it comes, so that it is live through a
//! pipe, and the command ends when interrupted or when the init closes the
//! connection (exit 0). A closed stdout ends the command quietly.

use super::Ctx;
use crate::client::{unexpected, Received};
use crate::error::{CtlError, EXIT_OK};
use flotilla_units::protocol::{Reply, Request};

/// Runs the command.
pub fn run(
    ctx: &mut Ctx<'_>,
    unit: String,
    lines: Option<usize>,
    follow: bool,
) -> Result<i32, CtlError> {
    let mut conn = ctx.connect()?;
    conn.send(Request::Logs {
        unit,
        lines,
        follow,
        source: false,
    })?;
    loop {
        let received = match conn.recv() {
            // Following, the stream ends when the init goes away.
            Err(CtlError::Closed(_)) if follow => return Ok(EXIT_OK),
            other => other?,
        };
        match received {
            Received::Reply(Reply::Log(l)) => {
                ctx.print(&l.line)?;
                ctx.print("\n")?;
                if follow {
                    ctx.flush()?;
                }
            }
            Received::Reply(Reply::LogEnd) => return Ok(EXIT_OK),
            Received::Reply(other) => return Err(unexpected(&other, "log")),
            Received::TimedOut => return Ok(EXIT_OK),
        }
    }
}
