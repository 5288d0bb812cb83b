//! Units loaded when first asked for (docs/units.md, "Units loaded when
//! first asked for"): a start (`want`, `restart`) of a name no unit has,
//! or of a unit that pulls in a name no unit has, reads the search path
//! again and adds the units it defines now that the start needs, as
//! systemd loads a unit whose file appeared after its last reload when a
//! job first needs it (`systemctl start NAME` right after writing
//! `/run/systemd/system/NAME`). Nothing else of the path is applied: the
//! units already there stay as the last reload left them.
//!
//! Asking would read every file each time (a `systemctl show` of each
//! service, a start that pulls in a name the path does not have either:
//! Debian's `graphical.target` wants `display-manager.service`, which
//! exists only once a display manager is installed): the path is read
//! only when something the last read of it saw (at boot, at a reload, or
//! here: [`PathRead`]) changed since (`crate::pathstamp`), or a unit it
//! could give a definition held then and not since.
//!
//! A read keeps the units it found written since the read before it and
//! did not take ([`PathRead::fresh`]): while the path stays unchanged, a
//! start of one of them takes it from there instead of reading the path
//! again (a script that writes several units, then starts each).
//!
//! A unit that nothing holds (inactive, no job, no held unit referring to
//! it: `Graph::collectable`) is taken from the search path again when it
//! is asked for (`load`, a start), with every other such unit whose files
//! changed, as systemd frees such a unit and reads it again the next time
//! something names it (docs/systemd-units.md, "Unit files read again when
//! asked for"): a drop-in or a `.wants/` link written since the last
//! reload shows without one, and so does an alias linked since to such a
//! unit, asked for by the alias's name.

use super::Runtime;
use crate::sys::Sys;
use crate::{pathstamp, unitdir};
use flotilla_systemd::load::LoadedPath;
use flotilla_units::graph::{shared, Graph};
use flotilla_units::load::PathStamp;
use flotilla_units::planner::OnChange;
use flotilla_units::protocol::{ErrorCode, Reply};
use flotilla_units::spec::{Origin, UnitSpec};
use std::cell::RefCell;
use std::collections::HashSet;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

/// What the last read of the search path saw (at boot, at a reload, or
/// here), and how the units the init has differ from it.
pub(super) struct PathRead {
    /// What it saw (`crate::pathstamp`).
    stamp: PathStamp,
    /// The names a unit of the path defined or provided then that no
    /// unit of the init had but a transient one (which goes, leaving the
    /// name to the file): only these, of the names the init has no unit
    /// for, a read would define while the path is unchanged.
    unloaded: HashSet<String>,
    /// The units whose definition on disk then was not taken (held then,
    /// so kept as they were; or masked since): read again when asked
    /// for, even with the path unchanged.
    not_taken: HashSet<String>,
    /// The units this read defined whose names the read before it did
    /// not have (written since), and that nothing took yet; none when
    /// there are more than [`FRESH_KEPT`] (or no read before).
    fresh: Vec<(UnitSpec, Origin)>,
    /// What was found of the path since ([`PathRead::unchanged`]).
    watch: RefCell<Watch>,
}

/// The most units written since the read before that a read keeps
/// ([`PathRead::fresh`]): enough for a script's units, not a package's
/// worth held in PID 1's memory.
const FRESH_KEPT: usize = 16;

/// What a [`PathRead`] knows of its path since the read.
enum Watch {
    /// Not checked yet.
    Unchecked,
    /// Watched since the read saw each path (the read's own watch,
    /// `crate::pathstamp::Seen::watched`), or since a check found it
    /// unchanged (`crate::pathstamp::watch_all`): while the watch says nothing,
    /// nothing changed.
    Watched(OwnedFd),
    /// Changed: the next read replaces it.
    Changed,
}

impl Watch {
    /// What is known of a read stamped `stamp`, given the watch `fd` it
    /// added what it read to: watched, when every path of it is on `fd`.
    fn of(stamp: &PathStamp, fd: Option<OwnedFd>) -> Watch {
        match fd {
            Some(fd) if stamp.watched => Watch::Watched(fd),
            _ => Watch::Unchecked,
        }
    }
}

