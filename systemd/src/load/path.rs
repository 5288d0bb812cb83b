//! The units of a unit search path (docs/contract.md §3c): the directories in order,
//! listed by the caller ([`SearchDir`]), their files read through a
//! callback (the init reads them through its `Sys`), turned into units.
//!
//! - YAML units: every `*.yaml` and `*.yml` file at the top of a directory.
//!   A file name in an earlier directory hides the same file name later (a
//!   link to `/dev/null` hides it and defines nothing); a unit name given
//!   by files in two directories is the earlier one's. Drop-ins:
//!   `NAME.d/*.yaml` ([`parse_yaml_with_dropins`]).
//! - systemd units: every unit name on the path that the translator makes
//!   ([`crate::translatable`]), defined by the file that wins on
//!   the path ([`resolve_unit`]: hiding, links, masks), merged with its
//!   `NAME.d/*.conf` drop-ins ([`MergedUnit`]). A name that is an alias (a
//!   link to another unit's file) is provided by that unit; a masked name
//!   is no unit; a template is not a unit but the file its instances are
//!   made from: each instance something names is made
//!   ([`super::instances`]).
//! - `NAME.wants/` and `NAME.requires/` entries add `Wants=` and
//!   `Requires=` edges to the unit named `NAME` (YAML or systemd): `wants`
//!   and `requires`, which order nothing, unless an `After=` orders them
//!   (one naming a unit no file defines is no edge, only shown:
//!   `Origin::unfound_links`);
//!   a target's default ordering after them is added over the whole set
//!   (`default_deps.rs`, `target_order.rs`).
//!
//! A YAML unit and a systemd unit file of the same name: the earlier
//! directory's wins (a YAML unit in its directory replaces a packaged
//! `.service`). Whatever the path holds that does not become a unit is
//! reported in [`LoadedPath`] (masks, templates, kinds flotilla does not
//! run) for `init --check`.

use super::dir::file_text;
use super::dir::{FileRead, ReadFile};
use super::instances::Templates;
use crate::{
    resolve_unit, translatable, unit_names, yaml_dropins, Definition, EntryKind, MergedUnit,
    SearchDir,
};
use flotilla_units::diag::{Diagnostic, Pos};
use flotilla_units::load::parse_yaml_with_dropins;
use flotilla_units::load::ParsedUnit;
use flotilla_units::spec::{valid_systemd_name, Origin, TargetList, UnitSpec};
use flotilla_units::specifier::SpecifierContext;
use flotilla_units::unit_name::UnitName;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Where one unit came from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UnitSource {
    /// The unit's name.
    pub name: String,
    /// The file that defines it.
    pub file: String,
    /// Files of the same name later on the path, which it hides.
    pub hides: Vec<String>,
    /// Its drop-ins, in the order they apply.
    pub dropins: Vec<String>,
    /// Other names that link to it (its aliases; it provides them).
    pub aliases: Vec<String>,
    /// Units it wants through `NAME.wants/` (the edges it was given).
    pub wants: Vec<String>,
    /// Units it requires through `NAME.requires/`.
    pub requires: Vec<String>,
}

/// The units of a search path, and what the path holds besides.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LoadedPath {
    /// Every valid unit.
    pub units: Vec<(UnitSpec, Origin)>,
    /// Every problem of every file.
    pub diagnostics: Vec<Diagnostic>,
    /// Where each unit came from (also those with errors), YAML units
    /// first, then systemd units by name.
    pub sources: Vec<UnitSource>,
    /// Masked names and the mask (a link to `/dev/null`, or an empty file).
    pub masked: Vec<(String, String)>,
    /// Templates (`name@.service`) and their files: a unit is made of one
    /// for each instance something asks for.
    pub templates: Vec<UnitSource>,
    /// The instances named in `.wants/` and `.requires/` directories whose
    /// template is on the path.
    pub instances: Vec<String>,
    /// Unit files of kinds flotilla does not run (`.mount`, `.slice`, …),
    /// with their files; not loaded.
    pub unsupported: Vec<(String, String)>,
    /// What making more instances later reads (`initctl start
    /// name@x.service`): the templates' files and drop-ins, kept.
    pub template_files: Templates,
    /// The manager's settings (`system.conf` and its drop-ins), when the
    /// config's `system-conf` asks for them; their warnings are among
    /// [`LoadedPath::diagnostics`].
    #[serde(default)]
    pub manager: crate::system_conf::ManagerConfig,
    /// What the read saw, to tell whether a read now would see the same
    /// (the caller that reads through the system fills it).
    #[serde(default)]
    pub stamp: flotilla_units::load::PathStamp,
}

