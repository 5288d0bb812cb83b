//! systemd's jobs over flotilla's model: a start, stop, restart or reload
//! asked over D-Bus becomes a job (`/org/freedesktop/systemd1/job/N`,
//! `JobNew`) whose end (`JobRemoved` with systemd's result word) is the
//! unit's real settling, read off the init's `subscribe` stream:
//! `done` once the unit is active (or stopped), `failed`, `dependency`
//! when a failed or missing dependency holds it back, `timeout` when
//! nothing settles within [`JOB_TIMEOUT`], `canceled` when the bus side
//! loses its way to the init or a start replaces a stop
//! ([`Hub::cancel_stop`]). `systemctl start` waits for it.

use crate::escape::{as_path, job_path, unit_path};
use crate::hub::{Event, Hub};
use crate::model::{settled_or_gone, Goal};
use crate::props::MANAGER;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::{error::RecvError, Receiver};

/// How long a job waits for its unit (a unit's own start and stop
/// timeouts end its attempts well before, by default).
pub const JOB_TIMEOUT: Duration = Duration::from_secs(600);

/// A job to follow once its method has been answered.
pub struct Pending {
    /// Its number.
    pub id: u32,
    /// Not announced yet (`JobNew`): a job taken over from the init's own
    /// work was, when that began.
    pub announce: bool,
    /// flotilla's name of the unit.
    pub unit: String,
    /// systemd's name of the unit.
    pub name: String,
    /// What settles it.
    pub goal: Goal,
    /// The state the unit is in now says nothing yet (a restart or reload
    /// of an active unit, a unit just made): only a change from the
    /// stream counts.
    pub fresh: bool,
    /// Settled before it began (a start of an active unit): the result.
    pub already: Option<&'static str>,
    /// The changes, subscribed to before the request was sent.
    pub changes: Receiver<Event>,
}

/// Announces the job and follows it to its end; its result word.
pub async fn follow(hub: Arc<Hub>, mut p: Pending) -> &'static str {
    let path = job_path(p.id);
    if p.announce {
        hub.emit(
            crate::escape::MANAGER_PATH,
            MANAGER,
            "JobNew",
            &(p.id, as_path(&path), p.name.as_str()),
        );
    }
    let result = match p.already {
        Some(r) => r,
        None => wait(&hub, &mut p).await,
    };
    hub.end_job(p.id);
    hub.emit(
        crate::escape::MANAGER_PATH,
        MANAGER,
        "JobRemoved",
        &(p.id, as_path(&path), p.name.as_str(), result),
    );
    // The unit's Job property is back to none.
    if let Ok(Some(s)) = hub.status(&p.unit).await {
        let props = crate::props::dict(crate::props::unit_changed(&s, None));
        let none: Vec<String> = Vec::new();
        hub.emit(
            &unit_path(&p.name),
            "org.freedesktop.DBus.Properties",
            "PropertiesChanged",
            &(crate::props::UNIT, props, none),
        );
    }
    result
}

async fn wait(hub: &Hub, p: &mut Pending) -> &'static str {
    let deadline = tokio::time::Instant::now() + JOB_TIMEOUT;
    // `None` while nothing is known; `Some(None)` once the init said the
    // unit is not in the set.
    let mut now = if p.fresh {
        None
    } else {
        hub.status(&p.unit).await.ok()
    };
    loop {
        // A stop a start replaced ends so, whatever the unit does next.
        if hub.job_canceled(p.id) {
            return "canceled";
        }
        if let Some(r) = now
            .as_ref()
            .and_then(|s| settled_or_gone(p.goal, s.as_ref()))
        {
            return r;
        }
        match tokio::time::timeout_at(deadline, p.changes.recv()).await {
            Err(_) => return "timeout",
            Ok(Ok(Event::Changed(s))) => {
                if s.unit == p.unit {
                    now = Some(Some(*s));
                }
            }
            // Changes may have been missed (the stream was lost while the
            // init re-executed): the unit as it is now.
            Ok(Ok(Event::Resync)) | Ok(Err(RecvError::Lagged(_))) => {
                now = hub.status(&p.unit).await.ok();
            }
            Ok(Err(RecvError::Closed)) => return "canceled",
        }
    }
}
