//! Instances made at run time: a name that no unit has but that a
//! template of the search path makes (`initctl start getty@tty2.service`,
//! `set-target name@x.target`, a socket's `Accept=yes` connection) becomes
//! a unit of the directory's set, with the instances it names in turn,
//! and the planner takes the set with it ([`Runtime::instantiate`]). The
//! templates' files were read when the path was (`flotilla_units::load::
//! Templates`): making an instance reads no disk, but after a re-exec,
//! which carries units and not files, the first instance made reads the
//! path again.
//!
//! A reload makes again every instance still named: by a unit, the
//! target or a want ([`Runtime::named_instances`]).

use super::Runtime;
use crate::sys::Sys;
use crate::unitdir;
use flotilla_units::unit_name::{validate_systemd_unit_name, UnitName};

impl<S: Sys> Runtime<S> {
    /// Makes the unit `name` from its template if it is an instance that
    /// is not a unit yet. `Ok(true)`: made (the planner has it);
    /// `Ok(false)`: nothing to make (a unit already, masked, or not an
    /// instance name); `Err`: why it cannot be made, for a reply (no
    /// template on the path, a bad name, errors in the template's files;
    /// nothing changed).
    pub(super) fn instantiate(&mut self, name: &str) -> Result<bool, String> {
        let g = self.planner.graph();
        let n = UnitName::split(name);
        let known = g.unit(name).is_some() || g.provider(name).is_some();
        if known || g.shape().masks.contains(name) || !n.is_instance() {
            return Ok(false);
        }
        validate_systemd_unit_name(name).map_err(|e| format!("no unit named `{name}`: {e}"))?;
        let mut fresh = false;
        let found = loop {
            if self.units.templates.is_none() {
                self.read_templates()?;
                fresh = true;
            }
            let g = self.planner.graph();
            let Some(templates) = &self.units.templates else {
                return Ok(false);
            };
            let found = templates.instances(&[name.to_string()], &[], &|n| {
                g.unit(n).is_some() || g.provider(n).is_some() || g.shape().masks.contains(n)
            });
            // A template written since the templates were read (systemd
            // reads an instance's files when it is first asked for): read
            // them again, once.
            if found.missing.is_empty() || fresh {
                break found;
            }
            self.units.templates = None;
        };
        if !found.missing.is_empty() {
            return Err(format!(
                "no unit named `{name}`, and no template {} on the unit search path",
                n.template.unwrap_or_default()
            ));
        }
        if let Some((_, mask)) = found.masked.iter().find(|(m, _)| m == name) {
            return Err(format!("`{name}` is masked ({mask})"));
        }
        let errors: Vec<String> = found
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(ToString::to_string)
            .collect();
        if !errors.is_empty() {
            return Err(format!(
                "`{name}` cannot be made from its template: {}",
                errors.join("; ")
            ));
        }
        for d in &found.diagnostics {
            self.sys.console(&format!("init: {d}"));
        }
        self.add_to_dir_set(found.units, name)?;
        self.sys
            .console(&format!("init: {name} made from its template"));
        Ok(true)
    }

    /// The search path's templates read again (`Runtime::instantiate`).
    fn read_templates(&mut self) -> Result<(), String> {
        let loaded = unitdir::load_units_naming(&self.sys, &self.settings, &[])
            .map_err(|e| format!("cannot read the unit search path: {e}"))?;
        self.units.templates = Some(loaded.template_files);
        Ok(())
    }

    /// The names a reload makes instances of besides those the units name:
    /// the target, the wanted units and the instances of the connections
    /// the init holds (`accepts.rs`); also the wanted units that need no
    /// file (a started slice), made again from their drop-ins.
    pub(super) fn named_instances(&self) -> Vec<String> {
        std::iter::once(self.planner.target())
            .chain(self.planner.wants().map(|(n, _)| n))
            .chain(self.accepts.instances())
            .filter(|n| {
                // A transient slice stays the transient set's (or is read
                // from its file in /run/systemd/transient).
                let fileless = flotilla_systemd::load::loads_without_file(n)
                    && !self
                        .units
                        .transient_sets()
                        .values()
                        .flatten()
                        .any(|u| u.name == *n);
                UnitName::split(n).is_instance() || fileless
            })
            .map(str::to_string)
            .collect()
    }
}
