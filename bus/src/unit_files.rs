//! The unit files on the init's search path, read as `initctl`'s
//! systemctl verbs read them (`flotilla_systemd`): `GetUnitFileState`
//! (`systemctl is-enabled`), `ListUnitFiles` and `ListUnitFilesByPatterns`
//! (`systemctl list-unit-files`). The path is the init's own
//! (`units_path` of its `status`, asked once: `Hub::lasting`); the files
//! are read here, outside PID 1.

use crate::answer::Answer;
use crate::error::BusError;
use crate::hub::Hub;
use flotilla_client::unit_dirs::{link_dir, make_link, mask_links, on_side, remove_link};
use flotilla_systemd::{
    is_enabled, parse, resolve_unit, unit_file_links, unit_names, Definition, InstallInfo,
    SearchDir,
};
use flotilla_units::condition::fnmatch;

/// The init's search path, listed.
async fn search_path(hub: &Hub) -> Result<Vec<SearchDir>, BusError> {
    flotilla_client::unit_dirs::list_search_path(hub.lasting().await?.units_path.iter().cloned())
        .map_err(|(p, e)| BusError::failed(format!("cannot list {p}: {e}")))
}

/// The drop-ins the search path has for `name` (path and text, in the
/// order they apply: `resolve_unit`'s), for a transient unit of that
/// name; one that cannot be read is left out.
pub async fn dropins_of(hub: &Hub, name: &str) -> Result<Vec<(String, String)>, BusError> {
    let dirs = search_path(hub).await?;
    Ok(resolve_unit(&dirs, name)
        .dropins
        .into_iter()
        .filter_map(|p| std::fs::read_to_string(&p).ok().map(|t| (p, t)))
        .collect())
}

/// The search path's directory of transient units
/// (`/run/systemd/transient`), if the path names one (it may not exist
/// yet: systemd makes it at boot, flotilla when it first writes there).
async fn transient_dir(hub: &Hub) -> Result<Option<String>, BusError> {
    Ok(flotilla_systemd::transient_dir(&hub.lasting().await?.units_path).cloned())
}

/// The file of the transient unit `name` (the init writes it as it takes
/// the unit), if there is one.
pub async fn transient_file(hub: &Hub, name: &str) -> Option<String> {
    let path = format!("{}/{name}", transient_dir(hub).await.ok()??);
    std::path::Path::new(&path).exists().then_some(path)
}

/// Removes the file of the transient unit `name`, if there is one: a
/// stopped transient unit is gone, also at the next reload.
pub async fn remove_transient(hub: &Hub, name: &str) -> Result<(), BusError> {
    let Some(dir) = transient_dir(hub).await? else {
        return Ok(());
    };
    match std::fs::remove_file(format!("{dir}/{name}")) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(BusError::failed(format!("cannot remove {dir}/{name}: {e}")))
        }
        _ => Ok(()),
    }
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
        .filter(|n| patterns.is_empty() || patterns.iter().any(|p| fnmatch(p, n)))
        .filter_map(|n| file_state(&dirs, &n))
        .filter(|(_, st)| states.is_empty() || states.iter().any(|s| s == st))
        .map(|(p, st)| (p, st.to_string()))
        .collect();
    Ok(Answer::Files(rows))
}

/// `GetUnitFileLinks` (`systemctl is-enabled -l`): the links that enable
/// `name`, in the runtime directories when `runtime`, else in the
/// configuration ones.
pub async fn links(hub: &Hub, name: &str, runtime: bool) -> Result<Answer, BusError> {
    let dirs = search_path(hub).await?;
    if file_state(&dirs, name).is_none() {
        return Err(BusError {
            name: "org.freedesktop.DBus.Error.FileNotFound",
            message: format!("No such file or directory: no unit file {name} on the unit path"),
        });
    }
    Ok(Answer::Strs(unit_file_links(&dirs, name, runtime)))
}

