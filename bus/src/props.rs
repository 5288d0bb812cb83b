//! The properties of systemd's objects, with systemd's names and D-Bus
//! types (`org.freedesktop.systemd1(5)`): the manager's
//! ([`manager`]), a unit's `org.freedesktop.systemd1.Unit` ([`unit`]) and
//! its type interface (`Service`, `Socket`, `Timer`, `Path`, `Target`:
//! [`type_interface`]), and a job's ([`job`]). Each is read from what the
//! init reports (`status`); a property flotilla has no fact for has
//! systemd's value for "none" (0, "", an empty list), never a made-up one.

pub use crate::dict::{dict, Dict, Props};
use crate::escape::{job_path, unit_path};
use crate::model::{self, systemd_name};
use flotilla_units::context::placement::{cpus_of_nodes, IndexSet};
use flotilla_units::protocol::{SystemStatus, UnitStatus};
use flotilla_units::spec::{Runs, UnitType};
use flotilla_units::state::UnitState;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, Value};

/// systemd's `UINT64_MAX`: "not known" for the cgroup figures.
const UNKNOWN: u64 = u64::MAX;

/// The unit interface.
pub const UNIT: &str = "org.freedesktop.systemd1.Unit";
/// The manager interface.
pub const MANAGER: &str = "org.freedesktop.systemd1.Manager";
/// The interface of a service's log settings (systemd's
/// `org.freedesktop.LogControl1`).
pub const LOG_CONTROL: &str = "org.freedesktop.LogControl1";
/// The object that has it.
pub const LOG_CONTROL_PATH: &str = "/org/freedesktop/LogControl1";
/// The job interface.
pub const JOB: &str = "org.freedesktop.systemd1.Job";

/// An object path (`/` for one that is not valid, which the callers'
/// escaped names never are not).
fn path(p: &str) -> ObjectPath<'static> {
    OwnedObjectPath::try_from(p.to_string())
        .map(OwnedObjectPath::into_inner)
        .unwrap_or_else(|_| ObjectPath::from_static_str_unchecked("/"))
}

fn strs(v: Vec<String>) -> Value<'static> {
    Value::from(v)
}

/// The type interface of a unit the init has: its type's, or a slice's
/// (one served from its cgroup directory).
pub fn type_interface_of(s: &UnitStatus) -> &'static str {
    if s.source == flotilla_units::protocol::SLICE_SOURCE {
        "org.freedesktop.systemd1.Slice"
    } else if model::is_device(s) {
        "org.freedesktop.systemd1.Device"
    } else if model::is_mount(s) {
        crate::mount_props::MOUNT
    } else {
        type_interface(s.kind)
    }
}

/// The type interface of a unit (`org.freedesktop.systemd1.Service`, …).
pub fn type_interface(kind: UnitType) -> &'static str {
    match kind {
        UnitType::Virtual => "org.freedesktop.systemd1.Target",
        UnitType::Timer => "org.freedesktop.systemd1.Timer",
        UnitType::Socket => "org.freedesktop.systemd1.Socket",
        UnitType::Path => "org.freedesktop.systemd1.Path",
        UnitType::Scope => "org.freedesktop.systemd1.Scope",
        UnitType::Slice => "org.freedesktop.systemd1.Slice",
        _ => "org.freedesktop.systemd1.Service",
    }
}

/// The unit's `ControlGroup`: the cgroup its main process is in (the
/// init gives each unit its own), "" without one.
pub fn control_group(s: &UnitStatus) -> String {
    s.pid.and_then(crate::procs::cgroup_of).unwrap_or_default()
}

/// The properties of a unit that the bus side reads from the unit path
/// when they are asked for (`crate::dict::set`): not known from the init's state, so
/// left out of `PropertiesChanged`, as systemd leaves them out.
pub const FROM_PATH: [&str; 3] = ["DropInPaths", "NeedDaemonReload", "UnitFileState"];

