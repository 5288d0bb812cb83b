//! One D-Bus connection: its method calls are read off the connection
//! and each answered in a task of its own, by the object it names —
//! the manager (`/org/freedesktop/systemd1`), a unit
//! (`…/unit/ESCAPED`, for any name: one the init does not have answers
//! as systemd's `not-found`), a job (`…/job/N`) — with
//! `org.freedesktop.DBus.Properties`, `Introspectable` and `Peer` on each.
//! A change is allowed to root only ([`Caller`]). On the system bus, the
//! bus's own activation requests are served too (`crate::activation`), and
//! its name changes told to the init (`crate::bus_names`).

use crate::answer::Answer;
use crate::error::BusError;
use crate::escape::{job_of_path, unit_of_path, MANAGER_PATH};
use crate::hub::Hub;
use crate::introspect::{self, Interface, UNIT_METHODS};
use crate::manager::{self, MUTATING};
use crate::model::systemd_name;
use crate::props::{self, Props, JOB, MANAGER, UNIT};
use crate::units_ops::Outcome;
use std::sync::Arc;
use zbus::zvariant::Value;

/// A scope's type interface.
const SCOPE: &str = "org.freedesktop.systemd1.Scope";

/// A service's type interface.
const SERVICE: &str = "org.freedesktop.systemd1.Service";

/// The object that stands for the caller's own unit.
const SELF_PATH: &str = "/org/freedesktop/systemd1/unit/self";
use tokio_stream::StreamExt;
use zbus::message::{Message, Type};

/// Who is calling.
#[derive(Debug, Clone, Copy)]
pub enum Caller {
    /// A peer-to-peer connection: its user and process, from
    /// `SO_PEERCRED`.
    Peer(u32, i32),
    /// The system bus: the user is asked of the bus per message.
    Bus,
}

/// Serves a connection until it closes.
pub async fn serve(hub: Arc<Hub>, conn: zbus::Connection, caller: Caller) {
    let stream = zbus::MessageStream::from(&conn);
    serve_stream(hub, conn, caller, stream).await;
}

/// [`serve`] with the connection's message stream opened beforehand (on
/// the system bus: before the name is taken, so that nothing the bus
/// sends on it is missed).
pub async fn serve_stream(
    hub: Arc<Hub>,
    conn: zbus::Connection,
    caller: Caller,
    mut stream: zbus::MessageStream,
) {
    hub.add_peer(conn.clone());
    if let Caller::Bus = caller {
        crate::bus_names::start(&hub, &conn).await;
    }
    while let Some(msg) = stream.next().await {
        let Ok(msg) = msg else { continue };
        if let (Caller::Bus, Some(unit)) = (caller, crate::activation::request(&msg)) {
            tokio::spawn(crate::activation::activate(hub.clone(), conn.clone(), unit));
            continue;
        }
        // In order, here: a name taken and given up again must reach the
        // init in that order.
        if let (Caller::Bus, Some((name, owned))) = (caller, crate::bus_names::change(&msg)) {
            crate::bus_names::changed(&hub, name, owned).await;
            continue;
        }
        if msg.message_type() != Type::MethodCall {
            continue;
        }
        let (hub, conn) = (hub.clone(), conn.clone());
        tokio::spawn(async move { handle(hub, conn, msg, caller).await });
    }
}

async fn uid_of(conn: &zbus::Connection, msg: &Message, caller: Caller) -> Option<u32> {
    match caller {
        Caller::Peer(uid, _) => Some(uid),
        Caller::Bus => ask_bus(conn, msg, "GetConnectionUnixUser").await,
    }
}

/// The caller's process (`/org/freedesktop/systemd1/unit/self` is its
/// unit).
async fn pid_of(conn: &zbus::Connection, msg: &Message, caller: Caller) -> Option<i32> {
    match caller {
        Caller::Peer(_, pid) => Some(pid).filter(|&p| p > 0),
        Caller::Bus => ask_bus(conn, msg, "GetConnectionUnixProcessID")
            .await
            .and_then(|p| i32::try_from(p).ok()),
    }
}

/// What the bus says of the message's sender (`member`: its user or its
/// process).
async fn ask_bus(conn: &zbus::Connection, msg: &Message, member: &str) -> Option<u32> {
    let header = msg.header();
    let sender = header.sender()?.to_string();
    let reply = conn
        .call_method(
            Some("org.freedesktop.DBus"),
            "/org/freedesktop/DBus",
            Some("org.freedesktop.DBus"),
            member,
            &(sender,),
        )
        .await
        .ok()?;
    reply.body().deserialize::<u32>().ok()
}

