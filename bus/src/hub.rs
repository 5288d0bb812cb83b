//! What every connection shares: the way to the init (one control
//! connection per question, `flotilla-client`), the one `subscribe`
//! stream whose changes are fanned out to jobs and turned into
//! `PropertiesChanged`, the jobs under way ([`crate::queue`]: those asked
//! over D-Bus and the init's own, read off the same stream), and the
//! connections signals
//! go to (on the peer-to-peer socket systemd sends its signals to every
//! connection, subscribed or not).

use crate::error::BusError;
use crate::escape::unit_path;
use crate::model::{candidates, systemd_name};
use crate::peers::Peers;
use flotilla_units::protocol::{Reply, Request, SystemStatus, UnitStatus};
use flotilla_units::state::UnitState;
use std::collections::HashMap;
use std::os::fd::RawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::broadcast;

/// How long the stream of changes waits before it is asked again when
/// the init cannot be reached.
const RETRY: std::time::Duration = std::time::Duration::from_millis(200);

/// A change the subscription saw.
#[derive(Debug, Clone)]
pub enum Event {
    /// A unit changed state.
    Changed(Box<UnitStatus>),
    /// The stream was lost and is back: changes may have been missed.
    Resync,
}

pub use crate::queue::Job;
use crate::queue::{Change, Queue};

/// The shared state.
pub struct Hub {
    control: PathBuf,
    jobs: Mutex<Queue>,
    peers: Peers,
    changes: broadcast::Sender<Event>,
    /// Each unit's state as last told (`PropertiesChanged`), by flotilla's
    /// name: what changed while the stream was away is told from it.
    told: Mutex<HashMap<String, UnitState>>,
    /// How many `told` may hold before it is brought up to the set again
    /// ([`crate::model::told_limit`]).
    told_limit: AtomicUsize,
    /// Each unit's markers (`Markers=`, [`crate::markers`]), by
    /// flotilla's name: systemd keeps them in the manager only, as here
    /// the bus side does (a restart of `flotilla-busd` forgets them).
    markers: Mutex<HashMap<String, crate::markers::Markers>>,
    /// What of the init's status holds for its life, once asked; asked
    /// again after the init re-executed (its config may say otherwise).
    lasting: Mutex<Option<Arc<Lasting>>>,
}

