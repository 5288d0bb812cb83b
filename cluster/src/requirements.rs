//! The `[X-Fleet]` requirements of a unit: parsing, specifier expansion and
//! the option checks that make a unit invalid (docs/fleet-compat.md "Option checks").
//!
//! The deprecated names of fleet <= 0.8 (`X-ConditionMachineID`,
//! `X-ConditionMachineOf`, `X-ConditionMachineMetadata`, `X-Conflicts`) are
//! read as their new names; so are `X-MemoryReservation` and
//! `X-CoresReservation`, the names fleet first gave its resource keys.
//!
//! `MemoryReservation=` (MiB) and `CoresReservation=` (hundredths of a
//! core) are flotilla's scheduling by fit (docs/cluster.md "Resources"):
//! a whole number each, the last value wins.
//!
//! Value splitting, specifiers and booleans are `flotilla_units`'s
//! (the workspace's one implementation of fleet's unit-file rules); what is
//! cluster-only is what the values mean for scheduling.

use crate::glob;
use flotilla_systemd::check_options;
use flotilla_units::fleet::{fleet_conflicts_values, fleet_values, parse_bool, UnitOption};
use flotilla_units::fleet_api::Resources;
use flotilla_units::specifier::expand_specifiers;
use std::collections::{BTreeMap, BTreeSet};

/// What a unit requires of the machine it runs on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requirements {
    /// `MachineID=`: full ID or its first 8 characters (any one of them).
    pub machine_id: Vec<String>,
    /// `MachineOf=`: units that must be on the same machine.
    pub machine_of: Vec<String>,
    /// `MachineMetadata=`: key -> accepted values (keys AND-ed, values OR-ed).
    pub metadata: BTreeMap<String, BTreeSet<String>>,
    /// `Conflicts=`: globs of unit names that must not share the machine.
    pub conflicts: Vec<String>,
    /// `Global=`: runs on every matching machine.
    pub global: bool,
    /// `Replaces=`: units moved off the machine this unit lands on.
    pub replaces: Vec<String>,
    /// `MemoryReservation=`, `CoresReservation=`: what it needs of the
    /// machine's resources (zero when not given, or not a number: the
    /// API refuses those, [`validate_options`]).
    pub reservation: Resources,
}

/// The reservation keys: (name, deprecated name, unit).
const RESERVATIONS: [(&str, &str, &str); 2] = [
    ("MemoryReservation", "X-MemoryReservation", "MiB"),
    (
        "CoresReservation",
        "X-CoresReservation",
        "hundredths of a core",
    ),
];

/// A reservation's value: a whole number, at most 2^40 (more than any
/// machine has, in either unit).
fn reservation_value(name: &str, unit: &str, value: &str) -> Result<u64, String> {
    let v = value.trim();
    match v.parse::<u64>() {
        Ok(n) if n <= 1 << 40 => Ok(n),
        _ => Err(format!(
            "{name}={v} is not a whole number of {unit} (e.g. {name}={})",
            if name.starts_with('M') { 512 } else { 150 }
        )),
    }
}