/// [`unit`] as `PropertiesChanged` tells it: without [`FROM_PATH`].
pub fn unit_changed(s: &UnitStatus, job: Option<u32>) -> Props {
    let mut props = unit(s, job);
    props.retain(|(n, _)| !FROM_PATH.contains(n));
    props
}

/// `org.freedesktop.systemd1.Unit` of a unit the init has.
pub fn unit(s: &UnitStatus, job: Option<u32>) -> Props {
    let id = systemd_name(s);
    let mut names = vec![id.clone()];
    if s.unit != id {
        names.push(s.unit.clone());
    }
    // Its aliases (links to its file), as systemd lists them; a YAML
    // unit's other targets are not unit names.
    for p in s.provides.iter().filter(|p| crate::model::has_suffix(p)) {
        if !names.contains(p) {
            names.push(p.clone());
        }
    }
    let st = model::stamps(s);
    let load = s.load_state();
    let file_state = if s.masked { "masked" } else { "" };
    // A `not-found` unit has no file, as systemd shows it.
    let source = if s.source.starts_with('/') && !s.not_found {
        s.source.clone()
    } else {
        String::new()
    };
    let job_value = match job {
        Some(n) => Value::from((n, path(&job_path(n)))),
        None => Value::from((0u32, path("/"))),
    };
    let triggers: Vec<String> = s.activates.iter().cloned().collect();
    let id_for_error = id.clone();
    let mut props = vec![
        ("Id", Value::from(id.clone())),
        ("Names", strs(names)),
        ("Following", Value::from(model::following(s))),
    ];
    // The init gives them in the status of one unit (GetAll, Get), not in
    // the changes it streams: a change does not touch them.
    if let Some(d) = &s.dependencies {
        props.extend([
            ("Requires", strs(d.requires.clone())),
            ("Wants", strs(d.wants.clone())),
            ("After", strs(d.after.clone())),
            ("Before", strs(d.before.clone())),
            ("Conflicts", strs(d.conflicts.clone())),
        ]);
    }
    props.extend([
        ("Triggers", strs(triggers)),
        ("TriggeredBy", strs(vec![])),
        ("Documentation", strs(s.documentation.clone())),
        (
            "Description",
            Value::from(s.description.clone().unwrap_or(id)),
        ),
        ("LoadState", Value::from(load)),
        ("ActiveState", Value::from(model::active_of(s))),
        ("FreezerState", Value::from(s.freezer.as_str())),
        ("SubState", Value::from(model::sub_of(s))),
        ("FragmentPath", Value::from(source)),
        ("SourcePath", Value::from("")),
        ("DropInPaths", strs(vec![])),
        ("UnitFileState", Value::from(file_state)),
        ("UnitFilePreset", Value::from("")),
        ("StateChangeTimestamp", Value::from(st.state_change)),
        ("StateChangeTimestampMonotonic", Value::from(0u64)),
        ("InactiveExitTimestamp", Value::from(st.inactive_exit)),
        ("InactiveExitTimestampMonotonic", Value::from(0u64)),
        ("ActiveEnterTimestamp", Value::from(st.active_enter)),
        ("ActiveEnterTimestampMonotonic", Value::from(0u64)),
        ("ActiveExitTimestamp", Value::from(st.active_exit)),
        ("ActiveExitTimestampMonotonic", Value::from(0u64)),
        ("InactiveEnterTimestamp", Value::from(st.inactive_enter)),
        ("InactiveEnterTimestampMonotonic", Value::from(0u64)),
        ("CanStart", Value::from(!s.masked)),
        ("CanStop", Value::from(true)),
        ("CanReload", Value::from(s.kind.row().runs != Runs::Nothing)),
        // What `systemctl clean` may remove: the init gives it in the
        // status of one unit (GetAll, Get).
        ("CanClean", strs(s.can_clean.clone())),
        // The init says it in the status of one unit (GetAll, Get): a
        // running unit whose cgroup has the freezer.
        ("CanFreeze", Value::from(s.can_freeze)),
        (
            "CanIsolate",
            Value::from(s.kind.row().runs == Runs::Nothing),
        ),
        ("Job", job_value),
        ("NeedDaemonReload", Value::from(false)),
        ("ConditionResult", Value::from(!s.skipped)),
        ("AssertResult", Value::from(true)),
        ("ConditionTimestamp", Value::from(0u64)),
        ("AssertTimestamp", Value::from(0u64)),
        (
            "LoadError",
            load_error(s.not_found.then_some(id_for_error.as_str())),
        ),
        ("Transient", Value::from(s.source.starts_with("transient"))),
        ("InvocationID", Value::from(model::invocation_id(s))),
        ("ActivationDetails", Value::from(s.activation.clone())),
        ("Perpetual", Value::from(false)),
    ]);
    props
}

