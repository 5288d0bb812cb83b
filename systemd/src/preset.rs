//! Presets (systemd.preset(5)): the `*.preset` files of the
//! `system-preset` directories say whether `systemctl preset` enables or
//! disables a unit, and give `list-unit-files` its preset column.
//!
//! systemd's rules, as implemented here:
//! - the directories are `/etc/systemd/system-preset`,
//!   `/run/systemd/system-preset`, `/usr/local/lib/systemd/system-preset`,
//!   `/usr/lib/systemd/system-preset` and `/lib/systemd/system-preset`:
//!   [`preset_dirs`] derives them from the unit search path (each
//!   directory ending in `/systemd/system` has a `/systemd/system-preset`
//!   beside it), so a copy of a system's directories has its presets too;
//! - the files of all directories are read in the order of their file
//!   names; a file name in an earlier directory hides the same name in
//!   later ones (a `*.preset` linked to `/dev/null` is that, an empty file);
//!   (`/usr/lib/...` read beside `/lib/...`, as on a merged-`/usr` system
//!   they are one);
//! - each line is `enable PATTERN [INSTANCE...]`, `disable PATTERN` or
//!   `ignore PATTERN`; `#` and `;` start comments; PATTERN is a shell glob
//!   of unit names; instances are for a template (`enable getty@.service
//!   tty1 tty2`): `preset getty@.service` enables those instances, and the
//!   rule matches each listed instance by its name;
//! - the first line that matches a unit decides; a unit no line matches is
//!   enabled (as when there is no preset file at all);
//! - [`preset_plan`] is what `systemctl preset` and `preset-all` do with
//!   that: an alias is skipped, the units to enable and to disable are
//!   listed for the enable and disable code (`super::enable_links`,
//!   `super::disable_links`), and `--preset-mode` keeps one side.

use super::install::InstallError;
use super::search_dir::SearchDir;
use super::unit_path::{resolve, Definition};
use flotilla_units::condition::fnmatch;
use flotilla_units::unit_name::UnitName;
use std::fmt;

/// What the presets say of a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PresetAction {
    /// `enable`.
    Enable,
    /// `disable`.
    Disable,
    /// `ignore`: `preset` leaves the unit as it is.
    Ignore,
}

impl fmt::Display for PresetAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `list-unit-files`'s words.
        f.write_str(match self {
            PresetAction::Enable => "enabled",
            PresetAction::Disable => "disabled",
            PresetAction::Ignore => "ignored",
        })
    }
}

/// One rule of a preset file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresetRule {
    /// What it says.
    pub action: PresetAction,
    /// The glob of unit names it applies to.
    pub pattern: String,
    /// For `enable` of a template: the instances to enable.
    pub instances: Vec<String>,
}

/// The rules of every preset file, in the order they apply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Presets {
    rules: Vec<PresetRule>,
}

/// The preset directories of a unit search path, highest priority first,
/// each once.
pub fn preset_dirs(search_path: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |p: String| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    for d in search_path {
        if let Some(base) = d.strip_suffix("/systemd/system") {
            // systemd reads /usr/lib's presets also where only /lib is
            // on the unit path (one directory on a merged-/usr system;
            // same-named files there hide each other anyway).
            let usr = |r: &&str| r.ends_with("/usr") || r.ends_with("/usr/local");
            if let Some(root) = base.strip_suffix("/lib").filter(|r| !usr(r)) {
                add(format!("{root}/usr/lib/systemd/system-preset"));
            }
            add(format!("{base}/systemd/system-preset"));
        }
    }
    out
}

/// The preset files to read, in the order they apply: `listings` gives
/// each preset directory (highest priority first) and the file names in
/// it; names not ending in `.preset` are left out.
pub fn preset_files(listings: &[(String, Vec<String>)]) -> Vec<String> {
    let mut chosen: Vec<(&str, String)> = Vec::new();
    for (dir, names) in listings {
        for n in names.iter().filter(|n| n.ends_with(".preset")) {
            if !chosen.iter().any(|(c, _)| c == n) {
                chosen.push((n, format!("{dir}/{n}")));
            }
        }
    }
    chosen.sort();
    chosen.into_iter().map(|(_, p)| p).collect()
}

/// A bad line of a preset file: systemd warns and skips it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresetProblem {
    /// The file.
    pub file: String,
    /// The line, from 1.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for PresetProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}; line ignored",
            self.file, self.line, self.message
        )
    }
}

