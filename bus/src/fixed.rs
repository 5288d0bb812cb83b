//! The `org.freedesktop.systemd1.Unit` interface of a unit that systemd
//! has and flotilla's init keeps none of: a mount point's
//! (`crate::mounted`), `init.scope` (`crate::listed`). Such a unit is
//! loaded, active, and cannot be started or reloaded; a perpetual one
//! (the root's mount, `init.scope`) cannot be stopped either.

use crate::dict::Props;
use zbus::zvariant::{ObjectPath, Value};

/// `org.freedesktop.systemd1.Unit` of a unit the init does not keep (a
/// mount point's, `init.scope`): no unit file, loaded, active in `sub`
/// since a time nobody recorded (0), with no dependency, job or action
/// (`CanStart` and `CanReload` false: the init cannot; `CanStop` unless
/// `perpetual`: a mount point is unmounted).
pub fn unit(name: &str, description: String, sub: &str, perpetual: bool) -> Props {
    let strs = |v: Vec<String>| -> Value<'static> { Value::from(v) };
    vec![
        ("Id", Value::from(name.to_string())),
        ("Names", strs(vec![name.to_string()])),
        ("Following", Value::from("")),
        ("Requires", strs(vec![])),
        ("Wants", strs(vec![])),
        ("After", strs(vec![])),
        ("Before", strs(vec![])),
        ("Conflicts", strs(vec![])),
        ("Triggers", strs(vec![])),
        ("TriggeredBy", strs(vec![])),
        ("Documentation", strs(vec![])),
        ("Description", Value::from(description)),
        ("LoadState", Value::from("loaded")),
        ("ActiveState", Value::from("active")),
        ("FreezerState", Value::from("running")),
        ("SubState", Value::from(sub.to_string())),
        ("FragmentPath", Value::from("")),
        ("DropInPaths", strs(vec![])),
        ("UnitFileState", Value::from("")),
        ("UnitFilePreset", Value::from("")),
        ("StateChangeTimestamp", Value::from(0u64)),
        ("InactiveExitTimestamp", Value::from(0u64)),
        ("ActiveEnterTimestamp", Value::from(0u64)),
        ("ActiveExitTimestamp", Value::from(0u64)),
        ("InactiveEnterTimestamp", Value::from(0u64)),
        ("CanStart", Value::from(false)),
        ("CanStop", Value::from(!perpetual)),
        ("CanReload", Value::from(false)),
        ("CanIsolate", Value::from(false)),
        ("CanClean", strs(vec![])),
        (
            "Job",
            Value::from((0u32, ObjectPath::from_static_str_unchecked("/"))),
        ),
        ("NeedDaemonReload", Value::from(false)),
        ("ConditionResult", Value::from(true)),
        ("AssertResult", Value::from(true)),
        ("LoadError", Value::from(("", ""))),
        ("Transient", Value::from(false)),
        ("Perpetual", Value::from(perpetual)),
        ("InvocationID", Value::from(Vec::<u8>::new())),
        (
            "ActivationDetails",
            Value::from(Vec::<(String, String)>::new()),
        ),
    ]
}
