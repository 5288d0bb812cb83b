//! The agent: keeps this machine present in etcd, runs the units the engine
//! assigned to it by handing them to the local init, and reports their
//! states.
//!
//! - Presence: `machines/<id>` bound to a lease of `--agent-ttl`, kept alive
//!   every third of the TTL. A restarted clusterd finds its key and reuses the
//!   lease while it lives, so a crash-and-restart never looks like a lost
//!   machine and nothing is rescheduled.
//! - Work: it watches only `schedule/<id>/` (the engine copies each unit's
//!   options and desired state there) and `metadata/<id>` (API-set
//!   metadata). Translated units are cached by hash.
//! - The local init gets the whole set as the transient set `cluster`: every
//!   assigned unit provides its own name, and a virtual unit `cluster`
//!   `waits-for` every launched one; loaded units are in the set but not
//!   required, so they stay `disabled`.
//! - Nothing is applied before the schedule has been read from etcd once, so
//!   a restarted agent reconciles before it starts anything, and an etcd
//!   outage changes nothing locally: units keep running, and the agent
//!   re-reads everything when etcd is back.
//! - States (`state/<id>/<unit>`, bound to the lease) are written after the
//!   init accepted the set and whenever the init reports a change; the
//!   `currentState` in them is what was really applied.

use crate::control;
use crate::keys::Key;
use crate::model::{ApiUnitState, Assignment, ClusterState, Machine, StoredState};
use crate::registry::{decode, Registry, RegistryError};
use etcd_client::{EventType, GetOptions, KeyValue, Txn, TxnOp, TxnOpResponse, WatchOptions};
use flotilla_units::protocol::{Reply, Request, UnitStatus};
use flotilla_units::spec::{UnitSpec, UnitType};
use flotilla_units::state::UnitState;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The name of the transient set and of the virtual target unit.
pub const SET: &str = "cluster";

/// The agent's settings.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// This machine.
    pub machine_id: String,
    /// Its primary IP.
    pub public_ip: String,
    /// Metadata from `--metadata`.
    pub metadata: BTreeMap<String, String>,
    /// Presence lease TTL.
    pub ttl: Duration,
    /// The init's control socket.
    pub control: PathBuf,
}

/// systemd's (LOAD, ACTIVE, SUB) for a local state (SPEC §7).
pub fn systemd_states(state: Option<UnitState>) -> (&'static str, &'static str, &'static str) {
    match state {
        None => ("not-found", "inactive", "dead"),
        Some(UnitState::Running) => ("loaded", "active", "running"),
        Some(UnitState::Reloading) => ("loaded", "active", "reload"),
        Some(UnitState::Exited) => ("loaded", "active", "exited"),
        Some(UnitState::Starting) | Some(UnitState::Waiting) => ("loaded", "activating", "start"),
        Some(UnitState::Stopping) => ("loaded", "deactivating", "stop"),
        Some(UnitState::Failed) => ("loaded", "failed", "failed"),
        Some(UnitState::Disabled) => ("loaded", "inactive", "dead"),
    }
}

enum Ev {
    /// Events of watch session `n`.
    Etcd(u64, Vec<(KeyValue, bool)>),
    /// Watch session `n` broke.
    EtcdDown(u64, String),
    /// The init reported a change.
    Changed(Box<UnitStatus>),
    /// The subscription to the init (re)started.
    InitUp,
    /// The init went away.
    InitDown,
}

struct Agent {
    reg: Registry,
    cfg: AgentConfig,
    tx: mpsc::Sender<Ev>,
    lease: Option<i64>,
    keeper: Option<(etcd_client::LeaseKeeper, etcd_client::LeaseKeepAliveStream)>,
    published_machine: Option<(Machine, i64)>,
    session: u64,
    session_ok: bool,
    watch_tasks: Vec<tokio::task::JoinHandle<()>>,
    synced: bool,
    assignments: BTreeMap<String, Assignment>,
    overrides: BTreeMap<String, Option<String>>,
    cache: BTreeMap<String, (String, Result<UnitSpec, String>)>,
    applied: Option<BTreeMap<String, (String, ClusterState)>>,
    excluded: BTreeMap<String, String>,
    init_up: bool,
    local: BTreeMap<String, UnitStatus>,
    published: BTreeMap<String, StoredState>,
    dirty: bool,
}

