//! The unit set: where the planner's units come from — the units directory
//! and the transient sets of the control protocol — and every change to
//! it: `reload` (the directory again), `transient-apply` (a whole set),
//! `transient-patch` (some units of a set). Each change merges everything
//! into one new graph, which the planner takes or refuses whole
//! ([`Runtime::replace_with`]): unchanged units keep running, changed ones
//! restart, removed ones stop; on any error nothing changes.

use super::Runtime;
use crate::sys::Sys;
use flotilla_systemd::load::{LoadedPath, Templates};
use flotilla_systemd::system_conf::ManagerConfig;
use flotilla_units::diag::Diagnostic;
use flotilla_units::graph::{shared, Graph, Shape};
use flotilla_units::keys::validate_set;
use flotilla_units::load::PathStamp;
use flotilla_units::planner::{OnChange, Planner, WantLife};
use flotilla_units::protocol::{Applied, ErrorCode, Reply};
use flotilla_units::spec::{Origin, UnitSpec};
use flotilla_units::state::UnitState;
use flotilla_units::time::Instant;
use flotilla_units::transient_lease::Lease;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

/// The units of the search path at start.
pub(super) struct AtStart {
    /// The units that loaded.
    pub units: Vec<(UnitSpec, Origin)>,
    /// The unit files that are masks (name, path).
    pub masked: Vec<(String, String)>,
    /// Every problem (a directory that cannot be read is one problem, and
    /// no unit).
    pub errors: Vec<String>,
    /// What instances made later read (`instances.rs`).
    pub templates: Templates,
    /// The manager's settings (`system.conf`).
    pub manager: ManagerConfig,
    /// What the load saw (`on_demand.rs`).
    pub stamp: PathStamp,
}

/// The unit search path at start, as loaded (`loading.rs`): a load that
/// failed is one error and no unit.
pub(super) fn at_start(sys: &dyn Sys, loaded: Result<LoadedPath, String>) -> AtStart {
    match loaded {
        Ok(l) => AtStart {
            units: l.units,
            masked: l.masked,
            errors: errors_of(sys, &l.diagnostics),
            templates: l.template_files,
            manager: l.manager,
            stamp: l.stamp,
        },
        Err(e) => AtStart {
            units: Vec::new(),
            masked: Vec::new(),
            errors: vec![e],
            templates: Templates::default(),
            manager: ManagerConfig::default(),
            stamp: PathStamp::default(),
        },
    }
}

/// Wants the init's own units when the set has them: its log writer
/// (`logwriter.rs`) and systemd's D-Bus interface (`systemd_bus.rs`), for
/// as long as they are in the set, whatever the target.
pub(super) fn want_builtins(planner: &mut Planner, now: Instant) {
    let g = planner.graph();
    let own = |o: &Origin| {
        crate::logwriter::is_builtin(o)
            || crate::systemd_bus::is_builtin(o)
            || crate::cmd::is_builtin(o)
    };
    let wanted: Vec<&str> = [
        crate::logwriter::NAME,
        crate::systemd_bus::SERVICE,
        crate::cmd::NAME,
    ]
    .into_iter()
    .filter(|name| g.unit(name).is_some_and(|i| own(&g.node(i).origin)))
    .collect();
    for name in wanted {
        // Only a shutdown refuses it, and then nothing is to start.
        let _ = planner.want(name, WantLife::Kept, now);
    }
}

/// The errors among `diags` (the units they leave out), as lines; the
/// warnings go to the console only, so that the status of a system booted
/// from a distribution's units is not headed by hundreds of them.
pub(super) fn errors_of(sys: &dyn Sys, diags: &[Diagnostic]) -> Vec<String> {
    let mut errors = Vec::new();
    for d in diags {
        if d.is_error() {
            errors.push(d.to_string());
        } else {
            sys.console(&format!("init: {d}"));
        }
    }
    errors
}

