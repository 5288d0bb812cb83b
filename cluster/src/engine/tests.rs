//! The engine's plans: what is written, in which groups, under which guard.

use super::*;

const P: &str = "/f/";

fn unit(m: &mut Model, name: &str, desired: &str, xfleet: &[(&str, &str)]) {
    let mut options = vec![flotilla_units::fleet::UnitOption {
        section: "Service".into(),
        name: "ExecStart".into(),
        value: format!("/bin/sleep {}", name.len()),
    }];
    for (k, v) in xfleet {
        options.push(flotilla_units::fleet::UnitOption {
            section: "X-Fleet".into(),
            name: k.to_string(),
            value: v.to_string(),
        });
    }
    let u = StoredUnit {
        name: name.into(),
        hash: flotilla_systemd::unit_hash(&options),
        options,
    };
    let k = Keys::new(P);
    m.apply_value(&k.unit(name), &serde_json::to_vec(&u).unwrap(), false);
    m.apply_value(&k.desired(name), desired.as_bytes(), false);
}

fn machine(m: &mut Model, id: &str, present: bool) {
    let mach = Machine {
        id: id.into(),
        ..Default::default()
    };
    let k = Keys::new(P);
    m.apply_value(
        &k.machine(id),
        &serde_json::to_vec(&mach).unwrap(),
        !present,
    );
}

/// A model with nothing stored yet (resumed) and these machines present.
fn resumed_on(machines: &[&str]) -> Model {
    let mut m = Model::new(Keys::new(P));
    m.resume();
    for id in machines {
        machine(&mut m, id, true);
    }
    m
}

/// `unit` (launched, non-global) as a leader stored it on `on`: its
/// schedule key and its placement.
fn stored_on(m: &mut Model, on: &str, unit: &str) {
    let (su, _) = &m.units[unit];
    let v = serde_json::to_vec(&Assignment {
        desired: ClusterState::Launched,
        hash: su.hash.clone(),
        options: su.options.clone(),
        global: false,
    })
    .unwrap();
    let k = Keys::new(P);
    m.apply_value(&k.schedule(on, unit), &v, false);
    m.apply_value(&k.placement(unit), on.as_bytes(), false);
}

/// The keys each group writes, as `put KEY` / `del KEY`, without the prefix.
fn keys(groups: &[Vec<Op>]) -> Vec<Vec<String>> {
    groups
        .iter()
        .map(|g| {
            g.iter()
                .map(|op| match op {
                    Op::Put { key, .. } => format!("put {}", &key[P.len()..]),
                    Op::Delete { key } => format!("del {}", &key[P.len()..]),
                })
                .collect()
        })
        .collect()
}

#[test]
fn writes_only_what_changed_one_group_per_unit() {
    let mut m = resumed_on(&["m1", "m2"]);
    unit(&mut m, "a.service", "launched", &[]);
    unit(&mut m, "b.service", "launched", &[]);
    unit(&mut m, "t@.service", "inactive", &[]);
    assert_eq!(
        keys(&m.plan().groups),
        vec![
            vec!["put schedule/m1/a.service", "put placement/a.service"],
            vec!["put schedule/m2/b.service", "put placement/b.service"],
        ]
    );
    // Nothing changed: nothing written.
    assert!(m.plan().is_empty());
    // One more unit: only its keys.
    unit(&mut m, "c.service", "loaded", &[]);
    assert_eq!(
        keys(&m.plan().groups),
        vec![vec!["put schedule/m1/c.service", "put placement/c.service"]]
    );
    // A desired-state change rewrites that unit's schedule key only.
    m.apply_value(&Keys::new(P).desired("c.service"), b"launched", false);
    assert_eq!(
        keys(&m.plan().groups),
        vec![vec!["put schedule/m1/c.service"]]
    );
    // A lost machine: its units move, each in one transaction (the old
    // key deleted with the new one put), in transactions guarded by m1
    // being absent still.
    machine(&mut m, "m1", false);
    let p = m.plan();
    assert!(p.groups.is_empty());
    assert_eq!(p.off_absent.keys().collect::<Vec<_>>(), ["m1"]);
    assert_eq!(
        keys(&p.off_absent["m1"]),
        vec![
            vec![
                "del schedule/m1/a.service",
                "put schedule/m2/a.service",
                "put placement/a.service"
            ],
            vec![
                "del schedule/m1/c.service",
                "put schedule/m2/c.service",
                "put placement/c.service"
            ],
        ]
    );
    // Inactive: unscheduled.
    m.apply_value(&Keys::new(P).desired("b.service"), b"inactive", false);
    assert_eq!(
        keys(&m.plan().groups),
        vec![vec!["del schedule/m2/b.service", "del placement/b.service"]]
    );
    // A global unit: one key per machine, no placement.
    unit(&mut m, "g.service", "launched", &[("Global", "true")]);
    machine(&mut m, "m3", true);
    assert_eq!(
        keys(&m.plan().groups),
        vec![vec![
            "put schedule/m2/g.service",
            "put schedule/m3/g.service"
        ]]
    );
    // Destroyed: every key of it goes.
    m.apply_value(&Keys::new(P).unit("g.service"), b"", true);
    assert_eq!(
        keys(&m.plan().groups),
        vec![vec![
            "del schedule/m2/g.service",
            "del schedule/m3/g.service"
        ]]
    );
}