impl Requirements {
    /// Reads the `[X-Fleet]` section of `options` for unit `name`.
    pub fn from_options(name: &str, options: &[UnitOption]) -> Requirements {
        let mut r = Requirements::default();
        for o in options.iter().filter(|o| o.section == "X-Fleet") {
            let values = || {
                fleet_values(&o.value)
                    .into_iter()
                    .map(|v| expand_specifiers(&v, name))
                    .collect::<Vec<_>>()
            };
            match o.name.as_str() {
                "MachineID" | "X-ConditionMachineID" => r.machine_id.extend(values()),
                "MachineOf" | "X-ConditionMachineOf" => r.machine_of.extend(values()),
                "MachineMetadata" | "X-ConditionMachineMetadata" => {
                    for pair in values() {
                        let parts: Vec<&str> = pair.split('=').collect();
                        if parts.len() == 2 && !parts[0].is_empty() && !parts[1].is_empty() {
                            r.metadata
                                .entry(parts[0].to_string())
                                .or_default()
                                .insert(parts[1].to_string());
                        }
                    }
                }
                "Conflicts" | "X-Conflicts" => r.conflicts.extend(
                    fleet_conflicts_values(&o.value)
                        .iter()
                        .map(|v| expand_specifiers(v, name)),
                ),
                // fleet: anything but a true value is false; the last one wins.
                "Global" => r.global = parse_bool(&expand_specifiers(&o.value, name)) == Some(true),
                "Replaces" => r.replaces.extend(values()),
                n => {
                    for (i, (name, old, unit)) in RESERVATIONS.iter().enumerate() {
                        if n == *name || n == *old {
                            let v = reservation_value(name, unit, &o.value).unwrap_or(0);
                            if i == 0 {
                                r.reservation.memory = v;
                            } else {
                                r.reservation.cores = v;
                            }
                        }
                    }
                }
            }
        }
        r.machine_id.retain(|v| !v.is_empty());
        r.machine_of.retain(|v| !v.is_empty());
        r.replaces.retain(|v| !v.is_empty());
        r
    }

    /// Whether a machine with this ID passes `MachineID=`.
    pub fn id_matches(&self, id: &str) -> bool {
        if self.machine_id.is_empty() {
            return true;
        }
        let short = id.get(..8).unwrap_or(id);
        self.machine_id
            .iter()
            .any(|want| want == id || want == short)
    }

    /// Whether a machine with this metadata passes `MachineMetadata=`.
    pub fn metadata_matches(&self, md: &BTreeMap<String, String>) -> bool {
        self.metadata
            .iter()
            .all(|(k, vals)| md.get(k).is_some_and(|v| vals.contains(v)))
    }

    /// Whether this unit's `Conflicts=` globs match `other`.
    pub fn conflicts_with(&self, other: &str) -> bool {
        self.conflicts.iter().any(|g| glob::matches(g, other))
    }

    /// Whether this unit replaces `other` (`Replaces=` globs).
    pub fn replaces_unit(&self, other: &str) -> bool {
        self.replaces.iter().any(|g| glob::matches(g, other))
    }
}

/// The option checks fleet answers with 400; `Err` names the first problem:
/// first the unit file itself ([`check_options`]: what fleet's
/// serialize-and-parse-again refused, such as a line of 2048 bytes or more),
/// then the `[X-Fleet]` combinations fleet refused.
pub fn validate_options(name: &str, options: &[UnitOption]) -> Result<(), String> {
    check_options(options)?;
    for o in options.iter().filter(|o| o.section == "X-Fleet") {
        for (key, old, unit) in RESERVATIONS {
            if o.name == key || o.name == old {
                reservation_value(key, unit, &o.value)?;
            }
        }
    }
    let r = Requirements::from_options(name, options);
    let has_id = !r.machine_id.is_empty();
    if has_id && !r.machine_of.is_empty() {
        return Err("MachineID cannot be used with MachineOf".into());
    }
    if has_id && !r.conflicts.is_empty() {
        return Err("MachineID cannot be used with Conflicts".into());
    }
    if has_id && r.global {
        return Err("MachineID cannot be used with Global".into());
    }
    if has_id && !r.replaces.is_empty() {
        return Err("MachineID cannot be used with Replaces".into());
    }
    if r.global && !r.machine_of.is_empty() {
        return Err("Global cannot be used with MachineOf".into());
    }
    if r.global && !r.replaces.is_empty() {
        return Err("Global cannot be used with Replaces".into());
    }
    if !r.conflicts.is_empty() && !r.replaces.is_empty() {
        return Err("Conflicts cannot be used with Replaces".into());
    }
    for peer in &r.machine_of {
        if r.conflicts_with(peer) {
            return Err(format!(
                "MachineOf {peer} matches a Conflicts glob of the same unit"
            ));
        }
        if r.replaces_unit(peer) {
            return Err(format!(
                "MachineOf {peer} matches a Replaces glob of the same unit"
            ));
        }
    }
    Ok(())
}

