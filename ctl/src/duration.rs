//! Durations: parsing `--timeout` values and printing spans of time.
//!
//! The accepted forms are the unit files' (docs/contract.md §3), parsed by the same
//! function: `500ms`, `2s`, `1m`, `1h`, or a bare number of seconds, with
//! systemd's extensions (`1m30s`, `1.5s`). Printing follows systemd-analyze:
//! `512ms`, `1.234s`, `1min 2.345s`, `1h 2min 3.456s`.

use std::time::Duration;

/// Parses a duration exactly as unit files write them
/// ([`flotilla_units::duration::parse_duration`]): `500ms`, `2s`, `1m`, `1h`,
/// `1m30s`, `1.5s`, or a bare number of seconds.
pub fn parse(text: &str) -> Result<Duration, String> {
    flotilla_units::duration::parse_duration(text)
        .map_err(|e| format!("invalid duration '{text}': {e}"))
}

/// Formats milliseconds as systemd-analyze does: `0ms`, `512ms`, `1.234s`,
/// `1min 2.345s`, `1h 2min 3.456s`.
pub fn format_ms(ms: u64) -> String {
    if ms < 1_000 {
        return format!("{ms}ms");
    }
    let hours = ms / 3_600_000;
    let minutes = (ms / 60_000) % 60;
    let seconds = (ms % 60_000) as f64 / 1000.0;
    let mut parts = Vec::new();
    if hours > 0 {
        parts.push(format!("{hours}h"));
    }
    if minutes > 0 {
        parts.push(format!("{minutes}min"));
    }
    if seconds > 0.0 {
        parts.push(format!("{}s", trim_fraction(format!("{seconds:.3}"))));
    }
    parts.join(" ")
}

/// Formats a duration for people, to the second: `0s`, `42s`, `5min 3s`,
/// `2h 5min`, `3d 4h`.
pub fn format_coarse(d: Duration) -> String {
    let s = d.as_secs();
    let (days, hours, minutes, seconds) = (s / 86_400, (s / 3600) % 24, (s / 60) % 60, s % 60);
    if days > 0 {
        format!("{days}d {hours}h")
    } else if hours > 0 {
        format!("{hours}h {minutes}min")
    } else if minutes > 0 {
        format!("{minutes}min {seconds}s")
    } else {
        format!("{seconds}s")
    }
}

/// Formats a `--timeout` value back as the user would write it.
pub fn format_timeout(d: Duration) -> String {
    let ms = d.as_millis();
    if !ms.is_multiple_of(1000) {
        format!("{ms}ms")
    } else {
        format!("{}s", ms / 1000)
    }
}

/// `1.200` -> `1.2`, `1.000` -> `1`.
fn trim_fraction(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_documented_form() {
        assert_eq!(parse("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse("1min"), Ok(Duration::from_secs(60)));
        assert_eq!(parse("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse("0"), Ok(Duration::ZERO));
        assert_eq!(parse("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse("0.25"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("1.5m"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("2.5ms"), Ok(Duration::from_micros(2500)));
        assert_eq!(parse("1m30s"), Ok(Duration::from_secs(90)));
    }

    #[test]
    fn rejects_bad_durations() {
        for bad in [
            "",
            "s",
            "ms",
            "-1",
            "-1s",
            "1x",
            "abc",
            "1e3",
            "soon",
            "5 parsecs",
            "99999999999999999999h",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(&format!("'{bad}'")), "{bad}: {e}");
        }
    }

    #[test]
    fn formats_like_systemd_analyze() {
        assert_eq!(format_ms(0), "0ms");
        assert_eq!(format_ms(512), "512ms");
        assert_eq!(format_ms(999), "999ms");
        assert_eq!(format_ms(1000), "1s");
        assert_eq!(format_ms(1234), "1.234s");
        assert_eq!(format_ms(1200), "1.2s");
        assert_eq!(format_ms(62_345), "1min 2.345s");
        assert_eq!(format_ms(60_000), "1min");
        assert_eq!(format_ms(3_600_500), "1h 0.5s");
        assert_eq!(format_ms(3_723_456), "1h 2min 3.456s");
    }

    #[test]
    fn formats_coarse_spans() {
        assert_eq!(format_coarse(Duration::from_millis(400)), "0s");
        assert_eq!(format_coarse(Duration::from_secs(42)), "42s");
        assert_eq!(format_coarse(Duration::from_secs(303)), "5min 3s");
        assert_eq!(format_coarse(Duration::from_secs(7500)), "2h 5min");
        assert_eq!(
            format_coarse(Duration::from_secs(3 * 86_400 + 4 * 3600 + 5)),
            "3d 4h"
        );
    }

    #[test]
    fn formats_timeouts() {
        assert_eq!(format_timeout(Duration::from_secs(2)), "2s");
        assert_eq!(format_timeout(Duration::from_millis(500)), "500ms");
        assert_eq!(format_timeout(Duration::from_millis(1500)), "1500ms");
    }
}
