//! What busd asks the init of one unit besides a job
//! (`crate::units_ops`): a signal to its processes (`KillUnit`), the
//! removal of its directories (`CleanUnit`), a bind into its mount
//! namespace (`BindMountUnit`), a freeze or thaw
//! (`FreezeUnit`, `ThawUnit`), and the methods that only check the unit
//! (`AbandonScope`, `RefUnit`). Each is the same for the Manager's method
//! and the unit's own (`docs/dbus.md`).

use crate::answer::Answer;
use crate::error::BusError;
use crate::hub::Hub;
use crate::model;
use crate::units_ops::Outcome;
use flotilla_units::protocol::{Reply, Request};
use std::sync::Arc;

/// `AbandonScope` (logind's at a logout that leaves the user's processes
/// running): systemd stops calling the scope's controller, and the scope
/// lasts until its last process ends, which is how flotilla's scopes
/// always last; so an active scope is answered, anything else refused as
/// systemd refuses it.
pub async fn abandon_scope(hub: &Arc<Hub>, name: &str) -> Result<Outcome, BusError> {
    let s = hub
        .find(name)
        .await?
        .ok_or_else(|| BusError::no_such_unit(name))?;
    if !s.kind.row().adopts() {
        return Err(BusError {
            name: "org.freedesktop.systemd1.NotOfType",
            message: format!("Unit {name} is not a scope."),
        });
    }
    if !s.state.is_active() {
        return Err(BusError {
            name: "org.freedesktop.systemd1.ScopeNotRunning",
            message: format!("Scope {name} is not running, cannot abandon."),
        });
    }
    Ok((Answer::Empty, Vec::new()))
}

/// `BindMountUnit` (and `BindMount` on the service, `systemctl bind`): the
/// init's `bind-mount` into the unit's mount namespace, answered once the
/// mount is made; refused with systemd's `InvalidArgs` and its words (a
/// path not absolute and normal, a destination under one of the unit's
/// `InaccessiblePaths=`, a unit with no namespace of its own or not
/// running), a mount the kernel refuses as `Failed` with its error.
pub async fn bind_mount(
    hub: &Arc<Hub>,
    name: &str,
    source: String,
    destination: String,
    read_only: bool,
    mkdir: bool,
) -> Result<Outcome, BusError> {
    let s = hub
        .find(name)
        .await?
        .ok_or_else(|| BusError::no_such_unit(name))?;
    let asked = Request::BindMount {
        unit: s.unit,
        source,
        destination,
        read_only,
        mkdir,
    };
    match hub.ask(asked).await? {
        Reply::Accepted { .. } => Ok((Answer::Empty, Vec::new())),
        other => Err(BusError::from_init(&other, "bind")),
    }
}

/// `CleanUnit` (and `Clean` on the unit, `systemctl clean`): the init's
/// `clean` of the unit, answered once its directories are gone; refused
/// with systemd's errors (`UnitBusy` unless the unit is down,
/// `NothingToClean`, `NotSupported` for a unit with nothing to clean by
/// type, `InvalidArgs` for a word that is no resource).
pub async fn clean(hub: &Arc<Hub>, name: &str, what: Vec<String>) -> Result<Outcome, BusError> {
    let s = hub
        .find(name)
        .await?
        .ok_or_else(|| BusError::no_such_unit(name))?;
    match hub.ask(Request::Clean { unit: s.unit, what }).await? {
        Reply::Accepted { .. } => Ok((Answer::Empty, Vec::new())),
        Reply::Error {
            code: flotilla_units::protocol::ErrorCode::NotPossible,
            message,
            ..
        } => Err(BusError {
            name: clean_error(&message),
            message,
        }),
        other => Err(BusError::from_init(&other, "clean")),
    }
}

/// `FreezeUnit`/`ThawUnit` (and `Freeze`/`Thaw` on the unit, `systemctl
/// freeze`/`thaw`): the init's `freeze` of the unit or slice, answered
/// once the kernel says it is done (at once when it was already), as
/// systemd answers when its freezer job completes. Where the unit's
/// cgroup has no freezer (a hybrid host, a container given no cgroup of
/// its own): `NotSupported`, naming why.
pub async fn freeze(hub: &Arc<Hub>, name: &str, thaw: bool) -> Result<Outcome, BusError> {
    let s = hub
        .find(name)
        .await?
        .ok_or_else(|| BusError::no_such_unit(name))?;
    let what = if thaw { "ThawUnit" } else { "FreezeUnit" };
    if !model::freezable(&s) {
        return Err(BusError {
            name: "org.freedesktop.DBus.Error.NotSupported",
            message: format!("Unit '{name}' does not support freezing."),
        });
    }
    match hub.ask(Request::Freeze { unit: s.unit, thaw }).await? {
        Reply::Accepted { .. } => Ok((Answer::Empty, Vec::new())),
        Reply::Error {
            code: flotilla_units::protocol::ErrorCode::NotPossible,
            message,
            ..
        } => Err(BusError {
            name: freeze_error(&message),
            message,
        }),
        other => Err(BusError::from_init(&other, what)),
    }
}

