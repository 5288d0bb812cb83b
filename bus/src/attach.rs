//! `AttachProcessesToUnit(s unit, s subcgroup, au pids)`: processes moved
//! into a running delegated unit's cgroup, or a cgroup below it, as
//! systemd's. Its caller is mostly a delegated unit's own manager (Debian's
//! `systemd --user` in `user@UID.service`, for `systemd-run --scope
//! --user`), who names no unit (its own) and cannot move a process of
//! its user's across the tree itself. Any user may call it: the init
//! judges each process against the caller's user
//! (`units/src/attach.rs`), so this side only says who asks, resolves the
//! caller's own unit and PID 0 (the caller), and turns the init's refusals
//! into systemd's errors.

use crate::answer::Answer;
use crate::error::BusError;
use crate::hub::Hub;
use crate::units_ops::Outcome;
use flotilla_units::protocol::{ErrorCode, Reply, Request};
use std::sync::Arc;

/// Who calls: the user and the process, as the bus or the socket's peer
/// credentials say (`None`: not known).
#[derive(Debug, Clone, Copy)]
pub struct Who {
    /// The caller's user.
    pub uid: Option<u32>,
    /// The caller's process.
    pub pid: Option<i32>,
}

/// The Manager's `AttachProcessesToUnit`.
pub async fn attach_to_unit(
    hub: &Arc<Hub>,
    who: Who,
    (name, subcgroup, pids): (String, String, Vec<u32>),
) -> Result<Outcome, BusError> {
    let unit = if name.is_empty() {
        // The caller's own unit, as systemd takes an empty name.
        let pid = who.pid.unwrap_or(0);
        crate::manager::unit_of_pid(hub, pid)
            .await
            .ok_or_else(|| BusError {
                name: "org.freedesktop.systemd1.NoSuchUnit",
                message: "Client not member of any unit.".to_string(),
            })?
    } else {
        hub.find(&name).await?.ok_or_else(|| BusError {
            name: "org.freedesktop.systemd1.NoSuchUnit",
            message: format!("Unit {name} not loaded."),
        })?
    };
    let caller = who.pid.and_then(|p| u32::try_from(p).ok()).unwrap_or(0);
    let pids = pids
        .into_iter()
        .map(|p| if p == 0 { caller } else { p })
        .collect();
    let req = Request::Attach {
        unit: unit.unit,
        subcgroup,
        pids,
        // Not known: judged as a user that owns nothing.
        uid: who.uid.unwrap_or(u32::MAX),
    };
    let reply = hub.ask(req).await?;
    match reply {
        Reply::Accepted { .. } => Ok((Answer::Empty, Vec::new())),
        other => Err(error(&other)),
    }
}

/// systemd's error for the init's refusal: by its code, as
/// `units/src/attach.rs` gives them (`not-possible` is a process that
/// does not exist, `failed` a move the kernel refused).
fn error(reply: &Reply) -> BusError {
    match reply {
        Reply::Error {
            code: ErrorCode::NotPossible,
            message,
            ..
        } => BusError {
            name: "org.freedesktop.DBus.Error.UnixProcessIdUnknown",
            message: message.clone(),
        },
        Reply::Error {
            code: ErrorCode::Failed,
            message,
            ..
        } => BusError::failed(message.clone()),
        other => BusError::from_init(other, "AttachProcessesToUnit"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_units::attach::Refusal;

    /// Each refusal of the init reaches the caller under systemd's name.
    #[test]
    fn refusals_are_systemds_errors() {
        let table = [
            (
                Refusal::NoSuchProcess(9),
                "org.freedesktop.DBus.Error.UnixProcessIdUnknown",
            ),
            (
                Refusal::NotCallers(9),
                "org.freedesktop.DBus.Error.AccessDenied",
            ),
            (
                Refusal::NotUnits(9),
                "org.freedesktop.DBus.Error.AccessDenied",
            ),
            (
                Refusal::NotDelegated,
                "org.freedesktop.DBus.Error.InvalidArgs",
            ),
            (Refusal::Inactive, "org.freedesktop.DBus.Error.InvalidArgs"),
            (
                Refusal::NotAbsolute("a".into()),
                "org.freedesktop.DBus.Error.InvalidArgs",
            ),
            (
                Refusal::KernelThread(2),
                "org.freedesktop.DBus.Error.InvalidArgs",
            ),
        ];
        for (r, name) in table {
            let e = error(&Reply::error(r.code(), r.message()));
            assert_eq!(e.name, name, "{r:?}");
            assert_eq!(e.message, r.message());
        }
        let unknown = Reply::error(ErrorCode::UnknownUnit, "Unit a.service not loaded.");
        assert_eq!(error(&unknown).name, "org.freedesktop.systemd1.NoSuchUnit");
        let failed = Reply::error(
            ErrorCode::Failed,
            "Failed to attach processes to control group: write 9 to /x/cgroup.procs: No such \
             file or directory",
        );
        assert_eq!(error(&failed).name, "org.freedesktop.DBus.Error.Failed");
    }
}
