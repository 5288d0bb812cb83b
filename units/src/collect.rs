//! When a transient service or timer has ended as systemd lets go of it: systemd
//! unloads a unit that is inactive and that nothing holds
//! (`unit_may_gc`: no job, its `CollectMode=` met), so that
//! `systemd-run --unit NAME` may make NAME again (docs/dbus.md,
//! "Transient services"). A failed one stays until `reset-failed`
//! unless its mode is `inactive-or-failed`. The init asks here when a
//! new unit comes with the name of a unit of its transient set of
//! `initctl run` that has a mode (busd gives every service made over
//! D-Bus one; `initctl run`'s own stay): such a unit is replaced. Until
//! then it stays listed, its end seen (`systemd-run --wait` reads it
//! after the unit ended; systemd keeps it while that client holds it).

use crate::spec::{CollectMode, Runs, UnitSpec};
use crate::state::UnitState;

/// What the planner says of the unit now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Now {
    /// Its state.
    pub state: UnitState,
    /// A condition (or an `ExecCondition=` command) skipped its last start.
    pub skipped: bool,
    /// A restart of it is due (a failed unit that will start again).
    pub restarting: bool,
}

/// Whether unit `spec`, so, is let go.
pub fn collectable(spec: &UnitSpec, now: Now) -> bool {
    let Some(mode) = spec.extras.collect_mode else {
        return false;
    };
    match now.state {
        // Inactive as systemd shows it: skipped, or ran to its end and
        // does not remain after it.
        UnitState::Exited => {
            now.skipped
                || match spec.timer() {
                    // Elapsed for good, not to remain (`systemd-run
                    // --on-active=` sends `RemainAfterElapse=no`).
                    Some(t) => !t.remain_after_elapse,
                    None => spec.kind.row().runs != Runs::Nothing && !spec.remain_after_exit(),
                }
        }
        // Inactive, never started or ended so: a timer's service that
        // ran, or that its timer never started.
        UnitState::Disabled => true,
        UnitState::Failed => mode == CollectMode::InactiveOrFailed && !now.restarting,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Command, UnitType};

    #[test]
    fn inactive_units_with_a_mode_go() {
        // As the translator makes a systemd oneshot: not remaining after
        // its end unless `RemainAfterExit=yes`.
        let unit = |mode, remain: Option<bool>| {
            let mut s = UnitSpec::new("u.service", UnitType::Oneshot);
            s.exec_start = Some(Command::new(["/bin/true"]));
            s.extras.collect_mode = mode;
            s.remain_after_exit = Some(remain.unwrap_or(false));
            s
        };
        let now = |state, skipped, restarting| Now {
            state,
            skipped,
            restarting,
        };
        use CollectMode::*;
        use UnitState::*;
        for (what, spec, at, want) in [
            (
                "ended",
                unit(Some(Inactive), None),
                now(Exited, false, false),
                true,
            ),
            (
                "skipped",
                unit(Some(Inactive), None),
                now(Exited, true, false),
                true,
            ),
            (
                "skipped, remain-after-exit",
                unit(Some(Inactive), Some(true)),
                now(Exited, true, false),
                true,
            ),
            (
                "up after its end",
                unit(Some(Inactive), Some(true)),
                now(Exited, false, false),
                false,
            ),
            (
                "running",
                unit(Some(Inactive), None),
                now(Running, false, false),
                false,
            ),
            (
                "failed",
                unit(Some(Inactive), None),
                now(Failed, false, false),
                false,
            ),
            (
                "failed, inactive-or-failed",
                unit(Some(InactiveOrFailed), None),
                now(Failed, false, false),
                true,
            ),
            (
                "failed, restarting",
                unit(Some(InactiveOrFailed), None),
                now(Failed, false, true),
                false,
            ),
            (
                "inactive: started by a timer, or never",
                unit(Some(Inactive), None),
                now(Disabled, false, false),
                true,
            ),
            (
                "no mode: initctl run's",
                unit(None, None),
                now(Exited, false, false),
                false,
            ),
        ] {
            assert_eq!(collectable(&spec, at), want, "{what}");
        }
    }
}