/// The `[Install]` section of the file that defines `name`.
fn install_of(dirs: &[SearchDir], name: &str) -> Option<InstallInfo> {
    let r = resolve_unit(dirs, name);
    let Definition::File(p) = &r.definition else {
        return None;
    };
    let text = std::fs::read_to_string(p).ok()?;
    InstallInfo::from_unit_file(&r.id, &parse(&text)).ok()
}

/// `EnableUnitFiles` (`on`) and `DisableUnitFiles`: the links of each
/// unit's `[Install]` made or removed, as `initctl enable` makes them.
/// The init is not reloaded here: `systemctl` asks for `Reload` after, as
/// it does of systemd. The answer says whether the units had anything to
/// install (for enable) and each link made (`symlink`) or removed
/// (`unlink`). `runtime` (`--runtime`): the links in the runtime
/// directory (`/run/systemd/system`), else in the configuration one;
/// disabling removes those of that side only, as systemd does.
pub async fn enable(
    hub: &Hub,
    names: &[String],
    on: bool,
    runtime: bool,
) -> Result<Answer, BusError> {
    let dirs = search_path(hub).await?;
    let (carries, links) = change_links(&dirs, names, on, runtime)?;
    let changes = apply(&links, on)?;
    Ok(if on {
        Answer::Enabled(carries, changes)
    } else {
        Answer::Changes(changes)
    })
}

/// `ReenableUnitFiles` (`systemctl reenable`): disabled, then enabled.
pub async fn reenable(hub: &Hub, names: &[String], runtime: bool) -> Result<Answer, BusError> {
    let dirs = search_path(hub).await?;
    let (_, off) = change_links(&dirs, names, false, runtime)?;
    let mut changes = apply(&off, false)?;
    let dirs = search_path(hub).await?;
    let (carries, on) = change_links(&dirs, names, true, runtime)?;
    changes.extend(apply(&on, true)?);
    Ok(Answer::Enabled(carries, changes))
}

/// `PresetUnitFiles`, `PresetUnitFilesWithMode` (`names`) and
/// `PresetAllUnitFiles` (`names` `None`: every unit file of the path):
/// each unit enabled or disabled as the `*.preset` files say
/// (`flotilla_systemd::preset_plan` has systemd's rules), by the
/// enable and disable code above; disabling first, as systemd does. A bad
/// preset line is logged and skipped. The answer as `enable`'s.
pub async fn preset(
    hub: &Hub,
    names: Option<&[String]>,
    mode: &str,
    runtime: bool,
) -> Result<Answer, BusError> {
    use flotilla_systemd::{preset_plan, PresetMode};
    let mode = PresetMode::parse(mode).ok_or_else(|| {
        BusError::invalid_args(format!(
            "Unknown preset mode '{mode}' (full, enable-only or disable-only)."
        ))
    })?;
    let dirs = search_path(hub).await?;
    let (presets, warnings) = flotilla_client::unit_dirs::load_presets(&dirs);
    for w in warnings {
        eprintln!("flotilla-busd: {w}");
    }
    let all = unit_names(&dirs);
    let plan = preset_plan(
        &dirs,
        &presets,
        names.unwrap_or(&all),
        mode,
        names.is_none(),
    )
    .map_err(|e| install_error(&e))?;
    let (_, off) = change_links(&dirs, &plan.disable, false, runtime)?;
    let mut changes = apply(&off, false)?;
    let dirs = search_path(hub).await?;
    let (carries, on) = change_links(&dirs, &plan.enable, true, runtime)?;
    changes.extend(apply(&on, true)?);
    Ok(Answer::Enabled(carries, changes))
}

/// systemd's error for an install error.
fn install_error(e: &flotilla_systemd::InstallError) -> BusError {
    use flotilla_systemd::InstallError;
    match e {
        InstallError::NotFound(u) => BusError {
            name: "org.freedesktop.DBus.Error.FileNotFound",
            message: format!("Unit file {u} does not exist."),
        },
        InstallError::Masked(u) => BusError::masked(u),
        other => BusError::failed(other.to_string()),
    }
}