async fn handle(hub: Arc<Hub>, conn: zbus::Connection, msg: Message, caller: Caller) {
    let header = msg.header();
    let mut path = header.path().map(|p| p.to_string()).unwrap_or_default();
    if path == SELF_PATH {
        // The caller's own unit, as systemd resolves it.
        let pid = pid_of(&conn, &msg, caller).await;
        if let Some(s) = crate::manager::unit_of_pid(&hub, pid.unwrap_or(0)).await {
            path = crate::escape::unit_path(&systemd_name(&s));
        }
    }
    let iface = header
        .interface()
        .map(|i| i.to_string())
        .unwrap_or_default();
    let member = header.member().map(|m| m.to_string()).unwrap_or_default();
    let outcome = async {
        let properties = iface == "org.freedesktop.DBus.Properties";
        if (MUTATING.contains(&member.as_str()) && !properties) || (properties && member == "Set") {
            let uid = uid_of(&conn, &msg, caller).await.unwrap_or(u32::MAX);
            if uid != 0 {
                return Err(BusError::access_denied(&member, uid));
            }
        }
        if path == MANAGER_PATH && member == "AttachProcessesToUnit" {
            // Any user may ask: the init judges each process by who asks.
            let who = crate::attach::Who {
                uid: uid_of(&conn, &msg, caller).await,
                pid: pid_of(&conn, &msg, caller).await,
            };
            let args = msg
                .body()
                .deserialize()
                .map_err(|e| BusError::invalid_args(format!("bad arguments: {e}")))?;
            return crate::attach::attach_to_unit(&hub, who, args).await;
        }
        dispatch(&hub, &path, &iface, &member, &msg).await
    }
    .await;
    match outcome {
        Ok((answer, pending)) => {
            // The answer goes out before the job is followed, so that the
            // caller knows the job's path before its JobRemoved.
            let _ = answer.send(&conn, &header).await;
            for p in pending {
                tokio::spawn(crate::jobs::follow(hub.clone(), p));
            }
        }
        Err(e) => {
            let _ = conn.reply_error(&header, e.name, &(e.message,)).await;
        }
    }
}

fn plain(a: Answer) -> Result<Outcome, BusError> {
    Ok((a, Vec::new()))
}

async fn dispatch(
    hub: &Arc<Hub>,
    path: &str,
    iface: &str,
    member: &str,
    msg: &Message,
) -> Result<Outcome, BusError> {
    match (iface, member) {
        ("org.freedesktop.DBus.Peer", "Ping") => return plain(Answer::Empty),
        ("org.freedesktop.DBus.Peer", "GetMachineId") => {
            let id = std::fs::read_to_string("/etc/machine-id").unwrap_or_default();
            return plain(Answer::Str(id.trim().to_string()));
        }
        // A client that takes the socket for a bus (busctl) says hello
        // and adds matches; a peer-to-peer socket has no bus to do it.
        ("org.freedesktop.DBus", "Hello") => return plain(Answer::Str(":1.1".into())),
        ("org.freedesktop.DBus", "AddMatch" | "RemoveMatch") => return plain(Answer::Empty),
        _ => {}
    }
    let object = Object::of(hub, path).await?;
    match (iface, member) {
        ("org.freedesktop.DBus.Introspectable", "Introspect") => {
            plain(Answer::Str(object.introspect(hub).await?))
        }
        ("org.freedesktop.DBus.Properties", "Get") => {
            let (i, name): (String, String) = msg
                .body()
                .deserialize()
                .map_err(|e| BusError::invalid_args(e.to_string()))?;
            let all = object.props(hub, &i, Some(&name)).await?;
            match all.into_iter().find(|(n, _)| *n == name) {
                Some((_, v)) => plain(Answer::Var(v)),
                None => Err(BusError {
                    name: "org.freedesktop.DBus.Error.UnknownProperty",
                    message: format!("Unknown property or interface: {i}.{name}"),
                }),
            }
        }
        ("org.freedesktop.DBus.Properties", "GetAll") => {
            let (i,): (String,) = msg
                .body()
                .deserialize()
                .map_err(|e| BusError::invalid_args(e.to_string()))?;
            plain(Answer::Dict(props::dict(
                object.props(hub, &i, None).await?,
            )))
        }
        ("org.freedesktop.DBus.Properties", "Set") => {
            let (i, name, value): (String, String, zbus::zvariant::OwnedValue) = msg
                .body()
                .deserialize()
                .map_err(|e| BusError::invalid_args(e.to_string()))?;
            match (&object, i.as_str(), name.as_str()) {
                (Object::Manager, props::MANAGER, "LogLevel" | "LogTarget")
                | (Object::LogControl, props::LOG_CONTROL, "LogLevel" | "LogTarget") => {
                    crate::manager::set_log(hub, &name, value).await
                }
                (Object::Manager, props::MANAGER, "ServiceWatchdogs") => {
                    crate::manager::set_service_watchdogs(hub, value).await
                }
                _ => Err(BusError {
                    name: "org.freedesktop.DBus.Error.PropertyReadOnly",
                    message: format!(
                        "{i}.{name} is read-only: flotilla's settable properties are the \
                         manager's LogLevel, LogTarget and ServiceWatchdogs (and LogControl1's \
                         LogLevel and LogTarget); a unit's \
                         settings come from its unit file"
                    ),
                }),
            }
        }
        _ => object.call(hub, iface, member, msg).await,
    }
}

