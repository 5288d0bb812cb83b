//! Start, stop, restart and reload of one unit in flotilla's declarative
//! model, each a job ([`crate::jobs`]), as `initctl`'s systemctl verbs
//! map them (`docs/dbus.md`): `start` of a unit the target does not
//! require wants it (the protocol's `want`, until the next target
//! switch), of a failed one restarts it; `stop` drops such a want, and a
//! unit the target requires is not stopped: that is refused, naming the
//! target and what does stop it.

use crate::answer::{owned_path, Answer};
use crate::error::BusError;
use crate::escape::job_path;
use crate::hub::Hub;
use crate::jobs::Pending;
use crate::model::{systemd_name, Goal};
use flotilla_units::protocol::{ErrorCode, Reply, Request, UnitStatus};
use flotilla_units::state::UnitState;
use std::sync::Arc;

/// The `source` of the transient units `transient-add` makes.
const TRANSIENT_SOURCE: &str = "transient:initctl";

/// An answer and the jobs to follow after it (one per unit method;
/// `EnqueueMarkedJobs` has one per marked unit).
pub type Outcome = (Answer, Vec<Pending>);

/// A job's answer: its path, and the job.
fn job(hub: &Hub, p: PendingParts, kind: &'static str) -> Outcome {
    let (id, announce) = hub.add_job(&p.name, &p.unit, kind);
    let pending = Pending {
        id,
        announce,
        unit: p.unit,
        name: p.name,
        goal: p.goal,
        fresh: p.fresh,
        already: p.already,
        changes: p.changes,
    };
    (Answer::Path(owned_path(&job_path(id))), vec![pending])
}

struct PendingParts {
    unit: String,
    name: String,
    goal: Goal,
    fresh: bool,
    already: Option<&'static str>,
    changes: tokio::sync::broadcast::Receiver<crate::hub::Event>,
}

/// A job on `unit` (flotilla's name; `name` systemd's), a unit the
/// request has just made (a transient one), that ends at the first change
/// of `changes` (subscribed before the request) that reaches `goal`: its
/// state in a later answer may be past that change (a `Type=simple`
/// service is started once forked, and may fail right after: its job is
/// `done`, as systemd's), and the answer and the changes come by separate
/// connections, in no set order.
pub fn job_for(
    hub: &Hub,
    unit: &str,
    name: &str,
    goal: Goal,
    changes: tokio::sync::broadcast::Receiver<crate::hub::Event>,
    kind: &'static str,
) -> Outcome {
    let parts = PendingParts {
        unit: unit.to_string(),
        name: name.to_string(),
        goal,
        fresh: true,
        already: None,
        changes,
    };
    job(hub, parts, kind)
}

/// A job on `name` that is done as soon as it is answered: `JobNew`, then
/// `JobRemoved` with `done` after the method's reply, which `systemctl`
/// waits for (a job ended before the reply is never seen ending).
pub fn done_job(hub: &Hub, name: &str, kind: &'static str) -> Outcome {
    ended_job(hub, name, kind, "done")
}

/// A job on `name` that ended with `result` (`done`, `failed`) before it
/// was answered, announced and ended as [`done_job`]'s.
pub fn ended_job(hub: &Hub, name: &str, kind: &'static str, result: &'static str) -> Outcome {
    let parts = PendingParts {
        unit: name.to_string(),
        name: name.to_string(),
        goal: Goal::Up,
        fresh: false,
        already: Some(result),
        changes: hub.changes(),
    };
    job(hub, parts, kind)
}

/// The stop of `name`, the unit of the mount `e` that no unit of the
/// init's made: unmounted, as systemd stops the unit of any mount of its
/// table; the root's is refused.
pub async fn stop_mount_point(
    hub: &Hub,
    name: &str,
    e: &flotilla_units::mountinfo::MountEntry,
) -> Result<Outcome, BusError> {
    if name == crate::mounted::ROOT {
        return Err(crate::mounted::refused(name));
    }
    let result = match crate::mounted::unmount(e).await {
        Ok(()) => "done",
        Err(why) => {
            eprintln!("flotilla-busd: stop of {name}: {why}");
            "failed"
        }
    };
    Ok(ended_job(hub, name, "stop", result))
}

