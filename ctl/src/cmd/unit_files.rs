//! The unit files of the init's search path, as systemctl handles them
//! (docs/contract.md §3c): `enable`, `disable`, `is-enabled`, `cat`, `show`,
//! `list-unit-files`, `preset` (the preset files: `super::preset`; a YAML unit's `enable`, `disable` and `is-enabled`:
//! `super::yaml_install`).
//!
//! The init says its search path (`status`'s `units_path`); `initctl`
//! lists the directories and reads the files itself, as `systemctl
//! --root` does, and what the files mean is `flotilla_systemd`'s
//! (`resolve_unit`, `enable_links`, `disable_links`, `is_enabled`,
//! `MergedUnit`): the init, PID 1, writes no links. After a change it asks
//! the init to reload, which starts what the target now wants and stops
//! what it no longer wants.

use super::{eprint_line, Ctx};
use crate::client::unexpected;
use crate::command::UnitFiles;
use crate::error::{CtlError, EXIT_FAILED, EXIT_OK};
use flotilla_client::unit_dirs::{config_dir, make_link, mask_links, remove_link};
use flotilla_systemd::{
    cat_text, disable_links, enable_links, is_enabled, parse, preset_plan, resolve_unit,
    unit_names, Definition, InstallError, InstallInfo, Link, MergedUnit, PresetAction, PresetMode,
    SearchDir,
};
use flotilla_units::protocol::{Reply, Request};

/// Runs the command.
pub fn run(ctx: &mut Ctx<'_>, what: UnitFiles) -> Result<i32, CtlError> {
    let dirs = search_path(ctx)?;
    match what {
        UnitFiles::Enable { units, now: _ } => change(ctx, &dirs, &units, true),
        UnitFiles::Disable { units, now: _ } => change(ctx, &dirs, &units, false),
        UnitFiles::IsEnabled { units, quiet } => {
            let mut any = false;
            let mut code = EXIT_OK;
            for u in &units {
                let state = is_enabled(&dirs, u, &install_of(&dirs, u).unwrap_or_default())
                    .or_else(|| super::yaml_install::is_enabled(&dirs, u));
                match state {
                    Some(state) => {
                        any |= ENABLED.contains(&state);
                        if !quiet {
                            ctx.print(&format!("{state}\n"))?;
                        }
                    }
                    None => {
                        eprint_line(&format!(
                            "Failed to get unit file state for {u}: No such file or directory"
                        ));
                        code = EXIT_FAILED;
                    }
                }
            }
            Ok(if any && code == EXIT_OK {
                EXIT_OK
            } else {
                EXIT_FAILED
            })
        }
        UnitFiles::Cat(units) => {
            let mut code = EXIT_OK;
            for (i, u) in units.iter().enumerate() {
                let r = resolve_unit(&dirs, u);
                let text = match &r.definition {
                    Definition::NotFound => {
                        eprint_line(&format!("No files found for {u}."));
                        code = EXIT_FAILED;
                        continue;
                    }
                    Definition::Masked(_) => format!("# Unit {u} is masked.\n"),
                    Definition::File(p) => {
                        let files = read_all(std::iter::once(p).chain(&r.dropins))?;
                        let pairs: Vec<(&str, &str)> = files
                            .iter()
                            .map(|(p, t)| (p.as_str(), t.as_str()))
                            .collect();
                        cat_text(&pairs)
                    }
                };
                if i > 0 {
                    ctx.print("\n")?;
                }
                ctx.print(&text)?;
            }
            Ok(code)
        }
        UnitFiles::Show { unit, keys } => {
            let r = resolve_unit(&dirs, &unit);
            let Definition::File(p) = &r.definition else {
                eprint_line(&format!("No files found for {unit}."));
                return Ok(EXIT_FAILED);
            };
            let files = read_all(std::iter::once(p).chain(&r.dropins))?;
            let pairs: Vec<(&str, &str)> = files
                .iter()
                .skip(1)
                .map(|(p, t)| (p.as_str(), t.as_str()))
                .collect();
            let (file, text) = files.first().map_or(("", ""), |(p, t)| (p, t));
            ctx.print(&show_text(&MergedUnit::merge((file, text), &pairs), &keys))?;
            Ok(EXIT_OK)
        }
        UnitFiles::Preset(units) => {
            let presets = super::preset::load(&dirs);
            // systemd's unit files as systemd presets them; the others
            // (YAML units) by what the presets say of their names.
            let (files, others): (Vec<String>, Vec<String>) = units
                .into_iter()
                .partition(|u| !matches!(resolve_unit(&dirs, u).definition, Definition::NotFound));
            let mut plan = match preset_plan(&dirs, &presets, &files, PresetMode::Full, false) {
                Ok(plan) => plan,
                Err(e) => {
                    eprint_line(&format!("Failed to preset: {e}"));
                    return Ok(EXIT_FAILED);
                }
            };
            for u in others {
                match presets.action(&u) {
                    PresetAction::Enable => plan.enable.push(u),
                    PresetAction::Disable => plan.disable.push(u),
                    PresetAction::Ignore => {}
                }
            }
            let (enable, disable) = (plan.enable, plan.disable);
            let mut code = EXIT_OK;
            if !enable.is_empty() {
                code = change(ctx, &dirs, &enable, true)?;
            }
            if !disable.is_empty() && code == EXIT_OK {
                // The first change reloaded: list the path again.
                let dirs = search_path(ctx)?;
                code = change(ctx, &dirs, &disable, false)?;
            }
            Ok(code)
        }
        UnitFiles::List => {
            let presets = super::preset::load(&dirs);
            let mut rows = vec![("UNIT FILE".to_string(), "STATE", "PRESET".to_string())];
            for name in unit_names(&dirs) {
                let install = install_of(&dirs, &name).unwrap_or_default();
                let Some(state) = is_enabled(&dirs, &name, &install) else {
                    continue;
                };
                // What the presets say of a unit that can be enabled;
                // the others have no preset, as in systemctl.
                let preset = if install.has_rules() {
                    presets.action(&name).to_string()
                } else {
                    "-".to_string()
                };
                rows.push((name, state, preset));
            }
            let w0 = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
            let w1 = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
            let mut out = String::new();
            for (n, s, p) in &rows {
                out.push_str(&format!("{n:<w0$} {s:<w1$} {p}\n"));
            }
            out.push_str(&format!("\n{} unit files listed.\n", rows.len() - 1));
            ctx.print(&out)?;
            Ok(EXIT_OK)
        }
    }
}

