//! `initctl restart UNIT`: restart one required unit.

use super::Ctx;
use crate::client::unexpected;
use crate::error::{CtlError, EXIT_OK};
use flotilla_units::protocol::{Reply, Request};

/// Runs the command.
pub fn run(ctx: &mut Ctx<'_>, unit: String) -> Result<i32, CtlError> {
    match ctx.call(Request::Restart { unit })? {
        Reply::Accepted { message } => {
            if !message.is_empty() {
                ctx.print(&format!("{message}\n"))?;
            }
            Ok(EXIT_OK)
        }
        other => Err(unexpected(&other, "accepted")),
    }
}
