//! The agent: keeps this machine present in etcd, runs the units the engine
//! assigned to it by handing them to the local init, and reports their
//! states. Its work is proportional to what changed for this machine.
//!
//! - Presence: `machines/<id>` bound to a lease of `--agent-ttl`, kept alive
//!   by its own task ([`crate::lease`]). A restarted clusterd finds its key
//!   and reuses the lease while it lives, so a crash-and-restart never looks
//!   like a lost machine and nothing is rescheduled.
//! - Work: it watches only `schedule/<id>/` (the engine copies each unit's
//!   options and desired state there), `metadata/<id>` (API-set metadata)
//!   and `logreq/<id>/` (log requests, [`logs`]). A changed key marks that
//!   unit; only marked units are translated (cached by hash), sent to the
//!   init and reported.
//! - The local init holds the units as the transient set `cluster`
//!   ([`local`]): each assigned unit provides its own name, and a virtual
//!   unit `cluster` `waits-for` every launched one; loaded units are in the
//!   set but not required, so they stay `disabled`. Changes go as
//!   `transient-patch` differences.
//! - Reconcile before acting: nothing is applied before the schedule has
//!   been read from etcd, so a restarted agent learns what the cluster wants
//!   first. When the presence lease is lost (a machine frozen past its TTL,
//!   whose units the engine has moved), the agent reads its schedule again
//!   and applies its stops, stopping its stale copies, before it registers
//!   again; it starts units only from a read made once its registration is
//!   committed (the engine's moves off an absent machine are guarded by
//!   its absence: docs/cluster.md "Reconcile before acting").
//!   An etcd outage shorter than most of the TTL changes nothing locally:
//!   units keep running, and the agent re-reads when etcd is back.
//! - The fence ([`fence`], [`renew`]): each answered keep-alive of the
//!   presence lease renews a lease the init keeps on the set: should no
//!   answer come for so long that the presence may soon expire (and the
//!   engine, elsewhere, place this machine's units on another), the init
//!   stops the non-global units, and kills what has not stopped before the
//!   presence's earliest expiry, whether clusterd runs or not. The agent
//!   lifts the fence once etcd answers again, reading the schedule anew:
//!   with its lease alive the units start again; with a new lease it runs
//!   what the engine gives it.
//! - States (`state/<id>/<unit>`, bound to the lease) are written for the
//!   marked units after the init took them and when the init reports a
//!   change (`subscribe`), in batches; `currentState` is what was really
//!   applied. A lone change is written at once; while changes keep coming,
//!   an agent writes at most once per [`publish_pace`], which grows with
//!   the number of machines so that the whole cluster's state writes stay
//!   near 30 a second (the agent counts the machines before a write, at
//!   most every 30 s), and as soon as its changes pause for [`quiet`]
//!   (half a second, 2 ms per machine from 250 machines, 2 s at most):
//!   the last states of a deploy are written then, not a pace later.

mod fence;
mod follow;
mod hold;
mod install;
mod limits;
mod local;
mod logs;
mod pace;
mod renew;

pub use local::{systemd_states, SET};
pub use logs::MAX_LINES as MAX_LOG_LINES;
use pace::PUBLISH_MAX;
pub use pace::{publish_pace, quiet, QUIET};

use crate::batch::Op;
use crate::keys::Key;
use crate::lease::{self, Keeper};
use crate::model::{
    ApiUnitState, Assignment, ClusterState, LogFollow, LogRequest, Machine, StoredState,
};
use crate::registry::Registry;
use crate::requirements::Requirements;
use crate::stored::{decode, decode_value, RegistryError};
use fence::{in_force, sleep_until, Fence};
use flotilla_units::fleet_api::Resources;
use flotilla_units::protocol::UnitStatus;
use follow::{follow_etcd, follow_init};
use local::Local;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

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
    /// What units may reserve here (`totalResources`).
    pub capacity: Resources,
}

/// How long the agent gathers events after the first of a step: a burst
/// of changes (a deploy) becomes a few patches and state writes, not one
/// per unit.
const GATHER: Duration = Duration::from_millis(10);

/// How long the agent trusts its count of the machines.
const COUNT_FOR: Duration = Duration::from_secs(30);

/// A change of one watched key: key, value, deleted.
type Change = (String, Vec<u8>, bool);

