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

/// Where a group goes: etcd ([`Registry::commit`]), or a stand-in in the
/// tests of the grouping.
pub trait Store: Send + Sync + 'static {
    /// Writes the group if every guard holds (`None`); else writes nothing
    /// and returns each write's unit record as found.
    fn commit(
        &self,
        writes: &[&Write],
    ) -> impl std::future::Future<Output = Result<Option<Vec<UnitRecord>>, RegistryError>> + Send;
}

impl Store for Registry {
    async fn commit(&self, writes: &[&Write]) -> Result<Option<Vec<UnitRecord>>, RegistryError> {
        Registry::commit(self, writes).await
    }
}

/// The queue of the API's writes of one clusterd.
pub struct Commits {
    tx: mpsc::Sender<Job>,
}

impl Commits {
    /// Starts the task that sends the queued writes to `store`.
    pub fn start(store: impl Store) -> Commits {
        let (tx, rx) = mpsc::channel(4096);
        tokio::spawn(run(store, rx));
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

async fn run(reg: impl Store, mut rx: mpsc::Receiver<Job>) {
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
async fn send(reg: &impl Store, group: Vec<Job>) -> Vec<Job> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ClusterState;
    use crate::write::{Change, Guard};
    use std::sync::{Arc, Mutex};

    /// A store of unit names with a revision each; records every group.
    #[derive(Clone, Default)]
    struct Fake {
        units: Arc<Mutex<std::collections::BTreeMap<String, i64>>>,
        groups: Arc<Mutex<Vec<Vec<String>>>>,
    }

    impl Store for Fake {
        async fn commit(
            &self,
            writes: &[&Write],
        ) -> Result<Option<Vec<UnitRecord>>, RegistryError> {
            // A transaction takes a while: the queue fills meanwhile.
            tokio::time::sleep(Duration::from_millis(2)).await;
            self.groups
                .lock()
                .unwrap()
                .push(writes.iter().map(|w| w.name.clone()).collect());
            let mut units = self.units.lock().unwrap();
            let found = |n: &str| units.get(n).copied();
            if writes.iter().all(|w| w.holds(found(&w.name))) {
                let rev = units.values().max().copied().unwrap_or(0) + 1;
                for w in writes {
                    match w.change {
                        Change::Delete => units.remove(&w.name),
                        Change::Put { .. } => units.insert(w.name.clone(), rev),
                    };
                }
                return Ok(None);
            }
            Ok(Some(
                writes
                    .iter()
                    .map(|w| UnitRecord {
                        mod_revision: found(&w.name).unwrap_or(0),
                        ..Default::default()
                    })
                    .collect(),
            ))
        }
    }

    fn create(name: &str) -> Write {
        Write {
            name: name.into(),
            guard: Guard::Absent,
            change: Change::Put {
                unit: None,
                desired: Some(ClusterState::Launched),
            },
        }
    }

    /// Runs `writes` from as many concurrent requests (in that order) on
    /// one committer; their outcomes (`true`: written) and the groups.
    fn run_all(fake: &Fake, writes: Vec<Write>) -> (Vec<bool>, Vec<Vec<String>>) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let out = rt.block_on(async {
            let c = Arc::new(Commits::start(fake.clone()));
            let tasks: Vec<_> = writes
                .into_iter()
                .map(|w| {
                    let c = c.clone();
                    tokio::spawn(async move { c.write(w).await })
                })
                .collect();
            let mut out = Vec::new();
            for t in tasks {
                out.push(matches!(t.await.unwrap().unwrap(), Outcome::Written));
            }
            out
        });
        (out, fake.groups.lock().unwrap().clone())
    }

    #[test]
    fn concurrent_writes_share_one_transaction() {
        // Ten requests at once (ten APIs' clients forwarded to the one
        // committer): one transaction.
        let fake = Fake::default();
        let names: Vec<String> = (0..10).map(|i| format!("u{i}.service")).collect();
        let (out, groups) = run_all(&fake, names.iter().map(|n| create(n)).collect());
        assert_eq!(out, vec![true; 10]);
        assert_eq!(groups, vec![names]);
        // Over a transaction's limit: as few groups as the limit allows.
        let fake = Fake::default();
        let (out, groups) = run_all(
            &fake,
            (0..200).map(|i| create(&format!("v{i:03}"))).collect(),
        );
        assert!(out.iter().all(|w| *w));
        let sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
        // One operation each (a desired state only): the groups are cut
        // by etcd's limit on operations.
        assert_eq!(sizes.iter().sum::<usize>(), 200);
        assert!(sizes.len() <= 3, "{sizes:?}");
        assert!(sizes.iter().all(|n| *n <= MAX_TXN_OPS), "{sizes:?}");
    }

    #[test]
    fn a_failed_guard_sends_the_others_again() {
        let fake = Fake::default();
        fake.units.lock().unwrap().insert("taken.service".into(), 1);
        let (out, groups) = run_all(
            &fake,
            vec![
                create("a.service"),
                create("taken.service"),
                create("b.service"),
            ],
        );
        // The creation of an existing unit is refused; the others are
        // written by the next transaction, without it.
        assert_eq!(out, vec![true, false, true]);
        assert_eq!(
            groups,
            vec![
                vec!["a.service", "taken.service", "b.service"],
                vec!["a.service", "b.service"],
            ]
        );
        assert!(fake.units.lock().unwrap().contains_key("b.service"));
    }

    #[test]
    fn two_writes_of_one_unit_go_in_turn() {
        let fake = Fake::default();
        let (out, groups) = run_all(
            &fake,
            vec![
                create("a.service"),
                create("b.service"),
                create("a.service"),
            ],
        );
        // The second creation of a waits for the first to be written, and
        // is then refused (the unit exists).
        assert_eq!(out, vec![true, true, false]);
        assert_eq!(
            groups,
            vec![vec!["a.service", "b.service"], vec!["a.service"]]
        );
    }
}
