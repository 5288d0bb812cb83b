//! `initctl analyze critical-chain [NAME]`: the chain of units that delayed
//! a unit or target, printed as `systemd-analyze critical-chain` does.
//!
//! From the unit (or the provider of the target), follow the dependency, of
//! any kind that gates the start (not `wants`, `requires`: they order
//! nothing), whose provider became
//! active last before this unit's start began; stop at a unit none of whose
//! dependencies became active before it started. Ties go to the harder kind
//! (`depends-on`, then `depends-ms`, then `waits-for`), then to the name. A
//! unit that never started is bounded by nothing: its latest active
//! dependency is taken.

use super::{find, unit};
use crate::duration::format_ms;
use flotilla_units::protocol::AnalyzeData;
use flotilla_units::state::UnitState;
use std::collections::HashSet;

/// One unit of the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The unit.
    pub unit: String,
    /// The target through which the previous link depends on it (for the
    /// head: the name asked for), when that is not the unit's own name.
    pub target: Option<String>,
    /// Its state now.
    pub state: UnitState,
    /// When its last start began.
    pub start_ms: Option<u64>,
    /// When it last became active.
    pub active_ms: Option<u64>,
}

/// The chain, head first. `None` when `name` is neither a unit nor a target.
pub fn critical_chain(data: &AnalyzeData, name: &str) -> Option<Vec<Link>> {
    let head = find(data, name)?;
    let mut chain = Vec::new();
    let mut seen = HashSet::new();
    let mut current = head;
    let mut via = Some(name.to_string()).filter(|n| *n != head.unit);
    loop {
        seen.insert(current.unit.clone());
        chain.push(Link {
            unit: current.unit.clone(),
            target: via.take(),
            state: current.state,
            start_ms: current.start_ms,
            active_ms: current.active_ms,
        });
        let bound = current.start_ms.unwrap_or(u64::MAX);
        let next = current
            .deps
            .iter()
            .filter(|e| e.kind.orders())
            .filter_map(|e| {
                let p = unit(data, e.provider.as_deref()?)?;
                let active = p.active_ms.filter(|&a| a <= bound)?;
                (!seen.contains(&p.unit)).then_some((active, e, p))
            })
            .max_by(|(a1, e1, p1), (a2, e2, p2)| {
                a1.cmp(a2)
                    .then_with(|| e2.kind.cmp(&e1.kind))
                    .then_with(|| p2.unit.cmp(&p1.unit))
            });
        match next {
            Some((_, edge, provider)) => {
                via = Some(edge.target.clone()).filter(|t| *t != provider.unit);
                current = provider;
            }
            None => break,
        }
    }
    Some(chain)
}