enum Ev {
    /// Events of watch session `n`.
    Etcd(u64, Vec<Change>),
    /// Watch session `n` broke.
    EtcdDown(u64, String),
    /// The init reported a change.
    Changed(Box<UnitStatus>),
    /// The subscription to the init (re)started.
    InitUp,
    /// The init went away.
    InitDown,
    /// The init took this clusterd's first renewal of its lease ([`renew`]):
    /// one left by an earlier clusterd may have fired after the first list;
    /// or it took a renewal of a lease that had fired: the units it covered
    /// are out of the set, whether the fence saw the stop or not.
    Relist,
}

struct Agent {
    reg: Registry,
    cfg: AgentConfig,
    tx: mpsc::Sender<Ev>,
    lease: Option<i64>,
    keeper: Option<Keeper>,
    published_machine: Option<(Machine, i64)>,
    /// The sum of the reservations of the units assigned here, as last
    /// published with the states (`reservedResources`).
    reserved: Resources,
    session: u64,
    session_ok: bool,
    watch_task: Option<tokio::task::JoinHandle<()>>,
    /// The schedule has been read from etcd at least once.
    synced: bool,
    assignments: BTreeMap<String, Assignment>,
    overrides: BTreeMap<String, Option<String>>,
    /// Units whose assignment changed since the init last took them.
    dirty: BTreeSet<String>,
    local: Local,
    init_up: bool,
    published: BTreeMap<String, StoredState>,
    /// Units whose reported state may have changed.
    unreported: BTreeSet<String>,
    /// When states were last written.
    last_publish: Instant,
    /// When the last event came (from etcd or the init).
    last_event: Instant,
    /// The machines in the cluster (for the pace of state writes) and when
    /// they were counted.
    machines: (usize, Option<Instant>),
    /// When the states held back are due.
    publish_at: Option<Instant>,
    /// Something is left to do (a retry is due).
    again: bool,
    /// The followed logs it sends.
    follows: logs::Follows,
    /// Launched units whose stop is held, until when ([`hold`]).
    holds: BTreeMap<String, Instant>,
    /// Units to restart: launched again while their stop was held.
    restarts: BTreeSet<String>,
    /// The earliest instant the presence lease can expire, by the last
    /// keep-alive etcd answered ([`fence`]); the keeper moves it on.
    expiry: watch::Sender<Option<Instant>>,
    /// That expiry as the init's lease was last renewed to ([`renew`]).
    held: watch::Sender<Option<Instant>>,
    /// The units the init's lease covers ([`renew`]).
    covered: watch::Sender<renew::Covered>,
    /// Where the fence stands.
    fence: Fence,
    /// The units the fence stopped.
    fenced: BTreeSet<String>,
}

/// Runs the agent forever.
pub async fn run(reg: Registry, cfg: AgentConfig) {
    let (tx, mut rx) = mpsc::channel::<Ev>(1024);
    tokio::spawn(follow_init(cfg.control.clone(), tx.clone()));
    let local = Local::on_machine(&cfg.machine_id);
    let mut a = Agent {
        reg,
        cfg,
        tx,
        lease: None,
        keeper: None,
        published_machine: None,
        reserved: Resources::ZERO,
        session: 0,
        session_ok: false,
        watch_task: None,
        synced: false,
        assignments: BTreeMap::new(),
        overrides: BTreeMap::new(),
        dirty: BTreeSet::new(),
        local,
        init_up: false,
        published: BTreeMap::new(),
        unreported: BTreeSet::new(),
        last_publish: Instant::now()
            .checked_sub(PUBLISH_MAX)
            .unwrap_or_else(Instant::now),
        last_event: Instant::now(),
        machines: (1, None),
        publish_at: None,
        again: true,
        follows: logs::Follows::default(),
        holds: BTreeMap::new(),
        restarts: BTreeSet::new(),
        expiry: watch::Sender::new(None),
        held: watch::Sender::new(None),
        covered: watch::Sender::new(None),
        fence: Fence::Open,
        fenced: BTreeSet::new(),
    };
    a.start_renewal();
    let mut retry_at: Option<Instant> = Some(Instant::now());
    loop {
        let retry = sleep_until(retry_at);
        let fence_due = a.fence_due();
        let lost = async {
            match a.keeper.as_mut() {
                Some(k) => k.lost().await,
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
                // What else arrives meanwhile goes in the same step, when
                // the step will do something now (the init's reports of
                // units it took, states held back by the pace, need not
                // wait: each such wake-up costs more than the step).
                if a.acts_now() {
                    tokio::time::sleep(GATHER).await;
                    while let Ok(ev) = rx.try_recv() {
                        a.handle(ev);
                    }
                }
            }
            why = lost => {
                eprintln!("clusterd: agent: presence lease lost ({why}); reading the schedule again");
                a.lease_lost();
            }
            _ = retry => { retry_at = None; }
            _ = fence_due => {}
        }
        a.refence().await;
        // A step waits on etcd, which may not answer: the fence does not
        // wait for it. A step cut short leaves what the init has unknown
        // (its request may be half way): listed again at the next.
        let fence_due = a.fence_due();
        let stepped = tokio::select! {
            r = a.step() => Some(r),
            _ = fence_due => None,
        };
        let Some(stepped) = stepped else {
            a.local.reset();
            retry_at = Some(Instant::now());
            continue;
        };
        match stepped {
            Ok(()) => {
                if a.again {
                    retry_at = Some(Instant::now() + Duration::from_millis(500));
                }
                // States held back by the publishing pace, stops held.
                for t in a.publish_at.iter().chain(a.holds.values().min()) {
                    retry_at = Some(retry_at.map_or(*t, |r| r.min(*t)));
                }
            }
            Err(e) => {
                eprintln!("clusterd: agent: {e}");
                retry_at = Some(Instant::now() + Duration::from_millis(500));
            }
        }
    }
}

