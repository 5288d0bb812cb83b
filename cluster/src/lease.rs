//! Keeping an etcd lease alive in a task of its own.
//!
//! The engine's leader and the agent each hold a lease (leadership,
//! presence). Its keep-alive runs in its own task, so that a long burst of
//! work in their loops (scheduling 10,000 units, applying a large set) can
//! never starve it and lose the lease. The task reports the lease's loss
//! once, through [`Keeper::lost`], and stops.
//!
//! Each answered keep-alive also tells when the lease can expire at the
//! earliest (the `expiry` a keeper moves on, [`move_on`]): etcd renews a lease to
//! its TTL from the moment its leader *receives* the keep-alive, which is
//! after the moment this side *sent* it, so the lease lives at least until
//! `sent + TTL` by this machine's monotonic clock. The agent fences its
//! units by that instant (`agent/fence.rs`).

use etcd_client::Client;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// A running keep-alive; dropping it stops the keep-alive (the lease then
/// expires after its TTL unless someone else keeps it).
pub struct Keeper {
    task: tokio::task::JoinHandle<()>,
    lost: watch::Receiver<Option<String>>,
}

/// What a keep-alive does when etcd cannot be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnFailure {
    /// Reports the lease lost at once (its holder takes it up again).
    GiveUp,
    /// Tries again every interval until etcd answers; the lease is lost
    /// only when etcd says it is gone.
    Retry,
}

impl Keeper {
    /// Starts keeping `lease` (of `ttl`) alive every third of the TTL; the
    /// first failure to reach etcd reports it lost.
    pub fn start(client: Client, lease: i64, ttl: Duration) -> Keeper {
        let expiry = watch::Sender::new(None);
        Keeper::spawn(client, lease, ttl, ttl / 3, OnFailure::GiveUp, expiry)
    }

    /// Starts keeping `lease` (of `ttl`) alive every `every`, through
    /// outages: while etcd cannot be reached it tries again every `every`,
    /// and the lease is reported lost only once etcd answers that it has
    /// expired. So the earliest expiry is renewed as soon as etcd is back.
    /// Each answer moves `expiry` on to the lease's new earliest expiry
    /// (never back: the holder keeps it across keepers).
    pub fn start_through_outages(
        client: Client,
        lease: i64,
        ttl: Duration,
        every: Duration,
        expiry: watch::Sender<Option<Instant>>,
    ) -> Keeper {
        Keeper::spawn(client, lease, ttl, every, OnFailure::Retry, expiry)
    }

    fn spawn(
        client: Client,
        lease: i64,
        ttl: Duration,
        every: Duration,
        on_failure: OnFailure,
        expiry: watch::Sender<Option<Instant>>,
    ) -> Keeper {
        let (tx, rx) = watch::channel(None);
        let every = every.max(Duration::from_millis(100));
        let task = tokio::spawn(async move {
            let why = loop {
                let why = keep(client.clone(), lease, ttl, every, &expiry).await;
                match why {
                    Stopped::Expired(why) => break why,
                    Stopped::Unreachable(why) if on_failure == OnFailure::GiveUp => break why,
                    Stopped::Unreachable(_) => tokio::time::sleep(every).await,
                }
            };
            let _ = tx.send(Some(why));
        });
        Keeper { task, lost: rx }
    }

    /// Resolves when the lease is lost, with the reason.
    pub async fn lost(&mut self) -> String {
        match self.lost.wait_for(Option::is_some).await {
            Ok(why) => why.clone().unwrap_or_default(),
            Err(_) => "keep-alive task ended".into(),
        }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Moves an earliest expiry on to `to`, never back: when the keep-alive
/// that renewed the lease was sent, plus the TTL etcd answered.
pub fn move_on(expiry: &watch::Sender<Option<Instant>>, to: Instant) {
    expiry.send_if_modified(|e| {
        let later = e.is_none_or(|e| e < to);
        if later {
            *e = Some(to);
        }
        later
    });
}

/// Why a keep-alive stream stopped.
enum Stopped {
    /// etcd answered that the lease is gone.
    Expired(String),
    /// etcd could not be reached, or did not answer in time.
    Unreachable(String),
}

/// Keeps the lease alive on one stream until that fails; notes the earliest
/// expiry after each answer.
async fn keep(
    mut client: Client,
    lease: i64,
    ttl: Duration,
    every: Duration,
    expiry: &watch::Sender<Option<Instant>>,
) -> Stopped {
    // An etcd that accepts the stream and does not answer (starting, or
    // without a leader) is tried again, not waited for.
    let opened = tokio::time::timeout(ttl, client.lease_keep_alive(lease)).await;
    let (mut keeper, mut acks) = match opened {
        Ok(Ok(k)) => k,
        Err(_) => return Stopped::Unreachable("keep-alive: no answer".into()),
        // The client refuses to open the stream for a lease etcd no longer
        // has; etcd's answer on the lease tells that from a failure to
        // reach it.
        Ok(Err(e)) => {
            let asked = tokio::time::timeout(ttl, client.lease_time_to_live(lease, None)).await;
            return match asked {
                Ok(Ok(r)) if r.ttl() <= 0 => Stopped::Expired("lease expired".into()),
                _ => Stopped::Unreachable(format!("keep-alive: {e}")),
            };
        }
    };
    loop {
        let sent = Instant::now();
        if let Err(e) = keeper.keep_alive().await {
            return Stopped::Unreachable(format!("keep-alive: {e}"));
        }
        // An answer later than the TTL is of no use: the lease may have
        // expired meanwhile.
        match tokio::time::timeout(ttl, acks.message()).await {
            Ok(Ok(Some(a))) if a.ttl() > 0 => {
                let renewed = sent + Duration::from_secs(a.ttl() as u64);
                move_on(expiry, renewed);
            }
            Ok(Ok(Some(_))) => return Stopped::Expired("lease expired".into()),
            Ok(Ok(None)) => return Stopped::Unreachable("keep-alive stream ended".into()),
            Ok(Err(e)) => return Stopped::Unreachable(format!("keep-alive: {e}")),
            Err(_) => return Stopped::Unreachable("keep-alive timed out".into()),
        }
        tokio::time::sleep(every).await;
    }
}
