//! Masked units in the graph ([`crate::mask`]): a masked unit keeps its
//! place in the arena (it is listed, as masked) but provides nothing and
//! depends on nothing, so what depends on its targets finds them missing.
//! A masked name that no unit has gets a made-up `virtual` node of its
//! own, so that it is listed too. The graph remembers which missing
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
            spec: Arc::new(UnitSpec::new(name, UnitType::Virtual)),
            origin: Origin::unplaced(source.path().display().to_string()),
            ghost: false,
            masked: true,
            synthetic: true,
        })
        .collect()
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
