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
//! config declares (`group` or `alternative`, SPEC §3b), whose provider is
//! a node of its own after the units (`targets.rs`), and the masks: a
//! masked unit stays in the arena, to be shown, but provides nothing and
//! depends on nothing (`masked.rs`).
//!
//! The graph keeps the adjacency once, flat: each unit's dependencies
//! ([`Graph::deps`]) and each unit's dependents ([`Graph::dependents`]), in
//! one array each, so that the planner's walks over them read a few bytes
//! per edge. A dependency's target name is not copied: it is the entry of
//! the unit's `depends-on`, `depends-ms` or `waits-for` list
//! ([`Graph::dep_target`]).

use crate::diag::{Diagnostic, Pos};
use crate::mask::Masks;
use crate::spec::{Origin, TargetList, UnitSpec};
use crate::state::DepKind;
use crate::targets::Targets;
use std::collections::HashMap;
use std::sync::Arc;

mod masked;
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
    /// A unit that was removed (reload, transient set) but still had to be
    /// stopped: it provides nothing and depends on nothing.
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
    /// waits-for (a ghost has none).
    deps: PerUnit<Edge>,
    /// Per unit, the dependencies on it, in the order of the dependents'
    /// ids and then of their dependency lists.
    dependents: PerUnit<Dependent>,
}

impl Graph {
    /// Builds the graph, leaving out every unit with an error (and reporting
    /// it). Units are kept in name order, so ids are deterministic.
    pub fn build(units: Vec<(UnitSpec, Origin)>) -> (Graph, Vec<Diagnostic>) {
        Graph::build_shaped(units, Shape::default())
    }

    /// [`Graph::build`] with declared targets and masks.
    pub fn build_shaped(units: Vec<(UnitSpec, Origin)>, shape: Shape) -> (Graph, Vec<Diagnostic>) {
        let (graph, diags, _) = Graph::build_inner(units, Vec::new(), Arc::new(shape));
        (graph, diags)
    }

    /// Builds the graph, or returns every problem (errors and warnings) if
    /// there is any error.
    pub fn build_strict(
        units: Vec<(UnitSpec, Origin)>,
    ) -> Result<(Graph, Vec<Diagnostic>), Vec<Diagnostic>> {
        Graph::build_strict_shaped(units, Vec::new(), Arc::default())
    }

    /// Like [`Graph::build_strict`], with `ghosts` added: removed units that
    /// still have to stop. They keep their names but provide nothing and
    /// depend on nothing.
    pub fn build_with_ghosts(
        units: Vec<(UnitSpec, Origin)>,
        ghosts: Vec<(Arc<UnitSpec>, Origin)>,
    ) -> Result<(Graph, Vec<Diagnostic>), Vec<Diagnostic>> {
        Graph::build_strict_shaped(units, ghosts, Arc::default())
    }

    /// [`Graph::build_with_ghosts`] with declared targets and masks.
    pub fn build_strict_shaped(
        units: Vec<(UnitSpec, Origin)>,
        ghosts: Vec<(Arc<UnitSpec>, Origin)>,
        shape: Arc<Shape>,
    ) -> Result<(Graph, Vec<Diagnostic>), Vec<Diagnostic>> {
        let (graph, diags, rejected) = Graph::build_inner(units, ghosts, shape);
        if rejected || diags.iter().any(Diagnostic::is_error) {
            Err(diags)
        } else {
            Ok((graph, diags))
        }
    }

