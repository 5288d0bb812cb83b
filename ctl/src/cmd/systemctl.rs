//! The systemctl verbs with systemctl's own output and exit codes
//! (`crate::systemctl` reads the command line). flotilla's model stays
//! declarative: a unit runs because the current target wants it, so
//! `start` and `stop` are transient wants (`super::want`), and `stop` of a
//! unit the target requires says what to do instead (`mask`, `isolate`).

use super::{eprint_line, Ctx};
use crate::client::unexpected;
use crate::command::Systemctl;
use crate::error::{CtlError, EXIT_FAILED, EXIT_OK, EXIT_UNKNOWN};
use crate::systemctl::service;
use flotilla_units::protocol::{ErrorCode, Reply, Request, UnitStatus};
use flotilla_units::state::UnitState;

/// systemctl's exit code for a unit that is not active (LSB "not running").
const EXIT_NOT_ACTIVE: i32 = 3;
/// systemctl's exit code for a unit that is not loaded (LSB "not installed").
const EXIT_NOT_LOADED: i32 = 5;

/// Runs the command.
pub fn run(ctx: &mut Ctx<'_>, what: Systemctl) -> Result<i32, CtlError> {
    match what {
        Systemctl::Status(units) if units.is_empty() => super::status::run(ctx, None, false),
        // Each unit's block, in order, an empty line between them; the
        // exit code is the first unit's that is not 0, as systemctl's.
        Systemctl::Status(units) => {
            let mut code = EXIT_OK;
            let mut shown = false;
            for u in &units {
                let c = match unit(ctx, u)? {
                    None => {
                        eprint_line(&format!("Unit {} could not be found.", service(u)));
                        EXIT_UNKNOWN
                    }
                    Some(s) => {
                        let active = s.state.is_active();
                        if shown {
                            ctx.print("\n")?;
                        }
                        super::status::run(ctx, Some(s.unit), false)?;
                        shown = true;
                        if active {
                            EXIT_OK
                        } else {
                            EXIT_NOT_ACTIVE
                        }
                    }
                };
                if code == EXIT_OK {
                    code = c;
                }
            }
            Ok(code)
        }
        Systemctl::IsActive(units, quiet) => {
            let mut all = true;
            for u in &units {
                let state = unit(ctx, u)?.map(|s| s.state);
                all &= state.is_some_and(UnitState::is_active);
                if !quiet {
                    ctx.print(&format!("{}\n", active_word(state)))?;
                }
            }
            Ok(if all { EXIT_OK } else { EXIT_NOT_ACTIVE })
        }
        Systemctl::IsFailed(units, quiet) => {
            let mut any = false;
            for u in &units {
                let state = unit(ctx, u)?.map(|s| s.state);
                any |= state == Some(UnitState::Failed);
                if !quiet {
                    ctx.print(&format!("{}\n", active_word(state)))?;
                }
            }
            Ok(if any { EXIT_OK } else { EXIT_FAILED })
        }
        Systemctl::Start(units, block) => {
            let mut code = EXIT_OK;
            for u in &units {
                // An instance the init does not have is made from its
                // template when it is started.
                let c = if flotilla_units::unit_name::is_instance(u) && unit(ctx, u)?.is_none() {
                    super::want::start_instance(ctx, u, EXIT_NOT_LOADED, block)?
                } else {
                    each(ctx, std::slice::from_ref(u), "start", |ctx, s| {
                        super::want::start(ctx, s, block)
                    })?
                };
                code = code.max(c);
            }
            Ok(code)
        }
        Systemctl::Stop(units, block) => each(ctx, &units, "stop", |ctx, s| {
            super::want::stop(ctx, s, block)
        }),
        Systemctl::Restart(units) | Systemctl::ReloadOrRestart(units) => {
            each(ctx, &units, "restart", |ctx, s| restart(ctx, s, false))
        }
        Systemctl::TryRestart(units) => {
            each(ctx, &units, "try-restart", |ctx, s| restart(ctx, s, true))
        }
        Systemctl::Isolate(target) => {
            let request = Request::SetTarget {
                target,
                wait: false,
                isolate: true,
            };
            match ctx.call(request)? {
                Reply::Accepted { .. } => Ok(EXIT_OK),
                other => Err(unexpected(&other, "accepted")),
            }
        }
        Systemctl::Mask(units) => super::unit_files::mask(ctx, &units, true),
        Systemctl::Unmask(units) => super::unit_files::mask(ctx, &units, false),
        Systemctl::ListUnits {
            failed,
            kinds,
            no_legend,
        } => list_units(ctx, failed, &kinds, no_legend),
        Systemctl::ListTimers { all, no_legend } => super::timers::run(ctx, all, no_legend),
        Systemctl::ListSockets { all, no_legend } => super::sockets::run(ctx, all, no_legend),
    }
}