impl PathRead {
    /// The read that `loaded` is, against the units of `graph` (of which
    /// those named in `transient` are transient) and the read before it,
    /// `before`: the names it defines that the graph has no unit for, the
    /// units whose definition differs from the graph's (all of them: the
    /// caller takes out those it takes), and the units written since.
    pub(super) fn of(
        loaded: &LoadedPath,
        watch: Option<OwnedFd>,
        graph: &Graph,
        transient: &HashSet<&str>,
        before: Option<&PathRead>,
    ) -> PathRead {
        let all = vec![true; graph.len()];
        let differ = graph.rereads(&all, &loaded.units).into_iter();
        let masked = graph.masked_now(&all, &loaded.masked).into_iter();
        let not_taken = (differ.filter_map(|i| loaded.units.get(i).map(|u| &u.0.name)))
            .chain(masked.filter_map(|i| loaded.masked.get(i).map(|m| &m.0)))
            .cloned()
            .collect();
        let unloaded = unloaded(&loaded.units, graph, transient);
        let fresh = before.map_or_else(Vec::new, |b| {
            let new = |n: &String| unloaded.contains(n) && !b.unloaded.contains(n);
            let fresh: Vec<_> = (loaded.units.iter())
                .filter(|(s, _)| new(&s.name))
                .cloned()
                .collect();
            if fresh.len() > FRESH_KEPT {
                return Vec::new();
            }
            fresh
        });
        PathRead {
            stamp: loaded.stamp.clone(),
            unloaded,
            not_taken,
            fresh,
            watch: RefCell::new(Watch::of(&loaded.stamp, watch)),
        }
    }

    /// A read whose every definition the graph took (at boot, at a
    /// reload): only the names it defines that the graph has no unit for
    /// (left out by an error) or a transient one are kept.
    pub(super) fn taken(
        stamp: PathStamp,
        watch: Option<OwnedFd>,
        units: &[(UnitSpec, Origin)],
        graph: &Graph,
        transient: &HashSet<&str>,
    ) -> PathRead {
        PathRead {
            watch: RefCell::new(Watch::of(&stamp, watch)),
            stamp,
            unloaded: unloaded(units, graph, transient),
            not_taken: HashSet::new(),
            fresh: Vec::new(),
        }
    }

    /// Whether a read of the path now would see what this one saw:
    /// nothing changed since. A read that watched each path before it
    /// took it (at a reload, at boot, here) asks its watch: one read of an
    /// inotify descriptor instead of hundreds of directory listings (each
    /// `systemctl start`, and a `systemctl show` of a name the init does
    /// not have, checks). A read without one is trusted only once its
    /// times are old enough (`PathStamp::settled`); its first check lists
    /// the path again and stats each entry (`crate::pathstamp`), a watch
    /// on what the read saw made just before, which later checks ask.
    fn unchanged(&self, sys: &dyn Sys) -> bool {
        let mut watch = self.watch.borrow_mut();
        match &*watch {
            Watch::Changed => false,
            Watch::Watched(fd) => {
                if sys.path_stamp_changed(fd.as_fd()) {
                    *watch = Watch::Changed;
                    return false;
                }
                true
            }
            Watch::Unchecked if !self.stamp.settled() => false,
            Watch::Unchecked => {
                let paths: Vec<&Path> = (self.stamp.dirs.iter().map(|d| Path::new(&d.path)))
                    .chain(self.stamp.files.iter().map(|(f, _)| Path::new(f)))
                    .collect();
                let fd = pathstamp::watch_all(sys, &paths);
                let same = pathstamp::unchanged(sys, &self.stamp);
                *watch = match (same, fd) {
                    (true, Ok(fd)) => Watch::Watched(fd),
                    // Without a watch, each check lists the path.
                    (true, Err(_)) => Watch::Unchecked,
                    (false, _) => Watch::Changed,
                };
                same
            }
        }
    }
}

