//! Replacing the unit set (reload, transient units): a new graph, with each
//! unit's record carried over by name. Unchanged units keep their
//! processes; changed ones that are up restart with the new definition
//! (a virtual unit, which runs nothing, takes its new lists without a
//! restart), or with [`OnChange::Keep`] (systemd's daemon-reload) keep
//! running and take it as systemd's units do; removed ones that are up
//! stop, as "ghosts" that provide nothing, but for units read from a
//! systemd unit file, which run on as `not-found` until they stop
//! (`not_found.rs`).

use super::facts::Action;
use super::not_found::runs_on;
use super::record::{Phase, Record, Status, Unit};
use super::rules::{Changed, WorkList};
use super::Planner;
use crate::diag::Diagnostic;
use crate::graph::{shared, Graph, Shape, UnitId};
use crate::protocol::Applied;
use crate::spec::{Origin, UnitSpec, UnitType};
use crate::state::UnitState;
use crate::time::Instant;
use std::cmp::Reverse;
use std::collections::HashSet;
use std::sync::Arc;

/// What a replacement does with a unit that is up and whose definition
/// changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnChange {
    /// It stops and starts again with the new definition (`initctl
    /// reload`, transient sets: docs/initctl.md, "reload").
    Restart,
    /// It keeps running, as after systemd's daemon-reload, which restarts
    /// nothing: a unit that is up (or `exited`) takes the new definition
    /// at once for what it runs from now on (its stop and reload
    /// commands, timeouts, restart policy: systemd replaces a loaded
    /// unit's settings in place); one on its way up or down ends that
    /// with the definition it began it with (its command lists are
    /// counted through). A failed unit stays failed. Its next start runs
    /// the new definition either way.
    Keep,
}

impl Planner {
    /// Replaces the unit set. With `strict`, any error refuses the whole set
    /// and nothing changes; without, bad units are left out. Returns what
    /// changed, the warnings, and for each old unit id its new id.
    pub fn replace_units<S: Into<Arc<UnitSpec>>>(
        &mut self,
        units: Vec<(S, Origin)>,
        strict: bool,
        now: Instant,
    ) -> Result<(Applied, Vec<Option<UnitId>>), Vec<Diagnostic>> {
        let shape = self.graph.shape().clone();
        self.replace_shaped(units, shape, strict, OnChange::Restart, now)
    }

    /// [`Planner::replace_units`] with new declared targets and masks, and
    /// what becomes of changed units that are up.
    pub fn replace_shaped<S: Into<Arc<UnitSpec>>>(
        &mut self,
        units: Vec<(S, Origin)>,
        shape: Arc<Shape>,
        strict: bool,
        on_change: OnChange,
        now: Instant,
    ) -> Result<(Applied, Vec<Option<UnitId>>), Vec<Diagnostic>> {
        self.now = now;
        let (graph, diags) = self.build_with_ghosts(shared(units), shape, strict)?;
        let mut applied = Applied {
            warnings: diags
                .iter()
                .filter(|d| !d.is_error())
                .map(|d| d.to_string())
                .collect(),
            ..Applied::default()
        };
        let old = std::mem::replace(&mut self.graph, graph);
        self.target_provider = self.graph.provider(&self.target);
        let map = self.carry_records_over(&old, &mut applied, on_change, now);
        self.remap_processes(&map);
        self.keep_not_found(&old);
        if on_change == OnChange::Keep {
            for name in &applied.changed {
                if let Some(u) = self.graph.unit(name) {
                    self.rearm_running(u);
                }
            }
        }
        self.carry_choices(&old);
        self.failed_over = std::mem::take(&mut self.failed_over)
            .into_iter()
            .filter_map(|(n, m)| {
                Some((map.get(n.index()).copied()??, map.get(m.index()).copied()??))
            })
            .collect();
        self.prune_wants(false);
        // The index reads each unit's `required` flag (an `after` edge on
        // a unit counts only while it is required): the set comes first.
        self.required = self.required_now();
        self.index_graph();
        self.push_all();
        self.run();
        Ok((applied, map))
    }

