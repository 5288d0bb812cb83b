//! What clusterd stores in etcd, and the fleet API v1 entities it serves
//! (typed once in [`flotilla_units::fleet_api`], re-exported here).

use flotilla_units::fleet::UnitOption;
pub use flotilla_units::fleet_api::{
    ApiUnit, ApiUnitState, ClusterState, Machine, MachinePage, StatePage, UnitPage, WireOption,
};
use flotilla_units::protocol::LogLine;
use serde::{Deserialize, Serialize};

/// `units/<unit>`: the unit file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredUnit {
    /// Its name.
    pub name: String,
    /// SHA1 of the canonical text.
    pub hash: String,
    /// The options.
    pub options: Vec<UnitOption>,
}

/// Applies the metadata set through `PATCH /machines` (`metadata/<machine>`:
/// a value sets a key, `null` removes it) over a machine's own.
pub fn merge_metadata(
    metadata: &mut std::collections::BTreeMap<String, String>,
    overrides: &std::collections::BTreeMap<String, Option<String>>,
) {
    for (k, v) in overrides {
        match v {
            Some(v) => metadata.insert(k.clone(), v.clone()),
            None => metadata.remove(k),
        };
    }
}

/// `schedule/<machine>/<unit>`: what the engine asks one agent to do with one unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assignment {
    /// `loaded` or `launched`.
    pub desired: ClusterState,
    /// Hash of `options`.
    pub hash: String,
    /// The unit file.
    pub options: Vec<UnitOption>,
    /// A global unit.
    #[serde(default)]
    pub global: bool,
}

/// `state/<machine>/<unit>`: what an agent reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredState {
    /// The systemd-shaped state.
    #[serde(flatten)]
    pub state: ApiUnitState,
    /// `loaded` or `launched`: what the agent has really done.
    #[serde(rename = "currentState")]
    pub current: ClusterState,
}

/// `logreq/<machine>/<unit>`: the API asks a machine for a unit's recent
/// log lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogRequest {
    /// Chosen by the asker; the answer carries it back.
    pub id: String,
    /// How many of the last lines.
    pub lines: usize,
}

/// An ID for a log request (`LogRequest`, `LogFollow`) that no other
/// asker's is: this process and the moment it asks.
pub fn log_request_id() -> String {
    format!(
        "{:x}-{:x}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    )
}

/// `logs/<machine>/<unit>`: a machine's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogAnswer {
    /// The request's ID.
    pub id: String,
    /// The lines, oldest first.
    #[serde(default)]
    pub lines: Vec<LogLine>,
    /// Why there are none, when the machine could not read them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `logfollow/<machine>/<id>`: the API asks a machine to send a unit's
/// log lines as they come, until the key is gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogFollow {
    /// The unit.
    pub unit: String,
    /// How many of the last lines first.
    pub lines: usize,
}

/// `logtail/<machine>/<id>`: one batch of a followed log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogBatch {
    /// The lines, oldest first.
    #[serde(default)]
    pub lines: Vec<LogLine>,
    /// Why the lines end (the unit is not scheduled there, the init went
    /// away): the last batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
