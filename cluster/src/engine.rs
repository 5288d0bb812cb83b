//! The engine: leader election on an etcd lease and watch-driven,
//! incremental scheduling.
//!
//! Every clusterd runs [`run`]. One of them holds `engine/leader` (a key
//! bound to its own lease, kept alive by its own task, [`crate::lease`]);
//! the others wait on a watch of that key. The leader reads units, desired
//! states, machines and the stored schedule once (paged, at one revision),
//! then follows `units/`, `desired/`, `machines/` and its own leader key
//! (one watch each, on one stream: etcd sends it none of the schedule,
//! placement and state writes). Each prefix's events come in revision
//! order; across prefixes the order does not matter, because the model is
//! the latest value of every key and each plan compares it with what is
//! stored. Each batch
//! of events is given to the [`Scheduler`] change by change; only the units
//! the batch concerns (or whose placement the scheduler changed) are
//! compared with what is stored, and only their differences are written:
//! each unit's keys in one transaction (never on two machines at once),
//! transactions packed within etcd's limits ([`crate::batch`]) and guarded
//! by "the leader key is still mine"; a non-global unit's move off a
//! machine with no presence key is guarded also by "that machine is still
//! absent" ([`Plan`]). There is no polling timer. A restarted
//! clusterd whose leader key is still alive resumes leadership on the same
//! lease.

use crate::batch::Op;
use crate::keys::{Key, Keys};
use crate::lease::Keeper;
use crate::model::{Assignment, ClusterState, Machine, StoredUnit};
use crate::registry::Registry;
use crate::requirements::Requirements;
use crate::scheduler::{Placement, Scheduler};
use crate::stored::{decode_desired, decode_value, RegistryError};
use etcd_client::{Compare, CompareOp, EventType, KeyValue, Txn, WatchOptions};
use flotilla_units::unit_name::is_template;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use tokio::sync::mpsc;

/// How long the leader gathers events after the first of a batch: a burst
/// of submissions is scheduled and written in a few transactions.
const GATHER: Duration = Duration::from_millis(10);

/// The least time from one batch's writes to the next one's: a lone
/// change is written [`GATHER`] after it arrives, but while changes keep
/// coming (a deploy of thousands of units) the leader writes four times a
/// second, in full transactions instead of one per creation, and hands
/// each agent several of its units at once (an agent's cost is in its
/// wake-ups: one per batch, not one per unit).
pub const PACE: Duration = Duration::from_millis(250);

/// What is stored for one unit: its machine (non-global units) and its
/// schedule keys with what they say (the options are not kept: the hash
/// stands for them).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Stored {
    placement: Option<String>,
    schedule: BTreeMap<String, (ClusterState, String, bool)>,
    /// Why it waits (`unscheduled/<unit>`).
    unscheduled: Option<String>,
}

/// What one plan writes: groups of operations, one per unit.
#[derive(Debug, Default)]
pub struct Plan {
    /// Written under the leader's guard alone.
    pub groups: Vec<Vec<Op>>,
    /// The groups that take a non-global unit off a machine that has no
    /// presence key, by that machine. They are written in transactions of
    /// their own, guarded also by that machine being absent still: a
    /// machine that registered again meanwhile keeps its units (see
    /// `write_plan`).
    pub off_absent: BTreeMap<String, Vec<Vec<Op>>>,
}

impl Plan {
    /// Nothing to write.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty() && self.off_absent.is_empty()
    }
}

/// The leader's model of the cluster and of what it has written.
#[derive(Debug)]
pub struct Model {
    keys: Keys,
    units: BTreeMap<String, (StoredUnit, Requirements)>,
    desired: BTreeMap<String, ClusterState>,
    machines: BTreeMap<String, Machine>,
    sched: Scheduler,
    stored: BTreeMap<String, Stored>,
    /// Units whose stored keys may differ from what they should be.
    touched: BTreeSet<String>,
}