/// Runs the agent forever.
pub async fn run(reg: Registry, cfg: AgentConfig) {
    let (tx, mut rx) = mpsc::channel::<Ev>(1024);
    tokio::spawn(follow_init(cfg.control.clone(), tx.clone()));
    let mut a = Agent {
        reg,
        cfg,
        tx,
        lease: None,
        keeper: None,
        published_machine: None,
        session: 0,
        session_ok: false,
        watch_tasks: Vec::new(),
        synced: false,
        assignments: BTreeMap::new(),
        overrides: BTreeMap::new(),
        cache: BTreeMap::new(),
        applied: None,
        excluded: BTreeMap::new(),
        init_up: false,
        local: BTreeMap::new(),
        published: BTreeMap::new(),
        dirty: true,
    };
    let keepalive_every = (a.cfg.ttl / 3).max(Duration::from_millis(300));
    let mut next_keepalive = Instant::now();
    let mut retry_at: Option<Instant> = Some(Instant::now());
    loop {
        let retry = async {
            match retry_at {
                Some(t) => tokio::time::sleep_until(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            ev = rx.recv() => {
                let Some(ev) = ev else { return };
                a.handle(ev);
                while let Ok(ev) = rx.try_recv() {
                    a.handle(ev);
                }
            }
            _ = tokio::time::sleep_until(next_keepalive) => {
                next_keepalive = Instant::now() + keepalive_every;
                if let Err(e) = a.keep_alive().await {
                    eprintln!("clusterd: agent: presence: {e}");
                    a.lease_lost();
                }
            }
            _ = retry => { retry_at = None; }
        }
        match a.step().await {
            Ok(()) => {
                if a.dirty {
                    retry_at = Some(Instant::now() + Duration::from_millis(500));
                }
            }
            Err(e) => {
                eprintln!("clusterd: agent: {e}");
                retry_at = Some(Instant::now() + Duration::from_millis(500));
            }
        }
    }
}

/// Follows the init's `subscribe` stream, reconnecting as needed.
async fn follow_init(path: PathBuf, tx: mpsc::Sender<Ev>) {
    let mut said = false;
    loop {
        match control::subscribe(&path).await {
            Ok(mut sub) => {
                said = false;
                if tx.send(Ev::InitUp).await.is_err() {
                    return;
                }
                loop {
                    match sub.next().await {
                        Ok(Some(Reply::Changed(st))) => {
                            if tx.send(Ev::Changed(Box::new(st))).await.is_err() {
                                return;
                            }
                        }
                        Ok(Some(Reply::Error { message, .. })) => {
                            eprintln!("clusterd: agent: init refused subscribe: {message}");
                            break;
                        }
                        Ok(Some(_)) => {}
                        Ok(None) | Err(_) => break,
                    }
                }
                let _ = tx.send(Ev::InitDown).await;
            }
            Err(e) => {
                if !said {
                    eprintln!(
                        "clusterd: agent: cannot reach the init at {}: {e}; retrying",
                        path.display()
                    );
                    said = true;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

impl Agent {
    fn handle(&mut self, ev: Ev) {
        self.dirty = true;
        match ev {
            Ev::Etcd(n, batch) if n == self.session => {
                let k = self.reg.keys().clone();
                for (kv, deleted) in batch {
                    let Ok(key) = kv.key_str() else { continue };
                    match k.parse(key) {
                        Key::Schedule(m, u) if m == self.cfg.machine_id => {
                            if deleted {
                                self.assignments.remove(u);
                            } else if let Some(a) = decode::<Assignment>(&kv) {
                                self.assignments.insert(u.to_string(), a);
                            }
                        }
                        Key::Metadata(m) if m == self.cfg.machine_id => {
                            self.overrides = if deleted {
                                BTreeMap::new()
                            } else {
                                decode(&kv).unwrap_or_default()
                            };
                        }
                        _ => {}
                    }
                }
            }
            Ev::EtcdDown(n, why) if n == self.session => {
                eprintln!("clusterd: agent: etcd watch lost: {why}");
                self.session_ok = false;
            }
            Ev::Etcd(..) | Ev::EtcdDown(..) => {}
            Ev::Changed(st) => {
                self.local.insert(st.unit.clone(), *st);
            }
            Ev::InitUp => {
                self.init_up = true;
                // The init may have restarted without our set: apply again.
                self.applied = None;
            }
            Ev::InitDown => self.init_up = false,
        }
    }

    fn lease_lost(&mut self) {
        self.lease = None;
        self.keeper = None;
        self.published_machine = None;
    }

    async fn keep_alive(&mut self) -> Result<(), RegistryError> {
        let Some((keeper, acks)) = self.keeper.as_mut() else {
            return Ok(());
        };
        keeper.keep_alive().await?;
        match tokio::time::timeout(self.cfg.ttl, acks.message()).await {
            Ok(Ok(Some(a))) if a.ttl() > 0 => Ok(()),
            Ok(Ok(Some(_))) => Err(RegistryError("presence lease expired".into())),
            Ok(Ok(None)) => Err(RegistryError("keep-alive stream ended".into())),
            Ok(Err(e)) => Err(e.into()),
            Err(_) => Err(RegistryError("keep-alive timed out".into())),
        }
    }

    fn machine(&self) -> Machine {
        let mut md = self.cfg.metadata.clone();
        for (k, v) in &self.overrides {
            match v {
                Some(v) => md.insert(k.clone(), v.clone()),
                None => md.remove(k),
            };
        }
        Machine {
            id: self.cfg.machine_id.clone(),
            metadata: md,
            primary_ip: self.cfg.public_ip.clone(),
        }
    }

    async fn step(&mut self) -> Result<(), RegistryError> {
        self.dirty = false;
        let me = self.cfg.machine_id.clone();
        let k = self.reg.keys().clone();
        let mut c = self.reg.client();

        // 1. Presence lease: reuse the one our machine key is bound to.
        if self.lease.is_none() {
            self.dirty = true;
            let resp = c.get(k.machine(&me), None).await?;
            let old = resp.kvs().first().map(|kv| kv.lease()).filter(|l| *l != 0);
            let mut lease = None;
            if let Some(l) = old {
                if c.lease_time_to_live(l, None).await?.ttl() > 0 {
                    lease = Some(l);
                }
            }
            let lease = match lease {
                Some(l) => l,
                None => c
                    .lease_grant(self.cfg.ttl.as_secs().max(1) as i64, None)
                    .await?
                    .id(),
            };
            let (mut keeper, acks) = c.lease_keep_alive(lease).await?;
            keeper.keep_alive().await?;
            self.keeper = Some((keeper, acks));
            self.lease = Some(lease);
            if old != Some(lease) {
                // States under an old lease are gone (or going).
                self.published.clear();
            }
            self.dirty = false;
        }
        let Some(lease) = self.lease else {
            return Ok(());
        };

        // 2. Read our part of etcd and watch it.
        if !self.session_ok {
            self.dirty = true;
            for t in self.watch_tasks.drain(..) {
                t.abort();
            }
            self.session += 1;
            let ops = vec![
                TxnOp::get(k.schedule_of(&me), Some(GetOptions::new().with_prefix())),
                TxnOp::get(k.metadata(&me), None),
                TxnOp::get(k.states_of(&me), Some(GetOptions::new().with_prefix())),
            ];
            let resp = c.txn(Txn::new().and_then(ops)).await?;
            let rev = resp.header().map(|h| h.revision()).unwrap_or(0);
            let mut assignments = BTreeMap::new();
            let mut overrides = BTreeMap::new();
            let mut published = BTreeMap::new();
            for op in resp.op_responses() {
                let TxnOpResponse::Get(g) = op else { continue };
                for kv in g.kvs() {
                    let Ok(key) = kv.key_str() else { continue };
                    match k.parse(key) {
                        Key::Schedule(_, u) => {
                            if let Some(a) = decode::<Assignment>(kv) {
                                assignments.insert(u.to_string(), a);
                            }
                        }
                        Key::Metadata(_) => overrides = decode(kv).unwrap_or_default(),
                        Key::State(_, u) if kv.lease() == lease => {
                            if let Some(s) = decode::<StoredState>(kv) {
                                published.insert(u.to_string(), s);
                            }
                        }
                        Key::State(_, u) => {
                            // Under another lease: rewrite it under ours.
                            published.insert(
                                u.to_string(),
                                StoredState {
                                    state: ApiUnitState::default(),
                                    current: ClusterState::Inactive,
                                },
                            );
                        }
                        _ => {}
                    }
                }
            }
            self.assignments = assignments;
            self.overrides = overrides;
            self.published = published;
            for (p, prefix) in [(k.schedule_of(&me), true), (k.metadata(&me), false)] {
                let opts = WatchOptions::new().with_start_revision(rev + 1);
                let opts = if prefix { opts.with_prefix() } else { opts };
                let mut stream = c.watch(p.as_str(), Some(opts)).await?;
                let tx = self.tx.clone();
                let n = self.session;
                self.watch_tasks.push(tokio::spawn(async move {
                    loop {
                        let why = match stream.message().await {
                            Ok(Some(r)) if r.canceled() => {
                                format!("canceled: {}", r.cancel_reason())
                            }
                            Ok(Some(r)) => {
                                let b: Vec<(KeyValue, bool)> = r
                                    .events()
                                    .iter()
                                    .filter_map(|e| {
                                        e.kv().map(|kv| {
                                            (kv.clone(), e.event_type() == EventType::Delete)
                                        })
                                    })
                                    .collect();
                                if !b.is_empty() && tx.send(Ev::Etcd(n, b)).await.is_err() {
                                    return;
                                }
                                continue;
                            }
                            Ok(None) => "ended".to_string(),
                            Err(e) => e.to_string(),
                        };
                        let _ = tx.send(Ev::EtcdDown(n, why)).await;
                        return;
                    }
                }));
            }
            self.session_ok = true;
            self.synced = true;
            self.dirty = false;
        }

        // 3. Presence key, with merged metadata.
        let machine = self.machine();
        if self.published_machine.as_ref() != Some(&(machine.clone(), lease)) {
            c.put(
                k.machine(&me),
                Registry::encode(&machine),
                Some(etcd_client::PutOptions::new().with_lease(lease)),
            )
            .await?;
            self.published_machine = Some((machine, lease));
        }

        // 4. Hand the set to the init.
        if self.synced && self.init_up {
            if let Err(e) = self.apply().await {
                eprintln!("clusterd: agent: applying to the init: {e}");
                self.dirty = true;
            }
        }

        // 5. Report states.
        self.publish(lease).await
    }

    /// Translates (cached by hash) every assignment.
    fn translated(&mut self, name: &str, a: &Assignment) -> Result<UnitSpec, String> {
        if let Some((h, r)) = self.cache.get(name) {
            if *h == a.hash {
                return r.clone();
            }
        }
        let parsed = flotilla_units::systemd::translate(&format!("fleet:{name}"), name, &a.options);
        let r = match parsed.spec {
            Some(mut spec) => {
                if !spec.provides.iter().any(|p| p == name) {
                    spec.provides.push(name.to_string());
                }
                Ok(spec)
            }
            None => Err(parsed
                .diagnostics
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("; ")),
        };
        self.cache
            .insert(name.to_string(), (a.hash.clone(), r.clone()));
        r
    }

    async fn apply(&mut self) -> std::io::Result<()> {
        let assignments = self.assignments.clone();
        self.cache.retain(|n, _| assignments.contains_key(n));
        let want: BTreeMap<String, (String, ClusterState)> = assignments
            .iter()
            .map(|(n, a)| (n.clone(), (a.hash.clone(), a.desired)))
            .collect();
        if self.applied.as_ref() == Some(&want) {
            return Ok(());
        }
        let mut excluded: BTreeMap<String, String> = BTreeMap::new();
        for _attempt in 0..4 {
            let mut units = Vec::new();
            let mut launched = Vec::new();
            for (n, a) in &assignments {
                if excluded.contains_key(n) {
                    continue;
                }
                match self.translated(n, a) {
                    Ok(spec) => {
                        if a.desired == ClusterState::Launched {
                            launched.push(n.clone());
                        }
                        units.push(spec);
                    }
                    Err(e) => {
                        excluded.insert(n.clone(), e);
                    }
                }
            }
            let mut target = UnitSpec::new(SET, UnitType::Virtual);
            target.description = Some("fleet units launched on this machine".into());
            target.waits_for = launched;
            units.push(target);
            match control::request(
                &self.cfg.control,
                Request::TransientApply {
                    set: SET.into(),
                    units,
                },
            )
            .await?
            {
                Reply::Applied(_) => {
                    self.applied = Some(want);
                    self.excluded = excluded;
                    self.refresh_local().await?;
                    return Ok(());
                }
                Reply::Error {
                    message, details, ..
                } => {
                    // Leave out the units the init names, and try again.
                    let mut named = false;
                    for n in assignments.keys() {
                        if !excluded.contains_key(n)
                            && details
                                .iter()
                                .chain([&message])
                                .any(|d| d.contains(n.as_str()))
                        {
                            excluded.insert(
                                n.clone(),
                                format!("refused by the init: {message} {}", details.join("; ")),
                            );
                            named = true;
                        }
                    }
                    if !named {
                        return Err(std::io::Error::other(format!(
                            "init refused the set: {message} {}",
                            details.join("; ")
                        )));
                    }
                }
                other => return Err(std::io::Error::other(format!("unexpected reply {other:?}"))),
            }
        }
        Err(std::io::Error::other("init kept refusing the set"))
    }

    async fn refresh_local(&mut self) -> std::io::Result<()> {
        if let Reply::List { units } = control::request(&self.cfg.control, Request::List).await? {
            self.local = units.into_iter().map(|u| (u.unit.clone(), u)).collect();
        }
        Ok(())
    }

    fn records(&self) -> BTreeMap<String, StoredState> {
        let mut out = BTreeMap::new();
        let Some(applied) = &self.applied else {
            // Nothing applied yet in this process: keep what was published.
            return self.published.clone();
        };
        for (n, (hash, desired)) in applied {
            let (load, active, sub, current) = match self.excluded.get(n) {
                Some(_) => ("error", "inactive", "dead", ClusterState::Inactive),
                None => {
                    let (l, a, s) = systemd_states(self.local.get(n).map(|u| u.state));
                    (l, a, s, *desired)
                }
            };
            out.insert(
                n.clone(),
                StoredState {
                    state: ApiUnitState {
                        hash: hash.clone(),
                        machine_id: self.cfg.machine_id.clone(),
                        name: n.clone(),
                        active_state: active.into(),
                        load_state: load.into(),
                        sub_state: sub.into(),
                    },
                    current,
                },
            );
        }
        out
    }

    async fn publish(&mut self, lease: i64) -> Result<(), RegistryError> {
        let k = self.reg.keys().clone();
        let want = self.records();
        let mut ops = Vec::new();
        for (n, s) in &want {
            if self.published.get(n) != Some(s) {
                ops.push(Registry::put_leased(
                    k.state(&self.cfg.machine_id, n),
                    Registry::encode(s),
                    lease,
                ));
            }
        }
        for n in self.published.keys() {
            if !want.contains_key(n) {
                ops.push(TxnOp::delete(k.state(&self.cfg.machine_id, n), None));
            }
        }
        if ops.is_empty() {
            return Ok(());
        }
        if let Err(e) = self.reg.write_batched(&[], ops).await {
            self.dirty = true;
            return Err(e);
        }
        self.published = want;
        Ok(())
    }
}