/// The names `units` define or provide that `graph` has no unit for, or
/// only a unit named in `transient`.
fn unloaded(
    units: &[(UnitSpec, Origin)],
    graph: &Graph,
    transient: &HashSet<&str>,
) -> HashSet<String> {
    let held =
        |id: Option<_>| id.is_some_and(|id| !transient.contains(graph.node(id).spec.name.as_str()));
    (units.iter())
        .flat_map(|(s, _)| std::iter::once(&s.name).chain(s.provides.iter()))
        .filter(|n| !held(graph.live_unit(n)) && !held(graph.provider(n)))
        .cloned()
        .collect()
}

impl<S: Sys> Runtime<S> {
    /// Adds what a start of `name` needs from the search path: the unit
    /// made from its template (`instances.rs`), or the units defined now
    /// for the names it pulls in that no unit provides. `Ok(true)`: units
    /// were added (the planner has them); `Ok(false)`: nothing to add;
    /// `Err`: why not, for a reply (nothing changed).
    pub(super) fn load_on_demand(&mut self, name: &str) -> Result<bool, String> {
        if self.instantiate(name)? || self.make_without_file(name)? {
            return Ok(true);
        }
        // The path as the reread read it, if it did and took nothing.
        let mut read = None;
        let reread = self.reread(name, &mut read)?;
        let missing = self.planner.graph().missing_pulls(name);
        if missing.is_empty() {
            return Ok(reread);
        }
        if read.is_none() && self.path_unchanged_without(&missing) {
            return Ok(reread);
        }
        // A read of the whole path leaves nothing elsewhere.
        let whole = |_: &str| false;
        let picked = if let Some(l) = read {
            self.pick(name, &l.units, whole)
        } else if let Some(kept) = self.pick_fresh(name) {
            Some(kept)
        } else {
            let loaded = self.read_path()?;
            self.pick(name, &loaded.units, whole)
        };
        let picked = picked.unwrap_or_default();
        if picked.is_empty() {
            return Ok(reread);
        }
        let g = self.planner.graph();
        let mut dir = self.units.dir_specs(g);
        let added: Vec<String> = picked.iter().map(|(s, _)| s.name.clone()).collect();
        dir.extend(picked);
        // Their default dependencies, against the set they join.
        flotilla_systemd::load::add_default_dependencies(&mut dir);
        let mut all = shared(dir.clone());
        all.extend(self.units.transient_specs());
        self.replace_with(all, None, OnChange::Restart)
            .map_err(|e| format!("{} cannot be added: {}", added.join(", "), e.join("; ")))?;
        self.units.set_dir(dir, self.planner.graph());
        if let Some(last) = self.units.last_read.as_mut() {
            last.fresh.retain(|(s, _)| !added.contains(&s.name));
        }
        self.sys.console(&format!(
            "init: loaded on demand: {} (defined since the last reload)",
            added.join(", ")
        ));
        Ok(true)
    }

    /// The units of `read` a start of `name` needs: `None` when it needs
    /// a name `elsewhere` says the rest of the path defines
    /// ([`Graph::units_to_load_within`]).
    fn pick(
        &self,
        name: &str,
        read: &[(UnitSpec, Origin)],
        elsewhere: impl Fn(&str) -> bool,
    ) -> Option<Vec<(UnitSpec, Origin)>> {
        let pick = (self.planner.graph()).units_to_load_within(name, read, elsewhere)?;
        Some(
            pick.into_iter()
                .filter_map(|i| read.get(i))
                .cloned()
                .collect(),
        )
    }

    /// The units a start of `name` needs, from those the last read found
    /// written since the read before ([`PathRead::fresh`]), when the path
    /// is as it saw it and nothing else of it is needed: `None` when only
    /// a read of the path would do.
    fn pick_fresh(&self, name: &str) -> Option<Vec<(UnitSpec, Origin)>> {
        let last = self.units.last_read.as_ref()?;
        if last.fresh.is_empty() || !last.unchanged(&self.sys) {
            return None;
        }
        let picked = self.pick(name, &last.fresh, |n| last.unloaded.contains(n))?;
        (!picked.is_empty()).then_some(picked)
    }