impl Model {
    /// An empty model for the keys of `keys`.
    pub fn new(keys: Keys) -> Model {
        Model {
            keys,
            units: BTreeMap::new(),
            desired: BTreeMap::new(),
            machines: BTreeMap::new(),
            sched: Scheduler::new(),
            stored: BTreeMap::new(),
            touched: BTreeSet::new(),
        }
    }

    fn wanted(&self, name: &str) -> bool {
        !is_template(name)
            && self
                .desired
                .get(name)
                .is_some_and(|d| *d != ClusterState::Inactive)
    }

    fn reschedule(&mut self, name: &str) {
        self.touched.insert(name.to_string());
        let wanted = self.wanted(name);
        if let Some((_, req)) = self.units.get(name) {
            let req = req.clone();
            self.sched.set_unit(name, wanted, &req);
        }
    }

    /// Applies one key's new value (`deleted`: it is gone).
    pub fn apply(&mut self, kv: &KeyValue, deleted: bool) {
        if let Ok(key) = kv.key_str() {
            self.apply_value(key, kv.value(), deleted);
        }
    }

    fn apply_value(&mut self, key: &str, value: &[u8], deleted: bool) {
        let raw = key.as_bytes();
        match self.keys.parse(key) {
            Key::Unit(n) => {
                if deleted {
                    self.units.remove(n);
                    self.sched.remove_unit(n);
                    self.touched.insert(n.to_string());
                } else if let Some(u) = decode_value::<StoredUnit>(raw, value) {
                    let r = Requirements::from_options(n, &u.options);
                    self.units.insert(n.to_string(), (u, r));
                    self.reschedule(n);
                }
            }
            Key::Desired(n) => {
                if deleted {
                    self.desired.remove(n);
                } else if let Some(d) = decode_desired(raw, value) {
                    self.desired.insert(n.to_string(), d);
                }
                self.reschedule(n);
            }
            Key::Machine(m) => {
                if deleted {
                    self.machines.remove(m);
                    self.sched.remove_machine(m);
                } else if let Some(mut mach) = decode_value::<Machine>(raw, value) {
                    mach.id = m.to_string();
                    let capacity = mach.total_resources.unwrap_or_default();
                    self.sched.set_machine(m, &mach.metadata, capacity);
                    self.machines.insert(m.to_string(), mach);
                }
            }
            Key::Schedule(m, u) if !deleted => {
                if let Some(a) = decode_value::<Assignment>(raw, value) {
                    self.stored
                        .entry(u.to_string())
                        .or_default()
                        .schedule
                        .insert(m.to_string(), (a.desired, a.hash, a.global));
                }
            }
            Key::Placement(u) if !deleted => {
                if let Ok(m) = std::str::from_utf8(value) {
                    self.stored.entry(u.to_string()).or_default().placement = Some(m.to_string());
                }
            }
            Key::Unscheduled(u) if !deleted => {
                let why = String::from_utf8_lossy(value).into_owned();
                self.stored.entry(u.to_string()).or_default().unscheduled = Some(why);
            }
            _ => {}
        }
    }

    /// The machines that units are stored as scheduled on but that have no
    /// presence key.
    pub fn absent_with_units(&self) -> BTreeSet<String> {
        self.stored
            .values()
            .flat_map(|st| st.schedule.keys())
            .filter(|m| !self.machines.contains_key(*m))
            .cloned()
            .collect()
    }

    /// After the first read: the scheduler starts from what is stored, and
    /// every unit is compared with it once.
    pub fn resume(&mut self) {
        let mut current = Placement::default();
        for (u, st) in &self.stored {
            for (m, (_, _, global)) in &st.schedule {
                if *global {
                    current
                        .global
                        .entry(u.clone())
                        .or_default()
                        .insert(m.clone());
                } else {
                    current.units.insert(u.clone(), m.clone());
                }
            }
        }
        self.sched.resume(&current);
        self.sched.take_changed();
        self.touched = self
            .units
            .keys()
            .chain(self.stored.keys())
            .cloned()
            .collect();
    }

