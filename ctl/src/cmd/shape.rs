//! `initctl mask UNIT`, `unmask UNIT` and `set-alternative TARGET UNIT`:
//! what the graph is built with besides the units (SPEC §3b).

use super::Ctx;
use crate::client::unexpected;
use crate::error::{CtlError, EXIT_OK};
use flotilla_units::protocol::{Reply, Request};

/// `mask UNIT` (`mask`) or `unmask UNIT`.
pub fn mask(ctx: &mut Ctx<'_>, unit: String, mask: bool) -> Result<i32, CtlError> {
    let (request, done) = if mask {
        (Request::Mask { unit: unit.clone() }, "masked")
    } else {
        (Request::Unmask { unit: unit.clone() }, "unmasked")
    };
    match ctx.call(request)? {
        Reply::Applied(_) => {
            ctx.print(&format!("{unit}: {done}\n"))?;
            Ok(EXIT_OK)
        }
        other => Err(unexpected(&other, "applied")),
    }
}

/// `set-alternative TARGET UNIT`.
pub fn set_alternative(ctx: &mut Ctx<'_>, target: String, unit: String) -> Result<i32, CtlError> {
    match ctx.call(Request::SetAlternative { target, unit })? {
        Reply::Accepted { message } => {
            ctx.print(&format!("{message}\n"))?;
            Ok(EXIT_OK)
        }
        other => Err(unexpected(&other, "accepted")),
    }
}
