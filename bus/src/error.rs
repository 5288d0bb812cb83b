//! The D-Bus errors the bus side answers: systemd's names where systemd
//! has one (`NoSuchUnit`, `UnitMasked`, `NoSuchJob`), the standard
//! `AccessDenied`, and `NotSupported` for what flotilla's model cannot do,
//! with a message naming what and why (`docs/dbus.md`).

use flotilla_units::protocol::{ErrorCode, Reply};

/// An error reply: its D-Bus name and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BusError {
    /// The error name.
    pub name: &'static str,
    /// For people.
    pub message: String,
}

impl BusError {
    /// `org.freedesktop.DBus.Error.AccessDenied`: a change asked by
    /// someone other than root.
    pub fn access_denied(what: &str, uid: u32) -> BusError {
        BusError {
            name: "org.freedesktop.DBus.Error.AccessDenied",
            message: format!(
                "Access denied: {what} changes the system, which only root may do (caller uid {uid})"
            ),
        }
    }

    /// systemd's `NoSuchUnit`.
    pub fn no_such_unit(name: &str) -> BusError {
        BusError {
            name: "org.freedesktop.systemd1.NoSuchUnit",
            message: format!("Unit {name} not found."),
        }
    }

    /// systemd's `UnitMasked`.
    pub fn masked(name: &str) -> BusError {
        BusError {
            name: "org.freedesktop.systemd1.UnitMasked",
            message: format!("Unit {name} is masked."),
        }
    }

    /// systemd's `TransactionIsDestructive`: a start of `name` while a
    /// stop of it that may not be replaced (`replace-irreversibly`) is
    /// under way, in systemd's words.
    pub fn destructive(name: &str) -> BusError {
        BusError {
            name: "org.freedesktop.systemd1.TransactionIsDestructive",
            message: format!(
                "Transaction for {name}/start is destructive ({name} has 'stop' job queued, but 'start' is included in transaction)."
            ),
        }
    }

    /// systemd's `NoSuchJob`.
    pub fn no_such_job(id: u32) -> BusError {
        BusError {
            name: "org.freedesktop.systemd1.NoSuchJob",
            message: format!("Job {id} does not exist."),
        }
    }

    /// What flotilla's model cannot do, and why.
    pub fn not_supported(what: &str, why: &str) -> BusError {
        BusError {
            name: "org.freedesktop.DBus.Error.NotSupported",
            message: format!("{what} is not supported by flotilla: {why}"),
        }
    }

    /// Arguments that are not the method's.
    pub fn invalid_args(message: impl Into<String>) -> BusError {
        BusError {
            name: "org.freedesktop.DBus.Error.InvalidArgs",
            message: message.into(),
        }
    }

    /// Anything else that failed (the init unreachable, refused).
    pub fn failed(message: impl Into<String>) -> BusError {
        BusError {
            name: "org.freedesktop.DBus.Error.Failed",
            message: message.into(),
        }
    }

    /// An error reply of the init, as a D-Bus error.
    pub fn from_init(reply: &Reply, what: &str) -> BusError {
        match reply {
            Reply::Error {
                code,
                message,
                details,
            } => {
                let mut text = message.clone();
                for d in details {
                    text.push_str("\n  ");
                    text.push_str(d);
                }
                let name = match code {
                    ErrorCode::PermissionDenied => "org.freedesktop.DBus.Error.AccessDenied",
                    ErrorCode::UnknownUnit | ErrorCode::UnknownTarget => {
                        "org.freedesktop.systemd1.NoSuchUnit"
                    }
                    ErrorCode::BadRequest | ErrorCode::Invalid => {
                        "org.freedesktop.DBus.Error.InvalidArgs"
                    }
                    // RefuseManualStart=/RefuseManualStop=, as systemd says it.
                    ErrorCode::Refused => "org.freedesktop.systemd1.OnlyByDependency",
                    _ => "org.freedesktop.DBus.Error.Failed",
                };
                BusError {
                    name,
                    message: text,
                }
            }
            other => BusError::failed(format!(
                "{what}: unexpected answer from the init: {other:?}"
            )),
        }
    }
}

impl From<flotilla_client::Error> for BusError {
    fn from(e: flotilla_client::Error) -> BusError {
        BusError::failed(e.to_string())
    }
}
