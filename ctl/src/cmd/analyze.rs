//! `initctl analyze blame | critical-chain [NAME] | plot | dot` (and
//! `security`, in `security.rs`): asks the
//! init for its timing and graph data and prints one view of it (the views
//! are computed in `analyze/`).

use super::Ctx;
use crate::analyze::{blame, chain, dot, plot};
use crate::client::unexpected;
use crate::command::Analyze;
use crate::error::{CtlError, EXIT_OK};
use flotilla_units::protocol::{Reply, Request};

/// Runs the command.
pub fn run(ctx: &mut Ctx<'_>, what: Analyze) -> Result<i32, CtlError> {
    if let Analyze::Security(unit, json) = what {
        return super::security::run(ctx, unit, json);
    }
    let data = match ctx.call(Request::Analyze)? {
        Reply::Analyze(data) => data,
        other => return Err(unexpected(&other, "analyze")),
    };
    let text = match what {
        Analyze::Blame => blame::render(&blame::blame(&data)),
        Analyze::CriticalChain(name) => {
            let name = name.unwrap_or_else(|| data.target.clone());
            let links = chain::critical_chain(&data, &name)
                .ok_or_else(|| CtlError::Unknown(format!("no unit or target named '{name}'")))?;
            chain::render(&links)
        }
        Analyze::Plot => plot::plot(&data),
        Analyze::Dot => dot::dot(&data),
        Analyze::Security(..) => String::new(),
    };
    ctx.print(&text)?;
    Ok(EXIT_OK)
}
