//! The live view of one clusterd: a [`View`] kept up to date from etcd,
//! started by the first reader (a listing, the dashboard) and stopped when
//! nobody has read it for [`IDLE`], so that a clusterd whose API nobody
//! reads watches nothing but its own machine's keys. It reads everything
//! once (paged, at one revision) and then follows one watch of the whole
//! prefix; every batch of changes is also announced as a [`Delta`] to the
//! dashboard's streams.
//!
//! Listings stay linearizable: a reader first asks etcd for its current
//! revision (one small request) and waits until the view has caught up to
//! it, asking the watch for a progress notice when no event would tell. A
//! listing of 10,000 units is then 100 pages served from memory, where it
//! was 100 reads of the whole store.

use crate::registry::Registry;
use crate::stored::RegistryError;
use crate::view::{Delta, View};
use etcd_client::{EventType, WatchOptions};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, watch};
use tokio::time::Instant;

/// A live view nobody read for this long stops (and its watch with it).
pub const IDLE: Duration = Duration::from_secs(300);

/// How long a reader waits for the view to catch up with etcd.
const CATCH_UP: Duration = Duration::from_secs(5);

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

/// Why a live view stopped following its watch.
enum Ended {
    /// Nobody read it for [`IDLE`]: the normal end, not reported.
    Idle,
    /// The watch ended or was canceled.
    Because(String),
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
            k.unscheduled_all(),
            k.states(),
            k.machines(),
            k.metadata_all(),
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
                        return Ok(Ended::Because("watch ended".to_string()));
                    };
                    if r.canceled() {
                        return Ok(Ended::Because(format!("watch canceled: {}", r.cancel_reason())));
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
                    return Ok(Ended::Idle);
                }
            }
        }
    }
    .await;
    match r {
        Ok(Ended::Idle) => {}
        Ok(Ended::Because(why)) | Err::<_, String>(why) => eprintln!("clusterd: API view: {why}"),
    }
}
