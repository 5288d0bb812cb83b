//! `StartTransientUnit`: what `systemd-run --unit NAME CMD` sends (a
//! service made from the properties given), and what logind and
//! `systemd-run --scope` send (a scope: the processes they name, adopted
//! by the init into a unit of their own). The unit is added to the init's
//! transient units (the protocol's `transient-add`, as `initctl run`) and
//! started as a job. A service's properties are decoded into the
//! unit-file lines they stand for (`props.rs`) and read by the
//! translator of unit files, so that it takes what a unit file's service
//! does; a property flotilla does not take is refused, naming it.

use crate::error::BusError;
use crate::hub::Hub;
use crate::model::Goal;
use crate::units_ops::{self, Outcome};
use flotilla_systemd::{translate_file, MergedUnit};
use flotilla_units::protocol::{Reply, Request};
use flotilla_units::spec::{CollectMode, UnitSpec};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use zbus::zvariant::OwnedValue;

pub mod props;
pub mod stdio;

/// A transient unit's properties, as `StartTransientUnit` carries them.
pub type Props = Vec<(String, OwnedValue)>;
/// Its auxiliary units: what a trigger starts (`systemd-run --on-active=`,
/// `--path-property=`, `--socket-property=` send the service with the
/// timer, path or socket).
pub type Aux = Vec<(String, Props)>;
/// The search path's drop-ins by unit name (path and text, in the order
/// they apply; see [`service`]); a name not here has none.
pub type Dropins = std::collections::HashMap<String, Vec<(String, String)>>;

/// What a `StartTransientUnit` asks for, read with no I/O: the unit, the
/// processes a scope adopts, its auxiliary units and its file.
#[derive(Debug)]
pub struct Asked {
    /// The unit to add.
    pub unit: UnitSpec,
    /// A scope's processes (none for a service).
    pub adopt: Vec<i32>,
    /// The auxiliary units, added with it, not wanted: a trigger's service.
    pub aux: Vec<UnitSpec>,
    /// The unit file its properties make, which the init writes where
    /// systemd writes it (`/run/systemd/transient`) as it takes the unit:
    /// `systemctl cat` shows it, and a reload reads the unit again from it
    /// with the drop-ins found then.
    pub file: String,
}

fn bad(name: &str, e: impl std::fmt::Display) -> BusError {
    BusError::invalid_args(format!("property {name}: {e}"))
}

/// The service `props` describe: the unit-file lines they stand for
/// ([`props::lines`]), read by the translator of unit files, so that a
/// transient service takes what a unit file's does. A line the
/// translator finds invalid is the caller's `InvalidArgs`; one it would
/// ignore (a key flotilla does not support, or not for this type) is
/// refused, naming the property.
///
/// The drop-ins of the search path for its name (`dropins`: path and
/// text, in the order they apply: `NAME.d/`, the dash prefixes'
/// `a-b-.service.d/`, `service.d/`) apply over the properties, as systemd
/// applies them over the transient unit's file; a problem in one of them
/// is not the caller's, and the translator's warning for it is left out.
fn service(name: &str, props: Props, dropins: &[(String, String)]) -> Result<UnitSpec, BusError> {
    collected(name, props, dropins, "Service").map(|(unit, _)| unit)
}

/// A unit that goes once it has ended, as systemd lets it go (a
/// service; a timer, `systemd-run --on-active=30 CMD`'s, once it has
/// elapsed for good): read as a unit file's section `own`, with its
/// [`collect_mode`].
fn collected(
    name: &str,
    props: Props,
    dropins: &[(String, String)],
    own: &str,
) -> Result<(UnitSpec, String), BusError> {
    let collect = collect_mode(&props)?;
    let (mut unit, text) = from_lines(name, props, dropins, own)?;
    unit.extras.collect_mode = Some(collect);
    Ok((unit, text))
}

