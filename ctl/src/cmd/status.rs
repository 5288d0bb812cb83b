//! `initctl status [NAME...] [--json]`: the target and every unit, or units
//! and targets in detail (several as `systemctl status a b` shows them: a
//! block each, an unknown one said on stderr, exit 4 if any is unknown).
//!
//! `--json` prints the server's [`SystemStatus`] (or, with NAME, its
//! [`UnitStatus`]; with several, an array of them) through a serde round
//! trip, so the shape is docs/contract.md §5's.

use super::Ctx;
use crate::client::unexpected;
use crate::duration::{format_coarse, format_ms};
use crate::error::{CtlError, EXIT_OK, EXIT_UNKNOWN};
use crate::table::{state_color, Table};
use crate::timestamp;
use flotilla_units::protocol::{LogWriterStatus, Reply, Request, SystemStatus, UnitStatus};

/// Runs the command for `names`: none is the whole system, one is
/// [`run`]'s; with several, each known one is shown (blocks separated by
/// an empty line, or a JSON array), each unknown one is reported on
/// stderr, and the exit code is 4 if any is unknown.
pub fn run_names(ctx: &mut Ctx<'_>, names: &[String], json: bool) -> Result<i32, CtlError> {
    if names.len() < 2 {
        return run(ctx, names.first().cloned(), json);
    }
    let now = Some(timestamp::now_ms());
    let mut code = EXIT_OK;
    let mut units: Vec<UnitStatus> = Vec::new();
    let mut text = String::new();
    for name in names {
        let reply = ctx.call(Request::Status {
            name: Some(name.clone()),
        });
        // The init's error answer, as the one-name command reads it.
        let reply = match reply {
            Ok(Reply::Unit(unit)) => Ok(unit),
            Ok(other) => Err(unexpected(&other, "status")),
            Err(e) => Err(e),
        };
        match reply {
            Ok(unit) => {
                if !json {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&render_unit(&unit, Some(name), now));
                }
                units.push(unit);
            }
            Err(e @ CtlError::Unknown(_)) => {
                super::eprint_line(&format!("initctl: {e}"));
                code = EXIT_UNKNOWN;
            }
            Err(e) => return Err(e),
        }
    }
    if json {
        ctx.print_json(&units)?;
    } else {
        ctx.print(&text)?;
    }
    Ok(code)
}

/// Runs the command.
pub fn run(ctx: &mut Ctx<'_>, name: Option<String>, json: bool) -> Result<i32, CtlError> {
    let reply = ctx.call(Request::Status { name: name.clone() })?;
    let now = Some(timestamp::now_ms());
    match reply {
        Reply::Status(status) if json => ctx.print_json(&status)?,
        Reply::Status(status) => {
            let text = render_system(&status, ctx.color);
            ctx.print(&text)?
        }
        Reply::Unit(unit) if json => ctx.print_json(&unit)?,
        Reply::Unit(unit) => ctx.print(&render_unit(&unit, name.as_deref(), now))?,
        other => return Err(unexpected(&other, "status")),
    }
    Ok(EXIT_OK)
}

/// The header and the table of every unit.
pub fn render_system(s: &SystemStatus, color: bool) -> String {
    let mut out = String::new();
    out.push_str(&format!("Target:   {}\n", s.target));
    out.push_str(&format!("State:    {}\n", s.target_state));
    let degraded = if s.degraded {
        "yes (something the target needs is not active)"
    } else {
        "no"
    };
    out.push_str(&format!("Degraded: {degraded}\n"));
    let mut init = if s.pid1 {
        "PID 1".to_string()
    } else {
        "supervisor (not PID 1)".to_string()
    };
    if s.shutting_down {
        init.push_str(", shutting down");
    }
    out.push_str(&format!("Init:     {init}\n"));
    let required: Vec<&UnitStatus> = s.units.iter().filter(|u| u.required).collect();
    if !required.is_empty() {
        let active = required.iter().filter(|u| u.state.is_active()).count();
        let failed = required
            .iter()
            .filter(|u| u.state == flotilla_units::state::UnitState::Failed)
            .count();
        let mut line = format!(
            "Units:    {active}/{} required units active",
            required.len()
        );
        if failed > 0 {
            line.push_str(&format!(", {failed} failed"));
        }
        out.push_str(&line);
        out.push('\n');
    }
    if let Some(lw) = &s.log_writer {
        out.push_str(&format!("Logs:     {}\n", log_writer_line(lw)));
    }
    if !s.load_errors.is_empty() {
        out.push_str("Problems found loading the units:\n");
        for e in &s.load_errors {
            out.push_str(&format!("  {e}\n"));
        }
    }
    out.push('\n');
    let mut table = Table::new(&["UNIT", "TYPE", "STATE", "PID", "PROVIDES", "STATUS"]);
    let mut any_coincidental = false;
    for u in &s.units {
        any_coincidental |= !u.coincidental.is_empty();
        table.row(vec![
            u.unit.clone(),
            u.kind.as_str().to_string(),
            u.state.to_string(),
            pid_cell(u.pid),
            provides_cell(u),
            status_cell(u),
        ]);
        table.color_last(2, state_color(u.state));
    }
    out.push_str(&table.render(color));
    if any_coincidental {
        out.push_str("\n* coincidental: up only because another target of its unit is required\n");
    }
    out
}

