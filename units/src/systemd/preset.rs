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
//! - each line is `enable PATTERN [INSTANCE...]`, `disable PATTERN` or
//!   `ignore PATTERN`; `#` and `;` start comments; PATTERN is a shell glob
//!   of unit names;
//! - the first line that matches a unit decides; a unit no line matches is
//!   enabled (as when there is no preset file at all).

use super::fnmatch;
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
    for d in search_path {
        if let Some(base) = d.strip_suffix("/systemd/system") {
            let p = format!("{base}/systemd/system-preset");
            if !out.contains(&p) {
                out.push(p);
            }
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
                if !instances.is_empty() && action != PresetAction::Enable {
                    problems.push(PresetProblem {
                        file: file.clone(),
                        line: i + 1,
                        message: format!("'{verb}' takes no instances"),
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

    /// The first rule that matches `unit`, if any.
    pub fn rule(&self, unit: &str) -> Option<&PresetRule> {
        self.rules.iter().find(|r| fnmatch(&r.pattern, unit))
    }

    /// What the presets say of `unit`: its first matching rule's action;
    /// [`PresetAction::Enable`] when none matches.
    pub fn action(&self, unit: &str) -> PresetAction {
        self.rule(unit).map_or(PresetAction::Enable, |r| r.action)
    }
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
            "/tmp/x/lib/systemd/system",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            preset_dirs(&path),
            [
                "/etc/systemd/system-preset",
                "/run/systemd/system-preset",
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
        assert_eq!(p.action("c.service"), PresetAction::Enable);
        assert_eq!(p.action("b.service"), PresetAction::Enable);
    }
}
