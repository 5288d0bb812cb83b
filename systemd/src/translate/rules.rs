//! How the translator reads each systemd key: [`rule_of`] decides, in one
//! place, whether a key is ignored by design, a mount's own, the twin of a
//! YAML key of `keys::KEYS` (read by the kind of its value, [`Tr::twin`]),
//! a service context key, one of the keys in [`OWN`] whose meaning is the
//! translator's own (each row carries its reader), or not supported.
//! `translate_at`'s loop matches the answer, every case spelled out; a new
//! key of its own meaning is one row of [`OWN`] with its reader.

use super::mount::{self, MountKeys};
use super::*;
use flotilla_units::context;
use flotilla_units::spec::Ready;

/// What one unit file's keys have said so far: the spec being built and
/// what is decided only once every key was read.
pub(super) struct Reading<'a> {
    /// The translator's diagnostics and the unit's facts.
    pub t: Tr<'a>,
    /// The unit as read so far.
    pub spec: UnitSpec,
    /// The start timeout of this type when the file sets none.
    pub start_default: Duration,
    /// `ExecStart=` commands, in order, with their positions.
    pub exec_start: Vec<(Command, Pos)>,
    /// The keys of one command (`ExecStop=` …), decided at the end.
    pub singles: Singles,
    /// `Requires=` and `BindsTo=`.
    pub requires: Vec<Dep>,
    /// `Wants=`.
    pub wants: Vec<Dep>,
    /// `RequiresMountsFor=`: `Requires=` and `After=` of each mount.
    pub mounts_for: Vec<Dep>,
    /// `PIDFile=`, for a forking daemon.
    pub pidfile: Option<PathBuf>,
    /// `RestartSec=`.
    pub restart_sec: Option<Duration>,
    /// `Restart=`'s value and position (for the rules across keys).
    pub restart_at: Option<(String, Pos)>,
    /// `PermissionsStartOnly=`.
    pub permissions_start_only: bool,
    /// `DefaultDependencies=`.
    pub default_deps: bool,
    /// A mount's `[Mount]` keys (`None` for other units).
    pub mount_keys: Option<MountKeys>,
    /// `Type=dbus`: `BusName=` is the unit's readiness.
    pub bus_readiness: bool,
}