/// systemd's error name of the init's refusal of a freeze, by its message
/// (`init/src/runtime/freezer.rs` words it as systemd does).
fn freeze_error(message: &str) -> &'static str {
    if message.contains("still in progress") {
        "org.freedesktop.systemd1.UnitBusy"
    } else if message.ends_with("is inactive.") || message.contains("no unit runs in the slice") {
        "org.freedesktop.systemd1.UnitInactive"
    } else {
        "org.freedesktop.DBus.Error.NotSupported"
    }
}

/// systemd's error name of the init's refusal of a clean, by its message
/// (`units/src/context/clean.rs` words it as systemd does).
fn clean_error(message: &str) -> &'static str {
    use flotilla_units::context::clean::Refusal;
    if message == Refusal::Busy.message() {
        "org.freedesktop.systemd1.UnitBusy"
    } else if message == Refusal::NothingToClean.message() {
        "org.freedesktop.systemd1.NothingToClean"
    } else {
        "org.freedesktop.DBus.Error.NotSupported"
    }
}

/// `RefUnit`/`UnrefUnit` (and `Ref`/`Unref` on the unit): systemd keeps
/// a unit a client references loaded (systemctl references the unit it
/// waits for); flotilla never unloads a unit a client could watch, so a
/// reference is only checked to name a unit.
pub async fn reference(hub: &Arc<Hub>, name: &str) -> Result<Outcome, BusError> {
    hub.find(name)
        .await?
        .ok_or_else(|| BusError::no_such_unit(name))?;
    Ok((Answer::Empty, Vec::new()))
}

/// `KillUnit` (and `Kill` on the unit): `signal` to the unit's processes,
/// `whom` in systemd's words: `all` (and empty, systemctl's default) every
/// process of the unit, `main` its main process; flotilla tells no control
/// process apart (`control`, `main-fail` …: refused).
pub async fn kill(
    hub: &Arc<Hub>,
    name: &str,
    whom: &str,
    signal: i32,
) -> Result<Outcome, BusError> {
    let main_only = match whom {
        "" | "all" | "all-fail" => false,
        "main" => true,
        other => {
            return Err(BusError::not_supported(
                "KillUnit",
                &format!(
                    "whom `{other}`: flotilla tells no control process apart from the unit's \
                     others; use `main` or `all`"
                ),
            ))
        }
    };
    let s = hub
        .find(name)
        .await?
        .ok_or_else(|| BusError::no_such_unit(name))?;
    match hub
        .ask(Request::KillUnit {
            unit: s.unit.clone(),
            signal,
            main_only,
        })
        .await?
    {
        Reply::Accepted { .. } => Ok((Answer::Empty, Vec::new())),
        other => Err(BusError::from_init(
            &other,
            &format!("kill {}", model::systemd_name(&s)),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freeze_refusals_are_systemds_errors() {
        let table = [
            (
                "Previously requested freezer operation for unit 'a.service' is still in progress.",
                "org.freedesktop.systemd1.UnitBusy",
            ),
            (
                "Unit a.service is inactive.",
                "org.freedesktop.systemd1.UnitInactive",
            ),
            (
                "bar.slice: no unit runs in the slice (it has no cgroup)",
                "org.freedesktop.systemd1.UnitInactive",
            ),
            (
                "a.service: its cgroup /sys/fs/cgroup/unified/a.service has no cgroup v2 freezer \
                 (cgroup.freeze)",
                "org.freedesktop.DBus.Error.NotSupported",
            ),
            (
                "a.service has no cgroup of its own (the init was given none): nothing to freeze",
                "org.freedesktop.DBus.Error.NotSupported",
            ),
        ];
        for (message, name) in table {
            assert_eq!(freeze_error(message), name, "{message}");
        }
    }
}
