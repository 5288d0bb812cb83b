//! `initctl mask UNIT`, `unmask UNIT` and `set-alternative TARGET UNIT`:
//! what the graph is built with besides the units (docs/contract.md §3b).
//!
//! A systemd unit (a name with a systemd suffix, `web.service`) is masked
//! as `systemctl mask` masks it: a link to `/dev/null` in the first
//! writable directory of the search path, which the init reads as the same
//! mask (`super::unit_files::mask`); `unmask` removes such links, and the
//! init's own mask file if there is one too.

use super::Ctx;
use crate::client::unexpected;
use crate::error::{CtlError, EXIT_OK};
use flotilla_units::protocol::{Reply, Request};

/// `mask UNIT` (`mask`) or `unmask UNIT`.
pub fn mask(ctx: &mut Ctx<'_>, unit: String, mask: bool) -> Result<i32, CtlError> {
    if crate::systemctl::service(&unit) == unit {
        return mask_unit_file(ctx, unit, mask);
    }
    mask_in_state(ctx, unit, mask)
}

/// `mask`/`unmask` of a systemd unit: the `/dev/null` link.
fn mask_unit_file(ctx: &mut Ctx<'_>, unit: String, mask: bool) -> Result<i32, CtlError> {
    // What the init does not know is refused as the init refuses it.
    let status = match ctx.call(Request::Status {
        name: Some(unit.clone()),
    })? {
        Reply::Unit(s) => s,
        other => return Err(unexpected(&other, "unit")),
    };
    if mask && status.masked {
        return Err(CtlError::Failed(format!("`{unit}` is masked already")));
    }
    if !mask && !status.masked {
        return Err(CtlError::Failed(format!("`{unit}` is not masked")));
    }
    let code = super::unit_files::mask(ctx, std::slice::from_ref(&unit), mask)?;
    if code != EXIT_OK {
        return Ok(code);
    }
    if !mask {
        // Masked by `initctl mask` before as well: that mask goes too.
        if let Reply::Unit(s) = ctx.call(Request::Status {
            name: Some(unit.clone()),
        })? {
            if s.masked {
                return mask_in_state(ctx, unit, false);
            }
        }
    }
    ctx.print(&format!(
        "{unit}: {}\n",
        if mask { "masked" } else { "unmasked" }
    ))?;
    Ok(EXIT_OK)
}

/// `mask`/`unmask` through the init (a file in its state directory).
fn mask_in_state(ctx: &mut Ctx<'_>, unit: String, mask: bool) -> Result<i32, CtlError> {
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
