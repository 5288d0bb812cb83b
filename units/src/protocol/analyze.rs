//! What `initctl analyze` gets: the dependency edges, each unit's
//! timing, and a unit's declared sandbox for `analyze security`.

use crate::context::policy::NotApplied;
use crate::state::DepKind;
use crate::state::UnitState;
use serde::{Deserialize, Serialize};

/// One dependency edge, for `analyze` and `dot`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edge {
    /// The kind of dependency.
    pub kind: DepKind,
    /// The target depended on.
    pub target: String,
    /// The unit providing it, if any.
    pub provider: Option<String>,
}

/// Timing and graph data of one unit, for `initctl analyze`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitTiming {
    /// The unit's name.
    pub unit: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: crate::spec::UnitType,
    /// Its state now.
    pub state: UnitState,
    /// The targets it provides.
    pub provides: Vec<String>,
    /// Its dependencies.
    pub deps: Vec<Edge>,
    /// Whether the current target requires it.
    pub required: bool,
    /// When its last start began (became `starting`), ms since the init started.
    pub start_ms: Option<u64>,
    /// When it last became active, ms since the init started.
    pub active_ms: Option<u64>,
    /// When it last failed or stopped, ms since the init started.
    pub end_ms: Option<u64>,
}

/// `initctl analyze` data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalyzeData {
    /// The current target.
    pub target: String,
    /// When the target's set was last switched to (ms since the init started).
    pub target_set_ms: u64,
    /// When the target last became active, if it did.
    pub target_active_ms: Option<u64>,
    /// The init's present, on the same clock (for spans still going on).
    #[serde(default)]
    pub now_ms: u64,
    /// Every unit.
    pub units: Vec<UnitTiming>,
}

/// One unit as `initctl analyze security` needs it ([`super::Reply::Security`]):
/// what it declared, and the process to read the achieved state from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecurityData {
    /// The unit's name.
    pub unit: String,
    /// Its main process, if it has one now.
    pub pid: Option<i32>,
    /// `User=`, if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Its declared service context.
    pub context: crate::context::ServiceContext,
    /// What its start did not apply ([`super::UnitStatus::not_applied`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_applied: Vec<NotApplied>,
}
