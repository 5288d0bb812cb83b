//! Building a graph: units into the arena (name order, so ids are
//! deterministic), targets to their providers, the flat adjacency, and the
//! checks that span units (duplicates, dependency cycles, ordering cycles).

use super::*;
use crate::spec::Names;

impl Graph {
    pub(super) fn build_inner(
        mut units: Vec<(Arc<UnitSpec>, Origin)>,
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
        let mut kept: Vec<(Arc<UnitSpec>, Origin)> = Vec::with_capacity(units.len());
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
                            .and_then(|p| oorigin.position(TargetList::Provides, p))
                            .unwrap_or(oorigin.pos);
                        diags.push(Diagnostic::error(
                            origin.file.clone(),
                            origin.position(TargetList::Provides, j).unwrap_or(origin.pos),
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
                    .map(|(s, o)| masked::mark(Node::unit(s.clone(), o.clone()), &shape))
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
                    let dep = g
                        .named_deps(id)
                        .find(|d| d.provider == Some(next) && d.kind.orders());
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
                    .position(|d| {
                        d.kind.orders() && d.provider == cycle.get(1).copied().or(Some(first))
                    })
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
            .map(|(s, o)| masked::mark(Node::unit(s, o), &shape))
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

        // Missing targets: a warning (docs/contract.md §4 says what they do).
        for (id, node) in graph.ids().zip(&graph.nodes) {
            if !node.provides_targets() {
                continue;
            }
            for (i, dep) in graph.named_deps(id).enumerate() {
                // Ordering against a unit that does not exist is no
                // problem: there is nothing to wait for (as in systemd).
                if dep.provider.is_none() && !matches!(dep.kind, DepKind::After | DepKind::PartOf) {
                    let what = match dep.kind {
                        DepKind::WaitsFor => "counts as settled and makes the unit degraded",
                        DepKind::Wants => "pulls nothing in",
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
        let devices = shape.devices && providers.contains_key(UDEVD);
        for (i, node) in units.iter().enumerate() {
            deps.at.push(deps.items.len() as u32);
            if !node.provides_targets() {
                continue;
            }
            // A YAML unit's dependencies follow the contract's section 4
            // as written (docs/contract.md: a missing target keeps its
            // dependent waiting).
            let systemd = !node.origin.is_yaml();
            let own = dep_lists(&node.spec)
                .into_iter()
                .flat_map(|(kind, targets)| {
                    targets.iter().map(move |t| {
                        let provider = resolve.get(t.as_str()).copied();
                        let kind = if systemd {
                            met_elsewhere(kind, t, provider, devices)
                        } else {
                            kind
                        };
                        (kind, provider)
                    })
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
            conflicts: std::sync::OnceLock::new(),
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
            // Only ordering makes a cycle: `wants` and `requires` pairs
            // are fine, as in systemd.
            let ordering = self.deps(u).iter().filter(|e| e.kind.orders());
            for p in ordering.filter_map(|e| e.provider) {
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
                    .filter(|d| d.kind.orders())
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
}

/// A unit's lists of targets, in the order of its dependencies. The edges
/// of other units' `before` come after these (see [`Graph::assemble`]).
/// udev's daemon: with it in the graph (and [`Shape::devices`]), a `.device`
/// no unit provides is a device not plugged (yet).
const UDEVD: &str = "systemd-udevd.service";

/// A systemd unit's dependency on a `.mount` that no unit provides counts
/// as met: its
/// path is mounted by someone else (the kernel, PID 1, the fstab unit) or
/// is no mount point at all. systemd has a unit for every mount point of
/// /proc/self/mountinfo, and `RequiresMountsFor=` names only those that
/// exist; flotilla has units only for the `.mount` files on its path, so
/// the edge is kept as an ordering against nothing (which waits for
/// nothing) and its index stays that of its name in the unit's lists.
///
/// So does one on a `.device` unless `devices` (udev runs here: the init
/// makes a unit of each plugged device, docs/systemd-units.md, "Device
/// units"); then it is a device not plugged, which keeps a hard dependent
/// waiting as any missing unit does.
fn met_elsewhere(kind: DepKind, target: &str, provider: Option<UnitId>, devices: bool) -> DepKind {
    let elsewhere = target.ends_with(".mount") || (!devices && target.ends_with(".device"));
    if provider.is_none() && elsewhere {
        DepKind::After
    } else {
        kind
    }
}

/// The list each entry of [`dep_lists`] comes from, in the same order.
const DEP_LISTS: [TargetList; 9] = [
    TargetList::DependsOn,
    TargetList::DependsMs,
    TargetList::WaitsFor,
    TargetList::After,
    TargetList::Wants,
    TargetList::Requires,
    TargetList::Requisite,
    TargetList::PartOf,
    TargetList::Upholds,
];

/// `upholds` pulls its units in as `wants` does (the planner restarts
/// them: `Planner::upheld`).
pub(super) fn dep_lists(spec: &UnitSpec) -> [(DepKind, &Names); 9] {
    [
        (DepKind::DependsOn, &spec.depends_on),
        (DepKind::DependsMs, &spec.depends_ms),
        (DepKind::WaitsFor, &spec.waits_for),
        (DepKind::After, &spec.after),
        (DepKind::Wants, &spec.wants),
        (DepKind::Requires, &spec.requires),
        (DepKind::Requisite, &spec.extras.requisite),
        (DepKind::PartOf, &spec.extras.part_of),
        (DepKind::Wants, &spec.extras.upholds),
    ]
}

/// Drops the first ordering edge (`after`, or the other side's `before`)
/// on `cycle` from the units in `kept`, and says so; `None` when the cycle
/// has none (a cycle of dependencies, which leaves its units out).
fn break_ordering(
    g: &Graph,
    cycle: &[UnitId],
    kept: &mut [(Arc<UnitSpec>, Origin)],
) -> Option<Diagnostic> {
    for (n, &id) in cycle.iter().enumerate() {
        let next = cycle[(n + 1) % cycle.len()];
        // A systemd unit's `Requires=` with `After=` (`depends-on`) is
        // broken too: its ordering goes and the requirement stays, as
        // systemd starts such a cycle (testsuite-03's 20 services); a YAML
        // unit's `depends-on` cycle stays an error.
        let systemd = !g.node(id).origin.is_yaml();
        let Some(j) = g.deps(id).iter().position(|e| {
            e.provider == Some(next)
                && (e.kind == DepKind::After || (systemd && e.kind == DepKind::DependsOn))
        }) else {
            continue;
        };
        let target = g.dep_target(id, j as u32).to_string();
        let unit = g.node(id);
        let other = g.node(next);
        let own = kept.iter_mut().find(|(s, _)| s.name == unit.spec.name);
        let dropped = if g.deps(id)[j].kind == DepKind::DependsOn {
            let (s, _) = own.filter(|(s, _)| s.depends_on.contains(&target))?;
            let s = Arc::make_mut(s);
            s.depends_on.retain(|t| *t != target);
            s.requires.push(target.clone());
            format!("`{}` after {target} (it still requires it)", unit.spec.name)
        } else if let Some((s, _)) = own.filter(|(s, _)| s.after.contains(&target)) {
            Arc::make_mut(s).after.retain(|t| *t != target);
            format!("`{}` after {target}", unit.spec.name)
        } else {
            let (s, _) = kept.iter_mut().find(|(s, _)| s.name == other.spec.name)?;
            if !s.before.iter().any(|t| unit.spec.provides.contains(t)) {
                // Nothing to drop: leave the cycle to the caller (no loop).
                return None;
            }
            Arc::make_mut(s)
                .before
                .retain(|t| !unit.spec.provides.contains(t));
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
fn has_cycle(units: &[(Arc<UnitSpec>, Origin)], shape: &Shape) -> bool {
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
            .chain(&spec.extras.requisite)
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

/// The position of the `i`-th dependency (in the order of [`dep_lists`])
/// of a unit.
fn dep_pos(origin: &Origin, spec: &UnitSpec, i: usize) -> Pos {
    let mut i = i;
    for ((_, targets), list) in dep_lists(spec).into_iter().zip(DEP_LISTS) {
        if i < targets.len() {
            return origin.position(list, i).unwrap_or(origin.pos);
        }
        i -= targets.len();
    }
    origin.pos
}