    /// Makes the unit `name` when no unit has it and its type needs no
    /// file (a slice: `flotilla_systemd::load::without_file`), from its
    /// drop-ins alone, as systemd loads a slice whatever names it.
    /// `Ok(true)`: made (the planner has it).
    fn make_without_file(&mut self, name: &str) -> Result<bool, String> {
        let g = self.planner.graph();
        // A ghost (a transient slice let go) is no unit of the set.
        let unit = g.live_unit(name);
        let known = unit.is_some() || g.provider(name).is_some();
        if known
            || g.shape().masks.contains(name)
            || !flotilla_systemd::load::loads_without_file(name)
        {
            return Ok(false);
        }
        let loaded = unitdir::load_units_naming(&self.sys, &self.settings, &[name.to_string()])
            .map_err(|e| format!("cannot read the unit search path: {e}"))?;
        let Some(made) = loaded.units.into_iter().find(|(s, _)| s.name == name) else {
            return Ok(false);
        };
        self.add_to_dir_set([made], name)?;
        Ok(true)
    }

    /// Adds `made` (for a start of `name`) to the units of the search
    /// path: with their default dependencies against the set they join
    /// (the others have theirs: nothing changes for them), and the
    /// transient units kept. `Err`: why not, for a reply (nothing changed).
    pub(super) fn add_to_dir_set(
        &mut self,
        made: impl IntoIterator<Item = (UnitSpec, Origin)>,
        name: &str,
    ) -> Result<(), String> {
        let g = self.planner.graph();
        let mut dir = self.units.dir_specs(g);
        dir.extend(made);
        flotilla_systemd::load::add_default_dependencies(&mut dir);
        let mut all = shared(dir.clone());
        all.extend(self.units.transient_specs());
        self.replace_with(all, None, OnChange::Restart)
            .map_err(|e| format!("`{name}` cannot be added: {}", e.join("; ")))?;
        self.units.set_dir(dir, self.planner.graph());
        Ok(())
    }

    /// Whether the last read of the path defined none of `names`, which
    /// the init has no unit for, and nothing it saw changed since: a read
    /// now would not define them either.
    fn path_unchanged_without(&self, names: &[String]) -> bool {
        self.units.last_read.as_ref().is_some_and(|last| {
            !names.iter().any(|n| last.unloaded.contains(n)) && last.unchanged(&self.sys)
        })
    }

    /// Whether `name` is a unit the last read kept as written since the
    /// read before ([`PathRead::fresh`]) and the path is as it saw it.
    fn fresh_unit(&self, name: &str) -> bool {
        self.units.last_read.as_ref().is_some_and(|last| {
            last.fresh.iter().any(|(s, _)| s.name == name) && last.unchanged(&self.sys)
        })
    }

    /// Whether a read of the path now would give every unit nothing holds
    /// (`collectable`) the definition it has: nothing the last read saw
    /// changed since, and none of them is one whose definition then was
    /// not taken.
    fn path_unchanged_for(&self, collectable: &[bool]) -> bool {
        let g = self.planner.graph();
        self.units.last_read.as_ref().is_some_and(|last| {
            !(last.not_taken.iter())
                .filter_map(|n| g.unit(n))
                .any(|id| collectable.get(id.index()).copied().unwrap_or(false))
                && last.unchanged(&self.sys)
        })
    }

    /// The search path's units now, the read remembered ([`PathRead`]).
    fn read_path(&mut self) -> Result<LoadedPath, String> {
        let read = super::loading::in_process(&self.sys, &self.settings, &[]);
        let loaded = read
            .path
            .map_err(|e| format!("cannot read the unit search path: {e}"))?;
        let transient = self.units.transient_names();
        let before = self.units.last_read.as_ref();
        let read = PathRead::of(
            &loaded,
            read.watch,
            self.planner.graph(),
            &transient,
            before,
        );
        self.units.last_read = Some(read);
        Ok(loaded)
    }