/// systemctl's word for a state (`is-active`'s output).
fn active_word(state: Option<UnitState>) -> &'static str {
    match state {
        Some(UnitState::Running | UnitState::Exited) => "active",
        Some(UnitState::Reloading) => "reloading",
        Some(UnitState::Starting) => "activating",
        Some(UnitState::Stopping) => "deactivating",
        Some(UnitState::Failed) => "failed",
        Some(UnitState::Disabled | UnitState::Waiting) | None => "inactive",
    }
}

/// The unit systemctl's name means: `NAME.service` if the init has it,
/// else the name as given (a YAML unit's `web`); `None` if neither.
fn unit(ctx: &mut Ctx<'_>, name: &str) -> Result<Option<UnitStatus>, CtlError> {
    let mut names = vec![service(name)];
    if names[0] != name {
        names.push(name.to_string());
    }
    for n in names {
        match ctx.call(Request::Status { name: Some(n) }) {
            Ok(Reply::Unit(s)) => return Ok(Some(s)),
            Ok(Reply::Error {
                code: ErrorCode::UnknownUnit | ErrorCode::UnknownTarget,
                ..
            })
            | Err(CtlError::Unknown(_)) => {}
            Ok(other) => return Err(unexpected(&other, "unit")),
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// Runs `one` for each unit the init knows; an unknown one is systemctl's
/// "not loaded" (exit 5). The worst exit code wins.
fn each(
    ctx: &mut Ctx<'_>,
    units: &[String],
    verb: &str,
    mut one: impl FnMut(&mut Ctx<'_>, &UnitStatus) -> Result<i32, CtlError>,
) -> Result<i32, CtlError> {
    let mut code = EXIT_OK;
    for u in units {
        let c = match unit(ctx, u)? {
            None => {
                eprint_line(&format!(
                    "Failed to {verb} {}: Unit {} not found.",
                    service(u),
                    service(u)
                ));
                EXIT_NOT_LOADED
            }
            Some(s) => one(ctx, &s)?,
        };
        code = code.max(c);
    }
    Ok(code)
}

/// `restart` (`try-restart`: only an active unit).
fn restart(ctx: &mut Ctx<'_>, s: &UnitStatus, only_active: bool) -> Result<i32, CtlError> {
    if only_active && !s.state.is_active() {
        return Ok(EXIT_OK);
    }
    if !s.required {
        return super::want::start(ctx, s, true);
    }
    match ctx.call(Request::Restart {
        unit: s.unit.clone(),
    })? {
        Reply::Accepted { .. } => Ok(EXIT_OK),
        other => Err(unexpected(&other, "accepted")),
    }
}

/// `list-units`: the units the target wants (and failed ones), as
/// systemctl's columns.
fn list_units(
    ctx: &mut Ctx<'_>,
    failed: bool,
    kinds: &[String],
    no_legend: bool,
) -> Result<i32, CtlError> {
    let units = match ctx.call(Request::List)? {
        Reply::List { units } => units,
        other => return Err(unexpected(&other, "list")),
    };
    let rows: Vec<[String; 5]> = units
        .iter()
        .filter(|u| u.required || u.state != UnitState::Disabled)
        .filter(|u| !failed || u.state == UnitState::Failed)
        .filter(|u| kinds.is_empty() || kinds.iter().any(|k| u.unit.ends_with(&format!(".{k}"))))
        .map(|u| {
            [
                u.unit.clone(),
                u.load_state().to_string(),
                active_word(Some(u.state)).to_string(),
                u.state.to_string(),
                u.description.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let w0 = rows.iter().map(|r| r[0].len()).max().unwrap_or(4).max(4);
    let wl = rows.iter().map(|r| r[1].len()).max().unwrap_or(6).max(6);
    let w1 = rows.iter().map(|r| r[2].len()).max().unwrap_or(6).max(6);
    let w2 = rows.iter().map(|r| r[3].len()).max().unwrap_or(3).max(3);
    let mut out = String::new();
    if !no_legend {
        out.push_str(&format!(
            "{:<w0$} {:<wl$} {:<w1$} {:<w2$} DESCRIPTION\n",
            "UNIT", "LOAD", "ACTIVE", "SUB"
        ));
    }
    for [name, load, active, sub, desc] in &rows {
        out.push_str(&format!(
            "{name:<w0$} {load:<wl$} {active:<w1$} {sub:<w2$} {desc}\n"
        ));
    }
    if !no_legend {
        out.push_str(&format!("\n{} loaded units listed.\n", rows.len()));
    }
    ctx.print(&out)?;
    Ok(EXIT_OK)
}
