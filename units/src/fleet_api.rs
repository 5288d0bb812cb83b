//! The JSON shapes of fleet's API v1, typed once for the server (`clusterd`)
//! and its clients (`initctl cluster`, the tests).
//!
//! Field names and their order are fleet's (Go's JSON encoder wrote them in
//! struct order, which was alphabetical); empty fields are omitted, and
//! unknown fields are ignored when reading. `docs/cluster.md` describes the
//! API; docs/fleet-compat.md what fleet did.

use crate::fleet::UnitOption;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A unit's cluster-level state (docs/contract.md §7).
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

/// A unit option as fleet's API writes it (keys in fleet's order:
/// `name`, `section`, `value`).
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

impl From<&WireOption> for UnitOption {
    fn from(o: &WireOption) -> Self {
        UnitOption {
            section: o.section.clone(),
            name: o.name.clone(),
            value: o.value.clone(),
        }
    }
}

/// The Unit entity (`GET /units`, `GET /units/<name>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ApiUnit {
    /// What the agents really did (absent for global units).
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
    /// Where it is scheduled (absent for global and unscheduled units).
    #[serde(rename = "machineID", default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<String>,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// Its unit file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<WireOption>,
    /// Why a unit that should run is not scheduled (anywhere, or, for a
    /// global unit, on some machines): flotilla's addition.
    #[serde(
        rename = "unscheduledReason",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub unscheduled_reason: Option<String>,
}

impl ApiUnit {
    /// The options as the unit-file model holds them.
    pub fn unit_options(&self) -> Vec<UnitOption> {
        self.options.iter().map(UnitOption::from).collect()
    }

    /// Whether `[X-Fleet] Global=` is true (the last value wins).
    pub fn is_global(&self) -> bool {
        let mut global = false;
        for o in self
            .options
            .iter()
            .filter(|o| o.section == "X-Fleet" && o.name == "Global")
        {
            global = crate::fleet::parse_bool(&o.value) == Some(true);
        }
        global
    }
}

/// The UnitState entity (`GET /state`, `GET /state/<name>`).
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

/// An amount of a machine's resources, or what a unit reserves of them
/// (`[X-Fleet] MemoryReservation=`, `CoresReservation=`): memory in MiB,
/// cores in hundredths of a core (150 is 1.5 cores), as fleet's unit keys
/// count them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct Resources {
    /// Hundredths of a core.
    #[serde(default)]
    pub cores: u64,
    /// MiB.
    #[serde(default)]
    pub memory: u64,
}

impl Resources {
    /// Nothing.
    pub const ZERO: Resources = Resources {
        cores: 0,
        memory: 0,
    };

    /// Whether both are zero.
    pub fn is_zero(&self) -> bool {
        *self == Resources::ZERO
    }

    /// Both added (saturating).
    pub fn plus(self, o: Resources) -> Resources {
        Resources {
            cores: self.cores.saturating_add(o.cores),
            memory: self.memory.saturating_add(o.memory),
        }
    }

    /// Both taken away (down to zero).
    pub fn minus(self, o: Resources) -> Resources {
        Resources {
            cores: self.cores.saturating_sub(o.cores),
            memory: self.memory.saturating_sub(o.memory),
        }
    }

    /// Whether `o` is at most this in both.
    pub fn covers(&self, o: &Resources) -> bool {
        o.cores <= self.cores && o.memory <= self.memory
    }
}

/// The Machine entity (`GET /machines`); also the value of a machine's
/// presence key in etcd. The resources are flotilla's addition (fleet's
/// client ignores fields it does not know); fields in alphabetical order,
/// as fleet's encoder wrote them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Machine {
    /// What is left for units: `totalResources` less `reservedResources`.
    #[serde(
        rename = "freeResources",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub free_resources: Option<Resources>,
    /// Machine ID.
    #[serde(default)]
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
    /// The sum of the reservations of the units scheduled there.
    #[serde(
        rename = "reservedResources",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub reserved_resources: Option<Resources>,
    /// What units may reserve there: the machine's memory and cores (or
    /// clusterd's `--capacity`) less its `--reserve` for the system.
    #[serde(
        rename = "totalResources",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub total_resources: Option<Resources>,
}

