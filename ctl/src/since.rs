//! `initctl logs --since TIME`: the times it takes, as journalctl's
//! `--since` takes them (UTC, as the logs are written):
//!
//! - `2026-11-22`, `2026-11-22 04:00`, `2026-11-22 04:00:30`, or RFC 3339
//!   (`2026-11-22T04:00:30.500Z`, `…+01:00`);
//! - `today`, `yesterday` (midnight UTC), `now`;
//! - `-10m`, `10m ago`, `1h30m ago`: a duration (as unit files write
//!   them) before now.
//!
//! Parsing is pure; [`Since::resolve`] takes the clock.

use crate::timestamp::parse_rfc3339;
use flotilla_units::duration::parse_duration;
use std::time::Duration;

const DAY_MS: i64 = 86_400_000;

/// A `--since` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    /// Milliseconds since the epoch.
    At(i64),
    /// This long before now.
    Ago(Duration),
    /// Midnight UTC today.
    Today,
    /// Midnight UTC yesterday.
    Yesterday,
}

impl Since {
    /// The time in milliseconds since the epoch, `now_ms` being now.
    pub fn resolve(self, now_ms: i64) -> i64 {
        match self {
            Since::At(t) => t,
            Since::Ago(d) => {
                now_ms.saturating_sub(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            }
            Since::Today => now_ms - now_ms.rem_euclid(DAY_MS),
            Since::Yesterday => now_ms - now_ms.rem_euclid(DAY_MS) - DAY_MS,
        }
    }
}

/// Parses a `--since` value; the error says what is accepted.
pub fn parse(text: &str) -> Result<Since, String> {
    let t = text.trim();
    let bad = || {
        format!(
            "invalid time '{text}' (write e.g. 2026-11-22, '2026-11-22 04:00', \
             yesterday, -10m or '1h ago')"
        )
    };
    match t {
        "today" => return Ok(Since::Today),
        "yesterday" => return Ok(Since::Yesterday),
        "now" => return Ok(Since::Ago(Duration::ZERO)),
        _ => {}
    }
    let ago = t
        .strip_prefix('-')
        .or_else(|| t.strip_suffix(" ago").map(str::trim_end));
    if let Some(d) = ago {
        return parse_duration(d).map(Since::Ago).map_err(|_| bad());
    }
    let full = match t.len() {
        10 => format!("{t}T00:00:00Z"),
        16 => format!("{t}:00Z"),
        19 => format!("{t}Z"),
        _ => t.to_string(),
    };
    parse_rfc3339(&full).map(Since::At).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2026-11-22T04:00:00Z.
    const NOW: i64 = 1_795_320_000_000;

    #[test]
    fn absolute_times() {
        assert_eq!(parse("2026-11-22"), Ok(Since::At(NOW - 4 * 3_600_000)));
        assert_eq!(parse("2026-11-22 04:00"), Ok(Since::At(NOW)));
        assert_eq!(parse("2026-11-22T04:00:30"), Ok(Since::At(NOW + 30_000)));
        assert_eq!(parse("2026-11-22T04:00:00.250Z"), Ok(Since::At(NOW + 250)));
        assert_eq!(parse("2026-11-22T05:00:00+01:00"), Ok(Since::At(NOW)));
    }

    #[test]
    fn relative_times() {
        assert_eq!(parse("-10m").map(|s| s.resolve(NOW)), Ok(NOW - 600_000));
        assert_eq!(
            parse("1h30m ago").map(|s| s.resolve(NOW)),
            Ok(NOW - 5_400_000)
        );
        assert_eq!(parse("now").map(|s| s.resolve(NOW)), Ok(NOW));
        assert_eq!(
            parse("today").map(|s| s.resolve(NOW)),
            Ok(NOW - 4 * 3_600_000)
        );
        assert_eq!(
            parse("yesterday").map(|s| s.resolve(NOW)),
            Ok(NOW - 28 * 3_600_000)
        );
    }

    #[test]
    fn bad_times_say_what_is_accepted() {
        for bad in [
            "",
            "soon",
            "2026-13-01",
            "-ten",
            "2026-11-22 4pm",
            "5 parsecs ago",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.starts_with(&format!("invalid time '{bad}'")), "{e}");
        }
    }
}
