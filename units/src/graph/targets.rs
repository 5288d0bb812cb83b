//! The nodes of declared targets (docs/contract.md §3b). A target that the config
//! declares a `group` or an `alternative` (and that some unit provides)
//! gets a node of its own, after the units: dependencies on the target are
//! edges to that node, and the node has an edge to each provider.
//!
//! - A group's node has a `waits-for` edge to every provider: it is up
//!   once every provider has settled and one is active (the planner's
//!   rules say the rest).
//! - An alternative's node has a `depends-on` edge to the provider it runs
//!   and a [`DepKind::Standby`] edge to each other one: the node's state is
//!   the chosen provider's, the others are not required (unless something
//!   else needs them), and a switch of the choice ([`Graph::set_choice`])
//!   flips two edges' kinds in place, so that the old provider still stops
//!   after the node (dependents first) and nothing else of the graph moves.
//!
//! A cycle through any provider of an alternative is an error, whichever
//! is chosen, so that no switch can make one.

use super::{Graph, Node, UnitId};
use crate::diag::Diagnostic;
use crate::state::DepKind;
use crate::targets::{order, pick, TargetDecl, TargetMode, Targets, Why};
use std::collections::HashMap;

/// A declared target's node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetNode {
    /// The target.
    pub name: String,
    /// Group or alternative.
    pub mode: TargetMode,
    /// An alternative's `failover`.
    pub failover: bool,
    /// The providers, highest `preference` first, ties by name: the order
    /// in which an alternative picks them and in which they take over.
    pub members: Vec<UnitId>,
    /// The member an alternative runs (an index into `members`).
    pub chosen: usize,
    /// Why it runs.
    pub why: Why,
    /// The member the config and the preferences choose: what a rebuild
    /// of the graph chooses, whatever moved the choice since.
    pub configured: usize,
}

impl TargetNode {
    /// The unit an alternative runs (a group's first member).
    pub fn chosen_unit(&self) -> Option<UnitId> {
        self.members.get(self.chosen).copied()
    }
}

/// The nodes of the declared targets that `units` (the graph's units, in
/// name order) provide, in target name order. `masked(name)` tells whether
/// a unit name is masked (for the reason of a choice).
pub(super) fn declared_nodes(
    units: &[Node],
    targets: &Targets,
    masked: impl Fn(&str) -> bool,
) -> Vec<TargetNode> {
    if targets.is_empty() {
        return Vec::new();
    }
    let mut providers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, n) in units.iter().enumerate() {
        if !n.provides_targets() {
            continue;
        }
        for t in &n.spec.provides {
            if targets.contains_key(t.as_str()) {
                providers.entry(t.as_str()).or_default().push(i);
            }
        }
    }
    let mut out = Vec::new();
    for (name, decl) in targets {
        let Some(ids) = providers.get(name.as_str()) else {
            continue;
        };
        let named: Vec<(&str, i32)> = ids
            .iter()
            .map(|&i| (units[i].spec.name.as_str(), units[i].spec.preference))
            .collect();
        let by_order = order(&named);
        let members: Vec<UnitId> = by_order.iter().map(|&k| UnitId(ids[k] as u32)).collect();
        let sorted: Vec<(&str, i32)> = by_order.iter().map(|&k| named[k]).collect();
        let masked_choice = decl.choose.as_deref().is_some_and(&masked);
        let (chosen, why) = match decl.mode {
            TargetMode::Alternative => pick(decl, &sorted, masked_choice).unwrap_or((0, Why::Only)),
            TargetMode::Group => (0, Why::Only),
        };
        out.push(TargetNode {
            name: name.clone(),
            mode: decl.mode,
            failover: decl.failover,
            members,
            chosen,
            why,
            configured: chosen,
        });
    }
    out
}

/// The kind of the edge from a declared target's node to its member `j`.
pub(super) fn member_kind(t: &TargetNode, j: usize) -> DepKind {
    match t.mode {
        TargetMode::Group => DepKind::WaitsFor,
        TargetMode::Alternative if j == t.chosen => DepKind::DependsOn,
        TargetMode::Alternative => DepKind::Standby,
    }
}

/// The problems of the config's declarations against the unit set: a
/// `choose` that names no provider of its target (an error: the first
/// provider runs meanwhile), a declared target that no unit provides (a
/// warning).
pub(super) fn declaration_problems(graph: &Graph, targets: &Targets) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (name, decl) in targets {
        let node = graph.target_node(name).and_then(|id| graph.target_info(id));
        let names = |t: &TargetNode| -> String {
            t.members
                .iter()
                .map(|&m| format!("`{}`", graph.node(m).spec.name))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match node {
            None => {
                let masked_only = graph.masked_provider(name).is_some();
                let why = if masked_only {
                    "only masked units provide it"
                } else {
                    "no unit provides it"
                };
                out.push(Diagnostic::warning(
                    decl.file.clone(),
                    decl.pos,
                    format!(
                        "the target `{name}` is declared a {} but {why}",
                        decl.mode.as_str()
                    ),
                ));
                if let Some(c) = bad_choice(graph, decl, None) {
                    out.push(c);
                }
            }
            Some(t) => {
                if let Some(c) = bad_choice(graph, decl, Some((t, names(t)))) {
                    out.push(c);
                }
            }
        }
    }
    out
}

