//! The API's view of the cluster: units, desired states, placements,
//! reported states and machines, kept in memory from one watch.
//!
//! [`View`] is the model (pure: keys in, entities out). [`Views`] keeps one
//! live view per clusterd, started by the first reader (a listing, the
//! dashboard) and stopped when nobody has read it for [`IDLE`]: a clusterd
//! whose API nobody reads watches nothing but its own machine's keys. The
//! live view reads everything once (paged, at one revision) and then
//! follows one watch of the whole prefix; every batch of changes is also
//! announced as a [`Delta`] (the names of the units and machines that
//! changed) to the dashboard's streams.
//!
//! Listings stay linearizable: a reader first asks etcd for its current
//! revision (one small request) and waits until the view has caught up to
//! it, asking the watch for a progress notice when no event would tell. A
//! listing of 10,000 units is then 100 pages served from memory, where it
//! was 100 reads of the whole store.

use crate::keys::{Key, Keys};
use crate::model::{ApiUnit, ApiUnitState, ClusterState, Machine, StoredState, StoredUnit};
use crate::registry::{decode_desired, decode_value, Registry, RegistryError};
use crate::requirements::Requirements;
use etcd_client::{EventType, KeyValue, WatchOptions};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, watch};
use tokio::time::Instant;

/// A live view nobody read for this long stops (and its watch with it).
pub const IDLE: Duration = Duration::from_secs(300);

/// How long a reader waits for the view to catch up with etcd.
const CATCH_UP: Duration = Duration::from_secs(5);

/// Units, states and machines as the API serves them.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// The revision the view reflects.
    pub revision: i64,
    /// Unit files.
    pub units: BTreeMap<String, StoredUnit>,
    /// Units whose `[X-Fleet]` says `Global=true`.
    pub global: BTreeSet<String>,
    /// Desired states.
    pub desired: BTreeMap<String, ClusterState>,
    /// Non-global unit -> machine.
    pub placement: BTreeMap<String, String>,
    /// (unit, machine) -> reported state.
    pub states: BTreeMap<(String, String), StoredState>,
    /// Present machines.
    pub machines: BTreeMap<String, Machine>,
}

/// What one batch of changes touched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delta {
    /// The view's revision after the batch.
    pub revision: i64,
    /// Units whose file, desired state, placement or states changed.
    pub units: BTreeSet<String>,
    /// Machines that came, went or changed.
    pub machines: BTreeSet<String>,
}

impl View {
    /// Adds one key-value pair (a read, not a change).
    pub fn absorb(&mut self, keys: &Keys, kv: &KeyValue) {
        if let Ok(key) = kv.key_str() {
            self.apply(keys, key, kv.value(), false, &mut Delta::default());
        }
    }

    /// Applies one key's new value (`deleted`: it is gone), noting what it
    /// touched in `delta`.
    pub fn apply(
        &mut self,
        keys: &Keys,
        key: &str,
        value: &[u8],
        deleted: bool,
        delta: &mut Delta,
    ) {
        let raw = key.as_bytes();
        match keys.parse(key) {
            Key::Unit(n) => {
                if deleted {
                    self.units.remove(n);
                    self.global.remove(n);
                } else if let Some(u) = decode_value::<StoredUnit>(raw, value) {
                    if Requirements::from_options(n, &u.options).global {
                        self.global.insert(n.to_string());
                    } else {
                        self.global.remove(n);
                    }
                    self.units.insert(n.to_string(), u);
                }
                delta.units.insert(n.to_string());
            }
            Key::Desired(n) => {
                if deleted {
                    self.desired.remove(n);
                } else if let Some(d) = decode_desired(raw, value) {
                    self.desired.insert(n.to_string(), d);
                }
                delta.units.insert(n.to_string());
            }
            Key::Placement(n) => {
                if deleted {
                    self.placement.remove(n);
                } else if let Ok(m) = std::str::from_utf8(value) {
                    self.placement.insert(n.to_string(), m.to_string());
                }
                delta.units.insert(n.to_string());
            }
            Key::State(m, n) => {
                let k = (n.to_string(), m.to_string());
                if deleted {
                    self.states.remove(&k);
                } else if let Some(s) = decode_value::<StoredState>(raw, value) {
                    self.states.insert(k, s);
                }
                delta.units.insert(n.to_string());
                delta.machines.insert(m.to_string());
            }
            Key::Machine(m) => {
                if deleted {
                    self.machines.remove(m);
                } else if let Some(mut mach) = decode_value::<Machine>(raw, value) {
                    mach.id = m.to_string();
                    self.machines.insert(m.to_string(), mach);
                }
                delta.machines.insert(m.to_string());
            }
            _ => {}
        }
    }

