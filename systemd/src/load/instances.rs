//! Templates and their instances (systemd.unit(5)): a unit named
//! `name@inst.TYPE` that no file of its own defines is made from the
//! template `name@.TYPE` on the search path, with the specifiers of every
//! key expanded for the instance (`%i`, `%I`, `%n` …, and the machine's
//! facts the caller gives: `%H`, `%m`, `%b`) and the drop-ins of
//! `name@.TYPE.d/` and `name@inst.TYPE.d/` applied (in systemd's order,
//! [`crate::resolve_unit`]). A template itself is never a unit.
//!
//! Which instances exist is a fixpoint: every instance some unit names (a
//! dependency, an ordering, a trigger's unit, a `.wants/` link) or the
//! caller names (the target, a unit `initctl start` wants) is made, and
//! what it names in turn, until nothing new is named.
//!
//! [`Templates`] keeps what instantiation reads (the part of the path's
//! listing that instances look at, and the texts of the templates and
//! their drop-ins, read once when the path is loaded), so that the init
//! can make an instance later (`initctl start name@x.service`, a socket's
//! `Accept=yes`) without touching a disk.

use super::{LoadedPath, UnitSource};
use crate::{resolve_unit, translatable, Definition, EntryKind, MergedUnit, SearchDir};
use flotilla_units::diag::{Diagnostic, Pos};
use flotilla_units::load::ParsedUnit;
use flotilla_units::spec::{Origin, TargetList, UnitSpec};
use flotilla_units::specifier::SpecifierContext;
use flotilla_units::unit_name::{validate_systemd_unit_name, UnitName};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// What instantiating templates reads, kept from when the path was loaded.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Templates {
    /// The search path's entries that instances read: those of templates
    /// and instances (files, links, `.d/`, `.wants/`, `.requires/`) and
    /// the type-wide and prefix drop-in directories.
    dirs: Vec<SearchDir>,
    /// The texts of the templates' files and of those drop-ins.
    texts: BTreeMap<String, String>,
    /// The problems of those files that could not be read.
    unread: BTreeMap<String, Vec<Diagnostic>>,
    /// What specifiers resolve to besides the unit's own name.
    facts: SpecifierContext,
}

/// What a name made from a template is.
#[derive(Debug, Clone, PartialEq)]
pub enum Made {
    /// A unit (with its problems; no spec when any is an error), where it
    /// came from.
    Unit(Box<ParsedUnit>, UnitSource),
    /// Masked: the instance or its template is a link to `/dev/null` or an
    /// empty file (its path).
    Masked(String),
    /// Not an instance of a template on the path.
    NoTemplate,
}

/// The units made for the names asked for, and what could not be made.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Instances {
    /// Every valid instance made, with its origin.
    pub units: Vec<(UnitSpec, Origin)>,
    /// Where each instance came from (also those with errors).
    pub sources: Vec<UnitSource>,
    /// Instances that are masked, and the mask.
    pub masked: Vec<(String, String)>,
    /// Every problem: the instances' files, and units naming an instance
    /// whose template is not on the path.
    pub diagnostics: Vec<Diagnostic>,
    /// The names the caller asked for that are not units and no template
    /// makes (each is said in the caller's words).
    pub missing: Vec<String>,
}

/// Whether an entry of a search directory (by its path relative to the
/// directory) is one an instance may read: anything of a name with `@`,
/// and type-wide (`service.d/`) or prefix (`foo-.service.d/`) drop-ins.
fn read_by_instances(path: &str) -> bool {
    let top = path.split('/').next().unwrap_or(path);
    if top.contains('@') {
        return true;
    }
    let Some(unit) = top.strip_suffix(".d").filter(|_| path.contains('/')) else {
        return false;
    };
    // `service.d` (no dot left), or `foo-.service.d`.
    !unit.contains('.') || UnitName::split(unit).name.ends_with('-')
}

impl Templates {
    /// Keeps what instances of the templates `templates` read from the
    /// search path `dirs`, reading the files with `read`; `facts` are what
    /// specifiers resolve to (the unit's own are set per instance).
    pub fn read(
        dirs: &[SearchDir],
        templates: &[UnitSource],
        facts: &SpecifierContext,
        read: &mut super::ReadFile<'_>,
    ) -> Templates {
        let mut t = Templates {
            facts: facts.clone(),
            ..Templates::default()
        };
        if templates.is_empty() {
            return t;
        }
        let mut files: Vec<String> = templates.iter().map(|s| s.file.clone()).collect();
        for d in dirs {
            let entries: Vec<_> = d
                .entries
                .iter()
                .filter(|e| read_by_instances(&e.path))
                .cloned()
                .collect();
            for e in &entries {
                let is_conf = e.path.contains(".d/") && e.path.ends_with(".conf");
                if is_conf && !matches!(e.kind, EntryKind::Dir) {
                    files.push(format!("{}/{}", d.path, e.path));
                }
            }
            t.dirs.push(SearchDir {
                path: d.path.clone(),
                role: d.role,
                entries,
            });
        }
        for f in files {
            if t.texts.contains_key(&f) || t.unread.contains_key(&f) {
                continue;
            }
            match super::dir::file_text(&f, read(&f)) {
                Ok(text) => {
                    t.texts.insert(f, text);
                }
                Err(not) => {
                    t.unread.insert(f, not.diagnostics);
                }
            }
        }
        t
    }

