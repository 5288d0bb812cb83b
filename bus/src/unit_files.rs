//! The unit files on the init's search path, read as `initctl`'s
//! systemctl verbs read them (`flotilla_units::systemd`): `GetUnitFileState`
//! (`systemctl is-enabled`), `ListUnitFiles` and `ListUnitFilesByPatterns`
//! (`systemctl list-unit-files`). The path is the init's own
//! (`units_path` of its `status`); the files are read here, outside PID 1.

use crate::answer::Answer;
use crate::error::BusError;
use crate::hub::Hub;
use flotilla_units::systemd::{
    is_enabled, list_search_dir, parse, resolve_unit, unit_names, Definition, EntryKind,
    InstallInfo, SearchDir,
};
use std::io;

/// The init's search path, listed.
async fn search_path(hub: &Hub) -> Result<Vec<SearchDir>, BusError> {
    let mut dirs = Vec::new();
    for p in hub.system().await?.units_path {
        match list_search_dir(&p, &mut list_dir) {
            Ok(d) => dirs.push(d),
            // systemd leaves out the directories a system does not have.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(BusError::failed(format!("cannot list {p}: {e}"))),
        }
    }
    Ok(dirs)
}

/// One directory's entries with their kinds (links read, not followed).
fn list_dir(path: &str) -> io::Result<Vec<(String, EntryKind)>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(path)? {
        let e = e?;
        let t = e.file_type()?;
        let kind = if t.is_dir() {
            EntryKind::Dir
        } else if t.is_symlink() {
            EntryKind::Symlink {
                target: std::fs::read_link(e.path())?.to_string_lossy().into_owned(),
            }
        } else {
            EntryKind::File {
                empty: t.is_file() && e.metadata()?.len() == 0,
            }
        };
        out.push((e.file_name().to_string_lossy().into_owned(), kind));
    }
    Ok(out)
}

/// A unit file's path and enablement state, `None` when the path has no
/// file of that name.
fn file_state(dirs: &[SearchDir], name: &str) -> Option<(String, &'static str)> {
    let r = resolve_unit(dirs, name);
    let path = match &r.definition {
        Definition::File(p) | Definition::Masked(p) => p.clone(),
        Definition::NotFound => return None,
    };
    let install = match &r.definition {
        Definition::File(p) => std::fs::read_to_string(p)
            .ok()
            .and_then(|text| InstallInfo::from_unit_file(&r.id, &parse(&text)).ok())
            .unwrap_or_default(),
        _ => InstallInfo::default(),
    };
    is_enabled(dirs, name, &install).map(|state| (path, state))
}

/// `GetUnitFileState`.
pub async fn get_state(hub: &Hub, name: &str) -> Result<Answer, BusError> {
    let dirs = search_path(hub).await?;
    match file_state(&dirs, name) {
        Some((_, state)) => Ok(Answer::Str(state.to_string())),
        None => Err(BusError {
            name: "org.freedesktop.DBus.Error.FileNotFound",
            message: format!("No such file or directory: no unit file {name} on the unit path"),
        }),
    }
}

/// `ListUnitFiles` (`states` and `patterns` empty) and
/// `ListUnitFilesByPatterns`.
pub async fn list(hub: &Hub, states: &[String], patterns: &[String]) -> Result<Answer, BusError> {
    let dirs = search_path(hub).await?;
    let rows = unit_names(&dirs)
        .into_iter()
        .filter(|n| patterns.is_empty() || patterns.iter().any(|p| crate::manager::glob(p, n)))
        .filter_map(|n| file_state(&dirs, &n))
        .filter(|(_, st)| states.is_empty() || states.iter().any(|s| s == st))
        .map(|(p, st)| (p, st.to_string()))
        .collect();
    Ok(Answer::Files(rows))
}
