//! `initctl analyze dot`: the unit graph in Graphviz dot.
//!
//! Nodes are units, labelled with their name and, when they differ from it,
//! the targets they provide; units the current target requires are filled
//! and bold, the others grey, failed ones red. An edge goes from a unit to
//! the provider of each target it depends on: `depends-on` solid,
//! `depends-ms` dashed, `waits-for` dotted (`requires` solid, `wants`
//! dotted, both with a hollow arrowhead: they order nothing), labelled with the target when it
//! is not the provider's name. A target no unit provides is a red dashed
//! placeholder node. Render with `initctl analyze dot | dot -Tsvg > g.svg`.

use flotilla_units::protocol::AnalyzeData;
use flotilla_units::state::{DepKind, UnitState};
use std::collections::BTreeSet;
use std::fmt::Write;

/// A dot string literal.
pub fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The line style of a dependency kind (the kinds that order nothing,
/// `requires` and `wants`, also get a hollow arrowhead).
pub fn edge_style(kind: DepKind) -> &'static str {
    match kind {
        DepKind::DependsOn | DepKind::Requires | DepKind::Requisite => "solid",
        DepKind::DependsMs => "dashed",
        DepKind::WaitsFor
        | DepKind::Standby
        | DepKind::After
        | DepKind::Wants
        | DepKind::PartOf => "dotted",
    }
}

/// The node id of a target without a provider.
fn missing_id(target: &str) -> String {
    format!("missing:{target}")
}