    fn build_inner(
        mut units: Vec<(UnitSpec, Origin)>,
        ghosts: Vec<(Arc<UnitSpec>, Origin)>,
        shape: Arc<Shape>,
    ) -> (Graph, Vec<Diagnostic>, bool) {
        let mut diags = Vec::new();
        let mut rejected = false;
        // Stable order: by name, then by file, so duplicates keep the first file.
        units.sort_by(|a, b| {
            a.0.name
                .cmp(&b.0.name)
                .then_with(|| a.1.file.cmp(&b.1.file))
        });

        // Duplicate unit names: keep the first, report both.
        let mut kept: Vec<(UnitSpec, Origin)> = Vec::with_capacity(units.len());
        for (spec, origin) in units {
            if let Some((_, first)) = kept.last().filter(|(s, _)| s.name == spec.name) {
                diags.push(Diagnostic::error(
                    origin.file.clone(),
                    origin.pos,
                    format!(
                        "duplicate unit name `{}`: also defined at {}; this one is left out",
                        spec.name,
                        place(first, first.pos)
                    ),
                ));
                rejected = true;
                continue;
            }
            kept.push((spec, origin));
        }

        // Duplicate provides: the first unit (in name order) keeps the target.
        // Keyed by the specs' own strings: no copy of each target. A masked
        // unit provides nothing; a declared target may have several
        // providers.
        let mut providers: HashMap<&str, usize> = HashMap::with_capacity(kept.len());
        let mut bad = vec![false; kept.len()];
        for (i, (spec, origin)) in kept.iter().enumerate() {
            if shape.masks.contains(&spec.name) {
                continue;
            }
            for (j, t) in spec.provides.iter().enumerate() {
                if shape.targets.contains_key(t.as_str()) {
                    continue;
                }
                match providers.get(t.as_str()) {
                    Some(&k) if k != i => {
                        let (other, oorigin) = &kept[k];
                        let opos = other
                            .provides
                            .iter()
                            .position(|x| x == t)
                            .and_then(|p| oorigin.provides_pos().get(p).copied())
                            .unwrap_or(oorigin.pos);
                        diags.push(Diagnostic::error(
                            origin.file.clone(),
                            origin.provides_pos().get(j).copied().unwrap_or(origin.pos),
                            format!(
                                "target `{t}` is provided by both `{}` ({}) and `{}`; `{}` is left out",
                                other.name,
                                place(oorigin, opos),
                                spec.name,
                                spec.name
                            ),
                        ));
                        bad[i] = true;
                    }
                    Some(_) => {}
                    None => {
                        providers.insert(t.as_str(), i);
                    }
                }
            }
        }
        if bad.iter().any(|&b| b) {
            rejected = true;
            let mut i = 0;
            kept.retain(|_| {
                let keep = !bad[i];
                i += 1;
                keep
            });
        }

        // Cycles: find strongly connected components over unit -> provider
        // edges and leave every unit on a cycle out. The usual case, no
        // cycle at all, is settled on indices first, without copying the
        // units into a graph.
        loop {
            if !has_cycle(&kept, &shape) {
                break;
            }
            let g = Graph::assemble(
                kept.iter()
                    .map(|(s, o)| masked::mark(Node::unit(Arc::new(s.clone()), o.clone()), &shape))
                    .collect(),
                shape.clone(),
            );
            let cycles = g.cycles();
            if cycles.is_empty() {
                break;
            }
            let mut out = vec![false; kept.len()];
            for cycle in cycles {
                // An ordering edge on the cycle is dropped, as systemd
                // breaks an ordering cycle, and the units stay.
                if let Some(warning) = break_ordering(&g, &cycle, &mut kept) {
                    diags.push(warning);
                    continue;
                }
                rejected = true;
                let first = cycle[0];
                let node = g.node(first);
                let mut path = String::new();
                for (n, &id) in cycle.iter().enumerate() {
                    let next = cycle[(n + 1) % cycle.len()];
                    let dep = g.named_deps(id).find(|d| d.provider == Some(next));
                    if let Some(dep) = dep {
                        if g.is_target(id) {
                            path.push_str(&format!(
                                "target `{}` --provided by--> ",
                                g.node(id).spec.name
                            ));
                        } else {
                            path.push_str(&format!(
                                "`{}` --{} {}--> ",
                                g.node(id).spec.name,
                                dep.kind.as_str(),
                                dep.target
                            ));
                        }
                    }
                    if let Some(o) = out.get_mut(id.index()) {
                        *o = true;
                    }
                }
                path.push_str(&format!("`{}`", node.spec.name));
                let pos = g
                    .deps(first)
                    .iter()
                    .position(|d| d.provider == cycle.get(1).copied().or(Some(first)))
                    .map(|i| dep_pos(&node.origin, &node.spec, i))
                    .unwrap_or(node.origin.pos);
                diags.push(Diagnostic::error(
                    node.origin.file.clone(),
                    pos,
                    format!("dependency cycle: {path}; the units on it are left out"),
                ));
            }
            let mut i = 0;
            kept.retain(|_| {
                let keep = !out[i];
                i += 1;
                keep
            });
        }

        let mut all: Vec<Node> = kept
            .into_iter()
            .map(|(s, o)| masked::mark(Node::unit(Arc::new(s), o), &shape))
            .collect();
        let names: std::collections::HashSet<&str> =
            all.iter().map(|n| n.spec.name.as_str()).collect();
        let mut ghost_list: Vec<Node> = ghosts
            .into_iter()
            .filter(|(s, _)| !names.contains(s.name.as_str()))
            .map(|(s, o)| {
                let ghost = Node {
                    ghost: true,
                    ..Node::unit(s, o)
                };
                masked::mark(ghost, &shape)
            })
            .collect();
        let mut masked_names = masked::unit_less(&shape, |n| {
            names.contains(n) || ghost_list.iter().any(|g| g.spec.name == n)
        });
        all.append(&mut ghost_list);
        all.append(&mut masked_names);
        all.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
        let graph = Graph::assemble(all, shape.clone());

        // Missing targets: a warning (SPEC §4 says what they do).
        for (id, node) in graph.ids().zip(&graph.nodes) {
            if !node.provides_targets() {
                continue;
            }
            for (i, dep) in graph.named_deps(id).enumerate() {
                // Ordering against a unit that does not exist is no
                // problem: there is nothing to wait for (as in systemd).
                if dep.provider.is_none() && dep.kind != DepKind::After {
                    let what = match dep.kind {
                        DepKind::WaitsFor => "counts as settled and makes the unit degraded",
                        _ => "keeps the unit waiting",
                    };
                    let who = match graph.masked_provider(dep.target) {
                        Some(m) => format!(
                            "only the masked unit `{}` provides this target",
                            graph.node(m).spec.name
                        ),
                        None => "no unit provides this target".to_string(),
                    };
                    diags.push(Diagnostic::warning(
                        node.origin.file.clone(),
                        dep_pos(&node.origin, &node.spec, i),
                        format!("{} `{}`: {who} ({what})", dep.kind.as_str(), dep.target),
                    ));
                }
            }
        }
        diags.extend(targets::declaration_problems(&graph, &shape.targets));
        (graph, diags, rejected)
    }

