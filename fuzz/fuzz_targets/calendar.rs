//! OnCalendar= expressions: never panics, and the normalized form systemd
//! would print parses to itself (so what `initctl` shows can be pasted back).
#![no_main]

use flotilla_units::calendar::CalendarSpec;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(spec) = CalendarSpec::parse(text) {
        let shown = spec.to_string();
        let again = CalendarSpec::parse(&shown)
            .unwrap_or_else(|e| panic!("{text:?} shows as {shown:?}, which does not parse: {e}"));
        assert_eq!(again.to_string(), shown, "from {text:?}");
    }
});
