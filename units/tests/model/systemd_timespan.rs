//! systemd time spans, as `RestartSec=` and the `Timeout…Sec=` keys take them.

use flotilla_units::timespan::{parse_timespan, relative_span, TIMESPAN_INFINITY};
use std::time::Duration;

#[test]
fn timespans() {
    let s = Duration::from_secs;
    let ms = Duration::from_millis;
    let cases = [
        ("5", s(5)),
        ("5s", s(5)),
        (" 5 s ", s(5)),
        ("5sec", s(5)),
        ("5 seconds", s(5)),
        ("1second", s(1)),
        ("100ms", ms(100)),
        ("100msec", ms(100)),
        ("250us", Duration::from_micros(250)),
        ("250usec", Duration::from_micros(250)),
        ("250µs", Duration::from_micros(250)),
        ("2m", s(120)),
        ("2min", s(120)),
        ("2minutes", s(120)),
        ("1min 30s", s(90)),
        ("1min30s", s(90)),
        ("1h", s(3600)),
        ("1hr", s(3600)),
        ("2 hours", s(7200)),
        ("1h 2min 3s 4ms", Duration::from_millis(3_723_004)),
        ("1d", s(86400)),
        ("1w", s(604_800)),
        ("1M", s(2_629_800)),
        ("1y", s(31_557_600)),
        ("1.5", ms(1500)),
        ("1.5h", s(5400)),
        (".5s", ms(500)),
        ("0", s(0)),
        ("1 2", s(3)),
        ("1s30", s(31)),
        ("infinity", TIMESPAN_INFINITY),
        (" infinity ", TIMESPAN_INFINITY),
    ];
    for (text, want) in cases {
        assert_eq!(parse_timespan(text), Ok(want), "{text:?}");
    }
}

#[test]
fn bad_timespans() {
    let cases = [
        ("", "empty time span"),
        ("   ", "empty time span"),
        ("-5", "a time span cannot be negative"),
        (
            "5x",
            r#"unknown unit "x" (use us, ms, s, min, h, d, w, M, y)"#,
        ),
        (
            "5secs",
            r#"unknown unit "secs" (use us, ms, s, min, h, d, w, M, y)"#,
        ),
        (
            "5ns",
            r#"unknown unit "ns" (use us, ms, s, min, h, d, w, M, y)"#,
        ),
        ("s", r#"expected a number at "s""#),
        ("1s .", r#"expected a number at ".""#),
        ("Infinity", r#"expected a number at "Infinity""#),
        ("99999999999999999999999y", "time span too large"),
        ("600y", "time span too large"),
    ];
    for (text, msg) in cases {
        assert_eq!(parse_timespan(text), Err(msg.to_string()), "{text:?}");
    }
}

#[test]
fn infinity_is_large_and_safe() {
    assert!(TIMESPAN_INFINITY > Duration::from_secs(100 * 365 * 86400));
    // It can be doubled (restart back-off) without overflow.
    assert!(TIMESPAN_INFINITY.checked_mul(4).is_some());
}

#[test]
fn relative_spans_in_systemds_words() {
    let s = Duration::from_secs;
    assert_eq!(relative_span(Duration::from_millis(43_500)), "43s");
    assert_eq!(relative_span(s(90)), "1min 30s");
    assert_eq!(relative_span(s(7 * 60)), "7min");
    assert_eq!(relative_span(s(2 * 3600 + 3 * 60)), "2h 3min");
    assert_eq!(relative_span(s(21 * 3600)), "21h");
    assert_eq!(relative_span(s(26 * 3600)), "1 day 2h");
    assert_eq!(relative_span(s(3 * 86_400)), "3 days");
    assert_eq!(relative_span(s(9 * 86_400)), "1 week 2 days");
    assert_eq!(relative_span(s(40 * 86_400)), "1 month 9 days");
    assert_eq!(relative_span(s(400 * 86_400)), "1 year 1 month");
    assert_eq!(relative_span(Duration::from_micros(250)), "250us");
}
