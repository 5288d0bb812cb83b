//! `systemctl list-timers` (`initctl list-timers`): the timer units with
//! their next elapse and last trigger, in systemctl's columns and words.

use super::Ctx;
use crate::client::unexpected;
use crate::error::{CtlError, EXIT_OK};
use flotilla_units::protocol::{systemd_timestamp, Reply, Request, UnitStatus};
use flotilla_units::spec::UnitType;
use flotilla_units::timespan::relative_span;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Lists the timers (with `all`, also those that are not running).
pub fn run(ctx: &mut Ctx<'_>, all: bool, no_legend: bool) -> Result<i32, CtlError> {
    let units = match ctx.call(Request::List)? {
        Reply::List { units } => units,
        other => return Err(unexpected(&other, "list")),
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64);
    ctx.print(&render(&units, now, all, no_legend))?;
    Ok(EXIT_OK)
}

/// The table, as of `now` (microseconds since the epoch): soonest elapse
/// first, timers that will not elapse last.
pub fn render(units: &[UnitStatus], now: u64, all: bool, no_legend: bool) -> String {
    let mut timers: Vec<&UnitStatus> = units
        .iter()
        .filter(|u| u.kind == UnitType::Timer)
        .filter(|u| all || u.state.is_active())
        .collect();
    let next = |u: &UnitStatus| u.timer.as_ref().and_then(|t| t.next_elapse_usec);
    timers.sort_by_key(|u| (next(u).is_none(), next(u), u.unit.clone()));
    let rows: Vec<[String; 6]> = timers
        .iter()
        .map(|u| {
            let t = u.timer.as_ref();
            let next = t.and_then(|t| t.next_elapse_usec);
            let last = t.and_then(|t| t.last_trigger_usec);
            [
                next.map_or("-".into(), stamp),
                next.map_or("-".into(), |n| {
                    format!(
                        "{} left",
                        relative_span(Duration::from_micros(n.saturating_sub(now)))
                    )
                }),
                last.map_or("-".into(), stamp),
                last.map_or("-".into(), |l| {
                    format!(
                        "{} ago",
                        relative_span(Duration::from_micros(now.saturating_sub(l)))
                    )
                }),
                u.unit.clone(),
                u.activates.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let heads = ["NEXT", "LEFT", "LAST", "PASSED", "UNIT", "ACTIVATES"];
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].len())
            .chain([heads[i].len()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..5).map(width).collect();
    let line = |cells: [&str; 6]| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate().take(5) {
            l.push_str(&format!("{c:<w$} ", w = widths[i]));
        }
        l.push_str(cells[5]);
        l.push('\n');
        l
    };
    let mut out = String::new();
    if !no_legend {
        out.push_str(&line(heads));
    }
    for r in &rows {
        out.push_str(&line([&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]]));
    }
    if !no_legend {
        let s = if rows.len() == 1 { "" } else { "s" };
        out.push_str(&format!("\n{} timer{s} listed.\n", rows.len()));
        if !all {
            out.push_str("Pass --all to see loaded but inactive timers, too.\n");
        }
    }
    out
}

/// Microseconds since the epoch as systemd's timestamp (UTC).
fn stamp(us: u64) -> String {
    systemd_timestamp(i64::try_from(us / 1_000_000).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::status::tests::unit;
    use flotilla_units::protocol::TimerTimes;
    use flotilla_units::state::UnitState;

    const S: u64 = 1_000_000;
    /// Mon 2026-11-23 06:00:00 UTC.
    const NOW: u64 = 1_795_413_600 * S;

    fn timer(name: &str, next: Option<u64>, last: Option<u64>) -> UnitStatus {
        let mut u = unit(name, UnitType::Timer, UnitState::Running);
        u.timer = Some(TimerTimes {
            next_elapse_usec: next,
            last_trigger_usec: last,
        });
        u.activates = Some(name.replace(".timer", ".service"));
        u
    }

    #[test]
    fn soonest_first_with_systemctls_columns() {
        let units = vec![
            timer("backup.timer", None, Some(NOW - 3600 * S)),
            timer(
                "apt-daily.timer",
                Some(NOW + (2 * 3600 + 3 * 60) * S),
                Some(NOW - 21 * 3600 * S),
            ),
            timer("soon.timer", Some(NOW + 43 * S), None),
            unit(
                "web.service",
                UnitType::ForegroundSupervised,
                UnitState::Running,
            ),
            {
                let mut t = timer("idle.timer", None, None);
                t.state = UnitState::Disabled;
                t
            },
        ];
        let out = render(&units, NOW, false, false);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("NEXT "), "{out}");
        assert!(lines[0].ends_with(" ACTIVATES"), "{out}");
        assert!(
            lines[1].starts_with("Mon 2026-11-23 06:00:43 UTC 43s left")
                && lines[1].contains(" - ")
                && lines[1].ends_with("soon.timer      soon.service"),
            "{out}"
        );
        assert!(
            lines[2].starts_with(
                "Mon 2026-11-23 08:03:00 UTC 2h 3min left Sun 2026-11-22 09:00:00 UTC 21h ago"
            ) && lines[2].ends_with("apt-daily.service"),
            "{out}"
        );
        assert!(lines[3].starts_with("- "), "{out}");
        assert!(lines[3].contains("1h 0min ago"), "{out}");
        assert_eq!(
            &lines[4..],
            [
                "",
                "3 timers listed.",
                "Pass --all to see loaded but inactive timers, too."
            ]
        );
        let all = render(&units, NOW, true, true);
        assert_eq!(all.lines().count(), 4, "{all}");
        assert!(all.contains("idle.timer"), "{all}");
    }
}
