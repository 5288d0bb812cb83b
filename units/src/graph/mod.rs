//! The target graph: units in an arena, the targets they provide, and the
//! dependency edges between them.
//!
//! Dependencies name targets, not units; each target has at most one
//! provider. An edge therefore goes from a unit to the *provider* of a target
//! (or to nothing, when no unit provides it: a "missing" target). Building a
//! graph checks what spans units: duplicate unit names, duplicate `provides`
//! (naming both units), dependency cycles (with the whole path), and targets
//! nobody provides (a warning). [`Graph::build`] is lenient and leaves bad
//! units out (boot: the rest of the system still comes up);
//! [`Graph::build_strict`] refuses the whole set on any error (reload).
//!
//! Besides the units, a graph is built with a [`Shape`]: the targets the
//! config declares (`group` or `alternative`, docs/contract.md §3b), whose provider is
//! a node of its own after the units (`targets.rs`), and the masks: a
//! masked unit stays in the arena, to be shown, but provides nothing and
//! depends on nothing (`masked.rs`).
//!
//! The graph keeps the adjacency once, flat: each unit's dependencies
//! ([`Graph::deps`]) and each unit's dependents ([`Graph::dependents`]), in
//! one array each, so that the planner's walks over them read a few bytes
//! per edge. A dependency's target name is not copied: it is the entry of
//! the unit's `depends-on`, `depends-ms`, `waits-for`, `after`, `wants` or
//! `requires` list ([`Graph::dep_target`]). Only the ordering kinds make a
//! cycle ([`DepKind::orders`]).

use crate::diag::{Diagnostic, Pos};
use crate::mask::Masks;
use crate::spec::{Origin, TargetList, UnitSpec};
use crate::state::DepKind;
use crate::targets::Targets;
use std::collections::HashMap;
use std::sync::Arc;

mod build;
mod collect;
use build::dep_lists;
mod masked;
mod missing;
mod targets;

pub use targets::TargetNode;

/// What a graph is built with besides its units: the targets the config
/// declares and the masked unit names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shape {
    /// The config's `targets:` map.
    pub targets: Targets,
    /// The masks, from every source.
    pub masks: Masks,
    /// Whether udev can run here (the init's `/sys` is writable, as
    /// systemd's `udev_available()` asks): then, while the graph has
    /// `systemd-udevd.service`, a `.device` that no unit provides is a
    /// device not plugged, not one made elsewhere (`build.rs`).
    pub devices: bool,
}

/// A unit's index in the graph's arena. Valid for one graph only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UnitId(pub u32);

impl UnitId {
    /// The arena index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One dependency of a unit: its kind and the unit providing its target
/// (none when no unit provides it: a missing target).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    /// The kind.
    pub kind: DepKind,
    /// The unit providing the target, if any.
    pub provider: Option<UnitId>,
}

/// One dependency seen from its provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dependent {
    /// The unit that depends on the provider.
    pub unit: UnitId,
    /// Which of its dependencies this is (an index into [`Graph::deps`]).
    pub index: u32,
    /// The kind.
    pub kind: DepKind,
}

/// One dependency of a unit with the target it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dep<'a> {
    /// The kind.
    pub kind: DepKind,
    /// The target named.
    pub target: &'a str,
    /// The unit providing it, if any.
    pub provider: Option<UnitId>,
}

/// A unit in the graph (or a declared target's node, after the units).
#[derive(Debug, Clone)]
pub struct Node {
    /// The unit's definition (a declared target's node, and a masked name
    /// that no unit has, have a `virtual` one made up with their name).
    pub spec: Arc<UnitSpec>,
    /// Where it came from.
    pub origin: Origin,
    /// A unit that was removed (reload, transient set) but still had
    /// processes: it provides nothing and depends on nothing; it stops,
    /// or runs on until it stops when it is [`Node::not_found`].
    pub ghost: bool,
    /// A masked unit: shown, but it provides nothing and depends on nothing.
    pub masked: bool,
    /// No unit file defines it: a declared target's node, or a masked name
    /// that no unit has.
    pub synthetic: bool,
}

impl Node {
    /// A unit as loaded.
    fn unit(spec: Arc<UnitSpec>, origin: Origin) -> Node {
        Node {
            spec,
            origin,
            ghost: false,
            masked: false,
            synthetic: false,
        }
    }

    /// Whether its targets and dependencies count: not a ghost, not masked.
    pub fn provides_targets(&self) -> bool {
        !self.ghost && !self.masked
    }

