//! `initctl list [--json] [--degraded]`: every unit with its type, state,
//! main PID and the targets it provides; with `--degraded`, only the units
//! some of whose settings the init could not apply, and which.

use super::status::{pid_cell, provides_cell};
use super::Ctx;
use crate::client::unexpected;
use crate::error::{CtlError, EXIT_OK};
use crate::table::{state_color, Table};
use flotilla_units::protocol::{Reply, Request, UnitStatus};
use serde::Serialize;

/// The `--json` shape: `{"units": [...]}`.
#[derive(Serialize)]
struct Units<'a> {
    units: &'a [UnitStatus],
}

/// Runs the command.
pub fn run(ctx: &mut Ctx<'_>, json: bool, degraded: bool) -> Result<i32, CtlError> {
    match ctx.call(Request::List)? {
        Reply::List { mut units } if degraded => {
            units.retain(|u| !u.not_applied.is_empty());
            if json {
                ctx.print_json(&Units { units: &units })?;
            } else {
                ctx.print(&render_degraded(&units, ctx.color))?;
            }
        }
        Reply::List { units } if json => ctx.print_json(&Units { units: &units })?,
        Reply::List { units } => {
            let text = render(&units, ctx.color);
            ctx.print(&text)?
        }
        other => return Err(unexpected(&other, "list")),
    }
    Ok(EXIT_OK)
}

/// The table of units (coincidental targets marked `*`).
pub fn render(units: &[UnitStatus], color: bool) -> String {
    let mut table = Table::new(&["UNIT", "TYPE", "STATE", "PID", "PROVIDES"]);
    for u in units {
        table.row(vec![
            u.unit.clone(),
            u.kind.as_str().to_string(),
            u.state.to_string(),
            pid_cell(u.pid),
            provides_cell(u),
        ]);
        table.color_last(2, state_color(u.state));
    }
    table.render(color)
}

/// The units some of whose settings were not applied, and which.
pub fn render_degraded(units: &[UnitStatus], color: bool) -> String {
    let mut table = Table::new(&["UNIT", "STATE", "NOT APPLIED"]);
    for u in units {
        let names: Vec<&str> = u.not_applied.iter().map(|n| n.setting.as_str()).collect();
        table.row(vec![u.unit.clone(), u.state.to_string(), names.join(",")]);
    }
    table.render(color)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::status::tests::system;

    #[test]
    fn table() {
        assert_eq!(
            render(&system().units, false),
            "\
UNIT   TYPE                   STATE     PID  PROVIDES
maddy  foreground-notified    running   123  imapd,smtpd*
net    oneshot                failed    -    network-online
old    virtual                disabled  -    old
web    foreground-supervised  waiting   -    web
"
        );
        assert_eq!(render(&[], false), "UNIT  TYPE  STATE  PID  PROVIDES\n");
    }

    #[test]
    fn json_shape() {
        let s = system();
        let v = serde_json::to_value(Units { units: &s.units }).unwrap();
        assert_eq!(v["units"].as_array().unwrap().len(), 4);
        assert_eq!(v["units"][0]["unit"], "maddy");
        assert_eq!(
            v["units"][0]["provides"],
            serde_json::json!(["imapd", "smtpd"])
        );
    }
}
