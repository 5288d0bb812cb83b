//! `org.freedesktop.systemd1.Mount`, the interface of a mount unit: of a
//! mount point no unit made (`crate::mounted`), or of the init's mount
//! unit of a `[Mount]` file (`crate::props`).

use crate::dict::Props;
use flotilla_units::spec::MountParams;
use zbus::zvariant::Value;

/// The mount interface.
pub const MOUNT: &str = "org.freedesktop.systemd1.Mount";

/// `org.freedesktop.systemd1.Mount` of a mount `m` (the table's, or a
/// unit file's while its place is not mounted), with systemd's values
/// for what nobody set (its default time-out, 90 s; no process; no
/// cgroup) and the unit's `result`.
pub fn mount(m: &MountParams, result: &str) -> Props {
    vec![
        ("Where", Value::from(m.place.clone())),
        ("What", Value::from(m.what.clone())),
        ("Options", Value::from(m.options.clone())),
        ("Type", Value::from(m.fstype.clone())),
        ("TimeoutUSec", Value::from(90_000_000u64)),
        ("ControlPID", Value::from(0u32)),
        ("DirectoryMode", Value::from(0o755u32)),
        ("SloppyOptions", Value::from(false)),
        ("LazyUnmount", Value::from(false)),
        ("ForceUnmount", Value::from(false)),
        ("ReadWriteOnly", Value::from(false)),
        ("Result", Value::from(result.to_string())),
        ("ControlGroup", Value::from("")),
    ]
}