/// What of the init's whole status holds for as long as its image runs:
/// asked once (and again after a re-exec), since the whole status lists
/// every unit, and a unit's file state, asked at each `systemctl start`,
/// needs the search path.
#[derive(Debug, Clone)]
pub struct Lasting {
    /// The unit search path (`units_path`).
    pub units_path: Vec<String>,
    /// Whether the init is PID 1.
    pub pid1: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Hub {
    /// A hub that asks the init at `control`.
    pub fn new(control: PathBuf) -> Arc<Hub> {
        let (changes, _) = broadcast::channel(1024);
        Arc::new(Hub {
            control,
            jobs: Mutex::new(Queue::default()),
            peers: Peers::default(),
            changes,
            told: Mutex::new(HashMap::new()),
            told_limit: AtomicUsize::new(crate::model::told_limit(0)),
            markers: Mutex::new(HashMap::new()),
            lasting: Mutex::new(None),
        })
    }

    /// Asks the init; its final reply.
    pub async fn ask(&self, req: Request) -> Result<Reply, BusError> {
        Ok(flotilla_client::tokio::request(&self.control, req).await?)
    }

    /// [`Hub::ask`] with descriptors sent along (`transient-add`'s
    /// `stdio`); they stay the caller's.
    pub async fn ask_passing(&self, req: Request, fds: &[RawFd]) -> Result<Reply, BusError> {
        if fds.is_empty() {
            return self.ask(req).await;
        }
        Ok(flotilla_client::tokio::request_passing(&self.control, req, fds).await?)
    }

    /// The whole system's status.
    pub async fn system(&self) -> Result<SystemStatus, BusError> {
        match self.ask(Request::Status { name: None }).await? {
            Reply::Status(s) => Ok(s),
            other => Err(BusError::from_init(&other, "status")),
        }
    }

    /// What of the init's status holds for its life ([`Lasting`]).
    pub async fn lasting(&self) -> Result<Arc<Lasting>, BusError> {
        if let Some(l) = lock(&self.lasting).as_ref() {
            return Ok(l.clone());
        }
        let s = self.system().await?;
        let l = Arc::new(Lasting {
            units_path: s.units_path,
            pid1: s.pid1,
        });
        *lock(&self.lasting) = Some(l.clone());
        Ok(l)
    }

    /// Every unit.
    pub async fn list(&self) -> Result<Vec<UnitStatus>, BusError> {
        match self.ask(Request::List).await? {
            Reply::List { units } => Ok(units),
            other => Err(BusError::from_init(&other, "list")),
        }
    }

    /// One unit by flotilla's exact name.
    pub async fn status(&self, name: &str) -> Result<Option<UnitStatus>, BusError> {
        match self
            .ask(Request::Status {
                name: Some(name.to_string()),
            })
            .await?
        {
            Reply::Unit(s) => Ok(Some(s)),
            Reply::Error {
                code:
                    flotilla_units::protocol::ErrorCode::UnknownUnit
                    | flotilla_units::protocol::ErrorCode::UnknownTarget,
                ..
            } => Ok(None),
            other => Err(BusError::from_init(&other, "status")),
        }
    }

    /// [`Hub::find`], and when the init has no such unit, the unit loaded
    /// from the search path if its file was written since the last reload
    /// (the protocol's `load`), as systemd loads a unit an object path or
    /// `LoadUnit` names; when the init has it and it is inactive, the
    /// same `load`, which reads it again if nothing holds it and its files
    /// changed (docs/systemd-units.md, "Unit files read again when asked
    /// for"), as systemd reads a unit it freed.
    pub async fn find_or_load(&self, name: &str) -> Result<Option<UnitStatus>, BusError> {
        let found = self.find(name).await?;
        match &found {
            Some(s) if s.state != UnitState::Disabled || s.required => return Ok(found),
            Some(_) => {}
            None if !crate::model::has_suffix(name) => return Ok(None),
            None => {}
        }
        let unit = found.as_ref().map_or(name, |s| s.unit.as_str());
        match self
            .ask(Request::Load {
                unit: unit.to_string(),
            })
            .await?
        {
            Reply::Accepted { .. } => self.find(name).await,
            _ => Ok(found),
        }
    }

    /// The unit a client's name (`cron.service`, `web`) means, if the init
    /// has it ([`crate::model::means`]: the init's `status` of a target
    /// answers its provider, which is not the unit asked for).
    pub async fn find(&self, name: &str) -> Result<Option<UnitStatus>, BusError> {
        for n in candidates(name) {
            if let Some(s) = self.status(&n).await? {
                if crate::model::means(name, &s) {
                    return Ok(Some(s));
                }
            }
        }
        Ok(None)
    }

    /// The markers of `unit` (flotilla's name).
    pub fn markers_of(&self, unit: &str) -> crate::markers::Markers {
        lock(&self.markers).get(unit).copied().unwrap_or(0)
    }

    /// Sets the markers of `unit` (flotilla's name).
    pub fn set_markers(&self, unit: &str, m: crate::markers::Markers) {
        let mut all = lock(&self.markers);
        if m == 0 {
            all.remove(unit);
        } else {
            all.insert(unit.to_string(), m);
        }
    }

    /// The units with markers (flotilla's names), in name order.
    pub fn marked(&self) -> Vec<(String, crate::markers::Markers)> {
        let mut v: Vec<_> = lock(&self.markers)
            .iter()
            .map(|(u, m)| (u.clone(), *m))
            .collect();
        v.sort();
        v
    }

    /// A receiver of the changes from now on.
    pub fn changes(&self) -> broadcast::Receiver<Event> {
        self.changes.subscribe()
    }

    /// A job asked over D-Bus on `name` (systemd's name; `unit`
    /// flotilla's): its number, and whether it still has to be announced
    /// (`JobNew`): a job the init's own work has on the unit is taken over.
    pub fn add_job(&self, name: &str, unit: &str, kind: &'static str) -> (u32, bool) {
        let waiting = lock(&self.told).get(unit) == Some(&UnitState::Waiting);
        lock(&self.jobs).ask(name, kind, waiting)
    }

    /// Ends a job.
    pub fn end_job(&self, id: u32) {
        lock(&self.jobs).end(id);
    }

    /// A stop of `name` (systemd's name) is about to be asked: a start
    /// meanwhile replaces it, or with `replace-irreversibly` is refused
    /// until its job ends ([`Queue::begin_stop`]).
    pub fn begin_stop(&self, name: &str, irreversible: bool) {
        lock(&self.jobs).begin_stop(name, irreversible);
    }

    /// Undoes [`Hub::begin_stop`] (the stop could not be asked).
    pub fn release_stop(&self, name: &str) {
        lock(&self.jobs).release(name);
    }

    /// Whether an irreversible stop is under way on `name`.
    pub fn stopping_irreversibly(&self, name: &str) -> bool {
        lock(&self.jobs).irreversible(name)
    }

    /// A start of `name` was asked: its asked stops end `canceled`.
    pub fn cancel_stop(&self, name: &str) {
        lock(&self.jobs).cancel_stop(name);
    }

    /// Whether job `id` was replaced by a start ([`Hub::cancel_stop`]).
    pub fn job_canceled(&self, id: u32) -> bool {
        lock(&self.jobs).canceled(id)
    }

    /// A job by number.
    pub fn job(&self, id: u32) -> Option<Job> {
        lock(&self.jobs).get(id).cloned()
    }

    /// Every job, by number.
    pub fn jobs(&self) -> Vec<(u32, Job)> {
        lock(&self.jobs).all()
    }

    /// The job under way on a unit (its systemd name), if any.
    pub fn job_of(&self, unit: &str) -> Option<(u32, Job)> {
        lock(&self.jobs).of(unit).map(|(id, j)| (id, j.clone()))
    }

    /// `JobNew` and `JobRemoved` of the init's own jobs.
    fn announce(&self, changes: Vec<Change>) {
        for c in changes {
            match c {
                Change::New(id, unit) => {
                    let path = crate::escape::job_path(id);
                    let body = (id, crate::escape::as_path(&path), unit.as_str());
                    self.emit(
                        crate::escape::MANAGER_PATH,
                        crate::props::MANAGER,
                        "JobNew",
                        &body,
                    );
                }
                Change::Removed(id, unit, result) => {
                    let path = crate::escape::job_path(id);
                    let body = (id, crate::escape::as_path(&path), unit.as_str(), result);
                    let member = "JobRemoved";
                    self.emit(
                        crate::escape::MANAGER_PATH,
                        crate::props::MANAGER,
                        member,
                        &body,
                    );
                }
            }
        }
    }

    /// The init's own job on `s`'s unit follows its state.
    fn sync_job(&self, s: &UnitStatus) {
        let changes = lock(&self.jobs).changed(&systemd_name(s), s);
        self.announce(changes);
    }

    /// A connection that gets the signals.
    pub fn add_peer(&self, c: zbus::Connection) {
        self.peers.add(c);
    }

    /// Sends a signal from `path` to every connection, waiting for none
    /// (`peers.rs`).
    pub fn emit<B>(&self, path: &str, iface: &str, member: &str, body: &B)
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        self.peers.emit(path, iface, member, body);
    }

