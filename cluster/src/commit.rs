//! Group commit of the API's unit writes: every `PUT` and `DELETE` of a
//! unit is one guarded write, and the writes that arrive together go to
//! etcd in one transaction.
//!
//! Every etcd write is a raft proposal and a disk sync; a deploy that PUTs
//! thousands of units from many clients would make as many. Here writes
//! queue up while a transaction is in flight, and the next transaction
//! carries all of them (each its unit's keys, guarded by what the request
//! saw: "no such unit yet", "the unit exists", "the unit is still at
//! revision R"), within etcd's limits ([`crate::batch`]). A lone request is
//! sent at once: grouping costs no latency. During a burst, the clients a
//! transaction answers come back with their next request a moment later:
//! the next group waits for them (as many requests as the last round saw,
//! at most [`REGROUP`]), so that C clients make groups of C, not two
//! alternating halves of C/2 each.
//!
//! Each request is answered only after etcd answered the transaction that
//! carried it, that is after etcd committed it to its write-ahead log
//! (`docs/performance.md` says what that means on one etcd member): an
//! acknowledged write is never lost when clusterd dies right after the
//! answer.
//!
//! When one guard of a group fails, nothing of the group is written, and
//! the same transaction reads back each unit's key as it was at that
//! revision: the writes whose guard held go again in the next group (at
//! least one write leaves the group each time, so this ends), the others
//! are answered [`Outcome::Refused`] with what is stored, from which the
//! API decides again (`crate::api`).

use crate::batch::{MAX_TXN_BYTES, MAX_TXN_OPS};
use crate::registry::{Registry, UnitRecord};
use crate::stored::RegistryError;
use crate::write::Write;
use std::collections::BTreeSet;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// How long a group waits, during a burst, for the clients the last
/// transaction answered (a fraction of a transaction's own time).
pub const REGROUP: Duration = Duration::from_millis(3);

/// How a write ended.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Written, and durable in etcd.
    Written,
    /// The guard did not hold; nothing was written. The unit's file (and
    /// its mod revision, 0 when absent) as it was when the guard failed.
    Refused(Box<UnitRecord>),
}

type Done = oneshot::Sender<Result<Outcome, RegistryError>>;

struct Job {
    write: Write,
    bytes: usize,
    done: Done,
}

/// The queue of the API's writes of one clusterd.
pub struct Commits {
    tx: mpsc::Sender<Job>,
}

impl Commits {
    /// Starts the task that sends the queued writes.
    pub fn start(reg: Registry) -> Commits {
        let (tx, rx) = mpsc::channel(4096);
        tokio::spawn(run(reg, rx));
        Commits { tx }
    }

    /// Applies a write if its guard holds; answers once etcd committed it.
    pub async fn write(&self, write: Write) -> Result<Outcome, RegistryError> {
        let (done, rx) = oneshot::channel();
        let bytes = write.bytes();
        self.tx
            .send(Job { write, bytes, done })
            .await
            .map_err(|_| RegistryError("the write queue is gone".into()))?;
        rx.await
            .map_err(|_| RegistryError("the write queue is gone".into()))?
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
        let mut names: BTreeSet<String> = BTreeSet::from([first.write.name.clone()]);
        let mut bytes = first.bytes;
        let mut ops = first.write.ops();
        let mut group = vec![first];
        let mut later = Vec::new();
        while group.len() < MAX_TXN_OPS && ops + 2 <= MAX_TXN_OPS {
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
            if names.contains(&j.write.name) {
                later.push(j);
                continue;
            }
            names.insert(j.write.name.clone());
            bytes += j.bytes;
            ops += j.write.ops();
            group.push(j);
        }
        carry.extend(later.into_iter().rev());
        let sent = group.len();
        let again = send(&reg, group).await;
        // Those whose guard held go first in the next group.
        carry.extend(again.into_iter().rev());
        expect = sent + carry.len() + rx.len();
    }
}

/// Sends one group; returns the jobs to send again (their guard held, but
/// another's did not).
async fn send(reg: &Registry, group: Vec<Job>) -> Vec<Job> {
    let writes: Vec<&Write> = group.iter().map(|j| &j.write).collect();
    match reg.commit(&writes).await {
        Ok(None) => {
            for j in group {
                let _ = j.done.send(Ok(Outcome::Written));
            }
            Vec::new()
        }
        Ok(Some(found)) => {
            let mut again = Vec::new();
            for (j, rec) in group.into_iter().zip(found) {
                let at = (rec.mod_revision != 0).then_some(rec.mod_revision);
                if j.write.holds(at) {
                    again.push(j);
                } else {
                    let _ = j.done.send(Ok(Outcome::Refused(Box::new(rec))));
                }
            }
            again
        }
        Err(e) => {
            for j in group {
                let _ = j.done.send(Err(e.clone()));
            }
            Vec::new()
        }
    }
}
