//! `.timer` settings read from unit files, and their next elapse.

use flotilla_units::fleet::UnitOption;
use flotilla_units::time::Instant;
use flotilla_units::timer::*;
use flotilla_units::tz::TimeZone;
use std::time::Duration;

fn parse(text: &str) -> Vec<UnitOption> {
    crate::parse(text).options
}

const S: u64 = 1_000_000;
const T0: u64 = 1_704_067_200 * S; // 2024-01-01 00:00:00 UTC

fn timer(text: &str) -> TimerSettings {
    TimerSettings::from_options("backup.timer", &parse(text)).unwrap()
}

fn secs(s: u64) -> Instant {
    Instant(s * 1_000_000_000)
}

fn next(t: &TimerSettings, c: &TimerClock) -> TimerNext {
    t.next_elapse(c, &TimeZone::utc(), &|_| None)
}

fn clock() -> TimerClock {
    TimerClock {
        now: secs(100),
        now_realtime: T0 + 100 * S,
        init_start: secs(5),
        timer_activated: Some((secs(90), T0 + 90 * S)),
        ..TimerClock::default()
    }
}

#[test]
fn settings_are_read_with_systemd_defaults_and_resets() {
    let t = timer("[Timer]\nOnCalendar=daily\nOnCalendar=\nOnCalendar=hourly\nOnBootSec=5min\nPersistent=yes\nRandomizedDelaySec=1h\n");
    assert_eq!(t.on_calendar.len(), 1);
    assert_eq!(t.on_calendar[0].to_string(), "*-*-* *:00:00");
    assert_eq!(t.on_boot, [Duration::from_secs(300)]);
    assert!(t.persistent);
    assert_eq!(t.accuracy, Duration::from_secs(60));
    assert_eq!(t.randomized_delay, Duration::from_secs(3600));
    assert!(t.remain_after_elapse);
}

#[test]
fn bad_settings_name_the_key_and_value() {
    let e = |text: &str| {
        TimerSettings::from_options("b.timer", &parse(text))
            .unwrap_err()
            .to_string()
    };
    assert!(e("[Timer]\nOnCalendar=someday\n").starts_with("OnCalendar=someday: invalid calendar"));
    assert_eq!(
        e("[Timer]\nOnBootSec=5 parsecs\n"),
        "OnBootSec=5 parsecs: unknown unit \"parsecs\" (use us, ms, s, min, h, d, w, M, y)"
    );
    assert_eq!(
        e("[Timer]\nOnBootSec=1\nPersistent=maybe\n"),
        "Persistent=maybe: not a boolean (yes/no)"
    );
    assert!(e("[Timer]\nPersistent=yes\n").contains("b.timer has no OnActiveSec="));
    assert!(e("[Timer]\nOnCalendar=daily\nOnCalendar=\n").contains("has no"));
}

#[test]
fn wake_between_prefers_a_shared_spot_late_in_the_window() {
    const M: u64 = 60_000_000;
    // The minute's spot (perturb 7 s) when the window holds one.
    assert_eq!(wake_between(10 * M, 12 * M, 7 * S), 11 * M + 7 * S);
    // A window shorter than the spot: every 10 s, then every second.
    assert_eq!(
        wake_between(10 * M, 10 * M + 15 * S, 20 * S),
        10 * M + 10 * S
    );
    assert_eq!(
        wake_between(10 * M + 2 * S, 10 * M + 3_500_000, 0),
        10 * M + 3 * S
    );
    // Nothing fits: the end; an empty window: its start.
    assert_eq!(wake_between(10 * M + 1, 10 * M + 100, 0), 10 * M + 100);
    assert_eq!(wake_between(5, 5, 0), 5);
    assert_eq!(wake_between(5, 6, 0), 5);
}

