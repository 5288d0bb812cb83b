//! The API's view of the cluster as a pure model: units, desired states,
//! placements, reported states and machines, folded from etcd's keys and
//! values (keys in, entities out). [`crate::live`] keeps one such view per
//! clusterd up to date from a watch; a single unit's read builds one from
//! that unit's keys ([`crate::registry::UnitRecord`]). Each batch of
//! changes applied is noted as a [`Delta`]: the names of the units and
//! machines that changed.

use crate::keys::{Key, Keys};
use crate::model::{
    merge_metadata, ApiUnit, ApiUnitState, ClusterState, Machine, StoredState, StoredUnit,
};
use crate::requirements::Requirements;
use crate::stored::{decode_desired, decode_value};
use etcd_client::KeyValue;
use std::collections::{BTreeMap, BTreeSet};

/// Units, states and machines as the API serves them.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// The revision the view reflects.
    pub revision: i64,
    /// Unit files.
    pub units: BTreeMap<String, StoredUnit>,
    /// Units whose `[X-Fleet]` says `Global=true`.
    pub global: BTreeSet<String>,
    /// Desired states.
    pub desired: BTreeMap<String, ClusterState>,
    /// Non-global unit -> machine.
    pub placement: BTreeMap<String, String>,
    /// Unit -> why it is not scheduled.
    pub unscheduled: BTreeMap<String, String>,
    /// (unit, machine) -> reported state.
    pub states: BTreeMap<(String, String), StoredState>,
    /// Present machines, with the metadata set through the API applied at
    /// once (their agents publish it merged a moment later).
    pub machines: BTreeMap<String, Machine>,
    /// Metadata set through the API, by machine (`metadata/<machine>`).
    pub overrides: BTreeMap<String, BTreeMap<String, Option<String>>>,
}

/// What one batch of changes touched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delta {
    /// The view's revision after the batch.
    pub revision: i64,
    /// Units whose file, desired state, placement or states changed.
    pub units: BTreeSet<String>,
    /// Machines that came, went or changed.
    pub machines: BTreeSet<String>,
}

impl View {
    /// Adds one key-value pair (a read, not a change).
    pub fn absorb(&mut self, keys: &Keys, kv: &KeyValue) {
        if let Ok(key) = kv.key_str() {
            self.apply(keys, key, kv.value(), false, &mut Delta::default());
        }
    }

    /// Applies one key's new value (`deleted`: it is gone), noting what it
    /// touched in `delta`.
    pub fn apply(
        &mut self,
        keys: &Keys,
        key: &str,
        value: &[u8],
        deleted: bool,
        delta: &mut Delta,
    ) {
        let raw = key.as_bytes();
        match keys.parse(key) {
            Key::Unit(n) => {
                if deleted {
                    self.units.remove(n);
                    self.global.remove(n);
                } else if let Some(u) = decode_value::<StoredUnit>(raw, value) {
                    if Requirements::from_options(n, &u.options).global {
                        self.global.insert(n.to_string());
                    } else {
                        self.global.remove(n);
                    }
                    self.units.insert(n.to_string(), u);
                }
                delta.units.insert(n.to_string());
            }
            Key::Desired(n) => {
                if deleted {
                    self.desired.remove(n);
                } else if let Some(d) = decode_desired(raw, value) {
                    self.desired.insert(n.to_string(), d);
                }
                delta.units.insert(n.to_string());
            }
            Key::Placement(n) => {
                if deleted {
                    self.placement.remove(n);
                } else if let Ok(m) = std::str::from_utf8(value) {
                    self.placement.insert(n.to_string(), m.to_string());
                }
                delta.units.insert(n.to_string());
            }
            Key::Unscheduled(n) => {
                if deleted {
                    self.unscheduled.remove(n);
                } else {
                    let why = String::from_utf8_lossy(value).into_owned();
                    self.unscheduled.insert(n.to_string(), why);
                }
                delta.units.insert(n.to_string());
            }
            Key::State(m, n) => {
                let k = (n.to_string(), m.to_string());
                if deleted {
                    self.states.remove(&k);
                } else if let Some(s) = decode_value::<StoredState>(raw, value) {
                    self.states.insert(k, s);
                }
                delta.units.insert(n.to_string());
                delta.machines.insert(m.to_string());
            }
            Key::Machine(m) => {
                if deleted {
                    self.machines.remove(m);
                } else if let Some(mut mach) = decode_value::<Machine>(raw, value) {
                    mach.id = m.to_string();
                    if let Some(o) = self.overrides.get(m) {
                        merge_metadata(&mut mach.metadata, o);
                    }
                    self.machines.insert(m.to_string(), mach);
                }
                delta.machines.insert(m.to_string());
            }
            Key::Metadata(m) => {
                let o: BTreeMap<String, Option<String>> = match deleted {
                    true => BTreeMap::new(),
                    false => decode_value(raw, value).unwrap_or_default(),
                };
                if let Some(mach) = self.machines.get_mut(m) {
                    merge_metadata(&mut mach.metadata, &o);
                }
                self.overrides.insert(m.to_string(), o);
                delta.machines.insert(m.to_string());
            }
            _ => {}
        }
    }

    /// The API's view of one unit.
    pub fn api_unit(&self, name: &str) -> Option<ApiUnit> {
        let u = self.units.get(name)?;
        let desired = self
            .desired
            .get(name)
            .copied()
            .unwrap_or(ClusterState::Inactive);
        let global = self.global.contains(name);
        let (current, machine) = if global {
            (None, None)
        } else {
            let machine = self.placement.get(name).cloned();
            let cur = machine
                .as_ref()
                .and_then(|m| self.states.get(&(name.to_string(), m.clone())))
                .map(|s| s.current)
                .unwrap_or(ClusterState::Inactive);
            (Some(cur.as_str().to_string()), machine)
        };
        Some(ApiUnit {
            current_state: current,
            desired_state: Some(desired.as_str().to_string()),
            machine_id: machine,
            name: name.to_string(),
            options: u.options.iter().map(Into::into).collect(),
            // Only while it should run (the engine deletes the key then;
            // this hides one a stopped unit's change has not reached yet).
            unscheduled_reason: self
                .unscheduled
                .get(name)
                .filter(|_| desired != ClusterState::Inactive)
                .cloned(),
        })
    }