    /// Puts units (already free of duplicates) into an arena, adds the
    /// declared targets' nodes after them, and links them.
    fn assemble(mut units: Vec<Node>, shape: Arc<Shape>) -> Graph {
        // In name order (the callers' order already: this checks it in one
        // pass), so that `unit` can search.
        if !units.is_sorted_by(|a, b| a.spec.name <= b.spec.name) {
            units.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
        }
        let units_len = units.len();
        let declared = targets::declared_nodes(&units, &shape.targets, |n| shape.masks.contains(n));
        // Every provider, to resolve the edges below; kept afterwards only
        // for the targets that are not their provider's own name.
        let mut providers: HashMap<&str, UnitId> = HashMap::with_capacity(units.len());
        let mut other_providers = HashMap::new();
        for (i, node) in units.iter().enumerate() {
            let id = UnitId(i as u32);
            if node.provides_targets() {
                for t in &node.spec.provides {
                    providers.entry(t.as_str()).or_insert(id);
                    if *t != node.spec.name {
                        other_providers.entry(t.as_str().into()).or_insert(id);
                    }
                }
            }
        }
        for (k, t) in declared.iter().enumerate() {
            let id = UnitId((units_len + k) as u32);
            providers.insert(t.name.as_str(), id);
            other_providers.insert(t.name.as_str().into(), id);
        }
        let masked_targets = masked::targets_of(&units, &providers);
        let total = units_len + declared.len();
        // `A before B` is `B after A`: an edge of B's, after its own.
        let mut befores: HashMap<UnitId, Vec<UnitId>> = HashMap::new();
        for (i, node) in units.iter().enumerate() {
            if !node.provides_targets() {
                continue;
            }
            for t in &node.spec.before {
                if let Some(&p) = providers.get(t.as_str()) {
                    befores.entry(p).or_default().push(UnitId(i as u32));
                }
            }
        }
        let mut deps = PerUnit::default();
        let mut counts = vec![0u32; total + 1];
        let mut count = |p: UnitId| {
            if let Some(c) = counts.get_mut(p.index() + 1) {
                *c += 1;
            }
        };
        let resolve = &providers;
        for (i, node) in units.iter().enumerate() {
            deps.at.push(deps.items.len() as u32);
            if !node.provides_targets() {
                continue;
            }
            let own = dep_lists(&node.spec)
                .into_iter()
                .flat_map(|(kind, targets)| {
                    targets
                        .iter()
                        .map(move |t| (kind, resolve.get(t.as_str()).copied()))
                });
            let other = befores.get(&UnitId(i as u32)).into_iter().flatten();
            let other = other.map(|&u| (DepKind::After, Some(u)));
            for (kind, provider) in own.chain(other) {
                if let Some(p) = provider {
                    count(p);
                }
                deps.items.push(Edge { kind, provider });
            }
        }
        for t in &declared {
            deps.at.push(deps.items.len() as u32);
            for (j, &m) in t.members.iter().enumerate() {
                count(m);
                deps.items.push(Edge {
                    kind: targets::member_kind(t, j),
                    provider: Some(m),
                });
            }
        }
        deps.at.push(deps.items.len() as u32);
        // The dependents, by counting: each provider's start is the sum of
        // the counts before it.
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        let mut fill: Vec<u32> = counts.clone();
        let mut items = vec![
            Dependent {
                unit: UnitId(0),
                index: 0,
                kind: DepKind::DependsOn,
            };
            deps.items.len()
        ];
        for u in 0..total {
            for (j, e) in deps.of(u).iter().enumerate() {
                if let Some(f) = e.provider.and_then(|p| fill.get_mut(p.index())) {
                    if let Some(slot) = items.get_mut(*f as usize) {
                        *slot = Dependent {
                            unit: UnitId(u as u32),
                            index: j as u32,
                            kind: e.kind,
                        };
                    }
                    *f += 1;
                }
            }
        }
        let used = counts.last().copied().unwrap_or(0) as usize;
        items.truncate(used);
        let dependents = PerUnit { at: counts, items };
        // Pushed into a vector of their own size: collecting would reuse the
        // larger elements' buffer in place and keep all of it.
        let mut nodes = Vec::with_capacity(total);
        nodes.extend(units);
        nodes.extend(declared.iter().map(targets::node_of));
        Graph {
            nodes,
            units_len,
            targets: declared,
            other_providers,
            masked_targets,
            shape,
            deps,
            dependents,
        }
    }