    /// A ghost read from a systemd unit file (stamped with its files,
    /// `Origin::files`), not masked: systemd's `not-found` unit, which a
    /// reload keeps running until it stops (docs/systemd-units.md, "A
    /// running unit whose file is gone"). A YAML, transient or fleet
    /// unit's ghost is not one: it stops.
    pub fn not_found(&self) -> bool {
        self.ghost && !self.masked && self.origin.files != crate::load::NO_FILES
    }
}

/// Lists of items per unit, flat: unit `i`'s are `items[at[i]..at[i + 1]]`
/// (one array for all, no allocation per unit).
#[derive(Debug, Clone)]
struct PerUnit<T> {
    at: Vec<u32>,
    items: Vec<T>,
}

impl<T> Default for PerUnit<T> {
    fn default() -> Self {
        PerUnit {
            at: Vec::new(),
            items: Vec::new(),
        }
    }
}

impl<T> PerUnit<T> {
    fn of(&self, i: usize) -> &[T] {
        match (self.at.get(i), self.at.get(i + 1)) {
            (Some(&a), Some(&b)) => self.items.get(a as usize..b as usize).unwrap_or_default(),
            _ => &[],
        }
    }
}

/// The graph of a unit set.
///
/// The units are in name order, so a unit is found by its name with a
/// binary search, without a map of names. A unit providing its own name
/// (the default) is found the same way; only the other targets (`provides`
/// naming something else) are in a map. The declared targets' nodes come
/// after the units, in target name order.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    nodes: Vec<Node>,
    /// How many of the nodes are units (the declared targets' come after).
    units_len: usize,
    /// The declared targets' nodes, in order (node `units_len + k` is
    /// `targets[k]`).
    targets: Vec<TargetNode>,
    /// Each target that is not its provider's own name, and its provider
    /// (the first non-ghost unit, in name order, providing it; a declared
    /// target's node).
    other_providers: HashMap<Box<str>, UnitId>,
    /// The targets that only masked units provide, and the first of them.
    masked_targets: HashMap<Box<str>, UnitId>,
    /// What the graph was built with.
    shape: Arc<Shape>,
    /// Per unit, its dependencies in the order depends-on, depends-ms,
    /// waits-for, after, wants, requires, then other units' `before` (a
    /// ghost has none).
    deps: PerUnit<Edge>,
    /// Per unit, the dependencies on it, in the order of the dependents'
    /// ids and then of their dependency lists.
    dependents: PerUnit<Dependent>,
    /// Each unit's conflicts, both ways, made on first use.
    conflicts: std::sync::OnceLock<HashMap<UnitId, Vec<UnitId>>>,
}

/// The units as the graph keeps them: a spec given already shared (the
/// init's transient units, a reload's unchanged ones taken from the graph
/// in force) is not copied; a plain one is moved into its `Arc`.
pub fn shared<S: Into<Arc<UnitSpec>>>(units: Vec<(S, Origin)>) -> Vec<(Arc<UnitSpec>, Origin)> {
    units.into_iter().map(|(s, o)| (s.into(), o)).collect()
}

impl Graph {
    /// Builds the graph, leaving out every unit with an error (and reporting
    /// it). Units are kept in name order, so ids are deterministic.
    pub fn build<S: Into<Arc<UnitSpec>>>(units: Vec<(S, Origin)>) -> (Graph, Vec<Diagnostic>) {
        Graph::build_shaped(units, Shape::default())
    }

    /// [`Graph::build`] with declared targets and masks.
    pub fn build_shaped<S: Into<Arc<UnitSpec>>>(
        units: Vec<(S, Origin)>,
        shape: Shape,
    ) -> (Graph, Vec<Diagnostic>) {
        let (graph, diags, _) = Graph::build_inner(shared(units), Vec::new(), Arc::new(shape));
        (graph, diags)
    }

    /// Builds the graph, or returns every problem (errors and warnings) if
    /// there is any error.
    pub fn build_strict<S: Into<Arc<UnitSpec>>>(
        units: Vec<(S, Origin)>,
    ) -> Result<(Graph, Vec<Diagnostic>), Vec<Diagnostic>> {
        Graph::build_strict_shaped(units, Vec::new(), Arc::default())
    }

    /// Like [`Graph::build_strict`], with `ghosts` added: removed units that
    /// still have to stop. They keep their names but provide nothing and
    /// depend on nothing.
    pub fn build_with_ghosts<S: Into<Arc<UnitSpec>>>(
        units: Vec<(S, Origin)>,
        ghosts: Vec<(Arc<UnitSpec>, Origin)>,
    ) -> Result<(Graph, Vec<Diagnostic>), Vec<Diagnostic>> {
        Graph::build_strict_shaped(units, ghosts, Arc::default())
    }

