//! The fence: a machine cut off etcd stops its units before another
//! machine can be given them (docs/cluster.md "Agent", "A cut longer than
//! the TTL").
//!
//! The arithmetic, by the presence lease. etcd expires a lease no earlier
//! than its TTL after its leader *received* the last keep-alive; the agent
//! knows when it *sent* the last keep-alive that was answered (by its
//! monotonic clock), which is earlier. So the lease cannot expire, and the
//! engine cannot place this machine's units elsewhere, before
//! `deadline = sent + TTL` ([`crate::lease::move_on`]).
//! The keep-alive is sent every [`renew_every`] (a tenth of the TTL), so
//! while etcd answers the deadline stays about nine tenths of a TTL ahead.
//! When no answer comes:
//!
//! - at `deadline - TTL/5` ([`Times::stop_at`]) the non-global units the
//!   engine placed here are stopped (a global unit runs on every machine
//!   whose metadata matches: the engine never gives it to another machine
//!   in this one's place, so there is no second copy to fear);
//! - at `deadline - TTL/20` ([`Times::kill_at`]) whatever of them has not
//!   stopped yet gets SIGKILL, so that it is gone by the deadline.
//!
//! The init does both, by the lease on the set `cluster` the agent renews
//! with these instants at each answered keep-alive ([`super::renew`]): a
//! clusterd that is killed and not restarted, or frozen, cannot keep the
//! fence from going up. The agent follows the lease the init holds
//! (`held`): once its stop time has passed, the init has taken the units
//! out of the set, and the agent lists the init again rather than trust
//! what it last applied. A renewal that reaches the init just after the
//! stop moves `held` on before the fence can look; the init's reply says
//! the lease had fired, and the agent lists it again all the same
//! ([`super::renew`]). It lifts the fence when etcd answers again and
//! the init holds a renewal: with the presence lease still alive, or with
//! a new one after registering anew. Lifted, it hands the init every
//! non-global unit placed here then, those the engine placed here while
//! the fence was up as well as those it stopped ([`kept_out`]).
//!
//! A cut (or an outage of etcd itself: the agent cannot tell them apart)
//! shorter than `TTL - TTL/5 - TTL/10` (seven tenths of the TTL, less the
//! moment the keep-alive takes to get through again) therefore stops
//! nothing.

use crate::model::Assignment;
use crate::stored::RegistryError;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// How often the presence lease is renewed: a tenth of the TTL, so that
/// the deadline is never more than a tenth of the TTL short of a whole
/// TTL ahead while etcd answers.
pub fn renew_every(ttl: Duration) -> Duration {
    ttl / 10
}

/// The instants of a fence, from the lease's earliest expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Times {
    /// When the stop of the units begins.
    pub stop_at: Instant,
    /// When what has not stopped is killed.
    pub kill_at: Instant,
    /// The earliest the lease can expire: no other machine can be given a
    /// unit of this one before.
    pub deadline: Instant,
}

impl Times {
    /// The fence's instants for a lease of `ttl` that expires no earlier
    /// than `deadline`.
    pub fn before(deadline: Instant, ttl: Duration) -> Times {
        let back = |d: Duration| deadline.checked_sub(d).unwrap_or(deadline);
        Times {
            stop_at: back(ttl / 5),
            kill_at: back(ttl / 20),
            deadline,
        }
    }
}

/// Where the fence stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fence {
    /// The units run as the engine placed them.
    #[default]
    Open,
    /// The init has taken them out of the set.
    Stopping,
    /// The init has killed what had not stopped.
    Killed,
}

/// What the fence has come to now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Nothing yet; look again at the instant (none: nothing to wait for).
    Wait(Option<Instant>),
    /// The non-global units are stopped.
    Stop,
    /// What of them still ran is killed.
    Kill,
}

/// What is due at `now` for a fence in state `fence`, given the earliest
/// expiry of the presence lease that the init's lease was last renewed to
/// (`None`: never, nothing to fence).
pub fn due(now: Instant, fence: Fence, expiry: Option<Instant>, ttl: Duration) -> Due {
    let Some(deadline) = expiry else {
        return Due::Wait(None);
    };
    let t = Times::before(deadline, ttl);
    match fence {
        Fence::Open if now >= t.stop_at => Due::Stop,
        Fence::Open => Due::Wait(Some(t.stop_at)),
        Fence::Stopping if now >= t.kill_at => Due::Kill,
        Fence::Stopping => Due::Wait(Some(t.kill_at)),
        Fence::Killed => Due::Wait(None),
    }
}