/// The object a path names.
enum Object {
    Root(String),
    Manager,
    /// `/org/freedesktop/LogControl1`: the manager's log level and target,
    /// where `systemd-analyze log-level` reads and sets them.
    LogControl,
    Unit(String, Option<Box<flotilla_units::protocol::UnitStatus>>),
    /// A mount point no unit of the init's stands for (`-.mount`), as
    /// systemd's unit for it (`crate::mounted`).
    Mounted(String, Box<crate::mounted::TableMount>),
    /// `init.scope`, the manager itself, when the init is PID 1 and has
    /// no unit of that name (`crate::listed`).
    InitScope,
    Job(u32, crate::hub::Job),
}

/// When the init started ([`crate::procs::init_started`]), read once: it
/// does not change while busd runs, and every read of the manager's
/// properties (each `systemctl status`) would read `/proc` again.
fn init_started() -> (u64, u64) {
    static STARTED: std::sync::OnceLock<(u64, u64)> = std::sync::OnceLock::new();
    *STARTED.get_or_init(crate::procs::init_started)
}

impl Object {
    async fn of(hub: &Hub, path: &str) -> Result<Object, BusError> {
        if path == MANAGER_PATH {
            return Ok(Object::Manager);
        }
        if path == props::LOG_CONTROL_PATH {
            return Ok(Object::LogControl);
        }
        if let Some(name) = unit_of_path(path) {
            let s = hub.find_or_load(&name).await?;
            if s.is_none() {
                if let Some(m) = crate::mounted::find_mount(&name) {
                    return Ok(Object::Mounted(name, Box::new(m)));
                }
                if name == crate::listed::INIT_SCOPE && crate::listed::is_pid1(hub).await? {
                    return Ok(Object::InitScope);
                }
            }
            return Ok(Object::Unit(name, s.map(Box::new)));
        }
        if let Some(id) = job_of_path(path) {
            return match hub.job(id) {
                Some(j) => Ok(Object::Job(id, j)),
                None => Err(BusError::no_such_job(id)),
            };
        }
        if MANAGER_PATH.starts_with(path)
            || path == "/org/freedesktop/systemd1/unit"
            || path == "/org/freedesktop/systemd1/job"
        {
            return Ok(Object::Root(path.to_string()));
        }
        Err(BusError {
            name: "org.freedesktop.DBus.Error.UnknownObject",
            message: format!("Unknown object '{path}'."),
        })
    }