/// The chain as a tree, with systemd-analyze's explanation on top.
pub fn render(chain: &[Link]) -> String {
    let mut out = String::from(
        "The time when a unit became active is printed after the \"@\" character.\n\
         The time the unit took to start is printed after the \"+\" character.\n\
         (Times are since the init started.)\n\n",
    );
    for (depth, link) in chain.iter().enumerate() {
        if depth > 0 {
            out.push_str(&"  ".repeat(depth - 1));
            out.push_str("└─");
        }
        out.push_str(&link.unit);
        if let Some(a) = link.active_ms {
            out.push_str(&format!(" @{}", format_ms(a)));
            if let Some(s) = link.start_ms.filter(|&s| a > s) {
                out.push_str(&format!(" +{}", format_ms(a - s)));
            }
        } else if let Some(s) = link.start_ms {
            out.push_str(&format!(" started @{}", format_ms(s)));
        }
        if !link.state.is_active() {
            out.push_str(&format!(" ({})", link.state));
        }
        if let Some(t) = &link.target {
            out.push_str(&format!(" [{t}]"));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::tests::{boot, edge, timing};
    use flotilla_units::state::DepKind;

    fn names(chain: &[Link]) -> Vec<&str> {
        chain.iter().map(|l| l.unit.as_str()).collect()
    }

    #[test]
    fn follows_the_latest_dependency() {
        let d = boot();
        let chain = critical_chain(&d, "default").unwrap();
        // web waited for db (active at 1310), not cache (400) or opt (never active).
        assert_eq!(names(&chain), ["default", "web", "db", "net"]);
        assert_eq!(chain[2].target.as_deref(), Some("postgres"));
        assert_eq!(chain[3].target.as_deref(), Some("network-online"));
        assert_eq!(chain[0].target, None);
    }

    #[test]
    fn starts_from_a_target() {
        let d = boot();
        let chain = critical_chain(&d, "postgres").unwrap();
        assert_eq!(names(&chain), ["db", "net"]);
        assert_eq!(chain[0].target.as_deref(), Some("postgres"));
        assert!(critical_chain(&d, "nothing").is_none());
    }

    #[test]
    fn rendered_as_a_tree() {
        let d = boot();
        assert_eq!(
            render(&critical_chain(&d, "default").unwrap()),
            "\
The time when a unit became active is printed after the \"@\" character.
The time the unit took to start is printed after the \"+\" character.
(Times are since the init started.)

default @2.345s
└─web @2.345s +1.035s
  └─db @1.31s +1.2s [postgres]
    └─net @110ms +100ms [network-online]
"
        );
    }

    #[test]
    fn dependencies_active_after_the_start_do_not_count() {
        use UnitState::*;
        let mut d = boot();
        let mut a = timing("a", Running, Some(100), Some(200), None);
        a.deps = vec![
            edge(DepKind::DependsOn, "b", Some("b")),
            edge(DepKind::DependsOn, "c", Some("c")),
        ];
        // b restarted after a started; c was active before.
        let b = timing("b", Running, Some(150), Some(300), None);
        let c = timing("c", Running, Some(0), Some(50), None);
        d.units = vec![a, b, c];
        assert_eq!(names(&critical_chain(&d, "a").unwrap()), ["a", "c"]);
    }

    #[test]
    fn ties_prefer_harder_kinds_then_names() {
        use UnitState::*;
        let mut d = boot();
        let mut a = timing("a", Running, Some(100), Some(200), None);
        a.deps = vec![
            edge(DepKind::WaitsFor, "w", Some("w")),
            edge(DepKind::DependsMs, "m", Some("m")),
            edge(DepKind::DependsMs, "l", Some("l")),
        ];
        d.units = vec![
            a,
            timing("w", Running, Some(0), Some(50), None),
            timing("m", Running, Some(0), Some(50), None),
            timing("l", Running, Some(0), Some(50), None),
        ];
        assert_eq!(names(&critical_chain(&d, "a").unwrap()), ["a", "l"]);
    }

    #[test]
    fn waiting_and_failed_units_and_cycles() {
        use UnitState::*;
        let mut d = boot();
        let mut a = timing("a", Waiting, None, None, None);
        a.deps = vec![
            edge(DepKind::DependsOn, "b", Some("b")),
            edge(DepKind::DependsOn, "gone", None),
        ];
        let mut b = timing("b", Failed, Some(10), Some(20), Some(30));
        b.deps = vec![edge(DepKind::WaitsFor, "a", Some("a"))];
        d.units = vec![a, b];
        let chain = critical_chain(&d, "a").unwrap();
        assert_eq!(names(&chain), ["a", "b"]);
        assert_eq!(
            render(&chain).lines().skip(4).collect::<Vec<_>>(),
            ["a (waiting)", "└─b @20ms +10ms (failed)"]
        );
        let starting = Link {
            unit: "s".into(),
            target: None,
            state: Starting,
            start_ms: Some(5),
            active_ms: None,
        };
        assert_eq!(
            render(&[starting]).lines().nth(4),
            Some("s started @5ms (starting)")
        );
    }
}
