//! `org.freedesktop.systemd1.Manager`'s methods over the control protocol
//! (`docs/dbus.md` has the table): a method reads its arguments, asks the
//! init, and answers with systemd's types; a unit start, stop, restart or
//! reload is a job (`crate::units_ops`). What flotilla's model cannot do
//! is `NotSupported`, naming what and why.

use crate::answer::{owned_path, Answer, UnitRow};
use crate::error::BusError;
use crate::escape::{job_path, unit_path, MANAGER_PATH};
use crate::hub::Hub;
use crate::model::{self, systemd_name};
use crate::props::MANAGER;
use crate::unit_actions;
use crate::units_ops::{self, Outcome};
use flotilla_units::condition::fnmatch;
use flotilla_units::loglevel::{LogLevel, LogTarget};
use flotilla_units::protocol::{Reply, Request, ShutdownKind, UnitStatus};
use std::sync::Arc;
use zbus::message::Message;
use zbus::zvariant::OwnedValue;

/// The methods that change the system: root only.
pub const MUTATING: &[&str] = &[
    "StartUnit",
    "StopUnit",
    "RestartUnit",
    "ReloadUnit",
    "TryRestartUnit",
    "ReloadOrRestartUnit",
    "ReloadOrTryRestartUnit",
    "EnqueueUnitJob",
    "EnqueueMarkedJobs",
    "KillUnit",
    "ResetFailed",
    "ResetFailedUnit",
    "CleanUnit",
    "BindMountUnit",
    "BindMount",
    "FreezeUnit",
    "ThawUnit",
    "StartTransientUnit",
    "AbandonScope",
    "CancelJob",
    "Reload",
    "Reexecute",
    "PowerOff",
    "Reboot",
    "Halt",
    "EnableUnitFiles",
    "DisableUnitFiles",
    "EnableUnitFilesWithFlags",
    "DisableUnitFilesWithFlags",
    "ReenableUnitFiles",
    "PresetUnitFiles",
    "PresetUnitFilesWithMode",
    "PresetAllUnitFiles",
    "RevertUnitFiles",
    "MaskUnitFiles",
    "UnmaskUnitFiles",
    "SetDefaultTarget",
    "SetUnitProperties",
    "SetEnvironment",
    "UnsetEnvironment",
    "UnsetAndSetEnvironment",
    "AddDependencyUnitFiles",
    "Start",
    "Stop",
    "Restart",
    "TryRestart",
    "ReloadOrRestart",
    "ReloadOrTryRestart",
    "Kill",
    "Clean",
    "Freeze",
    "Thaw",
];

fn args<T>(msg: &Message) -> Result<T, BusError>
where
    T: for<'d> serde::Deserialize<'d> + zbus::zvariant::Type,
{
    msg.body()
        .deserialize::<T>()
        .map_err(|e| BusError::invalid_args(format!("bad arguments: {e}")))
}

fn plain(a: Answer) -> Outcome {
    (a, Vec::new())
}

/// The units, filtered by active or sub state (`states`) and name
/// patterns, as `ListUnits` rows.
async fn list(hub: &Hub, states: &[String], patterns: &[String]) -> Result<Answer, BusError> {
    let units = hub.list().await?;
    let mut rows: Vec<UnitRow> = units
        .iter()
        .map(|s| crate::listed::unit_row(hub, s))
        .collect();
    rows.extend(crate::listed::extra_rows(hub, &units).await?);
    rows.retain(|r| {
        // name, load, active, sub
        (states.is_empty()
            || states
                .iter()
                .any(|st| *st == r.3 || *st == r.4 || *st == r.2))
            && (patterns.is_empty() || patterns.iter().any(|p| fnmatch(p, &r.0)))
    });
    Ok(Answer::Units(rows))
}