    /// The API's view of one unit.
    pub fn api_unit(&self, name: &str) -> Option<ApiUnit> {
        let u = self.units.get(name)?;
        let desired = self
            .desired
            .get(name)
            .copied()
            .unwrap_or(ClusterState::Inactive);
        let global = self.global.contains(name);
        let (current, machine) = if global {
            (None, None)
        } else {
            let machine = self.placement.get(name).cloned();
            let cur = machine
                .as_ref()
                .and_then(|m| self.states.get(&(name.to_string(), m.clone())))
                .map(|s| s.current)
                .unwrap_or(ClusterState::Inactive);
            (Some(cur.as_str().to_string()), machine)
        };
        Some(ApiUnit {
            current_state: current,
            desired_state: Some(desired.as_str().to_string()),
            machine_id: machine,
            name: name.to_string(),
            options: u.options.iter().map(Into::into).collect(),
        })
    }

    /// The states reported for one unit, by machine.
    pub fn unit_states<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a ApiUnitState> {
        let from = (name.to_string(), String::new());
        self.states
            .range(from..)
            .take_while(move |((n, _), _)| n == name)
            .map(|(_, s)| &s.state)
    }

    /// The number of units on each machine: non-global units placed there
    /// and global units it reports.
    pub fn loads(&self) -> BTreeMap<&str, usize> {
        let mut out: BTreeMap<&str, usize> =
            self.machines.keys().map(|m| (m.as_str(), 0)).collect();
        for m in self.placement.values() {
            *out.entry(m.as_str()).or_default() += 1;
        }
        for (u, m) in self.states.keys() {
            if self.global.contains(u) {
                *out.entry(m.as_str()).or_default() += 1;
            }
        }
        out
    }
}

/// A live view and the ways to reach it.
struct Live {
    view: Arc<RwLock<View>>,
    revision: watch::Receiver<i64>,
    progress: mpsc::Sender<()>,
    deltas: broadcast::Sender<Arc<Delta>>,
    used: watch::Sender<Instant>,
    task: tokio::task::JoinHandle<()>,
}

/// The live view of one clusterd, started when first read.
pub struct Views {
    reg: Registry,
    live: Mutex<Option<Live>>,
}

/// A reader's handle on a fresh view.
pub struct Fresh {
    /// The view (read-lock it briefly: the watch writes to it).
    pub view: Arc<RwLock<View>>,
    /// The changes from here on.
    pub deltas: broadcast::Receiver<Arc<Delta>>,
    used: watch::Sender<Instant>,
}

impl Fresh {
    /// Keeps the view alive (a dashboard stream calls this as it sends).
    pub fn touch(&self) {
        let _ = self.used.send(Instant::now());
    }
}

impl Views {
    /// No view yet; the first reader starts it.
    pub fn new(reg: Registry) -> Views {
        Views {
            reg,
            live: Mutex::new(None),
        }
    }

    /// The view, caught up with everything etcd had when this was called.
    pub async fn fresh(&self) -> Result<Fresh, RegistryError> {
        let target = self.reg.revision().await?;
        let (view, mut revision, progress, deltas, used) = {
            let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
            if live.as_ref().is_none_or(|l| l.task.is_finished()) {
                *live = Some(start(self.reg.clone()));
            }
            let l = live.as_ref().expect("just started");
            let _ = l.used.send(Instant::now());
            (
                l.view.clone(),
                l.revision.clone(),
                l.progress.clone(),
                l.deltas.subscribe(),
                l.used.clone(),
            )
        };
        let deadline = Instant::now() + CATCH_UP;
        loop {
            if *revision.borrow_and_update() >= target {
                return Ok(Fresh { view, deltas, used });
            }
            // Nothing under the prefix may have changed since: ask the
            // watch where it is.
            let _ = progress.try_send(());
            let wait = Duration::from_millis(100).min(deadline - Instant::now());
            match tokio::time::timeout(wait, revision.changed()).await {
                Ok(Err(_)) => return Err(RegistryError("the view's watch ended".into())),
                _ if Instant::now() >= deadline => {
                    return Err(RegistryError(format!(
                        "the view did not catch up with revision {target} within {CATCH_UP:?}"
                    )))
                }
                _ => {}
            }
        }
    }
}

fn start(reg: Registry) -> Live {
    let view = Arc::new(RwLock::new(View::default()));
    let (rev_tx, revision) = watch::channel(0);
    let (progress, progress_rx) = mpsc::channel(4);
    let (deltas, _) = broadcast::channel(1024);
    let (used, used_rx) = watch::channel(Instant::now());
    let task = tokio::spawn(follow(
        reg,
        view.clone(),
        rev_tx,
        progress_rx,
        deltas.clone(),
        used_rx,
    ));
    Live {
        view,
        revision,
        progress,
        deltas,
        used,
        task,
    }
}

