//! fleet's scheduler as a pure function: (machines, units, current
//! placement) -> next placement.
//!
//! The rules are FLEET-NOTES "Scheduling as fleet did it":
//!
//! 1. *Keep.* Units are taken in name order. A unit that should run (desired
//!    state not `inactive`) and is placed on a machine that is still present
//!    stays there if it may still run there, checked against what was kept
//!    before it. A unit that lands where a unit it `Replaces` is evicts that
//!    unit, which is then placed afresh.
//! 2. *Place.* Units are taken in name order again. A global unit goes to
//!    every machine where it may run. Any other unplaced unit goes to the
//!    least-loaded machine where it may run (load = units placed there,
//!    global ones included; ties by machine ID); the load is updated after
//!    each decision. This pass repeats until nothing changes, so that a
//!    `MachineOf` follower whose peer sorts after it is placed in the same
//!    call.
//!
//! "May run on M" checks, in order: `MachineID`, `MachineMetadata`, every
//! `MachineOf` peer already on M, `Conflicts` globs in both directions
//! against the units on M, and no unit on M `Replaces` this one.

use crate::requirements::Requirements;
use std::collections::{BTreeMap, BTreeSet};

/// A machine that is present (its presence key is alive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineInfo {
    /// Its machine ID.
    pub id: String,
    /// Its metadata.
    pub metadata: BTreeMap<String, String>,
}

/// A unit as the scheduler sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitInfo {
    /// Its name.
    pub name: String,
    /// Desired state is `loaded` or `launched` (not `inactive`).
    pub wanted: bool,
    /// Its `[X-Fleet]` requirements.
    pub req: Requirements,
}

/// Where units are: a non-global unit on one machine, a global unit on a set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    /// Non-global unit -> machine.
    pub units: BTreeMap<String, String>,
    /// Global unit -> machines.
    pub global: BTreeMap<String, BTreeSet<String>>,
}

impl Placement {
    /// Every (machine, unit) pair.
    pub fn pairs(&self) -> BTreeSet<(String, String)> {
        let mut out: BTreeSet<(String, String)> = self
            .units
            .iter()
            .map(|(u, m)| (m.clone(), u.clone()))
            .collect();
        for (u, ms) in &self.global {
            out.extend(ms.iter().map(|m| (m.clone(), u.clone())));
        }
        out
    }
}

struct State<'a> {
    machines: Vec<&'a MachineInfo>,
    reqs: BTreeMap<&'a str, &'a Requirements>,
    on: Vec<BTreeSet<String>>,
}

impl State<'_> {
    fn may_run(&self, u: &UnitInfo, m: usize) -> bool {
        let machine = self.machines[m];
        if !u.req.id_matches(&machine.id) || !u.req.metadata_matches(&machine.metadata) {
            return false;
        }
        if !u
            .req
            .machine_of
            .iter()
            .all(|peer| self.on[m].contains(peer))
        {
            return false;
        }
        for other in &self.on[m] {
            if other == &u.name {
                continue;
            }
            if u.req.conflicts_with(other) {
                return false;
            }
            if let Some(r) = self.reqs.get(other.as_str()) {
                if r.conflicts_with(&u.name) || r.replaces_unit(&u.name) {
                    return false;
                }
            }
        }
        true
    }

    /// Units on `m` that `u` replaces.
    fn replaced_by(&self, u: &UnitInfo, m: usize) -> Vec<String> {
        if u.req.replaces.is_empty() {
            return Vec::new();
        }
        self.on[m]
            .iter()
            .filter(|o| *o != &u.name && u.req.replaces_unit(o))
            .cloned()
            .collect()
    }
}

