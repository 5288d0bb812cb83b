//! One clusterd per machine ID: before its engine, agent or API start, a
//! clusterd claims its ID at `claims/<machine>`, a key bound to a lease of
//! `--agent-ttl` that it keeps alive while it runs, holding the identity of
//! the process's place ([`identity`]: host, boot and the init's control
//! socket). A claim held by another identity whose lease is alive is
//! refused, and the clusterd waits, its API answering `503`, claiming
//! again until the holder is gone: a second clusterd given an ID in use
//! would otherwise take over the first one's presence and leader lease,
//! and two engines would lead on one lease. The same place claims again at once: a clusterd the
//! init restarts after a crash finds its own claim and keeps its units and
//! leases (docs/cluster.md "Stopping, dying, and a machine ID already in use").

use crate::lease::Keeper;
use crate::registry::Registry;
use etcd_client::{Compare, CompareOp, PutOptions, Txn, TxnOp};
use std::path::Path;
use std::time::Duration;

/// Why a claim was not made.
#[derive(Debug)]
pub enum Refused {
    /// Another clusterd, alive, holds the ID: its identity.
    InUse(String),
    /// etcd did not answer.
    Etcd(etcd_client::Error),
}

impl From<etcd_client::Error> for Refused {
    fn from(e: etcd_client::Error) -> Self {
        Refused::Etcd(e)
    }
}

/// Who claims: the host's name and boot, and the init's control socket
/// (one init, one machine; a second machine on the same host has its own
/// init and socket).
pub fn identity(control: &Path) -> String {
    format!(
        "{} boot {} init {}",
        crate::host::hostname().unwrap_or_default(),
        crate::host::boot_id().unwrap_or_default(),
        control.display()
    )
}

/// Claims `machine` for `me`; the claim lasts while the returned keeper
/// lives (and the lease's TTL after).
pub async fn claim(
    reg: &Registry,
    machine: &str,
    me: &str,
    ttl: Duration,
) -> Result<Keeper, Refused> {
    let key = reg.keys().claim(machine);
    let mut c = reg.client();
    loop {
        let held = c.get(key.as_str(), None).await?.kvs().first().cloned();
        match held {
            None => {
                let lease = c.lease_grant(ttl.as_secs().max(1) as i64, None).await?.id();
                let txn = Txn::new()
                    .when([Compare::version(key.as_str(), CompareOp::Equal, 0)])
                    .and_then([TxnOp::put(
                        key.as_str(),
                        me,
                        Some(PutOptions::new().with_lease(lease)),
                    )]);
                if c.txn(txn).await?.succeeded() {
                    return Ok(Keeper::start(c, lease, ttl));
                }
                c.lease_revoke(lease).await?;
            }
            Some(kv) if kv.value() == me.as_bytes() => {
                if c.lease_time_to_live(kv.lease(), None).await?.ttl() > 0 {
                    return Ok(Keeper::start(c, kv.lease(), ttl));
                }
            }
            Some(kv) => return Err(Refused::InUse(String::from_utf8_lossy(kv.value()).into())),
        }
    }
}

/// Keeps the claim for as long as clusterd runs: when its keep-alive
/// fails (etcd unreachable for a moment), claims again (the lease, still
/// alive after an outage shorter than the TTL, is taken up again), trying
/// every 300 ms; a claim lost to another clusterd meanwhile (an outage
/// longer than the TTL) is said loudly and tried again every second.
pub async fn keep(reg: Registry, machine: String, me: String, ttl: Duration, mut keeper: Keeper) {
    loop {
        let why = keeper.lost().await;
        eprintln!("clusterd: the claim of machine ID {machine} lapsed ({why}); claiming it again");
        keeper = loop {
            match claim(&reg, &machine, &me, ttl).await {
                Ok(k) => break k,
                Err(Refused::InUse(by)) => {
                    eprintln!(
                        "clusterd: REFUSED: machine ID {machine} was claimed by another clusterd ({by}) while this one could not reach etcd"
                    );
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                Err(Refused::Etcd(_)) => tokio::time::sleep(Duration::from_millis(300)).await,
            }
        };
    }
}
