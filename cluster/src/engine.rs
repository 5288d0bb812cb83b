//! The engine: leader election on an etcd lease and watch-driven
//! scheduling.
//!
//! Every clusterd runs [`run`]. One of them holds `engine/leader` (a key
//! bound to its own lease); the others wait on a watch of that key. The
//! leader reads units, desired states, machines and the schedule once, then
//! follows one watch of the whole prefix (in etcd's revision order) for
//! `units/`, `desired/`, `machines/` and its own leader key: each batch of
//! events updates its in-memory model and runs the pure
//! [`crate::scheduler::schedule`]; the difference with the stored schedule is
//! written in transactions guarded by "the leader key is still mine". There
//! is no polling timer; the only periodic work is the lease keep-alive. A
//! restarted clusterd whose leader key is still alive resumes leadership on
//! the same lease.

use crate::keys::Key;
use crate::model::{Assignment, ClusterState, Machine, StoredUnit};
use crate::registry::{decode, decode_desired, Registry, RegistryError};
use crate::requirements::Requirements;
use crate::scheduler::{schedule, MachineInfo, Placement, UnitInfo};
use etcd_client::{
    Compare, CompareOp, EventType, GetOptions, KeyValue, Txn, TxnOp, TxnOpResponse, WatchOptions,
};
use flotilla_units::systemd::is_template;
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::sync::mpsc;

/// The engine's in-memory model of the cluster.
#[derive(Debug, Default)]
pub struct Model {
    units: BTreeMap<String, (StoredUnit, Requirements)>,
    desired: BTreeMap<String, ClusterState>,
    machines: BTreeMap<String, Machine>,
    /// What is stored under `schedule/`: (machine, unit) -> assignment.
    schedule: BTreeMap<(String, String), Assignment>,
    /// What is stored under `placement/`.
    placement: BTreeMap<String, String>,
}

impl Model {
    /// Applies one key's new value (`None`: deleted).
    pub fn apply(&mut self, reg: &Registry, kv: &KeyValue, deleted: bool) {
        let Ok(key) = kv.key_str() else { return };
        match reg.keys().parse(key) {
            Key::Unit(n) => {
                if deleted {
                    self.units.remove(n);
                } else if let Some(u) = decode::<StoredUnit>(kv) {
                    let r = Requirements::from_options(n, &u.options);
                    self.units.insert(n.to_string(), (u, r));
                }
            }
            Key::Desired(n) => {
                if deleted {
                    self.desired.remove(n);
                } else if let Some(d) = decode_desired(kv) {
                    self.desired.insert(n.to_string(), d);
                }
            }
            Key::Machine(m) => {
                if deleted {
                    self.machines.remove(m);
                } else if let Some(mut mach) = decode::<Machine>(kv) {
                    mach.id = m.to_string();
                    self.machines.insert(m.to_string(), mach);
                }
            }
            Key::Schedule(m, u) => {
                if deleted {
                    self.schedule.remove(&(m.to_string(), u.to_string()));
                } else if let Some(a) = decode::<Assignment>(kv) {
                    self.schedule.insert((m.to_string(), u.to_string()), a);
                }
            }
            Key::Placement(u) => {
                if deleted {
                    self.placement.remove(u);
                } else if let Ok(m) = std::str::from_utf8(kv.value()) {
                    self.placement.insert(u.to_string(), m.to_string());
                }
            }
            _ => {}
        }
    }

    /// The operations that bring the stored schedule to what the scheduler
    /// decides now; the model is updated as if they succeeded.
    pub fn plan(&mut self, reg: &Registry) -> Vec<TxnOp> {
        let k = reg.keys();
        let mut current = Placement::default();
        for ((m, u), a) in &self.schedule {
            if a.global {
                current
                    .global
                    .entry(u.clone())
                    .or_default()
                    .insert(m.clone());
            } else {
                current.units.insert(u.clone(), m.clone());
            }
        }
        let machines: Vec<MachineInfo> = self
            .machines
            .values()
            .map(|m| MachineInfo {
                id: m.id.clone(),
                metadata: m.metadata.clone(),
            })
            .collect();
        let units: Vec<UnitInfo> = self
            .units
            .iter()
            .map(|(n, (_, r))| UnitInfo {
                name: n.clone(),
                wanted: !is_template(n)
                    && self
                        .desired
                        .get(n)
                        .copied()
                        .unwrap_or(ClusterState::Inactive)
                        != ClusterState::Inactive,
                req: r.clone(),
            })
            .collect();
        let next = schedule(&machines, &units, &current);
        let mut want: BTreeMap<(String, String), Assignment> = BTreeMap::new();
        for (m, u) in next.pairs() {
            let Some((su, r)) = self.units.get(&u) else {
                continue;
            };
            let desired = self
                .desired
                .get(&u)
                .copied()
                .unwrap_or(ClusterState::Inactive);
            want.insert(
                (m, u),
                Assignment {
                    desired,
                    hash: su.hash.clone(),
                    options: su.options.clone(),
                    global: r.global,
                },
            );
        }
        let mut ops = Vec::new();
        for (mu, a) in &want {
            let same = self.schedule.get(mu).is_some_and(|o| {
                o.desired == a.desired && o.hash == a.hash && o.global == a.global
            });
            if !same {
                ops.push(TxnOp::put(
                    k.schedule(&mu.0, &mu.1),
                    Registry::encode(a),
                    None,
                ));
            }
        }
        for mu in self.schedule.keys() {
            if !want.contains_key(mu) {
                ops.push(TxnOp::delete(k.schedule(&mu.0, &mu.1), None));
            }
        }
        for (u, m) in &next.units {
            if self.placement.get(u) != Some(m) {
                ops.push(TxnOp::put(k.placement(u), m.as_str(), None));
            }
        }
        for u in self.placement.keys() {
            if !next.units.contains_key(u) {
                ops.push(TxnOp::delete(k.placement(u), None));
            }
        }
        self.schedule = want;
        self.placement = next.units;
        ops
    }
}