/// The directory's units.
enum DirUnits {
    /// The graph holds each of them exactly as loaded (the usual case), so
    /// the graph's copy of each is the only one: the directory's units are
    /// the graph's units that are neither ghosts nor transient.
    InGraph,
    /// The specs themselves, when the graph left some out (errors at
    /// start).
    Own(Vec<(UnitSpec, Origin)>),
}

impl DirUnits {
    /// [`DirUnits::InGraph`] if `graph` holds every one of `units` as it is.
    fn keep(units: Vec<(UnitSpec, Origin)>, graph: &Graph) -> DirUnits {
        let mut seen = HashSet::with_capacity(units.len());
        let all_in = units.iter().all(|(s, o)| {
            seen.insert(s.name.as_str())
                && graph
                    .unit(&s.name)
                    .and_then(|id| graph.get(id))
                    .is_some_and(|n| !n.ghost && *n.spec == *s && n.origin == *o)
        });
        if all_in {
            DirUnits::InGraph
        } else {
            DirUnits::Own(units)
        }
    }
}

/// Where the units come from. See the module documentation.
pub(super) struct UnitSet {
    dir: DirUnits,
    /// The transient sets by name, each unit as it was given: shared with
    /// the graph's node of the unit, so that a patch copies no spec.
    transient: BTreeMap<String, Vec<Arc<UnitSpec>>>,
    /// The leases on transient sets, by set (`leases.rs`).
    pub(super) leases: BTreeMap<String, Lease>,
    /// The errors of the unit set in force: the units they leave out. A
    /// reload tolerates these (the files are as they were at start, say a
    /// distribution's unit that flotilla cannot run) and refuses any other.
    load_errors: Vec<String>,
    /// The search path's templates, for instances made at run time; `None`
    /// after a re-exec until one is needed (`instances.rs`).
    pub(super) templates: Option<Templates>,
    /// The last read of the search path (at start, at a reload, or for a
    /// load on demand: `on_demand.rs`); `None` after a re-exec until the
    /// first.
    pub(super) last_read: Option<super::on_demand::PathRead>,
    /// The manager's settings of the last load (`system.conf`, read at
    /// start and at every reload): the units' default limits.
    pub(super) manager: ManagerConfig,
}

impl UnitSet {
    /// The set at start: the directory's units, which the planner's `graph`
    /// was built from.
    pub fn new(dir: Vec<(UnitSpec, Origin)>, graph: &Graph, load_errors: Vec<String>) -> UnitSet {
        UnitSet {
            dir: DirUnits::keep(dir, graph),
            transient: BTreeMap::new(),
            leases: BTreeMap::new(),
            load_errors,
            templates: None,
            last_read: None,
            manager: ManagerConfig::default(),
        }
    }

    /// The directory's units become `units` (the graph's, when it holds
    /// them all as they are).
    pub(super) fn set_dir(&mut self, units: Vec<(UnitSpec, Origin)>, graph: &Graph) {
        self.dir = DirUnits::keep(units, graph);
    }

    /// The errors of the unit set in force.
    pub fn load_errors(&self) -> &[String] {
        &self.load_errors
    }

    /// A copy of the directory's units (from `graph` when it holds them:
    /// `graph` must be the one built from this set, so call this before
    /// changing the transient sets).
    pub(super) fn dir_specs(&self, graph: &Graph) -> Vec<(UnitSpec, Origin)> {
        self.dir_shared(graph)
            .into_iter()
            .map(|(s, o)| (Arc::unwrap_or_clone(s), o))
            .collect()
    }

    /// The directory's units, shared with `graph`'s nodes when it holds
    /// them (no copy): for a change that keeps them as they are.
    pub(super) fn dir_shared(&self, graph: &Graph) -> Vec<(Arc<UnitSpec>, Origin)> {
        match &self.dir {
            DirUnits::Own(v) => v
                .iter()
                .map(|(s, o)| (Arc::new(s.clone()), o.clone()))
                .collect(),
            DirUnits::InGraph => {
                let transient = self.transient_names();
                graph
                    .ids()
                    .map(|i| graph.node(i))
                    .filter(|n| {
                        !n.ghost && !n.synthetic && !transient.contains(n.spec.name.as_str())
                    })
                    .map(|n| (n.spec.clone(), n.origin.clone()))
                    .collect()
            }
        }
    }

