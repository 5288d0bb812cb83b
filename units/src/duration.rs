//! Durations as unit files write them: `500ms`, `2s`, `1m`, `1h`, or a bare
//! number of seconds.
//!
//! The syntax is systemd's: one or more `NUMBER UNIT` parts, summed, with
//! optional spaces between the parts (`1m30s`, `1m 30s`, `1h 2min`). A
//! number may have a fractional part (`1.5s`, `0.25h`). A bare number
//! without a unit (`90`, `1.5`) is a number of seconds; inside a combination
//! every part needs its unit.
//!
//! | unit | spellings |
//! | --- | --- |
//! | nanoseconds | `ns`, `nsec` |
//! | microseconds | `us`, `µs`, `usec` |
//! | milliseconds | `ms`, `msec` |
//! | seconds | `s`, `sec`, `secs`, `second`, `seconds` |
//! | minutes | `m`, `min`, `mins`, `minute`, `minutes` |
//! | hours | `h`, `hr`, `hrs`, `hour`, `hours` |
//! | days | `d`, `day`, `days` |
//!
//! [`format_duration`] prints the shortest such form, and parsing what it
//! prints gives back the same duration.

use std::time::Duration;

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// The units and their lengths in nanoseconds.
const UNITS: [(&[&str], u128); 7] = [
    (&["ns", "nsec"], 1),
    (&["us", "µs", "usec"], 1_000),
    (&["ms", "msec"], 1_000_000),
    (&["s", "sec", "secs", "second", "seconds"], NANOS_PER_SEC),
    (
        &["m", "min", "mins", "minute", "minutes"],
        60 * NANOS_PER_SEC,
    ),
    (&["h", "hr", "hrs", "hour", "hours"], 3_600 * NANOS_PER_SEC),
    (&["d", "day", "days"], 86_400 * NANOS_PER_SEC),
];

/// What the error messages list as the accepted units.
const UNIT_HINT: &str = "use `ns`, `us`, `ms`, `s`, `m` or `min`, `h`, `d`";

/// Parses a duration: `500ms`, `2s`, `1m`, `1h`, `1m30s`, `1.5` (seconds).
///
/// The error is a sentence fragment naming the problem and the input, e.g.
/// ``unknown unit `x` in `5x` (use `ns`, `us`, …)``, meant to follow a
/// prefix such as "bad duration in `start-timeout`: ".
///
/// ```
/// use flotilla_units::duration::parse_duration;
/// use std::time::Duration;
/// assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
/// assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
/// assert!(parse_duration("5 parsecs").is_err());
/// ```
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let text = s.trim();
    if text.is_empty() {
        return Err("empty duration (write e.g. `2s` or `500ms`)".to_string());
    }
    if !text.chars().any(|c| c.is_ascii_digit()) {
        return Err(format!(
            "`{text}` is not a duration (write e.g. `2s` or `500ms`)"
        ));
    }
    if text.starts_with('-') {
        return Err(format!("`{text}` is negative; a duration is 0 or more"));
    }
    let bytes: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut total: u128 = 0;
    let mut parts = 0usize;
    while i < bytes.len() {
        while i < bytes.len() && bytes[i].is_whitespace() {
            i += 1;
        }
        if i >= bytes.len() {
            break;
        }
        // The number.
        let num_start = i;
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == '.') {
            i += 1;
        }
        let number: String = bytes[num_start..i].iter().collect();
        if number.is_empty() {
            if !is_unit_char(bytes[i]) {
                return Err(format!("unexpected `{}` in `{text}`", bytes[i]));
            }
            let rest: String = bytes[i..].iter().collect();
            return Err(format!("expected a number at `{rest}` in `{text}`"));
        }
        // Spaces between a number and its unit are fine (`5 min`).
        let mut j = i;
        while j < bytes.len() && bytes[j].is_whitespace() {
            j += 1;
        }
        let unit_start = j;
        while j < bytes.len() && is_unit_char(bytes[j]) {
            j += 1;
        }
        let unit: String = bytes[unit_start..j].iter().collect();
        let unit_nanos = if unit.is_empty() {
            if j < bytes.len() && !bytes[j].is_ascii_digit() && bytes[j] != '.' {
                return Err(format!("unexpected `{}` in `{text}`", bytes[j]));
            }
            if parts == 0 && j >= bytes.len() {
                // A bare number: seconds.
                NANOS_PER_SEC
            } else {
                return Err(format!(
                    "missing unit after `{number}` in `{text}` ({UNIT_HINT})"
                ));
            }
        } else {
            match unit_length(&unit) {
                Some(n) => n,
                None => return Err(format!("unknown unit `{unit}` in `{text}` ({UNIT_HINT})")),
            }
        };
        let nanos = scaled(&number, unit_nanos).ok_or_else(|| {
            if number.chars().filter(|&c| c == '.').count() > 1 || number == "." {
                format!("`{number}` is not a number in `{text}`")
            } else {
                format!("`{text}` is too long a duration")
            }
        })?;
        total = total
            .checked_add(nanos)
            .ok_or_else(|| format!("`{text}` is too long a duration"))?;
        parts += 1;
        i = j;
    }
    let secs = u64::try_from(total / NANOS_PER_SEC)
        .map_err(|_| format!("`{text}` is too long a duration"))?;
    // The remainder is below one second, so it fits.
    let nanos = (total % NANOS_PER_SEC) as u32;
    Ok(Duration::new(secs, nanos))
}

