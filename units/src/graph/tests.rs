use super::*;
use crate::spec::UnitType;

fn unit(
    name: &str,
    provides: &[&str],
    on: &[&str],
    ms: &[&str],
    wf: &[&str],
) -> (UnitSpec, Origin) {
    let mut s = UnitSpec::new(name, UnitType::Virtual);
    if !provides.is_empty() {
        s.provides = provides.iter().map(|x| x.to_string()).collect();
    }
    s.depends_on = on.iter().map(|x| x.to_string()).collect();
    s.depends_ms = ms.iter().map(|x| x.to_string()).collect();
    s.waits_for = wf.iter().map(|x| x.to_string()).collect();
    (s, Origin::at(format!("{name}.yaml"), Pos::new(1, 7)))
}

#[test]
fn required_set_follows_every_kind() {
    let (g, d) = Graph::build(vec![
        unit("top", &["default"], &["a"], &["b"], &["c"]),
        unit("a", &[], &[], &[], &[]),
        unit("b", &[], &["d"], &[], &[]),
        unit("c", &[], &[], &[], &[]),
        unit("d", &[], &[], &[], &[]),
        unit("other", &[], &[], &[], &[]),
    ]);
    assert!(d.is_empty(), "{d:?}");
    let req = g.required_set("default").unwrap();
    let names: Vec<&str> = g
        .ids()
        .filter(|i| req[i.index()])
        .map(|i| g.node(i).spec.name.as_str())
        .collect();
    assert_eq!(names, vec!["a", "b", "c", "d", "top"]);
    assert!(g.required_set("nope").is_none());
}

#[test]
fn after_pulls_nothing_in_and_conflicts_keep_the_first_reached() {
    let with = |mut u: (UnitSpec, Origin), f: fn(&mut UnitSpec)| {
        f(&mut u.0);
        u
    };
    let (g, d) = Graph::build(vec![
        with(unit("top", &["default"], &["a"], &[], &["b"]), |s| {
            s.after = vec!["x".into()].into();
        }),
        // b conflicts with a, which is reached first (a depends-on
        // edge comes before a waits-for one): b is left out, and so is
        // c, which only b pulls in; x is only ordered against.
        with(unit("b", &[], &["c"], &[], &[]), |s| {
            s.conflicts = vec!["a".into()].into();
        }),
        unit("a", &[], &[], &[], &[]),
        unit("c", &[], &[], &[], &[]),
        unit("x", &[], &[], &[], &[]),
    ]);
    assert!(d.is_empty(), "{d:?}");
    let names = |req: Vec<bool>| -> Vec<&str> {
        g.ids()
            .filter(|i| req[i.index()])
            .map(|i| g.node(i).spec.name.as_str())
            .collect()
    };
    assert_eq!(names(g.required_set("default").unwrap()), ["a", "top"]);
    // Required on its own, b wins and pulls c in.
    assert_eq!(names(g.required_set("b").unwrap()), ["b", "c"]);
}

#[test]
fn duplicate_provides_names_both_units_and_drops_the_second() {
    let (g, d) = Graph::build(vec![
        unit("a", &["x"], &[], &[], &[]),
        unit("b", &["x", "y"], &[], &[], &[]),
    ]);
    assert_eq!(d.len(), 1);
    assert_eq!(
        d[0].to_string(),
        "b.yaml:1:7: target `x` is provided by both `a` (a.yaml:1:7) and `b`; `b` is left out"
    );
    assert_eq!(g.provider("x"), g.unit("a"));
    assert!(g.unit("b").is_none());
    assert!(Graph::build_strict(vec![
        unit("a", &["x"], &[], &[], &[]),
        unit("b", &["x"], &[], &[], &[])
    ])
    .is_err());
}

#[test]
fn duplicate_names_are_reported() {
    let (g, d) = Graph::build(vec![
        unit("a", &[], &[], &[], &[]),
        unit("a", &["q"], &[], &[], &[]),
    ]);
    assert_eq!(g.len(), 1);
    assert!(d[0].message.contains("duplicate unit name `a`"), "{d:?}");
}