#[test]
fn a_batch_is_written_machine_by_machine() {
    let mut m = resumed_on(&["m1", "m2"]);
    for u in ["a", "b", "c", "d"] {
        unit(&mut m, &format!("{u}.service"), "launched", &[]);
    }
    // Placed a, c on m1 and b, d on m2 (least loaded, ties by ID):
    // written m1's first, then m2's.
    let firsts: Vec<String> = keys(&m.plan().groups)
        .into_iter()
        .map(|g| g[0].clone())
        .collect();
    assert_eq!(
        firsts,
        [
            "put schedule/m1/a.service",
            "put schedule/m1/c.service",
            "put schedule/m2/b.service",
            "put schedule/m2/d.service"
        ]
    );
}

#[test]
fn a_new_leader_resumes_what_is_stored() {
    let k = Keys::new(P);
    let mut m = Model::new(k.clone());
    machine(&mut m, "m1", true);
    machine(&mut m, "m2", true);
    unit(&mut m, "a.service", "launched", &[]);
    unit(&mut m, "b.service", "launched", &[]);
    // Stored by the previous leader: a on m2 (kept), b on a machine
    // that is gone (moved), and a half-written c (placement only).
    stored_on(&mut m, "m2", "a.service");
    stored_on(&mut m, "gone", "b.service");
    m.apply_value(&k.placement("c.service"), b"m1", false);
    m.resume();
    // (Removals first: they go to no machine.) b leaves an absent
    // machine: guarded on it.
    let p = m.plan();
    assert_eq!(keys(&p.groups), vec![vec!["del placement/c.service"]]);
    assert_eq!(
        keys(&p.off_absent["gone"]),
        vec![vec![
            "del schedule/gone/b.service",
            "put schedule/m1/b.service",
            "put placement/b.service"
        ]]
    );
    assert!(m.plan().is_empty());
}

/// Which groups carry the guard "that machine is still absent": those
/// that take a non-global unit off a machine with no presence key
/// (moved or only removed); not a global unit's key of that machine
/// (it has no copy elsewhere to fear), nor anything about a present
/// machine. A model read anew once the machine is back keeps the unit
/// there.
#[test]
fn moves_off_an_absent_machine_are_guarded_on_its_absence() {
    let k = Keys::new(P);
    let mut m = resumed_on(&["m1", "m2"]);
    unit(&mut m, "a.service", "launched", &[]);
    unit(&mut m, "b.service", "launched", &[]);
    unit(&mut m, "g.service", "launched", &[("Global", "true")]);
    let p = m.plan();
    assert!(p.off_absent.is_empty(), "every machine is present");
    assert_eq!(p.groups.len(), 3);
    // m1 goes: a moves to m2 under m1's guard; g's key on m1 goes
    // under the leader's guard alone.
    machine(&mut m, "m1", false);
    let p = m.plan();
    assert_eq!(keys(&p.groups), vec![vec!["del schedule/m1/g.service"]]);
    assert_eq!(p.off_absent.keys().collect::<Vec<_>>(), ["m1"]);
    assert_eq!(
        keys(&p.off_absent["m1"]),
        vec![vec![
            "del schedule/m1/a.service",
            "put schedule/m2/a.service",
            "put placement/a.service"
        ]]
    );
    // A unit only removed (made inactive) while on an absent machine:
    // guarded too (the machine that is back keeps it until the engine
    // removes it, with the machine present, in a later plan).
    let mut m2 = Model::new(k.clone());
    machine(&mut m2, "m2", true);
    unit(&mut m2, "b.service", "launched", &[]);
    stored_on(&mut m2, "away", "b.service");
    m2.resume();
    m2.apply_value(&k.desired("b.service"), b"inactive", false);
    let p = m2.plan();
    assert_eq!(
        keys(&p.off_absent["away"]),
        vec![vec![
            "del schedule/away/b.service",
            "del placement/b.service"
        ]]
    );
    // The move failed its guard (m1 registered again): read anew, the
    // model has a on m1, present, and writes nothing.
    let mut again = Model::new(k.clone());
    machine(&mut again, "m1", true);
    machine(&mut again, "m2", true);
    unit(&mut again, "a.service", "launched", &[]);
    stored_on(&mut again, "m1", "a.service");
    again.resume();
    assert!(again.plan().is_empty(), "a stays on m1");
}

/// What a leader coming out of an etcd outage waits for before it
/// schedules: the machines its stored schedule names that have no
/// presence; once such a machine registers again its units stay.
#[test]
fn a_recovering_leader_knows_the_absent_machines_with_units() {
    let k = Keys::new(P);
    let mut m = Model::new(k.clone());
    machine(&mut m, "m1", true);
    unit(&mut m, "a.service", "launched", &[]);
    stored_on(&mut m, "away", "a.service");
    assert_eq!(m.absent_with_units(), BTreeSet::from(["away".to_string()]));
    machine(&mut m, "away", true);
    assert!(m.absent_with_units().is_empty());
    m.resume();
    assert!(m.plan().is_empty(), "nothing moves once it is back");
}
