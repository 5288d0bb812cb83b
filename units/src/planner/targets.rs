//! Declared targets in the planner (docs/contract.md §3b): what moves an alternative's
//! choice — `initctl set-alternative` ([`Planner::set_alternative`]) and
//! failover ([`Planner::failover`]) — and what a status says of a declared
//! target ([`Planner::target_view`]). A switch of the choice flips two
//! edges of the graph ([`crate::graph::Graph::set_choice`]) and moves the
//! required set, as a target switch does: what hard-depends on the target
//! stops, then the old provider, then the new one starts
//! ([`Planner::old_provider_going`]) and the dependents after it.

use super::record::NodeKind;
use super::Planner;
use crate::graph::{Graph, UnitId};
use crate::state::{DepKind, UnitState};
use crate::targets::{TargetMode, Why};
use crate::time::Instant;

/// Why an alternative cannot be set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AlternativeError {
    /// No unit provides the target.
    UnknownTarget(String),
    /// The target has one provider and is not declared in the config.
    NotDeclared(String),
    /// The target is a group: every provider runs.
    Group(String),
    /// No unit by that name.
    UnknownUnit(String),
    /// The unit is masked.
    Masked(String),
    /// The unit does not provide the target; its providers.
    NotAProvider {
        /// The unit.
        unit: String,
        /// The target.
        target: String,
        /// The target's providers.
        providers: Vec<String>,
    },
    /// The system is shutting down.
    ShuttingDown,
}

impl std::fmt::Display for AlternativeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AlternativeError::UnknownTarget(t) => write!(f, "no unit provides the target `{t}`"),
            AlternativeError::NotDeclared(t) => write!(
                f,
                "the target `{t}` is not declared an alternative (the config's `targets:` \
                 map declares it: `{t}: {{mode: alternative}}`)"
            ),
            AlternativeError::Group(t) => {
                write!(f, "the target `{t}` is a group: every provider runs")
            }
            AlternativeError::UnknownUnit(u) => write!(f, "no unit named `{u}`"),
            AlternativeError::Masked(u) => write!(f, "`{u}` is masked"),
            AlternativeError::NotAProvider {
                unit,
                target,
                providers,
            } => write!(
                f,
                "`{unit}` does not provide the target `{target}` (its providers: {})",
                providers
                    .iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            AlternativeError::ShuttingDown => write!(f, "the system is shutting down"),
        }
    }
}

/// A declared target as a status shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetView {
    /// Group or alternative.
    pub mode: TargetMode,
    /// An alternative's `failover`.
    pub failover: bool,
    /// The providers in the order an alternative takes them, with their
    /// states.
    pub providers: Vec<(String, UnitState)>,
    /// The provider an alternative runs.
    pub chosen: Option<String>,
    /// Why it runs (a group: every provider runs).
    pub why: String,
}

impl Planner {
    /// Whether `unit` may be made the provider that the alternative
    /// `target` runs; the target's node and the unit's place among its
    /// providers. Changes nothing (the init checks before it writes the
    /// choice in its config).
    pub fn check_alternative(
        &self,
        target: &str,
        unit: &str,
    ) -> Result<(UnitId, usize), AlternativeError> {
        let g = &self.graph;
        let Some(node) = g.target_node(target) else {
            return Err(if g.provider(target).is_some() {
                AlternativeError::NotDeclared(target.to_string())
            } else {
                AlternativeError::UnknownTarget(target.to_string())
            });
        };
        let Some(t) = g.target_info(node) else {
            return Err(AlternativeError::UnknownTarget(target.to_string()));
        };
        if t.mode == TargetMode::Group {
            return Err(AlternativeError::Group(target.to_string()));
        }
        if let Some(j) = t.members.iter().position(|&m| g.node(m).spec.name == unit) {
            return Ok((node, j));
        }
        match g.unit(unit).filter(|&i| !g.node(i).ghost) {
            None => Err(AlternativeError::UnknownUnit(unit.to_string())),
            Some(i) if g.node(i).masked => Err(AlternativeError::Masked(unit.to_string())),
            Some(_) => Err(AlternativeError::NotAProvider {
                unit: unit.to_string(),
                target: target.to_string(),
                providers: t
                    .members
                    .iter()
                    .map(|&m| g.node(m).spec.name.clone())
                    .collect(),
            }),
        }
    }

    /// `initctl set-alternative TARGET UNIT`: the alternative `target`
    /// runs `unit` from now on. Behaves like a target switch: the old
    /// provider stops once what hard-depends on the target has stopped,
    /// the new one starts, and the dependents follow.
    pub fn set_alternative(
        &mut self,
        target: &str,
        unit: &str,
        now: Instant,
    ) -> Result<(), AlternativeError> {
        self.now = now;
        let (node, j) = self.check_alternative(target, unit)?;
        if self.shutting_down {
            return Err(AlternativeError::ShuttingDown);
        }
        self.failed_over.retain(|&(n, _)| n != node);
        self.switch_choice(node, j, Why::Set);
        self.run();
        Ok(())
    }

