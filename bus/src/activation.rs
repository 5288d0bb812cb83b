//! D-Bus activation through the manager, as `dbus-daemon
//! --systemd-activation` asks systemd for it: when a client calls a name
//! nobody owns whose service file says `SystemdService=UNIT`, the bus
//! parks the call and sends `org.freedesktop.systemd1.Activator.
//! ActivationRequest(UNIT)` to `org.freedesktop.systemd1`; the manager
//! starts the unit (a start job, as `StartUnit`), whose process then takes
//! the name and gets the parked calls. When the unit cannot be started
//! (unknown, masked, refusing a manual start) or its start fails, the
//! manager says `ActivationFailure(UNIT, ERROR, MESSAGE)` to the bus,
//! which fails the parked calls with that error at once instead of at the
//! client's timeout.

use crate::hub::Hub;
use std::sync::Arc;
use zbus::message::{Message, Type};

/// The interface of both signals.
const ACTIVATOR: &str = "org.freedesktop.systemd1.Activator";
/// The bus itself, which alone may ask.
const BUS: &str = "org.freedesktop.DBus";

/// The unit an `ActivationRequest` of the bus asks for; `None` for any
/// other message (the same signal from a client is not the bus asking).
pub fn request(msg: &Message) -> Option<String> {
    let h = msg.header();
    let asks = msg.message_type() == Type::Signal
        && h.interface().is_some_and(|i| i.as_str() == ACTIVATOR)
        && h.member()
            .is_some_and(|m| m.as_str() == "ActivationRequest")
        && h.sender().is_some_and(|s| s.as_str() == BUS);
    if !asks {
        return None;
    }
    msg.body().deserialize::<String>().ok()
}

/// Starts `unit` for the bus `conn`, and tells the bus when that fails.
pub async fn activate(hub: Arc<Hub>, conn: zbus::Connection, unit: String) {
    let (error, message) = match crate::units_ops::start(&hub, &unit, false).await {
        Ok((_, mut jobs)) if !jobs.is_empty() => {
            match crate::jobs::follow(hub, jobs.swap_remove(0)).await {
                "done" => return,
                // systemd queues the job and reports nothing more (the
                // caller waits out its timeout): flotilla follows the job and
                // fails the parked calls at once, with systemd's error name
                // for a failed job.
                result => (
                    "org.freedesktop.systemd1.JobFailed",
                    format!("Activation of {unit} failed: its start job ended with {result}"),
                ),
            }
        }
        Ok(_) => return,
        Err(e) => (e.name, e.message),
    };
    eprintln!("flotilla-busd: D-Bus activation of {unit} failed: {message}");
    let said = conn
        .emit_signal(
            Some(BUS),
            crate::escape::MANAGER_PATH,
            ACTIVATOR,
            "ActivationFailure",
            &(unit.as_str(), error, message.as_str()),
        )
        .await;
    if let Err(e) = said {
        eprintln!("flotilla-busd: could not tell the bus that {unit} failed: {e}");
    }
}