/// `Properties.Set` of the manager's `LogLevel` or `LogTarget`
/// (`systemd-analyze log-level debug`): the init's `set-log`. A level is
/// systemd's name or number, a target one of systemd's names.
pub async fn set_log(hub: &Hub, name: &str, value: OwnedValue) -> Result<Outcome, BusError> {
    let text = String::try_from(value)
        .map_err(|e| BusError::invalid_args(format!("{name} takes a string: {e}")))?;
    let req = match name {
        "LogLevel" => Request::SetLog {
            level: Some(LogLevel::parse(&text).map_err(BusError::invalid_args)?),
            target: None,
        },
        _ => Request::SetLog {
            level: None,
            target: Some(LogTarget::parse(&text).map_err(BusError::invalid_args)?),
        },
    };
    match hub.ask(req).await? {
        Reply::Accepted { .. } => Ok(plain(Answer::Empty)),
        other => Err(BusError::from_init(&other, name)),
    }
}

/// `Properties.Set` of the manager's `ServiceWatchdogs`
/// (`systemctl service-watchdogs yes|no`): the init's
/// `set-service-watchdogs`.
pub async fn set_service_watchdogs(hub: &Hub, value: OwnedValue) -> Result<Outcome, BusError> {
    let on = bool::try_from(value)
        .map_err(|e| BusError::invalid_args(format!("ServiceWatchdogs takes a boolean: {e}")))?;
    match hub.ask(Request::SetServiceWatchdogs { on }).await? {
        Reply::Accepted { .. } => Ok(plain(Answer::Empty)),
        other => Err(BusError::from_init(&other, "ServiceWatchdogs")),
    }
}

/// `SetEnvironment`, `UnsetEnvironment`, `UnsetAndSetEnvironment`
/// (`systemctl set-environment`, `unset-environment`,
/// `import-environment`): the init's `set-environment`, whose refusal of
/// a bad name is `InvalidArgs`, as systemd's.
async fn set_environment(
    hub: &Hub,
    unset: Vec<String>,
    set: Vec<String>,
) -> Result<Outcome, BusError> {
    match hub.ask(Request::SetEnvironment { unset, set }).await? {
        Reply::Accepted { .. } => Ok(plain(Answer::Empty)),
        other => Err(BusError::from_init(&other, "set-environment")),
    }
}

async fn shutdown(hub: &Hub, kind: ShutdownKind) -> Result<Outcome, BusError> {
    match hub.ask(Request::Shutdown { kind }).await? {
        Reply::Accepted { .. } => Ok(plain(Answer::Empty)),
        other => Err(BusError::from_init(&other, "shutdown")),
    }
}

/// `MaskUnitFiles` / `UnmaskUnitFiles`: for a unit file's name, the links
/// systemd makes (`unit_files::mask`); for a YAML unit (named without a
/// suffix, reached by its systemd name), the protocol's `mask` and
/// `unmask`, as `initctl mask` does. An unmask also drops a mask the init
/// keeps in its own state.
async fn mask(hub: &Hub, msg: &Message, on: bool) -> Result<Outcome, BusError> {
    let (names, runtime) = if on {
        let (names, runtime, _force) = args::<(Vec<String>, bool, bool)>(msg)?;
        (names, runtime)
    } else {
        args::<(Vec<String>, bool)>(msg)?
    };
    let mut files = Vec::new();
    for n in names {
        let known = hub.find(&n).await?;
        match known {
            // A YAML unit: no file of that name to link.
            Some(s) if s.unit != n => state_mask(hub, s.unit, on).await?,
            Some(s) if !on && s.masked => {
                // Masked in the init's state maybe (an earlier `initctl
                // mask`): its own unmask; a link is removed below.
                let _ = hub.ask(Request::Unmask { unit: s.unit }).await;
                files.push(n);
            }
            _ => files.push(n),
        }
    }
    Ok(plain(
        crate::unit_files::mask(hub, &files, on, runtime).await?,
    ))
}