impl Agent {
    fn handle(&mut self, ev: Ev) {
        self.again = true;
        self.last_event = Instant::now();
        match ev {
            Ev::Etcd(n, batch) if n == self.session => {
                for (key, value, deleted) in batch {
                    self.absorb(&key, &value, deleted);
                }
            }
            Ev::EtcdDown(n, why) if n == self.session => {
                eprintln!("clusterd: agent: etcd watch lost: {why}");
                self.session_ok = false;
            }
            Ev::Etcd(..) | Ev::EtcdDown(..) => {}
            Ev::Changed(st) => {
                if self.local.observe(&st) {
                    self.unreported.insert(st.unit.clone());
                }
            }
            Ev::InitUp => {
                self.init_up = true;
                // The init may have restarted without our set: list it.
                self.local.reset();
            }
            Ev::InitDown => self.init_up = false,
            Ev::Relist => self.local.reset(),
        }
    }

    /// Whether the next step sends something: changes for the init, a
    /// resync, or states whose write is not held back.
    fn acts_now(&self) -> bool {
        !self.dirty.is_empty()
            || !self.session_ok
            || (!self.unreported.is_empty() && self.publish_due() <= Instant::now())
    }

    /// When the states not written yet may be: a pace after the last
    /// write, or as soon as the changes pause.
    fn publish_due(&self) -> Instant {
        let machines = self.machines.0;
        (self.last_publish + publish_pace(machines)).min(self.last_event + quiet(machines))
    }

    /// One changed key of this machine.
    fn absorb(&mut self, key: &str, value: &[u8], deleted: bool) {
        let me = self.cfg.machine_id.clone();
        match self.reg.keys().parse(key) {
            Key::Schedule(m, u) if m == me => {
                let new = (!deleted)
                    .then(|| decode_value::<Assignment>(key.as_bytes(), value))
                    .flatten();
                let old = self.assignments.get(u);
                let launched_here = old.is_some_and(|a| self.local.runs_launched(u, &a.hash));
                let held = self.holds.contains_key(u);
                match hold::on_assignment(old, new.as_ref(), held, launched_here) {
                    hold::Hold::Start => {
                        self.holds
                            .insert(u.to_string(), Instant::now() + hold::STOP_HOLD);
                    }
                    hold::Hold::Restart => {
                        self.holds.remove(u);
                        self.restarts.insert(u.to_string());
                    }
                    hold::Hold::Apply => {
                        self.holds.remove(u);
                        self.dirty.insert(u.to_string());
                    }
                }
                match new {
                    Some(a) => {
                        self.assignments.insert(u.to_string(), a);
                    }
                    None if deleted => {
                        self.assignments.remove(u);
                    }
                    None => {}
                }
            }
            Key::Metadata(m) if m == me => {
                self.overrides = if deleted {
                    BTreeMap::new()
                } else {
                    decode_value(key.as_bytes(), value).unwrap_or_default()
                };
            }
            Key::LogRequest(m, u) if m == me && !deleted => {
                let (Some(req), Some(lease)) = (
                    decode_value::<LogRequest>(key.as_bytes(), value),
                    self.lease,
                ) else {
                    return;
                };
                tokio::spawn(logs::answer(
                    self.reg.clone(),
                    self.cfg.control.clone(),
                    me.clone(),
                    u.to_string(),
                    req,
                    self.assignments.contains_key(u),
                    lease,
                ));
            }
            Key::LogFollow(m, id) if m == me => {
                if deleted {
                    self.follows.stop(&self.reg, &me, id);
                    return;
                }
                let (Some(req), Some(lease)) =
                    (decode_value::<LogFollow>(key.as_bytes(), value), self.lease)
                else {
                    return;
                };
                let assigned = self.assignments.contains_key(&req.unit);
                self.follows
                    .start(&self.reg, &self.cfg.control, &me, id, req, assigned, lease);
            }
            _ => {}
        }
    }