    /// The interfaces and their properties; `wanted`: the one property
    /// asked for, when only one is.
    async fn interfaces(
        &self,
        hub: &Hub,
        wanted: Option<&str>,
    ) -> Result<Vec<(&'static str, Props)>, BusError> {
        Ok(match self {
            Object::Root(_) => vec![],
            Object::LogControl => vec![(
                props::LOG_CONTROL,
                props::log_control(&hub.system().await?.log),
            )],
            Object::Manager => {
                // Most of the manager's properties need nothing of the
                // init (logind, `systemd-update-utmp` and `systemctl` read
                // them often): every unit's status is asked only for
                // those that count units.
                let counts = wanted.is_none_or(props::manager_needs_status);
                let sys = if counts {
                    Some(hub.system().await?)
                } else {
                    None
                };
                let jobs = u32::try_from(hub.jobs().len()).unwrap_or(u32::MAX);
                vec![(MANAGER, props::manager(sys.as_ref(), jobs, init_started()))]
            }
            Object::Mounted(name, m) => vec![
                (
                    crate::mounted::MOUNT,
                    crate::mounted::mount(&m.params, "success"),
                ),
                (UNIT, crate::mounted::unit(name, m)),
            ],
            Object::InitScope => crate::listed::init_scope(),
            Object::Unit(name, None) => props::not_found_type(name)
                .into_iter()
                .chain([(UNIT, props::not_found(name))])
                .collect(),
            Object::Unit(_, Some(s)) => {
                let job = hub.job_of(&systemd_name(s)).map(|(id, _)| id);
                let mut unit = props::unit(s, job);
                // The bus side's own state of the unit (crate::markers).
                let markers = crate::markers::names(hub.markers_of(&s.unit));
                unit.push(("Markers", Value::from(markers)));
                // A transient unit's file, where the init wrote it.
                if s.source.starts_with("transient") && wanted.is_none_or(|n| n == "FragmentPath") {
                    if let Some(path) =
                        crate::unit_files::transient_file(hub, &systemd_name(s)).await
                    {
                        crate::dict::set(&mut unit, "FragmentPath", Value::from(path));
                    }
                }
                // Read from the unit path: only when asked for, one
                // listing of it for the three.
                if wanted.is_none_or(|n| props::FROM_PATH.contains(&n)) {
                    let now = crate::unit_files::on_path(hub, s).await;
                    let resolved = now.as_ref().map(|o| &o.unit);
                    let paths = crate::unit_files::dropin_paths(resolved);
                    let changed = crate::need_reload::need_reload(s, resolved);
                    crate::dict::set(&mut unit, "DropInPaths", Value::from(paths));
                    crate::dict::set(&mut unit, "NeedDaemonReload", Value::from(changed));
                    // timedated reads it to decide whether to enable or
                    // disable the NTP unit (docs/dbus.md, "The daemons
                    // beside the manager").
                    if let Some(state) = now.as_ref().and_then(|o| o.file_state) {
                        crate::dict::set(&mut unit, "UnitFileState", Value::from(state));
                    }
                }
                // A mount unit's: what is mounted at its place now, or
                // else what its file mounts there.
                if let Some(file) = s.mount.as_ref() {
                    let now =
                        crate::mounted::find(&systemd_name(s)).map(|e| crate::mounted::params(&e));
                    if let (Some(now), Some(mut d)) = (now.as_ref(), s.dependencies.clone()) {
                        crate::mounted::init_unit_deps(&mut d, file, now);
                        crate::mounted::set_dependencies(&mut unit, d);
                    }
                    let m = crate::mounted::mount(
                        now.as_ref().unwrap_or(file),
                        crate::model::result(s),
                    );
                    return Ok(vec![(crate::mounted::MOUNT, m), (UNIT, unit)]);
                }
                // systemd's order: the type interface's, then the unit's.
                vec![
                    (props::type_interface_of(s), props::type_props(s)),
                    (UNIT, unit),
                ]
            }
            Object::Job(id, j) => vec![(JOB, props::job(*id, &j.unit, j.kind, j.state()))],
        })
    }

    /// The properties of interface `i` (`""`: of every interface);
    /// `wanted` as for [`Object::interfaces`].
    async fn props(&self, hub: &Hub, i: &str, wanted: Option<&str>) -> Result<Props, BusError> {
        let all = self.interfaces(hub, wanted).await?;
        let known = all.iter().any(|(n, _)| *n == i);
        if !i.is_empty() && !known {
            return Err(BusError {
                name: "org.freedesktop.DBus.Error.UnknownInterface",
                message: format!("Unknown interface {i}."),
            });
        }
        Ok(all
            .into_iter()
            .filter(|(n, _)| i.is_empty() || *n == i)
            .flat_map(|(_, p)| p)
            .collect())
    }

