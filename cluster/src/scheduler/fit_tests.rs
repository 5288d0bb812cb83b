//! Placement by fit: tables of where units with reservations go, when a
//! unit that fits nowhere is placed, and, after any sequence of changes,
//! that no machine is overcommitted and no waiting unit would fit.

use super::*;
use proptest::prelude::*;

fn res(memory: u64, cores: u64) -> Resources {
    Resources { cores, memory }
}

fn req(name: &str, xfleet: &[(&str, &str)]) -> Requirements {
    Requirements::from_options(name, &super::tests::xfleet_options(xfleet))
}

/// A unit reserving `memory` MiB and `cores` hundredths, with more keys.
fn sized(name: &str, memory: u64, cores: u64, more: &[(&str, &str)]) -> Requirements {
    let (m, c) = (memory.to_string(), cores.to_string());
    let mut x: Vec<(&str, &str)> = vec![("MemoryReservation", &m), ("CoresReservation", &c)];
    x.extend_from_slice(more);
    req(name, &x)
}

fn machine(s: &mut Scheduler, id: &str, memory: u64, cores: u64) {
    s.set_machine(id, &BTreeMap::new(), res(memory, cores));
}

fn on(s: &Scheduler, u: &str) -> Vec<String> {
    s.placed_on(u).cloned().collect()
}

/// What is reserved on each machine, summed from the placement.
fn used(s: &Scheduler) -> BTreeMap<String, Resources> {
    let mut out: BTreeMap<String, Resources> = BTreeMap::new();
    for (m, u) in s.placement().pairs() {
        let r = s.units[&u].req.reservation;
        let e = out.entry(m).or_default();
        *e = e.plus(r);
    }
    out
}

#[test]
fn most_room_then_fewest_units_then_id() {
    struct Case {
        what: &'static str,
        machines: &'static [(&'static str, u64, u64)],
        /// (unit, memory, cores), submitted in this order.
        units: &'static [(&'static str, u64, u64)],
        want: &'static [(&'static str, &'static str)],
    }
    let cases = [
        Case {
            what: "a small and a large machine: the large takes units until its share is as low",
            machines: &[("a", 1024, 200), ("b", 4096, 400)],
            units: &[
                ("u1", 512, 50),
                ("u2", 512, 50),
                ("u3", 512, 50),
                ("u4", 512, 50),
                ("u5", 512, 50),
                ("u6", 512, 50),
            ],
            // u1: equal room, equal load, by ID -> a (50% left); then b
            // has the most room until it is at 50% too (u2..u5); u6: equal
            // room, a has fewer units.
            want: &[
                ("u1", "a"),
                ("u2", "b"),
                ("u3", "b"),
                ("u4", "b"),
                ("u5", "b"),
                ("u6", "a"),
            ],
        },
        Case {
            what: "the scarcer kind counts: cores",
            machines: &[("a", 8192, 100), ("b", 2048, 400)],
            units: &[("u1", 256, 50), ("u2", 256, 50)],
            // u1 -> a (tie, ID); a has 50% of its cores left, b 87.5% -> b.
            want: &[("u1", "a"), ("u2", "b")],
        },
        Case {
            what: "a unit goes only where it fits",
            machines: &[("a", 256, 400), ("b", 1024, 100)],
            units: &[("big", 512, 50), ("wide", 128, 200)],
            want: &[("big", "b"), ("wide", "a")],
        },
        Case {
            what: "no reservation: fleet's least-loaded, whatever the sizes",
            machines: &[("a", 256, 100), ("b", 65536, 6400)],
            units: &[("u1", 0, 0), ("u2", 0, 0), ("u3", 0, 0)],
            want: &[("u1", "a"), ("u2", "b"), ("u3", "a")],
        },
    ];
    for c in cases {
        let mut s = Scheduler::new();
        for (id, m, k) in c.machines {
            machine(&mut s, id, *m, *k);
        }
        for (n, m, k) in c.units {
            s.set_unit(n, true, &sized(n, *m, *k, &[]));
            s.run();
        }
        let got: Vec<(String, String)> = c
            .units
            .iter()
            .map(|(n, _, _)| (n.to_string(), on(&s, n).join(",")))
            .collect();
        let want: Vec<(String, String)> = c
            .want
            .iter()
            .map(|(n, m)| (n.to_string(), m.to_string()))
            .collect();
        assert_eq!(got, want, "{}", c.what);
    }
}

