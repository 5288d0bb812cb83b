//! Creating units in groups: the API's `PUT` of a new unit, committed
//! together with the others that arrive at the same time.
//!
//! Every etcd write is a raft proposal and a disk sync; a deploy that PUTs
//! thousands of units from many clients would make as many. Here creations
//! queue up while a transaction is in flight, and the next transaction
//! carries all of them (each unit's file and desired state, guarded by "no
//! such unit yet", within etcd's limits, [`crate::batch`]). A lone request
//! is sent at once: grouping costs no latency. During a burst, the clients
//! a transaction answers come back with their next unit a moment later:
//! the next group waits for them (as many requests as the last round
//! saw, at most [`REGROUP`]), so that C clients make groups of C, not two
//! alternating halves of C/2 each. When a group's guard fails
//! (one of its units exists), each of its units is tried alone, and the
//! one that exists gets its records back, as [`Registry::create_unit`]
//! gives them.

use crate::batch::{MAX_TXN_BYTES, MAX_TXN_OPS};
use crate::model::{ClusterState, StoredUnit};
use crate::registry::{Registry, RegistryError, UnitRecord};
use std::collections::BTreeSet;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// How long a group waits, during a burst, for the clients the last
/// transaction answered (a fraction of a transaction's own time).
pub const REGROUP: Duration = Duration::from_millis(3);

type Done = oneshot::Sender<Result<Option<UnitRecord>, RegistryError>>;

struct Job {
    unit: StoredUnit,
    desired: ClusterState,
    bytes: usize,
    done: Done,
}

/// The queue of creations of one clusterd.
pub struct Creates {
    tx: mpsc::Sender<Job>,
}

impl Creates {
    /// Starts the task that sends the queued creations.
    pub fn start(reg: Registry) -> Creates {
        let (tx, rx) = mpsc::channel(4096);
        tokio::spawn(run(reg, rx));
        Creates { tx }
    }

    /// Creates a unit if it does not exist: `None` when created, its
    /// records when it exists.
    pub async fn create(
        &self,
        unit: StoredUnit,
        desired: ClusterState,
    ) -> Result<Option<UnitRecord>, RegistryError> {
        let (done, rx) = oneshot::channel();
        let bytes = serde_json::to_vec(&unit).map(|v| v.len()).unwrap_or(0) + 2 * unit.name.len();
        let job = Job {
            unit,
            desired,
            bytes,
            done,
        };
        self.tx
            .send(job)
            .await
            .map_err(|_| RegistryError("the creation queue is gone".into()))?;
        rx.await
            .map_err(|_| RegistryError("the creation queue is gone".into()))?
    }
}

async fn run(reg: Registry, mut rx: mpsc::Receiver<Job>) {
    // Jobs taken from the queue that wait for the next group, oldest last.
    let mut carry: Vec<Job> = Vec::new();
    // How many requests the last round saw: the group it sent and those
    // that queued meanwhile (1: no burst, nothing to wait for).
    let mut expect = 1;
    loop {
        let first = match carry.pop() {
            Some(j) => j,
            None => match rx.recv().await {
                Some(j) => j,
                None => return,
            },
        };
        // Everything queued meanwhile, within the limits, one job per unit;
        // during a burst, the clients just answered too.
        let regroup_until = Instant::now() + REGROUP;
        let mut names: BTreeSet<String> = BTreeSet::from([first.unit.name.clone()]);
        let mut bytes = first.bytes;
        let mut group = vec![first];
        let mut later = Vec::new();
        while group.len() * 2 + 2 <= MAX_TXN_OPS {
            let mut next = carry.pop().or_else(|| rx.try_recv().ok());
            if next.is_none() && group.len() < expect {
                next = tokio::time::timeout_at(regroup_until, rx.recv())
                    .await
                    .ok()
                    .flatten();
            }
            let Some(j) = next else {
                break;
            };
            if bytes + j.bytes > MAX_TXN_BYTES {
                later.push(j);
                break;
            }
            if names.contains(&j.unit.name) {
                later.push(j);
                continue;
            }
            names.insert(j.unit.name.clone());
            bytes += j.bytes;
            group.push(j);
        }
        carry.extend(later.into_iter().rev());
        let sent = group.len();
        send(&reg, group).await;
        expect = sent + carry.len() + rx.len();
    }
}

/// Sends one group: in one transaction, or (alone, or when one of its
/// units exists) one by one.
async fn send(reg: &Registry, group: Vec<Job>) {
    if group.len() > 1 {
        let all: Vec<(&StoredUnit, ClusterState)> =
            group.iter().map(|j| (&j.unit, j.desired)).collect();
        match reg.create_units(&all).await {
            Ok(true) => {
                for j in group {
                    let _ = j.done.send(Ok(None));
                }
                return;
            }
            Ok(false) => {}
            Err(e) => {
                for j in group {
                    let _ = j.done.send(Err(e.clone()));
                }
                return;
            }
        }
    }
    for j in group {
        let r = reg.create_unit(&j.unit, j.desired).await;
        let _ = j.done.send(r);
    }
}