/// Loads the units of the search path `dirs` (highest priority first),
/// reading files with `read`.
pub fn load_path(dirs: &[SearchDir], read: &mut ReadFile<'_>) -> LoadedPath {
    load_path_with(dirs, &SpecifierContext::system(""), &[], read)
}

/// [`load_path`] with the machine's facts for the specifiers (`facts`)
/// and the names the caller asks for besides the units' own (the target,
/// wanted units): every instance named is made from its template
/// ([`LoadedPath::add_instances`]).
pub fn load_path_with(
    dirs: &[SearchDir],
    facts: &SpecifierContext,
    named: &[String],
    read: &mut ReadFile<'_>,
) -> LoadedPath {
    let mut out = LoadedPath::default();
    let mut defined: BTreeMap<String, usize> = BTreeMap::new();
    load_yaml_units(dirs, read, &mut out, &mut defined);
    load_systemd_units(dirs, facts, read, &mut out, &mut defined);
    add_edges(dirs, &mut out);
    out.template_files = Templates::read(dirs, &out.templates, facts, read);
    out.add_instances(named);
    add_named(dirs, facts, named, read, &mut out);
    super::default_deps::add_default_dependencies(&mut out.units);
    let orphans = super::orphan_dropins::warnings(dirs, &out);
    out.diagnostics.extend(orphans);
    // Each file's problems together, files in path order (a stable sort:
    // each file's own stay in their order).
    out.diagnostics.sort_by(|a, b| a.file.cmp(&b.file));
    out
}

/// The index of the first directory with a top-level entry `name`.
fn dir_of(dirs: &[SearchDir], name: &str) -> Option<usize> {
    dirs.iter().position(|d| d.entry(name).is_some())
}

/// A YAML unit file's name at the top of a directory.
fn is_yaml_name(name: &str) -> bool {
    !name.starts_with('.')
        && !name.contains('/')
        && [".yaml", ".yml"]
            .iter()
            .any(|x| name.len() > x.len() && name.ends_with(x))
}

/// A file's text, or its problem recorded in `out`.
fn text(out: &mut LoadedPath, read: &mut ReadFile<'_>, path: &str) -> Option<String> {
    match file_text(path, read(path)) {
        Ok(t) => Some(t),
        Err(not) => {
            out.diagnostics.extend(not.diagnostics);
            None
        }
    }
}

/// The drop-ins' paths and texts (an unreadable one is a problem of its
/// own and left out).
fn dropin_texts(
    out: &mut LoadedPath,
    read: &mut ReadFile<'_>,
    paths: &[String],
) -> Vec<(String, String)> {
    paths
        .iter()
        .filter_map(|p| text(out, read, p).map(|t| (p.clone(), t)))
        .collect()
}

/// Adds to `out` the units of `named` (the caller's names) that no file
/// defines and that load without one
/// ([`super::fileless::without_file`]): the slices
/// something holds, made again at a reload.
fn add_named(
    dirs: &[SearchDir],
    facts: &SpecifierContext,
    named: &[String],
    read: &mut ReadFile<'_>,
    out: &mut LoadedPath,
) {
    let mut known = out.known_names();
    for name in named {
        // Each name once, though the caller may name it twice.
        if !known.insert(name.clone()) {
            continue;
        }
        if let Some(parsed) = super::fileless::without_file(dirs, facts, name, read) {
            take(out, parsed);
        }
    }
}

/// Records a parsed unit: its problems, the unit when it is valid.
pub(super) fn take(out: &mut LoadedPath, parsed: ParsedUnit) -> Option<usize> {
    out.diagnostics.extend(parsed.diagnostics);
    let spec = parsed.spec?;
    out.units.push((spec, parsed.origin));
    Some(out.units.len() - 1)
}

