//! The D-Bus names owned on the system bus, told to the init
//! (`bus-names`, docs/control-protocol.md): a unit with `ready-bus-name`
//! (systemd's `Type=dbus` with `BusName=`) is ready once its name is
//! owned, and PID 1 does not speak D-Bus. On each connection to the bus:
//! a match on the bus's `NameOwnerChanged`, then the whole list
//! (`ListNames`), then each change as the bus says it.

use crate::hub::Hub;
use flotilla_units::protocol::Request;
use zbus::message::{Message, Type};

/// The bus itself.
const BUS: &str = "org.freedesktop.DBus";
/// The bus's own object.
const BUS_PATH: &str = "/org/freedesktop/DBus";

/// Asks the bus for its name changes and tells the init every well-known
/// name owned now. Called on a connection whose messages are already
/// read (`server::serve`), so that no change after the list is missed.
pub async fn start(hub: &Hub, conn: &zbus::Connection) {
    let rule = "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',\
                member='NameOwnerChanged'";
    let listed = async {
        conn.call_method(Some(BUS), BUS_PATH, Some(BUS), "AddMatch", &(rule,))
            .await?;
        let reply = conn
            .call_method(Some(BUS), BUS_PATH, Some(BUS), "ListNames", &())
            .await?;
        reply.body().deserialize::<Vec<String>>()
    }
    .await;
    match listed {
        Ok(names) => {
            let owned = names.into_iter().filter(|n| well_known(n)).collect();
            tell(hub, owned, Vec::new(), true).await;
        }
        Err(e) => eprintln!(
            "flotilla-busd: cannot follow the bus's names ({e}); units with Type=dbus wait for \
             their start timeout"
        ),
    }
}

/// A `NameOwnerChanged` of the bus: the well-known name, and whether it is
/// owned now; `None` for any other message.
pub fn change(msg: &Message) -> Option<(String, bool)> {
    let h = msg.header();
    let is_it = msg.message_type() == Type::Signal
        && h.interface().is_some_and(|i| i.as_str() == BUS)
        && h.member().is_some_and(|m| m.as_str() == "NameOwnerChanged")
        && h.sender().is_some_and(|s| s.as_str() == BUS);
    if !is_it {
        return None;
    }
    let (name, _old, new) = msg.body().deserialize::<(String, String, String)>().ok()?;
    well_known(&name).then_some((name, !new.is_empty()))
}

/// Tells the init of one change.
pub async fn changed(hub: &Hub, name: String, owned: bool) {
    if owned {
        tell(hub, vec![name], Vec::new(), false).await;
    } else {
        tell(hub, Vec::new(), vec![name], false).await;
    }
}

/// A well-known name, not a connection's unique one (`:1.42`).
fn well_known(name: &str) -> bool {
    !name.starts_with(':')
}

async fn tell(hub: &Hub, owned: Vec<String>, released: Vec<String>, whole: bool) {
    let req = Request::BusNames {
        owned,
        released,
        whole,
    };
    if let Err(e) = hub.ask(req).await {
        eprintln!(
            "flotilla-busd: cannot tell the init the bus's names: {}",
            e.message
        );
    }
}