/// Where the units' output goes, and how far behind or why not.
pub fn log_writer_line(lw: &LogWriterStatus) -> String {
    let mut line = lw.dir.clone();
    match (lw.connected, &lw.unit, lw.pid) {
        (true, Some(unit), Some(pid)) => line.push_str(&format!(", written by {unit} (PID {pid})")),
        (true, None, Some(pid)) => line.push_str(&format!(", written by PID {pid}")),
        (true, _, None) => line.push_str(", written by a log writer"),
        (false, _, _) => line.push_str(": no log writer connected"),
    }
    if let Some(e) = &lw.error {
        line.push_str(&format!("; cannot write: {e}"));
    }
    if lw.waiting > 0 {
        line.push_str(&format!("; {} lines waiting", lw.waiting));
    }
    if lw.lost > 0 {
        line.push_str(&format!(
            "; {} lines lost before they were written",
            lw.lost
        ));
    }
    line
}

/// `123`, or `-` without a process.
pub fn pid_cell(pid: Option<i32>) -> String {
    pid.map_or_else(|| "-".to_string(), |p| p.to_string())
}

/// The provided targets, comma-separated, coincidental ones marked `*`.
pub fn provides_cell(u: &UnitStatus) -> String {
    if u.provides.is_empty() {
        return "-".into();
    }
    u.provides
        .iter()
        .map(|t| {
            if u.coincidental.contains(t) {
                format!("{t}*")
            } else {
                t.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The STATUS column: masked or not found, what blocks it, whether it is degraded, then
/// the init's free-form status.
fn status_cell(u: &UnitStatus) -> String {
    let mut parts = Vec::new();
    if u.masked {
        parts.push("masked".to_string());
    }
    if u.not_found {
        parts.push("not-found".to_string());
    }
    if let Some(b) = &u.blocked_by {
        parts.push(format!("blocked by {b}"));
    }
    if u.degraded {
        parts.push("degraded".to_string());
    }
    if !u.status.is_empty() {
        parts.push(u.status.clone());
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join("; ")
    }
}

/// The detailed block for one unit. `asked` is the name on the command line:
/// when it is a target of the unit rather than its name, that is said first.
/// `now_ms` (ms since the epoch) adds how long ago `since` was.
pub fn render_unit(u: &UnitStatus, asked: Option<&str>, now_ms: Option<i64>) -> String {
    let mut out = String::new();
    match &u.description {
        Some(d) if !d.is_empty() => out.push_str(&format!("{} - {d}\n", u.unit)),
        _ => out.push_str(&format!("{}\n", u.unit)),
    }
    let mut rows: Vec<(&str, String)> = Vec::new();
    if let Some(asked) = asked.filter(|a| *a != u.unit) {
        rows.push(("Target", format!("{asked} (provided by {})", u.unit)));
    }
    rows.push(("Type", u.kind.as_str().to_string()));
    let mut state = u.state.to_string();
    if u.degraded {
        state.push_str(" (degraded)");
    }
    if !u.since.is_empty() {
        state.push_str(&format!(" since {}", u.since));
        if let Some(age) = now_ms.and_then(|now| timestamp::age(&u.since, now)) {
            state.push_str(&format!("; {} ago", format_coarse(age)));
        }
    }
    if u.masked {
        state.push_str(" (masked)");
    }
    if u.not_found {
        state.push_str(" (not-found: its unit file is gone)");
    }
    rows.push(("State", state));
    if let Some(t) = &u.providers {
        let list: Vec<String> = t.units.iter().map(|(n, s)| format!("{n} ({s})")).collect();
        rows.push(("Mode", t.mode.as_str().to_string()));
        rows.push(("Providers", list.join(", ")));
        if let Some(c) = &t.chosen {
            rows.push(("Chosen", format!("{c}: {}", t.why)));
        }
    }
    if let Some(b) = &u.blocked_by {
        rows.push(("Blocked by", b.clone()));
    }
    if let Some(ms) = u.restart_in_ms {
        rows.push(("Restart in", format_ms(ms)));
    }
    rows.push(("PID", pid_cell(u.pid)));
    if !u.listening.is_empty() {
        rows.push(("Listen", u.listening.join(", ")));
    }
    if let Some(c) = &u.connections {
        rows.push((
            "Connections",
            format!("{} now, {} accepted", c.now, c.accepted),
        ));
    }
    if let Some(use_) = &u.usage {
        if let Some(t) = use_.tasks {
            rows.push(("Tasks", t.to_string()));
        }
        if let Some(m) = use_.memory_bytes {
            rows.push(("Memory", format_bytes(m)));
        }
        if let Some(c) = use_.cpu_usec {
            rows.push(("CPU", format_ms(c / 1000)));
        }
    }
    if let Some(n) = u.dropping_lines {
        rows.push((
            "Output",
            format!("over its rate limit: {n} lines dropped so far in this window"),
        ));
    }
    let mut provides = if u.provides.is_empty() {
        "-".to_string()
    } else {
        u.provides.join(", ")
    };
    if !u.coincidental.is_empty() {
        provides.push_str(&format!(" (coincidental: {})", u.coincidental.join(", ")));
    }
    rows.push(("Provides", provides));
    rows.push((
        "Required",
        if u.required { "yes" } else { "no" }.to_string(),
    ));
    rows.push(("Restarts", u.restarts.to_string()));
    if !u.status.is_empty() {
        rows.push(("Status", u.status.clone()));
    }
    if !u.source.is_empty() {
        rows.push(("Source", u.source.clone()));
    }
    // Never silently: each setting the init could not apply.
    for n in &u.not_applied {
        rows.push(("Not applied", format!("{}: {}", n.setting, n.reason)));
    }
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in rows {
        out.push_str(&format!("  {k:>width$}: {v}\n"));
    }
    out
}

/// Bytes as systemctl prints them: `512B`, `4.2K`, `118.5M`, `1.2G`
/// (powers of 1024, one decimal).
fn format_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["K", "M", "G", "T", "P"];
    if n < 1024 {
        return format!("{n}B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{v:.1}{unit}")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use flotilla_units::spec::UnitType;
    use flotilla_units::state::UnitState;

    pub(crate) fn unit(name: &str, kind: UnitType, state: UnitState) -> UnitStatus {
        UnitStatus {
            unit: name.into(),
            kind,
            state,
            provides: vec![name.into()],
            since: "2026-11-22T04:00:00.000Z".into(),
            required: true,
            ..Default::default()
        }
    }

    pub(crate) fn system() -> SystemStatus {
        let mut maddy = unit("maddy", UnitType::ForegroundNotified, UnitState::Running);
        maddy.pid = Some(123);
        maddy.provides = vec!["imapd".into(), "smtpd".into()];
        maddy.coincidental = vec!["smtpd".into()];
        maddy.status = "ready".into();
        maddy.degraded = true;
        let mut net = unit("net", UnitType::Oneshot, UnitState::Failed);
        net.status = "exit status 1".into();
        net.provides = vec!["network-online".into()];
        let mut web = unit("web", UnitType::ForegroundSupervised, UnitState::Waiting);
        web.blocked_by = Some("network-online".into());
        let mut old = unit("old", UnitType::Virtual, UnitState::Disabled);
        old.required = false;
        SystemStatus {
            target: "default".into(),
            target_state: UnitState::Waiting,
            degraded: true,
            units: vec![maddy, net, old, web],
            pid1: false,
            shutting_down: false,
            load_errors: vec![],
            log_writer: None,
            units_path: vec![],
            log: Default::default(),
            default_limits: Default::default(),
            environment: Vec::new(),
            service_watchdogs: true,
        }
    }

    #[test]
    fn system_table() {
        let text = render_system(&system(), false);
        assert_eq!(
            text,
            "\
Target:   default
State:    waiting
Degraded: yes (something the target needs is not active)
Init:     supervisor (not PID 1)
Units:    1/3 required units active, 1 failed

UNIT   TYPE                   STATE     PID  PROVIDES        STATUS
maddy  foreground-notified    running   123  imapd,smtpd*    degraded; ready
net    oneshot                failed    -    network-online  exit status 1
old    virtual                disabled  -    old             -
web    foreground-supervised  waiting   -    web             blocked by network-online

* coincidental: up only because another target of its unit is required
"
        );
    }

    #[test]
    fn system_header_as_pid1_shutting_down_with_load_errors() {
        let mut s = system();
        s.pid1 = true;
        s.shutting_down = true;
        s.degraded = false;
        s.target_state = UnitState::Running;
        s.load_errors = vec!["units/bad.yaml:3:1: unknown key 'frob'".into()];
        s.units.clear();
        let text = render_system(&s, false);
        assert_eq!(
            text,
            "\
Target:   default
State:    running
Degraded: no
Init:     PID 1, shutting down
Problems found loading the units:
  units/bad.yaml:3:1: unknown key 'frob'

UNIT  TYPE  STATE  PID  PROVIDES  STATUS
"
        );
    }

    #[test]
    fn unit_block() {
        let mut u = system().units.remove(0);
        u.description = Some("Mail server".into());
        u.source = "/etc/init/units/maddy.yaml".into();
        u.restarts = 2;
        let now = timestamp::parse_rfc3339("2026-11-22T04:05:03Z");
        assert_eq!(
            render_unit(&u, Some("maddy"), now),
            "\
maddy - Mail server
      Type: foreground-notified
     State: running (degraded) since 2026-11-22T04:00:00.000Z; 5min 3s ago
       PID: 123
  Provides: imapd, smtpd (coincidental: smtpd)
  Required: yes
  Restarts: 2
    Status: ready
    Source: /etc/init/units/maddy.yaml
"
        );
    }

    #[test]
    fn unit_block_of_a_unit_over_its_rate_limit() {
        let mut u = system().units.remove(0);
        u.dropping_lines = Some(4521);
        let text = render_unit(&u, Some("maddy"), None);
        assert!(
            text.contains(
                "    Output: over its rate limit: 4521 lines dropped so far in this window\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn unit_block_with_its_cgroups_usage() {
        let mut u = system().units.remove(0);
        u.usage = Some(flotilla_units::protocol::Usage {
            memory_bytes: Some(4_404_019),
            cpu_usec: Some(1_234_567),
            tasks: Some(3),
        });
        let now = timestamp::parse_rfc3339("2026-11-22T04:05:03Z");
        let text = render_unit(&u, Some("maddy"), now);
        assert!(
            text.contains("       PID: 123\n     Tasks: 3\n    Memory: 4.2M\n       CPU: 1.234s\n"),
            "{text}"
        );
        // A field the cgroup does not have (its controller is off) is left out.
        u.usage = Some(flotilla_units::protocol::Usage {
            cpu_usec: Some(12_000),
            ..Default::default()
        });
        let text = render_unit(&u, Some("maddy"), now);
        assert!(
            text.contains("       PID: 123\n       CPU: 12ms\n  Provides"),
            "{text}"
        );
    }

    #[test]
    fn bytes_as_systemctl_prints_them() {
        assert_eq!(super::format_bytes(512), "512B");
        assert_eq!(super::format_bytes(4_300), "4.2K");
        assert_eq!(super::format_bytes(124_256_256), "118.5M");
        assert_eq!(super::format_bytes(3 << 30), "3.0G");
    }

    #[test]
    fn unit_block_for_a_target_blocked_and_restarting() {
        let mut u = unit("net", UnitType::Oneshot, UnitState::Failed);
        u.provides = vec!["network-online".into()];
        u.blocked_by = Some("dhcp".into());
        u.restart_in_ms = Some(2_000);
        u.required = false;
        assert_eq!(
            render_unit(&u, Some("network-online"), None),
            "\
net
      Target: network-online (provided by net)
        Type: oneshot
       State: failed since 2026-11-22T04:00:00.000Z
  Blocked by: dhcp
  Restart in: 2s
         PID: -
    Provides: network-online
    Required: no
    Restarts: 0
"
        );
    }

    #[test]
    fn json_round_trip_has_the_spec_shape() {
        let s = system();
        let v = serde_json::to_value(&s).unwrap();
        for key in ["target", "target_state", "degraded", "units"] {
            assert!(v.get(key).is_some(), "{key}");
        }
        let u = &v["units"][0];
        for key in [
            "unit",
            "type",
            "state",
            "degraded",
            "pid",
            "provides",
            "coincidental",
            "restarts",
            "blocked_by",
            "status",
            "since",
        ] {
            assert!(u.get(key).is_some(), "{key}");
        }
        assert_eq!(u["type"], "foreground-notified");
        assert_eq!(v["units"][1]["pid"], serde_json::Value::Null);
    }

    #[test]
    fn the_log_writer_line() {
        let mut lw = LogWriterStatus {
            dir: "/var/log/init".into(),
            connected: true,
            pid: Some(42),
            unit: Some("flotilla-logd".into()),
            waiting: 0,
            lost: 0,
            error: None,
        };
        assert_eq!(
            log_writer_line(&lw),
            "/var/log/init, written by flotilla-logd (PID 42)"
        );
        lw.error = Some("web: open /var/log/init/web.log: read-only file system".into());
        lw.waiting = 12;
        assert_eq!(
            log_writer_line(&lw),
            "/var/log/init, written by flotilla-logd (PID 42); cannot write: web: open \
             /var/log/init/web.log: read-only file system; 12 lines waiting"
        );
        lw.connected = false;
        lw.error = None;
        lw.lost = 3;
        assert_eq!(
            log_writer_line(&lw),
            "/var/log/init: no log writer connected; 12 lines waiting; 3 lines lost before \
             they were written"
        );
        let mut s = system();
        s.log_writer = Some(lw);
        assert!(render_system(&s, false).contains("\nLogs:     /var/log/init: no log writer"));
    }
}
