//! Keeping an etcd lease alive in a task of its own.
//!
//! The engine's leader and the agent each hold a lease (leadership,
//! presence). Its keep-alive runs every third of the TTL in its own task, so
//! that a long burst of work in their loops (scheduling 10,000 units,
//! applying a large set) can never starve it and lose the lease. The task
//! reports the lease's loss once, through [`Keeper::lost`], and stops.

use etcd_client::Client;
use std::time::Duration;
use tokio::sync::watch;

/// A running keep-alive; dropping it stops the keep-alive (the lease then
/// expires after its TTL unless someone else keeps it).
pub struct Keeper {
    task: tokio::task::JoinHandle<()>,
    lost: watch::Receiver<Option<String>>,
}

impl Keeper {
    /// Starts keeping `lease` (of `ttl`) alive.
    pub fn start(client: Client, lease: i64, ttl: Duration) -> Keeper {
        let (tx, rx) = watch::channel(None);
        let task = tokio::spawn(async move {
            let why = keep(client, lease, ttl).await;
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

/// Keeps the lease alive until that fails; returns why.
async fn keep(mut client: Client, lease: i64, ttl: Duration) -> String {
    let every = (ttl / 3).max(Duration::from_millis(300));
    let (mut keeper, mut acks) = match client.lease_keep_alive(lease).await {
        Ok(k) => k,
        Err(e) => return format!("keep-alive: {e}"),
    };
    loop {
        if let Err(e) = keeper.keep_alive().await {
            return format!("keep-alive: {e}");
        }
        match tokio::time::timeout(ttl, acks.message()).await {
            Ok(Ok(Some(a))) if a.ttl() > 0 => {}
            Ok(Ok(Some(_))) => return "lease expired".into(),
            Ok(Ok(None)) => return "keep-alive stream ended".into(),
            Ok(Err(e)) => return format!("keep-alive: {e}"),
            Err(_) => return "keep-alive timed out".into(),
        }
        tokio::time::sleep(every).await;
    }
}