/// The type interface's properties of a unit.
pub fn type_props(s: &UnitStatus) -> Props {
    if model::is_mount(s) {
        // What its file mounts (the bus object shows the table's while
        // the place is mounted: `crate::mounted`).
        return match &s.mount {
            Some(m) => crate::mount_props::mount(m, model::result(s)),
            None => vec![("Result", Value::from(model::result(s)))],
        };
    }
    let mut out: Props = Vec::new();
    let cgroup = control_group(s);
    match s.kind {
        UnitType::Virtual => {
            if let Some(d) = &s.device {
                out.push(("SysFSPath", Value::from(d.sysfs_path.clone())));
            }
        }
        // systemd's resource control of a slice: `infinity` is no limit.
        UnitType::Slice => {
            out.push(("MemoryMax", Value::from(s.memory_max.unwrap_or(u64::MAX))));
            out.push(("ControlGroup", Value::from(cgroup.clone())));
        }
        UnitType::Timer => {
            let t = s.timer.clone();
            let next = t.as_ref().and_then(|t| t.next_elapse_usec).unwrap_or(0);
            let last = t.as_ref().and_then(|t| t.last_trigger_usec).unwrap_or(0);
            out.push(("Unit", Value::from(s.activates.clone().unwrap_or_default())));
            out.push(("NextElapseUSecRealtime", Value::from(next)));
            out.push(("NextElapseUSecMonotonic", Value::from(0u64)));
            out.push(("LastTriggerUSec", Value::from(last)));
            out.push(("LastTriggerUSecMonotonic", Value::from(0u64)));
            out.push(("Result", Value::from(model::result(s))));
        }
        UnitType::Socket => {
            let listen: Vec<(String, String)> = s
                .listening
                .iter()
                .map(|l| {
                    let (kind, addr) = l.split_once(' ').unwrap_or(("stream", l));
                    let kind = match kind {
                        "stream" => "Stream",
                        "datagram" => "Datagram",
                        "seqpacket" => "SequentialPacket",
                        "fifo" => "FIFO",
                        other => other,
                    };
                    (kind.to_string(), addr.to_string())
                })
                .collect();
            let c = s.connections;
            out.push(("Listen", Value::from(listen)));
            out.push(("Accept", Value::from(c.is_some())));
            out.push(("NConnections", Value::from(c.map_or(0, |c| c.now))));
            out.push((
                "NAccepted",
                Value::from(c.map_or(0u32, |c| u32::try_from(c.accepted).unwrap_or(u32::MAX))),
            ));
            out.push(("NRefused", Value::from(0u32)));
            out.push(("Result", Value::from(model::result(s))));
            out.push(("ControlGroup", Value::from(cgroup)));
        }
        UnitType::Path => {
            out.push(("Unit", Value::from(s.activates.clone().unwrap_or_default())));
            out.push(("Result", Value::from(model::result(s))));
        }
        _ => {
            let pid = s.pid.and_then(|p| u32::try_from(p).ok()).unwrap_or(0);
            let st = model::stamps(s);
            let code = if s.state == UnitState::Failed { 1 } else { 0 };
            let usage = s.usage.unwrap_or_default();
            let service_type = s.kind.systemd_type();
            let status_text = if s.status.is_empty() { "" } else { &s.status };
            out.extend([
                ("Type", Value::from(service_type)),
                ("MainPID", Value::from(pid)),
                ("ControlPID", Value::from(0u32)),
                ("ExecMainPID", Value::from(pid)),
                ("ExecMainStartTimestamp", Value::from(st.active_enter)),
                ("ExecMainStartTimestampMonotonic", Value::from(0u64)),
                ("ExecMainExitTimestamp", Value::from(st.inactive_enter)),
                ("ExecMainExitTimestampMonotonic", Value::from(0u64)),
                ("ExecMainCode", Value::from(code)),
                ("ExecMainStatus", Value::from(model::exit_status(s))),
                ("StatusText", Value::from(status_text.to_string())),
                ("StatusErrno", Value::from(0i32)),
                ("Result", Value::from(model::result(s))),
                ("ReloadResult", Value::from(model::reload_result(s))),
                // A failed clean is the client's error reply, and the
                // unit stays as it was (docs/dbus.md, "Cleaning a unit").
                ("CleanResult", Value::from("success")),
                ("NRestarts", Value::from(s.restarts)),
                ("PIDFile", Value::from("")),
                ("ControlGroup", Value::from(cgroup)),
                (
                    "MemoryCurrent",
                    Value::from(usage.memory_bytes.unwrap_or(UNKNOWN)),
                ),
                ("TasksCurrent", Value::from(usage.tasks.unwrap_or(UNKNOWN))),
                (
                    "CPUUsageNSec",
                    Value::from(usage.cpu_usec.map_or(UNKNOWN, |u| u.saturating_mul(1000))),
                ),
            ]);
            out.extend(crate::limits::props(&s.limits, false));
            if let Some(lists) = &s.exec {
                out.extend(crate::exec_props::exec_props(lists));
            }
            if let Some(settings) = &s.settings {
                out.extend(settings_props(settings));
            }
        }
    }
    out
}