/// The states `is-enabled` exits 0 for, as systemctl.
const ENABLED: &[&str] = &[
    "enabled",
    "enabled-runtime",
    "static",
    "alias",
    "indirect",
    "generated",
    "transient",
];

/// The init's search path, listed.
fn search_path(ctx: &mut Ctx<'_>) -> Result<Vec<SearchDir>, CtlError> {
    let paths = match ctx.call(Request::Status { name: None })? {
        Reply::Status(s) => s.units_path,
        other => return Err(unexpected(&other, "status")),
    };
    flotilla_client::unit_dirs::list_search_path(paths)
        .map_err(|(p, e)| CtlError::Failed(format!("cannot list {p}: {e}")))
}

/// The `[Install]` section of the file that defines `name`.
fn install_of(dirs: &[SearchDir], name: &str) -> Option<InstallInfo> {
    read_install(dirs, name)?.ok()
}

/// The `[Install]` section of the file that defines `name`, or what is
/// wrong with it; `None` when there is no file to read.
fn read_install(dirs: &[SearchDir], name: &str) -> Option<Result<InstallInfo, InstallError>> {
    let r = resolve_unit(dirs, name);
    let Definition::File(p) = &r.definition else {
        return None;
    };
    let text = std::fs::read_to_string(p).ok()?;
    Some(InstallInfo::from_unit_file(&r.id, &parse(&text)))
}

/// Each file's path and text.
fn read_all<'a>(
    paths: impl Iterator<Item = &'a String>,
) -> Result<Vec<(String, String)>, CtlError> {
    paths
        .map(|p| {
            std::fs::read_to_string(p)
                .map(|t| (p.clone(), t))
                .map_err(|e| CtlError::Failed(format!("cannot read {p}: {e}")))
        })
        .collect()
}

/// `KEY=VALUE` for every assignment in force, keys in the order they first
/// appear; with `keys`, only those (an unset one as `KEY=`).
fn show_text(m: &MergedUnit, keys: &[String]) -> String {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for o in &m.options {
        let k = (o.option.section.as_str(), o.option.name.as_str());
        if !seen.contains(&k) {
            seen.push(k);
        }
    }
    let mut out = String::new();
    let mut shown: Vec<&str> = Vec::new();
    for (section, key) in seen {
        if !keys.is_empty() && !keys.iter().any(|k| k == key) {
            continue;
        }
        for o in m.effective(section, key) {
            out.push_str(&format!("{key}={}\n", o.option.value));
            shown.push(key);
        }
    }
    for k in keys.iter().filter(|k| !shown.contains(&k.as_str())) {
        out.push_str(&format!("{k}=\n"));
    }
    out
}