#[test]
fn settings_round_trip_through_json() {
    let t = timer("[Timer]\nOnCalendar=Mon..Fri 09:30 Europe/Berlin\nOnCalendar=@1700000000\nOnBootSec=5min\nPersistent=yes\nAccuracySec=1s\n");
    let json = serde_json::to_string(&t).unwrap();
    let back: TimerSettings = serde_json::from_str(&json).unwrap();
    assert_eq!(back, t);
    assert!(
        json.contains("Mon..Fri *-*-* 09:30:00 Europe/Berlin"),
        "{json}"
    );
    let bad = serde_json::from_str::<TimerSettings>(r#"{"on-calendar":["someday"]}"#);
    assert!(bad.unwrap_err().to_string().contains("invalid calendar"));
}

#[test]
fn monotonic_bases() {
    let c = clock();
    let w = |m: u64| TimerNext::Waiting {
        monotonic: Some(secs(m)),
        realtime: None,
        accuracy: Duration::from_secs(60),
    };
    assert_eq!(next(&timer("[Timer]\nOnActiveSec=30\n"), &c), w(120));
    assert_eq!(
        next(&timer("[Timer]\nOnBootSec=30\n"), &c),
        w(30),
        "already due: fires at once"
    );
    let container = TimerClock {
        in_container: true,
        ..c
    };
    assert_eq!(next(&timer("[Timer]\nOnBootSec=30\n"), &container), w(35));
    assert_eq!(next(&timer("[Timer]\nOnStartupSec=1min\n"), &c), w(65));
    assert_eq!(
        next(&timer("[Timer]\nOnActiveSec=30\nOnStartupSec=1min\n"), &c),
        w(65),
        "the earliest"
    );
    // After the trigger, a one-time value in the past is dropped.
    let fired = TimerClock {
        last_trigger: Some((secs(65), T0 + 65 * S)),
        ..c
    };
    assert_eq!(
        next(
            &timer("[Timer]\nOnActiveSec=30\nOnStartupSec=1min\n"),
            &fired
        ),
        w(120)
    );
    assert_eq!(
        next(
            &timer("[Timer]\nOnStartupSec=1min\nRemainAfterElapse=no\n"),
            &fired
        ),
        TimerNext::Elapsed { remain: false }
    );
    assert_eq!(
        next(&timer("[Timer]\nOnStartupSec=1min\n"), &fired),
        TimerNext::Elapsed { remain: true }
    );
}

#[test]
fn unit_relative_bases() {
    let t = timer("[Timer]\nOnUnitActiveSec=1h\nRemainAfterElapse=no\n");
    // The unit never ran: nothing to count from, but the timer stays.
    assert_eq!(next(&t, &clock()), TimerNext::Elapsed { remain: true });
    let ran = TimerClock {
        unit_active_since: Some(secs(50)),
        ..clock()
    };
    let w = |m: u64| TimerNext::Waiting {
        monotonic: Some(secs(m)),
        realtime: None,
        accuracy: Duration::from_secs(60),
    };
    assert_eq!(next(&t, &ran), w(3650));
    let later = TimerClock {
        last_trigger: Some((secs(80), T0 + 80 * S)),
        ..ran
    };
    assert_eq!(
        next(&t, &later),
        w(3680),
        "the later of activation and trigger"
    );
    let t = timer("[Timer]\nOnUnitInactiveSec=10\n");
    let stopped = TimerClock {
        unit_inactive_since: Some(secs(95)),
        ..clock()
    };
    assert_eq!(next(&t, &stopped), w(105));
}

#[test]
fn calendar_and_persistence() {
    let t = timer("[Timer]\nOnCalendar=*-*-* 06:00\n");
    let c = clock();
    let r = |real: u64| TimerNext::Waiting {
        monotonic: None,
        realtime: Some(real),
        accuracy: Duration::from_secs(60),
    };
    assert_eq!(next(&t, &c), r(T0 + 6 * 3600 * S));
    // A stamp is ignored without Persistent=.
    let stamped = TimerClock {
        stamp: Some(T0 - 86_400 * S),
        ..c
    };
    assert_eq!(next(&t, &stamped), r(T0 + 6 * 3600 * S));
    // With it, the elapse missed yesterday at 06:00 is moved to the
    // init's start: the timer fires at once.
    let t = timer("[Timer]\nOnCalendar=*-*-* 06:00\nPersistent=true\n");
    assert_eq!(next(&t, &stamped), r(T0 + 5 * S));
    // A stamp in the future (a wrong clock) is ignored.
    let future = TimerClock {
        stamp: Some(T0 + 86_400 * S),
        ..c
    };
    assert_eq!(next(&t, &future), r(T0 + 6 * 3600 * S));
    // After a trigger, the next one counts from it.
    let fired = TimerClock {
        last_trigger: Some((secs(100), T0 + 6 * 3600 * S)),
        ..c
    };
    assert_eq!(next(&t, &fired), r(T0 + 30 * 3600 * S));
}

#[test]
fn randomized_delay_uses_the_seed_and_zones_load_by_name() {
    let t = timer("[Timer]\nOnCalendar=*-*-* 06:00 Europe/Berlin\nOnCalendar=*-*-* 07:00\nOnActiveSec=10\nRandomizedDelaySec=100\nAccuracySec=1us\n");
    let c = TimerClock {
        random_seed: 1_000_000 * 250 + 7,
        ..clock()
    };
    // Without the zone the Berlin spec is skipped.
    assert_eq!(
        next(&t, &c),
        TimerNext::Waiting {
            monotonic: Some(secs(100).after(Duration::from_micros(50_000_007))),
            realtime: Some(T0 + 7 * 3600 * S + 50_000_007),
            accuracy: Duration::from_micros(1),
        }
    );
    let berlin = TimeZone::from_posix("Europe/Berlin", "CET-1CEST,M3.5.0,M10.5.0/3").unwrap();
    let n = t.next_elapse(&c, &TimeZone::utc(), &|name| {
        (name == "Europe/Berlin").then(|| berlin.clone())
    });
    assert!(
        matches!(n, TimerNext::Waiting { realtime: Some(r), .. } if r == T0 + 5 * 3600 * S + 50_000_007)
    );
}