/// A unit's restart, timeout, kill, user and placement settings (systemd's
/// `Service` and `Kill` interfaces, which `systemctl show` merges). A stop's last
/// resort is always `SIGKILL`.
fn settings_props(s: &flotilla_units::protocol::Settings) -> Props {
    vec![
        ("Restart", Value::from(s.restart.clone())),
        ("RestartUSec", Value::from(s.restart_usec)),
        ("TimeoutStartUSec", Value::from(s.timeout_start_usec)),
        ("TimeoutStopUSec", Value::from(s.timeout_stop_usec)),
        ("WatchdogUSec", Value::from(s.watchdog_usec)),
        ("RuntimeMaxUSec", Value::from(s.runtime_max_usec)),
        (
            "RuntimeRandomizedExtraUSec",
            Value::from(s.runtime_randomized_extra_usec),
        ),
        ("RemainAfterExit", Value::from(s.remain_after_exit)),
        ("KillMode", Value::from(s.kill_mode.clone())),
        ("KillSignal", Value::from(s.kill_signal)),
        ("RestartKillSignal", Value::from(s.restart_kill_signal)),
        ("FinalKillSignal", Value::from(9i32)),
        ("SendSIGKILL", Value::from(s.send_sigkill)),
        ("SendSIGHUP", Value::from(s.send_sighup)),
        ("User", Value::from(s.user.clone())),
        ("Group", Value::from(s.group.clone())),
        ("DynamicUser", Value::from(s.dynamic_user)),
        ("WorkingDirectory", Value::from(s.working_directory.clone())),
        (
            "StandardInputData",
            Value::from(s.standard_input_data.clone()),
        ),
        (
            "CPUAffinity",
            Value::from(if s.cpu_affinity_from_numa {
                cpus_of_nodes(&IndexSet::from_bytes(&s.numa_mask), |p| {
                    std::fs::read_to_string(p).ok()
                })
                .bytes()
                .to_vec()
            } else {
                s.cpu_affinity.clone()
            }),
        ),
        ("CPUAffinityFromNUMA", Value::from(s.cpu_affinity_from_numa)),
        ("NUMAPolicy", Value::from(s.numa_policy)),
        ("NUMAMask", Value::from(s.numa_mask.clone())),
        ("LogNamespace", Value::from(s.log_namespace.clone())),
    ]
}