/// The scheduler's tests' model of a cycle of `Replaces=` (the API accepts
/// them, as fleet did; the scheduler keeps them from moving round).
/// Looks for a cycle of `Replaces=` through unit `name` (with requirements
/// `req`) among `others` (every other unit, by name; an entry for `name`
/// itself is ignored: `req` is its new contents). A unit and its
/// `MachineOf=` peers share a machine, so they count as one: replacing one
/// of them replaces the group, and a group that replaces a unit that
/// (through others) replaces the group is a cycle too; the scheduler could
/// only move them round for ever. A unit replacing a member of its own
/// group (or itself, by a glob) is not a cycle: the scheduler never lets
/// it evict its own. Returns the cycle as `[name, …, name]` when there is
/// one, each step a replacement or a unit's peer.
#[cfg(test)]
pub fn replaces_cycle<'a>(
    name: &str,
    req: &Requirements,
    others: impl IntoIterator<Item = (&'a str, &'a Requirements)>,
) -> Option<Vec<String>> {
    if req.replaces.is_empty() && req.machine_of.is_empty() {
        return None;
    }
    let mut units: BTreeMap<&str, &Requirements> =
        others.into_iter().filter(|(n, _)| *n != name).collect();
    units.insert(name, req);
    // The groups: the components of MachineOf, over the units and the
    // peers they name.
    let mut near: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (&u, r) in &units {
        near.entry(u).or_default();
        for p in &r.machine_of {
            near.entry(u).or_default().push(p.as_str());
            near.entry(p.as_str()).or_default().push(u);
        }
    }
    let mut group: BTreeMap<&str, &str> = BTreeMap::new();
    for &start in near.keys() {
        if group.contains_key(start) {
            continue;
        }
        let mut todo = vec![start];
        group.insert(start, start);
        while let Some(n) = todo.pop() {
            for &m in &near[n] {
                if !group.contains_key(m) {
                    group.insert(m, start);
                    todo.push(m);
                }
            }
        }
    }
    // Replacement edges between groups: (replacing unit, replaced unit).
    let mut edges: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for (&u, r) in units.iter().filter(|(_, r)| !r.replaces.is_empty()) {
        for &v in near.keys() {
            if v != u && group[v] != group[u] && r.replaces_unit(v) {
                edges.entry(group[u]).or_default().push((u, v));
            }
        }
    }
    // Breadth-first from `name`'s group, remembering the edge that reached
    // each group.
    let home = group[name];
    let mut came_by: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([home]);
    while let Some(g) = queue.pop_front() {
        for &(u, v) in edges.get(g).into_iter().flatten() {
            let to = group[v];
            if to == home {
                let mut steps = vec![(u, v)];
                let mut at = g;
                while at != home {
                    let e = came_by[at];
                    steps.push(e);
                    at = group[e.0];
                }
                steps.reverse();
                return Some(cycle_names(name, &steps));
            }
            if to != home && !came_by.contains_key(to) {
                came_by.insert(to, (u, v));
                queue.push_back(to);
            }
        }
    }
    None
}

