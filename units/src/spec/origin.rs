//! [`Origin`]: where a unit came from (its file and the positions that
//! cross-unit diagnostics point at), kept apart from the spec so that two
//! specs compare equal whatever file position they were read at.

use serde::{Deserialize, Serialize};
/// Where a unit came from: the file and the positions of what cross-unit
/// checks (duplicate names and targets, cycles, missing targets) point at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Origin {
    /// The file, or a description such as `transient:cluster`.
    pub file: String,
    /// The position of the unit's name (or of the start of the unit).
    pub pos: crate::diag::Pos,
    /// The position of each entry of each list of targets (a list may be
    /// shorter than its entries when a position is not known; then `pos`
    /// is used).
    #[serde(default)]
    provides: Vec<crate::diag::Pos>,
    #[serde(default)]
    depends_on: Vec<crate::diag::Pos>,
    #[serde(default)]
    depends_ms: Vec<crate::diag::Pos>,
    #[serde(default)]
    waits_for: Vec<crate::diag::Pos>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    wants: Vec<crate::diag::Pos>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    requires: Vec<crate::diag::Pos>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    after: Vec<crate::diag::Pos>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    before: Vec<crate::diag::Pos>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    conflicts: Vec<crate::diag::Pos>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    triggers: Vec<crate::diag::Pos>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    wanted_by: Vec<crate::diag::Pos>,
    on_failure: Vec<crate::diag::Pos>,
    sockets: Vec<crate::diag::Pos>,
    /// Whether systemd's default dependencies apply to the unit: a
    /// systemd unit file that does not say `DefaultDependencies=no`;
    /// `false` for every other unit (`load/default_deps.rs`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub default_dependencies: bool,
    requisite: Vec<crate::diag::Pos>,
    part_of: Vec<crate::diag::Pos>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    upholds: Vec<crate::diag::Pos>,
}

/// The lists of target names of a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
        let own = self.pos;
        for list in [
            &mut self.provides,
            &mut self.depends_on,
            &mut self.depends_ms,
            &mut self.waits_for,
            &mut self.wants,
            &mut self.requires,
            &mut self.requisite,
            &mut self.part_of,
            &mut self.upholds,
        ] {
            for p in list.iter_mut().filter(|p| p.line > limit) {
                *p = own;
            }
        }
    }

    /// The positions of the entries of `list`, in order.
    pub fn positions(&self, list: TargetList) -> &[crate::diag::Pos] {
        match list {
            TargetList::Provides => &self.provides,
            TargetList::DependsOn => &self.depends_on,
            TargetList::DependsMs => &self.depends_ms,
            TargetList::WaitsFor => &self.waits_for,
            TargetList::Wants => &self.wants,
            TargetList::Requires => &self.requires,
            TargetList::After => &self.after,
            TargetList::Before => &self.before,
            TargetList::Conflicts => &self.conflicts,
            TargetList::Triggers => &self.triggers,
            TargetList::WantedBy => &self.wanted_by,
            TargetList::OnFailure => &self.on_failure,
            TargetList::Sockets => &self.sockets,
            TargetList::Requisite => &self.requisite,
            TargetList::PartOf => &self.part_of,
            TargetList::Upholds => &self.upholds,
        }
    }

    /// The positions of the entries of `list`, to set.
    pub fn positions_mut(&mut self, list: TargetList) -> &mut Vec<crate::diag::Pos> {
        match list {
            TargetList::Provides => &mut self.provides,
            TargetList::DependsOn => &mut self.depends_on,
            TargetList::DependsMs => &mut self.depends_ms,
            TargetList::WaitsFor => &mut self.waits_for,
            TargetList::Wants => &mut self.wants,
            TargetList::Requires => &mut self.requires,
            TargetList::After => &mut self.after,
            TargetList::Before => &mut self.before,
            TargetList::Conflicts => &mut self.conflicts,
            TargetList::Triggers => &mut self.triggers,
            TargetList::WantedBy => &mut self.wanted_by,
            TargetList::OnFailure => &mut self.on_failure,
            TargetList::Sockets => &mut self.sockets,
            TargetList::Requisite => &mut self.requisite,
            TargetList::PartOf => &mut self.part_of,
            TargetList::Upholds => &mut self.upholds,
        }
    }

    /// The position of each `provides` entry.
    pub fn provides_pos(&self) -> &[crate::diag::Pos] {
        &self.provides
    }

    /// The position of each `depends-on` entry.
    pub fn depends_on_pos(&self) -> &[crate::diag::Pos] {
        &self.depends_on
    }

    /// The position of each `depends-ms` entry.
    pub fn depends_ms_pos(&self) -> &[crate::diag::Pos] {
        &self.depends_ms
    }

    /// The position of each `waits-for` entry.
    pub fn waits_for_pos(&self) -> &[crate::diag::Pos] {
        &self.waits_for
    }
}