/// The graph.
pub fn dot(data: &AnalyzeData) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "digraph flotilla {{");
    let label = format!(
        "flotilla units, target {}\nedges: depends-on solid, depends-ms dashed, waits-for dotted; \
         hollow arrow: requires (solid), wants (dotted), no ordering",
        data.target
    );
    let _ = writeln!(s, "  label={};", quote(&label));
    let _ = writeln!(s, "  labelloc=t;");
    let _ = writeln!(s, "  fontname=\"sans-serif\";");
    let _ = writeln!(s, "  rankdir=LR;");
    let _ = writeln!(s, "  node [shape=box, style=\"rounded,filled\", fontname=\"sans-serif\", fillcolor=\"#ffffff\"];");
    let _ = writeln!(s, "  edge [fontname=\"sans-serif\", fontsize=10];");
    let _ = writeln!(
        s,
        "  // edges: depends-on solid, depends-ms dashed, waits-for dotted; red dashed nodes: targets no unit provides"
    );
    for u in &data.units {
        let mut label = u.unit.clone();
        if u.provides != [u.unit.clone()] {
            let _ = write!(label, "\nprovides: {}", u.provides.join(", "));
        }
        let mut attrs = vec![format!("label={}", quote(&label))];
        let is_target_provider = u.provides.contains(&data.target);
        if u.required {
            attrs.push("style=\"rounded,filled,bold\"".into());
            attrs.push(format!(
                "penwidth={}",
                if is_target_provider { 3 } else { 2 }
            ));
            let fill = match u.state {
                UnitState::Failed => "#ffcdd2",
                s if s.is_active() => "#c8e6c9",
                _ => "#fff9c4",
            };
            attrs.push(format!("fillcolor={}", quote(fill)));
        } else {
            attrs.push("color=\"#9e9e9e\"".into());
            attrs.push("fontcolor=\"#757575\"".into());
        }
        if u.state == UnitState::Failed {
            attrs.push("color=\"#c62828\"".into());
        }
        attrs.push(format!(
            "tooltip={}",
            quote(&format!("{} ({}, {})", u.unit, u.kind.as_str(), u.state))
        ));
        let _ = writeln!(s, "  {} [{}];", quote(&u.unit), attrs.join(", "));
    }
    let mut missing = BTreeSet::new();
    for u in &data.units {
        for e in &u.deps {
            let (to, label) = match &e.provider {
                Some(p) => (p.clone(), (e.target != *p).then(|| e.target.clone())),
                None => {
                    missing.insert(e.target.clone());
                    (missing_id(&e.target), None)
                }
            };
            let mut attrs = vec![format!("style={}", edge_style(e.kind))];
            if !e.kind.orders() {
                attrs.push("arrowhead=empty".into());
            }
            if let Some(l) = label {
                attrs.push(format!("label={}", quote(&l)));
            }
            if e.provider.is_none() {
                attrs.push("color=\"#c62828\"".into());
            }
            attrs.push(format!(
                "tooltip={}",
                quote(&format!("{} {} {}", u.unit, e.kind.as_str(), e.target))
            ));
            let _ = writeln!(
                s,
                "  {} -> {} [{}];",
                quote(&u.unit),
                quote(&to),
                attrs.join(", ")
            );
        }
    }
    for t in &missing {
        let _ = writeln!(
            s,
            "  {} [label={}, shape=box, style=\"dashed\", color=\"#c62828\", fontcolor=\"#c62828\"];",
            quote(&missing_id(t)),
            quote(&format!("{t}\n(no provider)"))
        );
    }
    let _ = writeln!(s, "}}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::tests::boot;

    #[test]
    fn quotes() {
        assert_eq!(quote("a"), "\"a\"");
        assert_eq!(quote("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
    }

    #[test]
    fn graph_of_the_boot() {
        let g = dot(&boot());
        assert!(g.starts_with("digraph flotilla {\n"));
        assert!(g.ends_with("}\n"));
        // Nodes, labelled with what they provide.
        assert!(
            g.contains(
                "  \"db\" [label=\"db\\nprovides: postgres\", style=\"rounded,filled,bold\""
            ),
            "{g}"
        );
        assert!(g.contains("  \"web\" [label=\"web\", style="));
        // Not required: grey.
        assert!(g.contains("  \"old\" [label=\"old\", color=\"#9e9e9e\""));
        // Failed: red.
        assert!(g.contains("fillcolor=\"#ffcdd2\", color=\"#c62828\""));
        // One edge style per kind; labels when the target is not the provider's name.
        assert!(g.contains("  \"web\" -> \"db\" [style=solid, label=\"postgres\""));
        assert!(g.contains("  \"web\" -> \"cache\" [style=dashed, tooltip="));
        assert!(g.contains("  \"web\" -> \"opt\" [style=dotted, tooltip="));
        assert!(g.contains("  \"cache\" -> \"net\" [style=dotted, label=\"network-online\""));
        // A missing target: a red placeholder and a red edge.
        assert!(g.contains("  \"web\" -> \"missing:metrics\" [style=dotted, color=\"#c62828\""));
        assert!(g.contains(
            "  \"missing:metrics\" [label=\"metrics\\n(no provider)\", shape=box, style=\"dashed\", color=\"#c62828\""
        ));
        // The target's provider is the boldest.
        assert!(g.contains(
            "  \"default\" [label=\"default\", style=\"rounded,filled,bold\", penwidth=3"
        ));
    }

    #[test]
    fn placeholders_are_shared() {
        let mut d = boot();
        let extra = d
            .units
            .iter()
            .find(|u| u.unit == "web")
            .unwrap()
            .deps
            .clone();
        d.units
            .iter_mut()
            .find(|u| u.unit == "cache")
            .unwrap()
            .deps
            .extend(extra);
        let g = dot(&d);
        assert_eq!(g.matches("\"missing:metrics\" [label").count(), 1);
        assert_eq!(g.matches("-> \"missing:metrics\"").count(), 2);
    }

    #[test]
    fn balanced_braces_and_quotes() {
        let g = dot(&boot());
        assert_eq!(g.matches('{').count(), g.matches('}').count());
        for line in g.lines() {
            let unescaped = line.replace("\\\\", "").replace("\\\"", "");
            assert_eq!(unescaped.matches('"').count() % 2, 0, "{line}");
        }
    }
}
