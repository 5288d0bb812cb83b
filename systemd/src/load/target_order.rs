//! A target's default dependencies on what it pulls in, as systemd adds
//! them (`unit_add_default_target_dependency`): a `.target` is ordered
//! after each unit it wants or requires (`Wants=`, `Requires=`,
//! `BindsTo=`, its `.wants/`/`.requires/` links), unless either side says
//! `DefaultDependencies=no`, or the other unit is ordered after the target
//! (its `After=` names the target, or the target's `Before=` names it),
//! which would make a loop. A YAML unit the target pulls in counts as one
//! with default dependencies (it has no way to say otherwise). What the
//! translator cannot see, the other unit, is read here, over the whole
//! unit set; a YAML virtual unit's own links are ordered by the same rule
//! where they are added (`path.rs`).

use flotilla_units::spec::{Origin, TargetList, UnitSpec};

/// Whether the unit providing `name` in `units` is ordered after
/// `target`: then the target is not ordered after it.
pub(super) fn after_target(units: &[(UnitSpec, Origin)], target: &UnitSpec, name: &str) -> bool {
    target.before.iter().any(|b| b == name)
        || units
            .iter()
            .filter(|(s, _)| s.provides.iter().any(|p| p == name))
            .any(|(s, _)| s.after.iter().any(|a| target.provides.contains(a)))
}

/// Whether the unit providing `name` takes default dependencies: a YAML
/// unit, or a systemd unit without `DefaultDependencies=no`. A name no
/// unit provides: no (systemd orders only against loaded units).
fn takes_defaults(units: &[(UnitSpec, Origin)], name: &str) -> bool {
    units
        .iter()
        .find(|(s, _)| s.provides.iter().any(|p| p == name))
        .is_some_and(|(_, o)| o.default_dependencies || o.is_yaml())
}

/// Orders each `.target` file that has default dependencies after what
/// it pulls in without ordering (its `requires`/`wants` become
/// `depends-on`/`waits-for`), by the rule above.
pub(super) fn order_targets(units: &mut [(UnitSpec, Origin)]) {
    let mut moves: Vec<(usize, TargetList, String)> = Vec::new();
    for (i, (t, o)) in units.iter().enumerate() {
        if !o.default_dependencies || !t.name.ends_with(".target") {
            continue;
        }
        let lists = [
            (TargetList::Requires, &t.requires),
            (TargetList::Wants, &t.wants),
        ];
        for (list, names) in lists {
            for n in names {
                if takes_defaults(units, n) && !after_target(units, t, n) {
                    moves.push((i, list, n.clone()));
                }
            }
        }
    }
    for (i, from, name) in moves {
        let Some((spec, origin)) = units.get_mut(i) else {
            continue;
        };
        let (names, to, ordered) = match from {
            TargetList::Requires => (&mut spec.requires, TargetList::DependsOn, true),
            _ => (&mut spec.wants, TargetList::WaitsFor, false),
        };
        let Some(k) = names.iter().position(|n| *n == name) else {
            continue;
        };
        names.remove(k);
        let at = origin.remove_position(from, k);
        let len = if ordered {
            spec.depends_on.len()
        } else {
            spec.waits_for.len()
        };
        if spec.pull(&name, ordered, true).is_some() {
            let own = origin.pos;
            origin.resize_positions(to, len, own);
            origin.push_position(to, at.unwrap_or(own));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(name: &str, file: &str, f: impl FnOnce(&mut UnitSpec)) -> (UnitSpec, Origin) {
        let kind = if name.ends_with(".target") {
            flotilla_units::spec::UnitType::Virtual
        } else {
            flotilla_units::spec::UnitType::ForegroundSupervised
        };
        let mut s = UnitSpec::new(name, kind);
        f(&mut s);
        let mut o = Origin::unplaced(file);
        o.default_dependencies = !file.ends_with(".yaml") && !file.contains("nodefault");
        (s, o)
    }

    #[test]
    fn a_target_is_ordered_after_what_it_pulls_in_but_never_into_a_loop() {
        let mut units = vec![
            unit("multi-user.target", "/lib/multi-user.target", |s| {
                s.provides.push("runlevel2.target".into());
                s.wants = vec![
                    "utmp.service".into(),
                    "web.service".into(),
                    "early.service".into(),
                    "own.service".into(),
                ]
                .into();
                s.requires = vec!["basic.target".into(), "late.service".into()].into();
                s.before = vec!["late.service".into()].into();
            }),
            unit("utmp.service", "/lib/utmp.service", |s| {
                s.after = vec!["runlevel2.target".into()].into();
            }),
            unit("web.service", "/lib/web.service", |_| {}),
            unit("early.service", "/lib/nodefault/early.service", |_| {}),
            unit("own.service", "/etc/own.yaml", |_| {}),
            unit("late.service", "/lib/late.service", |_| {}),
            unit("basic.target", "/lib/basic.target", |_| {}),
            // DefaultDependencies=no on the target: nothing is ordered.
            unit("net.target", "/lib/nodefault/net.target", |s| {
                s.wants = vec!["web.service".into()].into();
            }),
        ];
        order_targets(&mut units);
        let t = &units[0].0;
        assert_eq!(t.waits_for, ["web.service", "own.service"]);
        assert_eq!(t.wants, ["utmp.service", "early.service"]);
        assert_eq!(t.depends_on, ["basic.target"]);
        assert_eq!(t.requires, ["late.service"]);
        assert_eq!(units[7].0.wants, ["web.service"]);
        assert!(units[7].0.waits_for.is_empty());
        // Twice: nothing more.
        let once = units.clone();
        order_targets(&mut units);
        assert_eq!(once, units);
    }
}