/// Computes the next placement. Deterministic: the same input gives the same
/// output whatever the order of `machines` and `units`.
pub fn schedule(machines: &[MachineInfo], units: &[UnitInfo], current: &Placement) -> Placement {
    let mut ms: Vec<&MachineInfo> = machines.iter().collect();
    ms.sort_by(|a, b| a.id.cmp(&b.id));
    ms.dedup_by(|a, b| a.id == b.id);
    let index: BTreeMap<&str, usize> = ms
        .iter()
        .enumerate()
        .map(|(i, m)| (m.id.as_str(), i))
        .collect();
    let mut us: Vec<&UnitInfo> = units.iter().filter(|u| u.wanted).collect();
    us.sort_by(|a, b| a.name.cmp(&b.name));
    us.dedup_by(|a, b| a.name == b.name);
    let mut st = State {
        reqs: us.iter().map(|u| (u.name.as_str(), &u.req)).collect(),
        on: vec![BTreeSet::new(); ms.len()],
        machines: ms,
    };
    let mut next = Placement::default();

    // 1. Keep what may stay.
    for u in &us {
        let kept_on: Vec<usize> = if u.req.global {
            current
                .global
                .get(&u.name)
                .into_iter()
                .flatten()
                .filter_map(|m| index.get(m.as_str()).copied())
                .collect()
        } else {
            current
                .units
                .get(&u.name)
                .and_then(|m| index.get(m.as_str()).copied())
                .into_iter()
                .collect()
        };
        for m in kept_on {
            if st.may_run(u, m) {
                place(&mut st, &mut next, u, m);
            }
        }
    }

    // 2. Place the rest, until nothing changes.
    for _round in 0..=us.len() + 1 {
        let mut progress = false;
        for u in &us {
            if u.req.global {
                for m in 0..st.machines.len() {
                    if !st.on[m].contains(&u.name) && st.may_run(u, m) {
                        place(&mut st, &mut next, u, m);
                        progress = true;
                    }
                }
            } else if !next.units.contains_key(&u.name) {
                let mut order: Vec<usize> = (0..st.machines.len()).collect();
                order.sort_by(|&a, &b| {
                    st.on[a]
                        .len()
                        .cmp(&st.on[b].len())
                        .then(st.machines[a].id.cmp(&st.machines[b].id))
                });
                if let Some(m) = order.into_iter().find(|&m| st.may_run(u, m)) {
                    place(&mut st, &mut next, u, m);
                    progress = true;
                }
            }
        }
        if !progress {
            break;
        }
    }
    next
}

