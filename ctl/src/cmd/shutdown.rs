//! `initctl poweroff`, `reboot`, `halt`: orderly shutdown.
//!
//! The init answers `accepted` before it starts stopping units. If the
//! connection closes without an answer, the init went away, which is what was
//! asked: that counts as success.

use super::Ctx;
use crate::client::{unexpected, Received};
use crate::error::{CtlError, EXIT_OK};
use flotilla_units::protocol::{Reply, Request, ShutdownKind};

/// Runs the command.
pub fn run(ctx: &mut Ctx<'_>, kind: ShutdownKind) -> Result<i32, CtlError> {
    let mut conn = ctx.connect()?;
    conn.send(Request::Shutdown { kind })?;
    match conn.recv() {
        Ok(Received::Reply(Reply::Accepted { message })) => {
            if !message.is_empty() {
                ctx.print(&format!("{message}\n"))?;
            }
            Ok(EXIT_OK)
        }
        Ok(Received::Reply(other)) => Err(unexpected(&other, "accepted")),
        Ok(Received::TimedOut) => Err(CtlError::Failed("timed out".into())),
        Err(CtlError::Closed(_)) => {
            ctx.print("the init closed the connection: shutting down\n")?;
            Ok(EXIT_OK)
        }
        Err(e) => Err(e),
    }
}
