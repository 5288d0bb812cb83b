//! `systemctl list-sockets` (`initctl list-sockets`): each socket a running
//! socket unit listens on, with its unit and the unit it activates, in
//! systemctl's columns; for an `Accept=yes` socket, its template service
//! and the connections it holds (`echo@.service (2 connections)`).

use super::Ctx;
use crate::client::unexpected;
use crate::error::{CtlError, EXIT_OK};
use flotilla_units::protocol::{Reply, Request, UnitStatus};
use flotilla_units::spec::UnitType;

/// Lists the sockets (with `all`, also the socket units that are not
/// listening, with no address).
pub fn run(ctx: &mut Ctx<'_>, all: bool, no_legend: bool) -> Result<i32, CtlError> {
    let units = match ctx.call(Request::List)? {
        Reply::List { units } => units,
        other => return Err(unexpected(&other, "list")),
    };
    ctx.print(&render(&units, all, no_legend))?;
    Ok(EXIT_OK)
}

/// The table: one row per listening socket, sorted by address as
/// systemctl sorts them.
pub fn render(units: &[UnitStatus], all: bool, no_legend: bool) -> String {
    let mut rows: Vec<[String; 3]> = Vec::new();
    for u in units.iter().filter(|u| u.kind == UnitType::Socket) {
        let mut activates = u.activates.clone().unwrap_or_default();
        // `Accept=yes`: a template, an instance per connection held.
        if let Some(c) = &u.connections {
            let s = if c.now == 1 { "" } else { "s" };
            activates.push_str(&format!(" ({} connection{s})", c.now));
        }
        if u.listening.is_empty() && all {
            rows.push(["-".into(), u.unit.clone(), activates.clone()]);
        }
        for l in &u.listening {
            // `KIND ADDRESS`: systemctl shows the address alone.
            let address = l.split_once(' ').map_or(l.as_str(), |(_, a)| a);
            rows.push([address.to_string(), u.unit.clone(), activates.clone()]);
        }
    }
    rows.sort();
    let w0 = rows.iter().map(|r| r[0].len()).max().unwrap_or(0).max(6);
    let w1 = rows.iter().map(|r| r[1].len()).max().unwrap_or(0).max(4);
    let mut out = String::new();
    if !no_legend {
        out.push_str(&format!("{:<w0$} {:<w1$} ACTIVATES\n", "LISTEN", "UNIT"));
    }
    for [listen, unit, activates] in &rows {
        out.push_str(&format!("{listen:<w0$} {unit:<w1$} {activates}\n"));
    }
    if !no_legend {
        let s = if rows.len() == 1 { "" } else { "s" };
        out.push_str(&format!("\n{} socket{s} listed.\n", rows.len()));
        if !all {
            out.push_str("Pass --all to see loaded but inactive sockets, too.\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::status::tests::unit;
    use flotilla_units::state::UnitState;

    #[test]
    fn each_socket_with_its_unit_and_service() {
        let mut dbus = unit("dbus.socket", UnitType::Socket, UnitState::Running);
        dbus.listening = vec!["stream /run/dbus/system_bus_socket".into()];
        dbus.activates = Some("dbus.service".into());
        let mut web = unit("web.socket", UnitType::Socket, UnitState::Running);
        web.listening = vec!["stream [::]:80".into(), "datagram 127.0.0.1:53".into()];
        web.activates = Some("web.service".into());
        let mut idle = unit("idle.socket", UnitType::Socket, UnitState::Disabled);
        idle.activates = Some("idle.service".into());
        let units = [
            dbus,
            web,
            idle,
            unit(
                "web.service",
                UnitType::ForegroundSupervised,
                UnitState::Running,
            ),
        ];
        assert_eq!(
            render(&units, false, false),
            "LISTEN                      UNIT        ACTIVATES\n\
             /run/dbus/system_bus_socket dbus.socket dbus.service\n\
             127.0.0.1:53                web.socket  web.service\n\
             [::]:80                     web.socket  web.service\n\
             \n3 sockets listed.\n\
             Pass --all to see loaded but inactive sockets, too.\n"
        );
        let all = render(&units, true, true);
        assert!(all.starts_with("-"), "{all}");
        let mut echo = unit("echo.socket", UnitType::Socket, UnitState::Running);
        echo.listening = vec!["stream 127.0.0.1:7".into()];
        echo.activates = Some("echo@.service".into());
        echo.connections = Some(flotilla_units::protocol::Connections {
            now: 2,
            accepted: 5,
        });
        assert_eq!(
            render(&[echo], false, true),
            "127.0.0.1:7 echo.socket echo@.service (2 connections)\n"
        );
        assert!(all.contains("idle.socket"), "{all}");
        assert_eq!(all.lines().count(), 4, "{all}");
    }
}