fn is_unit_char(c: char) -> bool {
    c.is_alphabetic() || c == 'µ'
}

fn unit_length(unit: &str) -> Option<u128> {
    UNITS
        .iter()
        .find(|(names, _)| names.contains(&unit))
        .map(|&(_, n)| n)
}

/// `number` (digits with at most one `.`) times `unit` nanoseconds, or
/// `None` when it is not a number or does not fit.
fn scaled(number: &str, unit: u128) -> Option<u128> {
    let (int, frac) = match number.split_once('.') {
        Some((a, b)) => (a, b),
        None => (number, ""),
    };
    if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
        return None;
    }
    let mut value: u128 = 0;
    for c in int.chars() {
        value = value
            .checked_mul(10)?
            .checked_add(u128::from(c.to_digit(10)?))?;
        if value > u128::from(u64::MAX) {
            return None;
        }
    }
    let mut nanos = value.checked_mul(unit)?;
    // The fractional part: digits beyond what a nanosecond resolves are dropped.
    let mut scale = unit;
    for c in frac.chars() {
        let d = u128::from(c.to_digit(10)?);
        if scale < 10 {
            continue;
        }
        scale /= 10;
        nanos = nanos.checked_add(d * scale)?;
    }
    Some(nanos)
}

/// Prints a duration in the shortest form [`parse_duration`] reads back:
/// `0s`, `500ms`, `2s`, `1m30s`, `1h`, `1d2h`, `1s500ms`.
///
/// ```
/// use flotilla_units::duration::format_duration;
/// use std::time::Duration;
/// assert_eq!(format_duration(Duration::from_secs(90)), "1m30s");
/// assert_eq!(format_duration(Duration::from_millis(500)), "500ms");
/// ```
pub fn format_duration(d: Duration) -> String {
    if d.is_zero() {
        return "0s".to_string();
    }
    let secs = d.as_secs();
    let sub = d.subsec_nanos();
    let parts: [(u64, &str); 7] = [
        (secs / 86_400, "d"),
        (secs % 86_400 / 3_600, "h"),
        (secs % 3_600 / 60, "m"),
        (secs % 60, "s"),
        (u64::from(sub / 1_000_000), "ms"),
        (u64::from(sub / 1_000 % 1_000), "us"),
        (u64::from(sub % 1_000), "ns"),
    ];
    let mut out = String::new();
    for (n, unit) in parts {
        if n != 0 {
            out.push_str(&n.to_string());
            out.push_str(unit);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Duration {
        match parse_duration(s) {
            Ok(d) => d,
            Err(e) => panic!("{s:?}: {e}"),
        }
    }

    fn err(s: &str) -> String {
        match parse_duration(s) {
            Ok(d) => panic!("{s:?} parsed as {d:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn the_spec_forms() {
        assert_eq!(ok("500ms"), Duration::from_millis(500));
        assert_eq!(ok("2s"), Duration::from_secs(2));
        assert_eq!(ok("1m"), Duration::from_secs(60));
        assert_eq!(ok("1h"), Duration::from_secs(3600));
        assert_eq!(ok("90"), Duration::from_secs(90));
        assert_eq!(ok("0"), Duration::ZERO);
    }

    #[test]
    fn decimals_and_combinations() {
        assert_eq!(ok("1.5"), Duration::from_millis(1500));
        assert_eq!(ok(".5"), Duration::from_millis(500));
        assert_eq!(ok("5."), Duration::from_secs(5));
        assert_eq!(ok("1.5h"), Duration::from_secs(5400));
        assert_eq!(ok("1m30s"), Duration::from_secs(90));
        assert_eq!(ok("1m 30s"), Duration::from_secs(90));
        assert_eq!(ok("  1h 2min  3s "), Duration::from_secs(3723));
        assert_eq!(ok("5 min"), Duration::from_secs(300));
        assert_eq!(ok("1d"), Duration::from_secs(86_400));
        assert_eq!(ok("250us"), Duration::from_micros(250));
        assert_eq!(ok("250µs"), Duration::from_micros(250));
        assert_eq!(ok("7ns"), Duration::from_nanos(7));
        assert_eq!(ok("2 seconds"), Duration::from_secs(2));
        assert_eq!(ok("1s500ms"), Duration::from_millis(1500));
        // Order does not matter, as in systemd.
        assert_eq!(ok("30s1m"), Duration::from_secs(90));
        // More fractional digits than nanoseconds resolve are dropped.
        assert_eq!(ok("0.0000000019"), Duration::from_nanos(1));
        assert_eq!(ok("1.123456789123s"), Duration::new(1, 123_456_789));
    }

    #[test]
    fn errors_name_the_problem() {
        assert_eq!(err(""), "empty duration (write e.g. `2s` or `500ms`)");
        assert_eq!(err("   "), "empty duration (write e.g. `2s` or `500ms`)");
        assert_eq!(
            err("5x"),
            "unknown unit `x` in `5x` (use `ns`, `us`, `ms`, `s`, `m` or `min`, `h`, `d`)"
        );
        assert_eq!(
            err("1m30"),
            "missing unit after `30` in `1m30` (use `ns`, `us`, `ms`, `s`, `m` or `min`, `h`, `d`)"
        );
        assert_eq!(err("-1s"), "`-1s` is negative; a duration is 0 or more");
        assert_eq!(
            err("s"),
            "`s` is not a duration (write e.g. `2s` or `500ms`)"
        );
        assert_eq!(
            err("1s and 2s"),
            "expected a number at `and 2s` in `1s and 2s`"
        );
        assert_eq!(err("1.2.3s"), "`1.2.3` is not a number in `1.2.3s`");
        assert_eq!(
            err("."),
            "`.` is not a duration (write e.g. `2s` or `500ms`)"
        );
        assert_eq!(err("..5s"), "`..5` is not a number in `..5s`");
        assert_eq!(err("1s+2s"), "unexpected `+` in `1s+2s`");
        assert_eq!(
            err("99999999999999999999999d"),
            "`99999999999999999999999d` is too long a duration"
        );
        assert_eq!(
            err("213503982334602d"),
            "`213503982334602d` is too long a duration"
        );
        assert_eq!(
            err("infinity"),
            "`infinity` is not a duration (write e.g. `2s` or `500ms`)"
        );
    }

    #[test]
    fn formatting() {
        assert_eq!(format_duration(Duration::ZERO), "0s");
        assert_eq!(format_duration(Duration::from_millis(500)), "500ms");
        assert_eq!(format_duration(Duration::from_secs(2)), "2s");
        assert_eq!(format_duration(Duration::from_secs(90)), "1m30s");
        assert_eq!(format_duration(Duration::from_secs(3600)), "1h");
        assert_eq!(format_duration(Duration::from_secs(86_400 + 7_200)), "1d2h");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1s500ms");
        assert_eq!(format_duration(Duration::new(0, 1_001)), "1us1ns");
    }

    #[test]
    fn the_largest_duration_round_trips() {
        let max = Duration::new(u64::MAX, 999_999_999);
        assert_eq!(ok(&format_duration(max)), max);
    }

    proptest::proptest! {
        #[test]
        fn format_then_parse_is_identity(secs in 0u64..=u64::MAX, nanos in 0u32..1_000_000_000) {
            let d = Duration::new(secs, nanos);
            proptest::prop_assert_eq!(parse_duration(&format_duration(d)), Ok(d));
        }

        #[test]
        fn never_panics(s in "\\PC*") {
            let _ = parse_duration(&s);
        }

        #[test]
        fn never_panics_on_duration_like_text(s in "[0-9.µa-z -]{0,40}") {
            let _ = parse_duration(&s);
        }
    }
}