    /// The names of the transient units.
    pub(super) fn transient_names(&self) -> HashSet<&str> {
        (self.transient.values().flatten())
            .map(|u| u.name.as_str())
            .collect()
    }

    /// The transient sets by name.
    pub(super) fn transient_sets(&self) -> &BTreeMap<String, Vec<Arc<UnitSpec>>> {
        &self.transient
    }

    /// The set carried across a re-exec: the directory's units, its
    /// problems at start, the transient sets and their leases.
    pub(super) fn resumed(
        dir: Vec<(UnitSpec, Origin)>,
        graph: &Graph,
        load_errors: Vec<String>,
        transient: BTreeMap<String, Vec<Arc<UnitSpec>>>,
        leases: BTreeMap<String, Lease>,
    ) -> UnitSet {
        UnitSet {
            transient,
            leases,
            ..UnitSet::new(dir, graph, load_errors)
        }
    }

    /// The names of the units of the transient set `set` (`None`: no such
    /// set).
    pub(super) fn members(&self, set: &str) -> Option<BTreeSet<&str>> {
        let units = self.transient.get(set)?;
        Some(units.iter().map(|u| u.name.as_str()).collect())
    }

    /// The transient sets changed: a set that is gone has no lease (a
    /// lease forgets the units its set lost at its next renewal: until
    /// then its kill still reaches one a client took out just before).
    fn keep_leases(&mut self) {
        let transient = &self.transient;
        self.leases.retain(|set, _| transient.contains_key(set));
    }

    /// Whether the transient set `set` has a unit named `name`.
    pub(super) fn in_transient(&self, set: &str, name: &str) -> bool {
        self.transient
            .get(set)
            .is_some_and(|us| us.iter().any(|u| u.name == name))
    }

    /// The transient units, each with its set as its origin.
    pub(super) fn transient_specs(&self) -> Vec<(Arc<UnitSpec>, Origin)> {
        self.transient
            .iter()
            .flat_map(|(set, units)| with_origin(set, units))
            .collect()
    }

    /// The transient sets with each unit of `reread` (read again from its
    /// file) in place of the one of its name. What the bus decided beside
    /// the file's lines stays as it was made: its `CollectMode`.
    fn transient_reread(
        &self,
        reread: Vec<(UnitSpec, Origin)>,
    ) -> BTreeMap<String, Vec<Arc<UnitSpec>>> {
        let mut by_name: std::collections::HashMap<String, UnitSpec> = reread
            .into_iter()
            .map(|(u, _)| (u.name.clone(), u))
            .collect();
        let mut sets = self.transient.clone();
        for unit in sets.values_mut().flatten() {
            if let Some(mut new) = by_name.remove(&unit.name) {
                new.extras.collect_mode = unit.extras.collect_mode;
                *unit = Arc::new(new);
            }
        }
        sets
    }

    /// The transient units with the set named `set` as `units`.
    fn transient_specs_with(
        &self,
        set: &str,
        units: &[Arc<UnitSpec>],
    ) -> Vec<(Arc<UnitSpec>, Origin)> {
        let mut v: Vec<(Arc<UnitSpec>, Origin)> = self
            .transient
            .iter()
            .filter(|(name, _)| name.as_str() != set)
            .flat_map(|(name, us)| with_origin(name, us))
            .collect();
        v.extend(with_origin(set, units));
        v
    }
}

/// The units of the transient set named `set`, with their origin.
pub(super) fn with_origin<'a>(
    set: &'a str,
    units: &'a [Arc<UnitSpec>],
) -> impl Iterator<Item = (Arc<UnitSpec>, Origin)> + 'a {
    units
        .iter()
        .map(move |u| (u.clone(), Origin::unplaced(format!("transient:{set}"))))
}