/// The links enabling (`on`) or disabling `names` makes or removes, on
/// the side `runtime` chooses, and (for enable) whether any of the units
/// had something to install.
fn change_links(
    dirs: &[SearchDir],
    names: &[String],
    on: bool,
    runtime: bool,
) -> Result<(bool, Vec<flotilla_systemd::Link>), BusError> {
    use flotilla_systemd::{disable_links, enable_links};
    let config = link_dir(dirs, runtime).map_err(BusError::failed)?;
    let install = |n: &str| install_of(dirs, n);
    let mut links = Vec::new();
    let mut carries = false;
    for u in names {
        let r = resolve_unit(dirs, u);
        let not_found = || install_error(&flotilla_systemd::InstallError::NotFound(u.clone()));
        match &r.definition {
            Definition::NotFound if on => return Err(not_found()),
            Definition::Masked(_) if on => return Err(BusError::masked(u)),
            _ => {}
        }
        if !on && matches!(r.definition, Definition::NotFound) {
            // A unit whose file is gone still has its links removed, as
            // systemd's disable does; with none either, it is not found.
            let gone: Vec<_> = disable_links(dirs, u, &install)
                .into_iter()
                .filter(|l| on_side(dirs, &l.path, runtime))
                .collect();
            if gone.is_empty() {
                return Err(not_found());
            }
            links.extend(gone);
        } else if on {
            let info = install(r.template.as_deref().unwrap_or(u)).unwrap_or_default();
            if !info.has_rules() && info.also.is_empty() {
                continue;
            }
            carries = true;
            links.extend(
                enable_links(dirs, &config, u, &install)
                    .map_err(|e| BusError::failed(e.to_string()))?,
            );
        } else {
            links.extend(
                disable_links(dirs, u, &install)
                    .into_iter()
                    .filter(|l| on_side(dirs, &l.path, runtime)),
            );
        }
    }
    links.sort();
    links.dedup();
    Ok((carries, links))
}

/// `RevertUnitFiles` (`systemctl revert`): each unit back to its vendor
/// version (`flotilla_systemd::revert_paths` says what goes: drop-ins,
/// overriding copies and masks in the configuration and runtime
/// directories); each removal is an `unlink` change. The init is not
/// reloaded here: `systemctl` asks for `Reload` after.
pub async fn revert(hub: &Hub, names: &[String]) -> Result<Answer, BusError> {
    use flotilla_systemd::{revert_paths, Reverted};
    let dirs = search_path(hub).await?;
    let mut changes = Vec::new();
    for u in names {
        for r in revert_paths(&dirs, u) {
            let (path, done) = match &r {
                Reverted::File(p) => (p, std::fs::remove_file(p)),
                Reverted::Dir(p) => (p, std::fs::remove_dir(p)),
            };
            match done {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(BusError::failed(format!("{path}: {e}")))
                }
                _ => changes.push(("unlink".to_string(), path.clone(), String::new())),
            }
        }
    }
    Ok(Answer::Changes(changes))
}

/// `MaskUnitFiles` (`on`) and `UnmaskUnitFiles`, as systemd's: a link to
/// `/dev/null` named like each unit in the configuration directory (the
/// runtime one for `runtime`; any
/// name: systemd masks a unit it does not have too), or every such link of
/// the configuration and runtime directories removed; the answer lists
/// each. The init is not reloaded here: `systemctl` asks for `Reload`
/// after, and the init then reads each link as a mask.
pub async fn mask(
    hub: &Hub,
    names: &[String],
    on: bool,
    runtime: bool,
) -> Result<Answer, BusError> {
    if let Some(bad) = names
        .iter()
        .find(|n| n.is_empty() || n.contains('/') || *n == "." || *n == "..")
    {
        return Err(BusError::invalid_args(format!(
            "Unit name {bad} is not valid."
        )));
    }
    let dirs = search_path(hub).await?;
    let links = mask_links(&dirs, names, on, runtime).map_err(BusError::failed)?;
    Ok(Answer::Changes(apply(&links, on)?))
}