/// The init's own mask of a unit (`mask`, `unmask`).
async fn state_mask(hub: &Hub, unit: String, on: bool) -> Result<(), BusError> {
    let req = if on {
        Request::Mask { unit }
    } else {
        Request::Unmask { unit }
    };
    crate::units_ops::accepted(hub, req, "mask").await
}

/// Answers a `Manager` method.
pub async fn call(hub: &Arc<Hub>, member: &str, msg: &Message) -> Result<Outcome, BusError> {
    let a = |x: Answer| Ok(plain(x));
    match member {
        "GetUnit" => {
            let (name,): (String,) = args(msg)?;
            match hub.find(&name).await? {
                Some(s) => a(Answer::Path(owned_path(&unit_path(&systemd_name(&s))))),
                // A mount point's unit, which systemd always has loaded.
                None if crate::mounted::find(&name).is_some() => {
                    a(Answer::Path(owned_path(&unit_path(&name))))
                }
                None => Err(BusError {
                    name: "org.freedesktop.systemd1.NoSuchUnit",
                    message: format!("Unit {name} not loaded."),
                }),
            }
        }
        "LoadUnit" => {
            let (name,): (String,) = args(msg)?;
            let path = match hub.find_or_load(&name).await? {
                Some(s) => unit_path(&systemd_name(&s)),
                None => unit_path(&name),
            };
            a(Answer::Path(owned_path(&path)))
        }
        "GetUnitByPID" => {
            let (pid,): (u32,) = args(msg)?;
            let pid = i32::try_from(pid).unwrap_or(0);
            match unit_of_pid(hub, pid).await {
                Some(s) => a(Answer::Path(owned_path(&unit_path(&systemd_name(&s))))),
                None => Err(BusError {
                    name: "org.freedesktop.systemd1.NoUnitForPID",
                    message: format!("PID {pid} does not belong to any loaded unit."),
                }),
            }
        }
        "ListUnits" => a(list(hub, &[], &[]).await?),
        "ListUnitsFiltered" => {
            let (states,): (Vec<String>,) = args(msg)?;
            a(list(hub, &states, &[]).await?)
        }
        "ListUnitsByPatterns" => {
            let (states, patterns): (Vec<String>, Vec<String>) = args(msg)?;
            a(list(hub, &states, &patterns).await?)
        }
        "ListUnitsByNames" => {
            let (names,): (Vec<String>,) = args(msg)?;
            let mut rows = Vec::new();
            for n in names {
                if let Some(r) = crate::listed::row_by_name(hub, &n).await? {
                    rows.push(r);
                }
            }
            a(Answer::Units(rows))
        }
        "StartUnit"
        | "StopUnit"
        | "RestartUnit"
        | "ReloadUnit"
        | "TryRestartUnit"
        | "ReloadOrRestartUnit"
        | "ReloadOrTryRestartUnit" => {
            let (name, mode): (String, String) = args(msg)?;
            unit_job(hub, member.trim_end_matches("Unit"), &name, &mode).await
        }
        "EnqueueUnitJob" => {
            let (name, kind, mode): (String, String, String) = args(msg)?;
            enqueue(hub, &name, &kind, &mode).await
        }
        "EnqueueMarkedJobs" => enqueue_marked(hub).await,
        "ResetFailed" => reset_failed(hub, None).await,
        "ResetFailedUnit" => {
            let (name,): (String,) = args(msg)?;
            reset_failed_unit(hub, &name).await
        }
        "CleanUnit" => {
            let (name, what): (String, Vec<String>) = args(msg)?;
            unit_actions::clean(hub, &name, what).await
        }
        "BindMountUnit" => {
            let (name, source, destination, read_only, mkdir): (
                String,
                String,
                String,
                bool,
                bool,
            ) = args(msg)?;
            unit_actions::bind_mount(hub, &name, source, destination, read_only, mkdir).await
        }
        "FreezeUnit" | "ThawUnit" => {
            let (name,): (String,) = args(msg)?;
            unit_actions::freeze(hub, &name, member == "ThawUnit").await
        }
        "RefUnit" | "UnrefUnit" => {
            let (name,): (String,) = args(msg)?;
            unit_actions::reference(hub, &name).await
        }
        "AbandonScope" => {
            let (name,): (String,) = args(msg)?;
            unit_actions::abandon_scope(hub, &name).await
        }
        "KillUnit" => {
            let (name, whom, signal): (String, String, i32) = args(msg)?;
            unit_actions::kill(hub, &name, &whom, signal).await
        }
        "GetUnitProcesses" => {
            let (name,): (String,) = args(msg)?;
            // The root slice is every process (`systemctl status` of the
            // system asks for it).
            if name == "-.slice" {
                return a(Answer::Processes(crate::procs::processes("/")));
            }
            let s = hub
                .find(&name)
                .await?
                .ok_or_else(|| BusError::no_such_unit(&name))?;
            let cg = crate::props::control_group(&s);
            let procs = if cg.is_empty() {
                Vec::new()
            } else {
                crate::procs::processes(&cg)
            };
            a(Answer::Processes(procs))
        }
        "GetJob" => {
            let (id,): (u32,) = args(msg)?;
            match hub.job(id) {
                Some(_) => a(Answer::Path(owned_path(&job_path(id)))),
                None => Err(BusError::no_such_job(id)),
            }
        }
        "ListJobs" => {
            let rows = hub
                .jobs()
                .into_iter()
                .map(|(id, j)| {
                    (
                        id,
                        j.unit.clone(),
                        j.kind.to_string(),
                        j.state().to_string(),
                        owned_path(&job_path(id)),
                        owned_path(&unit_path(&j.unit)),
                    )
                })
                .collect();
            a(Answer::Jobs(rows))
        }
        // On the peer-to-peer socket every connection gets the signals.
        "Subscribe" | "Unsubscribe" => a(Answer::Empty),
        "Reload" => {
            hub.emit(MANAGER_PATH, MANAGER, "Reloading", &(true,));
            // systemd's daemon-reload restarts nothing (docs/dbus.md).
            let r = hub.ask(Request::Reload { keep_running: true }).await;
            hub.emit(MANAGER_PATH, MANAGER, "Reloading", &(false,));
            match r? {
                Reply::Applied(_) => a(Answer::Empty),
                other => Err(BusError::from_init(&other, "reload")),
            }
        }
        "Reexecute" => match hub.ask(Request::Reexec).await? {
            Reply::Accepted { .. } => a(Answer::Empty),
            other => Err(BusError::from_init(&other, "reexec")),
        },
        "PowerOff" => shutdown(hub, ShutdownKind::Poweroff).await,
        "Reboot" => shutdown(hub, ShutdownKind::Reboot).await,
        "Halt" => shutdown(hub, ShutdownKind::Halt).await,
        "GetUnitFileState" => {
            let (name,): (String,) = args(msg)?;
            a(crate::unit_files::get_state(hub, &name).await?)
        }
        "GetUnitFileLinks" => {
            let (name, runtime): (String, bool) = args(msg)?;
            a(crate::unit_files::links(hub, &name, runtime).await?)
        }
        "ListUnitFiles" => a(crate::unit_files::list(hub, &[], &[]).await?),
        "ListUnitFilesByPatterns" => {
            let (states, patterns): (Vec<String>, Vec<String>) = args(msg)?;
            a(crate::unit_files::list(hub, &states, &patterns).await?)
        }
        "EnableUnitFiles" => {
            let (names, runtime, _force): (Vec<String>, bool, bool) = args(msg)?;
            a(crate::unit_files::enable(hub, &names, true, runtime).await?)
        }
        "DisableUnitFiles" => {
            let (names, runtime): (Vec<String>, bool) = args(msg)?;
            a(crate::unit_files::enable(hub, &names, false, runtime).await?)
        }
        "EnableUnitFilesWithFlags" | "DisableUnitFilesWithFlags" => {
            let (names, flags): (Vec<String>, u64) = args(msg)?;
            // systemd's UNIT_FILE_RUNTIME is bit 0.
            let on = member.starts_with("Enable");
            a(crate::unit_files::enable(hub, &names, on, flags & 1 != 0).await?)
        }
        "ReenableUnitFiles" => {
            let (names, runtime, _force): (Vec<String>, bool, bool) = args(msg)?;
            a(crate::unit_files::reenable(hub, &names, runtime).await?)
        }
        "PresetUnitFiles" => {
            let (names, runtime, _force): (Vec<String>, bool, bool) = args(msg)?;
            a(crate::unit_files::preset(hub, Some(&names), "full", runtime).await?)
        }
        "PresetUnitFilesWithMode" => {
            let (names, mode, runtime, _force): (Vec<String>, String, bool, bool) = args(msg)?;
            a(crate::unit_files::preset(hub, Some(&names), &mode, runtime).await?)
        }
        "RevertUnitFiles" => {
            let (names,): (Vec<String>,) = args(msg)?;
            a(crate::unit_files::revert(hub, &names).await?)
        }
        "PresetAllUnitFiles" => {
            let (mode, runtime, _force): (String, bool, bool) = args(msg)?;
            match crate::unit_files::preset(hub, None, &mode, runtime).await? {
                Answer::Enabled(_, changes) => a(Answer::Changes(changes)),
                other => a(other),
            }
        }
        "StartTransientUnit" => crate::transient::start(hub, msg).await,
        "MaskUnitFiles" => mask(hub, msg, true).await,
        "UnmaskUnitFiles" => mask(hub, msg, false).await,
        "AddDependencyUnitFiles" => {
            let (files, target, kind, runtime, _force): (Vec<String>, String, String, bool, bool) =
                args(msg)?;
            a(crate::unit_files::add_dependency(hub, &files, &target, &kind, runtime).await?)
        }
        "SetEnvironment" => {
            let (set,): (Vec<String>,) = args(msg)?;
            set_environment(hub, Vec::new(), set).await
        }
        "UnsetEnvironment" => {
            let (unset,): (Vec<String>,) = args(msg)?;
            set_environment(hub, unset, Vec::new()).await
        }
        "UnsetAndSetEnvironment" => {
            let (unset, set): (Vec<String>, Vec<String>) = args(msg)?;
            set_environment(hub, unset, set).await
        }
        "SetUnitProperties" => {
            let (name, runtime, props): (String, bool, crate::transient::Props) = args(msg)?;
            a(crate::set_property::set(hub, &name, runtime, props).await?)
        }
        "SetDefaultTarget" => {
            let (name, force): (String, bool) = args(msg)?;
            if hub.system().await?.target != BOOTS_DEFAULT {
                return Err(unmapped(member));
            }
            a(crate::unit_files::set_default(hub, &name, force).await?)
        }
        "GetDefaultTarget" => {
            let t = hub.system().await?.target;
            if t == BOOTS_DEFAULT {
                return a(crate::unit_files::default_target(hub).await?);
            }
            let t = if model::has_suffix(&t) {
                t
            } else {
                format!("{t}.target")
            };
            a(Answer::Str(t))
        }
        other => Err(unmapped(other)),
    }
}