/// The errors the graph of `all` would have (cycles, duplicate names or
/// targets), to report with other problems at once.
fn graph_errors(all: Vec<(Arc<UnitSpec>, Origin)>, shape: &Shape) -> Vec<String> {
    let (_, diags) = Graph::build_shaped(all, shape.clone());
    diags
        .iter()
        .filter(|d| d.is_error())
        .map(ToString::to_string)
        .collect()
}

/// The transient set named `set` holding `units`, checked through the one
/// key table as the unit loader checks a file; or every problem.
fn check_transient(set: &str, units: Vec<UnitSpec>) -> Result<Vec<UnitSpec>, Vec<String>> {
    validate_set(set, units).map_err(|p| p.iter().map(ToString::to_string).collect())
}

/// The set `current` with `upsert` put in (replacing same-named units, in
/// their place; new ones at the end) and `remove` taken out, or the
/// problems of the patch itself: a name given twice, or both put in and
/// taken out, or taken out but not in the set.
fn patched(
    set: &str,
    current: &[Arc<UnitSpec>],
    upsert: Vec<UnitSpec>,
    remove: &[String],
) -> (Vec<Arc<UnitSpec>>, Vec<String>) {
    let mut problems = Vec::new();
    let mut upserted = BTreeSet::new();
    for u in &upsert {
        if !upserted.insert(u.name.clone()) {
            problems.push(format!("`{}` is given twice to upsert", u.name));
        }
    }
    let mut removed = BTreeSet::new();
    for name in remove {
        if !removed.insert(name.as_str()) {
            problems.push(format!("`{name}` is given twice to remove"));
        } else if upserted.contains(name) {
            problems.push(format!("`{name}` is both upserted and removed"));
        } else if !current.iter().any(|u| &u.name == name) {
            problems.push(format!("`{name}` is not in the transient set `{set}`"));
        }
    }
    let mut units: Vec<Arc<UnitSpec>> = current
        .iter()
        .filter(|u| !removed.contains(u.name.as_str()))
        .cloned()
        .collect();
    for u in upsert {
        match units.iter_mut().find(|x| x.name == u.name) {
            Some(slot) => *slot = Arc::new(u),
            None => units.push(Arc::new(u)),
        }
    }
    (units, problems)
}

/// The reply refusing a change, with every problem.
fn refused(message: impl Into<String>, details: Vec<String>) -> Reply {
    Reply::Error {
        code: ErrorCode::Invalid,
        message: message.into(),
        details,
    }
}

impl<S: Sys> Runtime<S> {
    /// Hands `all` to the planner as the new unit set, with a new shape
    /// (masks, declared targets) when one is given, doing `on_change` with
    /// changed units that are up; on success the unit slots follow the new
    /// unit ids.
    pub(super) fn replace_with(
        &mut self,
        all: Vec<(Arc<UnitSpec>, Origin)>,
        shape: Option<Shape>,
        on_change: OnChange,
    ) -> Result<Applied, Vec<String>> {
        // No spawn straddles the renumbering (`execs.rs`).
        self.settle_execs();
        let now = self.now();
        let shape = shape.map_or_else(|| self.planner.graph().shape().clone(), Arc::new);
        // The set in force may leave units out (errors at start, kept by
        // a reload): the new set may too, with those errors and no other.
        let strict = self.units.load_errors.is_empty() || {
            let errors = graph_errors(all.clone(), &shape);
            let new: Vec<String> = errors
                .into_iter()
                .filter(|e| !self.units.load_errors.contains(e))
                .collect();
            if !new.is_empty() {
                return Err(new);
            }
            false
        };
        match self
            .planner
            .replace_shaped(all, shape, strict, on_change, now)
        {
            Ok((applied, map)) => {
                let units = self.planner.graph().len();
                self.slots.renumber(&map, units, &self.sys);
                self.close_not_found_sockets();
                for name in &applied.changed {
                    let Some(id) = self.planner.graph().unit(name) else {
                        continue;
                    };
                    // A unit kept starting spawns the rest of its start
                    // into the run it has (the new one is for its next
                    // start; `executor.rs` ends a stale run there).
                    if on_change == OnChange::Keep && self.planner.state(id) == UnitState::Starting
                    {
                        continue;
                    }
                    if let Some(s) = self.slots.get_mut(id) {
                        s.run_stale = s.run.is_some();
                    }
                }
                let mounts = |l: &[String]| l.iter().any(|n| n.ends_with(".mount"));
                if mounts(&applied.added) || mounts(&applied.changed) {
                    self.follow_mount_table();
                }
                self.sys.release_free_memory();
                Ok(applied)
            }
            Err(diags) => Err(diags.iter().map(ToString::to_string).collect()),
        }
    }