/// The unit of a type read from unit-file lines (a service, a slice):
/// `props` as the lines of its section `own` and of `[Unit]`, read with
/// its drop-ins in systemd's order
/// (`flotilla_systemd::load::transient_files`: a slice has been loaded
/// with its drop-ins before, and reads them again after).
fn from_lines(
    name: &str,
    props: Props,
    dropins: &[(String, String)],
    own: &str,
) -> Result<(UnitSpec, String), BusError> {
    let lines = props::lines(props)?;
    let (text, by_line) = props::unit_file_of(&lines, own);
    let pairs: Vec<(&str, &str)> = dropins
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    // The properties alone when there is no drop-in: a file of their own.
    let files = flotilla_systemd::load::transient_files(name, (name, &text), &pairs);
    let mut parsed = match files.split_first() {
        Some((first, rest)) if !rest.is_empty() => MergedUnit::merge(*first, rest).translate(name),
        _ => translate_file(name, name, &text),
    };
    parsed.diagnostics.retain(|d| d.file == name);
    let property = |line: u32| {
        usize::try_from(line)
            .ok()
            .and_then(|i| by_line.get(i).cloned().flatten())
    };
    let mut invalid = Vec::new();
    let mut refused = Vec::new();
    let mut why = Vec::new();
    for d in &parsed.diagnostics {
        let message = d.message.trim_end_matches(", ignored");
        match (d.is_error(), property(d.pos.line)) {
            (true, Some(p)) => invalid.push(format!("property {p}: {message}")),
            (true, None) => invalid.push(message.to_string()),
            (false, p) => {
                let p = p.unwrap_or_else(|| name.to_string());
                if !refused.contains(&p) {
                    refused.push(p.clone());
                }
                why.push(format!("{p}: {message}"));
            }
        }
    }
    // A key not taken first: what is invalid may be so for its want (a
    // timer of `OnTimezoneChange=` alone has nothing else to elapse on).
    if !refused.is_empty() {
        return Err(BusError::not_supported(
            &format!("StartTransientUnit with {}", refused.join(", ")),
            &format!(
                "{} (a transient unit takes the keys its unit file takes, docs/dbus.md)",
                why.join("; ")
            ),
        ));
    }
    if !invalid.is_empty() {
        return Err(BusError::invalid_args(invalid.join("; ")));
    }
    let unit = parsed
        .spec
        .ok_or_else(|| BusError::invalid_args(format!("{name}: not a unit flotilla can run")))?;
    Ok((unit, text))
}

/// When the service leaves the unit set by itself: its `CollectMode`
/// (`systemd-run -G` sends `inactive-or-failed`), else systemd's default,
/// once it is inactive (docs/dbus.md, "Transient services").
fn collect_mode(props: &Props) -> Result<CollectMode, BusError> {
    let Some((key, value)) = props.iter().rev().find(|(k, _)| k == "CollectMode") else {
        return Ok(CollectMode::Inactive);
    };
    let mode = <&str>::try_from(value).map_err(|e| bad(key, e))?;
    match mode {
        "inactive" => Ok(CollectMode::Inactive),
        "inactive-or-failed" => Ok(CollectMode::InactiveOrFailed),
        other => Err(BusError::invalid_args(format!(
            "CollectMode: invalid value `{other}` (inactive, inactive-or-failed)"
        ))),
    }
}

/// A scope: the unit, the processes it adopts, and its unit file.
struct Scope {
    unit: UnitSpec,
    pids: Vec<i32>,
    text: String,
}