fn load_yaml_units(
    dirs: &[SearchDir],
    read: &mut ReadFile<'_>,
    out: &mut LoadedPath,
    defined: &mut BTreeMap<String, usize>,
) {
    // Each file name once: the earliest directory's; the later ones are
    // hidden by it.
    let mut files: BTreeMap<&str, (usize, String, Vec<String>)> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for (i, d) in dirs.iter().enumerate() {
        for e in d.entries.iter().filter(|e| is_yaml_name(&e.path)) {
            let path = format!("{}/{}", d.path, e.path);
            match files.get_mut(e.path.as_str()) {
                Some((_, _, hidden)) => hidden.push(path),
                None => {
                    if e.kind == EntryKind::Dir {
                        out.diagnostics.push(Diagnostic::warning(
                            &path,
                            Pos::default(),
                            "a directory, not a unit file; skipped",
                        ));
                        continue;
                    }
                    order.push(&e.path);
                    files.insert(&e.path, (i, path, Vec::new()));
                }
            }
        }
    }
    let dropin_dirs: BTreeSet<&str> = dirs
        .iter()
        .flat_map(|d| &d.entries)
        .filter_map(|e| e.path.split_once('/').map(|(sub, _)| sub))
        .filter(|sub| sub.ends_with(".d"))
        .collect();
    let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
    for file_name in order {
        let Some((dir, path, hides)) = files.remove(file_name) else {
            continue;
        };
        let is_mask = dirs.get(dir).is_some_and(|d| {
            d.entry(file_name).is_some_and(|e| {
                matches!(&e.kind, EntryKind::Symlink { target }
                        if crate::link_target(&d.path, target) == "/dev/null")
            })
        });
        if is_mask {
            out.masked.push((file_name.to_string(), path));
            continue;
        }
        let Some(t) = text(out, read, &path) else {
            continue;
        };
        // The name decides the drop-ins: read it first.
        let plain = flotilla_units::load::parse_yaml(&path, &t);
        let name = plain
            .spec
            .as_ref()
            .map(|s| s.name.clone())
            .or_else(|| flotilla_units::load::yaml_unit_name(&t));
        // Most units have none: look only when a `NAME.d` is on the path.
        let dropins = name
            .as_deref()
            .filter(|n| dropin_dirs.contains(format!("{n}.d").as_str()))
            .map(|n| yaml_dropins(dirs, n))
            .unwrap_or_default();
        let parsed = if dropins.is_empty() {
            plain
        } else {
            let texts = dropin_texts(out, read, &dropins);
            let pairs: Vec<(&str, &str)> = texts
                .iter()
                .map(|(p, t)| (p.as_str(), t.as_str()))
                .collect();
            parse_yaml_with_dropins(&path, &t, &pairs)
        };
        let Some(name) = name else {
            out.diagnostics.extend(parsed.diagnostics);
            continue;
        };
        // The same unit name in an earlier directory hides this one.
        if let Some(&first) = by_name.get(&name) {
            let first_dir = out
                .sources
                .get(first)
                .and_then(|s| dir_of_file(dirs, &s.file));
            if first_dir != Some(dir) {
                if let Some(s) = out.sources.get_mut(first) {
                    s.hides.push(path);
                }
                continue;
            }
        }
        take(out, parsed);
        by_name.entry(name.clone()).or_insert(out.sources.len());
        defined.entry(name.clone()).or_insert(dir);
        out.sources.push(UnitSource {
            name,
            file: path,
            hides,
            dropins,
            ..UnitSource::default()
        });
    }
}

/// The index of the directory holding `file` at its top.
fn dir_of_file(dirs: &[SearchDir], file: &str) -> Option<usize> {
    dirs.iter().position(|d| {
        file.strip_prefix(&d.path)
            .and_then(|r| r.strip_prefix('/'))
            .is_some_and(|r| !r.contains('/'))
    })
}