/// `enable` (`on`) or `disable` of `units`: the links made or removed,
/// each said as systemctl says it, then the init reloaded.
fn change(
    ctx: &mut Ctx<'_>,
    dirs: &[SearchDir],
    units: &[String],
    on: bool,
) -> Result<i32, CtlError> {
    let verb = if on { "enable" } else { "disable" };
    let config = config_dir(dirs);
    let install = |n: &str| install_of(dirs, n);
    let mut links: Vec<Link> = Vec::new();
    for u in units {
        let r = resolve_unit(dirs, u);
        match &r.definition {
            Definition::NotFound => {
                if let Some(yaml) = super::yaml_install::links(dirs, &config, u, on) {
                    match yaml {
                        Ok(l) => links.extend(l),
                        Err(code) => return Ok(code),
                    }
                    continue;
                }
                eprint_line(&format!(
                    "Failed to {verb} unit: Unit file {u} does not exist."
                ));
                return Ok(EXIT_FAILED);
            }
            Definition::Masked(_) if on => {
                eprint_line(&format!("Failed to {verb} unit: Unit file {u} is masked."));
                return Ok(EXIT_FAILED);
            }
            _ => {}
        }
        if on {
            let info = match read_install(dirs, u) {
                Some(Err(e)) => {
                    eprint_line(&format!("Failed to {verb} unit: {e}"));
                    return Ok(EXIT_FAILED);
                }
                other => other.and_then(Result::ok).unwrap_or_default(),
            };
            if !info.has_rules() && info.also.is_empty() {
                eprint_line(NO_INSTALL);
                continue;
            }
            match enable_links(dirs, &config, u, &install) {
                Ok(l) => links.extend(l),
                Err(e) => {
                    eprint_line(&format!("Failed to {verb} unit: {e}"));
                    return Ok(EXIT_FAILED);
                }
            }
        } else {
            links.extend(disable_links(dirs, u, &install));
        }
    }
    links.sort();
    links.dedup();
    apply(ctx, &links, on, verb)
}

/// `systemctl mask` (`on`) or `unmask` of `units`: a link to `/dev/null`
/// named like the unit in the configuration directory (where `enable`
/// links go), or every such link in the configuration directories
/// removed; then the init reloads (a masked unit is no unit).
pub fn mask(ctx: &mut Ctx<'_>, units: &[String], on: bool) -> Result<i32, CtlError> {
    let dirs = search_path(ctx)?;
    let verb = if on { "mask" } else { "unmask" };
    match mask_links(&dirs, units, on, false) {
        Ok(links) => apply(ctx, &links, on, verb),
        Err(why) => {
            eprint_line(&format!("Failed to {verb} unit: {why}"));
            Ok(EXIT_FAILED)
        }
    }
}

/// Makes (`on`) or removes `links`, each said as systemctl says it, then
/// reloads the init when anything changed.
fn apply(ctx: &mut Ctx<'_>, links: &[Link], on: bool, verb: &str) -> Result<i32, CtlError> {
    for l in links {
        let done = if on { make_link(l) } else { remove_link(l) };
        if let Err(e) = done {
            eprint_line(&format!("Failed to {verb} unit: {}: {e}", l.path));
            return Ok(EXIT_FAILED);
        }
        eprint_line(&if on {
            format!("Created symlink {} \u{2192} {}.", l.path, l.target)
        } else {
            format!("Removed \"{}\".", l.path)
        });
    }
    if links.is_empty() {
        return Ok(EXIT_OK);
    }
    super::reload::run(ctx).map(|code| {
        if code == EXIT_OK {
            EXIT_OK
        } else {
            EXIT_FAILED
        }
    })
}

/// What systemctl says when a unit has nothing to enable.
const NO_INSTALL: &str = "\
The unit files have no installation config (WantedBy=, RequiredBy=, Also=,
Alias= settings in the [Install] section, and DefaultInstance= for template
units). This means they are not meant to be enabled or disabled using systemctl.

Possible reasons for having this kind of units are:
• A unit may be statically enabled by being symlinked from another unit's
  .wants/ or .requires/ directory.
• A unit's purpose may be to act as a helper for some other unit which has
  a requirement dependency on it.
• A unit may be started when needed via activation (socket, path, timer,
  D-Bus, udev, scripted systemctl call, ...).
• In case of template units, the unit is meant to be enabled with some
  instance name specified.";

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn show_gives_the_keys_in_force() {
        let m = MergedUnit::merge(
            (
                "/lib/a.service",
                "[Service]\nExecStart=/bin/a\nEnvironment=A=1\n",
            ),
            &[(
                "/etc/a.service.d/o.conf",
                "[Service]\nExecStart=\nExecStart=/bin/b\n",
            )],
        );
        assert_eq!(show_text(&m, &[]), "ExecStart=/bin/b\nEnvironment=A=1\n");
        assert_eq!(
            show_text(&m, &["Environment".into(), "User".into()]),
            "Environment=A=1\nUser=\n"
        );
    }
}
