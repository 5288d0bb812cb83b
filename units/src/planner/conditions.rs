//! A unit's conditions and assertions at its start (the module
//! documentation's **Conditions**): what the init answers to
//! [`super::Action::CheckConditions`], worked out from the unit's
//! definition and the machine's facts. The `Check` phase's cells are in
//! `lifecycle/check.rs`.

use crate::condition::{check as check_conditions, Condition, ConditionFacts};
use crate::spec::UnitSpec;

/// The answer to [`super::Action::CheckConditions`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckOutcome {
    /// Every condition and assertion holds: the start goes on.
    Hold,
    /// A condition failed, as systemd's status says it
    /// (`ConditionPathExists=/x was not met`): the unit is skipped.
    ConditionFailed(String),
    /// An assertion failed: the unit fails.
    AssertFailed(String),
}

/// Checks `spec`'s conditions, then (if they hold) its assertions, as
/// systemd does: a failed condition skips the unit whatever its
/// assertions say.
pub fn check_unit(spec: &UnitSpec, facts: &dyn ConditionFacts) -> CheckOutcome {
    let split = |assert: bool| -> Vec<Condition> {
        spec.extras
            .conditions
            .iter()
            .filter(|c| c.assert == assert)
            .cloned()
            .collect()
    };
    let verdict = check_conditions(&split(false), facts);
    if !verdict.ok {
        return CheckOutcome::ConditionFailed(verdict.failures.join("; "));
    }
    let verdict = check_conditions(&split(true), facts);
    if !verdict.ok {
        return CheckOutcome::AssertFailed(verdict.failures.join("; "));
    }
    CheckOutcome::Hold
}
