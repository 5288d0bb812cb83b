//! Reading the RFC 3339 UTC times the init sends (`since`, what
//! [`super::rfc3339`] writes), for the clients: one reader for `initctl`'s
//! ages and log windows and for the tests' own clocks.

use crate::civil::days_from_civil;

/// Milliseconds since the Unix epoch of an RFC 3339 time such as
/// `2026-11-22T04:00:00Z`, `2026-11-22T04:00:00.123Z` or
/// `2026-11-22T05:00:00+01:00`. `None` if it is not one.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(r)?;
        if s.bytes().all(|c| c.is_ascii_digit()) {
            s.parse().ok()
        } else {
            None
        }
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &text[19..];
    let mut millis = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        for (i, c) in frac.bytes().take(3).enumerate().take(digits) {
            millis += i64::from(c - b'0') * 10i64.pow(2 - i as u32);
        }
        rest = &frac[digits..];
    }
    let offset_secs = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && (rest.starts_with('+') || rest.starts_with('-')) => {
            let two = |r: std::ops::Range<usize>| -> Option<i64> {
                let s = rest.get(r)?;
                s.bytes()
                    .all(|c| c.is_ascii_digit())
                    .then(|| s.parse().ok())?
            };
            if rest.as_bytes()[3] != b':' {
                return None;
            }
            let (h, m) = (two(1..3)?, two(4..6)?);
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (h * 3600 + m * 60)
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_secs;
    Some(secs * 1000 + millis)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::rfc3339;

    #[test]
    fn reads_what_the_protocol_writes() {
        for (secs, nanos) in [
            (0, 0),
            (1_795_320_000, 123_000_000),
            (951_782_400, 0),
            (4_102_444_799, 999_000_000),
        ] {
            let text = rfc3339(secs, nanos);
            assert_eq!(
                parse_rfc3339(&text),
                Some(secs * 1000 + i64::from(nanos / 1_000_000)),
                "{text}"
            );
        }
    }

    #[test]
    fn reads_other_forms() {
        assert_eq!(
            parse_rfc3339("2026-11-22T04:00:00Z"),
            Some(1_795_320_000_000)
        );
        assert_eq!(
            parse_rfc3339("2026-11-22T05:00:00+01:00"),
            Some(1_795_320_000_000)
        );
        assert_eq!(
            parse_rfc3339("2026-11-22T03:30:00-00:30"),
            Some(1_795_320_000_000)
        );
        assert_eq!(
            parse_rfc3339("2026-11-22T04:00:00.5Z"),
            Some(1_795_320_000_500)
        );
        assert_eq!(
            parse_rfc3339("2026-11-22T04:00:00.123456789Z"),
            Some(1_795_320_000_123)
        );
    }

    #[test]
    fn refuses_non_times() {
        for bad in [
            "",
            "now",
            "2026-11-22",
            "2026-11-22T04:00:00",
            "2026-13-22T04:00:00Z",
            "2026-11-22T24:00:00Z",
            "2026-11-22T04:00:00.Z",
            "2026-11-22T04:00:00+0100",
            "2026/11/22T04:00:00Z",
            "20a6-11-22T04:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