    /// Whether there is no template to make instances of.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty() && self.unread.is_empty()
    }

    /// Makes the instance `name` from its template: the unit its links end
    /// at (`UnitSource::name`, which may be another instance's name: an
    /// alias), providing its other names. The `.wants/` and `.requires/`
    /// entries of its names and their templates become its `waits-for`
    /// and `depends-on` edges.
    pub fn instantiate(&self, name: &str) -> Made {
        let n = UnitName::split(name);
        if !n.is_instance() || validate_systemd_unit_name(name).is_err() || !translatable(name) {
            return Made::NoTemplate;
        }
        let r = resolve_unit(&self.dirs, name);
        let file = match &r.definition {
            Definition::File(f) if r.template.is_some() => f.clone(),
            Definition::Masked(m) => return Made::Masked(m.clone()),
            _ => return Made::NoTemplate,
        };
        // The unit is the instance the name's links end at (an alias of
        // another instance is that one), with its other names.
        let name = r.id.as_str();
        let source = UnitSource {
            name: name.to_string(),
            file: file.clone(),
            hides: r.hides.clone(),
            dropins: r.dropins.clone(),
            aliases: r.aliases.clone(),
            wants: r.wants.iter().filter(|w| *w != name).cloned().collect(),
            requires: r.requires.iter().filter(|w| *w != name).cloned().collect(),
        };
        let mut unread: Vec<Diagnostic> = Vec::new();
        for f in std::iter::once(&file).chain(&r.dropins) {
            unread.extend(self.unread.get(f).cloned().unwrap_or_default());
        }
        let Some(text) = self.texts.get(&file) else {
            let parsed = ParsedUnit {
                spec: None,
                origin: Origin::unplaced(&file),
                diagnostics: unread,
            };
            return Made::Unit(Box::new(parsed), source);
        };
        let dropins: Vec<(&str, &str)> = r
            .dropins
            .iter()
            .filter_map(|p| self.texts.get(p).map(|t| (p.as_str(), t.as_str())))
            .collect();
        let mut parsed =
            MergedUnit::merge((&file, text), &dropins).translate_with(&self.facts, name);
        for d in &mut parsed.diagnostics {
            d.message = format!("{} (instance {name})", d.message);
        }
        parsed.diagnostics.splice(0..0, unread);
        if let Some(spec) = parsed.spec.as_mut() {
            add_link_edges(spec, &source);
            for a in source
                .aliases
                .iter()
                .filter(|a| flotilla_units::spec::valid_systemd_name(a))
            {
                if !spec.provides.contains(a) {
                    spec.provides.push(a.clone());
                }
            }
        }
        Made::Unit(Box::new(parsed), source)
    }

    /// Makes every instance that `named` (the caller's names) and the
    /// units `units` name, and what those name in turn; `known` says
    /// whether a name is a unit (or a mask) already.
    pub fn instances(
        &self,
        named: &[String],
        units: &[(UnitSpec, Origin)],
        known: &dyn Fn(&str) -> bool,
    ) -> Instances {
        let mut out = Instances::default();
        if self.is_empty() {
            out.missing = named
                .iter()
                .filter(|n| !known(n) && UnitName::split(n).is_instance())
                .cloned()
                .collect();
            return out;
        }
        let mut made: BTreeSet<String> = BTreeSet::new();
        // (name, who named it): the caller, or a unit's file and position.
        let mut queue: Vec<(String, Option<(String, Pos)>)> =
            named.iter().rev().map(|n| (n.clone(), None)).collect();
        for (spec, origin) in units.iter().rev() {
            queue.extend(named_by(spec, origin));
        }
        while let Some((name, by)) = queue.pop() {
            if known(&name) || made.contains(&name) || !UnitName::split(&name).is_instance() {
                continue;
            }
            match self.instantiate(&name) {
                // An alias of a unit there is already, or made already.
                Made::Unit(_, source) if source.name != name && known(&source.name) => {}
                Made::Unit(_, source) if made.contains(&source.name) => {
                    made.insert(name);
                }
                Made::Unit(parsed, source) => {
                    made.insert(name);
                    made.insert(source.name.clone());
                    made.extend(source.aliases.iter().cloned());
                    out.diagnostics.extend(parsed.diagnostics);
                    out.sources.push(source);
                    if let Some(spec) = parsed.spec {
                        let next = named_by(&spec, &parsed.origin);
                        queue.extend(next.into_iter().rev());
                        out.units.push((spec, parsed.origin));
                    }
                }
                Made::Masked(mask) => {
                    made.insert(name.clone());
                    out.masked.push((name, mask));
                }
                Made::NoTemplate => match by {
                    None => {
                        if !out.missing.contains(&name) {
                            out.missing.push(name);
                        }
                    }
                    Some((file, pos)) => {
                        let template = UnitName::split(&name).template.unwrap_or_default();
                        out.diagnostics.push(Diagnostic::warning(
                            file,
                            pos,
                            format!(
                                "{name} is named here, but neither a unit file {name} nor its \
                                 template {template} is on the unit search path"
                            ),
                        ));
                    }
                },
            }
        }
        out
    }
}

