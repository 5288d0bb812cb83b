//! A stand-in for a machine's init: it speaks the control protocol that
//! clusterd uses (`transient-patch`, `transient-apply`, `list`,
//! `subscribe`, `logs`) over a unix socket, keeps the transient set, and
//! marks the units the virtual target `cluster` waits for `running` (the
//! others `disabled`) without running anything, so that what is measured is
//! clusterd's and etcd's work, not process start-up.

use flotilla_units::protocol::{Applied, Envelope, LogLine, Reply, Request, UnitStatus};
use flotilla_units::spec::{UnitSpec, UnitType};
use flotilla_units::state::UnitState;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

#[derive(Default)]
struct State {
    count: Arc<AtomicUsize>,
    set: BTreeMap<String, UnitSpec>,
    status: BTreeMap<String, UnitState>,
    subscribers: Vec<UnixStream>,
}

/// One stand-in init.
pub struct StandIn {
    pub path: PathBuf,
    state: Arc<Mutex<State>>,
    /// How many units run (kept by `settle`, read without the lock).
    count: Arc<AtomicUsize>,
    /// Signalled on every change of the running set (for waiters).
    pub changed: Arc<(Mutex<u64>, Condvar)>,
    dead: Arc<AtomicBool>,
}

fn status_of(name: &str, kind: UnitType, state: UnitState) -> UnitStatus {
    UnitStatus {
        unit: name.to_string(),
        kind,
        state,
        provides: vec![name.to_string()],
        required: state == UnitState::Running,
        source: "transient:cluster".into(),
        ..Default::default()
    }
}

impl StandIn {
    /// Listens at `path`; `changed` is signalled on every change (shared
    /// by all machines, for `Host::wait_until`).
    pub fn start(path: &Path, changed: Arc<(Mutex<u64>, Condvar)>) -> StandIn {
        let _ = std::fs::remove_file(path);
        let l = UnixListener::bind(path).expect("bind the stand-in's socket");
        let count = Arc::new(AtomicUsize::new(0));
        let s = StandIn {
            path: path.to_path_buf(),
            state: Arc::new(Mutex::new(State {
                count: count.clone(),
                ..State::default()
            })),
            count,
            changed,
            dead: Arc::default(),
        };
        let (state, changed, dead) = (s.state.clone(), s.changed.clone(), s.dead.clone());
        std::thread::spawn(move || {
            for c in l.incoming().flatten() {
                if dead.load(Ordering::SeqCst) {
                    return;
                }
                let (state, changed, dead) = (state.clone(), changed.clone(), dead.clone());
                std::thread::spawn(move || serve(c, state, changed, dead));
            }
        });
        s
    }

    /// The units running here.
    pub fn running(&self) -> Vec<String> {
        let st = self.state.lock().unwrap();
        st.status
            .iter()
            .filter(|(n, s)| **s == UnitState::Running && n.as_str() != "cluster")
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// How many units run here.
    pub fn running_count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// The machine dies: its units are gone and it answers no more.
    pub fn kill(&self) {
        self.dead.store(true, Ordering::SeqCst);
        let mut st = self.state.lock().unwrap();
        st.set.clear();
        st.status.clear();
        st.count.store(0, Ordering::SeqCst);
        st.subscribers.clear();
        let _ = std::fs::remove_file(&self.path);
    }
}

fn serve(
    c: UnixStream,
    state: Arc<Mutex<State>>,
    changed: Arc<(Mutex<u64>, Condvar)>,
    dead: Arc<AtomicBool>,
) {
    let Ok(mut w) = c.try_clone() else { return };
    for line in BufReader::new(c).lines() {
        let Ok(line) = line else { return };
        if dead.load(Ordering::SeqCst) {
            return;
        }
        let Ok(env) = serde_json::from_str::<Envelope>(&line) else {
            return;
        };
        let replies: Vec<Reply> = match env.request {
            Request::TransientPatch { upsert, remove, .. } => {
                let mut st = state.lock().unwrap();
                for n in remove {
                    st.set.remove(&n);
                }
                for u in upsert {
                    st.set.insert(u.name.clone(), u);
                }
                settle(&mut st);
                bump(&changed);
                vec![Reply::Applied(Applied::default())]
            }
            Request::TransientApply { units, .. } => {
                let mut st = state.lock().unwrap();
                st.set = units.into_iter().map(|u| (u.name.clone(), u)).collect();
                settle(&mut st);
                bump(&changed);
                vec![Reply::Applied(Applied::default())]
            }
            Request::List => {
                let st = state.lock().unwrap();
                let units = st
                    .status
                    .iter()
                    .map(|(n, s)| {
                        let kind = st.set.get(n).map_or(UnitType::Virtual, |u| u.kind);
                        status_of(n, kind, *s)
                    })
                    .collect();
                vec![Reply::List { units }]
            }
            Request::Subscribe => {
                if let Ok(c) = w.try_clone() {
                    state.lock().unwrap().subscribers.push(c);
                }
                continue;
            }
            Request::Logs { unit, .. } => vec![
                Reply::Log(LogLine {
                    time: "2026-01-01T00:00:00.000Z".into(),
                    stream: "stdout".into(),
                    line: format!("{unit} says hello"),
                    seq: Some(1),
                    cut: false,
                }),
                Reply::LogEnd,
            ],
            _ => vec![Reply::Accepted {
                message: String::new(),
            }],
        };
        for r in replies {
            let mut l = serde_json::to_string(&r).unwrap();
            l.push('\n');
            if w.write_all(l.as_bytes()).is_err() {
                return;
            }
        }
    }
}

fn bump(changed: &(Mutex<u64>, Condvar)) {
    *changed.0.lock().unwrap() += 1;
    changed.1.notify_all();
}

/// Launched units (those `cluster` waits for) run; the others are disabled.
/// Subscribers hear of every change.
fn settle(st: &mut State) {
    let launched: std::collections::BTreeSet<&String> = st
        .set
        .get("cluster")
        .map(|c| c.waits_for.iter().collect())
        .unwrap_or_default();
    let mut next = BTreeMap::new();
    let mut changes = Vec::new();
    for (n, u) in &st.set {
        let s = if n == "cluster" || launched.contains(n) {
            UnitState::Running
        } else {
            UnitState::Disabled
        };
        if st.status.get(n) != Some(&s) {
            changes.push(status_of(n, u.kind, s));
        }
        next.insert(n.clone(), s);
    }
    st.status = next;
    let running = st
        .status
        .iter()
        .filter(|(n, s)| **s == UnitState::Running && n.as_str() != "cluster")
        .count();
    st.count.store(running, Ordering::SeqCst);
    let mut subs = std::mem::take(&mut st.subscribers);
    subs.retain_mut(|s| {
        changes.iter().all(|c| {
            let mut l = serde_json::to_string(&Reply::Changed(c.clone())).unwrap();
            l.push('\n');
            s.write_all(l.as_bytes()).is_ok()
        })
    });
    st.subscribers = subs;
}
