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
//! left may have fired between the agent's first list and then. So does
//! a renewal the init says came after the lease fired (`lease-fired`): a
//! keep-alive answered just after the stop moves `held` on before the
//! fence can see that the stop passed.

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
                Ok(Ok(reply @ (Reply::Accepted { .. } | Reply::LeaseFired { .. }))) => {
                    let fired = matches!(reply, Reply::LeaseFired { .. });
                    if fired {
                        // The stop emptied what the lease covers.
                        sent = None;
                    } else if send.is_some() {
                        sent = units.clone();
                    }
                    move_on(&held, deadline);
                    said.clear();
                    // A lease that fired: the init stops at the instant the
                    // agent's fence does, but a renewal whose keep-alive
                    // etcd answered just after it can reach the init first
                    // and move `held` on before the agent looks. Its fence
                    // never sees the stop; without a new list the units
                    // the init took out would stay out, still placed here.
                    if std::mem::take(&mut first) || fired {
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
#[allow(clippy::unwrap_used)]
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

    /// A fake init at a new socket: answers each request with the next of
    /// `replies` on one connection; the lines it read.
    fn init_replying(
        replies: Vec<Reply>,
    ) -> (tempfile::TempDir, tokio::task::JoinHandle<Vec<String>>) {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
        let dir = tempfile::tempdir().unwrap();
        let listener = tokio::net::UnixListener::bind(dir.path().join("s")).unwrap();
        let server = tokio::spawn(async move {
            let (s, _) = listener.accept().await.unwrap();
            let (r, mut w) = s.into_split();
            let mut lines = BufReader::new(r).lines();
            let mut read = Vec::new();
            for reply in replies {
                read.push(lines.next_line().await.unwrap().unwrap());
                let mut line = serde_json::to_string(&reply).unwrap();
                line.push('\n');
                w.write_all(line.as_bytes()).await.unwrap();
            }
            read
        });
        (dir, server)
    }

    /// `f`, given 10 s.
    async fn within<F: std::future::Future>(f: F) -> F::Output {
        tokio::time::timeout(Duration::from_secs(10), f)
            .await
            .unwrap_or_else(|_| panic!("not within 10 s"))
    }

    /// A renewal the init says came after its lease fired has the agent
    /// list the init again (its units are out of the set, though `held`
    /// moves on as for any renewal taken), and the covered units go again
    /// with the next renewal (the stop emptied what the lease covers).
    #[tokio::test]
    async fn a_renewal_taken_after_the_lease_fired_lists_the_init_again() {
        let ttl = Duration::from_secs(2);
        let accepted = || Reply::Accepted {
            message: "ok".into(),
        };
        let fired = Reply::LeaseFired {
            message: "it had fired".into(),
        };
        let (dir, server) = init_replying(vec![accepted(), fired, accepted()]);
        let now = Instant::now();
        let (expiry_tx, expiry) = watch::channel(Some(now + ttl));
        let units: BTreeSet<String> = ["a".to_string()].into();
        let (_covered_tx, covered) = watch::channel(Some(units));
        let held = watch::Sender::new(None);
        let mut held_rx = held.subscribe();
        let (tx, mut rx) = mpsc::channel(8);
        let task = tokio::spawn(renew(dir.path().join("s"), ttl, expiry, covered, held, tx));
        // The first renewal taken: a list, as for any new clusterd.
        assert!(matches!(
            within(rx.recv()).await,
            Some(super::super::Ev::Relist)
        ));
        within(held_rx.wait_for(|h| *h == Some(now + ttl)))
            .await
            .unwrap();
        // Taken after the lease fired: a list again, and `held` moves on.
        let _ = expiry_tx.send(Some(now + ttl * 2));
        assert!(matches!(
            within(rx.recv()).await,
            Some(super::super::Ev::Relist)
        ));
        within(held_rx.wait_for(|h| *h == Some(now + ttl * 2)))
            .await
            .unwrap();
        let _ = expiry_tx.send(Some(now + ttl * 3));
        let read = within(server).await.unwrap();
        within(held_rx.wait_for(|h| *h == Some(now + ttl * 3)))
            .await
            .unwrap();
        // An ordinary renewal: no list.
        assert!(rx.try_recv().is_err());
        task.abort();
        // The names went with the first renewal and again after the fired one.
        let with_units: Vec<bool> = read.iter().map(|l| l.contains("\"units\"")).collect();
        assert_eq!(with_units, [true, false, true], "{read:?}");
    }
}
