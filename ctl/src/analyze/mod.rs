//! `initctl analyze`: start-up timing and the unit graph, computed from the
//! init's [`AnalyzeData`] by pure functions.
//!
//! All times are milliseconds since the init started, as the init reports
//! them. A unit's *activation time* is `active_ms - start_ms` of its last
//! start, when it became active after that start.
//!
//! - [`blame`]: units by activation time, slowest first.
//! - [`chain`]: the chain of units that delayed a unit or target.
//! - [`plot`]: an SVG timeline.
//! - [`dot`]: the graph in Graphviz dot.
//! - [`security`]: declared confinement against what a running process has.

pub mod blame;
pub mod chain;
pub mod dot;
pub mod plot;
pub mod security;

use flotilla_units::protocol::{AnalyzeData, UnitTiming};

/// The unit named `name`, or else the provider of the target `name`.
pub fn find<'a>(data: &'a AnalyzeData, name: &str) -> Option<&'a UnitTiming> {
    data.units.iter().find(|u| u.unit == name).or_else(|| {
        data.units
            .iter()
            .find(|u| u.provides.iter().any(|t| t == name))
    })
}

/// The unit named `name`.
pub fn unit<'a>(data: &'a AnalyzeData, name: &str) -> Option<&'a UnitTiming> {
    data.units.iter().find(|u| u.unit == name)
}

/// The activation time of the unit's last start, if it became active after
/// it.
pub fn activation_ms(u: &UnitTiming) -> Option<u64> {
    match (u.start_ms, u.active_ms) {
        (Some(s), Some(a)) if a >= s => Some(a - s),
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use flotilla_units::protocol::Edge;
    use flotilla_units::spec::UnitType;
    use flotilla_units::state::{DepKind, UnitState};

    /// A unit with timing and no dependencies.
    pub(crate) fn timing(
        name: &str,
        state: UnitState,
        start: Option<u64>,
        active: Option<u64>,
        end: Option<u64>,
    ) -> UnitTiming {
        UnitTiming {
            unit: name.into(),
            kind: UnitType::ForegroundSupervised,
            state,
            provides: vec![name.into()],
            deps: vec![],
            required: true,
            start_ms: start,
            active_ms: active,
            end_ms: end,
        }
    }

    /// A dependency edge on `target`, provided by `provider`.
    pub(crate) fn edge(kind: DepKind, target: &str, provider: Option<&str>) -> Edge {
        Edge {
            kind,
            target: target.into(),
            provider: provider.map(str::to_string),
        }
    }

    /// A small boot: `web` needs `db` (as target `postgres`) and `cache`,
    /// both need `net`; `opt` failed; `old` is not required.
    pub(crate) fn boot() -> AnalyzeData {
        use DepKind::*;
        use UnitState::*;
        let mut net = timing("net", Exited, Some(10), Some(110), None);
        net.kind = UnitType::Oneshot;
        net.provides = vec!["network-online".into()];
        let mut db = timing("db", Running, Some(110), Some(1310), None);
        db.provides = vec!["postgres".into()];
        db.deps = vec![edge(DependsOn, "network-online", Some("net"))];
        let mut cache = timing("cache", Running, Some(110), Some(400), None);
        cache.deps = vec![edge(WaitsFor, "network-online", Some("net"))];
        let mut opt = timing("opt", Failed, Some(10), None, Some(2010));
        opt.deps = vec![];
        let mut web = timing("web", Running, Some(1310), Some(2345), None);
        web.kind = UnitType::ForegroundNotified;
        web.deps = vec![
            edge(DependsOn, "postgres", Some("db")),
            edge(DependsMs, "cache", Some("cache")),
            edge(WaitsFor, "opt", Some("opt")),
            edge(WaitsFor, "metrics", None),
        ];
        let mut default = timing("default", Running, Some(2345), Some(2345), None);
        default.kind = UnitType::Virtual;
        default.deps = vec![edge(DependsOn, "web", Some("web"))];
        let mut old = timing("old", Disabled, None, None, None);
        old.required = false;
        AnalyzeData {
            target: "default".into(),
            target_set_ms: 0,
            target_active_ms: Some(2345),
            now_ms: 0,
            units: vec![cache, db, default, net, old, opt, web],
        }
    }

    #[test]
    fn finds_units_and_targets() {
        let d = boot();
        assert_eq!(find(&d, "db").unwrap().unit, "db");
        assert_eq!(find(&d, "postgres").unwrap().unit, "db");
        assert!(find(&d, "nothing").is_none());
        assert!(unit(&d, "postgres").is_none());
    }

    #[test]
    fn activation_times() {
        let d = boot();
        assert_eq!(activation_ms(unit(&d, "db").unwrap()), Some(1200));
        assert_eq!(activation_ms(unit(&d, "opt").unwrap()), None);
        // Active before its last start: restarted and not active since.
        let u = timing("x", UnitState::Starting, Some(500), Some(100), None);
        assert_eq!(activation_ms(&u), None);
    }
}
