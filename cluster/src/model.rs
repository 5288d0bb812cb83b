//! The entities: fleet API v1 JSON shapes and what clusterd stores in etcd.
//!
//! API field names and their order are fleet's (Go's JSON encoder wrote them
//! in struct order, which was alphabetical); empty fields are omitted.

use flotilla_units::systemd::UnitOption;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A unit's cluster-level state (seed 000).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusterState {
    /// Known, not scheduled.
    Inactive,
    /// Scheduled and in the machine's graph, not started.
    Loaded,
    /// Scheduled and started.
    Launched,
}

impl ClusterState {
    /// Parses `inactive`, `loaded` or `launched`.
    pub fn parse(s: &str) -> Option<ClusterState> {
        match s {
            "inactive" => Some(ClusterState::Inactive),
            "loaded" => Some(ClusterState::Loaded),
            "launched" => Some(ClusterState::Launched),
            _ => None,
        }
    }

    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ClusterState::Inactive => "inactive",
            ClusterState::Loaded => "loaded",
            ClusterState::Launched => "launched",
        }
    }
}

/// A unit option as fleet's API writes it (keys in fleet's order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct WireOption {
    /// Option name.
    pub name: String,
    /// Section.
    pub section: String,
    /// Value.
    pub value: String,
}

impl From<&UnitOption> for WireOption {
    fn from(o: &UnitOption) -> Self {
        WireOption {
            name: o.name.clone(),
            section: o.section.clone(),
            value: o.value.clone(),
        }
    }
}

/// The API's Unit entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ApiUnit {
    /// What the agents really did.
    #[serde(
        rename = "currentState",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub current_state: Option<String>,
    /// What was asked.
    #[serde(
        rename = "desiredState",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub desired_state: Option<String>,
    /// Where it is scheduled.
    #[serde(rename = "machineID", default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<String>,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// Its unit file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<WireOption>,
}

/// The API's UnitState entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ApiUnitState {
    /// Hash of the unit file the agent runs.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hash: String,
    /// The reporting machine.
    #[serde(
        rename = "machineID",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub machine_id: String,
    /// The unit.
    #[serde(default)]
    pub name: String,
    /// systemd's ACTIVE.
    #[serde(
        rename = "systemdActiveState",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub active_state: String,
    /// systemd's LOAD.
    #[serde(
        rename = "systemdLoadState",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub load_state: String,
    /// systemd's SUB.
    #[serde(
        rename = "systemdSubState",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub sub_state: String,
}

/// The API's Machine entity; also the value of a machine's presence key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Machine {
    /// Machine ID.
    pub id: String,
    /// Metadata.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    /// Primary IP.
    #[serde(
        rename = "primaryIP",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub primary_ip: String,
}

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

/// A page of units.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct UnitPage {
    /// The units.
    pub units: Vec<ApiUnit>,
    /// Present while more remain.
    #[serde(
        rename = "nextPageToken",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub next_page_token: Option<String>,
}

/// A page of unit states.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct StatePage {
    /// The states.
    pub states: Vec<ApiUnitState>,
    /// Present while more remain.
    #[serde(
        rename = "nextPageToken",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub next_page_token: Option<String>,
}

/// A page of machines.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct MachinePage {
    /// The machines.
    pub machines: Vec<Machine>,
    /// Present while more remain.
    #[serde(
        rename = "nextPageToken",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub next_page_token: Option<String>,
}