    async fn introspect(&self, hub: &Hub) -> Result<String, BusError> {
        let ifaces = self.interfaces(hub, None).await?;
        let children: Vec<String> = match self {
            Object::Root(p) if p == "/org/freedesktop/systemd1/unit" => hub
                .list()
                .await?
                .iter()
                .map(|s| crate::escape::escape(&systemd_name(s)))
                .collect(),
            Object::Root(p) if p == "/org/freedesktop/systemd1/job" => {
                hub.jobs().iter().map(|(id, _)| id.to_string()).collect()
            }
            Object::Root(p) => {
                let rest = MANAGER_PATH.strip_prefix(p.as_str()).unwrap_or("");
                let rest = rest.trim_start_matches('/');
                rest.split('/')
                    .next()
                    .map(str::to_string)
                    .into_iter()
                    .collect()
            }
            Object::Manager => vec!["unit".into(), "job".into()],
            _ => vec![],
        };
        let list: Vec<Interface<'_>> = ifaces
            .into_iter()
            .map(|(name, p)| Interface {
                name,
                methods: match name {
                    MANAGER => introspect::MANAGER_METHODS,
                    UNIT => UNIT_METHODS,
                    SCOPE => introspect::SCOPE_METHODS,
                    SERVICE => introspect::SERVICE_METHODS,
                    _ => &[],
                },
                manager_signals: name == MANAGER,
                props: p,
            })
            .collect();
        Ok(introspect::xml(&list, &children))
    }

    async fn call(
        &self,
        hub: &Arc<Hub>,
        iface: &str,
        member: &str,
        msg: &Message,
    ) -> Result<Outcome, BusError> {
        match (self, iface) {
            (Object::Manager, MANAGER | "") => manager::call(hub, member, msg).await,
            (Object::Unit(name, _), UNIT | "") => match member {
                "Start" | "Stop" | "Restart" | "Reload" | "TryRestart" | "ReloadOrRestart"
                | "ReloadOrTryRestart" => {
                    let (mode,): (String,) = msg
                        .body()
                        .deserialize()
                        .map_err(|e| BusError::invalid_args(e.to_string()))?;
                    manager::unit_job(hub, member, name, &mode).await
                }
                "ResetFailed" => manager::reset_failed_unit(hub, name).await,
                "Clean" => {
                    let (what,): (Vec<String>,) = msg
                        .body()
                        .deserialize()
                        .map_err(|e| BusError::invalid_args(e.to_string()))?;
                    crate::unit_actions::clean(hub, name, what).await
                }
                "Ref" | "Unref" => crate::unit_actions::reference(hub, name).await,
                "Freeze" | "Thaw" => crate::unit_actions::freeze(hub, name, member == "Thaw").await,
                "Kill" => {
                    let (whom, signal): (String, i32) = msg
                        .body()
                        .deserialize()
                        .map_err(|e| BusError::invalid_args(e.to_string()))?;
                    crate::unit_actions::kill(hub, name, &whom, signal).await
                }
                other => Err(manager::unmapped(other)),
            },
            // A stop unmounts it, as systemd's (the root's is refused).
            (Object::Mounted(name, m), UNIT | "") if member == "Stop" => {
                crate::units_ops::stop_mount_point(hub, name, &m.entry).await
            }
            // flotilla has no unit to start or reload it.
            (Object::Mounted(name, _), UNIT | "") => Err(crate::mounted::refused(name)),
            (Object::InitScope, UNIT | SCOPE | "") => Err(BusError {
                name: "org.freedesktop.systemd1.UnitIsPerpetual",
                message: format!(
                    "Unit {} is the manager itself: it can neither start, stop nor reload it.",
                    crate::listed::INIT_SCOPE
                ),
            }),
            (Object::Unit(name, _), SERVICE) if member == "BindMount" => {
                let (source, destination, read_only, mkdir): (String, String, bool, bool) = msg
                    .body()
                    .deserialize()
                    .map_err(|e| BusError::invalid_args(e.to_string()))?;
                crate::unit_actions::bind_mount(hub, name, source, destination, read_only, mkdir)
                    .await
            }
            // What logind calls on a session's scope at its logout.
            (Object::Unit(name, _), SCOPE) if member == "Abandon" => {
                crate::unit_actions::abandon_scope(hub, name).await
            }
            _ => Err(BusError {
                name: "org.freedesktop.DBus.Error.UnknownMethod",
                message: format!("Unknown method {iface}.{member}."),
            }),
        }
    }
}