impl Presets {
    /// The rules of `files` (path and text, in the order of
    /// [`preset_files`]) and the lines that were skipped.
    pub fn parse(files: &[(String, String)]) -> (Presets, Vec<PresetProblem>) {
        let mut rules = Vec::new();
        let mut problems = Vec::new();
        for (file, text) in files {
            for (i, raw) in text.lines().enumerate() {
                let line = raw.trim();
                if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                    continue;
                }
                let mut words = line.split_whitespace();
                let verb = words.next().unwrap_or_default();
                let action = match verb {
                    "enable" => PresetAction::Enable,
                    "disable" => PresetAction::Disable,
                    "ignore" => PresetAction::Ignore,
                    _ => {
                        problems.push(PresetProblem {
                            file: file.clone(),
                            line: i + 1,
                            message: format!(
                                "unknown command '{verb}' (enable, disable or ignore)"
                            ),
                        });
                        continue;
                    }
                };
                let Some(pattern) = words.next() else {
                    problems.push(PresetProblem {
                        file: file.clone(),
                        line: i + 1,
                        message: format!("'{verb}' needs a unit name or glob"),
                    });
                    continue;
                };
                let instances: Vec<String> = words.map(str::to_string).collect();
                let bad = if instances.is_empty() {
                    None
                } else if action != PresetAction::Enable {
                    Some(format!("'{verb}' takes no instances"))
                } else if !UnitName::split(pattern).is_template() {
                    Some(format!(
                        "instances are for a template (NAME@.TYPE), not {pattern}"
                    ))
                } else {
                    instances
                        .iter()
                        .find(|i| {
                            UnitName::split(pattern).instantiate(i).is_none_or(|n| {
                                flotilla_units::unit_name::validate_systemd_unit_name(&n).is_err()
                            })
                        })
                        .map(|i| format!("'{i}' is not a valid instance name"))
                };
                if let Some(message) = bad {
                    problems.push(PresetProblem {
                        file: file.clone(),
                        line: i + 1,
                        message,
                    });
                    continue;
                }
                rules.push(PresetRule {
                    action,
                    pattern: pattern.to_string(),
                    instances,
                });
            }
        }
        (Presets { rules }, problems)
    }

    /// The first rule that matches `unit`, if any: its pattern matches the
    /// name, or (a rule with instances) the name is one of its instances.
    pub fn rule(&self, unit: &str) -> Option<&PresetRule> {
        self.rules.iter().find(|r| {
            fnmatch(&r.pattern, unit)
                || r.instances
                    .iter()
                    .any(|i| UnitName::split(&r.pattern).instantiate(i).as_deref() == Some(unit))
        })
    }

    /// What the presets say of `unit`: its first matching rule's action;
    /// [`PresetAction::Enable`] when none matches.
    pub fn action(&self, unit: &str) -> PresetAction {
        self.rule(unit).map_or(PresetAction::Enable, |r| r.action)
    }

    /// The units `preset` enables for `unit` when the presets say
    /// enable: the instances its rule lists when `unit` is a template the
    /// rule names, else `unit` itself.
    pub fn enables(&self, unit: &str) -> Vec<String> {
        let n = UnitName::split(unit);
        match self.rule(unit) {
            Some(r) if n.is_template() && fnmatch(&r.pattern, unit) && !r.instances.is_empty() => r
                .instances
                .iter()
                .filter_map(|i| n.instantiate(i))
                .collect(),
            _ => vec![unit.to_string()],
        }
    }
}

/// `systemctl preset --preset-mode=`: which side of the presets applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PresetMode {
    /// `full` (the default): enable and disable.
    Full,
    /// `enable-only`.
    EnableOnly,
    /// `disable-only`.
    DisableOnly,
}

impl PresetMode {
    /// systemd's names; the empty string is `full`, as in systemd.
    pub fn parse(s: &str) -> Option<PresetMode> {
        match s {
            "" | "full" => Some(PresetMode::Full),
            "enable-only" => Some(PresetMode::EnableOnly),
            "disable-only" => Some(PresetMode::DisableOnly),
            _ => None,
        }
    }
}

/// What `preset` does: the units to enable and those to disable, each
/// once, in the order asked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PresetPlan {
    /// Enabled as `systemctl enable` enables them.
    pub enable: Vec<String>,
    /// Disabled as `systemctl disable` disables them.
    pub disable: Vec<String>,
}