/// Reads everything, then follows the watch until it fails or nobody has
/// read the view for [`IDLE`].
async fn follow(
    reg: Registry,
    view: Arc<RwLock<View>>,
    rev_tx: watch::Sender<i64>,
    mut progress: mpsc::Receiver<()>,
    deltas: broadcast::Sender<Arc<Delta>>,
    mut used: watch::Receiver<Instant>,
) {
    let k = reg.keys().clone();
    let r = async {
        let prefixes = [
            k.units(),
            k.desireds(),
            k.placements(),
            k.states(),
            k.machines(),
        ];
        let (rev, kvs) = reg.read_prefixes(&prefixes).await.map_err(|e| e.0)?;
        {
            let mut v = view.write().unwrap_or_else(|e| e.into_inner());
            *v = View::default();
            for kv in &kvs {
                v.absorb(&k, kv);
            }
            v.revision = rev;
        }
        drop(kvs);
        let _ = rev_tx.send(rev);
        let opts = WatchOptions::new()
            .with_prefix()
            .with_start_revision(rev + 1);
        let mut stream = reg
            .watch_client()
            .watch(k.prefix(), Some(opts))
            .await
            .map_err(|e| e.to_string())?;
        loop {
            let idle_at = *used.borrow_and_update() + IDLE;
            tokio::select! {
                r = stream.message() => {
                    let Some(r) = r.map_err(|e| e.to_string())? else {
                        return Ok("watch ended".to_string());
                    };
                    if r.canceled() {
                        return Ok(format!("watch canceled: {}", r.cancel_reason()));
                    }
                    let rev = r.header().map(|h| h.revision()).unwrap_or(0);
                    let mut delta = Delta::default();
                    {
                        let mut v = view.write().unwrap_or_else(|e| e.into_inner());
                        for e in r.events() {
                            let Some(kv) = e.kv() else { continue };
                            let Ok(key) = kv.key_str() else { continue };
                            v.apply(&k, key, kv.value(), e.event_type() == EventType::Delete, &mut delta);
                        }
                        v.revision = v.revision.max(rev);
                        delta.revision = v.revision;
                    }
                    if !delta.units.is_empty() || !delta.machines.is_empty() {
                        let _ = deltas.send(Arc::new(delta));
                    }
                    rev_tx.send_if_modified(|r| {
                        let newer = rev > *r;
                        *r = (*r).max(rev);
                        newer
                    });
                }
                Some(()) = progress.recv() => {
                    stream.request_progress().await.map_err(|e| e.to_string())?;
                }
                _ = used.changed() => {}
                _ = tokio::time::sleep_until(idle_at), if deltas.receiver_count() == 0 => {
                    return Ok("idle".to_string());
                }
            }
        }
    }
    .await;
    match r {
        Ok(why) if why == "idle" => {}
        Ok(why) | Err::<_, String>(why) => eprintln!("clusterd: API view: {why}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_applied_and_noted() {
        let k = Keys::new("/f/");
        let mut v = View::default();
        let mut d = Delta::default();
        let unit = |global: bool| {
            let mut options = vec![flotilla_units::systemd::UnitOption {
                section: "Service".into(),
                name: "ExecStart".into(),
                value: "/bin/true".into(),
            }];
            if global {
                options.push(flotilla_units::systemd::UnitOption {
                    section: "X-Fleet".into(),
                    name: "Global".into(),
                    value: "yes".into(),
                });
            }
            serde_json::to_vec(&StoredUnit {
                name: "a.service".into(),
                hash: "h".into(),
                options,
            })
            .unwrap()
        };
        v.apply(&k, &k.unit("a.service"), &unit(false), false, &mut d);
        v.apply(&k, &k.desired("a.service"), b"launched", false, &mut d);
        v.apply(&k, &k.placement("a.service"), b"m1", false, &mut d);
        let st = StoredState {
            state: ApiUnitState {
                name: "a.service".into(),
                machine_id: "m1".into(),
                active_state: "active".into(),
                ..Default::default()
            },
            current: ClusterState::Launched,
        };
        v.apply(
            &k,
            &k.state("m1", "a.service"),
            &serde_json::to_vec(&st).unwrap(),
            false,
            &mut d,
        );
        let m = serde_json::to_vec(&Machine::default()).unwrap();
        v.apply(&k, &k.machine("m1"), &m, false, &mut d);
        v.apply(&k, &k.schedule("m1", "a.service"), b"{}", false, &mut d);
        assert_eq!(d.units, ["a.service".to_string()].into());
        assert_eq!(d.machines, ["m1".to_string()].into());
        let u = v.api_unit("a.service").unwrap();
        assert_eq!(u.current_state.as_deref(), Some("launched"));
        assert_eq!(u.machine_id.as_deref(), Some("m1"));
        assert_eq!(v.machines["m1"].id, "m1");
        assert_eq!(v.loads()["m1"], 1);
        assert_eq!(v.unit_states("a.service").count(), 1);
        // Global: no machine, no current state; counted where it reports.
        v.apply(&k, &k.unit("a.service"), &unit(true), false, &mut d);
        v.apply(&k, &k.placement("a.service"), b"", true, &mut d);
        let u = v.api_unit("a.service").unwrap();
        assert_eq!((u.current_state, u.machine_id), (None, None));
        assert_eq!(v.loads()["m1"], 1);
        // Deleted keys leave.
        v.apply(&k, &k.state("m1", "a.service"), b"", true, &mut d);
        v.apply(&k, &k.unit("a.service"), b"", true, &mut d);
        v.apply(&k, &k.machine("m1"), b"", true, &mut d);
        assert!(v.api_unit("a.service").is_none());
        assert!(v.machines.is_empty() && v.states.is_empty());
    }
}