    /// Schedules and returns the writes that bring the stored keys of the
    /// units concerned to what they should be, one group per unit; the
    /// model takes them as written. The groups come by the machine they
    /// put a unit on, so that a transaction carries the units of a few
    /// machines: each agent then gets its units of a batch in one watch
    /// response, one wake-up, however many transactions the batch takes.
    /// A unit taken off an absent machine goes in [`Plan::off_absent`].
    pub fn plan(&mut self) -> Plan {
        self.sched.run();
        self.touched.extend(self.sched.take_changed());
        let k = self.keys.clone();
        let mut groups = Vec::new();
        for u in std::mem::take(&mut self.touched) {
            let mut want = Stored::default();
            let mut assignment = None;
            if let Some((su, r)) = self.units.get(&u) {
                let desired = self
                    .desired
                    .get(&u)
                    .copied()
                    .unwrap_or(ClusterState::Inactive);
                for m in self.sched.placed_on(&u) {
                    want.schedule
                        .insert(m.clone(), (desired, su.hash.clone(), r.global));
                    if !r.global {
                        want.placement = Some(m.clone());
                    }
                }
                assignment = Some(Assignment {
                    desired,
                    hash: su.hash.clone(),
                    options: su.options.clone(),
                    global: r.global,
                });
                want.unscheduled = self.sched.why_unscheduled(&u);
            }
            let have = self.stored.get(&u).cloned().unwrap_or_default();
            if have == want {
                continue;
            }
            let mut ops = Vec::new();
            for m in have.schedule.keys() {
                if !want.schedule.contains_key(m) {
                    ops.push(Op::delete(k.schedule(m, &u)));
                }
            }
            if let Some(a) = &assignment {
                let value = Registry::encode(a);
                for (m, w) in &want.schedule {
                    if have.schedule.get(m) != Some(w) {
                        ops.push(Op::put(k.schedule(m, &u), value.clone()));
                    }
                }
            }
            match (&have.placement, &want.placement) {
                (Some(_), None) => ops.push(Op::delete(k.placement(&u))),
                (h, Some(m)) if h.as_ref() != Some(m) => {
                    ops.push(Op::put(k.placement(&u), m.as_str()))
                }
                _ => {}
            }
            match (&have.unscheduled, &want.unscheduled) {
                (Some(_), None) => ops.push(Op::delete(k.unscheduled(&u))),
                (h, Some(why)) if h.as_ref() != Some(why) => {
                    ops.push(Op::put(k.unscheduled(&u), why.as_str()))
                }
                _ => {}
            }
            // The absent machine a non-global unit leaves, if any.
            let off_absent = have
                .schedule
                .iter()
                .find(|(m, (_, _, global))| {
                    !global && !want.schedule.contains_key(*m) && !self.machines.contains_key(*m)
                })
                .map(|(m, _)| m.clone());
            // Units only removed go first (machine "").
            let machine = want.schedule.keys().next().cloned().unwrap_or_default();
            if want == Stored::default() {
                self.stored.remove(&u);
            } else {
                self.stored.insert(u, want);
            }
            groups.push((machine, off_absent, ops));
        }
        // Stable: by name within a machine.
        groups.sort_by(|a, b| a.0.cmp(&b.0));
        let mut plan = Plan::default();
        for (_, off_absent, ops) in groups {
            match off_absent {
                Some(m) => plan.off_absent.entry(m).or_default().push(ops),
                None => plan.groups.push(ops),
            }
        }
        plan
    }
}