/// The scope `props` describe. Its processes (`PIDs`) and its
/// `OOMPolicy` are taken here; the rest are read as the lines of its unit
/// file's `[Scope]` and `[Unit]`, with the drop-ins of its name, as a
/// service's are ([`from_lines`]), so that the file written for it reads
/// back as the same scope at a reload (`context::scope` lists what
/// `[Scope]` takes).
fn scope(name: &str, props: Props, dropins: &[(String, String)]) -> Result<Scope, BusError> {
    let mut pids = Vec::new();
    let mut lines = Vec::new();
    for (key, value) in props {
        match key.as_str() {
            "PIDs" => {
                let given = <Vec<u32>>::try_from(value).map_err(|e| bad(&key, e))?;
                for pid in given {
                    let pid = i32::try_from(pid).map_err(|_| bad(&key, "not a PID"))?;
                    pids.push(pid);
                }
            }
            // systemd 255's logind sends pidfds first, and PIDs when the
            // manager answers that it does not know the property.
            "PIDFDs" => {
                return Err(BusError {
                    name: "org.freedesktop.DBus.Error.UnknownProperty",
                    message: "PIDFDs: give the scope's processes as PIDs".to_string(),
                })
            }
            // What becomes of the scope when the kernel's OOM killer kills
            // one of its processes: they are not the init's children, so
            // it sees no such kill, and the scope goes on: `continue`.
            "OOMPolicy" => {
                let v = String::try_from(value).map_err(|e| bad(&key, e))?;
                if v != "continue" {
                    return Err(BusError::not_supported(
                        &format!("OOMPolicy={v}"),
                        "flotilla does not watch the OOM killer's kills in a scope: it goes on \
                         (OOMPolicy=continue)",
                    ));
                }
            }
            _ => lines.push((key, value)),
        }
    }
    if pids.is_empty() {
        return Err(BusError::invalid_args(format!(
            "{name}: a scope is made of running processes, and PIDs names none"
        )));
    }
    let (unit, text) = from_lines(name, lines, dropins, "Scope")?;
    Ok(Scope { unit, pids, text })
}

/// The unit a `StartTransientUnit(name, mode, properties, auxiliary
/// units)` asks for, or why it is refused (fuzzed: `fuzz/`, docs/fuzzing.md).
pub fn asked(name: &str, props: Props, aux: Aux) -> Result<Asked, BusError> {
    asked_with(name, props, aux, &Dropins::new())
}

/// The types `StartTransientUnit` makes, each with the section of its
/// unit file its properties are lines of, and why no other.
const MADE: ([(&str, &str); 7], &str) = (
    [
        (".service", "Service"),
        (".scope", "Scope"),
        (".slice", "Slice"),
        (".timer", "Timer"),
        (".mount", "Mount"),
        (".path", "Path"),
        (".socket", "Socket"),
    ],
    "flotilla makes transient services, scopes, slices, timers, mounts, paths and sockets only",
);

/// The types that take auxiliary units: the triggers, each with the
/// service it starts (`systemd-run --on-active=`, `--path-property=`,
/// `--socket-property=` send it with them).
const TRIGGERS: [&str; 3] = [".timer", ".path", ".socket"];

