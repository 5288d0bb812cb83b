//! How long ago an RFC 3339 UTC time the init sends (`since`) was; the
//! reader is the protocol's (`flotilla_units::protocol::parse_rfc3339`).

use std::time::Duration;

pub use flotilla_units::protocol::parse_rfc3339;

/// How long ago `since` was, at `now_ms` (ms since the epoch); `None` if
/// `since` cannot be read. A time in the future counts as now.
pub fn age(since: &str, now_ms: i64) -> Option<Duration> {
    let then = parse_rfc3339(since)?;
    Some(Duration::from_millis(
        u64::try_from(now_ms - then).unwrap_or(0),
    ))
}

/// The current time in ms since the epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages() {
        let t = "2026-11-22T04:00:00Z";
        assert_eq!(age(t, 1_795_320_303_000), Some(Duration::from_secs(303)));
        assert_eq!(age(t, 1_795_319_000_000), Some(Duration::ZERO));
        assert_eq!(age("bogus", 0), None);
    }
}