fn load_systemd_units(
    dirs: &[SearchDir],
    facts: &SpecifierContext,
    read: &mut ReadFile<'_>,
    out: &mut LoadedPath,
    defined: &mut BTreeMap<String, usize>,
) {
    for name in unit_names(dirs) {
        let r = resolve_unit(dirs, &name);
        if r.id != name {
            continue; // an alias: its unit provides it
        }
        let file = match &r.definition {
            Definition::File(p) => p.clone(),
            Definition::Masked(p) => {
                out.masked.push((name, p.clone()));
                continue;
            }
            Definition::NotFound => continue,
        };
        let source = UnitSource {
            name: name.clone(),
            file: file.clone(),
            hides: r.hides.clone(),
            dropins: r.dropins.clone(),
            aliases: r.aliases.clone(),
            ..UnitSource::default()
        };
        if UnitName::split(&name).is_template() {
            // Not a unit: what its instances are made from.
            out.templates.push(source);
            continue;
        }
        // A scope is made of running processes over D-Bus: its file is
        // read only where the init writes it (systemd loads no other
        // `.scope` file).
        let made_elsewhere =
            name.ends_with(".scope") && crate::DirRole::of_file(&file) != crate::DirRole::Transient;
        if !translatable(&name) || made_elsewhere {
            out.unsupported.push((name, file));
            continue;
        }
        let here = dir_of(dirs, &name).unwrap_or(usize::MAX);
        if let Some(&yaml_dir) = defined.get(&name) {
            if yaml_dir <= here {
                // A YAML unit of this name comes first: it hides the file.
                if let Some(s) = out.sources.iter_mut().find(|s| s.name == name) {
                    s.hides.push(file);
                    s.hides.extend(r.hides);
                }
                continue;
            }
        }
        let Some(unit_text) = read_definition(out, read, dirs, &name, &file) else {
            continue;
        };
        let texts = dropin_texts(out, read, &r.dropins);
        let pairs: Vec<(&str, &str)> = texts
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let parsed = MergedUnit::merge((&file, &unit_text), &pairs).translate_with(facts, &name);
        if let Some(i) = take(out, parsed) {
            if let Some((spec, _)) = out.units.get_mut(i) {
                for a in r.aliases.iter().filter(|a| valid_systemd_name(a)) {
                    if !spec.provides.contains(a) {
                        spec.provides.push(a.clone());
                    }
                }
            }
        }
        // A systemd file of a YAML unit's name in an earlier directory
        // hides the YAML unit.
        if let Some(pos) = out.sources.iter().position(|s| s.name == name) {
            let yaml = out.sources.remove(pos);
            out.units.retain(|(_, o)| o.file != yaml.file);
            out.diagnostics.retain(|d| d.file != yaml.file);
            let mut source = source;
            source.hides.push(yaml.file);
            defined.insert(name, here);
            out.sources.push(source);
            continue;
        }
        defined.insert(name, here);
        out.sources.push(source);
    }
}

/// The text of the file `file` that defines `name`; a file that cannot be
/// read is reported at the path's entry of that name (the link, when the
/// entry is a link to it).
fn read_definition(
    out: &mut LoadedPath,
    read: &mut ReadFile<'_>,
    dirs: &[SearchDir],
    name: &str,
    file: &str,
) -> Option<String> {
    let entry = dir_of(dirs, name)
        .and_then(|i| dirs.get(i))
        .map(|d| format!("{}/{name}", d.path))
        .filter(|e| e != file);
    match (read(file), entry) {
        (FileRead::Failed(why), Some(link)) => {
            out.diagnostics.push(Diagnostic::error(
                link,
                Pos::default(),
                format!("a link to {file}, which cannot be read: {why}"),
            ));
            None
        }
        (got, _) => match file_text(file, got) {
            Ok(t) => Some(t),
            Err(not) => {
                out.diagnostics.extend(not.diagnostics);
                None
            }
        },
    }
}

