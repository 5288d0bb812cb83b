//! systemd's D-Bus interface as the init serves it itself
//! (`docs/dbus.md`, "Running it"): with the setting `systemd-bus` (on as
//! PID 1, the config's `systemd-bus: true` in supervisor mode), the unit
//! set gets `flotilla-busd.socket` and `flotilla-busd.service`, made here
//! from `contrib/units/`'s two files, so that `/run/systemd/private` is
//! bound from the init's first moments and `/run/systemd/system/` exists
//! whatever units the set has. They are ordinary units: listed by
//! `initctl status`, the service restarted when it dies, and wanted for
//! as long as they are in the set (`runtime/unitset.rs`), whatever the
//! target. A unit file of either name (the Debian package's, say), or a
//! mask of either, takes their place.
//!
//! The binary is `flotilla-busd` beside the init's own, else the one
//! `PATH` finds when the units are loaded; with neither, the interface is
//! not served and the console says so once per load.

use crate::args::Settings;
use crate::sys::Sys;
use flotilla_systemd::load::LoadedPath;
use flotilla_systemd::translate_file;
use flotilla_units::diag::{Diagnostic, Pos};
use flotilla_units::spec::{Command, Origin};
use std::path::PathBuf;

/// The service's name, and its binary's without the suffix.
pub const SERVICE: &str = "flotilla-busd.service";
/// The socket unit that holds `/run/systemd/private` for it.
pub const SOCKET: &str = "flotilla-busd.socket";
/// Their origin's file, where a unit file's path would be.
pub const ORIGIN: &str = "(built in: systemd's D-Bus interface)";
const BINARY: &str = "flotilla-busd";

/// The two unit files, as the Debian package also installs them.
const FILES: [(&str, &str); 2] = [
    (
        SOCKET,
        include_str!("../../contrib/units/flotilla-busd.socket"),
    ),
    (
        SERVICE,
        include_str!("../../contrib/units/flotilla-busd.service"),
    ),
];

/// Adds the two units to `loaded` when the settings ask for the interface
/// and nothing on the path takes either name.
pub fn add_builtin(sys: &dyn Sys, settings: &Settings, loaded: &mut LoadedPath) {
    add(settings, loaded, || locate(sys));
}

/// [`add_builtin`], the binary found by `binary` when the units are added.
fn add(settings: &Settings, loaded: &mut LoadedPath, binary: impl FnOnce() -> Option<PathBuf>) {
    if !settings.systemd_bus {
        return;
    }
    let taken = |name: &str| {
        loaded.units.iter().any(|(u, _)| u.name == name)
            || loaded.sources.iter().any(|s| s.name == name)
            || loaded.masked.iter().any(|(m, _)| m == name)
    };
    if FILES.iter().any(|(name, _)| taken(name)) {
        return;
    }
    let Some(binary) = binary() else {
        // Said only where something may speak D-Bus to the manager: a set
        // with systemd units, or a config that asked for the interface.
        // An application container of YAML units needs none.
        if !(settings.systemd_bus_asked || has_systemd_units(loaded)) {
            return;
        }
        loaded.diagnostics.push(Diagnostic::warning(
            ORIGIN,
            Pos::default(),
            format!(
                "systemd's D-Bus interface is not served: {BINARY} is neither beside the init \
                 nor on PATH"
            ),
        ));
        return;
    };
    for (name, text) in FILES {
        let parsed = translate_file(ORIGIN, name, text);
        // The files are the project's own, checked by this module's tests.
        let Some(mut spec) = parsed.spec else {
            loaded.diagnostics.extend(parsed.diagnostics);
            return;
        };
        if name == SERVICE {
            spec.exec_start = Some(Command::new([binary.display().to_string()]));
        }
        loaded.units.push((spec, Origin::unplaced(ORIGIN)));
    }
}

/// Whether the set has units read from systemd unit files (or SysV
/// scripts): anything not YAML and not built in.
fn has_systemd_units(loaded: &LoadedPath) -> bool {
    loaded
        .units
        .iter()
        .any(|(_, o)| !o.is_yaml() && !o.file.starts_with("(built in"))
        || !loaded.templates.is_empty()
}

/// Whether `origin` is one of the built-in units'.
pub fn is_builtin(origin: &Origin) -> bool {
    origin.file == ORIGIN
}

/// `flotilla-busd` beside the init's binary, else on `PATH`.
fn locate(sys: &dyn Sys) -> Option<PathBuf> {
    crate::logwriter::beside_init(sys, BINARY).or_else(|| crate::sys::program_on_path(BINARY))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;
    use flotilla_units::spec::UnitType;

    fn settings(on: bool) -> Settings {
        Settings {
            systemd_bus: on,
            ..Settings::new("/units", "default", "/run/init/control.sock")
        }
    }

    #[test]
    fn the_files_translate_cleanly() {
        for (name, text) in FILES {
            let p = translate_file(ORIGIN, name, text);
            assert!(p.diagnostics.is_empty(), "{name}: {:?}", p.diagnostics);
            assert!(p.spec.is_some(), "{name}");
        }
    }

    #[test]
    fn only_when_asked_and_found_and_not_taken() {
        let mut l = LoadedPath::default();
        add(&settings(false), &mut l, || panic!("not looked for"));
        assert!(l.units.is_empty() && l.diagnostics.is_empty());

        // Not found, a set of YAML units, not asked for by the config: no
        // word (an application container).
        let mut yaml = LoadedPath::default();
        yaml.units.push((
            flotilla_units::spec::UnitSpec::new("web", UnitType::ForegroundSupervised),
            Origin::unplaced("/etc/init/units/web.yaml"),
        ));
        add(&settings(true), &mut yaml, || None);
        assert!(yaml.diagnostics.is_empty(), "{:?}", yaml.diagnostics);
        // Asked for by the config: said.
        let asked = Settings {
            systemd_bus_asked: true,
            ..settings(true)
        };
        add(&asked, &mut yaml, || None);
        assert_eq!(yaml.diagnostics.len(), 1);
        // A systemd unit in the set: said.
        l.units.push((
            flotilla_units::spec::UnitSpec::new("ssh.service", UnitType::ForegroundSupervised),
            Origin::unplaced("/lib/systemd/system/ssh.service"),
        ));
        add(&settings(true), &mut l, || None);
        assert_eq!(l.units.len(), 1);
        assert_eq!(l.diagnostics.len(), 1);
        assert!(
            l.diagnostics[0].message.contains("is not served"),
            "{:?}",
            l.diagnostics
        );

        // A unit file of either name, or its mask, takes their place.
        let mut own = LoadedPath::default();
        own.masked
            .push((SOCKET.to_string(), "/dev/null".to_string()));
        add(&settings(true), &mut own, || panic!("not looked for"));
        assert!(own.units.is_empty() && own.diagnostics.is_empty());
    }

    #[test]
    fn the_units_hand_the_socket_to_the_binary_found() {
        let mut l = LoadedPath::default();
        add(&settings(true), &mut l, || {
            Some(PathBuf::from("/usr/sbin/flotilla-busd"))
        });
        let names: Vec<&str> = l.units.iter().map(|(u, _)| u.name.as_str()).collect();
        assert_eq!(names, [SOCKET, SERVICE]);
        assert!(l.units.iter().all(|(_, o)| is_builtin(o)));
        let (socket, service) = (&l.units[0].0, &l.units[1].0);
        assert_eq!(socket.kind, UnitType::Socket);
        assert_eq!(
            service.exec_start.as_ref().unwrap().argv,
            ["/usr/sbin/flotilla-busd"]
        );
        assert!(service.depends_on.iter().any(|d| d == SOCKET));
    }
}
