//! The log writer the init runs itself (`docs/operations.md`, "Log
//! files"): with a log directory and no unit providing `log-writer`, the
//! unit set gets `flotilla-logd`, made here, so that `--log-dir` alone
//! puts the units' lines into the directory. It is an ordinary unit of the
//! set: listed by `initctl status`, restarted when it dies, kept to the end
//! of a shutdown by the log feed (`runtime/logfeed.rs`), and wanted for as
//! long as it is in the set (`runtime/unitset.rs`), whatever the target. A
//! unit file providing `log-writer` (or named `flotilla-logd`, or masking
//! that name) takes its place.
//!
//! The binary is `flotilla-logd` beside the init's own (`/sbin/flotilla`
//! and `/sbin/flotilla-logd` of the Debian install, `target/*/init` and
//! `target/*/flotilla-logd` of a build), else the one `PATH` finds.

use crate::args::Settings;
use crate::sys::Sys;
use flotilla_systemd::load::LoadedPath;
use flotilla_units::spec::{Command, Origin, RestartPolicy, UnitSpec, UnitType};
use std::path::PathBuf;
use std::time::Duration;

/// The built-in writer's unit name, and its binary's.
pub const NAME: &str = "flotilla-logd";
/// The target it provides.
pub const PROVIDES: &str = "log-writer";
/// Its origin's file, where a unit file's path would be.
pub const ORIGIN: &str = "(built in: the log directory's writer)";

/// Adds the built-in writer to `loaded` when the settings have a log
/// directory and nothing on the path provides `log-writer` or takes the
/// name.
pub fn add_builtin(sys: &dyn Sys, settings: &Settings, loaded: &mut LoadedPath) {
    if settings.log_dir.is_none() {
        return;
    }
    let taken = loaded
        .units
        .iter()
        .any(|(u, _)| u.name == NAME || u.provides.iter().any(|p| p == PROVIDES))
        || loaded.sources.iter().any(|s| s.name == NAME)
        || loaded.masked.iter().any(|(m, _)| m == NAME);
    if taken {
        return;
    }
    let local_fs = loaded
        .units
        .iter()
        .any(|(u, _)| u.provides.iter().any(|p| p == "local-fs"));
    loaded.units.push((
        unit(&binary(sys), settings, local_fs),
        Origin::unplaced(ORIGIN),
    ));
}

/// Whether `origin` is the built-in writer's.
pub fn is_builtin(origin: &Origin) -> bool {
    origin.file == ORIGIN
}

/// The unit: `contrib/units/flotilla-logd.yaml`'s settings, with the
/// init's control socket named.
fn unit(binary: &str, settings: &Settings, local_fs: bool) -> UnitSpec {
    let mut u = UnitSpec::new(NAME, UnitType::ForegroundSupervised);
    u.description = Some("writes the units' output to the log directory".to_string());
    u.provides = vec![PROVIDES.to_string()].into();
    // Once the local file systems are mounted, when the set has them.
    if local_fs {
        u.waits_for = vec!["local-fs".to_string()].into();
    }
    u.exec_start = Some(Command::new([
        binary.to_string(),
        "--control".to_string(),
        settings.control.display().to_string(),
    ]));
    u.restart = RestartPolicy::Always;
    u.restart_delay = Duration::from_secs(1);
    // The last lines of a shutdown are written within this.
    u.stop_timeout = Duration::from_secs(300);
    u
}

/// `flotilla-logd` beside the init's binary when it is there, else the
/// bare name (looked up on `PATH` at each start).
fn binary(sys: &dyn Sys) -> String {
    beside_init(sys, NAME).map_or_else(|| NAME.to_string(), |p| p.display().to_string())
}

/// The program `name` in the init's binary's directory, if it is there:
/// the init's companions (`flotilla-logd`, `flotilla-busd`) are installed
/// beside it.
pub(crate) fn beside_init(sys: &dyn Sys, name: &str) -> Option<PathBuf> {
    crate::sys::reexec::exe()
        .and_then(|exe| exe.parent().map(|d| d.join(name)))
        .filter(|p| sys.owner_and_mode(p).is_ok())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn settings(log_dir: Option<&str>) -> Settings {
        Settings {
            log_dir: log_dir.map(PathBuf::from),
            ..Settings::new("/units", "default", "/run/init/control.sock")
        }
    }

    fn loaded(units: &[UnitSpec]) -> LoadedPath {
        LoadedPath {
            units: units
                .iter()
                .map(|u| (u.clone(), Origin::unplaced("x.yaml")))
                .collect(),
            ..LoadedPath::default()
        }
    }

    #[test]
    fn only_with_a_log_directory_and_no_writer() {
        let sys = crate::sys::fake::FakeSys::new();
        let mut l = loaded(&[]);
        add_builtin(&sys, &settings(None), &mut l);
        assert!(l.units.is_empty());

        add_builtin(&sys, &settings(Some("/var/log/init")), &mut l);
        assert_eq!(l.units.len(), 1);
        let (u, o) = &l.units[0];
        assert!(is_builtin(o));
        assert_eq!(u.name, NAME);
        assert_eq!(u.provides, [PROVIDES]);
        assert_eq!(u.restart, RestartPolicy::Always);
        assert!(u.waits_for.is_empty());

        let mut own = UnitSpec::new("my-writer", UnitType::ForegroundSupervised);
        own.provides = vec![PROVIDES.to_string()].into();
        let mut l = loaded(&[own]);
        add_builtin(&sys, &settings(Some("/var/log/init")), &mut l);
        assert_eq!(l.units.len(), 1, "the unit's own writer replaces it");
    }

    #[test]
    fn waits_for_local_fs_when_the_set_has_it() {
        let sys = crate::sys::fake::FakeSys::new();
        let mut fs = UnitSpec::new("mounts", UnitType::Oneshot);
        fs.provides = vec!["local-fs".to_string()].into();
        let mut l = loaded(&[fs]);
        add_builtin(&sys, &settings(Some("/l")), &mut l);
        assert_eq!(l.units[1].0.waits_for, ["local-fs"]);
    }
}