/// The type interface of a name the init does not have, by its suffix, as
/// systemd serves it for a unit it cannot load (`loginctl session-status`
/// asks a scope that has ended for its `ControlGroup`): systemd's values
/// for "none". `None` for a suffix systemd has no interface for.
pub fn not_found_type(name: &str) -> Option<(&'static str, Props)> {
    let suffix = name.rsplit_once('.').map_or("", |(_, s)| s);
    let iface = match suffix {
        "service" => "org.freedesktop.systemd1.Service",
        "socket" => "org.freedesktop.systemd1.Socket",
        "timer" => "org.freedesktop.systemd1.Timer",
        "path" => "org.freedesktop.systemd1.Path",
        "scope" => "org.freedesktop.systemd1.Scope",
        "slice" => "org.freedesktop.systemd1.Slice",
        "mount" => "org.freedesktop.systemd1.Mount",
        "target" => return Some(("org.freedesktop.systemd1.Target", Vec::new())),
        _ => return None,
    };
    Some((
        iface,
        vec![
            ("ControlGroup", Value::from("")),
            ("Result", Value::from("success")),
        ],
    ))
}

/// A unit's `LoadError`: none, or systemd's for the unit `not_found`
/// (`systemctl status` prints it as the reason after `not-found`).
fn load_error(not_found: Option<&str>) -> Value<'static> {
    match not_found {
        Some(name) => Value::from((
            "org.freedesktop.systemd1.NoSuchUnit",
            format!("Unit {name} not found."),
        )),
        None => Value::from(("", "")),
    }
}

/// `org.freedesktop.systemd1.Unit` of a name the init does not have:
/// what systemd answers for a unit it cannot load (`not-found`,
/// `inactive`), so that `systemctl status` says "could not be found".
pub fn not_found(name: &str) -> Props {
    vec![
        ("Id", Value::from(name.to_string())),
        ("Names", strs(vec![name.to_string()])),
        ("Description", Value::from(name.to_string())),
        ("LoadState", Value::from("not-found")),
        ("ActiveState", Value::from("inactive")),
        ("FreezerState", Value::from("running")),
        ("SubState", Value::from("dead")),
        ("FragmentPath", Value::from("")),
        ("UnitFileState", Value::from("")),
        ("LoadError", load_error(Some(name))),
        ("Job", Value::from((0u32, path("/")))),
        ("Following", Value::from("")),
        ("Triggers", strs(vec![])),
        ("TriggeredBy", strs(vec![])),
        ("DropInPaths", strs(vec![])),
        ("NeedDaemonReload", Value::from(false)),
        ("CanStart", Value::from(false)),
        ("CanStop", Value::from(false)),
        ("CanFreeze", Value::from(false)),
        ("InvocationID", Value::from(Vec::<u8>::new())),
        (
            "ActivationDetails",
            Value::from(Vec::<(String, String)>::new()),
        ),
    ]
}

/// The manager's properties that need the init's whole status (every
/// unit's state): the others are answered without asking the init.
pub const MANAGER_FROM_STATUS: [&str; 7] = [
    "SystemState",
    "NNames",
    "NFailedUnits",
    "Environment",
    "LogLevel",
    "LogTarget",
    "ServiceWatchdogs",
];