    /// Follows the init's `subscribe` stream for as long as the process
    /// lives: each change goes to the jobs and out as `PropertiesChanged`;
    /// a lost stream is opened again (the init re-executing closes it),
    /// and what changed meanwhile is told then, as if it had come through
    /// the stream (logind ends a session on its scope's change).
    pub async fn follow(self: Arc<Hub>) {
        let mut first = true;
        let mut said = false;
        loop {
            let opened = std::time::Instant::now();
            match flotilla_client::tokio::subscribe(&self.control).await {
                Ok(mut sub) => {
                    if !first {
                        // The init re-executed (or came back): its
                        // settings are asked again.
                        *lock(&self.lasting) = None;
                        let _ = self.changes.send(Event::Resync);
                    }
                    // Asked once the stream is open, so that nothing falls
                    // between the two; at the first, only to know the
                    // states told from now on.
                    self.catch_up(!first).await;
                    first = false;
                    said = false;
                    while let Ok(Some(reply)) = sub.next().await {
                        if let Reply::Changed(s) = reply {
                            self.tell(s).await;
                            // Units come and go (a scope per login): what
                            // left the set is forgotten from time to time.
                            if lock(&self.told).len() > self.told_limit.load(Ordering::Relaxed) {
                                self.catch_up(true).await;
                            }
                        }
                    }
                    // A re-exec: the init's socket outlives its image, so
                    // the next stream opens as soon as the new image takes
                    // it. A stream lost at once waits, as a failure does.
                    if opened.elapsed() >= RETRY {
                        continue;
                    }
                }
                // Said once per outage, not at every try.
                Err(e) if !said => {
                    eprintln!("flotilla-busd: cannot follow the init's changes: {e}");
                    said = true;
                }
                Err(_) => {}
            }
            // The init is away (re-executing, or not up yet): try again
            // shortly rather than spin.
            tokio::time::sleep(RETRY).await;
        }
    }

    /// A change: to the jobs, and out as `PropertiesChanged`.
    async fn tell(&self, s: UnitStatus) {
        lock(&self.told).insert(s.unit.clone(), s.state);
        let m = self.markers_of(&s.unit);
        if m != 0 {
            self.set_markers(&s.unit, crate::markers::after(m, s.state));
        }
        self.sync_job(&s);
        self.properties_changed(&s);
        let _ = self.changes.send(Event::Changed(Box::new(s)));
    }

    /// Brings the states told up to the init's units, telling those that
    /// changed when `tell` (a stream opened again after a gap).
    async fn catch_up(&self, tell: bool) {
        let Ok(units) = self.list().await else {
            // The stream's own changes go on; the next gap catches up.
            return;
        };
        self.told_limit
            .store(crate::model::told_limit(units.len()), Ordering::Relaxed);
        let names: std::collections::HashSet<String> = units.iter().map(systemd_name).collect();
        let gone = lock(&self.jobs).forget(|u| names.contains(u));
        self.announce(gone);
        let changed = crate::model::catch_up(&mut lock(&self.told), units);
        for s in changed {
            if tell {
                self.tell(s).await;
            } else {
                // Work the init had under way before the bus side came.
                lock(&self.told).insert(s.unit.clone(), s.state);
                self.sync_job(&s);
            }
        }
    }

    /// `PropertiesChanged` of a unit's `Unit` interface.
    fn properties_changed(&self, s: &UnitStatus) {
        let name = systemd_name(s);
        let job = self.job_of(&name).map(|(id, _)| id);
        let props = crate::props::dict(crate::props::unit_changed(s, job));
        let none: Vec<String> = Vec::new();
        self.emit(
            &unit_path(&name),
            "org.freedesktop.DBus.Properties",
            "PropertiesChanged",
            &(crate::props::UNIT, props, none),
        );
    }
}