    /// [`Graph::build_with_ghosts`] with declared targets and masks.
    pub fn build_strict_shaped<S: Into<Arc<UnitSpec>>>(
        units: Vec<(S, Origin)>,
        ghosts: Vec<(Arc<UnitSpec>, Origin)>,
        shape: Arc<Shape>,
    ) -> Result<(Graph, Vec<Diagnostic>), Vec<Diagnostic>> {
        let (graph, diags, rejected) = Graph::build_inner(shared(units), ghosts, shape);
        if rejected || diags.iter().any(Diagnostic::is_error) {
            Err(diags)
        } else {
            Ok((graph, diags))
        }
    }

    /// The number of nodes: the units and the declared targets' nodes.
    /// Every id of this graph is below it.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The number of units (ghosts and masked ones included).
    pub fn unit_count(&self) -> usize {
        self.units_len
    }

    /// Every unit id, in name order (ghosts and masked units included; the
    /// declared targets' nodes are not units: [`Graph::node_ids`]).
    pub fn ids(&self) -> impl Iterator<Item = UnitId> + '_ {
        (0..self.units_len as u32).map(UnitId)
    }

    /// Every node id: the units, then the declared targets' nodes.
    pub fn node_ids(&self) -> impl Iterator<Item = UnitId> + '_ {
        (0..self.nodes.len() as u32).map(UnitId)
    }

    /// What the graph was built with.
    pub fn shape(&self) -> &Arc<Shape> {
        &self.shape
    }

    /// The node of `id`. Panics on an id of another graph; ids come from this graph.
    pub fn node(&self, id: UnitId) -> &Node {
        &self.nodes[id.index()]
    }

    /// The node of `id`, if it is in range.
    pub fn get(&self, id: UnitId) -> Option<&Node> {
        self.nodes.get(id.index())
    }

    /// The unit named `name`.
    pub fn unit(&self, name: &str) -> Option<UnitId> {
        self.nodes
            .get(..self.units_len)
            .unwrap_or_default()
            .binary_search_by(|n| n.spec.name.as_str().cmp(name))
            .ok()
            .map(|i| UnitId(i as u32))
    }

    /// The unit named `name` that is one of the set: not a ghost (a unit
    /// removed from the set, kept while it stops and until the next
    /// change of the set).
    pub fn live_unit(&self, name: &str) -> Option<UnitId> {
        self.unit(name).filter(|&id| !self.node(id).ghost)
    }

    /// The provider of `target`: a declared target's node; else the first
    /// (in name order) of the unit of that name, if it provides it, and the
    /// provider of another name.
    pub fn provider(&self, target: &str) -> Option<UnitId> {
        let other = self.other_providers.get(target).copied();
        if other.is_some_and(|o| self.is_target(o)) {
            return other;
        }
        let own = self.unit(target).filter(|&id| {
            let n = self.node(id);
            n.provides_targets() && n.spec.provides.iter().any(|t| t == target)
        });
        match (own, other) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The required set of `target`: its provider and everything reachable
    /// from it over every kind that pulls in, as a flag per node. `None` if
    /// no unit provides the target.
    pub fn required_set(&self, target: &str) -> Option<Vec<bool>> {
        let root = self.provider(target)?;
        Some(self.reachable(&[root]))
    }

    /// `roots` and everything reachable from them over the dependency kinds
    /// that pull in (not `after`: ordering never pulls a unit in; not over an
    /// alternative's providers it did not choose), as a flag per node.
    ///
    /// `conflicts` (either side's) decides between two units: the one
    /// reached first (breadth first, dependencies in order) is required,
    /// the other is not, nor what only it pulls in.
    pub fn reachable(&self, roots: &[UnitId]) -> Vec<bool> {
        self.reach(roots, &[]).0
    }

    /// [`Graph::reachable`] with the units `barred` left out, and what
    /// only they pull in.
    pub fn reachable_except(&self, roots: &[UnitId], barred: &[UnitId]) -> Vec<bool> {
        self.reach(roots, barred).0
    }

    /// The units that `roots` pull in but that lose to a conflict (so are
    /// not in [`Graph::reachable`]), each with a required unit it
    /// conflicts with. Empty for most graphs.
    pub fn conflict_losers(&self, roots: &[UnitId]) -> Vec<(UnitId, UnitId)> {
        self.reach(roots, &[]).1
    }

    /// [`Graph::reachable`] and [`Graph::conflict_losers`].
    fn reach(&self, roots: &[UnitId], barred: &[UnitId]) -> (Vec<bool>, Vec<(UnitId, UnitId)>) {
        let conflicts = self.conflicts();
        let mut losers: Vec<(UnitId, UnitId)> = Vec::new();
        let mut req = vec![false; self.nodes.len()];
        // A barred unit is never taken, nor followed.
        let mut skip = vec![false; self.nodes.len()];
        for b in barred {
            if let Some(s) = skip.get_mut(b.index()) {
                *s = true;
            }
        }
        let mut work = std::collections::VecDeque::with_capacity(roots.len());
        for &r in roots {
            if let Some(f) = req.get_mut(r.index()) {
                if !*f && !skip[r.index()] {
                    *f = true;
                    work.push_back(r);
                }
            }
        }
        while let Some(u) = work.pop_front() {
            let pulled = self.deps(u).iter().filter(|e| e.kind.pulls_in());
            for p in pulled.filter_map(|e| e.provider) {
                if req[p.index()] || skip[p.index()] {
                    continue;
                }
                let winner = conflicts
                    .get(&p)
                    .and_then(|o| o.iter().find(|o| req[o.index()]));
                match winner {
                    None => {
                        req[p.index()] = true;
                        work.push_back(p);
                    }
                    Some(&w) if !losers.iter().any(|&(l, _)| l == p) => losers.push((p, w)),
                    Some(_) => {}
                }
            }
        }
        (req, losers)
    }

    /// The units `id` conflicts with, both ways (its own `conflicts`, and
    /// the units whose `conflicts` name a target it provides).
    pub fn conflicts_of(&self, id: UnitId) -> &[UnitId] {
        self.conflicts().get(&id).map_or(&[], Vec::as_slice)
    }

    /// Each unit's conflicts, both ways (empty for most graphs), made once.
    fn conflicts(&self) -> &HashMap<UnitId, Vec<UnitId>> {
        self.conflicts.get_or_init(|| self.make_conflicts())
    }

    fn make_conflicts(&self) -> HashMap<UnitId, Vec<UnitId>> {
        let mut out: HashMap<UnitId, Vec<UnitId>> = HashMap::new();
        for (id, n) in self.ids().zip(&self.nodes) {
            // A masked unit is absent, as for its dependencies.
            if !n.provides_targets() {
                continue;
            }
            for other in n.spec.conflicts.iter().filter_map(|t| self.provider(t)) {
                if other != id {
                    out.entry(id).or_default().push(other);
                    out.entry(other).or_default().push(id);
                }
            }
        }
        out
    }

    /// The dependencies of `id`, in the order depends-on, depends-ms,
    /// waits-for, after, wants, requires, other units' `before` (none for a
    /// ghost, or an id of another graph).
    pub fn deps(&self, id: UnitId) -> &[Edge] {
        self.deps.of(id.index())
    }

    /// The dependencies on `id` (none for an id of another graph).
    pub fn dependents(&self, id: UnitId) -> &[Dependent] {
        self.dependents.of(id.index())
    }

    /// The target that dependency `j` of `id` names (`""` out of range);
    /// for a declared target's node, the name of member `j`; for the edge of
    /// another unit's `before`, that unit's name.
    pub fn dep_target(&self, id: UnitId, j: u32) -> &str {
        if let Some(t) = self.target_info(id) {
            return t
                .members
                .get(j as usize)
                .map_or("", |&m| self.node(m).spec.name.as_str());
        }
        let own = self.get(id).filter(|n| n.provides_targets()).and_then(|n| {
            dep_lists(&n.spec)
                .into_iter()
                .flat_map(|(_, ts)| ts)
                .nth(j as usize)
        });
        let before = || {
            let p = self.deps(id).get(j as usize)?.provider?;
            Some(&self.get(p)?.spec.name)
        };
        own.or_else(before).map_or("", String::as_str)
    }

    /// The dependencies of `id` with the targets they name (for a declared
    /// target's node, its members by name).
    pub fn named_deps(&self, id: UnitId) -> impl Iterator<Item = Dep<'_>> + '_ {
        let names = self
            .get(id)
            .filter(|n| n.provides_targets() && !self.is_target(id))
            .into_iter()
            .flat_map(|n| dep_lists(&n.spec))
            .flat_map(|(_, ts)| ts)
            .map(String::as_str);
        let members = self
            .target_info(id)
            .into_iter()
            .flat_map(|t| &t.members)
            .map(|&m| self.node(m).spec.name.as_str());
        self.deps(id)
            .iter()
            .zip(names.chain(members))
            .map(|(e, t)| Dep {
                kind: e.kind,
                target: t,
                provider: e.provider,
            })
    }

    /// The specs and origins of every unit that a unit file (or a transient
    /// set) defines, masked ones included: not ghosts, not made-up nodes.
    pub fn units(&self) -> impl Iterator<Item = (&Arc<UnitSpec>, &Origin)> {
        self.nodes
            .iter()
            .filter(|n| !n.ghost && !n.synthetic)
            .map(|n| (&n.spec, &n.origin))
    }
}

#[cfg(test)]
mod tests;
