//! A target's default dependencies, as systemd adds them: a target is
//! ordered after what it wants or requires, except where the other unit
//! is ordered after the target (its `After=` names the target, or the
//! target's `Before=` names it), which would make a loop (systemd's
//! `unit_add_default_target_dependency`). The translator orders a
//! `.target` file after its `Wants=`/`Requires=` (unless
//! `DefaultDependencies=no`), and the `.wants/`/`.requires/` links of a
//! virtual unit are ordered the same way; what the translator cannot see,
//! the other unit's ordering, is read here, over the whole unit set.

use crate::spec::{Origin, TargetList, UnitSpec, UnitType};

/// Whether the unit providing `name` in `units` is ordered after
/// `target`: then the target is not ordered after it.
pub(super) fn after_target(units: &[(UnitSpec, Origin)], target: &UnitSpec, name: &str) -> bool {
    target.before.iter().any(|b| b == name)
        || units
            .iter()
            .filter(|(s, _)| s.provides.iter().any(|p| p == name))
            .any(|(s, _)| s.after.iter().any(|a| target.provides.contains(a)))
}

/// Takes back the default ordering of each `.target` file after a unit
/// that is ordered after the target: its `depends-on`/`waits-for` on that
/// unit that no `After=` of its own asked for becomes `requires`/`wants`.
pub(super) fn unorder_loops(units: &mut [(UnitSpec, Origin)]) {
    let mut moves: Vec<(usize, TargetList, String)> = Vec::new();
    for (i, (t, o)) in units.iter().enumerate() {
        if t.kind != UnitType::Virtual || !o.file.ends_with(".target") {
            continue;
        }
        let lists = [
            (TargetList::DependsOn, &t.depends_on),
            (TargetList::WaitsFor, &t.waits_for),
        ];
        for (list, names) in lists {
            let implicit = names.iter().filter(|n| !t.after.contains(n));
            for n in implicit.filter(|n| after_target(units, t, n)) {
                moves.push((i, list, n.clone()));
            }
        }
    }
    for (i, from, name) in moves {
        let Some((spec, origin)) = units.get_mut(i) else {
            continue;
        };
        let (names, to) = match from {
            TargetList::DependsOn => (&mut spec.depends_on, TargetList::Requires),
            _ => (&mut spec.waits_for, TargetList::Wants),
        };
        let Some(k) = names.iter().position(|n| *n == name) else {
            continue;
        };
        names.remove(k);
        let pos = origin.positions_mut(from);
        let at = (k < pos.len()).then(|| pos.remove(k));
        let hard = to == TargetList::Requires;
        if spec.pull(&name, hard, false).is_some() {
            origin.positions_mut(to).extend(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(name: &str, file: &str, f: impl FnOnce(&mut UnitSpec)) -> (UnitSpec, Origin) {
        let kind = if name.ends_with(".target") {
            UnitType::Virtual
        } else {
            UnitType::ForegroundSupervised
        };
        let mut s = UnitSpec::new(name, kind);
        f(&mut s);
        (s, Origin::unplaced(file))
    }

    #[test]
    fn a_target_is_not_ordered_after_what_is_ordered_after_it() {
        let mut units = vec![
            unit("multi-user.target", "/lib/multi-user.target", |s| {
                s.provides.push("runlevel2.target".into());
                s.waits_for = vec!["utmp.service".into(), "web.service".into()];
                s.depends_on = vec!["basic.target".into(), "late.service".into()];
                s.before = vec!["late.service".into()];
            }),
            unit("utmp.service", "/lib/utmp.service", |s| {
                s.after = vec!["runlevel2.target".into()];
            }),
            unit("web.service", "/lib/web.service", |_| {}),
            unit("late.service", "/lib/late.service", |_| {}),
            unit("basic.target", "/lib/basic.target", |_| {}),
            // A YAML virtual unit's lists are as written.
            unit("own.target", "/etc/own.target.yaml", |s| {
                s.waits_for = vec!["utmp2.service".into()];
            }),
            unit("utmp2.service", "/lib/utmp2.service", |s| {
                s.after = vec!["own.target".into()];
            }),
        ];
        unorder_loops(&mut units);
        let t = &units[0].0;
        assert_eq!(t.waits_for, ["web.service"]);
        assert_eq!(t.wants, ["utmp.service"]);
        assert_eq!(t.depends_on, ["basic.target"]);
        assert_eq!(t.requires, ["late.service"]);
        assert_eq!(units[5].0.waits_for, ["utmp2.service"]);
    }
}
