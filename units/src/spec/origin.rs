//! [`Origin`]: where a unit came from (its file and the positions that
//! cross-unit diagnostics point at), kept apart from the spec so that two
//! specs compare equal whatever file position they were read at.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The stamp of a unit not read from a unit file (built in, transient,
/// YAML, made later from a template): never "changed".
pub const NO_FILES: u32 = 0;
/// Where a unit came from: the file and the positions of what cross-unit
/// checks (duplicate names and targets, cycles, missing targets) point at.
///
/// Every graph node keeps one, so only the entries a unit has take room:
/// one vector of `(list, position)` for the entries of all its lists, in
/// one block (a field per list cost every unit 15 vectors, 360 bytes,
/// mostly empty; a vector per list, a block per list). Its JSON form (in
/// the re-exec snapshot) is a key per list, every list present.
#[derive(Debug, Clone, Eq, Serialize, Deserialize, Default)]
#[serde(from = "OriginWire", into = "OriginWire")]
pub struct Origin {
    /// The file, or a description such as `transient:cluster`.
    pub file: String,
    /// The position of the unit's name (or of the start of the unit).
    pub pos: crate::diag::Pos,
    /// The position of each entry of each list of targets the unit has,
    /// each list's in its order (a list may have fewer positions than
    /// entries when a position is not known; then `pos` is used).
    lists: Vec<(TargetList, crate::diag::Pos)>,
    /// Whether systemd's default dependencies apply to the unit: a
    /// systemd unit file that does not say `DefaultDependencies=no`;
    /// `false` for every other unit (`load/default_deps.rs`).
    pub default_dependencies: bool,
    /// The `NAME.wants/` and `NAME.requires/` entries that name a unit no
    /// file on the path defines (`TargetList::Wants` or `Requires`, and
    /// the name): no edge, as there is nothing to start, but shown among
    /// the unit's dependencies as systemd shows a dependency on a unit not
    /// found (docs/systemd-units.md, "The unit search path"). Kept here,
    /// not in the spec: a link changes nothing that runs. A `ThinVec`, as
    /// most units have none (a word per unit; the memory budget).
    unfound_links: thin_vec::ThinVec<(TargetList, String)>,
    /// `crate::load::files_stamp` of the unit file and drop-ins it was
    /// read from, as the read saw them; `NO_FILES` for a unit not read
    /// from a systemd unit file. Told apart by `==`: a unit nothing holds
    /// whose files were touched is read again when asked for
    /// (`Graph::rereads`), which leaves it stamped as they are now. A
    /// `u32`, in the room the struct has unused after
    /// `default_dependencies`.
    pub files: u32,
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
            && self.unfound_links == other.unfound_links
            && self.files == other.files
            && TargetList::ALL.iter().all(|&l| self.of(l).eq(other.of(l)))
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
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    unfound_links: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "is_no_files")]
    files: u32,
    #[serde(flatten)]
    lists: BTreeMap<String, Vec<crate::diag::Pos>>,
}

impl From<OriginWire> for Origin {
    fn from(w: OriginWire) -> Origin {
        let lists = TargetList::ALL
            .iter()
            .flat_map(|&l| {
                let positions = w.lists.get(l.key()).map_or(&[][..], Vec::as_slice);
                positions.iter().map(move |&p| (l, p))
            })
            .collect();
        Origin {
            file: w.file,
            pos: w.pos,
            lists,
            default_dependencies: w.default_dependencies,
            unfound_links: (w.unfound_links.into_iter())
                .filter_map(|(k, n)| Some((TargetList::of_key(&k)?, n)))
                .collect(),
            files: w.files,
        }
    }
}

impl From<Origin> for OriginWire {
    fn from(o: Origin) -> OriginWire {
        // Every list, empty or not: an init of before this form reads
        // some of them without a default.
        let lists = TargetList::ALL
            .iter()
            .map(|&l| (l.key().to_string(), o.positions(l)))
            .collect();
        let unfound_links = (o.unfound_links().iter())
            .map(|(l, n)| (l.key().to_string(), n.clone()))
            .collect();
        OriginWire {
            file: o.file,
            pos: o.pos,
            default_dependencies: o.default_dependencies,
            unfound_links,
            files: o.files,
            lists,
        }
    }
}

fn is_no_files(files: &u32) -> bool {
    *files == NO_FILES
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
    /// `on-success`.
    OnSuccess,
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
    /// `stop-propagated-from`.
    StopPropagatedFrom,
    /// `propagates-stop-to`.
    PropagatesStopTo,
}

impl TargetList {
    /// Every list, in the order of its JSON keys.
    pub const ALL: [TargetList; 21] = [
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
        TargetList::OnSuccess,
        TargetList::Sockets,
        TargetList::Requisite,
        TargetList::PartOf,
        TargetList::Upholds,
        TargetList::ReloadPropagatedFrom,
        TargetList::PropagatesReloadTo,
        TargetList::StopPropagatedFrom,
        TargetList::PropagatesStopTo,
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
            TargetList::OnSuccess => "on_success",
            TargetList::Sockets => "sockets",
            TargetList::Requisite => "requisite",
            TargetList::PartOf => "part_of",
            TargetList::Upholds => "upholds",
            TargetList::ReloadPropagatedFrom => "reload_propagated_from",
            TargetList::PropagatesReloadTo => "propagates_reload_to",
            TargetList::StopPropagatedFrom => "stop_propagated_from",
            TargetList::PropagatesStopTo => "propagates_stop_to",
        }
    }
}

