//! One interface's properties as the bus sends them: a list of systemd's
//! names and values ([`Props`]), kept in the order given, and its `a{sv}`
//! form ([`Dict`]). Below every module that makes properties
//! (`props.rs`, `limits.rs`, `mounted.rs`), so that each can name them.

use std::collections::HashMap;
use zbus::zvariant::Value;

/// One interface's properties.
pub type Props = Vec<(&'static str, Value<'static>)>;

/// `props` with its property `name` set to `value`, in its place: one
/// worked out after the rest (a unit's `DropInPaths`, `NeedDaemonReload`,
/// `UnitFileState`; a mount unit's dependencies while its place is
/// mounted).
pub fn set(props: &mut Props, name: &str, value: Value<'static>) {
    if let Some(p) = props.iter_mut().find(|(n, _)| *n == name) {
        p.1 = value;
    }
}

/// Properties as `a{sv}` in the order given: `systemctl show` prints
/// them in the order of the reply, as systemd's (the type interface's,
/// then the unit's).
pub struct Dict(pub Props);

impl zbus::zvariant::Type for Dict {
    const SIGNATURE: &'static zbus::zvariant::Signature =
        <HashMap<String, Value<'static>> as zbus::zvariant::Type>::SIGNATURE;
}

impl serde::Serialize for Dict {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = ser.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// The properties as `a{sv}`.
pub fn dict(props: Props) -> Dict {
    Dict(props)
}
