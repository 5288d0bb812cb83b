//! `StartTransientUnit` (what `systemd-run --unit NAME CMD` sends): a
//! service made from the properties given, added to the init's transient
//! units (the protocol's `transient-add`, as `initctl run`), and started
//! as a job. A property flotilla does not take, and a scope (a unit made
//! of processes someone else started, which the init cannot adopt), are
//! refused, naming them.

use crate::error::BusError;
use crate::hub::Hub;
use crate::model::Goal;
use crate::units_ops::{self, Outcome};
use flotilla_units::protocol::{Reply, Request};
use flotilla_units::spec::{Command, RestartPolicy, UnitSpec, UnitType};
use std::sync::Arc;
use zbus::zvariant::OwnedValue;

type Props = Vec<(String, OwnedValue)>;
type Aux = Vec<(String, Props)>;

fn bad(name: &str, e: impl std::fmt::Display) -> BusError {
    BusError::invalid_args(format!("property {name}: {e}"))
}

/// The service `props` describe.
fn service(name: &str, props: Props) -> Result<UnitSpec, BusError> {
    let mut unit = UnitSpec::new(name, UnitType::ForegroundSupervised);
    unit.restart = RestartPolicy::No;
    let mut refused = Vec::new();
    for (key, value) in props {
        match key.as_str() {
            "ExecStart" => {
                let cmds = <Vec<(String, Vec<String>, bool)>>::try_from(value)
                    .map_err(|e| bad(&key, e))?;
                let [(path, argv, _ignore)] = <[_; 1]>::try_from(cmds)
                    .map_err(|_| bad(&key, "flotilla runs one command per service start"))?;
                // The path is the program; argv[0] is only its name.
                let argv: Vec<String> = std::iter::once(path)
                    .chain(argv.into_iter().skip(1))
                    .collect();
                unit.exec_start = Some(Command::new(argv));
            }
            "Description" => {
                unit.description = Some(String::try_from(value).map_err(|e| bad(&key, e))?);
            }
            "Type" => {
                let t = String::try_from(value).map_err(|e| bad(&key, e))?;
                unit.kind = match t.as_str() {
                    "simple" | "exec" => UnitType::ForegroundSupervised,
                    "notify" => UnitType::ForegroundNotified,
                    "oneshot" => UnitType::Oneshot,
                    other => {
                        refused.push(format!("Type={other}"));
                        continue;
                    }
                };
            }
            "RemainAfterExit" => {
                unit.remain_after_exit = Some(bool::try_from(value).map_err(|e| bad(&key, e))?);
            }
            // What systemd-run adds for its own bookkeeping.
            "AddRef" | "CollectMode" => {}
            other => refused.push(other.to_string()),
        }
    }
    if !refused.is_empty() {
        return Err(BusError::not_supported(
            &format!("StartTransientUnit with {}", refused.join(", ")),
            "a transient service from D-Bus takes ExecStart, Description, Type \
             (simple, exec, notify, oneshot) and RemainAfterExit",
        ));
    }
    if unit.exec_start.is_none() {
        return Err(BusError::invalid_args(format!("{name} has no ExecStart")));
    }
    Ok(unit)
}

/// `StartTransientUnit(name, mode, properties, auxiliary units)`.
pub async fn start(hub: &Arc<Hub>, msg: &zbus::message::Message) -> Result<Outcome, BusError> {
    let (name, _mode, props, aux): (String, String, Props, Aux) = msg
        .body()
        .deserialize()
        .map_err(|e| BusError::invalid_args(format!("bad arguments: {e}")))?;
    if name.ends_with(".scope") {
        return Err(BusError::not_supported(
            &format!("The scope {name}"),
            "a scope is made of processes someone else started, and flotilla supervises only \
             what it starts: run the command as a service (systemd-run without --scope)",
        ));
    }
    if !name.ends_with(".service") {
        return Err(BusError::not_supported(
            &format!("The transient unit {name}"),
            "flotilla makes transient services only",
        ));
    }
    if !aux.is_empty() {
        return Err(BusError::not_supported(
            "Auxiliary transient units",
            "flotilla makes one transient service per call",
        ));
    }
    let unit = service(&name, props)?;
    let changes = hub.changes();
    match hub
        .ask(Request::TransientAdd {
            unit: Box::new(unit),
        })
        .await?
    {
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
