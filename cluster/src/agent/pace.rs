//! How often an agent writes its units' states: at most once per
//! [`publish_pace`], which grows with the number of machines so that the
//! whole cluster's state writes stay near 30 a second, and as soon as its
//! changes pause for [`quiet`] (docs/cluster.md, "Agent").

use std::time::Duration;

/// The least time between two state writes of one agent: a lone change
/// is written at once, a burst (a unit a few milliseconds apart for ten
/// seconds) in a few writes instead of one per unit.
pub(super) const PUBLISH_EVERY: Duration = Duration::from_millis(200);

/// The pace grows by this much per machine in the cluster, so that the
/// agents together write states at most about 30 times a second however
/// many they are: during a deploy to 100 machines each agent receives a
/// few units four times a second, and one write per batch (each etcd
/// transaction costs etcd a millisecond or two of CPU) becomes one per
/// three seconds per agent.
pub(super) const PUBLISH_PER_MACHINE: Duration = Duration::from_millis(30);

/// The longest pace, whatever the cluster's size.
pub(super) const PUBLISH_MAX: Duration = Duration::from_secs(5);

/// Held-back states are written when no change came for this long (twice
/// the engine's pace: it hands out a deploy's units four times a second),
/// or longer in a larger cluster ([`quiet`]).
pub const QUIET: Duration = Duration::from_millis(500);

/// The pause grows by this much per machine in the cluster: a deploy to
/// 1,000 machines hands each agent a unit every second or two, and a pause
/// of half a second between them would make every unit a write of its
/// own (as many agent transactions as the users' creations, measured in
/// `docs/performance.md`).
pub(super) const QUIET_PER_MACHINE: Duration = Duration::from_millis(2);

/// The longest pause.
pub(super) const QUIET_MAX: Duration = Duration::from_secs(2);

/// How long an agent's changes must pause before its held-back states are
/// written, in a cluster of `machines`.
pub fn quiet(machines: usize) -> Duration {
    let per = QUIET_PER_MACHINE.saturating_mul(u32::try_from(machines).unwrap_or(u32::MAX));
    per.clamp(QUIET, QUIET_MAX)
}

/// The least time between two state writes of one agent in a cluster of
/// `machines`.
pub fn publish_pace(machines: usize) -> Duration {
    let per = PUBLISH_PER_MACHINE.saturating_mul(u32::try_from(machines).unwrap_or(u32::MAX));
    per.clamp(PUBLISH_EVERY, PUBLISH_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pace_of_state_writes_grows_with_the_machines() {
        // Small clusters: the least pace (a lone change still goes at once).
        assert_eq!(publish_pace(0), PUBLISH_EVERY);
        assert_eq!(publish_pace(3), PUBLISH_EVERY);
        assert_eq!(publish_pace(6), PUBLISH_EVERY);
        assert_eq!(publish_pace(20), Duration::from_millis(600));
        // Then 30 ms per machine: 100 agents write about 30 times a second.
        assert_eq!(publish_pace(30), Duration::from_millis(900));
        assert_eq!(publish_pace(100), Duration::from_secs(3));
        // Never slower than the cap.
        assert_eq!(publish_pace(500), PUBLISH_MAX);
        assert_eq!(publish_pace(usize::MAX), PUBLISH_MAX);
    }

    #[test]
    fn the_pause_before_held_back_states_grows_from_250_machines() {
        assert_eq!(quiet(0), QUIET);
        assert_eq!(quiet(100), QUIET);
        assert_eq!(quiet(250), QUIET);
        assert_eq!(quiet(500), Duration::from_secs(1));
        assert_eq!(quiet(1000), QUIET_MAX);
        assert_eq!(quiet(usize::MAX), QUIET_MAX);
    }
}