/// Makes (`on`) or removes `links`; the changes as systemd lists them
/// (`symlink` with its target, `unlink`).
fn apply(
    links: &[flotilla_systemd::Link],
    on: bool,
) -> Result<Vec<(String, String, String)>, BusError> {
    let mut changes = Vec::new();
    for l in links {
        let done = if on { make_link(l) } else { remove_link(l) };
        done.map_err(|e| BusError::failed(format!("{}: {e}", l.path)))?;
        changes.push(if on {
            ("symlink".to_string(), l.path.clone(), l.target.clone())
        } else {
            ("unlink".to_string(), l.path.clone(), String::new())
        });
    }
    Ok(changes)
}

/// `AddDependencyUnitFiles` (`systemctl add-wants TARGET FILE...`,
/// `add-requires`): each file linked into `TARGET.wants/` (`kind`
/// `Wants`) or `TARGET.requires/` (`Requires`) of the configuration
/// directory (the runtime one for `runtime`), as systemd links them. The
/// init is not reloaded here: `systemctl` asks for `Reload` after, and
/// the init then reads the link as the dependency. A link already there
/// is left as it is.
pub async fn add_dependency(
    hub: &Hub,
    files: &[String],
    target: &str,
    kind: &str,
    runtime: bool,
) -> Result<Answer, BusError> {
    let hard = match kind {
        "Wants" => false,
        "Requires" => true,
        other => {
            return Err(BusError::invalid_args(format!(
                "Invalid dependency type {other}: Wants or Requires"
            )))
        }
    };
    let dirs = search_path(hub).await?;
    let config = link_dir(&dirs, runtime).map_err(BusError::failed)?;
    let links = flotilla_systemd::dependency_links(&dirs, &config, target, files, hard)
        .map_err(|e| install_error(&e))?;
    Ok(Answer::Changes(apply(&links, true)?))
}

/// `GetDefaultTarget` when the init boots `default.target` (Debian's
/// config): the target its link names, as `systemctl get-default` shows
/// it under systemd.
pub async fn default_target(hub: &Hub) -> Result<Answer, BusError> {
    let dirs = search_path(hub).await?;
    flotilla_systemd::default_target(&dirs)
        .map(Answer::Str)
        .ok_or_else(|| BusError {
            name: "org.freedesktop.DBus.Error.FileNotFound",
            message: "No such file or directory: no default.target on the unit path".into(),
        })
}