/// Start, stop, restart or reload of a unit by name (`mode` is systemd's
/// job mode: `replace`, `fail`, `isolate`, …; flotilla has one way to do
/// each, but `isolate`, which is `SetTarget`'s business, and a start with
/// `ignore-dependencies`, which starts the unit at once).
pub async fn unit_job(
    hub: &Arc<Hub>,
    verb: &str,
    name: &str,
    mode: &str,
) -> Result<Outcome, BusError> {
    if let (Some(kind), "Start") = (shutdown_target(name), verb) {
        return shutdown_job(hub, name, kind).await;
    }
    if mode == "isolate" {
        return isolate(hub, name).await;
    }
    match verb {
        "Start" => units_ops::start(hub, name, mode == "ignore-dependencies").await,
        "Stop" => units_ops::stop(hub, name, mode == "replace-irreversibly").await,
        "Restart" => units_ops::restart(hub, name, false).await,
        "TryRestart" => units_ops::restart(hub, name, true).await,
        "Reload" => units_ops::reload(hub, name, false, false).await,
        "ReloadOrRestart" => units_ops::reload(hub, name, true, false).await,
        "ReloadOrTryRestart" => units_ops::reload(hub, name, true, true).await,
        other => Err(unmapped(other)),
    }
}

/// `EnqueueUnitJob` (what `systemctl --show-transaction` calls): the job
/// of `kind` (systemd's job type) as the `…Unit` method of that verb makes
/// it, answered with the job, its unit and type; flotilla's jobs are one
/// per call, so the transaction lists no other job.
async fn enqueue(hub: &Arc<Hub>, name: &str, kind: &str, mode: &str) -> Result<Outcome, BusError> {
    let verb = job_verb(kind).ok_or_else(|| BusError {
        name: "org.freedesktop.DBus.Error.InvalidArgs",
        message: format!("Job type {kind} invalid."),
    })?;
    let (answer, pending) = unit_job(hub, verb, name, mode).await?;
    let Answer::Path(job) = answer else {
        return Ok((answer, pending));
    };
    let id = pending.first().map_or(0, |p| p.id);
    let unit = pending
        .first()
        .map_or_else(|| name.to_string(), |p| p.name.clone());
    let unit_obj = owned_path(&unit_path(&unit));
    let enqueued = (id, job, unit, unit_obj, kind.to_string(), Vec::new());
    Ok((Answer::Enqueued(enqueued), pending))
}

