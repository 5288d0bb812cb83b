//! Properties on random graphs: the planner against the simulated world
//! on random DAGs (docs/design.md, "Tests").

use super::*;

/// A random DAG: unit i may depend only on units with a larger index.
/// Its edges are of every kind but `requires`, whose stop of a requirer
/// when the required unit fails may come in the same instant as the start
/// of what depends on the requirer (started, then stopped at once): the
/// start check here would take that for a broken rule. `requires` has its
/// own tests above.
fn random_units() -> impl Strategy<Value = (Vec<UnitSpec>, Vec<Behaviour>)> {
    (3usize..14).prop_flat_map(|n| {
        let deps =
            proptest::collection::vec(proptest::collection::vec((0usize..n, 0u8..4), 0..4), n);
        let kinds = proptest::collection::vec(0u8..5, n);
        let fails = proptest::collection::vec(0u8..8, n);
        (Just(n), deps, kinds, fails).prop_map(|(n, deps, kinds, fails)| {
            let mut units = Vec::new();
            let mut behaviours = Vec::new();
            for i in 0..n {
                let kind = match kinds[i] {
                    0 => UnitType::Virtual,
                    1 => UnitType::Oneshot,
                    2 => UnitType::ForegroundNotified,
                    3 => UnitType::BackgroundScripted,
                    _ => UnitType::ForegroundSupervised,
                };
                let mut s = spec(&format!("u{i:02}"), kind);
                s.restart = RestartPolicy::No;
                for &(j, k) in &deps[i] {
                    if j <= i {
                        continue;
                    }
                    let t = format!("u{j:02}");
                    match k {
                        0 => s.depends_on.push(t),
                        1 => s.depends_ms.push(t),
                        2 => s.waits_for.push(t),
                        3 => s.wants.push(t),
                        _ => s.requires.push(t),
                    }
                }
                s.depends_on.dedup();
                units.push(s);
                behaviours.push(if fails[i] == 0 && kind != UnitType::Virtual {
                    Behaviour::Exit(1)
                } else {
                    Behaviour::Serve
                });
            }
            (units, behaviours)
        })
    })
}

fn required_names(w: &World, target: &str) -> Vec<String> {
    let req = w.p.graph().required_set(target).unwrap();
    w.p.graph()
        .ids()
        .filter(|i| req[i.index()])
        .map(|i| w.name(i))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, .. ProptestConfig::default() })]

    /// Nothing starts before its hard and milestone dependencies are active;
    /// waits-for only orders (checked on every spawn by the world); what runs
    /// is exactly inside the required set.
    #[test]
    fn starts_respect_dependencies((units, behaviours) in random_units(), target in 0usize..3) {
        let names: Vec<String> = units.iter().map(|u| u.name.clone()).collect();
        let mut w = World::new(units, "none", PlannerOptions::default());
        for (n, b) in names.iter().zip(&behaviours) {
            w.behaviour.insert(n.clone(), *b);
        }
        let t = names[target.min(names.len() - 1)].clone();
        w.set_target(&t);
        let req = required_names(&w, &t);
        for n in &names {
            let st = w.state(n);
            if !req.contains(n) {
                prop_assert_eq!(st, UnitState::Disabled, "{} outside the set", n);
            } else {
                prop_assert!(st != UnitState::Disabled, "{} inside the set is disabled", n);
            }
        }
        w.check_requires();
        // Settled: nothing is left starting in this instant world.
        for n in &req {
            prop_assert!(w.state(n) != UnitState::Starting && w.state(n) != UnitState::Stopping, "{} is {}", n, w.state(n));
        }
    }

    /// A target switch stops exactly the units outside the new set, and
    /// dependents stop before their dependencies.
    #[test]
    fn target_switch_stops_exactly_the_rest((units, _) in random_units(), a in 0usize..14, b in 0usize..14) {
        let names: Vec<String> = units.iter().map(|u| u.name.clone()).collect();
        let ta = names[a % names.len()].clone();
        let tb = names[b % names.len()].clone();
        let mut w = World::new(units, &ta, PlannerOptions::default());
        let before: Vec<(String, UnitState)> = names.iter().map(|n| (n.clone(), w.state(n))).collect();
        w.events.clear();
        w.set_target(&tb);
        let req_b = required_names(&w, &tb);
        let mut stopped = Vec::new();
        for (n, st) in &before {
            let was_up = st.is_active();
            let now = w.state(n);
            if req_b.contains(n) {
                if was_up {
                    prop_assert!(now.is_active(), "{} stayed required but is {}", n, now);
                    prop_assert!(!w.events.iter().any(|e| matches!(e, Event::Signal(x, _) if x == n)), "{} was signalled", n);
                }
            } else {
                prop_assert_eq!(now, UnitState::Disabled, "{} outside the new set", n);
                if was_up { stopped.push(n.clone()); }
            }
        }
        // Dependents first: a stopped unit's disabled event comes after every
        // stopped dependent's.
        let g = w.p.graph();
        for n in &stopped {
            let id = g.unit(n).unwrap();
            let my = w.index_of(&Event::State(n.clone(), UnitState::Disabled));
            // `wants` and `requires` order nothing: only ordered dependents.
            for d in g.dependents(id).iter().filter(|d| d.kind.orders()) {
                let dn = w.name(d.unit);
                if stopped.contains(&dn) {
                    let theirs = w.index_of(&Event::State(dn.clone(), UnitState::Disabled));
                    prop_assert!(theirs < my, "{} stopped after its dependency {}", dn, n);
                }
            }
        }
    }

    /// Shutdown drains everything to disabled, dependents first.
    #[test]
    fn shutdown_drains_to_disabled((units, behaviours) in random_units(), t in 0usize..14) {
        let names: Vec<String> = units.iter().map(|u| u.name.clone()).collect();
        let mut w = World::new(units, "none", PlannerOptions::default());
        for (n, b) in names.iter().zip(&behaviours) {
            w.behaviour.insert(n.clone(), *b);
        }
        w.set_target(&names[t % names.len()].clone());
        w.events.clear();
        w.shutdown();
        prop_assert!(w.p.drained(), "not drained: {:?}", names.iter().map(|n| (n, w.state(n))).collect::<BTreeMap<_, _>>());
        prop_assert!(w.p.next_deadline().is_none());
    }
}