/// `SetDefaultTarget` (`systemctl set-default NAME`) when the init boots
/// `default.target`: the configuration directory's `default.target`
/// linked to `name`'s unit file; one linked elsewhere is replaced when
/// `force` (as `systemctl` asks), else refused. The next boot takes it;
/// the `Reload` systemctl asks for next changes nothing that runs (the
/// init keeps the target on the unit it booted, docs/units.md).
pub async fn set_default(hub: &Hub, name: &str, force: bool) -> Result<Answer, BusError> {
    let dirs = search_path(hub).await?;
    let config = link_dir(&dirs, false).map_err(BusError::failed)?;
    let link = flotilla_systemd::default_target_link(&dirs, &config, name)
        .map_err(|e| install_error(&e))?;
    let mut changes = Vec::new();
    match std::fs::read_link(&link.path) {
        Ok(t) if t.as_os_str() == link.target.as_str() => return Ok(Answer::Changes(changes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        _ if !force => {
            return Err(BusError {
                name: "org.freedesktop.DBus.Error.FileExists",
                message: format!("File exists: {} (force replaces it)", link.path),
            })
        }
        _ => {
            std::fs::remove_file(&link.path)
                .map_err(|e| BusError::failed(format!("{}: {e}", link.path)))?;
            changes.push(("unlink".to_string(), link.path.clone(), String::new()));
        }
    }
    changes.extend(apply(&[link], true)?);
    Ok(Answer::Changes(changes))
}

/// What the search path gives a unit of the init now, read from one
/// listing of it: [`on_path`].
pub struct OnPath {
    /// Its file and drop-ins (`DropInPaths`, `NeedDaemonReload`).
    pub unit: flotilla_systemd::ResolvedUnit,
    /// Its unit file's state as `GetUnitFileState` says it (`enabled`,
    /// `disabled`, `static` …: `UnitFileState`), `None` without a file.
    pub file_state: Option<&'static str>,
}

/// What the search path gives a unit of the init now ([`OnPath`]);
/// `None` for a unit that is none of the path's (transient, built in, a
/// mount), or when the path cannot be read.
pub async fn on_path(hub: &Hub, s: &flotilla_units::protocol::UnitStatus) -> Option<OnPath> {
    let fileless = s.source.is_empty() && !s.kind.row().needs_file;
    if !s.source.starts_with('/') && !fileless {
        return None;
    }
    let dirs = search_path(hub).await.ok()?;
    Some(on_path_in(&dirs, &s.unit))
}

/// [`on_path`] of unit `name` in the listed search path `dirs`.
fn on_path_in(dirs: &[SearchDir], name: &str) -> OnPath {
    OnPath {
        unit: resolve_unit(dirs, name),
        file_state: file_state(dirs, name).map(|(_, state)| state),
    }
}

/// The drop-ins of a unit read from a file, as its `DropInPaths` lists
/// them (`systemctl cat` and `status` print them): those the search path
/// applies to the unit now ([`on_path`]), in the order they apply (an
/// instance's template's too). Empty for a unit of no file (but of a type
/// that needs none, a slice, made from its drop-ins: `systemctl cat`
/// prints them), a YAML unit, or when the path cannot be read.
pub fn dropin_paths(now: Option<&flotilla_systemd::ResolvedUnit>) -> Vec<String> {
    now.map(|r| r.dropins.clone()).unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A unit's `UnitFileState` is its file's state, as `GetUnitFileState`
    /// says it: systemd-timedated enables the NTP unit unless it reads
    /// `enabled` there, and disables it when it does (an empty state
    /// crashed it).
    #[test]
    fn a_unit_on_the_path_has_its_file_state() {
        let tmp = tempfile::tempdir().unwrap();
        let etc = tmp.path().join("etc");
        let lib = tmp.path().join("lib");
        std::fs::create_dir_all(etc.join("sysinit.target.wants")).unwrap();
        std::fs::create_dir_all(&lib).unwrap();
        let unit = lib.join("ntp.service");
        std::fs::write(
            &unit,
            "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=sysinit.target\n",
        )
        .unwrap();
        std::fs::write(
            lib.join("plain.service"),
            "[Service]\nExecStart=/bin/true\n",
        )
        .unwrap();
        let path = |p: &std::path::Path| p.display().to_string();
        let dirs =
            || flotilla_client::unit_dirs::list_search_path([path(&etc), path(&lib)]).unwrap();
        let state = |name: &str| on_path_in(&dirs(), name).file_state;
        assert_eq!(state("ntp.service"), Some("disabled"));
        assert_eq!(state("plain.service"), Some("static"));
        assert_eq!(state("nothere.service"), None);
        std::os::unix::fs::symlink(&unit, etc.join("sysinit.target.wants/ntp.service")).unwrap();
        assert_eq!(state("ntp.service"), Some("enabled"));
        std::os::unix::fs::symlink("/dev/null", etc.join("ntp.service")).unwrap();
        assert_eq!(state("ntp.service"), Some("masked"));
    }
}