    /// The new graph: `units`, and as ghosts the units that are gone (or
    /// were ghosts already) but still have processes, or stop commands
    /// still to run (an exited oneshot that remains: a mount unit's
    /// umount, `systemd-umount` of a transient mount), or that, read from a
    /// systemd unit file, remained `exited` (`not_found.rs`).
    fn build_with_ghosts(
        &self,
        units: Vec<(Arc<UnitSpec>, Origin)>,
        shape: Arc<Shape>,
        strict: bool,
    ) -> Result<(Graph, Vec<Diagnostic>), Vec<Diagnostic>> {
        let to_stop = |i: UnitId| {
            let spec = &self.graph.node(i).spec;
            self.units[i.index()].state == UnitState::Exited
                && spec.remain_after_exit()
                && (spec.exec_stop.is_some() || !spec.extras.exec_stop_post.is_empty())
        };
        let named: HashSet<&str> = units.iter().map(|(s, _)| s.name.as_str()).collect();
        let ghosts: Vec<(Arc<UnitSpec>, Origin)> = self
            .graph
            .ids()
            .filter(|&i| {
                let u = &self.units[i.index()];
                u.phase != Phase::Idle
                    || to_stop(i)
                    || (runs_on(u) && self.graph.node(i).origin.files != crate::spec::NO_FILES)
            })
            .filter(|&i| {
                let name = &self.graph.node(i).spec.name;
                self.graph.node(i).ghost || !named.contains(name.as_str())
            })
            .map(|i| {
                let n = self.graph.node(i);
                let spec = self.records[i.index()].running_spec.as_ref();
                (spec.unwrap_or(&n.spec).clone(), n.origin.clone())
            })
            .collect();
        if strict {
            return Graph::build_strict_shaped(units, ghosts, shape);
        }
        // Lenient: rebuild with ghosts from the surviving units.
        let (g, d) = Graph::build_shaped(units, (*shape).clone());
        let survivors: Vec<(Arc<UnitSpec>, Origin)> =
            g.units().map(|(s, o)| (s.clone(), o.clone())).collect();
        match Graph::build_strict_shaped(survivors, ghosts, shape) {
            Ok((g2, _)) => Ok((g2, d)),
            Err(_) => Ok((g, d)),
        }
    }

    /// Moves each unit's record from the `old` graph's index to the new
    /// one's (by name), notes what was added, changed and removed, and
    /// returns the map of old ids to new ones.
    fn carry_records_over(
        &mut self,
        old: &Graph,
        applied: &mut Applied,
        on_change: OnChange,
        now: Instant,
    ) -> Vec<Option<UnitId>> {
        let mut old_units = std::mem::take(&mut self.units);
        let mut old_records = std::mem::take(&mut self.records);
        let n = self.graph.len();
        let mut map: Vec<Option<UnitId>> = vec![None; old.len()];
        let mut units = Vec::with_capacity(n);
        let mut records = Vec::with_capacity(n);
        for id in self.graph.node_ids() {
            let node = self.graph.node(id);
            let oid = if self.graph.is_target(id) {
                old.target_node(&node.spec.name)
            } else {
                old.unit(&node.spec.name).filter(|&o| !old.is_target(o))
            };
            let Some(oid) = oid else {
                if !node.synthetic {
                    applied.added.push(node.spec.name.clone());
                }
                units.push(Unit::new());
                records.push(Record::new(now));
                continue;
            };
            map[oid.index()] = Some(id);
            let mut unit = std::mem::replace(&mut old_units[oid.index()], Unit::new());
            let mut rec = std::mem::replace(&mut old_records[oid.index()], Record::new(now));
            // The dependency indices may move: a status that names one
            // becomes text, from the old graph.
            if let Status::WaitingFor(j) = rec.status {
                rec.status = Status::Text(format!("waiting for {}", old.dep_target(oid, j)));
            }
            let onode = old.node(oid);
            if node.synthetic {
                // A declared target's node or a masked name: nothing to tell.
            } else if !node.ghost && (onode.spec != node.spec || onode.ghost) {
                if onode.ghost {
                    applied.added.push(node.spec.name.clone());
                } else {
                    applied.changed.push(node.spec.name.clone());
                }
                // A `not-found` unit whose file is back runs on with it,
                // as systemd loads it again (`not_found.rs`).
                if on_change == OnChange::Keep || onode.not_found() {
                    keep_running(&unit, &mut rec, &node.spec);
                } else {
                    restart_changed(&mut unit, &mut rec, node.spec.kind);
                }
            } else if !node.ghost {
                applied.unchanged += 1;
            }
            unit.queued = false;
            units.push(unit);
            records.push(rec);
        }
        for oid in old.ids() {
            let onode = old.node(oid);
            if !onode.ghost
                && !onode.synthetic
                && self
                    .graph
                    .unit(&onode.spec.name)
                    .is_none_or(|i| self.graph.node(i).ghost)
            {
                applied.removed.push(onode.spec.name.clone());
            }
        }
        self.units = units;
        self.records = records;
        map
    }