/// Sends a request that answers `accepted` (or `applied`).
pub(crate) async fn accepted(hub: &Hub, req: Request, what: &str) -> Result<(), BusError> {
    match hub.ask(req).await? {
        Reply::Accepted { .. } | Reply::Applied(_) => Ok(()),
        other => Err(BusError::from_init(&other, what)),
    }
}

/// `StartUnit` (and `Start` on the unit); `at_once` for the job mode
/// `ignore-dependencies`: the unit starts now, not once what it is
/// ordered after or requires is up (docs/dbus.md, "Job modes").
pub async fn start(hub: &Arc<Hub>, name: &str, at_once: bool) -> Result<Outcome, BusError> {
    let changes = hub.changes();
    let s = hub.find(name).await?;
    let (unit, sysname, req, fresh, already) = match s {
        None if flotilla_units::unit_name::is_instance(name) => {
            // Made from its template when it is wanted.
            let req = Request::Want {
                unit: name.to_string(),
            };
            (name.to_string(), name.to_string(), Some(req), false, None)
        }
        None => {
            // Read from the search path when it is wanted, if its file
            // was written since the last reload (a load on demand, as
            // systemd's); else systemd's answer for an unknown unit.
            let req = Request::Want {
                unit: name.to_string(),
            };
            match hub.ask(req).await? {
                Reply::Accepted { .. } | Reply::Applied(_) => {}
                Reply::Error {
                    code: flotilla_units::protocol::ErrorCode::UnknownUnit,
                    ..
                } => return Err(BusError::no_such_unit(name)),
                other => return Err(BusError::from_init(&other, &format!("start {name}"))),
            }
            (name.to_string(), name.to_string(), None, false, None)
        }
        Some(s) if s.masked => return Err(BusError::masked(&systemd_name(&s))),
        Some(s) => {
            let n = systemd_name(&s);
            let u = s.unit.clone();
            if !s.required {
                // A stopped unit wanted changes (a failed one starts
                // anew): its job follows the changes alone, so that a
                // simple service up at its fork is `done` even when its
                // process failed at once after (systemd's job ended at the
                // fork), which its state asked afterwards would not show.
                let fresh = matches!(s.state, UnitState::Disabled | UnitState::Failed);
                (u.clone(), n, Some(Request::Want { unit: u }), fresh, None)
            } else if s.state == UnitState::Failed {
                (u.clone(), n, Some(Request::Restart { unit: u }), true, None)
            } else if s.state == UnitState::Exited && crate::model::shown(&s) != s.state {
                // Ran to its end (a bus-activated daemon that exited when
                // idle) or skipped: inactive to systemd, so a start runs
                // it again.
                (u.clone(), n, Some(Request::Restart { unit: u }), true, None)
            } else if s.state.is_active() {
                (u, n, None, false, Some("done"))
            } else {
                (u, n, None, false, None)
            }
        }
    };
    if hub.stopping_irreversibly(&sysname) {
        return Err(BusError::destructive(&sysname));
    }
    // A unit that waits already (the target requires it) is asked too.
    let req = match (req, at_once) {
        (Some(Request::Want { unit }), true) => Some(Request::StartAtOnce { unit }),
        (None, true) if already.is_none() => Some(Request::StartAtOnce { unit: unit.clone() }),
        (req, _) => req,
    };
    if let Some(req) = req {
        accepted(hub, req, &format!("start {sysname}")).await?;
    }
    // The unit stops, then starts again: a stop asked before ends
    // `canceled`, as systemd's start job replaces it.
    hub.cancel_stop(&sysname);
    let parts = PendingParts {
        unit,
        name: sysname,
        goal: Goal::Up,
        fresh,
        already,
        changes,
    };
    Ok(job(hub, parts, "start"))
}

