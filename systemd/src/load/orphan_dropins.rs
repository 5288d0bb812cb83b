//! Drop-ins for units that are not there. systemd applies `NAME.d/` to
//! `NAME` and says nothing when there is no `NAME`; an administrator who
//! misspells a unit in `/etc/systemd/system/ngnix.service.d/` then wonders
//! why the override does nothing. So a drop-in directory in a
//! configuration directory (`Config` or `Runtime` role: not a vendor's,
//! which ship drop-ins for units of packages that may not be installed)
//! whose unit the path does not have is a warning, and nothing else.
//! Type-wide (`service.d`) and prefix (`foo-.service.d`) directories apply
//! to many units and are never orphans.

use super::LoadedPath;
use crate::{DirRole, SearchDir};
use flotilla_units::diag::{Diagnostic, Pos};
use flotilla_units::unit_name::UnitName;
use std::collections::BTreeSet;

/// The kinds of systemd units (a `KIND.d/` directory is type-wide).
const KINDS: &[&str] = &[
    "service",
    "socket",
    "target",
    "timer",
    "path",
    "mount",
    "automount",
    "swap",
    "slice",
    "scope",
    "device",
];

/// A warning for each drop-in directory of a configuration directory
/// whose unit is not on the path (`out` holds what the path has).
pub(super) fn warnings(dirs: &[SearchDir], out: &LoadedPath) -> Vec<Diagnostic> {
    let mut known: BTreeSet<&str> = BTreeSet::new();
    for s in out.sources.iter().chain(&out.templates) {
        known.insert(&s.name);
        known.extend(s.aliases.iter().map(String::as_str));
    }
    known.extend(out.instances.iter().map(String::as_str));
    for (name, _) in out.masked.iter().chain(&out.unsupported) {
        known.insert(name);
        // A YAML file's mask is named after the file.
        for x in [".yaml", ".yml"] {
            if let Some(n) = name.strip_suffix(x) {
                known.insert(n);
            }
        }
    }
    let mut seen = BTreeSet::new();
    let mut warnings = Vec::new();
    for d in dirs
        .iter()
        .filter(|d| matches!(d.role, DirRole::Config | DirRole::Runtime))
    {
        for e in &d.entries {
            let Some((sub, _)) = e.path.split_once('/') else {
                continue;
            };
            let Some(unit) = sub.strip_suffix(".d") else {
                continue;
            };
            if KINDS.contains(&unit)
                || known.contains(unit)
                || UnitName::split(unit).name.ends_with('-')
            {
                continue;
            }
            let path = format!("{}/{sub}", d.path);
            if seen.insert(path.clone()) {
                warnings.push(Diagnostic::warning(
                    path,
                    Pos::default(),
                    format!("drop-ins for {unit}, which is not on the unit search path; ignored"),
                ));
            }
        }
    }
    warnings
}
