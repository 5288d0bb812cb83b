//! systemd time spans (`systemd.time(7)`): `5`, `5s`, `1min 30s`, `100ms`,
//! `2h30m`, `1.5h`, `infinity`.

use std::time::Duration;

/// What `infinity` becomes: a duration far beyond any uptime (about 136
/// years) that still adds to an [`crate::time::Instant`] and doubles
/// without overflowing.
pub const TIMESPAN_INFINITY: Duration = Duration::from_secs(u32::MAX as u64);

const US: u128 = 1_000;
const MS: u128 = 1_000 * US;
const SEC: u128 = 1_000 * MS;
const MIN: u128 = 60 * SEC;
const HOUR: u128 = 60 * MIN;
const DAY: u128 = 24 * HOUR;
const WEEK: u128 = 7 * DAY;
const MONTH: u128 = 2_629_800 * SEC;
const YEAR: u128 = 31_557_600 * SEC;

const UNITS: [(&str, u128); 30] = [
    ("seconds", SEC),
    ("second", SEC),
    ("sec", SEC),
    ("s", SEC),
    ("minutes", MIN),
    ("minute", MIN),
    ("min", MIN),
    ("months", MONTH),
    ("month", MONTH),
    ("M", MONTH),
    ("msec", MS),
    ("ms", MS),
    ("m", MIN),
    ("hours", HOUR),
    ("hour", HOUR),
    ("hr", HOUR),
    ("h", HOUR),
    ("days", DAY),
    ("day", DAY),
    ("d", DAY),
    ("weeks", WEEK),
    ("week", WEEK),
    ("w", WEEK),
    ("years", YEAR),
    ("year", YEAR),
    ("y", YEAR),
    ("usec", US),
    ("us", US),
    ("\u{3bc}s", US),
    ("\u{b5}s", US),
];

/// Parses a systemd time span: one or more `NUMBER[UNIT]` parts, summed,
/// spaces allowed between and inside parts; a part without unit is in
/// seconds; numbers may have a fraction (`1.5h`). Units: `us`/`usec`/`µs`,
/// `ms`/`msec`, `s`/`sec`/`second(s)`, `m`/`min`/`minute(s)`,
/// `h`/`hr`/`hour(s)`, `d`/`day(s)`, `w`/`week(s)`, `M`/`month(s)` (30.44
/// days), `y`/`year(s)` (365.25 days). `infinity` is
/// [`TIMESPAN_INFINITY`].
///
/// ```
/// use flotilla_units::timespan::parse_timespan;
/// use std::time::Duration;
/// assert_eq!(parse_timespan("1min 30s"), Ok(Duration::from_secs(90)));
/// assert_eq!(parse_timespan("5"), Ok(Duration::from_secs(5)));
/// assert_eq!(parse_timespan("100ms"), Ok(Duration::from_millis(100)));
/// ```
pub fn parse_timespan(value: &str) -> Result<Duration, String> {
    let t = value.trim();
    if t == "infinity" {
        return Ok(TIMESPAN_INFINITY);
    }
    if t.is_empty() {
        return Err("empty time span".to_string());
    }
    let chars: Vec<char> = t.chars().collect();
    let mut i = 0;
    let mut total: u128 = 0;
    while i < chars.len() {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if i >= chars.len() {
            break;
        }
        if chars[i] == '-' {
            return Err("a time span cannot be negative".to_string());
        }
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        let int: String = chars[start..i].iter().collect();
        let mut frac = String::new();
        if i < chars.len() && chars[i] == '.' {
            i += 1;
            let fs = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            frac = chars[fs..i].iter().collect();
        }
        if int.is_empty() && frac.is_empty() {
            let rest: String = chars[start..].iter().collect();
            return Err(format!("expected a number at {rest:?}"));
        }
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        let us = i;
        while i < chars.len() && (chars[i].is_alphabetic()) {
            i += 1;
        }
        let unit: String = chars[us..i].iter().collect();
        let mult = if unit.is_empty() {
            SEC
        } else {
            match UNITS.iter().find(|(n, _)| *n == unit) {
                Some(&(_, m)) => m,
                None => {
                    return Err(format!(
                        "unknown unit {unit:?} (use us, ms, s, min, h, d, w, M, y)"
                    ))
                }
            }
        };
        let too_large = || "time span too large".to_string();
        let int_v: u128 = if int.is_empty() {
            0
        } else {
            int.parse().map_err(|_| too_large())?
        };
        let mut part = int_v.checked_mul(mult).ok_or_else(too_large)?;
        // The fraction, to nanosecond precision (digits beyond that dropped).
        let frac = &frac[..frac.len().min(18)];
        if !frac.is_empty() {
            let f: u128 = frac.parse().map_err(|_| too_large())?;
            let scale = 10u128.pow(frac.len() as u32);
            part = part.checked_add(f * mult / scale).ok_or_else(too_large)?;
        }
        total = total.checked_add(part).ok_or_else(too_large)?;
    }
    let nanos = u64::try_from(total).map_err(|_| "time span too large".to_string())?;
    Ok(Duration::from_nanos(nanos))
}

/// A span as systemd words a relative timestamp (`2h 3min`, `1 day 2h`,
/// `43s`, as `systemctl list-timers` shows `LEFT` and `PASSED`): the largest
/// unit, and the next one below it where systemd gives it; a month and a
/// year are the same averages as in [`parse_timespan`].
pub fn relative_span(d: Duration) -> String {
    let ns = d.as_nanos();
    let plural =
        |n: u128, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let two = |big: u128, (one, many): (&str, &str), small: u128, (one2, many2): (&str, &str)| {
        format!(
            "{} {}",
            plural(ns / big, one, many),
            plural(ns % big / small, one2, many2)
        )
    };
    if ns >= YEAR {
        two(YEAR, ("year", "years"), MONTH, ("month", "months"))
    } else if ns >= MONTH {
        two(MONTH, ("month", "months"), DAY, ("day", "days"))
    } else if ns >= WEEK {
        two(WEEK, ("week", "weeks"), DAY, ("day", "days"))
    } else if ns >= 2 * DAY {
        plural(ns / DAY, "day", "days")
    } else if ns >= 25 * HOUR {
        format!("1 day {}h", (ns - DAY) / HOUR)
    } else if ns >= 6 * HOUR {
        format!("{}h", ns / HOUR)
    } else if ns >= HOUR {
        format!("{}h {}min", ns / HOUR, ns % HOUR / MIN)
    } else if ns >= 5 * MIN {
        format!("{}min", ns / MIN)
    } else if ns >= MIN {
        format!("{}min {}s", ns / MIN, ns % MIN / SEC)
    } else if ns >= SEC {
        format!("{}s", ns / SEC)
    } else if ns >= MS {
        format!("{}ms", ns / MS)
    } else {
        format!("{}us", ns / US)
    }
}