/// `systemctl preset NAMES` (`all`: `preset-all` of every name on the
/// path) on the search path `dirs`: an alias is skipped (its unit is
/// preset under its own name); a unit the presets enable is enabled (a
/// template as the instances its rule lists), one they disable disabled,
/// an ignored one left alone; `mode` keeps one side. A named unit that is
/// not on the path, or is masked and to be enabled, is an error, as in
/// systemd; `preset-all` passes over such units.
pub fn preset_plan(
    dirs: &[SearchDir],
    presets: &Presets,
    names: &[String],
    mode: PresetMode,
    all: bool,
) -> Result<PresetPlan, InstallError> {
    let mut plan = PresetPlan::default();
    for name in names {
        let r = resolve(dirs, name);
        let masked = match &r.definition {
            Definition::NotFound if all => continue,
            Definition::NotFound => return Err(InstallError::NotFound(name.clone())),
            Definition::Masked(_) => true,
            Definition::File(_) => false,
        };
        if r.id != *name {
            continue;
        }
        let (list, units) = match presets.action(name) {
            PresetAction::Ignore => continue,
            PresetAction::Disable => (&mut plan.disable, vec![name.clone()]),
            PresetAction::Enable if masked && all => continue,
            PresetAction::Enable if masked => return Err(InstallError::Masked(name.clone())),
            PresetAction::Enable => (&mut plan.enable, presets.enables(name)),
        };
        for u in units {
            if !list.contains(&u) {
                list.push(u);
            }
        }
    }
    match mode {
        PresetMode::Full => {}
        PresetMode::EnableOnly => plan.disable.clear(),
        PresetMode::DisableOnly => plan.enable.clear(),
    }
    Ok(plan)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn presets(files: &[(&str, &str)]) -> (Presets, Vec<PresetProblem>) {
        let owned: Vec<(String, String)> = files
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        Presets::parse(&owned)
    }

    #[test]
    fn dirs_beside_each_systemd_system_directory() {
        let path: Vec<String> = [
            "/etc/init/units",
            "/etc/systemd/system",
            "/run/systemd/system",
            "/usr/local/lib/systemd/system",
            "/tmp/x/lib/systemd/system",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            preset_dirs(&path),
            [
                "/etc/systemd/system-preset",
                "/run/systemd/system-preset",
                "/usr/local/lib/systemd/system-preset",
                "/tmp/x/usr/lib/systemd/system-preset",
                "/tmp/x/lib/systemd/system-preset"
            ]
        );
    }

    #[test]
    fn files_in_name_order_and_earlier_directories_hide_later_ones() {
        let listings = vec![
            (
                "/etc/systemd/system-preset".to_string(),
                vec!["90-systemd.preset".to_string(), "README".to_string()],
            ),
            (
                "/lib/systemd/system-preset".to_string(),
                vec![
                    "90-systemd.preset".to_string(),
                    "99-default.preset".to_string(),
                    "10-site.preset".to_string(),
                ],
            ),
        ];
        assert_eq!(
            preset_files(&listings),
            [
                "/lib/systemd/system-preset/10-site.preset",
                "/etc/systemd/system-preset/90-systemd.preset",
                "/lib/systemd/system-preset/99-default.preset",
            ]
        );
    }

    #[test]
    fn the_first_matching_line_wins_and_no_match_enables() {
        let (p, problems) = presets(&[
            (
                "/p/10-site.preset",
                "# site policy\n; also a comment\n\ndisable nginx.service\nenable getty@.service tty1 tty2\n",
            ),
            (
                "/p/90-systemd.preset",
                "enable nginx.service\nignore debug-*.service\ndisable *\n",
            ),
        ]);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(p.action("nginx.service"), PresetAction::Disable);
        assert_eq!(p.action("debug-shell.service"), PresetAction::Ignore);
        assert_eq!(p.action("cron.service"), PresetAction::Disable);
        let getty = p.rule("getty@.service").unwrap();
        assert_eq!(getty.action, PresetAction::Enable);
        assert_eq!(getty.instances, ["tty1", "tty2"]);
        // No rule at all: enabled, as systemd does without preset files.
        assert_eq!(
            Presets::default().action("cron.service"),
            PresetAction::Enable
        );
        assert_eq!(PresetAction::Disable.to_string(), "disabled");
    }

    #[test]
    fn bad_lines_are_skipped_with_their_place() {
        let (p, problems) = presets(&[(
            "/p/x.preset",
            "enable\nfrobnicate a.service\ndisable b.service extra\nenable c.service\n",
        )]);
        let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "/p/x.preset:1: 'enable' needs a unit name or glob; line ignored",
                "/p/x.preset:2: unknown command 'frobnicate' (enable, disable or ignore); line ignored",
                "/p/x.preset:3: 'disable' takes no instances; line ignored",
            ]
        );
        let (_, problems) = presets(&[(
            "/p/y.preset",
            "enable web.service tty1\nenable getty@.service a/b\n",
        )]);
        let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "/p/y.preset:1: instances are for a template (NAME@.TYPE), not web.service; line ignored",
                "/p/y.preset:2: 'a/b' is not a valid instance name; line ignored",
            ]
        );
        assert_eq!(p.action("c.service"), PresetAction::Enable);
        assert_eq!(p.action("b.service"), PresetAction::Enable);
    }

    #[test]
    fn a_rules_instances_are_what_it_enables_and_match_by_name() {
        let (p, _) = presets(&[(
            "/p/a.preset",
            "enable getty@.service tty1 tty2\ndisable getty@*.service\nenable web@.service\n",
        )]);
        assert_eq!(
            p.enables("getty@.service"),
            ["getty@tty1.service", "getty@tty2.service"]
        );
        assert_eq!(p.action("getty@tty2.service"), PresetAction::Enable);
        assert_eq!(p.enables("getty@tty2.service"), ["getty@tty2.service"]);
        // Not listed: the next rule decides.
        assert_eq!(p.action("getty@tty5.service"), PresetAction::Disable);
        assert_eq!(p.enables("web@.service"), ["web@.service"]);
    }

    fn dirs() -> Vec<SearchDir> {
        use crate::unit_path::tests::{f, l};
        use crate::DirRole;
        vec![
            SearchDir {
                path: "/etc/systemd/system".into(),
                role: DirRole::Config,
                entries: vec![
                    l("www.service", "/lib/systemd/system/web.service"),
                    l("gone.service", "/dev/null"),
                ],
            }
            .sorted(),
            SearchDir {
                path: "/lib/systemd/system".into(),
                role: DirRole::Vendor,
                entries: vec![
                    f("web.service"),
                    f("db.service"),
                    f("cron.service"),
                    f("getty@.service"),
                    f("gone.service"),
                ],
            }
            .sorted(),
        ]
    }

    #[test]
    fn the_plan_of_preset_and_preset_all() {
        let (p, _) = presets(&[(
            "/p/a.preset",
            "enable getty@.service tty1\nignore cron.service\ndisable db.service\n",
        )]);
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let plan = |n: &[&str], mode, all| preset_plan(&dirs(), &p, &names(n), mode, all);
        // (names, mode, all) -> (enable, disable), or the error.
        type Row<'a> = (
            Vec<&'a str>,
            PresetMode,
            bool,
            Result<(Vec<&'a str>, Vec<&'a str>), InstallError>,
        );
        let table: Vec<Row> = vec![
            (
                vec![
                    "web.service",
                    "db.service",
                    "cron.service",
                    "getty@.service",
                ],
                PresetMode::Full,
                false,
                Ok((
                    vec!["web.service", "getty@tty1.service"],
                    vec!["db.service"],
                )),
            ),
            // An alias is preset under its unit's name, not its own.
            (
                vec!["www.service"],
                PresetMode::Full,
                false,
                Ok((vec![], vec![])),
            ),
            (
                vec!["web.service", "db.service"],
                PresetMode::EnableOnly,
                false,
                Ok((vec!["web.service"], vec![])),
            ),
            (
                vec!["web.service", "db.service"],
                PresetMode::DisableOnly,
                false,
                Ok((vec![], vec!["db.service"])),
            ),
            (
                vec!["nope.service"],
                PresetMode::Full,
                false,
                Err(InstallError::NotFound("nope.service".into())),
            ),
            (
                vec!["gone.service"],
                PresetMode::Full,
                false,
                Err(InstallError::Masked("gone.service".into())),
            ),
            // preset-all passes over what cannot be preset.
            (
                vec!["nope.service", "gone.service", "web.service"],
                PresetMode::Full,
                true,
                Ok((vec!["web.service"], vec![])),
            ),
        ];
        for (n, mode, all, want) in table {
            let got = plan(&n, mode, all);
            let want = want.map(|(e, d)| PresetPlan {
                enable: names(&e),
                disable: names(&d),
            });
            assert_eq!(got, want, "{n:?} {mode:?} all={all}");
        }
        assert_eq!(PresetMode::parse(""), Some(PresetMode::Full));
        assert_eq!(
            PresetMode::parse("enable-only"),
            Some(PresetMode::EnableOnly)
        );
        assert_eq!(PresetMode::parse("both"), None);
    }
}
