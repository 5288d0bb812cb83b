//! `initctl reset-failed [UNIT...]` (and systemctl's): the init forgets
//! the failure of each unit named, or of every failed unit
//! (`reset-failed`; what that means: docs/initctl.md).

use super::Ctx;
use crate::client::unexpected;
use crate::error::{CtlError, EXIT_OK};
use flotilla_units::protocol::{Reply, Request};

/// `reset-failed [UNIT...]`: each unit's failure forgotten, or every
/// unit's without one.
pub fn run(ctx: &mut Ctx<'_>, units: Vec<String>) -> Result<i32, CtlError> {
    let asks: Vec<Option<String>> = if units.is_empty() {
        vec![None]
    } else {
        units.into_iter().map(Some).collect()
    };
    for unit in asks {
        match ctx.call(Request::ResetFailed { unit })? {
            Reply::Accepted { .. } => {}
            other => return Err(unexpected(&other, "accepted")),
        }
    }
    Ok(EXIT_OK)
}