/// Whether a fence may be lifted at `now`: etcd answered a keep-alive so
/// recently, and the init took its renewal, that the stop is not due yet.
pub fn renewed(now: Instant, expiry: Option<Instant>, ttl: Duration) -> bool {
    expiry.is_some_and(|d| now < Times::before(d, ttl).stop_at)
}

// The agent's side: following the init's fence, and lifting it.

/// Sleeps until `t`; for ever without one.
pub(super) async fn sleep_until(t: Option<Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

/// Resolves when the fence has something to do: followed as each renewal
/// the init takes moves the expiry on, without waking the agent. `fence`
/// is where the fence stood when it was made.
async fn fence_due(mut held: watch::Receiver<Option<Instant>>, fence: Fence, ttl: Duration) {
    loop {
        let at = *held.borrow_and_update();
        match due(Instant::now(), fence, at, ttl) {
            Due::Wait(t) => {
                tokio::select! {
                    _ = sleep_until(t) => {}
                    changed = held.changed() => {
                        if changed.is_err() {
                            sleep_until(t).await;
                        }
                    }
                }
            }
            Due::Stop | Due::Kill => return,
        }
    }
}

/// The assignments the init is to run: all of them, or while the fence
/// is up only the global ones (a global unit has no second copy to fear).
pub(super) fn in_force(
    assignments: &BTreeMap<String, Assignment>,
    fence: Fence,
) -> Cow<'_, BTreeMap<String, Assignment>> {
    if fence == Fence::Open {
        return Cow::Borrowed(assignments);
    }
    Cow::Owned(
        assignments
            .iter()
            .filter(|(_, a)| a.global)
            .map(|(n, a)| (n.clone(), a.clone()))
            .collect(),
    )
}

/// The units to hand to the init again when the fence lifts: every unit
/// the fence may have kept from it. Those are the non-global units placed
/// here now: the ones it stopped, and the ones the engine placed here
/// while it was up (a machine that registers anew is given units at once,
/// before its fence can lift), which the agent took in then and left out
/// of the set ([`in_force`]). With them go the stopped ones (`fenced`)
/// placed elsewhere since: nothing is sent for those.
pub(super) fn kept_out(
    assignments: &BTreeMap<String, Assignment>,
    fenced: BTreeSet<String>,
) -> BTreeSet<String> {
    let mut out = fenced;
    out.extend(
        assignments
            .iter()
            .filter(|(_, a)| !a.global)
            .map(|(n, _)| n.clone()),
    );
    out
}

impl super::Agent {
    /// The presence lease's earliest expiry that the init's lease was last
    /// renewed to (it stays when the keeper goes: the instants it gave
    /// still hold).
    pub(super) fn expiry(&self) -> Option<Instant> {
        *self.held.borrow()
    }

