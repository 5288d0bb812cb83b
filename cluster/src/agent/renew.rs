//! Renewing the init's lease on the set `cluster` (docs/cluster.md "A cut
//! longer than the TTL: the fence"): each time etcd answers a keep-alive
//! of the presence lease, the init is told again when to stop the
//! non-global units and when to kill what is left of them
//! (`transient-lease`, docs/control-protocol.md). The init enforces it on
//! its own, so a clusterd that dies, is not restarted, or freezes cannot
//! leave them running once the engine may place them elsewhere.
//!
//! The instants go as `CLOCK_MONOTONIC` nanoseconds: the init reads the
//! same clock, so the request's own delay moves nothing. The names of the
//! covered units go only when they changed since the init last took them
//! (and on each new connection: the init may be another one); a renewal
//! is one short line every tenth of the TTL.
//!
//! What the init holds is told back to the agent (`held`): its fence
//! knows from it when the init stopped the units, and lifts only once
//! the init holds a renewal again. The first renewal a clusterd gets
//! taken has the agent list the init again: a lease an earlier clusterd
//! left may have fired between the agent's first list and then.

use super::fence::Times;
use super::local::SET;
use crate::control::Connection;
use crate::lease::move_on;
use flotilla_units::protocol::{Reply, Request};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// The units the lease covers, as the agent last applied them (`None`:
/// not known yet, the init keeps those it has).
pub(super) type Covered = Option<BTreeSet<String>>;

/// `t` as `CLOCK_MONOTONIC` nanoseconds (tokio's instants are that clock's,
/// with an origin of their own).
fn monotonic_ns(t: Instant) -> u64 {
    use nix::time::{clock_gettime, ClockId};
    let now = Instant::now();
    let raw = clock_gettime(ClockId::CLOCK_MONOTONIC)
        .map(|ts| Duration::new(ts.tv_sec().max(0) as u64, ts.tv_nsec().max(0) as u32))
        .unwrap_or_default();
    let at = if t >= now {
        raw.saturating_add(t - now)
    } else {
        raw.saturating_sub(now - t)
    };
    u64::try_from(at.as_nanos()).unwrap_or(u64::MAX)
}

/// The request renewing the lease to the presence lease's earliest expiry
/// `deadline`, with `units` when they are to be sent.
pub(super) fn request(
    deadline: Instant,
    ttl: Duration,
    units: Option<&BTreeSet<String>>,
) -> Request {
    let t = Times::before(deadline, ttl);
    Request::TransientLease {
        set: SET.into(),
        stop_at: Some(monotonic_ns(t.stop_at)),
        kill_at: Some(monotonic_ns(t.kill_at)),
        units: units.map(|u| u.iter().cloned().collect()),
    }
}

/// Renews the init's lease for ever: at each new earliest expiry of the
/// presence lease (`expiry`) and each change of the covered units; moves
/// `held` on to the expiry the init took.
pub(super) async fn renew(
    control: PathBuf,
    ttl: Duration,
    mut expiry: watch::Receiver<Option<Instant>>,
    mut covered: watch::Receiver<Covered>,
    held: watch::Sender<Option<Instant>>,
    tx: mpsc::Sender<super::Ev>,
) {
    let mut conn: Option<Connection> = None;
    let mut first = true;
    // The covered units the init has (none known on a new connection).
    let mut sent: Covered = None;
    let mut said = String::new();
    loop {
        let deadline = *expiry.borrow_and_update();
        let units = covered.borrow_and_update().clone();
        if let Some(deadline) = deadline {
            let send = units.as_ref().filter(|u| sent.as_ref() != Some(*u));
            let req = request(deadline, ttl, send);
            let answer = async {
                let c = match &mut conn {
                    Some(c) => c,
                    None => {
                        sent = None;
                        conn.insert(Connection::open(&control).await?)
                    }
                };
                c.request(req).await
            };
            match tokio::time::timeout(ttl, answer).await {
                Ok(Ok(Reply::Accepted { .. })) => {
                    if send.is_some() {
                        sent = units.clone();
                    }
                    move_on(&held, deadline);
                    said.clear();
                    if std::mem::take(&mut first) {
                        let _ = tx.send(super::Ev::Relist).await;
                    }
                }
                Ok(Ok(Reply::Error {
                    message, details, ..
                })) => {
                    // Refused (a set the agent has not made yet, a unit it
                    // took out meanwhile): the names go again next time.
                    sent = None;
                    say(&mut said, format!("{message}: {}", details.join("; ")));
                }
                Ok(Ok(other)) => say(&mut said, format!("unexpected reply {other:?}")),
                Ok(Err(e)) => {
                    conn = None;
                    say(&mut said, e.to_string());
                }
                Err(_) => {
                    // A reply may still come on it: not this connection.
                    conn = None;
                    say(&mut said, "no answer within the TTL".into());
                }
            }
        }
        tokio::select! {
            changed = expiry.changed() => if changed.is_err() { return },
            changed = covered.changed() => if changed.is_err() { return },
        }
    }
}

/// Says why the init did not take the lease, once while it stays so.
fn say(said: &mut String, why: String) {
    if *said != why {
        eprintln!("clusterd: agent: the init did not take the lease on `{SET}`: {why}");
        *said = why;
    }
}

impl super::Agent {
    /// Starts renewing the init's lease, for as long as the agent runs.
    pub(super) fn start_renewal(&self) {
        tokio::spawn(renew(
            self.cfg.control.clone(),
            self.cfg.ttl,
            self.expiry.subscribe(),
            self.covered.subscribe(),
            self.held.clone(),
            self.tx.clone(),
        ));
    }

    /// Tells the renewal which units the lease covers: the non-global
    /// ones the init has of those applied (none known while what it has
    /// is unknown).
    pub(super) fn publish_covered(&self) {
        let now: Covered = self.local.applied.as_ref().map(|applied| {
            applied
                .keys()
                .filter(|n| self.assignments.get(*n).is_some_and(|a| !a.global))
                .cloned()
                .collect()
        });
        self.covered.send_if_modified(|c| {
            let changed = now.is_some() && *c != now;
            if changed {
                *c = now;
            }
            changed
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The instants go as the init reads them: `CLOCK_MONOTONIC`, the stop
    /// a fifth and the kill a twentieth of the TTL before the deadline.
    #[test]
    fn the_instants_go_on_the_inits_clock() {
        let ttl = Duration::from_secs(2);
        let raw = monotonic_ns(Instant::now());
        let req = request(Instant::now() + ttl, ttl, None);
        let Request::TransientLease {
            set,
            stop_at: Some(stop_at),
            kill_at: Some(kill_at),
            units: None,
        } = req
        else {
            panic!("{req:?}")
        };
        assert_eq!(set, SET);
        let ms = |ns: u64| ns / 1_000_000;
        assert!(
            (1599..=1601).contains(&ms(stop_at - raw)),
            "{}",
            stop_at - raw
        );
        assert!(
            (299..=301).contains(&ms(kill_at - stop_at)),
            "{}",
            kill_at - stop_at
        );
        let units: BTreeSet<String> = ["a".to_string()].into();
        let Request::TransientLease { units, .. } = request(Instant::now(), ttl, Some(&units))
        else {
            panic!()
        };
        assert_eq!(units, Some(vec!["a".to_string()]));
    }
}
