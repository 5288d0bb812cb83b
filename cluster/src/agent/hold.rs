//! A launched unit's stop, held for a moment: how fleetctl's `restart`
//! (a stop, then a start) restarts the unit instead of leaving it stopped.
//!
//! fleetctl's `restart` sets the unit's desired state to `loaded`, then
//! polls `GET /units/<name>` (first after 250 ms) until `currentState` is
//! `launched` — the state it waits for after *both* of its steps, not
//! `loaded` — and only then sets `launched` and waits again. Against
//! fleetd that first wait ended because fleetd's agent stopped the unit
//! (and cleared its `launched` heartbeat) some time after the change.
//! clusterd's agent stops a unit within milliseconds, so the first wait
//! never ended and the unit stayed stopped. So an agent told to stop a
//! launched unit (`launched` -> `loaded`, same unit file) keeps it running
//! for [`STOP_HOLD`] first, reporting it `launched` as it truly is; asked
//! to launch it again within that time (the restart's second step), it
//! restarts the unit through its init: stopped and started. Otherwise the
//! stop goes ahead when the time is up. docs/cluster.md "Agent" states the
//! rule.

use crate::model::{Assignment, ClusterState};
use std::time::Duration;

/// How long a launched unit's stop is held.
pub const STOP_HOLD: Duration = Duration::from_secs(1);

/// What a new assignment of a unit does, given what it was, whether its
/// stop is held, and whether the init runs it launched with that file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// Apply it now (ending any hold).
    Apply,
    /// A stop of a launched unit: keep it running for [`STOP_HOLD`].
    Start,
    /// Launched again while its stop was held: restart it, keep it
    /// launched.
    Restart,
}

/// Decides what `new` (`None`: the unit left this machine) does after
/// `old`.
pub fn on_assignment(
    old: Option<&Assignment>,
    new: Option<&Assignment>,
    held: bool,
    launched_here: bool,
) -> Hold {
    let (Some(old), Some(new)) = (old, new) else {
        return Hold::Apply;
    };
    if old.hash != new.hash {
        return Hold::Apply;
    }
    match (old.desired, new.desired) {
        (ClusterState::Launched, ClusterState::Loaded) if launched_here && !held => Hold::Start,
        (ClusterState::Loaded, ClusterState::Launched) if held => Hold::Restart,
        _ => Hold::Apply,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(desired: ClusterState, hash: &str) -> Assignment {
        Assignment {
            desired,
            hash: hash.into(),
            options: Vec::new(),
            global: false,
        }
    }

    #[test]
    fn a_stop_then_a_start_is_a_restart() {
        use ClusterState::{Inactive, Launched, Loaded};
        let (on, off) = (a(Launched, "h"), a(Loaded, "h"));
        // fleetctl's restart: the stop is held, the start restarts.
        assert_eq!(
            on_assignment(Some(&on), Some(&off), false, true),
            Hold::Start
        );
        assert_eq!(
            on_assignment(Some(&off), Some(&on), true, true),
            Hold::Restart
        );
        // A plain start of a loaded unit, a stop of a unit not running
        // launched here (the init has not taken it yet), a second stop.
        assert_eq!(
            on_assignment(Some(&off), Some(&on), false, false),
            Hold::Apply
        );
        assert_eq!(
            on_assignment(Some(&on), Some(&off), false, false),
            Hold::Apply
        );
        assert_eq!(
            on_assignment(Some(&on), Some(&off), true, true),
            Hold::Apply
        );
        // A new unit file, a unit leaving the machine, a new unit: at once.
        assert_eq!(
            on_assignment(Some(&on), Some(&a(Loaded, "h2")), false, true),
            Hold::Apply
        );
        assert_eq!(on_assignment(Some(&on), None, false, true), Hold::Apply);
        assert_eq!(on_assignment(Some(&off), None, true, true), Hold::Apply);
        assert_eq!(on_assignment(None, Some(&on), false, false), Hold::Apply);
        assert_eq!(
            on_assignment(Some(&on), Some(&a(Inactive, "h")), false, true),
            Hold::Apply
        );
    }
}