#[cfg(test)]
/// A cycle's steps as names from `name` back to it: each replacement, and
/// a unit's peer where the next step leaves from another unit of its group.
fn cycle_names(name: &str, steps: &[(&str, &str)]) -> Vec<String> {
    let mut out = vec![name.to_string()];
    for &(u, v) in steps {
        if out.last().is_some_and(|l| l != u) {
            out.push(u.to_string());
        }
        out.push(v.to_string());
    }
    if out.last().is_some_and(|l| l != name) {
        out.push(name.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xf(pairs: &[(&str, &str)]) -> Vec<UnitOption> {
        let mut v = vec![UnitOption {
            section: "Service".into(),
            name: "ExecStart".into(),
            value: "/bin/true".into(),
        }];
        v.extend(pairs.iter().map(|(n, val)| UnitOption {
            section: "X-Fleet".into(),
            name: n.to_string(),
            value: val.to_string(),
        }));
        v
    }

    #[test]
    fn parses_every_option() {
        let o = xf(&[
            ("MachineMetadata", "\"region=us-east-1\" \"diskType=SSD\""),
            ("MachineMetadata", "region=us-west-1"),
            ("MachineMetadata", "bad"),
            ("MachineMetadata", "a=b=c"),
            ("Conflicts", "foo*.service bar.service"),
            ("X-Conflicts", "baz.service"),
            ("Global", "yes"),
            ("Global", "off"),
            ("MachineOf", "%p.socket"),
        ]);
        let r = Requirements::from_options("web@1.service", &o);
        assert_eq!(r.metadata.len(), 2);
        assert_eq!(r.metadata["region"].len(), 2);
        assert_eq!(
            r.conflicts,
            vec!["foo*.service", "bar.service", "baz.service"]
        );
        assert!(!r.global, "last Global wins");
        assert_eq!(r.machine_of, vec!["web.socket"]);
        let md = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert!(r.metadata_matches(&md(&[("region", "us-west-1"), ("diskType", "SSD")])));
        assert!(!r.metadata_matches(&md(&[("region", "us-west-1")])));
        assert!(!r.metadata_matches(&md(&[("region", "eu"), ("diskType", "SSD")])));
    }

    #[test]
    fn circular_replaces() {
        let r = |globs: &[&str]| {
            let o: Vec<(&str, &str)> = globs.iter().map(|g| ("Replaces", *g)).collect();
            Requirements::from_options("x.service", &xf(&o))
        };
        let a = r(&["b.service"]);
        let b = r(&["a.service"]);
        let c = r(&["a*.service"]);
        let d = r(&["c.service"]);
        let none = r(&[]);
        // Two units replacing each other.
        assert_eq!(
            replaces_cycle("a.service", &a, [("b.service", &b)]),
            Some(vec![
                "a.service".into(),
                "b.service".into(),
                "a.service".into()
            ])
        );
        // Three units through a glob: a -> b -> ... no; a2 -> d -> c -> a2.
        let a2 = r(&["d.service"]);
        assert_eq!(
            replaces_cycle(
                "a2.service",
                &a2,
                [("c.service", &c), ("d.service", &d), ("b.service", &none)]
            ),
            Some(vec![
                "a2.service".into(),
                "d.service".into(),
                "c.service".into(),
                "a2.service".into()
            ])
        );
        // No cycle: a chain, a unit replacing itself by glob, no Replaces.
        assert_eq!(
            replaces_cycle("a.service", &a, [("b.service", &none)]),
            None
        );
        assert_eq!(replaces_cycle("a1.service", &c, []), None);
        assert_eq!(
            replaces_cycle("b.service", &none, [("a.service", &a)]),
            None
        );
        // Through a MachineOf group: g replaces a, a replaces f, and h (on
        // f's machine) replaces g; the API saw none of them close a cycle
        // by Replaces= alone.
        let h = Requirements::from_options(
            "h.service",
            &xf(&[("MachineOf", "f.service"), ("Replaces", "g.service")]),
        );
        let g = r(&["a.service"]);
        let a_f = r(&["f.service"]);
        assert_eq!(
            replaces_cycle(
                "g.service",
                &g,
                [("a.service", &a_f), ("h.service", &h), ("f.service", &none)]
            ),
            Some(
                [
                    "g.service",
                    "a.service",
                    "f.service",
                    "h.service",
                    "g.service"
                ]
                .map(String::from)
                .to_vec()
            )
        );
        // A unit with MachineOf= alone can close one.
        let x = r(&["g.service"]);
        let joins = Requirements::from_options(
            "j.service",
            &xf(&[("MachineOf", "f.service"), ("MachineOf", "x.service")]),
        );
        assert!(replaces_cycle(
            "j.service",
            &joins,
            [("a.service", &a_f), ("g.service", &g), ("x.service", &x)]
        )
        .is_some());
        // Replacing its own peer is not a cycle.
        let own = Requirements::from_options(
            "k.service",
            &xf(&[("MachineOf", "f.service"), ("Replaces", "f.service")]),
        );
        assert_eq!(
            replaces_cycle("k.service", &own, [("f.service", &none)]),
            None
        );
        // The stored contents of the unit itself do not count: its new ones do.
        assert_eq!(
            replaces_cycle("a.service", &a, [("a.service", &b), ("b.service", &none)]),
            None
        );
    }

    #[test]
    fn reservations() {
        let r = Requirements::from_options(
            "a.service",
            &xf(&[
                ("MemoryReservation", "256"),
                ("MemoryReservation", " 512 "),
                ("X-CoresReservation", "150"),
            ]),
        );
        assert_eq!(
            r.reservation,
            Resources {
                memory: 512,
                cores: 150
            }
        );
        assert!(Requirements::from_options("a.service", &xf(&[]))
            .reservation
            .is_zero());
        for (key, bad) in [
            ("MemoryReservation", "512M"),
            ("MemoryReservation", "-1"),
            ("CoresReservation", "1.5"),
            ("X-CoresReservation", ""),
            ("CoresReservation", "99999999999999"),
        ] {
            let e = validate_options("a.service", &xf(&[(key, bad)])).unwrap_err();
            assert!(e.contains("is not a whole number of"), "{key}={bad}: {e}");
        }
        assert_eq!(
            validate_options("a.service", &xf(&[("CoresReservation", "1.5")])),
            Err("CoresReservation=1.5 is not a whole number of hundredths of a core (e.g. CoresReservation=150)".into())
        );
        assert!(validate_options("a.service", &xf(&[("MemoryReservation", "0")])).is_ok());
    }

    #[test]
    fn machine_id_full_or_short() {
        let r = Requirements::from_options("a.service", &xf(&[("MachineID", "0123456789abcdef")]));
        assert!(r.id_matches("0123456789abcdef"));
        assert!(!r.id_matches("0123456789abcdee"));
        let r = Requirements::from_options("a.service", &xf(&[("MachineID", "01234567")]));
        assert!(r.id_matches("0123456789abcdef"));
        assert!(!r.id_matches("0123456"));
    }

    #[test]
    fn invalid_combinations() {
        let bad: &[&[(&str, &str)]] = &[
            &[("MachineID", "x"), ("MachineOf", "a.service")],
            &[("MachineID", "x"), ("Conflicts", "a*")],
            &[("MachineID", "x"), ("Global", "true")],
            &[("MachineID", "x"), ("Replaces", "a.service")],
            &[("Global", "true"), ("MachineOf", "a.service")],
            &[("Global", "true"), ("Replaces", "a.service")],
            &[("Conflicts", "a*"), ("Replaces", "b.service")],
            &[("MachineOf", "a.service"), ("Conflicts", "a*")],
        ];
        for case in bad {
            assert!(
                validate_options("u.service", &xf(case)).is_err(),
                "{case:?}"
            );
        }
        let good: &[&[(&str, &str)]] = &[
            &[("MachineID", "x")],
            &[
                ("Global", "true"),
                ("Conflicts", "a*"),
                ("MachineMetadata", "a=b"),
            ],
            &[("MachineOf", "a.service"), ("Conflicts", "b*")],
            &[("Replaces", "b.service"), ("MachineOf", "a.service")],
            &[("Global", "false"), ("MachineOf", "a.service")],
        ];
        for case in good {
            assert!(validate_options("u.service", &xf(case)).is_ok(), "{case:?}");
        }
        let long = "x".repeat(2100);
        assert!(validate_options("u.service", &xf(&[("Foo", &long)])).is_err());
    }
}
