//! Reading the unit search path through [`Sys`]: each directory's listing
//! (its top level and its `NAME.wants/`, `NAME.requires/` and `NAME.d/`
//! subdirectories, links not followed) and the files' bytes; what they
//! mean (hiding, aliases, masks, drop-ins, edges) is
//! `flotilla_systemd::load::load_path`'s business.
//!
//! Unit files are `*.yaml`, `*.yml` and systemd unit files at the top of
//! each directory. Hidden files (names starting with `.`) and other names
//! are left out (a subdirectory with a unit file's name is a warning).
//! A unit file that is a link is followed. A file is read non-blocking and only if it
//! is a regular file, so a FIFO named `x.yaml` cannot hang the init, and at
//! most one byte past the size limit is read. Only a directory that cannot
//! be listed is an error; a file that cannot be read is a diagnostic of
//! that file.
//!
//! A load through the settings ([`load_units_naming`]) stamps what it saw
//! (`crate::pathstamp`): the directories it listed and the times of
//! their entries, and the files it read elsewhere, so that the init
//! can tell a later read that would see the same and skip it.

use crate::pathstamp::{read, Listing, Seen};
use crate::sys::{Errno, Sys, SysError};
use flotilla_systemd::load::{
    add_want, load_path, load_path_with, FileRead, LoadedPath, UnitSource,
};
use flotilla_systemd::{list_search_dir, unit_names, SearchDir};
use flotilla_units::spec::{valid_name, Origin};
use flotilla_units::specifier::SpecifierContext;
use flotilla_units::sysv::{runlevel_target, script_unit, start_link_script, ENABLING_RUNLEVELS};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Loads the units of the search path `dirs` (docs/contract.md §3c): each directory
/// listed with its `NAME.wants/`, `NAME.requires/` and `NAME.d/`
/// subdirectories, files read through `sys`. The first directory must be
/// listable (as a lone units directory must); a later one that does not
/// exist is left out, as systemd leaves out the directories of its path
/// that a system does not have.
pub fn load_search_path(sys: &dyn Sys, dirs: &[PathBuf]) -> Result<LoadedPath, SysError> {
    let listed = list_path(sys, dirs)?;
    Ok(load_path(&listed, &mut |p: &str| read(sys, Path::new(p))))
}

/// Loads the units of the settings' search path and, with `sysv-scripts`,
/// the init scripts of its SysV directory that no unit file hides
/// (`NAME.service` defined or masked on the path wins, as systemd's
/// generator lets it). The target, when it is an instance, is made from
/// its template. With a log directory and no writer on the path, the
/// init's own writer is one of the units (`logwriter.rs`); with the
/// setting `systemd-bus`, so is systemd's D-Bus interface
/// (`systemd_bus.rs`).
pub fn load_units(sys: &dyn Sys, settings: &crate::args::Settings) -> Result<LoadedPath, SysError> {
    load_units_naming(sys, settings, std::slice::from_ref(&settings.target))
}

/// [`load_units`], making the instances `named` (the target, the units
/// `initctl start` wants) from their templates besides those the units
/// name.
pub fn load_units_naming(
    sys: &dyn Sys,
    settings: &crate::args::Settings,
    named: &[String],
) -> Result<LoadedPath, SysError> {
    load_units_watched(sys, settings, named, None)
}