/// `StopUnit` (and `Stop` on the unit).
pub async fn stop(hub: &Arc<Hub>, name: &str, irreversible: bool) -> Result<Outcome, BusError> {
    let changes = hub.changes();
    let found = hub.find(name).await?;
    // A slice without a directory has no unit below it: stopped already,
    // as systemd's slice without a unit file is loaded and inactive.
    if found.is_none() && name.ends_with(".slice") {
        return Ok(done_job(hub, name, "stop"));
    }
    if found.is_none() {
        if let Some(e) = crate::mounted::find(name) {
            return stop_mount_point(hub, name, &e).await;
        }
    }
    let s = found.ok_or_else(|| BusError::no_such_unit(name))?;
    let sysname = systemd_name(&s);
    if s.source == flotilla_units::protocol::SLICE_SOURCE {
        return stop_slice(hub, &sysname).await;
    }
    // A slice unit: the units in it stop with it (systemd's units in a
    // slice are `Requires=` and `After=` it), then it stops as any unit.
    if s.kind.row().holds_units {
        stop_below(hub, &sysname).await?;
        crate::unit_files::remove_transient(hub, &sysname).await?;
    }
    // The stop is known from before it is asked: the unit's stop command
    // may ask for a start at once, which replaces it (or is refused, for
    // an irreversible stop) though its job is not made yet.
    hub.begin_stop(&sysname, irreversible);
    let already = match ask_stop(hub, &s).await {
        Ok(a) => a,
        Err(e) => {
            hub.release_stop(&sysname);
            return Err(e);
        }
    };
    let parts = PendingParts {
        unit: s.unit,
        name: sysname,
        goal: Goal::Down,
        fresh: false,
        already,
        changes,
    };
    Ok(job(hub, parts, "stop"))
}

/// Asks the init for the stop of `s` as [`stop`] makes it; `Some` when
/// the stop is done already (a unit not required and not stopping).
async fn ask_stop(hub: &Hub, s: &UnitStatus) -> Result<Option<&'static str>, BusError> {
    if s.source == TRANSIENT_SOURCE {
        // A transient service (systemd-run, initctl run) stops by leaving
        // the unit set, as systemd lets a stopped transient unit go.
        match hub
            .ask(Request::StopTransient {
                name: s.unit.clone(),
            })
            .await?
        {
            Reply::Applied(_) => {}
            other => return Err(BusError::from_init(&other, "stop")),
        }
    } else if !s.required {
        if s.state != UnitState::Stopping {
            return Ok(Some("done"));
        }
    } else {
        // The stop by hand: the unit's want is dropped, and a unit the
        // target requires is held stopped until it is started again or the
        // target switches (docs/dbus.md).
        match hub
            .ask(Request::Unwant {
                unit: s.unit.clone(),
            })
            .await?
        {
            Reply::Accepted { .. } => {}
            Reply::Error {
                code: ErrorCode::Refused,
                message,
                ..
            } => {
                return Err(BusError {
                    name: "org.freedesktop.systemd1.OnlyByDependency",
                    message,
                })
            }
            other => return Err(BusError::from_init(&other, "stop")),
        }
    }
    Ok(None)
}

/// The stop of slice `name` (one the init serves from its cgroup
/// directory, flotilla's slices not being units): each unit running
/// below it is stopped and followed to its end, then the slice's job is
/// done, as systemd stops a slice's members with it. A unit is below
/// the slice when its main process's cgroup is.
async fn stop_slice(hub: &Arc<Hub>, name: &str) -> Result<Outcome, BusError> {
    stop_below(hub, name).await?;
    Ok(done_job(hub, name, "stop"))
}

/// Stops the units below the slice `name`, each once its stop is done.
async fn stop_below(hub: &Arc<Hub>, name: &str) -> Result<(), BusError> {
    // A frozen slice is thawed first, so that the units below it get
    // their stop signals (systemd thaws a unit it stops, too).
    if let Some(s) = hub.find(name).await? {
        if !s.freezer.is_running() {
            let thaw = Request::Freeze {
                unit: s.unit,
                thaw: true,
            };
            accepted(hub, thaw, "thaw").await?;
        }
    }
    let below: Vec<String> = hub
        .list()
        .await?
        .iter()
        .filter(|u| {
            crate::props::control_group(u)
                .split('/')
                .rev()
                .skip(1)
                .any(|level| level == name)
        })
        .map(|u| u.unit.clone())
        .collect();
    for unit in below {
        let (_, pending) = Box::pin(stop(hub, &unit, false)).await?;
        for p in pending {
            crate::jobs::follow(Arc::clone(hub), p).await;
        }
    }
    Ok(())
}