/// `EnqueueMarkedJobs` (`systemctl reload-or-restart --marked`): for each
/// unit with markers ([`crate::markers::job`]), a try-restart, or a
/// reload-or-try-restart for `needs-reload` alone, as systemd's; the
/// jobs' paths, which `systemctl` waits for. The restart or reload clears
/// the markers (`crate::markers::after`). A unit whose job cannot be made
/// fails the call, naming it, and the others' jobs go on, as systemd's.
async fn enqueue_marked(hub: &Arc<Hub>) -> Result<Outcome, BusError> {
    let mut paths = Vec::new();
    let mut jobs = Vec::new();
    let mut failed = Vec::new();
    for (unit, m) in hub.marked() {
        let Some(verb) = crate::markers::job(m) else {
            continue;
        };
        // A unit gone from the set since is no longer marked (systemd's
        // markers go with its unit).
        if hub.find(&unit).await?.is_none() {
            hub.set_markers(&unit, 0);
            continue;
        }
        match unit_job(hub, verb, &unit, "fail").await {
            Ok((answer, pending)) => {
                if let Answer::Path(p) = answer {
                    paths.push(p);
                }
                jobs.extend(pending);
            }
            Err(e) => failed.push(format!("{unit}: {}", e.message)),
        }
    }
    if failed.is_empty() {
        return Ok((Answer::Paths(paths), jobs));
    }
    // Nobody waits for them, but they end as any job does.
    for p in jobs {
        tokio::spawn(crate::jobs::follow(hub.clone(), p));
    }
    Err(BusError::failed(format!(
        "Failed to enqueue some jobs: {}",
        failed.join("; ")
    )))
}