/// [`load_units_naming`], each directory and file added to the watch
/// `watch` (`Sys::path_stamp_instance`) before it is listed or read
/// (`crate::pathstamp::Seen::watched`).
pub fn load_units_watched(
    sys: &dyn Sys,
    settings: &crate::args::Settings,
    named: &[String],
    watch: Option<std::os::fd::BorrowedFd<'_>>,
) -> Result<LoadedPath, SysError> {
    let mut seen = match watch {
        Some(fd) => Seen::watched(sys, fd),
        None => Seen::new(sys),
    };
    let listed = list_path_with(&settings.units_path(), &mut |p| seen.list_dir(p))?;
    // The manager's settings first: a unit file that sets no timeout is
    // translated with their defaults.
    let manager = settings.system_conf.as_ref().map(|root| {
        // Both callbacks record in `seen`, one at a time.
        let seen = std::cell::RefCell::new(&mut seen);
        system_conf(root, &mut |d| seen.borrow_mut().read_dir(d), &mut |f| {
            seen.borrow_mut().read(f)
        })
    });
    // Only systemd unit files have specifiers: a path of YAML units reads
    // no facts.
    let mut facts = if unit_names(&listed).is_empty() {
        SpecifierContext::system("")
    } else {
        specifier_facts(sys)
    };
    if let Some((m, _)) = &manager {
        m.translate_with(&mut facts);
    }
    let mut loaded = load_path_with(&listed, &facts, named, &mut |p: &str| {
        seen.read(Path::new(p))
    });
    stamp_files(&seen, &mut loaded);
    if let Some(dir) = &settings.sysv_dir {
        add_sysv_scripts(&mut seen, dir, &mut loaded);
    }
    crate::logwriter::add_builtin(sys, settings, &mut loaded);
    crate::systemd_bus::add_builtin(sys, settings, &mut loaded);
    crate::cmd::add_builtin(settings, &mut loaded);
    if let Some((manager, mut warnings)) = manager {
        loaded.manager = manager;
        loaded.diagnostics.append(&mut warnings);
    }
    loaded.stamp = seen.finish();
    Ok(loaded)
}

/// Stamps each unit read from a systemd unit file with its files as this
/// load saw them (`Origin::files`), for `NeedDaemonReload`
/// (`flotilla_units::load::files_stamp`). A YAML unit is left unstamped:
/// the bus finds a unit's files on the path by systemd's rules, which
/// a YAML unit's are not.
fn stamp_files(seen: &Seen<'_>, loaded: &mut LoadedPath) {
    let sources: HashMap<&str, &UnitSource> = (loaded.sources.iter())
        .map(|s| (s.name.as_str(), s))
        .collect();
    for (spec, origin) in loaded.units.iter_mut().filter(|(_, o)| !o.is_yaml()) {
        if let Some(s) = sources.get(spec.name.as_str()) {
            origin.files = seen.files_stamp(&s.file, &s.dropins);
        }
    }
}

/// The manager's settings below `root` (`system.conf` and its drop-ins,
/// `flotilla_systemd::system_conf`): a directory or file that
/// cannot be read counts as absent, as for systemd.
pub fn read_system_conf(
    sys: &dyn Sys,
    root: &Path,
) -> (
    flotilla_systemd::system_conf::ManagerConfig,
    Vec<flotilla_units::diag::Diagnostic>,
) {
    system_conf(root, &mut |d| sys.read_dir(d), &mut |f| read(sys, f))
}

/// [`read_system_conf`], directories listed by `list` and files read by
/// `read_file`.
fn system_conf(
    root: &Path,
    list: &mut dyn FnMut(&Path) -> Result<Vec<std::ffi::OsString>, SysError>,
    read_file: &mut dyn FnMut(&Path) -> FileRead,
) -> (
    flotilla_systemd::system_conf::ManagerConfig,
    Vec<flotilla_units::diag::Diagnostic>,
) {
    flotilla_systemd::system_conf::read_under(
        root,
        &mut |dir| {
            list(Path::new(dir)).map_or_else(
                |_| Vec::new(),
                |names| {
                    names
                        .into_iter()
                        .filter_map(|n| n.into_string().ok())
                        .collect()
                },
            )
        },
        &mut |file| match read_file(Path::new(file)) {
            FileRead::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
            _ => None,
        },
    )
}