#[test]
fn a_unit_that_fits_nowhere_waits_with_its_reason_until_there_is_room() {
    let mut s = Scheduler::new();
    machine(&mut s, "a", 1024, 200);
    machine(&mut s, "b", 1024, 200);
    for n in ["u1", "u2", "u3", "u4"] {
        s.set_unit(n, true, &sized(n, 512, 100, &[]));
    }
    s.set_unit("huge", true, &sized("huge", 2048, 100, &[]));
    s.run();
    assert!(on(&s, "huge").is_empty());
    assert_eq!(
        s.why_unscheduled("huge").as_deref(),
        Some(
            "fits on no machine: 2 machines have too little room left for its reservation \
             (2048 MiB of memory and 1.00 core)"
        )
    );
    for m in used(&s).values() {
        assert!(res(1024, 200).covers(m));
    }
    // A fifth of the same size also waits; when u1 leaves, it takes u1's room.
    s.set_unit("u5", true, &sized("u5", 512, 100, &[]));
    s.run();
    assert!(on(&s, "u5").is_empty());
    let u1_was = on(&s, "u1");
    s.set_unit("u1", false, &sized("u1", 512, 100, &[]));
    s.run();
    assert_eq!(on(&s, "u5"), u1_was);
    // A machine with room joins: the huge unit goes there at once.
    machine(&mut s, "c", 4096, 400);
    s.run();
    assert_eq!(on(&s, "huge"), ["c"]);
    assert_eq!(s.why_unscheduled("huge"), None);
    // Placed units do not move for the new machine.
    assert_eq!(on(&s, "u2").len(), 1);
    assert_ne!(on(&s, "u2"), ["c"]);
}

#[test]
fn a_lost_machines_units_are_placed_again_by_fit_and_the_rest_wait() {
    let mut s = Scheduler::new();
    machine(&mut s, "a", 1024, 400);
    machine(&mut s, "b", 1024, 400);
    for n in ["u1", "u2", "u3"] {
        s.set_unit(n, true, &sized(n, 512, 100, &[]));
    }
    s.run();
    // a: u1, u3; b: u2 (the most room, then by ID).
    assert_eq!(on(&s, "u1"), ["a"]);
    assert_eq!(on(&s, "u2"), ["b"]);
    assert_eq!(on(&s, "u3"), ["a"]);
    s.remove_machine("a");
    s.run();
    // b has room for one more: u1 (name order); u3 waits, reported.
    assert_eq!(on(&s, "u1"), ["b"]);
    assert!(on(&s, "u3").is_empty());
    assert!(s
        .why_unscheduled("u3")
        .is_some_and(|w| w.contains("1 machine has too little room left")));
    assert!(res(1024, 400).covers(&used(&s)["b"]));
}

#[test]
fn a_machine_that_shrinks_keeps_its_units_in_name_order_while_they_fit() {
    let mut s = Scheduler::new();
    machine(&mut s, "a", 4096, 400);
    for n in ["u1", "u2", "u3"] {
        s.set_unit(n, true, &sized(n, 1024, 100, &[]));
    }
    s.run();
    assert_eq!(used(&s)["a"], res(3072, 300));
    machine(&mut s, "a", 2048, 400);
    s.run();
    assert_eq!(on(&s, "u1"), ["a"]);
    assert_eq!(on(&s, "u2"), ["a"]);
    assert!(on(&s, "u3").is_empty());
    // It grows again: u3 is back.
    machine(&mut s, "a", 8192, 400);
    s.run();
    assert_eq!(on(&s, "u3"), ["a"]);
}

#[test]
fn a_unit_whose_reservation_grows_moves_if_it_must() {
    let mut s = Scheduler::new();
    machine(&mut s, "a", 1024, 400);
    machine(&mut s, "b", 4096, 400);
    s.set_unit("x", true, &sized("x", 512, 100, &[]));
    s.set_unit("y", true, &sized("y", 512, 100, &[]));
    s.run();
    assert_eq!(on(&s, "x"), ["a"]);
    // x now needs more than a has: it moves; y stays.
    let y_was = on(&s, "y");
    s.set_unit("x", true, &sized("x", 2048, 100, &[]));
    s.run();
    assert_eq!(on(&s, "x"), ["b"]);
    assert_eq!(on(&s, "y"), y_was);
    for (m, u) in used(&s) {
        let cap = if m == "a" {
            res(1024, 400)
        } else {
            res(4096, 400)
        };
        assert!(cap.covers(&u), "{m} {u:?}");
    }
}

