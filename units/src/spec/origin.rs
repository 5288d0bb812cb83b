//! [`Origin`]: where a unit came from (its file and the positions that
//! cross-unit diagnostics point at), kept apart from the spec so that two
//! specs compare equal whatever file position they were read at.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
/// Where a unit came from: the file and the positions of what cross-unit
/// checks (duplicate names and targets, cycles, missing targets) point at.
///
/// Every graph node keeps one, so only the lists a unit has take room:
/// one vector of `(list, positions)` rather than a field per list (which
/// cost every unit 15 vectors, 360 bytes, mostly empty). Its JSON form (in
/// the re-exec snapshot) is unchanged: a key per list, every list present.
#[derive(Debug, Clone, Eq, Serialize, Deserialize, Default)]
#[serde(from = "OriginWire", into = "OriginWire")]
pub struct Origin {
    /// The file, or a description such as `transient:cluster`.
    pub file: String,
    /// The position of the unit's name (or of the start of the unit).
    pub pos: crate::diag::Pos,
    /// The position of each entry of each list of targets the unit has (a
    /// list may be shorter than its entries when a position is not known;
    /// then `pos` is used).
    lists: Vec<(TargetList, Vec<crate::diag::Pos>)>,
    /// Whether systemd's default dependencies apply to the unit: a
    /// systemd unit file that does not say `DefaultDependencies=no`;
    /// `false` for every other unit (`load/default_deps.rs`).
    pub default_dependencies: bool,
}

impl Origin {
    /// Whether the unit was read from a YAML file.
    pub fn is_yaml(&self) -> bool {
        self.file.ends_with(".yaml") || self.file.ends_with(".yml")
    }
}

/// The same file and positions, whatever order the lists were set in.
impl PartialEq for Origin {
    fn eq(&self, other: &Origin) -> bool {
        self.file == other.file
            && self.pos == other.pos
            && self.default_dependencies == other.default_dependencies
            && TargetList::ALL
                .iter()
                .all(|&l| self.positions(l) == other.positions(l))
    }
}

/// [`Origin`] as JSON: the file, the position, and a key per list.
#[derive(Serialize, Deserialize)]
struct OriginWire {
    file: String,
    #[serde(default)]
    pos: crate::diag::Pos,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    default_dependencies: bool,
    #[serde(flatten)]
    lists: BTreeMap<String, Vec<crate::diag::Pos>>,
}

impl From<OriginWire> for Origin {
    fn from(w: OriginWire) -> Origin {
        let lists = TargetList::ALL
            .iter()
            .filter_map(|&l| {
                w.lists
                    .get(l.key())
                    .filter(|p| !p.is_empty())
                    .map(|p| (l, p.clone()))
            })
            .collect();
        Origin {
            file: w.file,
            pos: w.pos,
            lists,
            default_dependencies: w.default_dependencies,
        }
    }
}

impl From<Origin> for OriginWire {
    fn from(o: Origin) -> OriginWire {
        // Every list, empty or not: an init of before this form reads
        // some of them without a default.
        let lists = TargetList::ALL
            .iter()
            .map(|&l| (l.key().to_string(), o.positions(l).to_vec()))
            .collect();
        OriginWire {
            file: o.file,
            pos: o.pos,
            default_dependencies: o.default_dependencies,
            lists,
        }
    }
}

/// The lists of target names of a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TargetList {
    /// `provides`.
    Provides,
    /// `depends-on`.
    DependsOn,
    /// `depends-ms`.
    DependsMs,
    /// `waits-for`.
    WaitsFor,
    /// `wants`.
    Wants,
    /// `requires`.
    Requires,
    /// `after`.
    After,
    /// `before`.
    Before,
    /// `conflicts`.
    Conflicts,
    /// `triggers`.
    Triggers,
    /// `wanted-by`.
    WantedBy,
    /// `on-failure`.
    OnFailure,
    /// `sockets`.
    Sockets,
    /// `requisite`.
    Requisite,
    /// `part-of`.
    PartOf,
    /// `upholds`.
    Upholds,
    /// `reload-propagated-from`.
    ReloadPropagatedFrom,
    /// `propagates-reload-to`.
    PropagatesReloadTo,
}

impl TargetList {
    /// Every list, in the order of its JSON keys.
    pub const ALL: [TargetList; 18] = [
        TargetList::Provides,
        TargetList::DependsOn,
        TargetList::DependsMs,
        TargetList::WaitsFor,
        TargetList::Wants,
        TargetList::Requires,
        TargetList::After,
        TargetList::Before,
        TargetList::Conflicts,
        TargetList::Triggers,
        TargetList::WantedBy,
        TargetList::OnFailure,
        TargetList::Sockets,
        TargetList::Requisite,
        TargetList::PartOf,
        TargetList::Upholds,
        TargetList::ReloadPropagatedFrom,
        TargetList::PropagatesReloadTo,
    ];