/// The error of a `choose` that names a unit that is neither a provider
/// of its target nor masked; also a `choose` on a group.
fn bad_choice(
    graph: &Graph,
    decl: &TargetDecl,
    node: Option<(&TargetNode, String)>,
) -> Option<Diagnostic> {
    let c = decl.choose.as_deref()?;
    let target = node.as_ref().map_or("", |(t, _)| t.name.as_str());
    if let Some((t, _)) = &node {
        if t.members.iter().any(|&m| graph.node(m).spec.name == c) {
            return None;
        }
    }
    if graph
        .unit(c)
        .is_some_and(|id| graph.node(id).masked && !graph.node(id).ghost)
    {
        return None;
    }
    let message = match (&node, graph.unit(c)) {
        (Some((t, names)), Some(_)) => format!(
            "`choose: {c}`: `{c}` does not provide the target `{target}` (its providers: \
             {names}); `{}` runs",
            t.chosen_unit()
                .map_or("", |m| graph.node(m).spec.name.as_str())
        ),
        (Some((t, names)), None) => format!(
            "`choose: {c}`: no unit is named `{c}` (the providers of `{target}`: {names}); \
             `{}` runs",
            t.chosen_unit()
                .map_or("", |m| graph.node(m).spec.name.as_str())
        ),
        (None, _) => format!("`choose: {c}`: nothing provides this target"),
    };
    Some(Diagnostic::error(
        decl.file.clone(),
        decl.choose_pos,
        message,
    ))
}

impl Graph {
    /// The node of the declared target `target`, if some unit provides it.
    pub fn target_node(&self, target: &str) -> Option<UnitId> {
        self.other_providers
            .get(target)
            .copied()
            .filter(|&id| self.is_target(id))
    }

    /// Whether `id` is a declared target's node (not a unit).
    pub fn is_target(&self, id: UnitId) -> bool {
        id.index() >= self.units_len && id.index() < self.nodes.len()
    }

    /// The declared target whose node is `id`.
    pub fn target_info(&self, id: UnitId) -> Option<&TargetNode> {
        id.index()
            .checked_sub(self.units_len)
            .and_then(|k| self.targets.get(k))
    }

    /// Every declared target's node, in target name order.
    pub fn declared(&self) -> impl Iterator<Item = (UnitId, &TargetNode)> {
        self.targets
            .iter()
            .enumerate()
            .map(|(k, t)| (UnitId((self.units_len + k) as u32), t))
    }

    /// Makes member `j` the one the alternative of node `id` runs, for
    /// `why`: its edge becomes `depends-on`, the old one's `standby`, in
    /// the node's dependencies and in the two providers' dependents. Returns
    /// whether anything moved (not for a group, an unknown node or member,
    /// or the member already chosen).
    pub fn set_choice(&mut self, id: UnitId, j: usize, why: Why) -> bool {
        let Some(k) = id.index().checked_sub(self.units_len) else {
            return false;
        };
        let Some(t) = self.targets.get_mut(k) else {
            return false;
        };
        if t.mode != TargetMode::Alternative || j >= t.members.len() {
            return false;
        }
        t.why = why;
        let old = t.chosen;
        if old == j {
            return false;
        }
        t.chosen = j;
        let (old_unit, new_unit) = (t.members[old], t.members[j]);
        self.set_edge_kind(id, old, old_unit, DepKind::Standby);
        self.set_edge_kind(id, j, new_unit, DepKind::DependsOn);
        true
    }

    /// Sets the kind of dependency `j` of `id` (on `provider`), in both
    /// directions.
    fn set_edge_kind(&mut self, id: UnitId, j: usize, provider: UnitId, kind: DepKind) {
        let at = self.deps.at.get(id.index()).copied().unwrap_or(0) as usize;
        if let Some(e) = self.deps.items.get_mut(at + j) {
            e.kind = kind;
        }
        let (a, b) = match (
            self.dependents.at.get(provider.index()),
            self.dependents.at.get(provider.index() + 1),
        ) {
            (Some(&a), Some(&b)) => (a as usize, b as usize),
            _ => return,
        };
        if let Some(list) = self.dependents.items.get_mut(a..b) {
            for d in list {
                if d.unit == id && d.index as usize == j {
                    d.kind = kind;
                }
            }
        }
    }
}

/// The node of a declared target: a `virtual` unit named after it.
pub(super) fn node_of(t: &TargetNode) -> Node {
    let mut spec = crate::spec::UnitSpec::new(t.name.clone(), crate::spec::UnitType::Virtual);
    spec.description = Some(match t.mode {
        TargetMode::Group => "group target: every provider runs".to_string(),
        TargetMode::Alternative => "alternative target: one provider runs".to_string(),
    });
    Node {
        spec: std::sync::Arc::new(spec),
        origin: crate::spec::Origin::unplaced("config: targets"),
        ghost: false,
        masked: false,
        synthetic: true,
    }
}
