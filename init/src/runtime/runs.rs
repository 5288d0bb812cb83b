//! Transient units for debugging (docs/contract.md §3b): `initctl run` and `initctl
//! add` (and D-Bus's `StartTransientUnit`, scopes included: `scopes.rs`)
//! put one unit into the transient set [`RUN_SET`] and want it (it is
//! required besides the target's set, across target switches) until
//! `initctl stop-transient` takes it out or the machine reboots (a
//! service made over D-Bus that ended also when a new unit of its name
//! comes, as systemd has let go of it by then); and the
//! plain wants of `systemctl start` (until the next target switch).
//! The set itself is the unit set's ([`super::unitset`]); the wants are the
//! planner's.

use super::Runtime;
use crate::sys::Sys;
use flotilla_units::collect::{collectable, Now};
use flotilla_units::planner::{WantError, WantLife};
use flotilla_units::protocol::{ErrorCode, Reply, StdStream};
use flotilla_units::spec::{Runs, UnitSpec};
use std::os::fd::OwnedFd;
use std::path::PathBuf;

/// The transient set of `initctl run` and `initctl add`.
pub(super) const RUN_SET: &str = "initctl";

impl<S: Sys> Runtime<S> {
    /// `transient-add`: one unit into [`RUN_SET`], wanted, and the units
    /// it triggers (`aux`), not wanted: started by it as any other's.
    /// `stdio`: the standard streams it is handed, each with its
    /// descriptor (`passed.rs`). `file`: its unit file, written into the
    /// path's directory of transient units before it starts
    /// ([`Self::write_run_file`]).
    pub(super) fn add_transient(
        &mut self,
        mut unit: UnitSpec,
        aux: Vec<UnitSpec>,
        adopt: Vec<i32>,
        file: Option<String>,
        stdio: (&[StdStream], Vec<OwnedFd>),
    ) -> Reply {
        if let Err(e) = super::scopes::Scopes::check(&unit, &adopt) {
            return Reply::error(ErrorCode::Invalid, format!("{e}; nothing changed"));
        }
        let row = unit.kind.row();
        if !stdio.0.is_empty() && (row.runs != Runs::Process || row.adopts()) {
            return Reply::error(
                ErrorCode::Invalid,
                "only a service is handed standard streams; nothing changed",
            );
        }
        if unit.name.is_empty() {
            unit.name = self.fresh_run_name();
            unit.provides.retain(|t| !t.is_empty());
            if unit.provides.is_empty() {
                unit.provides.push(unit.name.clone());
            }
        }
        let name = unit.name.clone();
        for n in std::iter::once(&name).chain(aux.iter().map(|a| &a.name)) {
            if let Some(r) = self.no_room_for(n) {
                return r;
            }
        }
        // The instances it pulls in (`LogNamespace=`'s journald sockets,
        // a `Requires=getty@tty2.service`) are made from their templates,
        // as those a unit file names are when its set is read; one that
        // cannot be made is missing as any other unit.
        let pulled = [
            &unit.depends_on,
            &unit.requires,
            &unit.waits_for,
            &unit.wants,
        ];
        for n in pulled.into_iter().flat_map(|l| l.iter()) {
            if let Err(e) = self.instantiate(n) {
                self.sys.console(&format!("init: {name}: {e}"));
            }
        }
        let names: Vec<String> = aux.iter().map(|a| a.name.clone()).collect();
        let mut units = vec![unit];
        units.extend(aux);
        let r = self.patch_transient(RUN_SET.to_string(), units, Vec::new());
        if !matches!(r, Reply::Applied(_)) {
            return r;
        }
        let mut all = names;
        all.push(name.clone());
        if let Some(text) = file {
            if let Err(e) = self.write_run_file(&name, &text) {
                let _ = self.patch_transient(RUN_SET.to_string(), Vec::new(), all);
                return Reply::error(ErrorCode::Failed, format!("{e}; nothing changed"));
            }
        }
        self.scopes.expect(&name, adopt);
        self.passed.keep(&name, stdio.0, stdio.1);
        let now = self.now();
        match self.planner.want(&name, WantLife::Kept, now) {
            Ok(_) => r,
            Err(e) => {
                // Shutting down: the unit is not kept.
                self.passed.release(&name);
                let _ = self.drop_runs(all);
                want_error(e)
            }
        }
    }