fn place(st: &mut State<'_>, next: &mut Placement, u: &UnitInfo, m: usize) {
    for evicted in st.replaced_by(u, m) {
        st.on[m].remove(&evicted);
        next.units.remove(&evicted);
    }
    let id = st.machines[m].id.clone();
    st.on[m].insert(u.name.clone());
    if u.req.global {
        next.global.entry(u.name.clone()).or_default().insert(id);
    } else {
        next.units.insert(u.name.clone(), id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::requirements::Requirements;
    use flotilla_units::systemd::UnitOption;

    fn m(id: &str, md: &[(&str, &str)]) -> MachineInfo {
        MachineInfo {
            id: id.into(),
            metadata: md
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn u(name: &str, xfleet: &[(&str, &str)]) -> UnitInfo {
        let opts: Vec<UnitOption> = xfleet
            .iter()
            .map(|(k, v)| UnitOption {
                section: "X-Fleet".into(),
                name: k.to_string(),
                value: v.to_string(),
            })
            .collect();
        UnitInfo {
            name: name.into(),
            wanted: true,
            req: Requirements::from_options(name, &opts),
        }
    }

    fn run(
        machines: &[MachineInfo],
        units: &[UnitInfo],
        cur: &Placement,
    ) -> BTreeMap<String, String> {
        schedule(machines, units, cur).units
    }

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn least_loaded_in_name_order_ties_by_id() {
        let ms = [m("c", &[]), m("a", &[]), m("b", &[])];
        let us = [
            u("u4.service", &[]),
            u("u1.service", &[]),
            u("u3.service", &[]),
            u("u2.service", &[]),
        ];
        let got = run(&ms, &us, &Placement::default());
        assert_eq!(
            got,
            map(&[
                ("u1.service", "a"),
                ("u2.service", "b"),
                ("u3.service", "c"),
                ("u4.service", "a")
            ])
        );
    }

    #[test]
    fn table_of_requirements() {
        let ms = [
            m("aaaaaaaa1111", &[("region", "east")]),
            m("bbbbbbbb2222", &[("region", "west"), ("disk", "ssd")]),
        ];
        struct Case {
            units: Vec<UnitInfo>,
            want: &'static [(&'static str, &'static str)],
        }
        let cases = vec![
            Case {
                units: vec![u("x.service", &[("MachineID", "bbbbbbbb2222")])],
                want: &[("x.service", "bbbbbbbb2222")],
            },
            Case {
                units: vec![u("x.service", &[("MachineID", "bbbbbbbb")])],
                want: &[("x.service", "bbbbbbbb2222")],
            },
            Case {
                units: vec![u("x.service", &[("MachineID", "bbbbbbb")])],
                want: &[],
            },
            Case {
                units: vec![u(
                    "x.service",
                    &[("MachineMetadata", "\"region=west\" \"disk=ssd\"")],
                )],
                want: &[("x.service", "bbbbbbbb2222")],
            },
            Case {
                units: vec![u("x.service", &[("MachineMetadata", "region=north")])],
                want: &[],
            },
            Case {
                units: vec![u(
                    "x.service",
                    &[
                        ("MachineMetadata", "region=north"),
                        ("MachineMetadata", "region=west"),
                    ],
                )],
                want: &[("x.service", "bbbbbbbb2222")],
            },
            // MachineOf: follower sorts before its peer and still lands with it.
            Case {
                units: vec![
                    u("a.service", &[("MachineOf", "z.service")]),
                    u("z.service", &[("MachineID", "bbbbbbbb")]),
                ],
                want: &[("a.service", "bbbbbbbb2222"), ("z.service", "bbbbbbbb2222")],
            },
            // MachineOf a unit that does not exist: unschedulable.
            Case {
                units: vec![u("a.service", &[("MachineOf", "nope.service")])],
                want: &[],
            },
            // Conflicts, forward.
            Case {
                units: vec![
                    u("a.service", &[]),
                    u("b.service", &[("Conflicts", "a.*")]),
                    u("c.service", &[("Conflicts", "[ab].service")]),
                ],
                want: &[("a.service", "aaaaaaaa1111"), ("b.service", "bbbbbbbb2222")],
            },
            // Conflicts, backward: a forbids b next to it.
            Case {
                units: vec![
                    u("a.service", &[("Conflicts", "b.service")]),
                    u("b.service", &[("MachineMetadata", "region=east")]),
                ],
                want: &[("a.service", "aaaaaaaa1111")],
            },
        ];
        for (i, c) in cases.iter().enumerate() {
            assert_eq!(
                run(&ms, &c.units, &Placement::default()),
                map(c.want),
                "case {i}"
            );
        }
    }

    #[test]
    fn keeps_existing_placements_and_unschedules_inactive_and_lost() {
        let ms = [m("a", &[]), m("b", &[])];
        let mut us = vec![
            u("u1.service", &[]),
            u("u2.service", &[]),
            u("u3.service", &[]),
        ];
        let cur = Placement {
            units: map(&[
                ("u1.service", "b"),
                ("u2.service", "b"),
                ("u3.service", "gone"),
            ]),
            ..Default::default()
        };
        assert_eq!(
            run(&ms, &us, &cur),
            map(&[
                ("u1.service", "b"),
                ("u2.service", "b"),
                ("u3.service", "a")
            ])
        );
        us[0].wanted = false;
        assert_eq!(
            run(&ms, &us, &cur),
            map(&[("u2.service", "b"), ("u3.service", "a")])
        );
    }

    #[test]
    fn replaces_moves_the_replaced_unit() {
        let ms = [m("a", &[("role", "x")]), m("b", &[])];
        let us = [
            u("old.service", &[]),
            u(
                "new.service",
                &[("Replaces", "old.service"), ("MachineMetadata", "role=x")],
            ),
        ];
        let cur = Placement {
            units: map(&[("old.service", "a")]),
            ..Default::default()
        };
        assert_eq!(
            run(&ms, &us, &cur),
            map(&[("new.service", "a"), ("old.service", "b")])
        );
        // From scratch: the same result.
        assert_eq!(
            run(&ms, &us, &Placement::default()),
            map(&[("new.service", "a"), ("old.service", "b")])
        );
        // With nowhere else to go, the replaced unit is unscheduled.
        let one = [m("a", &[("role", "x")])];
        assert_eq!(run(&one, &us, &cur), map(&[("new.service", "a")]));
    }

    #[test]
    fn global_units_go_everywhere_they_may() {
        let ms = [
            m("a", &[("disk", "ssd")]),
            m("b", &[]),
            m("c", &[("disk", "ssd")]),
        ];
        let us = [
            u("a-x.service", &[("MachineID", "c")]),
            u(
                "g.service",
                &[
                    ("Global", "true"),
                    ("MachineMetadata", "disk=ssd"),
                    ("Conflicts", "a-x.service"),
                ],
            ),
            u("y.service", &[("Conflicts", "g.service")]),
        ];
        let p = schedule(&ms, &us, &Placement::default());
        assert_eq!(
            p.global["g.service"],
            ["a".to_string()].into_iter().collect()
        );
        assert_eq!(p.units, map(&[("a-x.service", "c"), ("y.service", "b")]));
        // A global unit placed first keeps a conflicting unit off its machines.
        let us = [
            u(
                "g.service",
                &[("Global", "true"), ("Conflicts", "x.service")],
            ),
            u("x.service", &[("MachineID", "c")]),
        ];
        let p = schedule(&ms, &us, &Placement::default());
        assert_eq!(p.global["g.service"].len(), 3);
        assert!(p.units.is_empty());
        // Global units count toward load.
        let ms = [m("a", &[]), m("b", &[])];
        let us = [
            u("g.service", &[("Global", "1")]),
            u("h.service", &[("MachineID", "a")]),
            u("z.service", &[]),
        ];
        let p = schedule(&ms, &us, &Placement::default());
        assert_eq!(p.units, map(&[("h.service", "a"), ("z.service", "b")]));
    }

    #[test]
    fn many_global_machines() {
        let ms: Vec<MachineInfo> = (0..700).map(|i| m(&format!("m{i:04}"), &[])).collect();
        let p = schedule(
            &ms,
            &[u("g.service", &[("Global", "true")])],
            &Placement::default(),
        );
        assert_eq!(p.global["g.service"].len(), 700);
    }
}