    fn lease_lost(&mut self) {
        self.lease = None;
        self.keeper = None;
        self.published_machine = None;
        // What the engine did meanwhile is read afresh and applied before
        // this machine registers again.
        self.session_ok = false;
    }

    fn machine(&self) -> Machine {
        let mut md = self.cfg.metadata.clone();
        crate::model::merge_metadata(&mut md, &self.overrides);
        let total = self.cfg.capacity;
        Machine {
            id: self.cfg.machine_id.clone(),
            metadata: md,
            primary_ip: self.cfg.public_ip.clone(),
            total_resources: Some(total),
            reserved_resources: Some(self.reserved),
            free_resources: Some(total.minus(self.reserved)),
        }
    }

    /// The sum of the reservations of the units assigned here.
    fn reservations(&self) -> Resources {
        self.assignments
            .iter()
            .map(|(n, a)| Requirements::from_options(n, &a.options).reservation)
            .fold(Resources::ZERO, Resources::plus)
    }

    async fn step(&mut self) -> Result<(), RegistryError> {
        self.again = false;
        // 1. Read this machine's part of etcd, and follow it.
        if !self.session_ok {
            self.again = true;
            self.resync().await?;
            self.again = false;
        }
        // 2. Hand the changes to the init: a machine that lost its lease
        // stops its stale copies here, before it registers again. Stops
        // held long enough go with them. A machine not registered yet
        // starts nothing here: what it starts is read once its
        // registration is committed (step 3), so that the engine's move
        // of a unit off it, guarded by its absence, either was committed
        // before and is read, or fails and the unit stays
        // (docs/cluster.md "Reconcile before acting").
        let registering = self.lease.is_none();
        let now = Instant::now();
        let due: Vec<String> = self
            .holds
            .iter()
            .filter(|(_, t)| **t <= now)
            .map(|(n, _)| n.clone())
            .collect();
        for n in due {
            self.holds.remove(&n);
            self.dirty.insert(n);
        }
        self.apply(!registering).await;
        // 3. Presence, with merged metadata; registered, the schedule is
        // read again and applied in full.
        let lease = self.presence().await?;
        if registering {
            self.resync().await?;
            self.apply(true).await;
        }
        // 4. etcd answers again: the fence is lifted, and what the engine
        // has placed here now is read and run.
        if self.fence != Fence::Open {
            if fence::renewed(Instant::now(), self.expiry(), self.cfg.ttl) {
                self.lift().await?;
            } else {
                // etcd answers, its keep-alive not yet: looked at again in a
                // moment (an answer does not wake the agent).
                self.again = true;
            }
        }
        // 5. Report states.
        self.publish(lease).await
    }