/// A key's reader: the reading, the key's position, its name and its
/// value (specifiers expanded).
pub(super) type Read = fn(&mut Reading<'_>, Pos, &str, &str);

/// How a key of a unit file is read.
pub(super) enum Rule {
    /// Not the translator's by design: `[Install]` (what `initctl enable`
    /// reads), `X-` sections and keys (the cluster's `[X-Fleet]`).
    Ignored,
    /// A `[Mount]` key of a `.mount` unit.
    Mount(mount::Read),
    /// A `[Mount]` key a mount unit has, which flotilla does not support.
    MountUnsupported,
    /// A section this kind of unit has not (`[Mount]` in a service,
    /// `[Service]` in a mount).
    OtherSection,
    /// The twin of a YAML key, read by the kind of its value.
    Twin(&'static keys::Key),
    /// A service context key (`ServiceContext::set`).
    Context(context::Key),
    /// A key of the translator's own meaning.
    Own(Read),
    /// A key that does not apply to this unit's type.
    NotThisType,
    /// A key flotilla does not support.
    Unsupported,
}

/// The rule for `[sec] key=` in a unit of type `kind` (`is_mount`: a
/// `.mount` unit).
pub(super) fn rule_of(sec: &str, key: &str, kind: UnitType, is_mount: bool) -> Rule {
    let context_key = keys::systemd_context_key(sec, key);
    // systemd ignores X- sections and keys by design; [X-Fleet] is the
    // cluster's. flotilla's own X-SkipUnsupported= is a context key.
    if (sec.starts_with("X-") || key.starts_with("X-")) && context_key.is_none() {
        return Rule::Ignored;
    }
    if sec == "Install" {
        return Rule::Ignored;
    }
    if sec == "Mount" || (is_mount && sec == "Service") {
        // A mount's `[Mount]` also takes systemd.exec(5)'s keys, for the
        // process that runs mount(8) (its directories, its environment …),
        // as systemd.mount(5) says.
        let exec = keys::systemd_context_key("Service", key);
        return match (mount::read_of(key), exec) {
            (Some(read), _) if is_mount && sec == "Mount" => Rule::Mount(read),
            (None, Some(k)) if is_mount && sec == "Mount" => Rule::Context(k),
            (None, None) if is_mount && sec == "Mount" => Rule::MountUnsupported,
            _ => Rule::OtherSection,
        };
    }
    // A socket's `[Socket]` also takes systemd.exec(5)'s keys, for the
    // commands it runs around its listening (`ExecStartPre=` …), as
    // systemd.socket(5) says; a `[Service]` section is not its own, and
    // its `Exec…=` keys are a socket's, not a service's.
    let is_socket = kind.row().ready == Ready::Armed(flotilla_units::spec::Arm::Sockets);
    if is_socket && sec == "Service" {
        return Rule::OtherSection;
    }
    if !is_socket && sec == "Socket" && key.starts_with("Exec") {
        return Rule::NotThisType;
    }
    // A slice's `[Slice]` takes the resource-control keys of
    // systemd.resource-control(5), applied to its cgroup directory.
    let is_slice = kind.row().holds_units;
    if is_slice && sec == "Service" {
        return Rule::OtherSection;
    }
    // A scope's `[Scope]` takes what `context::scope` lists, its runtime
    // limit and its stop timeout; it runs no command, so no `[Service]`.
    let is_scope = kind.row().adopts();
    if is_scope && sec == "Service" {
        return Rule::OtherSection;
    }
    let context_key = match sec {
        "Socket" if is_socket => keys::systemd_context_key("Service", key),
        "Scope" if is_scope => {
            keys::systemd_context_key("Service", key).filter(|k| context::scope::takes(*k))
        }
        "Scope" => return Rule::NotThisType,
        "Slice" if is_slice => {
            keys::systemd_context_key("Service", key).filter(|k| context::slice::takes(*k))
        }
        "Slice" => return Rule::NotThisType,
        _ => context_key,
    };
    let own = own_of(sec, key);
    let twin = keys::systemd_twin(sec, key).filter(|_| own.is_none());
    if own.is_none() && twin.is_none() && context_key.is_none() {
        return Rule::Unsupported;
    }
    if twin.is_some_and(|k| !k.applies(kind))
        || (own.is_some() && sec == "Service" && !kind.runs_processes())
    {
        return Rule::NotThisType;
    }
    match (twin, context_key, own) {
        (Some(k), _, _) => Rule::Twin(k),
        (None, Some(k), _) => Rule::Context(k),
        (None, None, Some(read)) => Rule::Own(read),
        (None, None, None) => Rule::Unsupported,
    }
}

/// The section of a service's unit file that a key `key` belongs in:
/// `Unit` where the translator reads it there (`Description=`, `After=`,
/// the conditions …), else `Service` (whose rule then says whether it is
/// taken). What a transient service's properties become
/// (`bus/src/transient/props.rs`, docs/dbus.md).
pub fn service_section(key: &str) -> &'static str {
    match rule_of("Unit", key, UnitType::ForegroundSupervised, false) {
        Rule::Unsupported => "Service",
        _ => "Unit",
    }
}

/// The reader of a key of the translator's own meaning.
fn own_of(sec: &str, key: &str) -> Option<Read> {
    OWN.iter()
        .find(|(s, k, _)| *s == sec && *k == key)
        .map(|&(_, _, read)| read)
}

/// The keys the translator reads by a rule of its own: their value means
/// something else than the YAML key they feed (if any), or they feed none.
pub(super) const OWN: [(&str, &str, Read); 22] = [
    ("Unit", "Documentation", documentation),
    ("Unit", "StopWhenUnneeded", stop_when_unneeded),
    ("Unit", "OnFailureJobMode", on_failure_job_mode),
    ("Service", "BusName", bus_name),
    ("Unit", "RequiresMountsFor", requires_mounts_for),
    ("Unit", "Requires", |r, p, key, v| {
        r.t.deps(&mut r.requires, p, key, v)
    }),
    ("Unit", "BindsTo", |r, p, key, v| {
        // Requires= plus systemd's unit_check_binds_to: the unit stops
        // whenever its bound unit becomes inactive, a clean exit of a
        // service without RemainAfterExit= included, which is a stop
        // propagated from it (docs/systemd-units.md).
        let from = r.requires.len();
        r.t.deps(&mut r.requires, p, key, v);
        for d in r.requires.get(from..).unwrap_or_default() {
            if !r.spec.extras.stop_propagated_from.contains(&d.name) {
                r.spec.extras.stop_propagated_from.push(d.name.clone());
                r.t.origin
                    .push_position(TargetList::StopPropagatedFrom, d.pos);
            }
        }
    }),
    ("Unit", "Wants", |r, p, key, v| {
        r.t.deps(&mut r.wants, p, key, v)
    }),
    ("Unit", "DefaultDependencies", default_dependencies),
    ("Service", "Type", service_type),
    ("Service", "ExecStart", exec_start),
    ("Service", "Restart", restart),
    ("Service", "RestartSec", restart_sec),
    ("Service", "TimeoutStartSec", timeouts),
    ("Service", "TimeoutStopSec", timeouts),
    ("Scope", "TimeoutStopSec", timeouts),
    ("Service", "TimeoutSec", timeouts),
    ("Service", "WorkingDirectory", working_directory),
    ("Service", "PIDFile", pid_file),
    ("Service", "NotifyAccess", notify_access),
    ("Service", "ExitType", exit_type),
    ("Service", "PermissionsStartOnly", permissions_start_only),
];

/// `Documentation=`: each word added to the list, in order, repeats
/// kept (systemd 252 does not deduplicate: its test 15 counts them); an
/// empty value empties it.
fn documentation(r: &mut Reading<'_>, _: Pos, _: &str, v: &str) {
    let docs = &mut r.spec.extras.documentation;
    if v.trim().is_empty() {
        docs.clear();
    }
    docs.extend(v.split_whitespace().map(str::to_string));
}

/// What flotilla does with every unit: one no target needs (any more) is
/// stopped. Only the value is checked.
fn stop_when_unneeded(r: &mut Reading<'_>, p: Pos, _: &str, v: &str) {
    if sd_bool(v).is_none() {
        r.t.error(p, format!("invalid StopWhenUnneeded={v}: not a boolean"));
    }
}

/// flotilla has no job queue: an `OnFailure=` unit is started and no later
/// request cancels that, as `replace-irreversibly` asks. Isolating
/// (switching the target) on a failure is not done.
fn on_failure_job_mode(r: &mut Reading<'_>, p: Pos, _: &str, v: &str) {
    match v {
        "" | "replace" | "replace-irreversibly" => {}
        "fail" | "flush" | "isolate" | "ignore-dependencies" | "ignore-requirements" => r.t.warn(
            p,
            format!("OnFailureJobMode={v} is run as replace: the OnFailure= units are started"),
        ),
        _ => r.t.error(
            p,
            format!(
                "invalid OnFailureJobMode={v} (replace, replace-irreversibly, fail, flush, isolate, ignore-dependencies, ignore-requirements)"
            ),
        ),
    }
}

/// The name the service takes on D-Bus: for `Type=dbus`, its readiness
/// (`ready-bus-name`); for any other type only a label (systemd uses it to
/// map a bus name to the unit).
fn bus_name(r: &mut Reading<'_>, p: Pos, _: &str, v: &str) {
    if v.is_empty() {
        r.spec.extras.ready_bus_name = None;
    } else if let Err(why) = flotilla_units::keys::check::bus_name(v) {
        r.t.error(p, format!("invalid BusName={v}: {why}"));
    } else if r.bus_readiness {
        r.spec.extras.ready_bus_name = Some(v.to_string());
    }
}

/// The mount units of each path and of the directories above it.
fn requires_mounts_for(r: &mut Reading<'_>, p: Pos, key: &str, v: &str) {
    for path in v.split_whitespace() {
        if r.t.absolute(p, key, path).is_none() {
            continue;
        }
        let own = r.t.unit;
        for name in mount::mounts_for(path).into_iter().filter(|m| m != own) {
            r.mounts_for.push(Dep { name, pos: p });
        }
    }
}

fn default_dependencies(r: &mut Reading<'_>, p: Pos, _: &str, v: &str) {
    match sd_bool(v) {
        Some(b) => r.default_deps = b,
        None => {
            r.t.error(p, format!("invalid DefaultDependencies={v}: not a boolean"))
        }
    }
}

/// The type was read first (`translate_at`); here the value is checked
/// and what is run differently is said.
fn service_type(r: &mut Reading<'_>, p: Pos, _: &str, v: &str) {
    match v {
        "" | "simple" | "exec" | "idle" | "notify" | "forking" | "oneshot" | "dbus" => {}
        "notify-reload" => r.t.warn(
            p,
            "Type=notify-reload is run as foreground-notified: reloading by signal is not supported",
        ),
        _ => r.t.error(
            p,
            format!("invalid Type={v} (simple, exec, notify, forking, oneshot, idle)"),
        ),
    }
}

/// An empty value resets the list; a oneshot may have several.
fn exec_start(r: &mut Reading<'_>, p: Pos, key: &str, v: &str) {
    if v.is_empty() {
        r.exec_start.clear();
    }
    for c in r.t.commands(p, key, v) {
        r.exec_start.push((c, p));
    }
}

fn restart(r: &mut Reading<'_>, p: Pos, _: &str, v: &str) {
    let policy = if v.is_empty() {
        Some(RestartPolicy::No)
    } else {
        RestartPolicy::ALL.into_iter().find(|r| r.as_str() == v)
    };
    let Some(policy) = policy else {
        r.t.error(
            p,
            format!(
                "invalid Restart={v} (no, on-success, on-failure, on-abnormal, on-watchdog, on-abort, always)"
            ),
        );
        return;
    };
    r.spec.restart = policy;
    r.restart_at = Some((v.to_string(), p));
}

fn restart_sec(r: &mut Reading<'_>, p: Pos, _: &str, v: &str) {
    if v.is_empty() {
        r.restart_sec = None;
        return;
    }
    match parse_timespan(v) {
        Ok(d) => r.restart_sec = Some(d),
        Err(e) => r.t.error(p, format!("invalid RestartSec={v}: {e}")),
    }
}

/// `TimeoutStartSec=`, `TimeoutStopSec=` and `TimeoutSec=` (both). Empty:
/// back to the defaults; 0 or infinity: no timeout.
fn timeouts(r: &mut Reading<'_>, p: Pos, key: &str, v: &str) {
    let (start, stop) = if v.is_empty() {
        (r.start_default, r.t.default_stop())
    } else {
        match timeout(v) {
            Ok(d) => (d, d),
            Err(e) => {
                r.t.error(p, format!("invalid {key}={v}: {e}"));
                return;
            }
        }
    };
    if key != "TimeoutStopSec" {
        r.spec.start_timeout = start;
    }
    if key != "TimeoutStartSec" {
        r.spec.stop_timeout = stop;
    }
}

/// A leading `-`: a directory that may be missing.
fn working_directory(r: &mut Reading<'_>, p: Pos, key: &str, v: &str) {
    r.spec.extras.working_directory = None;
    let optional = v.starts_with('-');
    r.spec.extras.working_directory_optional = optional.then_some(true);
    let path = v.strip_prefix('-').unwrap_or(v);
    if path == "~" {
        r.t.warn(
            p,
            "WorkingDirectory=~ (the user's home directory) is not supported, ignored",
        );
    } else if !path.is_empty() {
        r.spec.extras.working_directory = r.t.absolute(p, key, path);
    }
}

/// `NotifyAccess=`: whose notify messages are taken, and whether the
/// service gets a notify socket at all (docs/systemd-units.md).
fn notify_access(r: &mut Reading<'_>, p: Pos, _: &str, v: &str) {
    use flotilla_units::spec::NotifyAccess;
    r.spec.extras.notify_access = match v {
        "" => None,
        "none" => Some(NotifyAccess::None),
        "main" => Some(NotifyAccess::Main),
        "exec" => Some(NotifyAccess::Exec),
        "all" => Some(NotifyAccess::All),
        _ => {
            return r.t.error(
                p,
                format!("invalid NotifyAccess={v} (none, main, exec, all)"),
            )
        }
    };
}

/// `ExitType=`: a service is over when its main process exits (`main`),
/// or once its cgroup is empty after that (`cgroup`, docs/systemd-units.md).
fn exit_type(r: &mut Reading<'_>, p: Pos, _: &str, v: &str) {
    use flotilla_units::spec::ExitType;
    r.spec.extras.exit_type = match v {
        "" | "main" => ExitType::Main,
        "cgroup" => ExitType::Cgroup,
        _ => return r.t.error(p, format!("invalid ExitType={v} (main, cgroup)")),
    };
}

/// Only a forking daemon's; a relative path is under `/run`, as systemd
/// has it.
fn pid_file(r: &mut Reading<'_>, p: Pos, _: &str, v: &str) {
    if r.t.kind.row().ready != Ready::Pidfile {
        r.t.warn(p, "PIDFile= is used only with Type=forking, ignored");
    } else if v.is_empty() {
        r.pidfile = None;
    } else if Path::new(v).is_absolute() {
        r.pidfile = Some(PathBuf::from(v));
    } else {
        r.pidfile = Some(Path::new("/run").join(v));
    }
}

/// systemd's old spelling of `+` on every command but `ExecStart=`
/// (applied once every key was read).
fn permissions_start_only(r: &mut Reading<'_>, p: Pos, _: &str, v: &str) {
    match sd_bool(v) {
        Some(b) => r.permissions_start_only = b,
        None => r.t.error(
            p,
            format!("invalid PermissionsStartOnly={v}: not a boolean"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key has one rule of its own: a second row would never be reached.
    #[test]
    fn every_own_key_has_one_row() {
        for (i, (sec, key, _)) in OWN.iter().enumerate() {
            assert!(
                OWN[..i].iter().all(|(s, k, _)| (s, k) != (sec, key)),
                "[{sec}] {key}= has two rows"
            );
        }
    }
}