/// `RestartUnit` (`TryRestartUnit` with `only_active`: a unit that is not
/// active is left alone).
pub async fn restart(hub: &Arc<Hub>, name: &str, only_active: bool) -> Result<Outcome, BusError> {
    let changes = hub.changes();
    let s = hub
        .find(name)
        .await?
        .ok_or_else(|| BusError::no_such_unit(name))?;
    let sysname = systemd_name(&s);
    if only_active && !s.state.is_active() {
        let parts = PendingParts {
            unit: s.unit,
            name: sysname,
            goal: Goal::Up,
            fresh: false,
            already: Some("done"),
            changes,
        };
        return Ok(job(hub, parts, "restart"));
    }
    if !s.required {
        return start(hub, name, false).await;
    }
    if s.masked {
        return Err(BusError::masked(&sysname));
    }
    accepted(
        hub,
        Request::Restart {
            unit: s.unit.clone(),
        },
        &format!("restart {sysname}"),
    )
    .await?;
    let parts = PendingParts {
        unit: s.unit,
        name: sysname,
        goal: Goal::Up,
        fresh: true,
        already: None,
        changes,
    };
    Ok(job(hub, parts, "restart"))
}

/// `s` once it is neither starting nor reloading, read off `changes`
/// (or as it is after [`crate::jobs::JOB_TIMEOUT`], or when the stream
/// ends).
async fn after_transition(
    hub: &Hub,
    changes: &mut tokio::sync::broadcast::Receiver<crate::hub::Event>,
    mut s: UnitStatus,
) -> UnitStatus {
    use tokio::sync::broadcast::error::RecvError;
    let deadline = tokio::time::Instant::now() + crate::jobs::JOB_TIMEOUT;
    while matches!(s.state, UnitState::Starting | UnitState::Reloading) {
        match tokio::time::timeout_at(deadline, changes.recv()).await {
            Ok(Ok(crate::hub::Event::Changed(c))) if c.unit == s.unit => s = *c,
            Ok(Ok(crate::hub::Event::Changed(_))) => {}
            Ok(Ok(crate::hub::Event::Resync)) | Ok(Err(RecvError::Lagged(_))) => {
                match hub.status(&s.unit).await {
                    Ok(Some(now)) => s = now,
                    _ => return s,
                }
            }
            Err(_) | Ok(Err(RecvError::Closed)) => return s,
        }
    }
    s
}

/// `ReloadUnit`; with `or_restart`, a unit that cannot be reloaded is
/// restarted (`ReloadOrRestartUnit`; with `only_active` too,
/// `ReloadOrTryRestartUnit`).
pub async fn reload(
    hub: &Arc<Hub>,
    name: &str,
    or_restart: bool,
    only_active: bool,
) -> Result<Outcome, BusError> {
    let mut changes = hub.changes();
    let s = hub
        .find(name)
        .await?
        .ok_or_else(|| BusError::no_such_unit(name))?;
    // A reload asked while the unit starts or reloads waits for that to
    // end, as systemd queues the reload job after the running one.
    let s = after_transition(hub, &mut changes, s).await;
    let sysname = systemd_name(&s);
    if !s.state.is_active() {
        if or_restart {
            return restart(hub, name, only_active).await;
        }
        return Err(BusError {
            name: "org.freedesktop.systemd1.UnitInactive",
            message: format!("Unit {sysname} cannot be reloaded because it is inactive."),
        });
    }
    match hub
        .ask(Request::ReloadUnit {
            unit: s.unit.clone(),
        })
        .await?
    {
        Reply::Accepted { .. } => {}
        _ if or_restart => return restart(hub, name, false).await,
        other => return Err(BusError::from_init(&other, &format!("reload {sysname}"))),
    }
    let parts = PendingParts {
        unit: s.unit,
        name: sysname,
        goal: Goal::Reloaded,
        fresh: true,
        already: None,
        changes,
    };
    Ok(job(hub, parts, "reload"))
}
