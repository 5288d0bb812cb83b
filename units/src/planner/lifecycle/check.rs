//! The lifecycle table's cells of the `Check` phase: a unit with
//! conditions asks the init to check them before anything runs, and is
//! then started, skipped (`exited`) or failed (the module documentation's
//! **Conditions**).

use super::super::conditions::CheckOutcome;
use super::super::facts::Action;
use super::super::record::{Failure, Phase, Status};
use super::super::Planner;
use crate::graph::UnitId;
use crate::state::{FailureKind, UnitState};

impl Planner {
    /// `Idle` + start rule, for a unit with conditions: `Check`, the init
    /// asked. It takes a start slot while it waits for the answer.
    pub(super) fn begin_check(&mut self, u: UnitId) {
        let i = u.index();
        self.units[i].phase = Phase::Check;
        self.starting += 1;
        self.set_state(u, UnitState::Starting, "checking conditions");
        let spec = self.records[i]
            .running_spec
            .clone()
            .unwrap_or_else(|| self.graph.node(u).spec.clone());
        self.actions.push(Action::CheckConditions { unit: u, spec });
    }

    /// `Check` + the answer: the start goes on, the unit is skipped
    /// (`exited`, settled and not failed), or it failed (no restart).
    pub(super) fn checked(&mut self, u: UnitId, outcome: CheckOutcome) {
        let i = u.index();
        self.leave_starting(u);
        match outcome {
            CheckOutcome::Hold => {
                self.units[i].phase = Phase::Idle;
                self.run_start(u);
            }
            CheckOutcome::ConditionFailed(why) => {
                self.units[i].phase = Phase::Idle;
                let rec = &mut self.records[i];
                rec.running_spec = None;
                rec.attempt = 0;
                rec.rare_mut().skipped = true;
                self.set_state(u, UnitState::Exited, format!("skipped: {why}"));
            }
            CheckOutcome::AssertFailed(why) => {
                self.units[i].phase = Phase::Idle;
                let rec = &mut self.records[i];
                rec.running_spec = None;
                rec.restart_due = false;
                let why = format!("assertion failed: {why}");
                rec.rare_mut().failure = Some(Failure::new(FailureKind::Assert, why.clone()));
                self.set_state(u, UnitState::Failed, why);
            }
        }
    }

    /// `Check` + stop rule (the answer has not come): back to `Idle`,
    /// nothing ran.
    pub(super) fn stop_check(&mut self, u: UnitId, why: &'static str) {
        self.leave_starting(u);
        self.units[u.index()].phase = Phase::Idle;
        self.records[u.index()].running_spec = None;
        let unit = &mut self.units[u.index()];
        unit.to_stop = false;
        unit.restart_requested = false;
        unit.spec_changed = false;
        self.settle_unrun(u, why);
    }

    /// A skipped unit that is to stop: none of its stop commands runs
    /// (nothing of it ran); it is `waiting` if still required, else
    /// `disabled`.
    pub(super) fn stop_skipped(&mut self, u: UnitId, why: &'static str) {
        self.settle_unrun(u, why);
    }

    /// An idle unit none of whose processes ran leaves its start:
    /// `waiting` while required, else `disabled`.
    fn settle_unrun(&mut self, u: UnitId, why: &'static str) {
        let required = self.is_required(u) && !self.shutting_down;
        let state = if required {
            UnitState::Waiting
        } else {
            UnitState::Disabled
        };
        self.set_state(u, state, Status::Fixed(why));
    }
}
