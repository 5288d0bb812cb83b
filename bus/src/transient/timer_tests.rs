//! Transient timers: what `systemd-run --on-active=`, `--on-calendar=`,
//! `--on-clock-change` and `--timer-property=` send (the timer, with the
//! service it starts as its auxiliary unit).

use super::tests::{props, service_aux, v};
use super::*;
use flotilla_units::spec::UnitType;
use std::time::Duration;

#[test]
fn a_timer_comes_with_the_service_it_starts() {
    let timer = props(vec![
        ("Description", v("/bin/true")),
        ("RemainAfterElapse", v(false)),
        (
            "TimersMonotonic",
            v(vec![
                ("OnActiveSec".to_string(), 30_000_000u64),
                ("OnBootSec".to_string(), 5_000_000u64),
                ("OnUnitActiveSec".to_string(), 60_000_000u64),
            ]),
        ),
        (
            "TimersCalendar",
            v(vec![("OnCalendar".to_string(), "*:0/15:0".to_string())]),
        ),
        ("OnClockChange", v(true)),
        ("Persistent", v(true)),
        ("AccuracyUSec", v(1_000_000u64)),
        ("RandomizedDelayUSec", v(2_000_000u64)),
    ]);
    let a = asked("run-u7.timer", timer, service_aux("run-u7.service")).unwrap();
    assert_eq!(a.unit.kind, UnitType::Timer);
    assert_eq!(a.unit.extras.collect_mode, Some(CollectMode::Inactive));
    let t = a.unit.timer().unwrap();
    assert_eq!(t.on_active, [Duration::from_secs(30)]);
    assert_eq!(t.on_boot, [Duration::from_secs(5)]);
    assert_eq!(t.on_unit_active, [Duration::from_secs(60)]);
    assert_eq!(t.on_calendar.len(), 1);
    assert!(t.on_clock_change && t.persistent && !t.remain_after_elapse);
    assert_eq!(t.accuracy, Duration::from_secs(1));
    assert_eq!(t.randomized_delay, Duration::from_secs(2));
    assert_eq!(a.unit.extras.triggers.to_vec(), ["run-u7.service"]);
    assert_eq!(a.aux.len(), 1);
    let s = &a.aux[0];
    assert_eq!(s.name, "run-u7.service");
    assert_eq!(s.exec_start.as_ref().unwrap().argv.to_vec(), ["/bin/true"]);
    assert_eq!(s.extras.collect_mode, Some(CollectMode::Inactive));
}

#[test]
fn what_a_timer_cannot_take_is_named() {
    // A calendar expression the translator refuses: the caller's.
    let bad = props(vec![(
        "TimersCalendar",
        v(vec![("OnCalendar".to_string(), "someday".to_string())]),
    )]);
    let e = asked("t.timer", bad, Vec::new()).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.InvalidArgs");
    assert!(
        e.message.contains("property TimersCalendar"),
        "{}",
        e.message
    );
    // A monotonic timer of a key that is none.
    let bad = props(vec![(
        "TimersMonotonic",
        v(vec![("OnLunchSec".to_string(), 1u64)]),
    )]);
    let e = asked("t.timer", bad, Vec::new()).unwrap_err();
    assert!(e.message.contains("OnLunchSec"), "{}", e.message);
    // Auxiliary units with a service, or a timer's that is no service.
    let e = asked(
        "t.service",
        service_aux("u.service").remove(0).1,
        service_aux("v.service"),
    )
    .unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.NotSupported");
    assert!(
        e.message.contains("Auxiliary transient units of t.service"),
        "{}",
        e.message
    );
    let e = asked("t.timer", Vec::new(), service_aux("t.socket")).unwrap_err();
    assert!(
        e.message.contains("auxiliary transient unit t.socket"),
        "{}",
        e.message
    );
    // `--on-timezone-change`: a key flotilla's timers do not take.
    let tz = props(vec![("OnTimezoneChange", v(true))]);
    let e = asked("t.timer", tz, Vec::new()).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.NotSupported");
    assert!(
        e.message
            .contains("StartTransientUnit with OnTimezoneChange"),
        "{}",
        e.message
    );
    // A type flotilla does not make: said so.
    let e = asked("tmp-aaa.swap", Vec::new(), Vec::new()).unwrap_err();
    assert!(
        e.message
            .contains("tmp-aaa.swap is not supported by flotilla: flotilla makes transient"),
        "{}",
        e.message
    );
}
