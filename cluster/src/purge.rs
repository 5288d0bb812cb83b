//! What a clusterd that is stopped (SIGTERM, SIGINT: `initctl stop
//! clusterd`) does before it exits, as fleetd did: it purges the units it
//! placed on its machine, then leaves the cluster at once.
//!
//! Order is what keeps a unit from running twice: first the init stops
//! every unit of the transient set `cluster` (an empty `transient-apply`),
//! and clusterd waits until none is left in the init's list; only then are
//! the presence lease (and the leader lease, when this machine leads) revoked,
//! so that the engine places the units elsewhere only once they are stopped
//! here. When the units cannot be seen stopped (the init does not answer,
//! or they outlast [`PURGE_WAIT`]), the leases are left to expire: the
//! machine stays in the cluster for its TTL, as after a crash. A clusterd
//! that dies (SIGKILL) does none of this: its units keep running and a
//! clusterd restarted within the TTL picks them up (docs/cluster.md
//! "Agent").

use crate::agent::SET;
use crate::control;
use crate::registry::Registry;
use flotilla_units::protocol::{Reply, Request};
use std::path::Path;
use std::time::Duration;
use tokio::time::Instant;

/// How long the purged units may take to stop.
pub const PURGE_WAIT: Duration = Duration::from_secs(30);

/// Stops this machine's units and leaves the cluster; the line to log
/// when that could not be done whole.
pub async fn purge(reg: &Registry, machine: &str, control: &Path) -> Result<(), String> {
    let apply = Request::TransientApply {
        set: SET.into(),
        units: Vec::new(),
    };
    match control::request(control, apply).await {
        Ok(Reply::Applied(_)) => {}
        Ok(other) => eprintln!("clusterd: purging the units: the init answered {other:?}"),
        Err(e) => return Err(format!("cannot reach the init to stop the units: {e}")),
    }
    let source = format!("transient:{SET}");
    let end = Instant::now() + PURGE_WAIT;
    loop {
        let left = match control::request(control, Request::List).await {
            Ok(Reply::List { units }) => units.iter().filter(|u| u.source == source).count(),
            Ok(other) => return Err(format!("unexpected answer to list: {other:?}")),
            Err(e) => return Err(format!("cannot reach the init: {e}")),
        };
        if left == 0 {
            break;
        }
        if Instant::now() >= end {
            return Err(format!("{left} units still stopping after {PURGE_WAIT:?}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    leave(reg, machine)
        .await
        .map_err(|e| format!("units stopped, but cannot leave the cluster: {e}"))
}

/// Revokes the leases of this machine's presence, of its ID's claim and,
/// when it leads, of the engine's leadership: its states go with them, and
/// the engine (here or elsewhere) re-places its units at once instead of
/// after the TTL.
async fn leave(reg: &Registry, machine: &str) -> Result<(), etcd_client::Error> {
    let mut c = reg.client();
    let k = reg.keys();
    let mut leases = Vec::new();
    for key in [k.machine(machine), k.claim(machine)] {
        if let Some(kv) = c.get(key, None).await?.kvs().first() {
            leases.push(kv.lease());
        }
    }
    if let Some(kv) = c.get(k.leader(), None).await?.kvs().first() {
        if kv.value() == machine.as_bytes() {
            leases.push(kv.lease());
        }
    }
    for l in leases.into_iter().filter(|l| *l != 0) {
        c.lease_revoke(l).await?;
    }
    Ok(())
}