    /// Hands the changes to the init; without `starts`, only stops and
    /// changes of what the init already runs (the rest stays marked).
    async fn apply(&mut self, starts: bool) {
        if !(self.synced && self.init_up) {
            return;
        }
        let mut dirty = std::mem::take(&mut self.dirty);
        let mut assigned = in_force(&self.assignments, self.fence);
        if !starts {
            // The init's set unknown, a full reconcile would start all.
            let Some(applied) = &self.local.applied else {
                self.dirty = dirty;
                return;
            };
            // A unit to launch that the init does not run yet waits,
            // marked, for the read after registration.
            let starts = |n: &String| {
                assigned
                    .get(n)
                    .is_some_and(|a| a.desired == ClusterState::Launched)
                    && applied.get(n).map(|(_, st)| *st) != Some(ClusterState::Launched)
            };
            let (later, now): (BTreeSet<String>, _) = dirty.into_iter().partition(starts);
            let kept = assigned
                .iter()
                .filter(|(n, _)| !later.contains(*n))
                .map(|(n, a)| (n.clone(), a.clone()))
                .collect();
            self.dirty = later;
            dirty = now;
            assigned = std::borrow::Cow::Owned(kept);
        }
        match self
            .local
            .reconcile(&self.cfg.control, &assigned, &dirty)
            .await
        {
            Ok(touched) => {
                self.unreported.extend(touched);
                self.publish_covered();
                self.restart_held().await;
            }
            Err(e) => {
                eprintln!("clusterd: agent: applying to the init: {e}");
                self.dirty.extend(dirty);
                self.local.reset();
                self.again = true;
            }
        }
    }

    /// Restarts the units launched again while their stop was held (a
    /// failed request is logged: the unit runs on as it was).
    async fn restart_held(&mut self) {
        for n in std::mem::take(&mut self.restarts) {
            // A fenced unit is not running: nothing to restart.
            if self.fenced.contains(&n) {
                continue;
            }
            if let Err(e) = self.local.restart(&self.cfg.control, &n).await {
                eprintln!("clusterd: agent: restarting {n}: {e}");
            }
            self.unreported.insert(n);
        }
    }

    /// Reads the schedule, metadata and reported states of this machine at
    /// one revision and follows them from the next.
    async fn resync(&mut self) -> Result<(), RegistryError> {
        let me = self.cfg.machine_id.clone();
        let k = self.reg.keys().clone();
        if let Some(t) = self.watch_task.take() {
            t.abort();
        }
        self.session += 1;
        let (rev, kvs) = self
            .reg
            .read_prefixes(&[k.schedule_of(&me), k.metadata(&me), k.states_of(&me)])
            .await?;
        let mut assignments = BTreeMap::new();
        let mut overrides = BTreeMap::new();
        let mut published = BTreeMap::new();
        for kv in &kvs {
            let Ok(key) = kv.key_str() else { continue };
            match k.parse(key) {
                Key::Schedule(m, u) if m == me => {
                    if let Some(a) = decode::<Assignment>(kv) {
                        assignments.insert(u.to_string(), a);
                    }
                }
                Key::Metadata(m) if m == me => overrides = decode(kv).unwrap_or_default(),
                Key::State(m, u) if m == me => {
                    // A state under another lease is rewritten under ours.
                    let s = decode::<StoredState>(kv)
                        .filter(|_| Some(kv.lease()) == self.lease)
                        .unwrap_or(StoredState {
                            state: ApiUnitState::default(),
                            current: ClusterState::Inactive,
                        });
                    published.insert(u.to_string(), s);
                }
                _ => {}
            }
        }
        // The units whose assignment differs from what we knew.
        for (n, a) in &assignments {
            if self.assignments.get(n) != Some(a) {
                self.dirty.insert(n.clone());
            }
        }
        for n in self.assignments.keys() {
            if !assignments.contains_key(n) {
                self.dirty.insert(n.clone());
            }
        }
        self.unreported.extend(published.keys().cloned());
        self.unreported.extend(assignments.keys().cloned());
        self.assignments = assignments;
        self.overrides = overrides;
        self.published = published;
        self.watch_task = Some(tokio::spawn(follow_etcd(
            self.reg.clone(),
            me,
            rev,
            self.session,
            self.tx.clone(),
        )));
        self.session_ok = true;
        self.synced = true;
        Ok(())
    }