#[test]
fn cycles_report_the_whole_path_and_leave_the_units_out() {
    let (g, d) = Graph::build(vec![
        unit("a", &[], &["b"], &[], &[]),
        unit("b", &[], &[], &["c"], &[]),
        unit("c", &[], &[], &[], &["a"]),
        unit("d", &[], &["a"], &[], &[]),
        unit("e", &[], &[], &[], &[]),
    ]);
    let errs: Vec<String> = d
        .iter()
        .filter(|x| x.is_error())
        .map(|x| x.to_string())
        .collect();
    assert_eq!(
        errs,
        vec!["a.yaml:1:7: dependency cycle: `a` --depends-on b--> `b` --depends-ms c--> `c` --waits-for a--> `a`; the units on it are left out"]
    );
    assert!(g.unit("a").is_none() && g.unit("b").is_none() && g.unit("c").is_none());
    // d now depends on a missing target: a warning.
    assert!(g.unit("d").is_some());
    assert!(d
        .iter()
        .any(|x| !x.is_error() && x.message.contains("depends-on `a`: no unit provides")));
}

/// An ordering cycle (`b` waits for `net`, whose provider is `before`
/// it, systemd's `Wants=` + `Before=` pattern) is broken by dropping the
/// ordering, with a warning, as systemd breaks one; both units stay.
#[test]
fn an_ordering_cycle_drops_the_ordering_and_keeps_the_units() {
    let mut b = unit("b", &[], &[], &[], &["net"]);
    b.0.before = vec!["net".into()].into();
    let (g, d) = Graph::build(vec![b, unit("net", &[], &[], &[], &[])]);
    assert!(g.unit("b").is_some() && g.unit("net").is_some());
    let msgs: Vec<String> = d.iter().map(|x| x.to_string()).collect();
    assert!(d.iter().all(|x| !x.is_error()), "{msgs:?}");
    assert!(
        msgs.iter()
            .any(|m| m.contains("ordering cycle through") && m.contains("dropped `b` before net")),
        "{msgs:?}"
    );
}

/// testsuite-03's 20 services, each `Requires=` and `After=` the next
/// (`depends-on`) around a ring: systemd units' cycle is broken by
/// dropping one ordering and keeping the requirement, with a warning, as
/// systemd starts them; every unit stays. A YAML ring stays an error
/// (`self_loop_is_a_cycle`).
#[test]
fn a_systemd_requirement_cycle_drops_one_ordering() {
    let ring: Vec<(UnitSpec, Origin)> = (0..3)
        .map(|i| {
            let next = format!("c{}.service", (i + 1) % 3);
            let (s, _) = unit(&format!("c{i}.service"), &[], &[&next], &[], &[]);
            let o = Origin::at(format!("c{i}.service"), Pos::new(3, 1));
            (s, o)
        })
        .collect();
    let (g, d) = Graph::build(ring);
    let msgs: Vec<String> = d.iter().map(|x| x.to_string()).collect();
    assert!(d.iter().all(|x| !x.is_error()), "{msgs:?}");
    assert!(
        msgs.iter()
            .any(|m| m.contains("ordering cycle through") && m.contains("it still requires it")),
        "{msgs:?}"
    );
    for i in 0..3 {
        let id = g.unit(&format!("c{i}.service")).expect("kept");
        assert!(!g.deps(id).is_empty(), "c{i} keeps its requirement");
    }
}

#[test]
fn self_loop_is_a_cycle() {
    let (_, d) = Graph::build(vec![unit("a", &[], &["a"], &[], &[])]);
    assert!(
        d[0].message
            .starts_with("dependency cycle: `a` --depends-on a--> `a`"),
        "{d:?}"
    );
}

#[test]
fn ghosts_provide_nothing() {
    let (s, o) = unit("old", &["x"], &["y"], &[], &[]);
    let (g, _) = Graph::build_with_ghosts(
        vec![unit("new", &["x"], &[], &[], &[])],
        vec![(Arc::new(s), o)],
    )
    .unwrap();
    assert_eq!(g.provider("x"), g.unit("new"));
    let old = g.unit("old").unwrap();
    assert!(g.node(old).ghost && g.deps(old).is_empty());
    // No unit of the set: a start of its name pulls in its name, which a
    // unit read from the search path now may give.
    assert_eq!(g.live_unit("old"), None);
    assert_eq!(g.live_unit("new"), g.unit("new"));
    assert_eq!(g.missing_pulls("old"), ["old"]);
    let read = [unit("old", &[], &[], &[], &[])];
    assert_eq!(g.units_to_load("old", &read), [0]);
}