/// The instances a unit names (by any list of unit names), each with the
/// unit's file and the position of the name in it.
fn named_by(spec: &UnitSpec, origin: &Origin) -> Vec<(String, Option<(String, Pos)>)> {
    let lists = [
        (&spec.depends_on, TargetList::DependsOn),
        (&spec.depends_ms, TargetList::DependsMs),
        (&spec.waits_for, TargetList::WaitsFor),
        (&spec.wants, TargetList::Wants),
        (&spec.requires, TargetList::Requires),
        (&spec.extras.requisite, TargetList::Requisite),
        (&spec.extras.part_of, TargetList::PartOf),
        (&spec.extras.upholds, TargetList::Upholds),
        (&spec.after, TargetList::After),
        (&spec.before, TargetList::Before),
        (&spec.conflicts, TargetList::Conflicts),
        (&spec.extras.triggers, TargetList::Triggers),
        (&spec.extras.on_failure, TargetList::OnFailure),
        (&spec.extras.on_success, TargetList::OnSuccess),
        (
            &spec.extras.reload_propagated_from,
            TargetList::ReloadPropagatedFrom,
        ),
        (
            &spec.extras.propagates_reload_to,
            TargetList::PropagatesReloadTo,
        ),
        (
            &spec.extras.stop_propagated_from,
            TargetList::StopPropagatedFrom,
        ),
        (
            &spec.extras.propagates_stop_to,
            TargetList::PropagatesStopTo,
        ),
    ];
    let mut out = Vec::new();
    for (names, list) in lists {
        for (i, n) in names.iter().enumerate() {
            if UnitName::split(n).is_instance() {
                let pos = origin.position(list, i).unwrap_or(origin.pos);
                out.push((n.clone(), Some((origin.file.clone(), pos))));
            }
        }
    }
    out
}

/// The `.wants/` and `.requires/` edges of an instance's source on its
/// spec: `requires` and `wants`, ordered only where an `After=` orders
/// them (`UnitSpec::pull`; a target's default ordering is added over the
/// whole set by `default_deps.rs`).
pub(super) fn add_link_edges(spec: &mut UnitSpec, source: &UnitSource) {
    for w in &source.requires {
        spec.pull(w, true, false);
    }
    for w in &source.wants {
        spec.pull(w, false, false);
    }
}

impl LoadedPath {
    /// The names this load has already: every unit's and what it
    /// provides, those of units with errors (a file of its own defines
    /// them) and the masked ones. A name among them is not made again
    /// from a template or from drop-ins alone.
    pub(super) fn known_names(&self) -> BTreeSet<String> {
        let mut known: BTreeSet<String> = BTreeSet::new();
        for (s, _) in &self.units {
            known.insert(s.name.clone());
            known.extend(s.provides.iter().cloned());
        }
        known.extend(self.sources.iter().map(|s| s.name.clone()));
        known.extend(self.masked.iter().map(|(n, _)| n.clone()));
        known
    }

    /// Adds the instances that `named` (the caller's names: the target,
    /// wanted units) and the path's units name ([`Templates::instances`]);
    /// returns the names asked for that are neither units nor instances of
    /// a template on the path.
    pub fn add_instances(&mut self, named: &[String]) -> Vec<String> {
        let known = self.known_names();
        let found = self
            .template_files
            .instances(named, &self.units, &|n| known.contains(n));
        self.units.extend(found.units);
        self.sources.extend(found.sources);
        self.masked.extend(found.masked);
        self.diagnostics.extend(found.diagnostics);
        found.missing
    }
}