    /// Resolves when the fence next has something to do.
    pub(super) fn fence_due(&self) -> impl std::future::Future<Output = ()> + 'static {
        fence_due(self.held.subscribe(), self.fence, self.cfg.ttl)
    }

    /// Follows what the init's lease has done: at its stop the init took
    /// the non-global units out of the set (what the agent last applied is
    /// stale: the init is listed again, and only the global units are
    /// applied until the fence lifts); at its kill it killed what was
    /// left. Only the init is asked: etcd is not needed.
    pub(super) async fn refence(&mut self) {
        loop {
            match due(Instant::now(), self.fence, self.expiry(), self.cfg.ttl) {
                Due::Wait(_) => {
                    // What the init has is sent again while it was away (a
                    // step would wait for etcd first).
                    if self.fence != Fence::Open
                        && (!self.dirty.is_empty() || self.local.applied.is_none())
                    {
                        self.apply(true).await;
                    }
                    return;
                }
                Due::Stop => {
                    self.fence = Fence::Stopping;
                    self.fenced = self
                        .assignments
                        .iter()
                        .filter(|(_, a)| !a.global)
                        .map(|(n, _)| n.clone())
                        .collect();
                    let left = self
                        .expiry()
                        .map(|d| d.saturating_duration_since(Instant::now()))
                        .unwrap_or_default();
                    eprintln!(
                        "clusterd: agent: fence: no keep-alive of the presence lease answered, which may expire in {left:?}: the init's lease stops the {} non-global units placed here",
                        self.fenced.len()
                    );
                    self.dirty.extend(self.fenced.iter().cloned());
                    self.local.reset();
                    self.apply(true).await;
                }
                Due::Kill => {
                    // The init killed what of them was left.
                    self.fence = Fence::Killed;
                }
            }
        }
    }

    /// etcd answered a keep-alive again: the units the fence kept from the
    /// init may run ([`kept_out`]). The schedule is read again first, after
    /// this machine's presence is registered (anew, when the lease was
    /// lost): only what the engine places here now starts.
    pub(super) async fn lift(&mut self) -> Result<(), RegistryError> {
        self.resync().await?;
        eprintln!(
            "clusterd: agent: etcd answers again: fence lifted, running the units placed here"
        );
        self.fence = Fence::Open;
        let kept = kept_out(&self.assignments, std::mem::take(&mut self.fenced));
        self.dirty.extend(kept);
        self.apply(true).await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(2);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_stop_and_the_kill_come_before_the_deadline() {
        let sent = Instant::now();
        let t = Times::before(sent + TTL, TTL);
        assert_eq!(t.deadline, sent + TTL);
        assert_eq!(t.stop_at, sent + ms(1600));
        assert_eq!(t.kill_at, sent + ms(1900));
        // The default TTL: a renewal every 3 s, the stop 24 s after the
        // last answered one was sent, the kill at 28.5 s.
        let ttl = Duration::from_secs(30);
        let t = Times::before(sent + ttl, ttl);
        assert_eq!(renew_every(ttl), Duration::from_secs(3));
        assert_eq!(t.stop_at, sent + Duration::from_secs(24));
        assert_eq!(t.kill_at, sent + ms(28_500));
    }

    #[test]
    fn a_cut_shorter_than_seven_tenths_of_the_ttl_fences_nothing() {
        let sent = Instant::now();
        let expiry = Some(sent + TTL);
        // The cut begins just before the next renewal would have been
        // sent, and lasts 1 s (the membership test's TTL/2): etcd answers
        // again within 1.2 s + 0.2 s of the last answer, before the stop.
        let back = sent + renew_every(TTL) + ms(1000) + renew_every(TTL);
        assert_eq!(
            due(back, Fence::Open, expiry, TTL),
            Due::Wait(Some(sent + ms(1600)))
        );
        assert!(renewed(back, expiry, TTL));
    }

    #[test]
    fn unanswered_the_fence_stops_then_kills_then_waits() {
        let sent = Instant::now();
        let expiry = Some(sent + TTL);
        assert_eq!(
            due(sent + ms(1599), Fence::Open, expiry, TTL),
            Due::Wait(Some(sent + ms(1600)))
        );
        assert_eq!(due(sent + ms(1600), Fence::Open, expiry, TTL), Due::Stop);
        assert_eq!(
            due(sent + ms(1700), Fence::Stopping, expiry, TTL),
            Due::Wait(Some(sent + ms(1900)))
        );
        assert_eq!(
            due(sent + ms(1900), Fence::Stopping, expiry, TTL),
            Due::Kill
        );
        assert_eq!(
            due(sent + ms(5000), Fence::Killed, expiry, TTL),
            Due::Wait(None)
        );
        assert!(!renewed(sent + ms(1600), expiry, TTL));
        // A machine frozen past its deadline: both are due at once, in order.
        assert_eq!(due(sent + ms(9000), Fence::Open, expiry, TTL), Due::Stop);
        assert_eq!(
            due(sent + ms(9000), Fence::Stopping, expiry, TTL),
            Due::Kill
        );
    }

    #[test]
    fn without_an_answered_lease_there_is_nothing_to_fence() {
        let now = Instant::now();
        assert_eq!(due(now, Fence::Open, None, TTL), Due::Wait(None));
        assert!(!renewed(now, None, TTL));
    }

    fn assignment(global: bool) -> Assignment {
        Assignment {
            desired: crate::model::ClusterState::Launched,
            hash: "h".into(),
            options: Vec::new(),
            global,
        }
    }

    #[test]
    fn lifting_hands_back_every_unit_kept_out_not_only_those_stopped() {
        // Stopped by the fence: a (still here), gone (placed elsewhere
        // since). Placed here while the fence was up: new, left out of
        // the set then. The global unit ran throughout.
        let assignments: BTreeMap<String, Assignment> = [
            ("a".to_string(), assignment(false)),
            ("new".to_string(), assignment(false)),
            ("g".to_string(), assignment(true)),
        ]
        .into();
        let fenced: BTreeSet<String> = ["a".to_string(), "gone".to_string()].into();
        assert!(in_force(&assignments, Fence::Stopping).keys().eq(["g"]));
        let kept = kept_out(&assignments, fenced);
        assert_eq!(kept, ["a", "gone", "new"].map(String::from).into());
    }

    #[test]
    fn a_new_answer_moves_the_fence_on() {
        let sent = Instant::now();
        let later = sent + ms(1500);
        // Answered again at 1.5 s: the stop moves to 3.1 s.
        assert_eq!(
            due(sent + ms(1601), Fence::Open, Some(later + TTL), TTL),
            Due::Wait(Some(later + ms(1600)))
        );
        assert!(renewed(sent + ms(1700), Some(later + TTL), TTL));
    }
}
