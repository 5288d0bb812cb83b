//! `init [OPTIONS] -- CMD [ARG...]` (docs/contract.md §2, docs/pid1.md
//! "The command after `--`"): the convention of tini, dumb-init,
//! catatonit and s6-overlay, where the container's status is its
//! command's.
//!
//! The command is a unit of the set, `cmd`, made here as the log writer
//! is (`logwriter.rs`): the planner starts it once the target is up (it
//! waits for the target, so it runs whether the target came up or failed,
//! and at once when no unit provides it), lists it in `initctl status`,
//! and stops it in order at a shutdown. Its `success-action` and
//! `failure-action` are `exit`: its end, whatever its status, stops every
//! unit, by the planner's rule for those keys. What is its own:
//!
//! - its three streams are the init's (the container's terminal or
//!   pipes), not a log (`runtime/executor.rs` asks [`is_builtin`]);
//! - it starts in the init's working directory and environment;
//! - the init's exit status is its main process's ([`exit_code`]: 128+N
//!   after signal N), kept by the loop when it is reaped.

use crate::settings::{CmdLine, Settings};
use flotilla_systemd::load::LoadedPath;
use flotilla_units::planner::ExitStatus;
use flotilla_units::spec::{Command, Origin, RestartPolicy, UnitAction, UnitSpec, UnitType};

/// The unit's name.
pub const NAME: &str = "cmd";
/// Its origin's file, where a unit file's path would be.
pub const ORIGIN: &str = "(built in: the command after --)";

/// Adds the `cmd` unit to `loaded` when the settings have a command. A
/// unit file of the same name is replaced (with a warning): the command
/// line is what the container was started with.
pub fn add_builtin(settings: &Settings, loaded: &mut LoadedPath) {
    let Some(line) = &settings.cmd else {
        return;
    };
    let before = loaded.units.len();
    loaded.units.retain(|(u, _)| u.name != NAME);
    if loaded.units.len() != before {
        loaded
            .diagnostics
            .push(flotilla_units::diag::Diagnostic::warning(
                ORIGIN,
                flotilla_units::diag::Pos::default(),
                format!("the unit file named `{NAME}` is replaced by the command after --"),
            ));
    }
    let provided = loaded.units.iter().any(|(u, _)| {
        u.name == settings.target || u.provides.iter().any(|p| p == &settings.target)
    });
    loaded.units.push((
        unit(line, provided.then_some(settings.target.as_str())),
        Origin::unplaced(ORIGIN),
    ));
}

/// The unit of `line`, after `target` when a unit provides it.
fn unit(line: &CmdLine, target: Option<&str>) -> UnitSpec {
    let mut u = UnitSpec::new(NAME, UnitType::ForegroundSupervised);
    u.description = Some("the command after --".to_string());
    if let Some(t) = target {
        u.waits_for = vec![t.to_string()].into();
    }
    u.exec_start = Some(Command::new(line.argv.iter().cloned()));
    u.restart = RestartPolicy::No;
    u.extras.working_directory = line.cwd.clone();
    u.extras.working_directory_optional = Some(true);
    u.extras.success_action = Some(UnitAction::Exit);
    u.extras.failure_action = Some(UnitAction::Exit);
    u
}

/// Whether `origin` is the `cmd` unit's.
pub fn is_builtin(origin: &Origin) -> bool {
    origin.file == ORIGIN
}

/// The init's exit status for the command's: its code, or 128+N after
/// signal N, as a shell reports it.
pub fn exit_code(status: ExitStatus) -> u8 {
    match status {
        ExitStatus::Code(c) => u8::try_from(c & 0xff).unwrap_or(1),
        ExitStatus::Signal(s) => u8::try_from(128 + (s & 0x7f)).unwrap_or(255),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn settings(cmd: Option<&[&str]>) -> Settings {
        Settings {
            cmd: cmd.map(|a| CmdLine {
                argv: a.iter().map(|s| s.to_string()).collect(),
                cwd: Some(PathBuf::from("/srv")),
            }),
            ..Settings::new("/units", "default", "/run/init/control.sock")
        }
    }

    #[test]
    fn the_unit_waits_for_the_target_and_ends_the_init() {
        let mut l = LoadedPath::default();
        add_builtin(&settings(None), &mut l);
        assert!(l.units.is_empty());
        // No unit provides the target: the command runs at once.
        add_builtin(&settings(Some(&["app", "-x"])), &mut l);
        let (u, o) = &l.units[0];
        assert!(is_builtin(o));
        assert_eq!(u.name, "cmd");
        assert!(u.waits_for.is_empty());
        assert!(u.exec_start.as_ref().unwrap().argv == ["app", "-x"]);
        assert_eq!(u.extras.working_directory, Some(PathBuf::from("/srv")));
        assert_eq!(u.extras.success_action, Some(UnitAction::Exit));
        assert_eq!(u.extras.failure_action, Some(UnitAction::Exit));
        // With a provider it waits for the target; a unit file named cmd
        // is replaced.
        let mut l = LoadedPath::default();
        let mut def = UnitSpec::new("web", UnitType::Virtual);
        def.provides = vec!["default".to_string()].into();
        l.units.push((def, Origin::unplaced("web.yaml")));
        l.units.push((
            UnitSpec::new("cmd", UnitType::Virtual),
            Origin::unplaced("cmd.yaml"),
        ));
        add_builtin(&settings(Some(&["app"])), &mut l);
        assert_eq!(l.units.len(), 2);
        assert_eq!(l.units[1].0.waits_for.as_slice(), ["default".to_string()]);
        assert_eq!(l.diagnostics.len(), 1);
    }

    #[test]
    fn exit_codes() {
        assert_eq!(exit_code(ExitStatus::Code(0)), 0);
        assert_eq!(exit_code(ExitStatus::Code(3)), 3);
        assert_eq!(exit_code(ExitStatus::Signal(libc::SIGTERM)), 143);
        assert_eq!(exit_code(ExitStatus::Signal(libc::SIGKILL)), 137);
    }
}
