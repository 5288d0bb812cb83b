//! The states of units and targets as the world sees them (docs/contract.md §4).
//!
//! The planner ([`crate::planner`]) moves units between these states; the
//! control protocol reports them.

use serde::{Deserialize, Serialize};

/// A unit's state (docs/contract.md §4). A target's state is its provider's.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum UnitState {
    /// Not required by the current target, and not running.
    #[default]
    Disabled,
    /// Required, waiting for its dependencies (or for a start slot).
    Waiting,
    /// Being started: not ready yet.
    Starting,
    /// Up and ready.
    Running,
    /// Up, reloading its configuration.
    Reloading,
    /// Its process ended successfully and that is what it is for (`oneshot`,
    /// `background-scripted`).
    Exited,
    /// Being stopped.
    Stopping,
    /// It failed; it may be waiting to restart.
    Failed,
}

impl UnitState {
    /// Active = `running`, `reloading` or `exited`.
    pub fn is_active(self) -> bool {
        matches!(
            self,
            UnitState::Running | UnitState::Reloading | UnitState::Exited
        )
    }

    /// The name used in the protocol and in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            UnitState::Disabled => "disabled",
            UnitState::Waiting => "waiting",
            UnitState::Starting => "starting",
            UnitState::Running => "running",
            UnitState::Reloading => "reloading",
            UnitState::Exited => "exited",
            UnitState::Stopping => "stopping",
            UnitState::Failed => "failed",
        }
    }
}

impl std::fmt::Display for UnitState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a unit failed, in systemd's words for a unit's `Result=` (what
/// `systemctl show -p Result` prints and the D-Bus interface serves), so
/// that no reader has to guess it from the status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// A process exited with a status other than success.
    ExitCode,
    /// A signal killed a process.
    Signal,
    /// A start or stop took longer than its timeout.
    Timeout,
    /// The service stopped pinging its watchdog.
    Watchdog,
    /// More starts than the start limit allows in its interval.
    StartLimitHit,
    /// A socket or path unit fired more often than its trigger limit.
    TriggerLimitHit,
    /// The daemon did not say where it runs (no usable PID file).
    Protocol,
    /// Something the unit needs could not be made: a process not spawned,
    /// a socket not bound, a command missing.
    Resources,
    /// An `Assert…=` did not hold.
    Assert,
    /// The kernel's OOM killer killed a process of the unit
    /// (`OOMPolicy=stop` or `kill`).
    OomKill,
    /// Not a failure: an `exec-condition` command exited with 1 to 254,
    /// so the start was skipped (systemd's `exec-condition` result, shown
    /// while the unit is inactive).
    ExecCondition,
}

impl FailureKind {
    /// systemd's word.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::ExitCode => "exit-code",
            FailureKind::Signal => "signal",
            FailureKind::Timeout => "timeout",
            FailureKind::Watchdog => "watchdog",
            FailureKind::StartLimitHit => "start-limit-hit",
            FailureKind::TriggerLimitHit => "trigger-limit-hit",
            FailureKind::Protocol => "protocol",
            FailureKind::Resources => "resources",
            FailureKind::Assert => "assert",
            FailureKind::OomKill => "oom-kill",
            FailureKind::ExecCondition => "exec-condition",
        }
    }
}

/// The three kinds of dependency (docs/contract.md §4), ordering (`after`), the link
/// from an alternative target to a provider it did not choose, and the
/// two that pull a unit in without ordering (`wants`, `requires`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DepKind {
    /// Hard: needed to start and to stay up.
    DependsOn,
    /// Milestone: needed to start only.
    DependsMs,
    /// Ordering only: waits until the dependency is active or failed.
    WaitsFor,
    /// Not a unit-file key: the link from an `alternative` target's node to
    /// a provider it did not choose. No rule reads it but the stop order (a
    /// provider that was chosen stops after the target's node), so that a
    /// switch of the choice stops the old provider after what needed it.
    Standby,
    /// Ordering only, and only when the other unit is required anyway
    /// (`after`, and the other side of `before`): never pulls it in.
    After,
    /// Pulls the unit in and orders nothing (systemd's `Wants=` without
    /// `After=`): the two start concurrently, and what becomes of it
    /// changes nothing for the wanter.
    Wants,
    /// Pulls the unit in and orders nothing (systemd's `Requires=` without
    /// `After=`): the two start concurrently, but the requirer does not
    /// start, or is stopped, while the unit is failed, blocked or stopping.
    Requires,
    /// Needed as `depends-on` needs it, but never pulled in (systemd's
    /// `Requisite=`): when nothing else requires the unit, the dependent
    /// does not start.
    Requisite,
    /// Follows the unit's stop and restart, nothing else: never pulls it
    /// in, orders nothing, and its failure changes nothing (systemd's
    /// `PartOf=`).
    PartOf,
}

impl DepKind {
    /// Every kind, for the tests that hold each to its key and its doc.
    pub const ALL: [DepKind; 9] = [
        DepKind::DependsOn,
        DepKind::DependsMs,
        DepKind::WaitsFor,
        DepKind::Standby,
        DepKind::After,
        DepKind::Wants,
        DepKind::Requires,
        DepKind::Requisite,
        DepKind::PartOf,
    ];

    /// The unit-file key (`standby` has none: it is its name here).
    pub fn as_str(self) -> &'static str {
        match self {
            DepKind::DependsOn => "depends-on",
            DepKind::DependsMs => "depends-ms",
            DepKind::WaitsFor => "waits-for",
            DepKind::Standby => "standby",
            DepKind::After => "after",
            DepKind::Wants => "wants",
            DepKind::Requires => "requires",
            DepKind::Requisite => "requisite",
            DepKind::PartOf => "part-of",
        }
    }

    /// Whether it pulls its unit into the required set: every kind but
    /// ordering, `standby`, `requisite` and `part-of`.
    pub fn pulls_in(self) -> bool {
        !matches!(
            self,
            DepKind::After | DepKind::Standby | DepKind::Requisite | DepKind::PartOf
        )
    }

    /// Whether it orders the two units (the dependent starts after its
    /// unit and stops before it): every kind but `wants`, `requires` and
    /// `part-of`. Only these edges make a cycle.
    pub fn orders(self) -> bool {
        !matches!(self, DepKind::Wants | DepKind::Requires | DepKind::PartOf)
    }
}

#[cfg(test)]
mod tests {
    use super::DepKind;

    /// `ALL` lists every kind: a new variant fails this match until it is
    /// given its place in `ALL`.
    #[test]
    fn all_lists_every_dependency_kind() {
        for (i, k) in DepKind::ALL.into_iter().enumerate() {
            let at = match k {
                DepKind::DependsOn => 0,
                DepKind::DependsMs => 1,
                DepKind::WaitsFor => 2,
                DepKind::Standby => 3,
                DepKind::After => 4,
                DepKind::Wants => 5,
                DepKind::Requires => 6,
                DepKind::Requisite => 7,
                DepKind::PartOf => 8,
            };
            assert_eq!(i, at, "{k:?} is out of its place in DepKind::ALL");
        }
    }
}
