//! `initctl enable`, `disable` and `is-enabled` of a YAML unit: its
//! `wanted-by` key is its `[Install] WantedBy=`. The unit `NAME` is the
//! file `NAME.yaml` (or `NAME.yml`) that comes first on the search path;
//! enabling links `TARGET.wants/NAME` to that file in the configuration
//! directory for each target of `wanted-by` (the loader reads such a link
//! as `TARGET` wanting `NAME`, as for any unit); disabling removes every
//! `*.wants/NAME` and `*.requires/NAME` link of the configuration
//! directories; `is-enabled` says `enabled` when there is one, else
//! `disabled` (with `wanted-by`) or `static`. Computed from a search-path
//! listing, as [`super::install`] is for systemd units.

use super::install::Link;
use super::search_dir::{absolute, DirRole, EntryKind, SearchDir};

/// How a YAML unit name is defined on the path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum YamlDefinition {
    /// By this file.
    File(String),
    /// By a link to `/dev/null` or an empty file (its path).
    Masked(String),
}

/// The YAML file that defines the unit `name`: the first `NAME.yaml` or
/// `NAME.yml` at the top of a directory of the path (`None` if none).
pub fn yaml_unit_file(dirs: &[SearchDir], name: &str) -> Option<YamlDefinition> {
    let names = [format!("{name}.yaml"), format!("{name}.yml")];
    for d in dirs {
        for n in &names {
            let Some(e) = d.entry(n) else {
                continue;
            };
            let path = format!("{}/{n}", d.path);
            return Some(match &e.kind {
                EntryKind::File { empty: true } => YamlDefinition::Masked(path),
                EntryKind::Symlink { target } if absolute(&d.path, target) == "/dev/null" => {
                    YamlDefinition::Masked(path)
                }
                EntryKind::Dir => continue,
                _ => YamlDefinition::File(path),
            });
        }
    }
    None
}

/// The links enabling the unit `name` (defined by `file`, wanted by
/// `wanted_by`) makes in `config_dir`, without those that exist already.
pub fn yaml_enable_links(
    dirs: &[SearchDir],
    config_dir: &str,
    name: &str,
    file: &str,
    wanted_by: &[String],
) -> Vec<Link> {
    let existing = enablement_links(dirs, name);
    let mut out: Vec<Link> = wanted_by
        .iter()
        .map(|t| Link {
            path: format!("{config_dir}/{t}.wants/{name}"),
            target: file.to_string(),
        })
        .filter(|l| !existing.iter().any(|e| e.path == l.path))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The links disabling the unit `name` removes: its enablement links.
pub fn yaml_disable_links(dirs: &[SearchDir], name: &str) -> Vec<Link> {
    enablement_links(dirs, name)
}

/// `is-enabled` of the unit `name` (`wanted_by`: its `wanted-by`).
pub fn yaml_is_enabled(dirs: &[SearchDir], name: &str, wanted_by: &[String]) -> &'static str {
    if !enablement_links(dirs, name).is_empty() {
        "enabled"
    } else if wanted_by.is_empty() {
        "static"
    } else {
        "disabled"
    }
}

/// Every `*.wants/NAME` and `*.requires/NAME` symlink of the configuration
/// directories (`Config` and `Runtime` roles), sorted.
fn enablement_links(dirs: &[SearchDir], name: &str) -> Vec<Link> {
    let mut out: Vec<Link> = dirs
        .iter()
        .filter(|d| matches!(d.role, DirRole::Config | DirRole::Runtime))
        .flat_map(|d| {
            d.entries.iter().filter_map(move |e| {
                let EntryKind::Symlink { target } = &e.kind else {
                    return None;
                };
                let (sub, link_name) = e.path.split_once('/')?;
                let deps = sub.ends_with(".wants") || sub.ends_with(".requires");
                (deps && link_name == name).then(|| Link {
                    path: format!("{}/{}", d.path, e.path),
                    target: absolute(&d.path, target),
                })
            })
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::unit_path::tests::{f, l};

    fn dirs(enabled: bool) -> Vec<SearchDir> {
        let mut etc = vec![l("hidden.yaml", "/dev/null")];
        if enabled {
            etc.push(l("multi-user.target.wants/web", "/lib/units/web.yaml"));
        }
        vec![
            SearchDir {
                path: "/etc/systemd/system".into(),
                role: DirRole::Config,
                entries: etc,
            }
            .sorted(),
            SearchDir {
                path: "/lib/units".into(),
                role: DirRole::Vendor,
                entries: vec![
                    f("web.yaml"),
                    f("db.yml"),
                    f("hidden.yaml"),
                    // A vendor directory's links are the package's: not
                    // the administrator's enablement.
                    l("default.wants/db", "/lib/units/db.yml"),
                ],
            }
            .sorted(),
        ]
    }

    #[test]
    fn the_first_yaml_file_defines_the_unit() {
        let d = dirs(false);
        assert_eq!(
            yaml_unit_file(&d, "web"),
            Some(YamlDefinition::File("/lib/units/web.yaml".into()))
        );
        assert_eq!(
            yaml_unit_file(&d, "db"),
            Some(YamlDefinition::File("/lib/units/db.yml".into()))
        );
        assert_eq!(
            yaml_unit_file(&d, "hidden"),
            Some(YamlDefinition::Masked(
                "/etc/systemd/system/hidden.yaml".into()
            ))
        );
        assert_eq!(yaml_unit_file(&d, "nope"), None);
    }

    #[test]
    fn enable_links_each_wanted_by_target_once() {
        let wanted = vec!["multi-user.target".to_string(), "default".to_string()];
        let made = yaml_enable_links(
            &dirs(false),
            "/etc/systemd/system",
            "web",
            "/lib/units/web.yaml",
            &wanted,
        );
        assert_eq!(
            made,
            [
                Link {
                    path: "/etc/systemd/system/default.wants/web".into(),
                    target: "/lib/units/web.yaml".into()
                },
                Link {
                    path: "/etc/systemd/system/multi-user.target.wants/web".into(),
                    target: "/lib/units/web.yaml".into()
                },
            ]
        );
        // The link that exists is not made again.
        let made = yaml_enable_links(
            &dirs(true),
            "/etc/systemd/system",
            "web",
            "/lib/units/web.yaml",
            &wanted,
        );
        assert_eq!(made.len(), 1, "{made:?}");
        assert!(made[0].path.ends_with("/default.wants/web"));
    }

    #[test]
    fn disable_and_is_enabled() {
        let wanted = vec!["multi-user.target".to_string()];
        assert_eq!(yaml_is_enabled(&dirs(false), "web", &wanted), "disabled");
        assert_eq!(yaml_is_enabled(&dirs(true), "web", &wanted), "enabled");
        assert_eq!(yaml_is_enabled(&dirs(false), "web", &[]), "static");
        // A vendor directory's link is not enablement.
        assert_eq!(yaml_is_enabled(&dirs(false), "db", &wanted), "disabled");
        assert_eq!(
            yaml_disable_links(&dirs(true), "web"),
            [Link {
                path: "/etc/systemd/system/multi-user.target.wants/web".into(),
                target: "/lib/units/web.yaml".into()
            }]
        );
        assert!(yaml_disable_links(&dirs(false), "web").is_empty());
    }
}