    /// The states reported for one unit, by machine.
    pub fn unit_states<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a ApiUnitState> {
        let from = (name.to_string(), String::new());
        self.states
            .range(from..)
            .take_while(move |((n, _), _)| n == name)
            .map(|(_, s)| &s.state)
    }

    /// The number of units on each machine: non-global units placed there
    /// and global units it reports.
    pub fn loads(&self) -> BTreeMap<&str, usize> {
        let mut out: BTreeMap<&str, usize> =
            self.machines.keys().map(|m| (m.as_str(), 0)).collect();
        for m in self.placement.values() {
            *out.entry(m.as_str()).or_default() += 1;
        }
        for (u, m) in self.states.keys() {
            if self.global.contains(u) {
                *out.entry(m.as_str()).or_default() += 1;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine listed right after a `PATCH /machines` shows the new
    /// metadata, as fleet's listing did, whichever of the two keys the
    /// view sees first; the agent's merged entity agrees with it.
    #[test]
    fn api_set_metadata_shows_at_once() {
        let k = Keys::new("/f/");
        let mut d = Delta::default();
        let machine = serde_json::to_vec(&Machine {
            id: "m1".into(),
            metadata: [("hostname".to_string(), "smoke".to_string())].into(),
            ..Default::default()
        })
        .unwrap();
        let patch = br#"{"foo":"bar","hostname":null}"#;
        let want: BTreeMap<String, String> = [("foo".to_string(), "bar".to_string())].into();
        let mut v = View::default();
        v.apply(&k, &k.machine("m1"), &machine, false, &mut d);
        v.apply(&k, &k.metadata("m1"), patch, false, &mut d);
        assert_eq!(v.machines["m1"].metadata, want);
        assert!(d.machines.contains("m1"));
        let mut v = View::default();
        v.apply(&k, &k.metadata("m1"), patch, false, &mut d);
        v.apply(&k, &k.machine("m1"), &machine, false, &mut d);
        assert_eq!(v.machines["m1"].metadata, want);
    }

    #[test]
    fn changes_are_applied_and_noted() {
        let k = Keys::new("/f/");
        let mut v = View::default();
        let mut d = Delta::default();
        let unit = |global: bool| {
            let mut options = vec![flotilla_units::fleet::UnitOption {
                section: "Service".into(),
                name: "ExecStart".into(),
                value: "/bin/true".into(),
            }];
            if global {
                options.push(flotilla_units::fleet::UnitOption {
                    section: "X-Fleet".into(),
                    name: "Global".into(),
                    value: "yes".into(),
                });
            }
            serde_json::to_vec(&StoredUnit {
                name: "a.service".into(),
                hash: "h".into(),
                options,
            })
            .unwrap()
        };
        v.apply(&k, &k.unit("a.service"), &unit(false), false, &mut d);
        v.apply(&k, &k.desired("a.service"), b"launched", false, &mut d);
        v.apply(&k, &k.placement("a.service"), b"m1", false, &mut d);
        v.apply(&k, &k.unscheduled("a.service"), b"no room", false, &mut d);
        assert_eq!(
            v.api_unit("a.service")
                .unwrap()
                .unscheduled_reason
                .as_deref(),
            Some("no room")
        );
        v.apply(&k, &k.unscheduled("a.service"), b"", true, &mut d);
        let st = StoredState {
            state: ApiUnitState {
                name: "a.service".into(),
                machine_id: "m1".into(),
                active_state: "active".into(),
                ..Default::default()
            },
            current: ClusterState::Launched,
        };
        v.apply(
            &k,
            &k.state("m1", "a.service"),
            &serde_json::to_vec(&st).unwrap(),
            false,
            &mut d,
        );
        let m = serde_json::to_vec(&Machine::default()).unwrap();
        v.apply(&k, &k.machine("m1"), &m, false, &mut d);
        v.apply(&k, &k.schedule("m1", "a.service"), b"{}", false, &mut d);
        assert_eq!(d.units, ["a.service".to_string()].into());
        assert_eq!(d.machines, ["m1".to_string()].into());
        let u = v.api_unit("a.service").unwrap();
        assert_eq!(u.current_state.as_deref(), Some("launched"));
        assert_eq!(u.machine_id.as_deref(), Some("m1"));
        assert_eq!(v.machines["m1"].id, "m1");
        assert_eq!(v.loads()["m1"], 1);
        assert_eq!(v.unit_states("a.service").count(), 1);
        // Global: no machine, no current state; counted where it reports.
        v.apply(&k, &k.unit("a.service"), &unit(true), false, &mut d);
        v.apply(&k, &k.placement("a.service"), b"", true, &mut d);
        let u = v.api_unit("a.service").unwrap();
        assert_eq!((u.current_state, u.machine_id), (None, None));
        assert_eq!(v.loads()["m1"], 1);
        // Deleted keys leave.
        v.apply(&k, &k.state("m1", "a.service"), b"", true, &mut d);
        v.apply(&k, &k.unit("a.service"), b"", true, &mut d);
        v.apply(&k, &k.machine("m1"), b"", true, &mut d);
        assert!(v.api_unit("a.service").is_none());
        assert!(v.machines.is_empty() && v.states.is_empty());
    }
}