    /// Its key in [`Origin`]'s JSON form.
    pub fn key(self) -> &'static str {
        match self {
            TargetList::Provides => "provides",
            TargetList::DependsOn => "depends_on",
            TargetList::DependsMs => "depends_ms",
            TargetList::WaitsFor => "waits_for",
            TargetList::Wants => "wants",
            TargetList::Requires => "requires",
            TargetList::After => "after",
            TargetList::Before => "before",
            TargetList::Conflicts => "conflicts",
            TargetList::Triggers => "triggers",
            TargetList::WantedBy => "wanted_by",
            TargetList::OnFailure => "on_failure",
            TargetList::Sockets => "sockets",
            TargetList::Requisite => "requisite",
            TargetList::PartOf => "part_of",
            TargetList::Upholds => "upholds",
            TargetList::ReloadPropagatedFrom => "reload_propagated_from",
            TargetList::PropagatesReloadTo => "propagates_reload_to",
        }
    }
}

impl Origin {
    /// An origin with no positions, e.g. for transient units.
    pub fn unplaced(file: impl Into<String>) -> Origin {
        Origin {
            file: file.into(),
            ..Origin::default()
        }
    }

    /// An origin at `pos` in `file`, with no positions of entries yet.
    pub fn at(file: impl Into<String>, pos: crate::diag::Pos) -> Origin {
        Origin {
            file: file.into(),
            pos,
            ..Origin::default()
        }
    }

    /// Positions at or past line `limit` (those of drop-ins, read as lines
    /// after the unit file's) become the unit's own: the origin names one
    /// file.
    pub fn keep_positions_below(&mut self, limit: u32) {
        use TargetList::*;
        let own = self.pos;
        let lists = [
            Provides, DependsOn, DependsMs, WaitsFor, Wants, Requires, Requisite, PartOf, Upholds,
        ];
        for (_, positions) in self.lists.iter_mut().filter(|(l, _)| lists.contains(l)) {
            for p in positions.iter_mut().filter(|p| p.line > limit) {
                *p = own;
            }
        }
    }

    /// The positions of the entries of `list`, in order.
    pub fn positions(&self, list: TargetList) -> &[crate::diag::Pos] {
        self.lists
            .iter()
            .find(|(l, _)| *l == list)
            .map_or(&[], |(_, p)| p.as_slice())
    }

    /// The positions of the entries of `list`, to set.
    pub fn positions_mut(&mut self, list: TargetList) -> &mut Vec<crate::diag::Pos> {
        let at = match self.lists.iter().position(|(l, _)| *l == list) {
            Some(at) => at,
            None => {
                self.lists.push((list, Vec::new()));
                self.lists.len() - 1
            }
        };
        &mut self.lists[at].1
    }

    /// The position of each `provides` entry.
    pub fn provides_pos(&self) -> &[crate::diag::Pos] {
        self.positions(TargetList::Provides)
    }

    /// The position of each `depends-on` entry.
    pub fn depends_on_pos(&self) -> &[crate::diag::Pos] {
        self.positions(TargetList::DependsOn)
    }

    /// The position of each `depends-ms` entry.
    pub fn depends_ms_pos(&self) -> &[crate::diag::Pos] {
        self.positions(TargetList::DependsMs)
    }

    /// The position of each `waits-for` entry.
    pub fn waits_for_pos(&self) -> &[crate::diag::Pos] {
        self.positions(TargetList::WaitsFor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Pos;

    #[test]
    fn only_the_lists_a_unit_has_take_room_and_the_json_keeps_every_key() {
        let mut o = Origin::at("/u/a.yaml", Pos::new(1, 1));
        o.positions_mut(TargetList::DependsOn).push(Pos::new(3, 13));
        assert_eq!(o.lists.len(), 1);
        assert_eq!(o.depends_on_pos(), [Pos::new(3, 13)]);
        assert!(o.provides_pos().is_empty());
        let json = serde_json::to_value(&o).unwrap();
        for l in TargetList::ALL {
            assert!(json.get(l.key()).is_some(), "{} in {json}", l.key());
        }
        let back: Origin = serde_json::from_value(json).unwrap();
        assert_eq!(back, o);
        // The order the lists were set in does not matter.
        let mut p = Origin::at("/u/a.yaml", Pos::new(1, 1));
        p.positions_mut(TargetList::Provides);
        p.positions_mut(TargetList::DependsOn).push(Pos::new(3, 13));
        assert_eq!(p, o);
    }
}