/// Whether the manager's property `name` needs the init's status:
/// [`MANAGER_FROM_STATUS`] and the `DefaultLimit*` ([`crate::limits`]).
pub fn manager_needs_status(name: &str) -> bool {
    MANAGER_FROM_STATUS.contains(&name) || crate::limits::is_default_limit(name)
}

/// The manager's properties, in systemd's order; those that
/// [`manager_needs_status`] only when `sys` is given.
/// `started`: when the init started ([`crate::procs::init_started`]).
pub fn manager(sys: Option<&SystemStatus>, jobs: u32, started: (u64, u64)) -> Props {
    let mut props = vec![
        (
            "Version",
            Value::from(format!("flotilla {}", env!("CARGO_PKG_VERSION"))),
        ),
        ("Features", Value::from("")),
        ("Virtualization", Value::from("")),
        ("ConfidentialVirtualization", Value::from("")),
        ("Architecture", Value::from(std::env::consts::ARCH)),
        ("Tainted", Value::from("")),
    ];
    if let Some(sys) = sys {
        props.extend(manager_state(sys));
    }
    props.extend([
        ("NJobs", Value::from(jobs)),
        ("NInstalledJobs", Value::from(jobs)),
        ("NFailedJobs", Value::from(0u32)),
        ("Progress", Value::from(1.0f64)),
    ]);
    if let Some(sys) = sys {
        // What every unit's processes start from (`set-environment`).
        props.push(("Environment", strs(sys.environment.clone())));
    }
    props.extend([
        ("ControlGroup", Value::from("")),
        ("DefaultStandardOutput", Value::from("inherit")),
        ("DefaultStandardError", Value::from("inherit")),
        ("ShowStatus", Value::from(false)),
    ]);
    if let Some(sys) = sys {
        props.extend([
            ("LogLevel", Value::from(sys.log.level.as_str())),
            ("LogTarget", Value::from(sys.log.target.as_str())),
            ("ServiceWatchdogs", Value::from(sys.service_watchdogs)),
        ]);
        props.extend(crate::limits::props(&sys.default_limits, true));
    }
    props.extend([
        ("UserspaceTimestamp", Value::from(started.0)),
        ("UserspaceTimestampMonotonic", Value::from(started.1)),
        ("FinishTimestamp", Value::from(0u64)),
        ("FinishTimestampMonotonic", Value::from(0u64)),
        ("KernelTimestamp", Value::from(0u64)),
        ("FirmwareTimestamp", Value::from(0u64)),
        ("LoaderTimestamp", Value::from(0u64)),
        ("InitRDTimestamp", Value::from(0u64)),
    ]);
    props
}

/// `org.freedesktop.LogControl1`'s properties: the init's log settings.
pub fn log_control(log: &flotilla_units::loglevel::LogSettings) -> Props {
    vec![
        ("LogLevel", Value::from(log.level.as_str())),
        ("LogTarget", Value::from(log.target.as_str())),
        ("SyslogIdentifier", Value::from("init")),
    ]
}

/// [`MANAGER_FROM_STATUS`], from the init's status. `SystemState` is
/// systemd's: `degraded` counts failed units only, not flotilla's own
/// `degraded` (a unit the target wants that is not active, say one
/// stopped by hand), which `initctl status` shows.
fn manager_state(sys: &SystemStatus) -> Props {
    let failed = sys
        .units
        .iter()
        .filter(|u| u.state == UnitState::Failed)
        .count();
    let state = if sys.shutting_down {
        "stopping"
    } else if !sys.target_state.is_active() {
        "starting"
    } else if failed > 0 {
        "degraded"
    } else {
        "running"
    };
    vec![
        ("SystemState", Value::from(state)),
        (
            "NNames",
            Value::from(u32::try_from(sys.units.len()).unwrap_or(u32::MAX)),
        ),
        (
            "NFailedUnits",
            Value::from(u32::try_from(failed).unwrap_or(u32::MAX)),
        ),
    ]
}