#[test]
fn the_rules_and_fit_together() {
    // A follower that does not fit beside its peer waits, saying so.
    let mut s = Scheduler::new();
    machine(&mut s, "a", 1024, 400);
    machine(&mut s, "b", 8192, 400);
    s.set_unit("db.service", true, &sized("db.service", 768, 100, &[]));
    s.set_unit(
        "side.service",
        true,
        &sized("side.service", 512, 100, &[("MachineOf", "db.service")]),
    );
    // Pin db to the small machine.
    s.set_unit(
        "db.service",
        true,
        &sized("db.service", 768, 100, &[("MachineID", "a")]),
    );
    s.run();
    assert_eq!(on(&s, "db.service"), ["a"]);
    assert!(on(&s, "side.service").is_empty());
    assert_eq!(
        s.why_unscheduled("side.service").as_deref(),
        Some(
            "fits on no machine: 1 machine does not run its MachineOf units; \
             1 machine has too little room left for its reservation (512 MiB of memory and 1.00 core)"
        )
    );
    // MachineMetadata first, then room.
    let mut s = Scheduler::new();
    let disk = |v: &str| [("disk".to_string(), v.to_string())].into();
    s.set_machine("a", &disk("ssd"), res(512, 100));
    s.set_machine("b", &disk("hdd"), res(8192, 800));
    s.set_unit(
        "fast.service",
        true,
        &sized(
            "fast.service",
            1024,
            100,
            &[("MachineMetadata", "disk=ssd")],
        ),
    );
    s.run();
    assert!(on(&s, "fast.service").is_empty());
    assert!(s.why_unscheduled("fast.service").is_some_and(|w| w
        .contains("1 machine does not match its MachineMetadata; 1 machine has too little room")));
    // A global unit goes wherever it fits, and says where it does not.
    let mut s = Scheduler::new();
    machine(&mut s, "a", 256, 100);
    machine(&mut s, "b", 1024, 100);
    machine(&mut s, "c", 1024, 100);
    s.set_unit(
        "g.service",
        true,
        &sized("g.service", 512, 10, &[("Global", "true")]),
    );
    s.run();
    assert_eq!(on(&s, "g.service"), ["b", "c"]);
    assert_eq!(
        s.why_unscheduled("g.service").as_deref(),
        Some("no room for its reservation (512 MiB of memory and 0.10 cores) on 1 of 3 machines")
    );
    // Not wanted: no reason.
    s.set_unit(
        "g.service",
        false,
        &sized("g.service", 512, 10, &[("Global", "true")]),
    );
    s.run();
    assert_eq!(s.why_unscheduled("g.service"), None);
    // No machine at all.
    let mut s = Scheduler::new();
    s.set_unit("lone.service", true, &sized("lone.service", 1, 1, &[]));
    s.run();
    assert_eq!(
        s.why_unscheduled("lone.service").as_deref(),
        Some("no machine is in the cluster")
    );
}

const IDS: [&str; 4] = ["m1", "m2", "m3", "m4"];
const NAMES: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];

#[derive(Debug, Clone)]
enum Change {
    Machine(usize, Resources),
    MachineGone(usize),
    Unit(usize, bool, Resources, bool),
    UnitGone(usize),
}

fn arb_res() -> impl Strategy<Value = Resources> {
    (0u64..5, 0u64..5).prop_map(|(m, c)| res(m * 256, c * 50))
}

fn arb_change() -> impl Strategy<Value = Change> {
    prop_oneof![
        2 => (0..IDS.len(), (1u64..9, 1u64..9)).prop_map(|(i, (m, c))| Change::Machine(i, res(m * 256, c * 50))),
        1 => (0..IDS.len()).prop_map(Change::MachineGone),
        5 => (0..NAMES.len(), any::<u8>(), arb_res(), any::<u8>())
            .prop_map(|(i, w, r, g)| Change::Unit(i, w % 5 != 0, r, g % 7 == 0)),
        1 => (0..NAMES.len()).prop_map(Change::UnitGone),
    ]
}

proptest! {
    /// After any sequence of changes, each followed by a run: no machine
    /// holds more than its capacity, what the scheduler counts is what is
    /// placed, and no wanted unit that waits would fit on any machine.
    #[test]
    fn never_overcommitted_and_nothing_waits_that_fits(changes in proptest::collection::vec(arb_change(), 1..50)) {
        let mut s = Scheduler::new();
        let mut caps: BTreeMap<String, Resources> = BTreeMap::new();
        for c in changes {
            match c {
                Change::Machine(i, r) => {
                    machine(&mut s, IDS[i], r.memory, r.cores);
                    caps.insert(IDS[i].to_string(), r);
                }
                Change::MachineGone(i) => {
                    s.remove_machine(IDS[i]);
                    caps.remove(IDS[i]);
                }
                Change::Unit(i, wanted, r, global) => {
                    let g = if global { "true" } else { "false" };
                    let n = NAMES[i];
                    s.set_unit(n, wanted, &sized(n, r.memory, r.cores, &[("Global", g)]));
                }
                Change::UnitGone(i) => s.remove_unit(NAMES[i]),
            }
            s.run();
            let sums = used(&s);
            for (m, cap) in &caps {
                let u = sums.get(m).copied().unwrap_or_default();
                prop_assert!(cap.covers(&u), "{} holds {:?} of {:?}", m, u, cap);
                prop_assert_eq!(s.machines[m].used, u, "the count of {}", m);
            }
            for (n, e) in &s.units {
                if !e.wanted {
                    prop_assert!(e.on.is_empty(), "{} is not wanted", n);
                    continue;
                }
                for m in caps.keys() {
                    if !e.on.contains(m) && (e.req.global || e.on.is_empty()) {
                        prop_assert!(!s.may_run(n, m), "{} waits but fits on {}", n, m);
                    }
                }
            }
        }
    }
}