    /// Writes the file of the transient unit `name` into the search
    /// path's directory of transient units, as systemd does (its
    /// `FragmentPath`, which `systemctl cat` shows and a reload reads
    /// again), making the directory if need be. Here rather than in
    /// flotilla-busd so that the file is there before the unit starts and
    /// [`Self::drop_runs`] removes it after: a unit that ends at once
    /// leaves none behind. Nothing without such a directory on the path.
    fn write_run_file(&self, name: &str, text: &str) -> Result<(), String> {
        let Some(dir) = self.transient_dir() else {
            return Ok(());
        };
        let path = dir.join(name);
        self.sys
            .create_dir_all(&dir)
            .and_then(|()| self.sys.write_file(&path, text.as_bytes()))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// The search path's directory of transient units, if it has one.
    fn transient_dir(&self) -> Option<PathBuf> {
        flotilla_systemd::transient_dir(&self.settings.units_path()).cloned()
    }

    /// Whether a new transient unit may be named `name`: an ended one of
    /// its name is let go first, as systemd has (its end stays seen until
    /// then: `systemd-run --wait` reads it); if not, the reply refusing it.
    fn no_room_for(&mut self, name: &str) -> Option<Reply> {
        if self.collectable_run(name) {
            let r = self.drop_runs(vec![name.to_string()]);
            if !matches!(r, Reply::Applied(_)) {
                return Some(r);
            }
        }
        let g = self.planner.graph();
        // A unit that needs no file and has none (a slice made from its
        // drop-ins) becomes the transient one, as systemd makes the
        // slice it has loaded transient; the set's unit hides it.
        let fileless =
            |i| g.node(i).origin.file.is_empty() && !g.node(i).spec.kind.row().needs_file;
        if g.unit(name)
            .is_some_and(|i| !g.node(i).ghost && !g.node(i).synthetic && !fileless(i))
        {
            return Some(Reply::error(
                ErrorCode::NotPossible,
                format!("a unit named `{name}` exists already; nothing changed"),
            ));
        }
        if g.shape().masks.contains(name) {
            return Some(Reply::error(
                ErrorCode::NotPossible,
                format!("`{name}` is masked; nothing changed"),
            ));
        }
        None
    }

    /// `stop-transient NAME`: stops the unit and takes it out of the set.
    pub(super) fn stop_transient(&mut self, name: &str) -> Reply {
        if !self.units.in_transient(RUN_SET, name) {
            return Reply::error(
                ErrorCode::UnknownUnit,
                format!("no transient unit named `{name}` (of `initctl run` or `initctl add`)"),
            );
        }
        let mut names = vec![name.to_string()];
        names.extend(self.idle_triggered(name));
        self.drop_runs(names)
    }

    /// The units of the set that `name` triggers and that are idle (never
    /// started, or ended as they go): a transient timer's service goes
    /// with the timer, as systemd lets go of both. One still running
    /// stays until a new unit of its name replaces it once it has ended.
    fn idle_triggered(&self, name: &str) -> Vec<String> {
        let Some(spec) = self.run_spec(name) else {
            return Vec::new();
        };
        spec.extras
            .triggers
            .iter()
            .filter(|t| self.is_run(t) && self.collectable_run(t))
            .cloned()
            .collect()
    }

    /// The spec of the set's unit `name`.
    fn run_spec(&self, name: &str) -> Option<&UnitSpec> {
        self.units
            .transient_sets()
            .get(RUN_SET)
            .and_then(|units| units.iter().find(|u| u.name == name))
            .map(|u| &**u)
    }

    /// Whether `name` is a unit of the set (`initctl run`, `add`, and the
    /// scopes and services made over D-Bus).
    pub(super) fn is_run(&self, name: &str) -> bool {
        self.units.in_transient(RUN_SET, name)
    }

    /// Takes units of the set out of it, with their files in the search
    /// path's directory of transient units ([`Self::write_run_file`]):
    /// systemd removes it when it lets the unit go (a reload would read
    /// it as a unit of the path).
    pub(super) fn drop_runs(&mut self, names: Vec<String>) -> Reply {
        let r = self.patch_transient(RUN_SET.to_string(), Vec::new(), names.clone());
        if matches!(r, Reply::Applied(_)) {
            if let Some(dir) = self.transient_dir() {
                for n in &names {
                    // None there (a scope's, an initctl run's) is no error.
                    let _ = self.sys.remove_file(&dir.join(n));
                }
            }
        }
        r
    }

    /// Whether `name` is a service of the set that ended as its
    /// `collect-mode` says (`flotilla_units::collect`): systemd has let go
    /// of such a unit, so a new one of its name replaces it.
    fn collectable_run(&self, name: &str) -> bool {
        let Some(spec) = self.run_spec(name) else {
            return false;
        };
        let g = self.planner.graph();
        let Some(view) = g.unit(name).and_then(|id| self.planner.view(id)) else {
            return false;
        };
        let now = Now {
            state: view.state,
            skipped: view.skipped,
            restarting: view.restart_at.is_some(),
        };
        collectable(spec, now)
    }

    /// `want UNIT`: required until the next target switch; with
    /// `at_once`, started now whatever its dependencies
    /// (`start-at-once`).
    pub(super) fn want(&mut self, unit: &str, at_once: bool) -> Reply {
        if let Err(e) = self.load_on_demand(unit) {
            return Reply::error(ErrorCode::UnknownUnit, e);
        }
        let now = self.now();
        let wanted = if at_once {
            self.planner.start_at_once(unit, WantLife::UntilSwitch, now)
        } else {
            self.planner.want(unit, WantLife::UntilSwitch, now)
        };
        match wanted {
            Ok(_) => Reply::Accepted {
                message: format!("starting {unit}"),
            },
            Err(e) => want_error(e),
        }
    }

    /// `unwant UNIT`.
    pub(super) fn unwant(&mut self, unit: &str) -> Reply {
        let now = self.now();
        match self.planner.unwant(unit, now) {
            Ok(()) => Reply::Accepted {
                message: format!("stopping {unit}"),
            },
            Err(e) => want_error(e),
        }
    }

    /// `run-N`, the first N that names no unit.
    fn fresh_run_name(&self) -> String {
        let g = self.planner.graph();
        (1u64..)
            .map(|n| format!("run-{n}"))
            .find(|n| g.unit(n).is_none() && !g.shape().masks.contains(n))
            .unwrap_or_else(|| "run".to_string())
    }
}

/// The reply to a want the planner refused.
fn want_error(e: WantError) -> Reply {
    match e {
        WantError::UnknownUnit(u) => {
            Reply::error(ErrorCode::UnknownUnit, format!("no unit named `{u}`"))
        }
        WantError::Masked(u) => Reply::error(ErrorCode::NotPossible, format!("`{u}` is masked")),
        WantError::ShuttingDown => Reply::error(ErrorCode::NotPossible, "shutting down"),
        WantError::RefusedManualStart(u) => Reply::error(
            ErrorCode::Refused,
            format!("`{u}` may not be started by hand (RefuseManualStart=); it starts when a target needs it"),
        ),
        WantError::RefusedManualStop(u) => Reply::error(
            ErrorCode::Refused,
            format!("`{u}` may not be stopped by hand (RefuseManualStop=); it stops when the target no longer needs it"),
        ),
    }
}