/// A job's properties.
pub fn job(id: u32, unit: &str, kind: &str, state: &str) -> Props {
    vec![
        ("Id", Value::from(id)),
        (
            "Unit",
            Value::from((unit.to_string(), path(&unit_path(unit)))),
        ),
        ("JobType", Value::from(kind.to_string())),
        ("State", Value::from(state.to_string())),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The value of property `name` among `p`.
    fn prop<'a>(p: &'a Props, name: &str) -> &'a Value<'static> {
        p.iter().find(|(n, _)| *n == name).map(|(_, v)| v).unwrap()
    }

    #[test]
    fn types_are_systemds() {
        let sig = |props: &Props, name: &str| {
            props
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.value_signature().to_string())
                .unwrap()
        };
        let p = not_found("x.service");
        assert_eq!(sig(&p, "LoadError"), "(ss)");
        assert_eq!(sig(&p, "Job"), "(uo)");
        assert_eq!(sig(&p, "Names"), "as");
        let j = job(3, "x.service", "start", "waiting");
        assert_eq!(sig(&j, "State"), "s");
        assert_eq!(sig(&j, "Unit"), "(so)");
        assert_eq!(sig(&p, "ActivationDetails"), "a(ss)");
    }

    /// A unit running on though its file is gone shows as systemd's
    /// `not-found` one: still active, no file, the reason systemctl
    /// prints.
    #[test]
    fn a_running_unit_whose_file_is_gone_is_not_found() {
        let s = UnitStatus {
            unit: "echo.socket".into(),
            kind: UnitType::Socket,
            state: UnitState::Running,
            source: "/etc/systemd/system/echo.socket".into(),
            not_found: true,
            ..UnitStatus::default()
        };
        let p = unit(&s, None);
        let get = |name: &str| prop(&p, name);
        assert_eq!(*get("LoadState"), Value::from("not-found"));
        assert_eq!(*get("ActiveState"), Value::from("active"));
        assert_eq!(*get("FragmentPath"), Value::from(""));
        assert_eq!(
            *get("LoadError"),
            Value::from((
                "org.freedesktop.systemd1.NoSuchUnit",
                "Unit echo.socket not found.".to_string()
            ))
        );
    }

    /// A device unit as systemd shows one: `active`, `plugged`, its
    /// interface `Device` with `SysFSPath`, and `Following` the unit named
    /// after its sysfs path (none for that one).
    #[test]
    fn a_device_unit_is_plugged_with_its_sysfs_path() {
        let sysfs = "/sys/devices/platform/serial8250/tty/ttyS0";
        let main = "sys-devices-platform-serial8250-tty-ttyS0.device";
        let s = UnitStatus {
            unit: "dev-ttyS0.device".into(),
            kind: UnitType::Virtual,
            state: UnitState::Running,
            description: Some("/dev/ttyS0".into()),
            device: Some(flotilla_units::protocol::DeviceLink {
                sysfs_path: sysfs.into(),
                following: Some(main.into()),
            }),
            ..UnitStatus::default()
        };
        let p = unit(&s, None);
        let get = |name: &str| prop(&p, name);
        assert_eq!(*get("Id"), Value::from("dev-ttyS0.device"));
        assert_eq!(*get("ActiveState"), Value::from("active"));
        assert_eq!(*get("SubState"), Value::from("plugged"));
        assert_eq!(*get("Following"), Value::from(main));
        assert_eq!(type_interface_of(&s), "org.freedesktop.systemd1.Device");
        let t = type_props(&s);
        assert_eq!(t, vec![("SysFSPath", Value::from(sysfs))]);
        let gone = UnitStatus {
            state: UnitState::Disabled,
            device: None,
            ..s
        };
        assert_eq!(model::sub_of(&gone), "dead");
        assert_eq!(model::following(&gone), "");
    }

    /// `PropertiesChanged` leaves out what is read from the unit path
    /// when asked for; `GetAll` has it (set then by the server).
    #[test]
    fn properties_changed_leaves_out_what_the_path_gives() {
        let s = UnitStatus {
            unit: "ntp.service".into(),
            source: "/lib/systemd/system/ntp.service".into(),
            ..UnitStatus::default()
        };
        let has = |p: &Props, name: &str| p.iter().any(|(n, _)| *n == name);
        let mut all = unit(&s, None);
        let changed = unit_changed(&s, None);
        for name in FROM_PATH {
            assert!(has(&all, name), "{name}");
            assert!(!has(&changed, name), "{name}");
        }
        assert!(has(&changed, "ActiveState"));
        crate::dict::set(&mut all, "UnitFileState", Value::from("enabled"));
        let (_, v) = all.iter().find(|(n, _)| *n == "UnitFileState").unwrap();
        assert_eq!(*v, Value::from("enabled"));
    }

    fn system_state(sys: &SystemStatus) -> String {
        let props = manager_state(sys);
        let (_, v) = props.iter().find(|(n, _)| *n == "SystemState").unwrap();
        String::try_from(v.try_clone().unwrap()).unwrap()
    }

    /// systemd's `SystemState`: a wanted unit stopped by hand (flotilla's
    /// `degraded`) leaves the system `running`; a failed unit degrades it.
    #[test]
    fn the_system_state_is_degraded_by_failed_units_only() {
        let mut sys = SystemStatus {
            target: "multi-user.target".into(),
            target_state: UnitState::Running,
            degraded: true,
            units: Vec::new(),
            pid1: true,
            shutting_down: false,
            load_errors: Vec::new(),
            log_writer: None,
            units_path: Vec::new(),
            log: Default::default(),
            default_limits: Default::default(),
            environment: Vec::new(),
            service_watchdogs: true,
        };
        assert_eq!(system_state(&sys), "running");
        sys.units.push(crate::model::tests::unit(
            "bad.service",
            flotilla_units::spec::UnitType::ForegroundSupervised,
            UnitState::Failed,
            "",
        ));
        assert_eq!(system_state(&sys), "degraded");
        sys.target_state = UnitState::Starting;
        assert_eq!(system_state(&sys), "starting");
    }

    /// Without the init's status the manager has every property but those
    /// that count units and the log settings, in the same order.
    #[test]
    fn the_managers_properties_without_the_status_leave_out_only_the_counts() {
        let sys = SystemStatus {
            target: "default".into(),
            target_state: UnitState::Running,
            degraded: false,
            units: Vec::new(),
            pid1: false,
            shutting_down: false,
            load_errors: Vec::new(),
            log_writer: None,
            units_path: Vec::new(),
            log: Default::default(),
            default_limits: flotilla_units::context::limits::Rlimit::ALL
                .into_iter()
                .map(|r| {
                    (
                        r,
                        flotilla_units::context::limits::RlimitValue { soft: 1, hard: 2 },
                    )
                })
                .collect(),
            environment: vec!["PATH=/bin".into()],
            service_watchdogs: true,
        };
        let names = |p: Props| p.into_iter().map(|(n, _)| n).collect::<Vec<_>>();
        let full = names(manager(Some(&sys), 0, (1, 2)));
        let bare = names(manager(None, 0, (1, 2)));
        let expected: Vec<&str> = full
            .iter()
            .copied()
            .filter(|n| !manager_needs_status(n))
            .collect();
        assert_eq!(bare, expected);
        assert_eq!(full.len(), bare.len() + MANAGER_FROM_STATUS.len() + 32);
        assert_eq!(full.get(6..9), Some(&MANAGER_FROM_STATUS[..3]));
        assert!(full.contains(&"Environment") && !bare.contains(&"Environment"));
        assert!(full.contains(&"LogLevel") && !bare.contains(&"LogLevel"));
    }
}