/// Runs the engine forever: campaign, lead until the lease is lost, repeat.
pub async fn run(reg: Registry, machine_id: String, ttl: Duration) {
    let mut backoff = Duration::from_millis(200);
    loop {
        match campaign(&reg, &machine_id, ttl).await {
            Ok(lease) => {
                eprintln!("clusterd: engine: leading (lease {lease:x})");
                backoff = Duration::from_millis(200);
                if let Err(e) = lead(&reg, &machine_id, lease, ttl).await {
                    eprintln!("clusterd: engine: stepping down: {e}");
                }
            }
            Err(e) => {
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
            .and_then([Registry::put_leased(
                key.clone(),
                me.as_bytes().to_vec(),
                lease,
            )]);
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

async fn lead(reg: &Registry, me: &str, lease: i64, ttl: Duration) -> Result<(), RegistryError> {
    let k = reg.keys().clone();
    let mut c = reg.client();
    let guard = [
        Compare::value(k.leader(), CompareOp::Equal, me.as_bytes().to_vec()),
        Compare::lease(k.leader(), CompareOp::Equal, lease),
    ];
    let (mut keeper, mut acks) = c.lease_keep_alive(lease).await?;
    keeper.keep_alive().await?;

    // Snapshot at one revision.
    let prefixes = [
        k.units(),
        k.desireds(),
        k.machines(),
        k.schedules(),
        k.placements(),
    ];
    let ops: Vec<TxnOp> = prefixes
        .iter()
        .map(|p| TxnOp::get(p.as_str(), Some(GetOptions::new().with_prefix())))
        .collect();
    let resp = c.txn(Txn::new().and_then(ops)).await?;
    let rev = resp.header().map(|h| h.revision()).unwrap_or(0);
    let mut model = Model::default();
    for op in resp.op_responses() {
        if let TxnOpResponse::Get(g) = op {
            for kv in g.kvs() {
                model.apply(reg, kv, false);
            }
        }
    }

    // One watch of the whole prefix from the next revision, so that events
    // come in etcd's revision order across units, desired states, machines
    // and the leader key: a unit never reaches the scheduler before a
    // machine that joined before it (separate watches per prefix give no
    // such order). Only those keys are forwarded; the agents' state
    // reports and the engine's own schedule writes are dropped in the
    // watch task without being decoded.
    let (tx, mut rx) = mpsc::channel::<Event>(256);
    let mut tasks = Vec::new();
    {
        let mut stream = c
            .watch(
                k.prefix(),
                Some(
                    WatchOptions::new()
                        .with_prefix()
                        .with_start_revision(rev + 1),
                ),
            )
            .await?;
        let tx = tx.clone();
        let keys = k.clone();
        tasks.push(tokio::spawn(async move {
            loop {
                match stream.message().await {
                    Ok(Some(r)) => {
                        if r.canceled() {
                            let _ = tx
                                .send(Event::Failed(format!(
                                    "watch canceled: {}",
                                    r.cancel_reason()
                                )))
                                .await;
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
                    Ok(None) => {
                        let _ = tx.send(Event::Failed("watch ended".into())).await;
                        return;
                    }
                    Err(e) => {
                        let _ = tx.send(Event::Failed(e.to_string())).await;
                        return;
                    }
                }
            }
        }));
    }
    drop(tx);
    let abort_all = |tasks: &Vec<tokio::task::JoinHandle<()>>| tasks.iter().for_each(|t| t.abort());

    let result = async {
        let ops = model.plan(reg);
        if !ops.is_empty() && !reg.write_batched(&guard, ops).await? {
            return Err(RegistryError("lost the leader key".into()));
        }
        let mut tick = tokio::time::interval((ttl / 3).max(Duration::from_millis(300)));
        tick.tick().await;
        loop {
            tokio::select! {
                ev = rx.recv() => {
                    let mut evs = vec![ev.ok_or_else(|| RegistryError("watches ended".into()))?];
                    while let Ok(e) = rx.try_recv() {
                        evs.push(e);
                    }
                    for e in evs {
                        match e {
                            Event::Batch(b) => b.iter().for_each(|(kv, del)| model.apply(reg, kv, *del)),
                            Event::LeaderGone => return Err(RegistryError("leader key deleted".into())),
                            Event::Failed(m) => return Err(RegistryError(m)),
                        }
                    }
                    let ops = model.plan(reg);
                    if !ops.is_empty() && !reg.write_batched(&guard, ops).await? {
                        return Err(RegistryError("lost the leader key".into()));
                    }
                }
                _ = tick.tick() => {
                    keeper.keep_alive().await?;
                    match tokio::time::timeout(ttl, acks.message()).await {
                        Ok(Ok(Some(a))) if a.ttl() > 0 => {}
                        Ok(Ok(Some(_))) => return Err(RegistryError("leader lease expired".into())),
                        Ok(Ok(None)) => return Err(RegistryError("keep-alive stream ended".into())),
                        Ok(Err(e)) => return Err(e.into()),
                        Err(_) => return Err(RegistryError("keep-alive timed out".into())),
                    }
                }
            }
        }
    }
    .await;
    abort_all(&tasks);
    result
}