    /// `initctl reload` (and SIGHUP) once the search path is loaded again
    /// (`reloading.rs`): take the units `loaded` and read the config's
    /// `targets:` again (with the masks and alternatives of the state
    /// directory). Refused whole on any error but those of the set in
    /// force: a unit that could not be loaded at start and is unchanged
    /// stays left out, as it was (else one unrunnable file among a
    /// distribution's hundreds would refuse every reload).
    pub(super) fn reload_from(
        &mut self,
        loaded: Result<LoadedPath, String>,
        watch: Option<std::os::fd::OwnedFd>,
        on_change: OnChange,
    ) -> Reply {
        let dir = self.settings.units_dir.clone();
        let mut loaded = match loaded {
            Ok(l) => l,
            Err(e) => return Reply::error(ErrorCode::Invalid, format!("{e}; nothing changed")),
        };
        self.keep_target_alias(&mut loaded.units);
        let (shape, targets, problems) = match crate::shape::reread(&self.sys, &self.settings) {
            Ok(r) => r,
            Err(errors) => return refused("the config file has errors; nothing changed", errors),
        };
        let mut shape = shape;
        crate::shape::set_unit_file_masks(&mut shape, &loaded.masked);
        // A transient unit the path has a file of now (in
        // /run/systemd/transient, where the init writes each one's)
        // is read from it with its drop-ins, as systemd reads its
        // transient units at a reload: a drop-in written since applies (a
        // running service's or scope's new `RuntimeMaxSec=`, systemd's
        // test 16). A slice read so becomes a unit of the path; one of a
        // type that needs a file stays in its transient set with what it
        // reads.
        let in_transient_dir = |o: &Origin| {
            flotilla_systemd::DirRole::of_file(&o.file) == flotilla_systemd::DirRole::Transient
        };
        let transient = self.units.transient_names();
        let (reread, of_path): (Vec<_>, Vec<_>) = std::mem::take(&mut loaded.units)
            .into_iter()
            .partition(|(u, o)| {
                in_transient_dir(o)
                    && u.kind.row().needs_file
                    && transient.contains(u.name.as_str())
            });
        // A scope is made of the processes given when it was made: the file
        // of one the init no longer has makes none.
        loaded.units = of_path
            .into_iter()
            .filter(|(u, _)| !u.kind.row().adopts())
            .collect();
        let sets = self.units.transient_reread(reread);
        let from_files: HashSet<String> = loaded
            .units
            .iter()
            .filter(|(_, o)| in_transient_dir(o))
            .map(|(u, _)| u.name.clone())
            .collect();
        let mut all = shared(loaded.units.clone());
        all.extend(
            sets.iter()
                .flat_map(|(set, units)| with_origin(set, units))
                .filter(|(u, _)| !from_files.contains(&u.name)),
        );
        // Every problem at once, as `init --check` reports them: the
        // files' and the graph's own (cycles, duplicate names or targets)
        // among the units that did load, with the transient sets.
        let mut errors: Vec<String> = loaded
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(ToString::to_string)
            .collect();
        errors.extend(graph_errors(all.clone(), &shape));
        let new: Vec<String> = errors
            .iter()
            .filter(|e| !self.units.load_errors.contains(e))
            .cloned()
            .collect();
        if !new.is_empty() {
            return refused(
                format!(
                    "{} error(s) in {}; nothing changed",
                    new.len(),
                    dir.display()
                ),
                new,
            );
        }
        match self.replace_with(all, Some(shape), on_change) {
            Ok(mut applied) => {
                self.units.transient = sets;
                for units in self.units.transient.values_mut() {
                    units.retain(|u| !from_files.contains(&u.name));
                }
                self.units.transient.retain(|_, units| !units.is_empty());
                let now = self.now();
                want_builtins(&mut self.planner, now);
                self.settings.targets = targets;
                applied.warnings.extend(problems);
                let stamp = std::mem::take(&mut loaded.stamp);
                let read = super::on_demand::PathRead::taken(
                    stamp,
                    watch,
                    &loaded.units,
                    self.planner.graph(),
                    &self.units.transient_names(),
                );
                self.units.last_read = Some(read);
                self.units.dir = DirUnits::keep(loaded.units, self.planner.graph());
                self.units.templates = Some(loaded.template_files);
                self.units.manager = loaded.manager;
                self.apply_mem_policy();
                applied.warnings.extend(
                    loaded
                        .diagnostics
                        .iter()
                        .filter(|d| !d.is_error())
                        .map(ToString::to_string),
                );
                applied
                    .warnings
                    .extend(errors.iter().map(|e| format!("{e} (as before: left out)")));
                self.units.load_errors = errors;
                self.reread_timer_zones();
                self.reread_devices();
                self.sys.console(&format!(
                    "init: reloaded: {} added, {} changed, {} removed, {} unchanged",
                    applied.added.len(),
                    applied.changed.len(),
                    applied.removed.len(),
                    applied.unchanged
                ));
                Reply::Applied(applied)
            }
            Err(details) => refused("the unit set has errors; nothing changed", details),
        }
    }

