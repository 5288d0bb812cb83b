//! Which of the units ready at once goes first: the one with the longest
//! chain of units ordered after it. Every unit a batch starts is started
//! in the same turn, but the init carries them out one at a time, and on a
//! machine with one CPU the processes they start share it: a unit that
//! heads a long chain (Debian's `systemd-fsck-root.service` →
//! `systemd-remount-fs.service` → … → `systemd-udevd.service`) started
//! first lets the whole chain begin sooner, where name order would put it
//! behind every `modprobe@` and mount of the batch. The order within a
//! batch is the only thing this changes: what a batch holds is decided
//! before (docs/units.md, "Ordering and conflicts": which start goes
//! first).

use super::facts::{Action, Role};
use super::Planner;
use crate::graph::{Graph, UnitId};

impl Action {
    /// The unit whose start this action is part of (checking its
    /// conditions, a command of its start, taking its main PID, arming
    /// it), or `None` for the rest (a signal, a stop's or a reload's
    /// command, a trigger disarmed, a stamp saved).
    fn starting(&self) -> Option<UnitId> {
        match self {
            Action::Spawn { unit, role, .. } => match role {
                Role::Pre(_) | Role::Main | Role::Then(_) | Role::Post(_) => Some(*unit),
                Role::Stop | Role::StopPost(_) | Role::Reload => None,
            },
            Action::CheckConditions { unit, .. }
            | Action::ReadPidfile { unit, .. }
            | Action::GuessMainPid { unit }
            | Action::Arm { unit, .. }
            | Action::Adopt { unit, .. } => Some(*unit),
            Action::Kill { .. } | Action::Disarm { .. } | Action::SaveTimerStamp { .. } => None,
        }
    }
}

/// Per unit of `graph`, the most units that run something (`counts(d)`)
/// on one chain of orderings after it: 0 for a unit nothing is ordered
/// after. An ordering cycle (which the graph reports) is cut where the
/// walk meets it.
pub(super) fn chains(graph: &Graph, counts: impl Fn(UnitId) -> bool) -> Vec<u32> {
    const NEW: u8 = 0;
    const ON_PATH: u8 = 1;
    const DONE: u8 = 2;
    let n = graph.len();
    let mut chain = vec![0u32; n];
    let mut seen = vec![NEW; n];
    // Depth first over the units ordered after each, without recursion (a
    // chain may be as long as the graph).
    let mut stack: Vec<(UnitId, usize)> = Vec::new();
    for root in graph.node_ids() {
        if seen[root.index()] != NEW {
            continue;
        }
        seen[root.index()] = ON_PATH;
        stack.push((root, 0));
        while let Some(&mut (u, ref mut next)) = stack.last_mut() {
            let after = graph.dependents(u);
            if let Some(d) = after.get(*next) {
                *next += 1;
                let v = d.unit;
                if d.kind.orders() && seen[v.index()] == NEW {
                    seen[v.index()] = ON_PATH;
                    stack.push((v, 0));
                }
                continue;
            }
            let longest = after
                .iter()
                .filter(|d| d.kind.orders() && seen[d.unit.index()] == DONE)
                .map(|d| chain[d.unit.index()] + u32::from(counts(d.unit)))
                .max()
                .unwrap_or(0);
            chain[u.index()] = longest;
            seen[u.index()] = DONE;
            stack.pop();
        }
    }
    chain
}

impl Planner {
    /// The actions of this batch in the order they are carried out: first
    /// those that are not part of a start (stops, signals), as decided;
    /// then the starts, of the units heading the longest chains first. The
    /// actions of one unit, and of units with chains as long, keep their
    /// order. Nothing is moved (and nothing allocated) when they are in
    /// that order already.
    pub(super) fn order_batch(&mut self) {
        let chains = &self.chains;
        let key = |a: &Action| match a.starting() {
            Some(u) => chains.get(u.index()).copied().unwrap_or(0),
            None => u32::MAX,
        };
        let key = |a: &Action| std::cmp::Reverse(key(a));
        if !self.actions.is_sorted_by_key(key) {
            self.actions.sort_by_key(key);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::regressions::planner_reaching;
    use super::*;
    use crate::spec::{Command, UnitSpec, UnitType};

    fn svc(name: &str, depends_on: &[&str], after: &[&str]) -> UnitSpec {
        let mut s = UnitSpec::new(name, UnitType::Oneshot);
        s.exec_start = Some(Command::new([format!("/bin/{name}")]));
        s.depends_on = depends_on.iter().map(|d| d.to_string()).collect();
        s.after = after.iter().map(|d| d.to_string()).collect();
        s
    }

    fn target(name: &str, depends_on: &[&str]) -> UnitSpec {
        let mut s = UnitSpec::new(name, UnitType::Virtual);
        s.depends_on = depends_on.iter().map(|d| d.to_string()).collect();
        s
    }

    fn started(p: &mut Planner) -> Vec<String> {
        p.take_actions()
            .iter()
            .filter_map(|a| match a {
                Action::Spawn { spec, .. } => Some(spec.name.clone()),
                _ => None,
            })
            .collect()
    }

    /// Three units ready at once: `c` heads a chain of two units that run
    /// (`d`, then `e` after it, with a virtual target between that does
    /// not count), `b` a chain of one, `a` none: they start c, b, a, not
    /// in name order.
    #[test]
    fn the_unit_heading_the_longest_chain_starts_first() {
        let mut p = planner_reaching(
            vec![
                svc("a", &[], &[]),
                svc("b", &[], &[]),
                svc("c", &[], &[]),
                svc("d", &["c"], &[]),
                target("mid", &["d"]),
                svc("e", &["mid"], &["b"]),
                target("all", &["a", "b", "e"]),
            ],
            "all",
        );
        let g = p.graph();
        let chain = |n: &str| p.chains[g.unit(n).unwrap().index()];
        assert_eq!(
            [chain("a"), chain("b"), chain("c"), chain("d"), chain("e")],
            [0, 1, 2, 1, 0]
        );
        assert_eq!(started(&mut p), ["c", "b", "a"]);
    }

    /// An ordering cycle (reported by the graph) does not stop the walk:
    /// each unit on it still gets a chain, and the starts still come out.
    #[test]
    fn a_cycle_is_cut_where_the_walk_meets_it() {
        let (g, _) = Graph::build(
            [
                svc("x", &[], &["y"]),
                svc("y", &[], &["x"]),
                svc("z", &[], &["y"]),
            ]
            .into_iter()
            .map(|s| {
                let o = crate::spec::Origin::unplaced(format!("{}.yaml", s.name));
                (s, o)
            })
            .collect(),
        );
        let c = chains(&g, |_| true);
        assert_eq!(c.len(), 3);
        assert!(c.iter().all(|&n| n <= 2), "{c:?}");
    }
}