    /// Renumbers what refers to units by id: the PIDs, the timers, the
    /// changes not yet taken and the actions not yet carried out (those of
    /// units that are gone are dropped).
    fn remap_processes(&mut self, map: &[Option<UnitId>]) {
        let n = self.graph.len();
        let new_id = |u: UnitId| map.get(u.index()).copied().flatten();
        self.pids = self
            .pids
            .drain()
            .filter_map(|(pid, (u, role))| new_id(u).map(|nu| (pid, (nu, role))))
            .collect();
        self.timers.clear();
        for (i, r) in self.records.iter().enumerate() {
            if let Some((t, _)) = r.timer {
                self.timers.push(Reverse((t, i as u32, r.timer_gen)));
            }
        }
        self.start_queue.clear();
        self.starting = self.units.iter().filter(|u| u.phase.starting()).count();
        self.work = WorkList::new(n);
        let old_changed = std::mem::take(&mut self.changed.list);
        self.changed = Changed {
            list: Vec::new(),
            listed: vec![false; n],
        };
        for u in old_changed.into_iter().filter_map(new_id) {
            self.changed.push(u);
        }
        self.actions = std::mem::take(&mut self.actions)
            .into_iter()
            .filter_map(|mut a| {
                let (Action::Spawn { unit, .. }
                | Action::Kill { unit, .. }
                | Action::ReadPidfile { unit, .. }
                | Action::CheckConditions { unit, .. }
                | Action::GuessMainPid { unit }
                | Action::Arm { unit, .. }
                | Action::Adopt { unit, .. }
                | Action::Disarm { unit }
                | Action::AwaitEmpty { unit }
                | Action::SaveTimerStamp { unit, .. }) = &mut a;
                *unit = new_id(*unit)?;
                Some(a)
            })
            .collect();
    }
}

/// [`OnChange::Restart`] of a changed unit: one that is up stops to start
/// again; a failed one gets another try.
fn restart_changed(unit: &mut Unit, rec: &mut Record, kind: UnitType) {
    // A virtual unit (a target) runs nothing to restart: its new lists
    // apply at once. Restarting it would stop everything that depends on
    // it for nothing (`systemctl enable` of a unit adds to
    // `sysinit.target.wants/`, and every service requires sysinit.target).
    if unit.up() && kind != UnitType::Virtual {
        unit.spec_changed = true;
    }
    rec.attempt = 0;
    if unit.phase == Phase::Idle && unit.state == UnitState::Failed {
        unit.state = UnitState::Waiting;
        rec.timer = None;
        rec.rare_reset(|r| r.failure = None);
    }
}

/// [`OnChange::Keep`] of a changed unit: one that is up and settled (or
/// `exited`) runs on with `spec` as its definition; one starting,
/// reloading or stopping keeps the definition its commands are counted
/// in until that ends.
fn keep_running(unit: &Unit, rec: &mut Record, spec: &Arc<UnitSpec>) {
    let settled =
        unit.phase == Phase::Up || (unit.phase == Phase::Idle && unit.state == UnitState::Exited);
    if settled && rec.running_spec.is_some() {
        rec.running_spec = Some(spec.clone());
    }
}