/// Adds a unit for each init script in `dir` with an LSB header
/// (`flotilla_units::sysv`) whose `NAME.service` the path does not have,
/// and the wants of the start links in the `rcN.d` directories beside
/// `dir` that enable them.
fn add_sysv_scripts(seen: &mut Seen<'_>, dir: &Path, loaded: &mut LoadedPath) {
    let Ok(mut names) = seen.read_dir(dir) else {
        return;
    };
    names.sort();
    let mut scripts = Vec::new();
    for n in names {
        let Some(name) = n.to_str().filter(|s| valid_name(s) && !s.starts_with('.')) else {
            continue;
        };
        let unit = format!("{name}.service");
        let taken = loaded
            .sources
            .iter()
            .any(|s| s.name == unit || s.aliases.contains(&unit))
            || loaded.masked.iter().any(|(m, _)| *m == unit);
        if taken {
            continue;
        }
        let path = dir.join(name);
        let FileRead::Bytes(bytes) = seen.read(&path) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let file = path.display().to_string();
        if let Some(spec) = script_unit(name, &file, &text) {
            loaded.sources.push(UnitSource {
                name: unit,
                file: file.clone(),
                ..UnitSource::default()
            });
            loaded.units.push((spec, Origin::unplaced(file)));
            scripts.push(name.to_string());
        }
    }
    let Some(etc) = dir.parent() else { return };
    for level in ENABLING_RUNLEVELS {
        let Some(target) = runlevel_target(level) else {
            continue;
        };
        let Ok(links) = seen.read_dir(&etc.join(format!("rc{level}.d"))) else {
            continue;
        };
        for link in &links {
            let script = link.to_str().and_then(start_link_script);
            if let Some(script) = script.filter(|s| scripts.iter().any(|x| x == s)) {
                add_want(loaded, target, &format!("{script}.service"));
            }
        }
    }
}