    /// An alternative with `failover` whose chosen provider failed: the
    /// first provider (in preference order) that has not failed since the
    /// target was set takes over. When every one has, the last one stays
    /// (and restarts as its `restart` says).
    pub(super) fn failover(&mut self, node: UnitId) {
        let Some(t) = self.graph.target_info(node) else {
            return;
        };
        let Some(cur) = t.chosen_unit() else {
            return;
        };
        if !t.failover
            || !self.required[node.index()]
            || self.shutting_down
            || self.units[cur.index()].state != UnitState::Failed
        {
            return;
        }
        let failed = &mut self.failed_over;
        if !failed.contains(&(node, cur)) {
            failed.push((node, cur));
        }
        let next = t
            .members
            .iter()
            .position(|&m| m != cur && !self.failed_over.contains(&(node, m)));
        if let Some(j) = next {
            let why = Why::Failover {
                failed: self.graph.node(cur).spec.name.clone(),
            };
            self.switch_choice(node, j, why);
        }
    }

    /// Makes member `j` the provider the alternative `node` runs.
    fn switch_choice(&mut self, node: UnitId, j: usize, why: Why) {
        let old = self.graph.target_info(node).and_then(|t| t.chosen_unit());
        let moved = self.graph.set_choice(node, j, why);
        self.mark_changed(node);
        if !moved {
            return;
        }
        self.recount(node);
        self.update_required();
        self.push(node);
        if let Some(o) = old {
            self.push(o);
        }
        if let Some(n) = self.graph.target_info(node).and_then(|t| t.chosen_unit()) {
            self.push(n);
        }
    }

    /// The provider an alternative ran before `u` was chosen, while it is
    /// up and on its way down: `u` starts once it is down. Without this
    /// wait the new provider came up while the dependents were still
    /// stopping (a slow `exec-stop`), the node was active again, and the
    /// old provider stopped beside them rather than after them. One that
    /// something else requires stays up, and does not hold `u`.
    pub(super) fn old_provider_going(&self, u: UnitId) -> Option<UnitId> {
        let g = &self.graph;
        g.dependents(u)
            .iter()
            .filter(|d| {
                d.kind == DepKind::DependsOn
                    && self.units[d.unit.index()].kind == NodeKind::Alternative
            })
            .flat_map(|d| g.deps(d.unit))
            .filter(|e| e.kind == DepKind::Standby)
            .filter_map(|e| e.provider)
            .find(|&p| {
                let o = &self.units[p.index()];
                (o.up() && (o.to_stop || !self.required[p.index()])) || o.phase.stopping()
            })
    }

    /// An alternative's node was evaluated (a provider of it moved, an old
    /// one went down: `deps.rs`, `push_neighbours`): its chosen provider
    /// may be waiting for the old one to be down
    /// ([`Planner::old_provider_going`]).
    pub(super) fn wake_chosen(&mut self, node: UnitId) {
        let chosen = self.graph.target_info(node).and_then(|t| t.chosen_unit());
        if let Some(c) = chosen.filter(|c| self.units[c.index()].state == UnitState::Waiting) {
            self.push(c);
        }
    }

    /// What a status says of the declared target whose node is `id`.
    pub fn target_view(&self, id: UnitId) -> Option<TargetView> {
        let g = &self.graph;
        let t = g.target_info(id)?;
        let name = |m: UnitId| g.node(m).spec.name.clone();
        let alternative = t.mode == TargetMode::Alternative;
        Some(TargetView {
            mode: t.mode,
            failover: t.failover,
            providers: t
                .members
                .iter()
                .map(|&m| (name(m), self.state(m)))
                .collect(),
            chosen: t.chosen_unit().filter(|_| alternative).map(name),
            why: if alternative {
                t.why.to_string()
            } else {
                "every provider runs".to_string()
            },
        })
    }

    /// After a new graph: each alternative keeps the provider it ran (and
    /// why) when that one is still a provider and the config and the
    /// preferences choose as they did (else the new graph's choice holds).
    pub(super) fn carry_choices(&mut self, old: &Graph) {
        let nodes: Vec<UnitId> = self
            .graph
            .declared()
            .filter(|(_, t)| t.mode == TargetMode::Alternative)
            .map(|(id, _)| id)
            .collect();
        for id in nodes {
            let Some(t) = self.graph.target_info(id) else {
                continue;
            };
            let Some(o) = old
                .target_node(&t.name)
                .and_then(|oid| old.target_info(oid))
            else {
                continue;
            };
            let oname = |k: usize| o.members.get(k).map(|&m| old.node(m).spec.name.as_str());
            let nname = |k: usize| {
                t.members
                    .get(k)
                    .map(|&m| self.graph.node(m).spec.name.as_str())
            };
            if oname(o.configured) != nname(t.configured) {
                continue;
            }
            let Some(kept) = oname(o.chosen) else {
                continue;
            };
            let Some(j) = t
                .members
                .iter()
                .position(|&m| self.graph.node(m).spec.name == kept)
            else {
                continue;
            };
            let why = o.why.clone();
            self.graph.set_choice(id, j, why);
        }
        debug_assert!(self
            .units
            .iter()
            .zip(self.graph.node_ids())
            .all(|(u, id)| (u.kind != NodeKind::Unit) == self.graph.is_target(id)));
    }
}
