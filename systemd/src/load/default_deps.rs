//! systemd's default dependencies, added over the whole unit set once it
//! is loaded (systemd.service(5), systemd.socket(5), systemd.timer(5),
//! systemd.path(5), systemd.target(5), systemd.special(7)). A systemd
//! unit file that does not say `DefaultDependencies=no`
//! ([`Origin::default_dependencies`]) gets, by its kind:
//!
//! | kind | added |
//! | --- | --- |
//! | `.service` | `Requires=` + `After=sysinit.target`, `After=basic.target`, `Conflicts=` + `Before=shutdown.target` |
//! | `.socket` | `Before=sockets.target`, `Requires=` + `After=sysinit.target`, `Conflicts=` + `Before=shutdown.target` |
//! | `.timer` | `Before=timers.target`, `Requires=` + `After=sysinit.target`, `After=time-set.target time-sync.target` with an `OnCalendar=`, `Conflicts=` + `Before=shutdown.target` |
//! | `.path` | `Before=paths.target`, `Requires=` + `After=sysinit.target`, `Conflicts=` + `Before=shutdown.target` |
//! | `.target` | `Conflicts=` + `Before=shutdown.target` (not `shutdown.target` itself), and `After=` what it pulls in (`target_order.rs`) |
//!
//! A `.mount`'s are its translation's (`systemd/translate/mount.rs`). Only
//! units that are in the set are named: systemd's `Requires=` on a unit
//! that does not exist would fail every service of a directory that has
//! no `sysinit.target` (a test's, a container's), where systemd always
//! has one. Adding them twice changes nothing, so a unit made later from
//! a template goes through the same pass with the set it joins.

use super::target_order;
use flotilla_units::spec::{Names, Origin, TargetList, UnitSpec};
use flotilla_units::unit_name::UnitName;
use std::collections::BTreeSet;

/// Adds systemd's default dependencies to every unit of `units` that has
/// them (the table above), then a target's ordering after what it pulls
/// in.
pub fn add_default_dependencies(units: &mut [(UnitSpec, Origin)]) {
    let provided: BTreeSet<String> = units
        .iter()
        .flat_map(|(s, _)| s.provides.iter().cloned())
        .collect();
    for (spec, origin) in units.iter_mut() {
        if origin.default_dependencies {
            by_kind(spec, origin, &|n: &str| provided.contains(n));
        }
    }
    target_order::order_targets(units);
}

/// The default dependencies of one unit by its kind; `known` says whether
/// a name is in the set.
fn by_kind(spec: &mut UnitSpec, origin: &mut Origin, known: &dyn Fn(&str) -> bool) {
    for (list, name) in defaults(spec) {
        if known(name) && !spec.provides.iter().any(|p| p == name) {
            add_name(spec, origin, list, name);
        }
    }
}

/// What the table above adds to `spec`, in order.
fn defaults(spec: &UnitSpec) -> Vec<(TargetList, &'static str)> {
    let shutdown = [
        (TargetList::Conflicts, "shutdown.target"),
        (TargetList::Before, "shutdown.target"),
    ];
    let suffix = UnitName::split(&spec.name).suffix;
    let before_own = match suffix.as_str() {
        "service" => None,
        "socket" => Some("sockets.target"),
        "timer" => Some("timers.target"),
        "path" => Some("paths.target"),
        "target" if spec.name != "shutdown.target" => return shutdown.to_vec(),
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    if let Some(t) = before_own {
        out.push((TargetList::Before, t));
    }
    out.push((TargetList::After, "sysinit.target"));
    out.push((TargetList::Requires, "sysinit.target"));
    if suffix == "service" {
        out.push((TargetList::After, "basic.target"));
    }
    let calendar = spec.timer().is_some_and(|t| !t.on_calendar.is_empty());
    if calendar {
        out.push((TargetList::After, "time-set.target"));
        out.push((TargetList::After, "time-sync.target"));
    }
    out.extend(shutdown);
    out
}

/// Adds `name` to the list `list` of `spec` (a `Requires=` through the
/// one pull rule, ordered when an `After=` names it), its position the
/// unit's own, unless it is there already.
fn add_name(spec: &mut UnitSpec, origin: &mut Origin, list: TargetList, name: &str) {
    if list == TargetList::Requires {
        // Positions stay aligned with their lists.
        for l in [TargetList::DependsOn, TargetList::Requires] {
            let len = names(spec, l).map_or(0, |v| v.len());
            let at = origin.pos;
            origin.resize_positions(l, len, at);
        }
        if let Some(l) = spec.pull(name, true, false) {
            let at = origin.pos;
            origin.push_position(l, at);
        }
        return;
    }
    let at = origin.pos;
    let Some(names) = names_mut(spec, list) else {
        return;
    };
    if names.iter().any(|n| n == name) {
        return;
    }
    names.push(name.to_string());
    let len = names.len();
    origin.resize_positions(list, len - 1, at);
    origin.push_position(list, at);
}

/// The names of `list` of `spec`, for the lists this pass touches.
fn names(spec: &UnitSpec, list: TargetList) -> Option<&Names> {
    Some(match list {
        TargetList::DependsOn => &spec.depends_on,
        TargetList::Requires => &spec.requires,
        TargetList::After => &spec.after,
        TargetList::Before => &spec.before,
        TargetList::Conflicts => &spec.conflicts,
        _ => return None,
    })
}

/// [`names`], to change.
fn names_mut(spec: &mut UnitSpec, list: TargetList) -> Option<&mut Names> {
    Some(match list {
        TargetList::DependsOn => &mut spec.depends_on,
        TargetList::Requires => &mut spec.requires,
        TargetList::After => &mut spec.after,
        TargetList::Before => &mut spec.before,
        TargetList::Conflicts => &mut spec.conflicts,
        _ => return None,
    })
}

#[cfg(test)]
mod tests;
