//! The cgroup v2 freezer (systemd's `FreezeUnit`/`ThawUnit`, `systemctl
//! freeze`/`thaw`): the state flotilla shows for a unit or a slice, in
//! systemd's words, and how a request and the kernel's word move it.
//!
//! A freeze writes `1` to the cgroup's `cgroup.freeze` and the unit is
//! `freezing` until the kernel says `frozen 1` in `cgroup.events`; a thaw
//! writes `0` and the unit is `thawing` until it says `frozen 0`. Only
//! what flotilla asked moves the state: a freeze written by someone else
//! (a manager up the tree, a user's `echo 1 > cgroup.freeze`) changes the
//! kernel's word but not the state shown, as systemd keeps its own
//! (docs/units.md, "The freezer"). A unit below a slice flotilla froze
//! shows the slice's state while its own is `running`, as systemd freezes
//! a slice's members with it. The init does the writing and watching
//! (`init/src/runtime/freezer.rs`).

use serde::{Deserialize, Serialize};

/// A unit's (or a slice's) freezer state (systemd's `FreezerState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FreezerState {
    /// Not frozen (or thawed).
    #[default]
    Running,
    /// `1` written to `cgroup.freeze`; the kernel has not said `frozen 1` yet.
    Freezing,
    /// Frozen: the kernel said so.
    Frozen,
    /// `0` written; the kernel has not said `frozen 0` yet.
    Thawing,
}

impl FreezerState {
    /// systemd's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            FreezerState::Running => "running",
            FreezerState::Freezing => "freezing",
            FreezerState::Frozen => "frozen",
            FreezerState::Thawing => "thawing",
        }
    }

    /// `running` (what a status leaves out).
    pub fn is_running(&self) -> bool {
        *self == FreezerState::Running
    }
}

/// What is asked of the freezer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FreezerAction {
    /// `systemctl freeze`.
    Freeze,
    /// `systemctl thaw`.
    Thaw,
}

/// What a request does in a state ([`ask`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// Nothing to do: the state is already the one asked for (freezing a
    /// frozen unit, thawing a running one); answered at once.
    Already,
    /// Write `frozen` (`1` or `0`) to `cgroup.freeze`; the state is `now`
    /// until the kernel's word ([`kernel_said`]) ends it, and then the
    /// request is answered.
    Write {
        /// The value written.
        frozen: bool,
        /// The state meanwhile.
        now: FreezerState,
    },
    /// Refused: an earlier request is still under way (systemd's
    /// "Previously requested freezer operation … is still in progress").
    InProgress,
}

/// What `action` does in `state`. As systemd: a freeze while a freeze or
/// a thaw is under way, and a thaw while a thaw is, are refused; a thaw
/// while freezing turns it around (the freeze's client is told it was
/// cancelled).
pub fn ask(state: FreezerState, action: FreezerAction) -> Asked {
    use FreezerAction::{Freeze, Thaw};
    use FreezerState::{Freezing, Frozen, Running, Thawing};
    match (state, action) {
        (Frozen, Freeze) | (Running, Thaw) => Asked::Already,
        (Running, Freeze) => Asked::Write {
            frozen: true,
            now: Freezing,
        },
        (Frozen | Freezing, Thaw) => Asked::Write {
            frozen: false,
            now: Thawing,
        },
        (Freezing | Thawing, Freeze) | (Thawing, Thaw) => Asked::InProgress,
    }
}

/// The state after the kernel said `frozen` in `cgroup.events`: only a
/// change flotilla asked for ends (`freezing` with `frozen 1`, `thawing`
/// with `frozen 0`); any other word (a freeze from outside) leaves the
/// state as it is.
pub fn kernel_said(state: FreezerState, frozen: bool) -> FreezerState {
    match (state, frozen) {
        (FreezerState::Freezing, true) => FreezerState::Frozen,
        (FreezerState::Thawing, false) => FreezerState::Running,
        (s, _) => s,
    }
}

/// Whether a request waiting in `state` is answered now.
pub fn settled(state: FreezerState) -> bool {
    matches!(state, FreezerState::Running | FreezerState::Frozen)
}

/// The state shown for a unit whose own is `own`, below slices whose
/// states (as flotilla froze them) are `above`, outermost first: its own
/// unless that is `running`, else the innermost slice's that is not.
pub fn shown(own: FreezerState, above: &[FreezerState]) -> FreezerState {
    if !own.is_running() {
        return own;
    }
    above
        .iter()
        .rev()
        .copied()
        .find(|s| !s.is_running())
        .unwrap_or(own)
}

#[cfg(test)]
mod tests {
    use super::FreezerAction::{Freeze, Thaw};
    use super::FreezerState::{Freezing, Frozen, Running, Thawing};
    use super::*;

    #[test]
    fn each_request_in_each_state() {
        let w = |frozen, now| Asked::Write { frozen, now };
        let table = [
            (Running, Freeze, w(true, Freezing)),
            (Running, Thaw, Asked::Already),
            (Freezing, Freeze, Asked::InProgress),
            (Freezing, Thaw, w(false, Thawing)),
            (Frozen, Freeze, Asked::Already),
            (Frozen, Thaw, w(false, Thawing)),
            (Thawing, Freeze, Asked::InProgress),
            (Thawing, Thaw, Asked::InProgress),
        ];
        for (state, action, want) in table {
            assert_eq!(ask(state, action), want, "{state:?} {action:?}");
        }
    }

    #[test]
    fn only_the_change_asked_for_is_ended_by_the_kernel() {
        let table = [
            (Running, true, Running),
            (Running, false, Running),
            (Freezing, true, Frozen),
            (Freezing, false, Freezing),
            (Frozen, true, Frozen),
            (Frozen, false, Frozen),
            (Thawing, true, Thawing),
            (Thawing, false, Running),
        ];
        for (state, frozen, want) in table {
            assert_eq!(
                kernel_said(state, frozen),
                want,
                "{state:?} frozen {frozen}"
            );
            assert_eq!(settled(want), matches!(want, Running | Frozen));
        }
    }

    #[test]
    fn a_unit_shows_its_own_state_else_its_innermost_frozen_slices() {
        let table: [(FreezerState, &[FreezerState], FreezerState); 7] = [
            (Running, &[], Running),
            (Running, &[Running, Running], Running),
            (Running, &[Frozen], Frozen),
            (Running, &[Frozen, Thawing], Thawing),
            (Running, &[Freezing, Running], Freezing),
            (Frozen, &[Running], Frozen),
            (Thawing, &[Frozen], Thawing),
        ];
        for (own, above, want) in table {
            assert_eq!(shown(own, above), want, "{own:?} below {above:?}");
        }
    }

    #[test]
    fn the_words_are_systemds() {
        for (s, w) in [
            (Running, "running"),
            (Freezing, "freezing"),
            (Frozen, "frozen"),
            (Thawing, "thawing"),
        ] {
            assert_eq!(s.as_str(), w);
            assert_eq!(serde_json::to_string(&s).ok(), Some(format!("\"{w}\"")));
        }
    }
}