impl TargetList {
    /// The list whose [`TargetList::key`] is `key`.
    pub fn of_key(key: &str) -> Option<TargetList> {
        TargetList::ALL.into_iter().find(|l| l.key() == key)
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
        for (l, p) in self.lists.iter_mut() {
            if lists.contains(l) && p.line > limit {
                *p = own;
            }
        }
    }

    /// The `NAME.wants/` and `NAME.requires/` links to units not found.
    pub fn unfound_links(&self) -> &[(TargetList, String)] {
        &self.unfound_links
    }

    /// The links to units not found are `links`.
    pub fn set_unfound_links(&mut self, links: Vec<(TargetList, String)>) {
        self.unfound_links = links.into();
    }

    /// The positions of the entries of `list`, in order.
    pub fn positions(&self, list: TargetList) -> Vec<crate::diag::Pos> {
        self.of(list).collect()
    }

    /// The position of entry `i` of `list`, if known.
    pub fn position(&self, list: TargetList, i: usize) -> Option<crate::diag::Pos> {
        self.of(list).nth(i)
    }

    fn of(&self, list: TargetList) -> impl Iterator<Item = crate::diag::Pos> + '_ {
        self.lists
            .iter()
            .filter(move |(l, _)| *l == list)
            .map(|&(_, p)| p)
    }

    /// The positions of the entries of `list` are `positions`.
    pub fn set_positions(
        &mut self,
        list: TargetList,
        positions: impl IntoIterator<Item = crate::diag::Pos>,
    ) {
        self.lists.retain(|(l, _)| *l != list);
        self.lists.extend(positions.into_iter().map(|p| (list, p)));
    }

    /// A position for the next entry of `list`.
    pub fn push_position(&mut self, list: TargetList, pos: crate::diag::Pos) {
        self.lists.push((list, pos));
    }

    /// `list` has `len` positions: the last ones dropped, or `at` added.
    pub fn resize_positions(&mut self, list: TargetList, len: usize, at: crate::diag::Pos) {
        let mut kept = 0;
        self.lists.retain(|(l, _)| {
            if *l != list {
                return true;
            }
            kept += 1;
            kept <= len
        });
        for _ in kept..len {
            self.lists.push((list, at));
        }
    }

    /// Removes the position of entry `i` of `list`, returning it.
    pub fn remove_position(&mut self, list: TargetList, i: usize) -> Option<crate::diag::Pos> {
        let at = (self.lists.iter().enumerate())
            .filter(|(_, (l, _))| *l == list)
            .nth(i)?
            .0;
        Some(self.lists.remove(at).1)
    }

    /// The position of each `provides` entry.
    pub fn provides_pos(&self) -> Vec<crate::diag::Pos> {
        self.positions(TargetList::Provides)
    }

    /// The position of each `depends-on` entry.
    pub fn depends_on_pos(&self) -> Vec<crate::diag::Pos> {
        self.positions(TargetList::DependsOn)
    }

    /// The position of each `depends-ms` entry.
    pub fn depends_ms_pos(&self) -> Vec<crate::diag::Pos> {
        self.positions(TargetList::DependsMs)
    }

    /// The position of each `waits-for` entry.
    pub fn waits_for_pos(&self) -> Vec<crate::diag::Pos> {
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
        o.push_position(TargetList::DependsOn, Pos::new(3, 13));
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
        p.set_positions(TargetList::Provides, []);
        p.push_position(TargetList::DependsOn, Pos::new(3, 13));
        assert_eq!(p, o);
        // A link to a unit not found is kept across the JSON form (the
        // loader's output, the re-exec snapshot), and tells origins apart.
        p.set_unfound_links(vec![(TargetList::Requires, "gone.service".into())]);
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["unfound_links"][0][0], "requires");
        assert_eq!(serde_json::from_value::<Origin>(json).unwrap(), p);
        assert_ne!(p, o);
        // The stamp of its files (the re-exec snapshot keeps it), absent
        // for a unit of none; two stamps are two origins.
        assert!(serde_json::to_value(&o).unwrap().get("files").is_none());
        let mut q = o.clone();
        q.files = 7;
        let json = serde_json::to_value(&q).unwrap();
        assert_eq!(json["files"], 7);
        assert_eq!(serde_json::from_value::<Origin>(json).unwrap(), q);
        assert_ne!(q, o);
    }

    #[test]
    fn each_list_keeps_its_order_whatever_is_set_around_it() {
        let (a, b, c, own) = (
            Pos::new(2, 1),
            Pos::new(3, 1),
            Pos::new(4, 1),
            Pos::new(1, 1),
        );
        let mut o = Origin::at("/u/a.service", own);
        o.push_position(TargetList::After, a);
        o.push_position(TargetList::Wants, c);
        o.push_position(TargetList::After, b);
        assert_eq!(o.positions(TargetList::After), [a, b]);
        assert_eq!(o.position(TargetList::After, 1), Some(b));
        assert_eq!(o.position(TargetList::After, 2), None);
        // Longer: the unit's own position added; shorter: the last go.
        o.resize_positions(TargetList::After, 3, own);
        assert_eq!(o.positions(TargetList::After), [a, b, own]);
        o.resize_positions(TargetList::After, 1, own);
        assert_eq!(o.positions(TargetList::After), [a]);
        o.push_position(TargetList::After, b);
        assert_eq!(o.remove_position(TargetList::After, 0), Some(a));
        assert_eq!(o.remove_position(TargetList::After, 5), None);
        assert_eq!(o.positions(TargetList::After), [b]);
        o.set_positions(TargetList::Wants, [a, b]);
        assert_eq!(o.positions(TargetList::Wants), [a, b]);
        assert_eq!(o.positions(TargetList::After), [b]);
        // One block for every list's entries.
        assert_eq!(o.lists.len(), 3);
    }
}
