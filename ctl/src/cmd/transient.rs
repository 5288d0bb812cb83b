//! `initctl run`, `initctl add` and `initctl stop-transient`: transient
//! units for debugging (docs/contract.md §3b), kept by the init in its transient set
//! `initctl` until stopped or a reboot. `add` reads and checks the unit
//! file here, with the loaders the init uses, and sends the unit.

use super::{eprint_line, Ctx};
use crate::client::unexpected;
use crate::error::{CtlError, EXIT_FAILED, EXIT_OK};
use flotilla_systemd::translate_file;
use flotilla_units::load::parse_yaml;
use flotilla_units::protocol::{ErrorCode, Reply, Request};
use flotilla_units::spec::{Command, RestartPolicy, UnitSpec, UnitType};
use std::path::Path;

/// The longest unit file `add` reads.
const MAX_UNIT_FILE: u64 = 1 << 20;

/// `run [--name N] [--depends-on T]... -- COMMAND...`.
pub fn run(
    ctx: &mut Ctx<'_>,
    name: Option<String>,
    depends_on: Vec<String>,
    argv: Vec<String>,
) -> Result<i32, CtlError> {
    // No name: the init names it `run-N`.
    let mut unit = UnitSpec::new(name.unwrap_or_default(), UnitType::ForegroundSupervised);
    unit.exec_start = Some(Command::new(argv));
    unit.depends_on = depends_on.into();
    unit.restart = RestartPolicy::No;
    send(ctx, unit)
}

/// `add FILE`: a YAML unit (`.yaml`, `.yml`) or a systemd unit file.
pub fn add(ctx: &mut Ctx<'_>, file: &Path) -> Result<i32, CtlError> {
    let shown = file.display().to_string();
    let text = match std::fs::metadata(file).and_then(|m| {
        if m.len() > MAX_UNIT_FILE {
            Err(std::io::Error::other("larger than 1 MiB"))
        } else {
            std::fs::read_to_string(file)
        }
    }) {
        Ok(t) => t,
        Err(e) => return Err(CtlError::Failed(format!("{shown}: {e}"))),
    };
    let yaml = matches!(
        file.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    );
    let parsed = if yaml {
        parse_yaml(&shown, &text)
    } else {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        translate_file(&shown, name, &text)
    };
    for d in &parsed.diagnostics {
        eprint_line(&d.to_string());
    }
    match parsed.spec {
        Some(unit) => send(ctx, unit),
        None => {
            eprint_line(&format!("initctl: {shown} has errors; nothing added"));
            Ok(EXIT_FAILED)
        }
    }
}

/// Sends one unit; prints its name.
fn send(ctx: &mut Ctx<'_>, unit: UnitSpec) -> Result<i32, CtlError> {
    match ctx.call(Request::TransientAdd {
        unit: Box::new(unit),
        adopt: Vec::new(),
        stdio: Vec::new(),
        aux: Vec::new(),
        file: None,
    })? {
        Reply::Applied(a) => {
            for w in &a.warnings {
                eprint_line(w);
            }
            for n in &a.added {
                ctx.print(&format!("{n}: added\n"))?;
            }
            Ok(EXIT_OK)
        }
        Reply::Error {
            code: ErrorCode::Invalid,
            message,
            details,
        } => {
            eprint_line(&format!("initctl: {message}"));
            for d in &details {
                eprint_line(d);
            }
            Ok(EXIT_FAILED)
        }
        other => Err(unexpected(&other, "applied")),
    }
}

/// `stop-transient NAME`.
pub fn stop(ctx: &mut Ctx<'_>, name: String) -> Result<i32, CtlError> {
    match ctx.call(Request::StopTransient { name: name.clone() })? {
        Reply::Applied(_) => {
            ctx.print(&format!("{name}: stopped and removed\n"))?;
            Ok(EXIT_OK)
        }
        other => Err(unexpected(&other, "applied")),
    }
}
