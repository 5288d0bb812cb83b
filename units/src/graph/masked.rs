//! Masked units in the graph ([`crate::mask`]): a masked unit keeps its
//! place in the arena (it is listed, as masked) but provides nothing and
//! depends on nothing, so what depends on its targets finds them missing.
//! A masked name that no unit has gets a made-up node of its own, so
//! that it is listed too: of the type its systemd suffix names (a masked
//! `my.timer` is a timer, which `systemctl list-timers` reads as one, as
//! systemd serves a masked unit with its type's interface), `virtual`
//! for a name without one. The graph remembers which missing
//! targets a masked unit would provide, for `blocked_by` and warnings.

use super::{Graph, Node, Shape, UnitId};
use crate::spec::{Origin, UnitSpec, UnitType};
use std::collections::HashMap;
use std::sync::Arc;

/// `node`, marked masked when the shape masks its name.
pub(super) fn mark(mut node: Node, shape: &Shape) -> Node {
    node.masked = shape.masks.contains(&node.spec.name);
    node
}

/// A node for each masked name that no unit has (`exists` says which do).
pub(super) fn unit_less(shape: &Shape, exists: impl Fn(&str) -> bool) -> Vec<Node> {
    shape
        .masks
        .iter()
        .filter(|(name, _)| !exists(name))
        .map(|(name, source)| Node {
            spec: Arc::new(UnitSpec::new(name, type_of_name(name))),
            origin: Origin::unplaced(source.path().display().to_string()),
            ghost: false,
            masked: true,
            synthetic: true,
        })
        .collect()
}

/// The type of a masked name that no unit has: its systemd suffix's.
fn type_of_name(name: &str) -> UnitType {
    name.rsplit_once('.')
        .and_then(|(_, suffix)| UnitType::of_systemd_suffix(suffix))
        .unwrap_or(UnitType::Virtual)
}

/// The targets that masked units (and masked names) would provide and
/// that no other unit provides (`providers`), each with the first masked
/// unit, in name order.
pub(super) fn targets_of(
    units: &[Node],
    providers: &HashMap<&str, UnitId>,
) -> HashMap<Box<str>, UnitId> {
    let mut out = HashMap::new();
    for (i, n) in units.iter().enumerate() {
        if !n.masked {
            continue;
        }
        for t in &n.spec.provides {
            if !providers.contains_key(t.as_str()) {
                out.entry(t.as_str().into()).or_insert(UnitId(i as u32));
            }
        }
    }
    out
}

impl Graph {
    /// The masked unit that would provide `target`, when no other unit
    /// provides it.
    pub fn masked_provider(&self, target: &str) -> Option<UnitId> {
        self.masked_targets.get(target).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mask::{MaskSource, Masks};

    #[test]
    fn a_masked_name_without_a_unit_has_its_suffixs_type() {
        let mut masks = Masks::new();
        for n in [
            "my.timer",
            "s.socket",
            "p.path",
            "web.service",
            "t.target",
            "plain",
        ] {
            masks.insert(
                n,
                MaskSource::DevNull(format!("/etc/systemd/system/{n}").into()),
            );
        }
        let shape = Shape {
            masks,
            ..Shape::default()
        };
        let nodes = unit_less(&shape, |n| n == "p.path");
        let got: Vec<(&str, UnitType)> = nodes
            .iter()
            .map(|n| (n.spec.name.as_str(), n.spec.kind))
            .collect();
        assert_eq!(
            got,
            [
                ("my.timer", UnitType::Timer),
                ("plain", UnitType::Virtual),
                ("s.socket", UnitType::Socket),
                ("t.target", UnitType::Virtual),
                (
                    "web.service",
                    UnitType::of_systemd_suffix("service").unwrap_or_default()
                ),
            ]
        );
        assert!(nodes.iter().all(|n| n.masked && n.synthetic));
    }
}