    /// Every cycle (one per strongly connected component with a cycle), each
    /// as the list of units along it, starting from the smallest id.
    fn cycles(&self) -> Vec<Vec<UnitId>> {
        use petgraph::graphmap::DiGraphMap;
        let mut g: DiGraphMap<u32, ()> =
            DiGraphMap::with_capacity(self.nodes.len(), self.nodes.len());
        for u in self.node_ids() {
            g.add_node(u.0);
            for p in self.deps(u).iter().filter_map(|e| e.provider) {
                g.add_edge(u.0, p.0, ());
            }
        }
        let mut out = Vec::new();
        for scc in petgraph::algo::tarjan_scc(&g) {
            let self_loop = scc.len() == 1 && g.contains_edge(scc[0], scc[0]);
            if scc.len() < 2 && !self_loop {
                continue;
            }
            // Walk the cycle inside the component from its smallest member.
            let members: std::collections::HashSet<u32> = scc.iter().copied().collect();
            let start = scc.iter().copied().min().unwrap_or(0);
            let mut path = vec![UnitId(start)];
            let mut seen = std::collections::HashSet::new();
            seen.insert(start);
            let mut cur = start;
            loop {
                let next = self
                    .deps(UnitId(cur))
                    .iter()
                    .filter_map(|d| d.provider.map(|p| p.0))
                    .filter(|p| members.contains(p))
                    .min_by_key(|p| (seen.contains(p) && *p != start, *p));
                match next {
                    Some(n) if n == start => break,
                    Some(n) if !seen.contains(&n) => {
                        seen.insert(n);
                        path.push(UnitId(n));
                        cur = n;
                    }
                    _ => break,
                }
            }
            out.push(path);
        }
        out.sort();
        out
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
    /// from it over all three dependency kinds, as a flag per node. `None` if
    /// no unit provides the target.
    pub fn required_set(&self, target: &str) -> Option<Vec<bool>> {
        let root = self.provider(target)?;
        Some(self.reachable(&[root]))
    }

    /// `roots` and everything reachable from them over the three dependency
    /// kinds (not `after`: ordering never pulls a unit in; not over an
    /// alternative's providers it did not choose), as a flag per node.
    ///
    /// `conflicts` (either side's) decides between two units: the one
    /// reached first (breadth first, dependencies in order) is required,
    /// the other is not, nor what only it pulls in.
    pub fn reachable(&self, roots: &[UnitId]) -> Vec<bool> {
        let conflicts = self.conflicts();
        let mut req = vec![false; self.nodes.len()];
        let mut work = std::collections::VecDeque::with_capacity(roots.len());
        for &r in roots {
            if let Some(f) = req.get_mut(r.index()) {
                if !*f {
                    *f = true;
                    work.push_back(r);
                }
            }
        }
        while let Some(u) = work.pop_front() {
            let pulled = self
                .deps(u)
                .iter()
                .filter(|e| !matches!(e.kind, DepKind::After | DepKind::Standby));
            for p in pulled.filter_map(|e| e.provider) {
                let loses = || {
                    conflicts
                        .get(&p)
                        .is_some_and(|o| o.iter().any(|o| req[o.index()]))
                };
                if !req[p.index()] && !loses() {
                    req[p.index()] = true;
                    work.push_back(p);
                }
            }
        }
        req
    }

    /// Each unit's conflicts, both ways (empty for most graphs).
    fn conflicts(&self) -> HashMap<UnitId, Vec<UnitId>> {
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
    /// waits-for (none for a ghost, or an id of another graph).
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

/// A unit's lists of targets, in the order of its dependencies. The edges
/// of other units' `before` come after these (see [`Graph::assemble`]).
fn dep_lists(spec: &UnitSpec) -> [(DepKind, &Vec<String>); 4] {
    [
        (DepKind::DependsOn, &spec.depends_on),
        (DepKind::DependsMs, &spec.depends_ms),
        (DepKind::WaitsFor, &spec.waits_for),
        (DepKind::After, &spec.after),
    ]
}

/// Drops the first ordering edge (`after`, or the other side's `before`)
/// on `cycle` from the units in `kept`, and says so; `None` when the cycle
/// has none (a cycle of dependencies, which leaves its units out).
fn break_ordering(
    g: &Graph,
    cycle: &[UnitId],
    kept: &mut [(UnitSpec, Origin)],
) -> Option<Diagnostic> {
    for (n, &id) in cycle.iter().enumerate() {
        let next = cycle[(n + 1) % cycle.len()];
        let Some(j) = g
            .deps(id)
            .iter()
            .position(|e| e.provider == Some(next) && e.kind == DepKind::After)
        else {
            continue;
        };
        let target = g.dep_target(id, j as u32).to_string();
        let unit = g.node(id);
        let other = g.node(next);
        let own = kept
            .iter_mut()
            .find(|(s, _)| s.name == unit.spec.name)
            .filter(|(s, _)| s.after.contains(&target));
        let dropped = if let Some((s, _)) = own {
            s.after.retain(|t| *t != target);
            format!("`{}` after {target}", unit.spec.name)
        } else {
            let (s, _) = kept.iter_mut().find(|(s, _)| s.name == other.spec.name)?;
            let before = s.before.len();
            s.before.retain(|t| !unit.spec.provides.contains(t));
            if s.before.len() == before {
                // Nothing to drop: leave the cycle to the caller (no loop).
                return None;
            }
            format!("`{}` before {}", other.spec.name, unit.spec.name)
        };
        let names: Vec<&str> = cycle
            .iter()
            .map(|&u| g.node(u).spec.name.as_str())
            .collect();
        return Some(Diagnostic::warning(
            unit.origin.file.clone(),
            unit.origin.pos,
            format!(
                "ordering cycle through {}: dropped {dropped}",
                names.join(", ")
            ),
        ));
    }
    None
}

/// Whether the unit -> provider edges of `units` have a cycle (the first
/// unit providing a target is its provider, as in [`Graph::assemble`]; a
/// declared target leads to every one of its providers, whichever is
/// chosen; masked units have no edges).
fn has_cycle(units: &[(UnitSpec, Origin)], shape: &Shape) -> bool {
    let mut providers: HashMap<&str, u32> = HashMap::with_capacity(units.len());
    let mut declared: HashMap<&str, Vec<u32>> = HashMap::new();
    for (i, (spec, _)) in units.iter().enumerate() {
        if shape.masks.contains(&spec.name) {
            continue;
        }
        for t in &spec.provides {
            if shape.targets.contains_key(t.as_str()) {
                declared.entry(t.as_str()).or_default().push(i as u32);
            } else {
                providers.entry(t.as_str()).or_insert(i as u32);
            }
        }
    }
    let mut g: petgraph::graph::DiGraph<(), (), u32> =
        petgraph::graph::DiGraph::with_capacity(units.len(), units.len() * 2);
    for _ in units {
        g.add_node(());
    }
    for (i, (spec, _)) in units.iter().enumerate() {
        if shape.masks.contains(&spec.name) {
            continue;
        }
        for t in spec
            .depends_on
            .iter()
            .chain(&spec.depends_ms)
            .chain(&spec.waits_for)
            .chain(&spec.after)
        {
            if let Some(&p) = providers.get(t.as_str()) {
                g.add_edge((i as u32).into(), p.into(), ());
            }
            for &p in declared.get(t.as_str()).into_iter().flatten() {
                g.add_edge((i as u32).into(), p.into(), ());
            }
        }
        // `before` is the other side's `after`: an edge the other way.
        for t in &spec.before {
            if let Some(&p) = providers.get(t.as_str()) {
                g.add_edge(p.into(), (i as u32).into(), ());
            }
        }
    }
    petgraph::algo::is_cyclic_directed(&g)
}

/// `file:line:col` of a position in the file of `origin`.
fn place(origin: &Origin, pos: Pos) -> String {
    if pos.line == 0 {
        origin.file.clone()
    } else {
        format!("{}:{}:{}", origin.file, pos.line, pos.col)
    }
}

/// The position of the `i`-th dependency (in depends-on, depends-ms,
/// waits-for order) of a unit.
fn dep_pos(origin: &Origin, spec: &UnitSpec, i: usize) -> Pos {
    let a = spec.depends_on.len();
    let b = a + spec.depends_ms.len();
    let c = b + spec.waits_for.len();
    let p = if i < a {
        origin.depends_on_pos().get(i)
    } else if i < b {
        origin.depends_ms_pos().get(i - a)
    } else if i < c {
        origin.waits_for_pos().get(i - b)
    } else {
        origin.positions(TargetList::After).get(i - c)
    };
    p.copied().unwrap_or(origin.pos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::UnitType;

    fn unit(
        name: &str,
        provides: &[&str],
        on: &[&str],
        ms: &[&str],
        wf: &[&str],
    ) -> (UnitSpec, Origin) {
        let mut s = UnitSpec::new(name, UnitType::Virtual);
        if !provides.is_empty() {
            s.provides = provides.iter().map(|x| x.to_string()).collect();
        }
        s.depends_on = on.iter().map(|x| x.to_string()).collect();
        s.depends_ms = ms.iter().map(|x| x.to_string()).collect();
        s.waits_for = wf.iter().map(|x| x.to_string()).collect();
        (s, Origin::at(format!("{name}.yaml"), Pos::new(1, 7)))
    }

    #[test]
    fn required_set_follows_every_kind() {
        let (g, d) = Graph::build(vec![
            unit("top", &["default"], &["a"], &["b"], &["c"]),
            unit("a", &[], &[], &[], &[]),
            unit("b", &[], &["d"], &[], &[]),
            unit("c", &[], &[], &[], &[]),
            unit("d", &[], &[], &[], &[]),
            unit("other", &[], &[], &[], &[]),
        ]);
        assert!(d.is_empty(), "{d:?}");
        let req = g.required_set("default").unwrap();
        let names: Vec<&str> = g
            .ids()
            .filter(|i| req[i.index()])
            .map(|i| g.node(i).spec.name.as_str())
            .collect();
        assert_eq!(names, vec!["a", "b", "c", "d", "top"]);
        assert!(g.required_set("nope").is_none());
    }

    #[test]
    fn after_pulls_nothing_in_and_conflicts_keep_the_first_reached() {
        let with = |mut u: (UnitSpec, Origin), f: fn(&mut UnitSpec)| {
            f(&mut u.0);
            u
        };
        let (g, d) = Graph::build(vec![
            with(unit("top", &["default"], &["a"], &[], &["b"]), |s| {
                s.after = vec!["x".into()];
            }),
            // b conflicts with a, which is reached first (a depends-on
            // edge comes before a waits-for one): b is left out, and so is
            // c, which only b pulls in; x is only ordered against.
            with(unit("b", &[], &["c"], &[], &[]), |s| {
                s.conflicts = vec!["a".into()];
            }),
            unit("a", &[], &[], &[], &[]),
            unit("c", &[], &[], &[], &[]),
            unit("x", &[], &[], &[], &[]),
        ]);
        assert!(d.is_empty(), "{d:?}");
        let names = |req: Vec<bool>| -> Vec<&str> {
            g.ids()
                .filter(|i| req[i.index()])
                .map(|i| g.node(i).spec.name.as_str())
                .collect()
        };
        assert_eq!(names(g.required_set("default").unwrap()), ["a", "top"]);
        // Required on its own, b wins and pulls c in.
        assert_eq!(names(g.required_set("b").unwrap()), ["b", "c"]);
    }

    #[test]
    fn duplicate_provides_names_both_units_and_drops_the_second() {
        let (g, d) = Graph::build(vec![
            unit("a", &["x"], &[], &[], &[]),
            unit("b", &["x", "y"], &[], &[], &[]),
        ]);
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].to_string(),
            "b.yaml:1:7: target `x` is provided by both `a` (a.yaml:1:7) and `b`; `b` is left out"
        );
        assert_eq!(g.provider("x"), g.unit("a"));
        assert!(g.unit("b").is_none());
        assert!(Graph::build_strict(vec![
            unit("a", &["x"], &[], &[], &[]),
            unit("b", &["x"], &[], &[], &[])
        ])
        .is_err());
    }

    #[test]
    fn duplicate_names_are_reported() {
        let (g, d) = Graph::build(vec![
            unit("a", &[], &[], &[], &[]),
            unit("a", &["q"], &[], &[], &[]),
        ]);
        assert_eq!(g.len(), 1);
        assert!(d[0].message.contains("duplicate unit name `a`"), "{d:?}");
    }

    #[test]
    fn cycles_report_the_whole_path_and_leave_the_units_out() {
        let (g, d) = Graph::build(vec![
            unit("a", &[], &["b"], &[], &[]),
            unit("b", &[], &[], &["c"], &[]),
            unit("c", &[], &[], &[], &["a"]),
            unit("d", &[], &["a"], &[], &[]),
            unit("e", &[], &[], &[], &[]),
        ]);
        let errs: Vec<String> = d
            .iter()
            .filter(|x| x.is_error())
            .map(|x| x.to_string())
            .collect();
        assert_eq!(
            errs,
            vec!["a.yaml:1:7: dependency cycle: `a` --depends-on b--> `b` --depends-ms c--> `c` --waits-for a--> `a`; the units on it are left out"]
        );
        assert!(g.unit("a").is_none() && g.unit("b").is_none() && g.unit("c").is_none());
        // d now depends on a missing target: a warning.
        assert!(g.unit("d").is_some());
        assert!(d
            .iter()
            .any(|x| !x.is_error() && x.message.contains("depends-on `a`: no unit provides")));
    }

    /// An ordering cycle (`b` waits for `net`, whose provider is `before`
    /// it, systemd's `Wants=` + `Before=` pattern) is broken by dropping the
    /// ordering, with a warning, as systemd breaks one; both units stay.
    #[test]
    fn an_ordering_cycle_drops_the_ordering_and_keeps_the_units() {
        let mut b = unit("b", &[], &[], &[], &["net"]);
        b.0.before = vec!["net".into()];
        let (g, d) = Graph::build(vec![b, unit("net", &[], &[], &[], &[])]);
        assert!(g.unit("b").is_some() && g.unit("net").is_some());
        let msgs: Vec<String> = d.iter().map(|x| x.to_string()).collect();
        assert!(d.iter().all(|x| !x.is_error()), "{msgs:?}");
        assert!(
            msgs.iter()
                .any(|m| m.contains("ordering cycle through")
                    && m.contains("dropped `b` before net")),
            "{msgs:?}"
        );
    }

    #[test]
    fn self_loop_is_a_cycle() {
        let (_, d) = Graph::build(vec![unit("a", &[], &["a"], &[], &[])]);
        assert!(
            d[0].message
                .starts_with("dependency cycle: `a` --depends-on a--> `a`"),
            "{d:?}"
        );
    }

    #[test]
    fn ghosts_provide_nothing() {
        let (s, o) = unit("old", &["x"], &["y"], &[], &[]);
        let (g, _) = Graph::build_with_ghosts(
            vec![unit("new", &["x"], &[], &[], &[])],
            vec![(Arc::new(s), o)],
        )
        .unwrap();
        assert_eq!(g.provider("x"), g.unit("new"));
        let old = g.unit("old").unwrap();
        assert!(g.node(old).ghost && g.deps(old).is_empty());
    }
}