    /// The target's alias stays on the unit that provided it
    /// (`flotilla_systemd::load::keep_target_alias`): a link changed since
    /// names the next boot's target, as under systemd.
    fn keep_target_alias(&self, units: &mut [(UnitSpec, Origin)]) {
        let g = self.planner.graph();
        let target = self.planner.target();
        let Some(provider) = g.provider(target).map(|id| g.node(id).spec.name.clone()) else {
            return;
        };
        if let Some(now) = flotilla_systemd::load::keep_target_alias(units, target, &provider) {
            self.sys.console(&format!(
                "init: {target} stays {provider} until the next boot (its link names {now} now)"
            ));
        }
    }

    /// `transient-apply`: the set named `set` becomes `units` (an empty
    /// list removes it).
    pub(super) fn apply_transient(&mut self, set: String, units: Vec<UnitSpec>) -> Reply {
        self.apply_transient_with(set, units, OnChange::Restart)
    }

    /// [`Runtime::apply_transient`], doing `on_change` with changed units
    /// that are up (the device units keep running when a device's
    /// description or wants change: `devices.rs`).
    pub(super) fn apply_transient_with(
        &mut self,
        set: String,
        units: Vec<UnitSpec>,
        on_change: OnChange,
    ) -> Reply {
        match check_transient(&set, units) {
            Ok(units) => {
                let units = units.into_iter().map(Arc::new).collect();
                self.commit_transient(set, units, on_change)
            }
            Err(bad) => refused("invalid transient units", bad),
        }
    }

    /// `transient-patch`: some units of the set named `set` put in or
    /// replaced (`upsert`), some taken out (`remove`).
    pub(super) fn patch_transient(
        &mut self,
        set: String,
        upsert: Vec<UnitSpec>,
        remove: Vec<String>,
    ) -> Reply {
        // The upserted units are checked on a copy so that the patch's own
        // problems (names given twice, …) are reported with theirs.
        let mut bad = check_transient(&set, upsert.clone())
            .err()
            .unwrap_or_default();
        let units_ok = bad.is_empty();
        let current = self
            .units
            .transient
            .get(&set)
            .map_or(&[][..], Vec::as_slice);
        let (units, problems) = patched(&set, current, upsert, &remove);
        bad.extend(problems);
        if bad.is_empty() {
            return self.commit_transient(set, units, OnChange::Restart);
        }
        if units_ok {
            // Every problem at once: also what the graph would say of the
            // set as patched (a name or target the directory has too, a
            // cycle), as a reload reports them.
            let mut all = self.units.dir_shared(self.planner.graph());
            all.extend(self.units.transient_specs_with(&set, &units));
            bad.extend(graph_errors(all, self.planner.graph().shape()));
        }
        refused("invalid transient patch; nothing changed", bad)
    }