/// [`asked`] with the search path's drop-ins for the names of the unit
/// and of its auxiliary units (see [`service`]).
pub fn asked_with(
    name: &str,
    props: Props,
    aux: Aux,
    dropins: &Dropins,
) -> Result<Asked, BusError> {
    let Some(&(_, own)) = MADE.0.iter().find(|(s, _)| name.ends_with(s)) else {
        return Err(BusError::not_supported(
            &format!("The transient unit {name}"),
            MADE.1,
        ));
    };
    let of = |n: &str| dropins.get(n).map_or(&[][..], Vec::as_slice);
    if !aux.is_empty() && !TRIGGERS.iter().any(|t| name.ends_with(t)) {
        return Err(BusError::not_supported(
            &format!("Auxiliary transient units of {name}"),
            "flotilla takes auxiliary units with a timer, a path or a socket only \
             (the service it starts)",
        ));
    }
    let mut extra = Vec::new();
    for (n, p) in aux {
        if !n.ends_with(".service") {
            return Err(BusError::not_supported(
                &format!("The auxiliary transient unit {n}"),
                "a trigger's auxiliary unit is the service it starts",
            ));
        }
        extra.push(checked(service(&n, p, of(&n))?)?);
    }
    let asked = if name.ends_with(".slice") {
        let (unit, text) = from_lines(name, props, of(name), own)?;
        Asked {
            unit,
            adopt: Vec::new(),
            aux: Vec::new(),
            file: text,
        }
    } else if name.ends_with(".scope") {
        let Scope { unit, pids, text } = scope(name, props, of(name))?;
        Asked {
            unit,
            adopt: pids,
            aux: Vec::new(),
            file: text,
        }
    } else {
        let (unit, text) = collected(name, props, of(name), own)?;
        Asked {
            unit,
            adopt: Vec::new(),
            aux: extra,
            file: text,
        }
    };
    // An auxiliary unit is what the trigger starts, or it would be added
    // for nothing (a path's `Unit=` naming another): a socket of
    // `Accept=yes` starts instances of a template (`run-u7@.service`),
    // not systemd-run's `run-u7.service`, which systemd loads and never
    // starts.
    let triggers = &asked.unit.extras.triggers;
    if let Some(stray) = asked.aux.iter().find(|a| !triggers.contains(&a.name)) {
        return Err(BusError::not_supported(
            &format!("The auxiliary transient unit {}", stray.name),
            &format!(
                "{name} starts {}, not {} (docs/dbus.md, \"Transient sockets\" for Accept=yes)",
                triggers.join(", "),
                stray.name
            ),
        ));
    }
    Ok(Asked {
        unit: checked(asked.unit)?,
        ..asked
    })
}

/// The init's own check of a unit given whole, here, so that a value it
/// would refuse (an empty program, a name with a blank) is the caller's
/// `InvalidArgs`, naming the property's key.
fn checked(unit: UnitSpec) -> Result<UnitSpec, BusError> {
    flotilla_units::keys::validate(unit).map_err(|problems| {
        let why: Vec<String> = problems.iter().map(ToString::to_string).collect();
        BusError::invalid_args(why.join("; "))
    })
}

/// `StartTransientUnit(name, mode, properties, auxiliary units)`.
pub async fn start(hub: &Arc<Hub>, msg: &zbus::message::Message) -> Result<Outcome, BusError> {
    let (name, _mode, mut props, aux): (String, String, Props, Aux) = msg
        .body()
        .deserialize()
        .map_err(|e| BusError::invalid_args(format!("bad arguments: {e}")))?;
    let passed = stdio::take(&mut props)?;
    if !passed.is_empty() && !name.ends_with(".service") {
        return Err(BusError::invalid_args(format!(
            "{name}: only a service takes StandardInputFileDescriptor and the like"
        )));
    }
    let mut dropins = Dropins::new();
    let names = std::iter::once(&name).chain(aux.iter().map(|(n, _)| n));
    for n in names {
        dropins.insert(n.clone(), crate::unit_files::dropins_of(hub, n).await?);
    }
    let Asked {
        unit,
        adopt,
        aux,
        file,
    } = asked_with(&name, props, aux, &dropins)?;
    let changes = hub.changes();
    let request = Request::TransientAdd {
        unit: Box::new(unit),
        adopt,
        stdio: passed.iter().map(|(s, _)| *s).collect(),
        aux,
        file: Some(file),
    };
    let fds: Vec<RawFd> = passed.iter().map(|(_, fd)| fd.as_raw_fd()).collect();
    match hub.ask_passing(request, &fds).await? {
        Reply::Applied(_) => {}
        other => return Err(BusError::from_init(&other, &format!("add {name}"))),
    }
    Ok(units_ops::job_for(
        hub,
        &name,
        &name,
        Goal::Up,
        changes,
        "start",
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
#[path = "timer_tests.rs"]
mod timer_tests;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
#[path = "mount_tests.rs"]
mod mount_tests;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
#[path = "trigger_tests.rs"]
mod trigger_tests;