/// The `…Unit` method's verb of systemd's job type (`job_type_from_string`'s
/// names, as `systemctl` sends them).
fn job_verb(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "start" | "verify-active" => "Start",
        "stop" => "Stop",
        "restart" => "Restart",
        "try-restart" => "TryRestart",
        "reload" => "Reload",
        "reload-or-start" | "reload-or-restart" => "ReloadOrRestart",
        "try-reload" | "reload-or-try-restart" => "ReloadOrTryRestart",
        _ => return None,
    })
}

/// `ResetFailedUnit` (and `ResetFailed` on the unit): the init's
/// `reset-failed` of the unit `name` (systemd's name or flotilla's).
pub async fn reset_failed_unit(hub: &Arc<Hub>, name: &str) -> Result<Outcome, BusError> {
    let s = hub
        .find(name)
        .await?
        .ok_or_else(|| BusError::no_such_unit(name))?;
    reset_failed(hub, Some(s.unit)).await
}

/// The unit process `pid` belongs to: the one it is the main process
/// of, else the one whose cgroup it is in ([`unit_of_cgroup`]).
pub async fn unit_of_pid(hub: &Hub, pid: i32) -> Option<UnitStatus> {
    if pid <= 0 {
        return None;
    }
    let units = hub.list().await.ok()?;
    if let Some(s) = units.iter().find(|s| s.pid == Some(pid)) {
        return Some(s.clone());
    }
    let cgroup = crate::procs::cgroup_of(pid)?;
    unit_of_cgroup(&cgroup, &units).cloned()
}