/// Adds the `NAME.wants/` and `NAME.requires/` edges to each unit named
/// `NAME`. An entry naming a unit that is not on the path is a warning at
/// the entry, and no edge (its name is kept in the unit's
/// `Origin::unfound_links`, to show); one naming a masked unit is no edge
/// either.
fn add_edges(dirs: &[SearchDir], out: &mut LoadedPath) {
    let provided: BTreeSet<String> = out
        .units
        .iter()
        .flat_map(|(s, _)| s.provides.iter().cloned())
        .collect();
    let masked: BTreeSet<&str> = out.masked.iter().map(|(n, _)| n.as_str()).collect();
    let templates: BTreeSet<&str> = out.templates.iter().map(|t| t.name.as_str()).collect();
    // Names that have a file on the path whose unit did not load (an
    // error in it, reported at the file): the entry is no edge, and its
    // warning says why rather than that the unit is nowhere.
    let broken: BTreeSet<String> = out
        .sources
        .iter()
        .flat_map(|s| std::iter::once(&s.name).chain(&s.aliases))
        .filter(|n| !provided.contains(*n))
        .cloned()
        .collect();
    let mut instances = BTreeSet::new();
    let mut warnings = Vec::new();
    for source in &mut out.sources {
        let r = resolve_unit(dirs, &source.name);
        let mut unfound = Vec::new();
        for (kind, wanted) in [("wants", &r.wants), ("requires", &r.requires)] {
            for w in wanted.iter().filter(|w| **w != source.name) {
                let n = UnitName::split(w);
                let instance_of = n
                    .template
                    .as_deref()
                    .filter(|t| n.is_instance() && templates.contains(t));
                if instance_of.is_some() {
                    instances.insert(w.clone());
                } else if masked.contains(w.as_str()) {
                    continue;
                } else if !provided.contains(w) {
                    let why = if broken.contains(w) {
                        "which could not be loaded (its error is reported at its file); ignored"
                    } else {
                        // Shown as a dependency on a unit not found, as
                        // systemd shows it; nothing to start.
                        let list = if kind == "wants" {
                            TargetList::Wants
                        } else {
                            TargetList::Requires
                        };
                        unfound.push((list, w.clone()));
                        "which is not on the unit search path; shown, not started"
                    };
                    warnings.push(Diagnostic::warning(
                        link_path(dirs, &source.name, kind, w),
                        Pos::default(),
                        format!("{} {kind} {w}, {why}", source.name),
                    ));
                    continue;
                }
                let list = if kind == "wants" {
                    &mut source.wants
                } else {
                    &mut source.requires
                };
                list.push(w.clone());
            }
        }
        let Some(i) = out.units.iter().position(|(s, _)| s.name == source.name) else {
            continue;
        };
        out.units[i].1.set_unfound_links(unfound);
        // `Requires=`/`Wants=` edges, which order nothing (an `After=`
        // does: `UnitSpec::pull`). A systemd target's ordering after them
        // is its default dependencies' (`default_deps.rs`); a YAML
        // virtual unit (its own kind of target) is ordered after its
        // links by the same rule, unless the other unit is ordered after
        // it (`target_order.rs`).
        let units = &out.units;
        let (spec, origin) = &units[i];
        let yaml_target = spec.kind.row().runs == flotilla_units::spec::Runs::Nothing
            && (origin.file.ends_with(".yaml") || origin.file.ends_with(".yml"));
        let ordered =
            |w: &String| yaml_target && !super::target_order::after_target(units, spec, w);
        let pulls: Vec<(bool, bool, String)> = (source.requires.iter().map(|w| (true, w)))
            .chain(source.wants.iter().map(|w| (false, w)))
            .map(|(hard, w)| (hard, ordered(w), w.clone()))
            .collect();
        let (spec, _) = &mut out.units[i];
        for (hard, ordered, w) in pulls {
            if spec.pull(&w, hard, ordered).is_none() && !hard && spec.requires.contains(&w) {
                // Linked from both `.requires/` and `.wants/`: systemd
                // lists it under both (`Requires`, `Wants`); the `wants`
                // edge adds nothing to the `requires` one.
                if !spec.wants.contains(&w) {
                    spec.wants.push(w);
                }
            }
        }
    }
    out.diagnostics.extend(warnings);
    out.instances = instances.into_iter().collect();
}

/// Makes the unit `wanter` want `wanted` as a `NAME.wants/` entry does
/// (an enablement from elsewhere: a SysV script's runlevel link), through
/// the one pull rule (`UnitSpec::pull`: `waits-for`). Nothing when
/// `wanter` is not loaded.
pub fn add_want(out: &mut LoadedPath, wanter: &str, wanted: &str) {
    let Some((spec, _)) = out.units.iter_mut().find(|(s, _)| s.name == wanter) else {
        return;
    };
    spec.pull(wanted, false, true);
    if let Some(source) = out.sources.iter_mut().find(|s| s.name == wanter) {
        if !source.wants.iter().any(|w| w == wanted) {
            source.wants.push(wanted.to_string());
        }
    }
}

/// The path of the entry `NAME.KIND/UNIT` that comes first on the path.
fn link_path(dirs: &[SearchDir], name: &str, kind: &str, unit: &str) -> String {
    let rel = format!("{name}.{kind}/{unit}");
    dirs.iter()
        .find(|d| d.entry(&rel).is_some())
        .map_or(rel.clone(), |d| format!("{}/{rel}", d.path))
}