    /// Keeps the presence key and its lease; returns the lease.
    async fn presence(&mut self) -> Result<i64, RegistryError> {
        let machine = self.machine();
        if let (Some(lease), Some((m, l))) = (self.lease, &self.published_machine) {
            if *m == machine && *l == lease {
                return Ok(lease);
            }
        }
        let me = self.cfg.machine_id.clone();
        let k = self.reg.keys().clone();
        let mut c = self.reg.client();
        let lease = match self.lease {
            Some(l) => l,
            None => {
                self.again = true;
                // Reuse the lease our machine key is bound to while it lives.
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
                    None => {
                        let sent = Instant::now();
                        let ttl = self.cfg.ttl.as_secs().max(1);
                        let l = c.lease_grant(ttl as i64, None).await?.id();
                        // Granted with its TTL when etcd received it.
                        lease::move_on(&self.expiry, sent + Duration::from_secs(ttl));
                        l
                    }
                };
                self.keeper = Some(Keeper::start_through_outages(
                    c.clone(),
                    lease,
                    self.cfg.ttl,
                    fence::renew_every(self.cfg.ttl),
                    self.expiry.clone(),
                ));
                self.lease = Some(lease);
                if old != Some(lease) {
                    // States under an old lease are gone (or going).
                    self.unreported.extend(self.published.keys().cloned());
                    self.published.clear();
                }
                self.again = false;
                lease
            }
        };
        if self.published_machine.as_ref() != Some(&(machine.clone(), lease)) {
            c.put(
                k.machine(&me),
                Registry::encode(&machine),
                Some(etcd_client::PutOptions::new().with_lease(lease)),
            )
            .await?;
            self.published_machine = Some((machine, lease));
        }
        Ok(lease)
    }

    /// What to report for `name`: `None` to leave the stored state as it
    /// is (the init has not taken the unit yet), `Some(None)` to delete it.
    fn record(&self, name: &str) -> Option<Option<StoredState>> {
        let Some(a) = self.assignments.get(name) else {
            return Some(None);
        };
        let (load, active, sub, current) = self.local.report(name)?;
        Some(Some(StoredState {
            state: ApiUnitState {
                hash: a.hash.clone(),
                machine_id: self.cfg.machine_id.clone(),
                name: name.to_string(),
                active_state: active.into(),
                load_state: load.into(),
                sub_state: sub.into(),
            },
            current,
        }))
    }

    async fn publish(&mut self, lease: i64) -> Result<(), RegistryError> {
        if self.unreported.is_empty() {
            self.publish_at = None;
            return Ok(());
        }
        // The pace depends on the machines: counted before a write, at most
        // every [`COUNT_FOR`] (one small read; when it fails, the old count
        // stands).
        if self.machines.1.is_none_or(|t| t.elapsed() > COUNT_FOR) {
            if let Ok(n) = self.reg.count(&self.reg.keys().machines()).await {
                self.machines = (n, Some(Instant::now()));
            }
        }
        let due = self.publish_due();
        if Instant::now() < due {
            self.publish_at = Some(due);
            return Ok(());
        }
        self.publish_at = None;
        let k = self.reg.keys().clone();
        let me = &self.cfg.machine_id;
        let mut groups = Vec::new();
        let mut next: Vec<(String, Option<StoredState>)> = Vec::new();
        for n in &self.unreported {
            let Some(want) = self.record(n) else { continue };
            if self.published.get(n) == want.as_ref() {
                continue;
            }
            groups.push(vec![match &want {
                Some(s) => Op::put_leased(k.state(me, n), Registry::encode(s), lease),
                None => Op::delete(k.state(me, n)),
            }]);
            next.push((n.clone(), want));
        }
        // What is reserved here goes with the states (at their pace, not
        // at every assignment).
        let reserved = self.reservations();
        let was_reserved = self.reserved;
        let mut machine = None;
        if reserved != self.reserved {
            self.reserved = reserved;
            let m = self.machine();
            groups.push(vec![Op::put_leased(
                k.machine(me),
                Registry::encode(&m),
                lease,
            )]);
            machine = Some(m);
        }
        if !groups.is_empty() {
            self.last_publish = Instant::now();
            let written = self.reg.write_groups(&[], groups).await;
            if !matches!(written, Ok(true)) {
                // Published again with the next states.
                self.reserved = was_reserved;
                written?;
                return Err(RegistryError("state write refused".into()));
            }
        }
        if let Some(m) = machine {
            self.published_machine = Some((m, lease));
        }
        // Units the init has not taken yet stay marked.
        let mut left = BTreeSet::new();
        for n in std::mem::take(&mut self.unreported) {
            if self.record(&n).is_none() {
                left.insert(n);
            }
        }
        self.unreported = left;
        for (n, s) in next {
            match s {
                Some(s) => self.published.insert(n, s),
                None => self.published.remove(&n),
            };
        }
        Ok(())
    }
}