/// The running unit whose cgroup holds `cgroup` (flotilla names each
/// unit's cgroup after the unit): the outermost part of the path that
/// names one, so that a process in a cgroup below a delegated unit's own
/// (its manager's `init.scope`, the user's services of
/// `user@UID.service`) is that unit's, as systemd finds it, even where a
/// cgroup down there has the name of a unit of the init's.
fn unit_of_cgroup<'a>(cgroup: &str, units: &'a [UnitStatus]) -> Option<&'a UnitStatus> {
    cgroup.split('/').find_map(|part| {
        units
            .iter()
            .find(|s| s.pid.is_some() && (s.unit == part || systemd_name(s) == part))
    })
}

/// `ResetFailed`: the init's `reset-failed` of `unit`, or of every unit.
async fn reset_failed(hub: &Arc<Hub>, unit: Option<String>) -> Result<Outcome, BusError> {
    match hub.ask(Request::ResetFailed { unit }).await? {
        Reply::Accepted { .. } => Ok((Answer::Empty, Vec::new())),
        other => Err(BusError::from_init(&other, "reset-failed")),
    }
}

/// systemd's targets whose start is the system's shutdown, and its kind.
/// Debian's `poweroff`, `reboot` and `halt` (systemctl) ask for them when
/// logind does not answer (`StartUnit("poweroff.target",
/// "replace-irreversibly")`), as does `systemctl start reboot.target`;
/// under systemd the job pulls in `systemd-poweroff.service`, which asks
/// the manager for `PowerOff`. flotilla's shutdown is the init's own
/// (`docs/pid1.md`), so the start asks for it directly.
fn shutdown_target(name: &str) -> Option<ShutdownKind> {
    match name {
        "poweroff.target" => Some(ShutdownKind::Poweroff),
        // Debian links ctrl-alt-del.target to reboot.target.
        "reboot.target" | "ctrl-alt-del.target" => Some(ShutdownKind::Reboot),
        "halt.target" => Some(ShutdownKind::Halt),
        _ => None,
    }
}

/// The start of a shutdown target: the shutdown, answered with a job that
/// is done once the init has taken it (the system is on its way down).
async fn shutdown_job(hub: &Hub, name: &str, kind: ShutdownKind) -> Result<Outcome, BusError> {
    shutdown(hub, kind).await?;
    Ok(crate::units_ops::done_job(hub, name, "start"))
}

/// `StartUnit(TARGET, "isolate")`: the protocol's `set-target` with
/// `isolate`, refused unless the target's unit allows it.
async fn isolate(hub: &Arc<Hub>, name: &str) -> Result<Outcome, BusError> {
    let target = name.strip_suffix(".target").unwrap_or(name).to_string();
    let req = Request::SetTarget {
        target: name.to_string(),
        wait: false,
        isolate: true,
    };
    let reply = match hub.ask(req).await? {
        Reply::Error { .. } => {
            hub.ask(Request::SetTarget {
                target,
                wait: false,
                isolate: true,
            })
            .await?
        }
        r => r,
    };
    match reply {
        // The switch is under way; its end is not followed as a job yet:
        // the job is done once answered.
        Reply::Accepted { .. } => Ok(crate::units_ops::done_job(hub, name, "start")),
        other => Err(BusError::from_init(&other, "isolate")),
    }
}