    /// When the unit `name` means is one nothing holds, the units nothing
    /// holds whose files changed since they were read take their new
    /// definition (`Graph::rereads`), as systemd reads a freed unit
    /// again. `Ok(true)`: some did. A read of the path that found no
    /// unit `name` means is left in `unused`, for the caller to use.
    fn reread(&mut self, name: &str, unused: &mut Option<LoadedPath>) -> Result<bool, String> {
        let g = self.planner.graph();
        let mut read = None;
        // A ghost (a transient unit let go) is no unit of the set.
        let id = match g.live_unit(name).or_else(|| g.provider(name)) {
            Some(id) => id,
            // An alias linked since the last read to a unit the graph has
            // (`b1.service` to `b.service`): that unit, read again.
            None => {
                // Nor to one the last read kept, a unit of its own.
                if self.path_unchanged_without(&[name.to_string()]) || self.fresh_unit(name) {
                    return Ok(false);
                }
                let loaded = self.read_path()?;
                let g = self.planner.graph();
                let Some(id) = (loaded.units.iter())
                    .find(|(s, _)| s.provides.iter().any(|p| p == name))
                    .and_then(|(s, _)| g.unit(&s.name))
                else {
                    *unused = Some(loaded);
                    return Ok(false);
                };
                read = Some(loaded);
                id
            }
        };
        let collectable = self.planner.collectable();
        if !collectable.get(id.index()).copied().unwrap_or(false) {
            return Ok(false);
        }
        if read.is_none() && self.path_unchanged_for(&collectable) {
            return Ok(false);
        }
        let loaded = match read {
            Some(l) => l,
            None => self.read_path()?,
        };
        let g = self.planner.graph();
        let mut dir = self.units.dir_specs(g);
        let mut changed = Vec::new();
        for u in g
            .rereads(&collectable, &loaded.units)
            .into_iter()
            .filter_map(|i| loaded.units.get(i))
        {
            // A transient unit of that name is not the file's.
            if let Some(d) = dir.iter_mut().find(|(s, _)| s.name == u.0.name) {
                *d = u.clone();
                changed.push(u.0.name.clone());
            }
        }
        // Masked on disk since: masked (a mask names a unit that is out
        // of the set, listed as masked).
        let mut shape = None;
        for i in g.masked_now(&collectable, &loaded.masked) {
            let Some((name, path)) = loaded.masked.get(i) else {
                continue;
            };
            let s = shape.get_or_insert_with(|| (**g.shape()).clone());
            let source = flotilla_units::mask::MaskSource::DevNull(path.into());
            s.masks.insert(name.clone(), source);
            dir.retain(|(d, _)| d.name != *name);
            changed.push(name.clone());
        }
        if changed.is_empty() {
            return Ok(false);
        }
        flotilla_systemd::load::add_default_dependencies(&mut dir);
        let mut all = shared(dir.clone());
        all.extend(self.units.transient_specs());
        self.replace_with(all, shape, OnChange::Restart)
            .map_err(|e| {
                format!(
                    "{} cannot be read again: {}",
                    changed.join(", "),
                    e.join("; ")
                )
            })?;
        self.units.set_dir(dir, self.planner.graph());
        if let Some(last) = self.units.last_read.as_mut() {
            for name in &changed {
                last.not_taken.remove(name);
            }
        }
        self.sys.console(&format!(
            "init: read again: {} (changed on disk since it was read)",
            changed.join(", ")
        ));
        Ok(true)
    }

    /// `load UNIT`: the unit loaded on demand if the init has none of that
    /// name, or read again if nothing holds it and its files changed.
    pub(super) fn load(&mut self, unit: &str) -> Reply {
        let known = |r: &Self| {
            let g = r.planner.graph();
            g.unit(unit).is_some() || g.provider(unit).is_some()
        };
        match self.load_on_demand(unit) {
            Err(e) if !known(self) => return Reply::error(ErrorCode::UnknownUnit, e),
            // Known: kept as it was.
            Err(e) => self.sys.console(&format!("init: load {unit}: {e}")),
            Ok(_) => {}
        }
        if known(self) {
            Reply::Accepted {
                message: format!("{unit} loaded"),
            }
        } else {
            Reply::error(ErrorCode::UnknownUnit, format!("no unit named `{unit}`"))
        }
    }
}