    /// Makes `units` the set named `set` (none: no set) if the planner
    /// takes the whole unit set so changed; else changes nothing.
    fn commit_transient(
        &mut self,
        set: String,
        units: Vec<Arc<UnitSpec>>,
        on_change: OnChange,
    ) -> Reply {
        let mut all = self.units.dir_shared(self.planner.graph());
        // A transient unit takes the place of the directory's unit of its
        // name that no file defines (a slice made from its drop-ins).
        all.retain(|(d, o)| {
            !(o.file.is_empty()
                && !d.kind.row().needs_file
                && units.iter().any(|u| u.name == d.name))
        });
        let old = if units.is_empty() {
            self.units.transient.remove(&set)
        } else {
            self.units.transient.insert(set.clone(), units)
        };
        all.extend(self.units.transient_specs());
        match self.replace_with(all, None, on_change) {
            Ok(applied) => {
                self.units.keep_leases();
                Reply::Applied(applied)
            }
            Err(details) => {
                match old {
                    Some(o) => self.units.transient.insert(set, o),
                    None => self.units.transient.remove(&set),
                };
                refused("the unit set has errors; nothing changed", details)
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use flotilla_units::spec::{Command, UnitType};

    fn unit(name: &str, cmd: &str) -> UnitSpec {
        let mut u = UnitSpec::new(name, UnitType::ForegroundSupervised);
        u.exec_start = Some(Command::new([cmd]));
        u
    }

    fn names(units: &[Arc<UnitSpec>]) -> Vec<&str> {
        units.iter().map(|u| u.name.as_str()).collect()
    }

    #[test]
    fn a_patch_replaces_in_place_adds_at_the_end_and_removes() {
        let current = [unit("a", "/a"), unit("b", "/b"), unit("c", "/c")].map(Arc::new);
        let (units, problems) = patched(
            "s",
            &current,
            vec![unit("d", "/d"), unit("b", "/b2")],
            &["a".to_string()],
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(names(&units), ["b", "c", "d"]);
        assert_eq!(units[0].exec_start, Some(Command::new(["/b2"])));
    }

    #[test]
    fn every_problem_of_a_patch() {
        let current = [Arc::new(unit("a", "/a"))];
        let (_, problems) = patched(
            "s",
            &current,
            vec![unit("b", "/b"), unit("b", "/b"), unit("c", "/c")],
            &[
                "zz".to_string(),
                "c".to_string(),
                "a".to_string(),
                "a".to_string(),
            ],
        );
        assert_eq!(
            problems,
            [
                "`b` is given twice to upsert",
                "`zz` is not in the transient set `s`",
                "`c` is both upserted and removed",
                "`a` is given twice to remove",
            ]
        );
    }

    #[test]
    fn transient_units_are_checked() {
        let mut bad = unit("bad name!", "/x");
        bad.waits_for = vec!["no good".into()].into();
        let mut nocmd = unit("nocmd", "/x");
        nocmd.exec_start = None;
        assert_eq!(
            check_transient(
                "s et",
                vec![bad, nocmd, UnitSpec::new("v", UnitType::Virtual)]
            )
            .unwrap_err(),
            [
                "bad set name `s et`: a name has only letters, digits and `:_.@-`",
                "bad name!: `unit`: `bad name!`: a name has only letters, digits and `:_.@-`",
                // A unit provides its own name unless told otherwise.
                "bad name!: `provides`: `bad name!`: a name has only letters, digits and `:_.@-`",
                "bad name!: `waits-for`: `no good`: a name has only letters, digits and `:_.@-`",
                "nocmd: `exec-start`: a `foreground-supervised` unit needs it",
            ]
        );
    }
}