/// What specifiers resolve to on this machine (`%H`, `%m`, `%b`, `%v`,
/// `%a`, and the system manager's directories): what cannot be read is
/// left unknown, and a unit using it is warned about.
pub fn specifier_facts(sys: &dyn Sys) -> SpecifierContext {
    let line = |path: &str| {
        sys.read_file_limited(Path::new(path), 256)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let mut facts = SpecifierContext::system("");
    facts.hostname = line("/proc/sys/kernel/hostname");
    facts.machine_id = line("/etc/machine-id");
    // systemd's %b is the boot ID without dashes, as its %m.
    facts.boot_id = line("/proc/sys/kernel/random/boot_id").map(|b| b.replace('-', ""));
    facts.kernel_release = line("/proc/sys/kernel/osrelease");
    facts.architecture = Some(
        match std::env::consts::ARCH {
            "x86_64" => "x86-64",
            "aarch64" => "arm64",
            "x86" => "x86",
            other => other,
        }
        .to_string(),
    );
    facts
}

/// The listings of the search path's directories.
pub fn list_path(sys: &dyn Sys, dirs: &[PathBuf]) -> Result<Vec<SearchDir>, SysError> {
    list_path_with(dirs, &mut |p| sys.list_dir(p))
}

/// [`list_path`], each directory listed by `list_dir`.
fn list_path_with(
    dirs: &[PathBuf],
    list_dir: &mut dyn FnMut(&Path) -> Result<Listing, SysError>,
) -> Result<Vec<SearchDir>, SysError> {
    let mut listed = Vec::with_capacity(dirs.len());
    for (i, dir) in dirs.iter().enumerate() {
        let mut list = |p: &str| {
            list_dir(Path::new(p)).map(|entries| {
                entries
                    .into_iter()
                    .map(|(n, k)| (n.to_string_lossy().into_owned(), k))
                    .collect()
            })
        };
        match list_search_dir(&dir.display().to_string(), &mut list) {
            Ok(d) => listed.push(d),
            Err(SysError::File { errno, .. }) if i > 0 && errno.0 == Errno::ENOENT => {}
            Err(e) => return Err(e),
        }
    }
    Ok(listed)
}

/// Loads the units of one directory: a search path of one.
pub fn load_dir(sys: &dyn Sys, dir: &Path) -> Result<LoadedPath, SysError> {
    load_search_path(sys, &[dir.to_path_buf()])
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::sys::fake::{Call, FakeSys};
    use crate::sys::real::RealSys;
    use flotilla_units::load::MAX_FILE_SIZE;
    use std::path::PathBuf;

    fn mixed() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/unitdir-mixed")
    }

    /// The diagnostics with the directory part of the file names cut off.
    fn shown(dir: &Path, loaded: &LoadedPath) -> Vec<String> {
        let prefix = format!("{}/", dir.display());
        loaded
            .diagnostics
            .iter()
            .map(|d| d.to_string().replacen(&prefix, "", 1))
            .collect()
    }

    fn names(loaded: &LoadedPath) -> Vec<&str> {
        loaded.units.iter().map(|(u, _)| u.name.as_str()).collect()
    }

    #[test]
    fn reads_unit_files_in_name_order() {
        let dir = mixed();
        let loaded = load_dir(&RealSys, &dir).unwrap();
        // `c.yaml` has an error, so it is left out; `.hidden.yaml`,
        // `notes.txt` and `z.yaml~` are not unit files; `t@.service` is a
        // template, not a unit, and nothing names an instance of it.
        assert_eq!(names(&loaded), ["a", "b", "web.service"]);
        assert_eq!(
            shown(&dir, &loaded),
            [
                "c.yaml:3:1: unknown key `bogus`",
                "sub.yaml: warning: a directory, not a unit file; skipped",
            ]
        );
        for (_, o) in &loaded.units {
            assert_eq!(Path::new(&o.file).parent(), Some(dir.as_path()));
        }
    }

    #[test]
    fn a_missing_directory_is_an_error() {
        let err = load_dir(&RealSys, Path::new("/nonexistent/flotilla/units")).unwrap_err();
        assert!(
            matches!(&err, SysError::File { errno, .. } if errno.0 == nix::errno::Errno::ENOENT),
            "{err:?}"
        );
    }

    #[test]
    fn files_it_cannot_use_are_diagnostics() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::os::unix::fs::symlink(d.join("nowhere"), d.join("a-dangling.yaml")).unwrap();
        std::fs::write(d.join("b-huge.yaml"), vec![b'#'; MAX_FILE_SIZE + 1]).unwrap();
        nix::unistd::mkfifo(
            &d.join("c-fifo.yaml"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        std::fs::write(d.join("real.txt"), "unit: linked\nexec-start: /bin/l\n").unwrap();
        std::os::unix::fs::symlink(d.join("real.txt"), d.join("linked.yaml")).unwrap();
        let loaded = load_dir(&RealSys, d).unwrap();
        assert_eq!(names(&loaded), ["linked"], "a link is followed");
        assert_eq!(
            shown(d, &loaded),
            [
                "a-dangling.yaml: cannot read the file: No such file or directory (os error 2)",
                "b-huge.yaml: the file is larger than 1 MiB (1048576 bytes); not read",
                "c-fifo.yaml: cannot read the file: not a regular file",
            ]
        );
    }

    #[test]
    fn a_file_that_cannot_be_opened() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("secret.yaml");
        std::fs::write(&f, "unit: secret\nexec-start: /bin/s\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
        let loaded = load_dir(&RealSys, tmp.path()).unwrap();
        if std::fs::read(&f).is_ok() {
            // Running as root: permissions do not apply, the file loads.
            assert_eq!(loaded.units.len(), 1);
        } else {
            assert_eq!(
                shown(tmp.path(), &loaded),
                ["secret.yaml: cannot read the file: Permission denied (os error 13)"]
            );
        }
    }

    #[test]
    fn a_search_path_of_real_directories() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        std::fs::create_dir_all(b.join("db.service.d")).unwrap();
        std::fs::create_dir_all(b.join("default.wants")).unwrap();
        std::fs::create_dir_all(&a).unwrap();
        std::fs::write(a.join("default.yaml"), "unit: default\ntype: virtual\n").unwrap();
        std::fs::write(b.join("db.service"), "[Service]\nExecStart=/bin/db\n").unwrap();
        std::fs::write(b.join("db.service.d/x.conf"), "[Service]\nNice=5\n").unwrap();
        std::fs::write(b.join("gone.service"), "[Service]\nExecStart=/bin/g\n").unwrap();
        std::os::unix::fs::symlink("/dev/null", a.join("gone.service")).unwrap();
        std::os::unix::fs::symlink("../db.service", b.join("default.wants/db.service")).unwrap();
        let missing = tmp.path().join("missing");
        let l = load_search_path(&RealSys, &[a.clone(), b.clone(), missing.clone()]).unwrap();
        assert!(
            l.diagnostics.iter().all(|d| !d.is_error()),
            "{:?}",
            l.diagnostics
        );
        let default = l.units.iter().find(|(u, _)| u.name == "default").unwrap();
        assert_eq!(default.0.waits_for, ["db.service"]);
        let db = l.sources.iter().find(|s| s.name == "db.service").unwrap();
        assert_eq!(
            db.dropins,
            [b.join("db.service.d/x.conf").display().to_string()]
        );
        assert_eq!(
            l.masked,
            [(
                "gone.service".to_string(),
                a.join("gone.service").display().to_string()
            )]
        );
        // Only the first directory must exist.
        assert!(load_search_path(&RealSys, &[missing, a]).is_err());
    }

    #[test]
    fn reads_through_sys() {
        let sys = FakeSys::new();
        sys.set_file("/u/b.yaml", "unit: b\nexec-start: /bin/b\n");
        sys.set_file("/u/a.yaml", "unit: a\nexec-start: /bin/a\n");
        sys.set_file("/u/notes.txt", "x");
        let loaded = load_dir(&sys, Path::new("/u")).unwrap();
        assert_eq!(names(&loaded), ["a", "b"]);
        assert_eq!(
            sys.calls(),
            [
                Call::ReadDir("/u".into()),
                Call::ReadFile {
                    path: "/u/a.yaml".into(),
                    max: MAX_FILE_SIZE + 1
                },
                Call::ReadFile {
                    path: "/u/b.yaml".into(),
                    max: MAX_FILE_SIZE + 1
                },
            ]
        );
    }

    /// A load stamps each unit read from a systemd unit file with its file
    /// and drop-ins at the times it took them (`NeedDaemonReload`, which
    /// the bus works out with the same stamp of the files now); a YAML
    /// unit is not stamped.
    #[test]
    fn a_load_stamps_each_systemd_units_files() {
        use flotilla_units::load::{files_stamp, NO_FILES};
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::create_dir_all(d.join("db.service.d")).unwrap();
        std::fs::write(d.join("default.yaml"), "unit: default\ntype: virtual\n").unwrap();
        std::fs::write(d.join("db.service"), "[Service]\nExecStart=/bin/db\n").unwrap();
        let dropin = d.join("db.service.d/x.conf");
        std::fs::write(&dropin, "[Service]\nNice=5\n").unwrap();
        let control = PathBuf::from("/run/init/control.sock");
        let settings = crate::args::Settings::new(d.to_path_buf(), "default", control);
        let stamp_of = |l: &LoadedPath, name: &str| {
            l.units
                .iter()
                .find(|(u, _)| u.name == name)
                .unwrap()
                .1
                .files
        };
        let time = |p: &Path| RealSys.file_mtime_us(p).unwrap();
        let str_of = |p: &Path| p.display().to_string();
        let loaded = load_units_naming(&RealSys, &settings, &[]).unwrap();
        let (file, dropin_s) = (str_of(&d.join("db.service")), str_of(&dropin));
        let now = || {
            files_stamp(
                Some((file.as_str(), time(&d.join("db.service")))),
                [(dropin_s.as_str(), time(&dropin))],
            )
        };
        assert_eq!(stamp_of(&loaded, "db.service"), now());
        assert_eq!(stamp_of(&loaded, "default"), NO_FILES);
        // The drop-in edited: a new load stamps it as it is now.
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(&dropin)
            .and_then(|f| f.set_modified(later))
            .unwrap();
        assert_ne!(stamp_of(&loaded, "db.service"), now());
        let again = load_units_naming(&RealSys, &settings, &[]).unwrap();
        assert_eq!(stamp_of(&again, "db.service"), now());
    }
}