/// A page of units.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct UnitPage {
    /// The units, by name.
    #[serde(default)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct StatePage {
    /// The states, by unit then machine.
    #[serde(default)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct MachinePage {
    /// The machines, by ID.
    #[serde(default)]
    pub machines: Vec<Machine>,
    /// Present while more remain.
    #[serde(
        rename = "nextPageToken",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub next_page_token: Option<String>,
}

/// The body of `PUT /units/<name>`: a partial Unit entity. `desiredState`
/// is any string on the wire (the server answers 400 for anything but
/// `inactive`, `loaded` and `launched`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PutBody {
    /// Must equal the URL's name when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The desired state.
    #[serde(
        rename = "desiredState",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub desired_state: Option<String>,
    /// The unit file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<WireOption>>,
}

/// One operation of `PATCH /machines` (a JSON array of them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetadataOp {
    /// `add`, `remove` or `replace`.
    pub op: String,
    /// `/<machineID>/metadata/<key>`.
    pub path: String,
    /// `{"value": "<v>"}` (nested, as fleet's server read it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<BTreeMap<String, String>>,
}

/// The error entity: `{"error":{"code":N,"message":"..."}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// The inside of [`ErrorBody`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDetail {
    /// The HTTP status code.
    pub code: u16,
    /// For people.
    pub message: String,
}

impl ErrorBody {
    /// An error entity.
    pub fn new(code: u16, message: impl Into<String>) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code,
                message: message.into(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_shapes_are_fleets() {
        let u = ApiUnit {
            current_state: Some("launched".into()),
            desired_state: Some("launched".into()),
            machine_id: Some("m1".into()),
            name: "a.service".into(),
            options: vec![WireOption {
                name: "ExecStart".into(),
                section: "Service".into(),
                value: "/bin/true".into(),
            }],
            unscheduled_reason: None,
        };
        assert_eq!(
            serde_json::to_string(&u).unwrap(),
            r#"{"currentState":"launched","desiredState":"launched","machineID":"m1","name":"a.service","options":[{"name":"ExecStart","section":"Service","value":"/bin/true"}]}"#
        );
        let empty = ApiUnit {
            name: "g.service".into(),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&empty).unwrap(),
            r#"{"name":"g.service"}"#
        );
        let m = Machine {
            id: "m1".into(),
            ..Default::default()
        };
        assert_eq!(serde_json::to_string(&m).unwrap(), r#"{"id":"m1"}"#);
        let r = |cores, memory| Some(Resources { cores, memory });
        let m = Machine {
            id: "m1".into(),
            total_resources: r(400, 2048),
            reserved_resources: r(150, 512),
            free_resources: r(250, 1536),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"freeResources":{"cores":250,"memory":1536},"id":"m1","reservedResources":{"cores":150,"memory":512},"totalResources":{"cores":400,"memory":2048}}"#
        );
        let full = Resources {
            cores: 400,
            memory: 2048,
        };
        assert!(full.covers(&Resources::ZERO) && !Resources::ZERO.covers(&full));
        assert_eq!(full.minus(full.plus(full)), Resources::ZERO);
        let p: UnitPage = serde_json::from_str(r#"{"units":[],"extra":1}"#).unwrap();
        assert_eq!(p.next_page_token, None);
        assert_eq!(
            serde_json::to_string(&ErrorBody::new(404, "gone")).unwrap(),
            r#"{"error":{"code":404,"message":"gone"}}"#
        );
        let put = PutBody {
            desired_state: Some("launched".into()),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_string(&put).unwrap(),
            r#"{"desiredState":"launched"}"#
        );
    }

    #[test]
    fn global_is_the_last_value() {
        let opt = |v: &str| WireOption {
            name: "Global".into(),
            section: "X-Fleet".into(),
            value: v.into(),
        };
        let mut u = ApiUnit {
            options: vec![opt("true")],
            ..Default::default()
        };
        assert!(u.is_global());
        u.options.push(opt("no"));
        assert!(!u.is_global());
        assert_eq!(ClusterState::parse("loaded"), Some(ClusterState::Loaded));
        assert_eq!(ClusterState::parse("started"), None);
        assert_eq!(ClusterState::Launched.as_str(), "launched");
    }
}