/// Runs the engine forever: campaign, lead until the lease is lost, repeat.
///
/// `advertise` is where the other APIs reach this one's
/// (`--api-advertise`): while leading, this clusterd publishes it as the
/// cluster's committer ([`crate::forward`]).
pub async fn run(reg: Registry, machine_id: String, ttl: Duration, advertise: Option<String>) {
    let mut backoff = Duration::from_millis(200);
    // When this clusterd last failed to reach etcd (see `lead`).
    let mut failed_at: Option<tokio::time::Instant> = None;
    loop {
        match campaign(&reg, &machine_id, ttl).await {
            Ok(lease) => {
                eprintln!("clusterd: engine: leading (lease {lease:x})");
                backoff = Duration::from_millis(200);
                let recovering = failed_at.is_some_and(|t| t.elapsed() < ttl);
                if let Err(e) = lead(
                    &reg,
                    &machine_id,
                    lease,
                    ttl,
                    advertise.as_deref(),
                    recovering,
                )
                .await
                {
                    eprintln!("clusterd: engine: stepping down: {e}");
                    failed_at = Some(tokio::time::Instant::now());
                }
            }
            Err(e) => {
                failed_at = Some(tokio::time::Instant::now());
                eprintln!("clusterd: engine: {e}");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
        }
    }
}

async fn lease_alive(reg: &Registry, lease: i64) -> Result<bool, RegistryError> {
    let r = reg.client().lease_time_to_live(lease, None).await?;
    Ok(r.ttl() > 0)
}

/// Waits until this clusterd holds the leader key; returns its lease.
async fn campaign(reg: &Registry, me: &str, ttl: Duration) -> Result<i64, RegistryError> {
    let key = reg.keys().leader();
    let mut c = reg.client();
    loop {
        let resp = c.get(key.as_str(), None).await?;
        let rev = resp.header().map(|h| h.revision()).unwrap_or(0);
        if let Some(kv) = resp.kvs().first() {
            if kv.value() == me.as_bytes()
                && kv.lease() != 0
                && lease_alive(reg, kv.lease()).await?
            {
                return Ok(kv.lease());
            }
            // Someone leads: wait for the key to go away.
            let mut stream = c
                .watch(
                    key.as_str(),
                    Some(WatchOptions::new().with_start_revision(rev + 1)),
                )
                .await?;
            loop {
                match stream.message().await? {
                    Some(r)
                        if r.events()
                            .iter()
                            .any(|e| e.event_type() == EventType::Delete) =>
                    {
                        break
                    }
                    Some(r) if r.canceled() => break,
                    Some(_) => continue,
                    None => break,
                }
            }
            continue;
        }
        let lease = c.lease_grant(ttl.as_secs().max(1) as i64, None).await?.id();
        let txn = Txn::new()
            .when([Compare::create_revision(key.as_str(), CompareOp::Equal, 0)])
            .and_then([Op::put_leased(key.clone(), me.as_bytes(), lease).to_txn_op()]);
        if c.txn(txn).await?.succeeded() {
            return Ok(lease);
        }
        let _ = c.lease_revoke(lease).await;
    }
}

enum Event {
    Batch(Vec<(KeyValue, bool)>),
    LeaderGone,
    Failed(String),
}

/// Forwards the events the engine uses from `rev` on: units, desired
/// states, machines and the loss of the leader key, each prefix watched on
/// its own (on one stream), so that etcd sends the leader none of the
/// schedule, placement and state writes (three of every unit's five
/// writes, and the largest).
async fn follow(reg: Registry, rev: i64, tx: mpsc::Sender<Event>) {
    let keys = reg.keys().clone();
    let from = |prefix: bool| {
        let o = WatchOptions::new().with_start_revision(rev + 1);
        if prefix {
            o.with_prefix()
        } else {
            o
        }
    };
    let started = async {
        let mut stream = reg
            .watch_client()
            .watch(keys.units(), Some(from(true)))
            .await?;
        stream.watch(keys.desireds(), Some(from(true))).await?;
        stream.watch(keys.machines(), Some(from(true))).await?;
        stream.watch(keys.leader(), Some(from(false))).await?;
        Ok::<_, etcd_client::Error>(stream)
    };
    let mut stream = match started.await {
        Ok(s) => s,
        Err(e) => {
            let _ = tx.send(Event::Failed(e.to_string())).await;
            return;
        }
    };
    loop {
        let r = match stream.message().await {
            Ok(Some(r)) => r,
            Ok(None) => {
                let _ = tx.send(Event::Failed("watch ended".into())).await;
                return;
            }
            Err(e) => {
                let _ = tx.send(Event::Failed(e.to_string())).await;
                return;
            }
        };
        if r.canceled() {
            let why = format!("watch canceled: {}", r.cancel_reason());
            let _ = tx.send(Event::Failed(why)).await;
            return;
        }
        let mut batch: Vec<(KeyValue, bool)> = Vec::new();
        let mut leader_gone = false;
        for e in r.events() {
            let Some(kv) = e.kv() else { continue };
            let deleted = e.event_type() == EventType::Delete;
            match kv.key_str().map(|key| keys.parse(key)) {
                Ok(Key::Unit(_) | Key::Desired(_) | Key::Machine(_)) => {
                    batch.push((kv.clone(), deleted))
                }
                Ok(Key::Leader) if deleted => leader_gone = true,
                _ => {}
            }
        }
        if !batch.is_empty() && tx.send(Event::Batch(batch)).await.is_err() {
            return;
        }
        if leader_gone {
            let _ = tx.send(Event::LeaderGone).await;
            return;
        }
    }
}

/// A leader that takes office within a TTL of its own failure to reach
/// etcd (an outage it just came out of, which may have expired the
/// presence of machines cut off with it, its own among them) does not move
/// the units of a machine that is absent then: it first gives such
/// machines up to one TTL to register again (their agents come back with
/// etcd, as it did), applying what the watch brings meanwhile, and only
/// then schedules. A leader that was connected throughout (it took over
/// from one that died) schedules at once. docs/cluster.md "Engine".
async fn lead(
    reg: &Registry,
    me: &str,
    lease: i64,
    ttl: Duration,
    advertise: Option<&str>,
    recovering: bool,
) -> Result<(), RegistryError> {
    let k = reg.keys().clone();
    let guard = [
        Compare::value(k.leader(), CompareOp::Equal, me.as_bytes().to_vec()),
        Compare::lease(k.leader(), CompareOp::Equal, lease),
    ];
    let mut keeper = Keeper::start(reg.client(), lease, ttl);

    // The committer is the leader, on the leader's lease: it goes when the
    // leader does. A leader without an advertised API leaves every API to
    // commit its own writes (and removes a committer a previous leader of
    // a still-live lease left).
    let committer = match advertise {
        Some(url) => Op::put_leased(
            k.committer(),
            Registry::encode(&crate::forward::Committer::new(
                me,
                url,
                crate::host::boot_id().as_deref(),
            )),
            lease,
        ),
        None => Op::delete(k.committer()),
    };
    if !reg.write_groups(&guard, vec![vec![committer]]).await? {
        return Err(RegistryError("lost the leader key".into()));
    }

    let mut recovering = recovering;
    loop {
        let back = follow_and_write(reg, &guard, &mut keeper, ttl, recovering).await?;
        // Not an error: this clusterd still leads. Its model took that
        // move as planned; it is read anew, with the machine present.
        eprintln!(
            "clusterd: engine: machine {back} registered again before its units were moved off it: they stay; reading the cluster again"
        );
        recovering = false;
    }
}

/// Reads the whole cluster at one revision, follows it from the next one
/// and writes what each batch of events changes, until an error, or until
/// a move off an absent machine fails because that machine registered
/// again: then its ID (the caller reads everything anew: the scheduler
/// resumes from what is stored, so the unit stays on the machine that is
/// back, with no second copy elsewhere).
async fn follow_and_write(
    reg: &Registry,
    guard: &[Compare],
    keeper: &mut Keeper,
    ttl: Duration,
    recovering: bool,
) -> Result<String, RegistryError> {
    let k = reg.keys().clone();
    // Everything at one revision, then the watch from the next one.
    let prefixes = [
        k.units(),
        k.desireds(),
        k.machines(),
        k.schedules(),
        k.placements(),
        k.unscheduled_all(),
    ];
    let (rev, kvs) = reg.read_prefixes(&prefixes).await?;
    let mut model = Model::new(k.clone());
    for kv in &kvs {
        model.apply(kv, false);
    }
    drop(kvs);
    let (tx, mut rx) = mpsc::channel::<Event>(256);
    let watch = tokio::spawn(follow(reg.clone(), rev, tx));

    let result = async {
        let absent = model.absent_with_units();
        if recovering && !absent.is_empty() {
            eprintln!(
                "clusterd: engine: after an etcd outage, waiting up to {ttl:?} for machines {absent:?} to register again before moving their units"
            );
            let until = tokio::time::Instant::now() + ttl;
            while !model.absent_with_units().is_empty() {
                tokio::select! {
                    ev = rx.recv() => match ev {
                        Some(Event::Batch(b)) => b.iter().for_each(|(kv, del)| model.apply(kv, *del)),
                        Some(Event::LeaderGone) => return Err(RegistryError("leader key deleted".into())),
                        Some(Event::Failed(m)) => return Err(RegistryError(m)),
                        None => return Err(RegistryError("watch ended".into())),
                    },
                    _ = tokio::time::sleep_until(until) => break,
                    why = keeper.lost() => return Err(RegistryError(format!("leader lease: {why}"))),
                }
            }
        }
        model.resume();
        if let Some(back) = write_plan(reg, guard, model.plan()).await? {
            return Ok(back);
        }
        let mut written = tokio::time::Instant::now();
        loop {
            tokio::select! {
                ev = rx.recv() => {
                    let mut evs = vec![ev.ok_or_else(|| RegistryError("watch ended".into()))?];
                    // What else arrives meanwhile goes in the same plan.
                    let now = tokio::time::Instant::now();
                    tokio::time::sleep_until((now + GATHER).max(written + PACE)).await;
                    while let Ok(e) = rx.try_recv() {
                        evs.push(e);
                    }
                    for e in evs {
                        match e {
                            Event::Batch(b) => b.iter().for_each(|(kv, del)| model.apply(kv, *del)),
                            Event::LeaderGone => return Err(RegistryError("leader key deleted".into())),
                            Event::Failed(m) => return Err(RegistryError(m)),
                        }
                    }
                    let plan = model.plan();
                    written = tokio::time::Instant::now();
                    if let Some(back) = write_plan(reg, guard, plan).await? {
                        return Ok(back);
                    }
                }
                why = keeper.lost() => return Err(RegistryError(format!("leader lease: {why}"))),
            }
        }
    }
    .await;
    watch.abort();
    result
}

/// Writes a plan under the leader's `guard`; each absent machine's moves
/// in transactions of their own, guarded also by its presence key being
/// absent (its create revision 0). An agent reads the schedule it runs
/// only once its registration is committed (docs/cluster.md "Reconcile
/// before acting"), so a machine that registers again either reads such a
/// move, committed before it came back, or keeps the unit: the move fails.
/// The simplest correct batching: such moves are rare (a machine lost),
/// and in transactions of their own a failed one names its machine, where
/// per-group guards in shared transactions would need a failed one retried
/// group by group to find it. The other groups keep their batching.
/// `Some(machine)` when that happened (what follows in the plan is not
/// written); an error when the leader key is no longer this clusterd's.
async fn write_plan(
    reg: &Registry,
    guard: &[Compare],
    plan: Plan,
) -> Result<Option<String>, RegistryError> {
    let lost = || RegistryError("lost the leader key".into());
    if !reg.write_groups(guard, plan.groups).await? {
        return Err(lost());
    }
    for (m, groups) in plan.off_absent {
        let key = reg.keys().machine(&m);
        let mut g = guard.to_vec();
        g.push(Compare::create_revision(key.as_str(), CompareOp::Equal, 0));
        if !reg.write_groups(&g, groups).await? {
            // Which guard failed: the machine's presence key is back, or
            // (it is still absent) the leader key is not ours. Were both,
            // the next write or the watch tells the leader key's loss.
            if reg.client().get(key, None).await?.kvs().is_empty() {
                return Err(lost());
            }
            return Ok(Some(m));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests;