/// The init's target when it boots what the `default.target` link names
/// (Debian's config): only then is that link the default target.
const BOOTS_DEFAULT: &str = "default.target";

/// Why each method flotilla does not map is not mapped.
pub fn unmapped(member: &str) -> BusError {
    let why = match member {
        "CancelJob" => "a job is the unit's own settling, which cannot be called back",
        "SetDefaultTarget" => {
            "the init boots the target its config names (initctl set-target changes it), not default.target"
        }
        _ => "this method is not part of what flotilla serves",
    };
    BusError::not_supported(member, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// systemctl's patterns, as `ListUnitsByPatterns` and
    /// `ListUnitFilesByPatterns` match them (fnmatch(3), as systemd).
    /// The targets whose start is a shutdown, and no other.
    #[test]
    fn shutdown_targets() {
        let kind = shutdown_target;
        assert_eq!(kind("poweroff.target"), Some(ShutdownKind::Poweroff));
        assert_eq!(kind("ctrl-alt-del.target"), Some(ShutdownKind::Reboot));
        assert_eq!(kind("halt.target"), Some(ShutdownKind::Halt));
        for other in [
            "multi-user.target",
            "poweroff",
            "kexec.target",
            "shutdown.target",
        ] {
            assert!(shutdown_target(other).is_none(), "{other}");
        }
    }

    /// A process below a delegated unit's cgroup is that unit's, even in
    /// a cgroup named like another unit of the init's.
    #[test]
    fn a_cgroup_belongs_to_the_outermost_unit_on_its_path() {
        let unit = |name: &str, pid: Option<i32>| UnitStatus {
            unit: name.to_string(),
            pid,
            ..UnitStatus::default()
        };
        let units = [
            unit("user@4711.service", Some(300)),
            unit("dbus.service", Some(200)),
            unit("gone.service", None),
        ];
        let of = |cg: &str| unit_of_cgroup(cg, &units).map(|s| s.unit.as_str());
        let home = "/user.slice/user-4711.slice/user@4711.service";
        assert_eq!(of(home), Some("user@4711.service"));
        assert_eq!(of(&format!("{home}/init.scope")), Some("user@4711.service"));
        assert_eq!(
            of(&format!("{home}/app.slice/dbus.service")),
            Some("user@4711.service")
        );
        assert_eq!(of("/system.slice/dbus.service"), Some("dbus.service"));
        assert_eq!(of("/system.slice/gone.service"), None);
        assert_eq!(of("/"), None);
    }

    #[test]
    fn globs() {
        assert!(fnmatch("*.service", "cron.service"));
        assert!(fnmatch("cron*", "cron.service"));
        assert!(fnmatch("c?on.service", "cron.service"));
        assert!(fnmatch("[bc]ron.service", "cron.service"));
        assert!(!fnmatch("*.timer", "cron.service"));
        assert!(fnmatch("cron.service", "cron.service"));
        assert!(!fnmatch("cron", "cron.service"));
    }

    /// The init's refusals of a freeze, in systemd's error names; where
    /// the cgroup has no freezer, `NotSupported` with the init's reason.
    #[test]
    fn unmapped_methods_say_why() {
        let e = unmapped("SetDefaultTarget");
        assert!(e.message.contains("initctl set-target"), "{}", e.message);
        let e = unmapped("CancelJob");
        assert_eq!(e.name, "org.freedesktop.DBus.Error.NotSupported");
        assert!(
            e.message
                .starts_with("CancelJob is not supported by flotilla: "),
            "{}",
            e.message
        );
    }
}
