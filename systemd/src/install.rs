//! `[Install]` (systemd.unit(5)) and what `systemctl enable`, `disable` and
//! `is-enabled` do with it, computed from a search-path listing
//! ([`super::SearchDir`]): the links enabling creates (which directory,
//! which name, which target), the links disabling removes, and the state
//! `is-enabled` prints.

use super::parse::UnitFile;
use super::search_dir::{absolute, DirRole, EntryKind, SearchDir};
use super::unit_path::{resolve, Definition, ResolvedUnit};
use flotilla_units::unit_name::UnitName;

/// A unit's `[Install]` section.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InstallInfo {
    /// `WantedBy=`.
    pub wanted_by: Vec<String>,
    /// `RequiredBy=`.
    pub required_by: Vec<String>,
    /// `Also=`.
    pub also: Vec<String>,
    /// `Alias=`.
    pub alias: Vec<String>,
    /// `DefaultInstance=`.
    pub default_instance: Option<String>,
}

/// A bad `[Install]` line, or a unit that cannot be enabled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InstallError {
    /// A name in `WantedBy=`, `RequiredBy=`, `Also=` or `Alias=` is invalid.
    #[error("{key}={value}: {reason}")]
    BadName {
        /// The key.
        key: String,
        /// The value.
        value: String,
        /// Why.
        reason: String,
    },
    /// The unit is not on the search path.
    #[error("Unit file {0} does not exist.")]
    NotFound(String),
    /// A template without `DefaultInstance=` wanted by a plain unit.
    #[error("Failed to enable {unit}: destination unit {target} is a non-template unit, and {unit} has no DefaultInstance= (enable an instance such as {unit_example})", unit_example = UnitName::split(unit).instantiate("NAME").unwrap_or_default())]
    NeedsInstance {
        /// The template.
        unit: String,
        /// The plain unit that wants it.
        target: String,
    },
    /// The unit is masked.
    #[error("Unit file {0} is masked.")]
    Masked(String),
}

/// A symbolic link to create or remove.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Link {
    /// The link's path, e.g. `/etc/systemd/system/multi-user.target.wants/web.service`.
    pub path: String,
    /// What it points to, e.g. `/lib/systemd/system/web.service`.
    pub target: String,
}

impl InstallInfo {
    /// Reads `[Install]`: space-separated names, repeated keys adding to
    /// the list, an empty assignment emptying it; `DefaultInstance=` the
    /// last one. `%n %N %p %i` are expanded for `unit_name`.
    pub fn from_unit_file(unit_name: &str, file: &UnitFile) -> Result<InstallInfo, InstallError> {
        let mut info = InstallInfo::default();
        for o in file.options.iter().filter(|o| o.section == "Install") {
            let value = flotilla_units::specifier::expand_specifiers(o.value.trim(), unit_name);
            let list = match o.name.as_str() {
                "WantedBy" => &mut info.wanted_by,
                "RequiredBy" => &mut info.required_by,
                "Also" => &mut info.also,
                "Alias" => &mut info.alias,
                "DefaultInstance" => {
                    info.default_instance = (!value.is_empty()).then_some(value);
                    continue;
                }
                _ => continue,
            };
            if value.is_empty() {
                list.clear();
            }
            for name in value.split_whitespace() {
                flotilla_units::unit_name::validate_systemd_unit_name(name).map_err(|reason| {
                    InstallError::BadName {
                        key: o.name.clone(),
                        value: o.value.clone(),
                        reason,
                    }
                })?;
                if o.name == "Alias"
                    && UnitName::split(name).suffix != UnitName::split(unit_name).suffix
                {
                    return Err(InstallError::BadName {
                        key: o.name.clone(),
                        value: o.value.clone(),
                        reason: format!("alias {name} must have the same suffix as {unit_name}"),
                    });
                }
                list.push(name.to_string());
            }
        }
        Ok(info)
    }

    /// True when the section has something to enable (`WantedBy=`,
    /// `RequiredBy=` or `Alias=`).
    pub fn has_rules(&self) -> bool {
        !self.wanted_by.is_empty() || !self.required_by.is_empty() || !self.alias.is_empty()
    }
}

/// How `name` resolves on `dirs` (alias links followed) and the path of
/// its unit file, as systemd finds a unit it is to link: a masked or
/// missing unit is an error.
pub(super) fn unit_file(
    dirs: &[SearchDir],
    name: &str,
) -> Result<(super::unit_path::ResolvedUnit, String), InstallError> {
    let r = resolve(dirs, name);
    let fragment = match &r.definition {
        Definition::File(p) => p.clone(),
        Definition::Masked(_) => return Err(InstallError::Masked(name.to_string())),
        Definition::NotFound => return Err(InstallError::NotFound(name.to_string())),
    };
    Ok((r, fragment))
}

/// The links `systemctl enable NAME` creates in `config_dir` (the first
/// writable directory, `/etc/systemd/system`): `TARGET.wants/NAME` for
/// each `WantedBy=`, `TARGET.requires/NAME` for each `RequiredBy=`, and
/// `ALIAS` for each `Alias=`, each pointing to the unit's file. A template
/// is enabled as its `DefaultInstance=` (nothing without one); `install`
/// gives the `[Install]` section of a unit's file by name (for `Also=`,
/// which enables the named units too). Links that already exist are left
/// out. A template without `DefaultInstance=` links only into template
/// targets (`WantedBy=foo@.service`); wanted by a plain unit it is an
/// error, as in systemctl.
pub fn enable_links(
    dirs: &[SearchDir],
    config_dir: &str,
    name: &str,
    install: &dyn Fn(&str) -> Option<InstallInfo>,
) -> Result<Vec<Link>, InstallError> {
    let mut out = Vec::new();
    let mut todo = vec![name.to_string()];
    let mut done = Vec::new();
    while let Some(name) = todo.pop() {
        if done.contains(&name) {
            continue;
        }
        done.push(name.clone());
        let (r, fragment) = unit_file(dirs, &name)?;
        let template = r.template.as_deref().unwrap_or(&r.id);
        let info = install(template).unwrap_or_default();
        let n = UnitName::split(&r.id);
        for (targets, kind) in [(&info.wanted_by, "wants"), (&info.required_by, "requires")] {
            for t in targets {
                let tn = UnitName::split(t);
                // A template target takes the unit's instance (a template
                // links as a template); otherwise a template unit links as
                // its DefaultInstance=, or not at all.
                let (dst, src) = if tn.is_template() {
                    if n.is_instance() {
                        (
                            tn.instantiate(&n.instance).unwrap_or_default(),
                            r.id.clone(),
                        )
                    } else {
                        (t.clone(), r.id.clone())
                    }
                } else if n.is_template() {
                    match info
                        .default_instance
                        .as_ref()
                        .and_then(|i| n.instantiate(i))
                    {
                        Some(inst) => (t.clone(), inst),
                        None => {
                            return Err(InstallError::NeedsInstance {
                                unit: r.id.clone(),
                                target: t.clone(),
                            })
                        }
                    }
                } else {
                    (t.clone(), r.id.clone())
                };
                out.push(Link {
                    path: format!("{config_dir}/{dst}.{kind}/{src}"),
                    target: fragment.clone(),
                });
            }
        }
        for a in &info.alias {
            out.push(Link {
                path: format!("{config_dir}/{a}"),
                target: fragment.clone(),
            });
        }
        todo.extend(info.also.iter().cloned());
    }
    let existing = existing_links(dirs);
    out.retain(|l| !existing.contains(l));
    out.sort();
    out.dedup();
    Ok(out)
}

/// Every symlink of the listing as a [`Link`] (targets made absolute).
fn existing_links(dirs: &[SearchDir]) -> Vec<Link> {
    dirs.iter()
        .flat_map(|d| {
            d.entries.iter().filter_map(move |e| match &e.kind {
                EntryKind::Symlink { target } => Some(Link {
                    path: format!("{}/{}", d.path, e.path),
                    target: absolute(&d.path, target),
                }),
                _ => None,
            })
        })
        .collect()
}

/// The links `systemctl disable NAME` removes from the configuration
/// directories (`Config` and `Runtime` roles): every symlink named like
/// the unit or one of its `Also=` units, or pointing to a file of such a
/// name, except masks.
pub fn disable_links(
    dirs: &[SearchDir],
    name: &str,
    install: &dyn Fn(&str) -> Option<InstallInfo>,
) -> Vec<Link> {
    let mut names = vec![name.to_string()];
    let mut i = 0;
    while i < names.len() {
        let r = resolve(dirs, &names[i]);
        let template = r.template.clone().unwrap_or(r.id.clone());
        for a in install(&template).unwrap_or_default().also {
            if !names.contains(&a) {
                names.push(a);
            }
        }
        i += 1;
    }
    let mut out: Vec<Link> = dirs
        .iter()
        .filter(|d| matches!(d.role, DirRole::Config | DirRole::Runtime))
        .flat_map(|d| {
            d.entries.iter().filter_map(|e| {
                let EntryKind::Symlink { target } = &e.kind else {
                    return None;
                };
                let target = absolute(&d.path, target);
                let link_name = e.path.rsplit('/').next().unwrap_or("");
                let target_name = target.rsplit('/').next().unwrap_or("");
                let named = names.iter().any(|n| n == link_name || n == target_name);
                (named && target != "/dev/null").then(|| Link {
                    path: format!("{}/{}", d.path, e.path),
                    target,
                })
            })
        })
        .collect();
    out.sort();
    out
}

/// The links in the configuration and runtime directories that enable
/// unit `name` (`r` resolved, its file `fragment`): each link's path and
/// whether it is in a runtime directory. An enablement link is in a
/// `.wants/` or `.requires/` directory and named like the unit (or an
/// instance of this template), or an alias link at the top pointing to the
/// unit's file.
fn enablement_links(
    dirs: &[SearchDir],
    name: &str,
    r: &ResolvedUnit,
    fragment: &str,
) -> Vec<(String, bool)> {
    let file_name = fragment.rsplit('/').next().unwrap_or("");
    let mut out = Vec::new();
    for d in dirs
        .iter()
        .filter(|d| matches!(d.role, DirRole::Config | DirRole::Runtime))
    {
        for e in &d.entries {
            let EntryKind::Symlink { target } = &e.kind else {
                continue;
            };
            let target = absolute(&d.path, target);
            let link_name = e.path.rsplit('/').next().unwrap_or("");
            let in_deps = e.path.contains(".wants/") || e.path.contains(".requires/");
            let target_name = target.rsplit('/').next().unwrap_or("");
            let hit = if in_deps {
                link_name == r.id
                    || UnitName::split(link_name).template.as_deref() == Some(r.id.as_str())
                    || (target_name == file_name && link_name == name)
            } else {
                !e.path.contains('/')
                    && link_name != r.id
                    && target_name == file_name
                    && target != "/dev/null"
            };
            if hit {
                out.push((format!("{}/{}", d.path, e.path), d.role == DirRole::Runtime));
            }
        }
    }
    out
}

/// `systemctl is-enabled -l`'s links (systemd's `GetUnitFileLinks`): the
/// paths of the links that enable unit `name`, in the runtime directories
/// when `runtime`, else in the configuration ones; none for a unit
/// without a file.
pub fn unit_file_links(dirs: &[SearchDir], name: &str, runtime: bool) -> Vec<String> {
    let r = resolve(dirs, name);
    let Definition::File(fragment) = &r.definition else {
        return Vec::new();
    };
    enablement_links(dirs, name, &r, fragment)
        .into_iter()
        .filter(|(_, rt)| *rt == runtime)
        .map(|(p, _)| p)
        .collect()
}

/// `systemctl is-enabled NAME`'s answer: `masked` (`masked-runtime`),
/// `alias`, `generated`, `transient`, `enabled` (`enabled-runtime`) when a
/// configuration directory links to it, `linked`, else `disabled` when its
/// `[Install]` has rules, `indirect` when it has only `Also=`, `static`
/// otherwise; `None` when the unit is not on the path.
pub fn is_enabled(dirs: &[SearchDir], name: &str, install: &InstallInfo) -> Option<&'static str> {
    let r = resolve(dirs, name);
    let fragment = match &r.definition {
        Definition::NotFound => return None,
        Definition::Masked(p) => {
            let runtime = dirs
                .iter()
                .any(|d| d.role == DirRole::Runtime && p.starts_with(&format!("{}/", d.path)));
            return Some(if runtime { "masked-runtime" } else { "masked" });
        }
        Definition::File(p) => p.clone(),
    };
    let role_of = |path: &str| {
        dirs.iter()
            .find(|d| path.starts_with(&format!("{}/", d.path)))
            .map(|d| d.role)
    };
    if !r.via.is_empty() && !UnitName::split(name).is_instance() {
        return Some("alias");
    }
    match role_of(&fragment) {
        Some(DirRole::Generator) => return Some("generated"),
        Some(DirRole::Transient) => return Some("transient"),
        _ => {}
    }
    let mut state = None;
    for (_, runtime) in enablement_links(dirs, name, &r, &fragment) {
        let s = if runtime {
            "enabled-runtime"
        } else {
            "enabled"
        };
        if state != Some("enabled") {
            state = Some(s);
        }
    }
    if state.is_some() {
        return state;
    }
    if role_of(&fragment).is_none() {
        return Some("linked");
    }
    Some(if install.has_rules() {
        "disabled"
    } else if !install.also.is_empty() {
        "indirect"
    } else {
        "static"
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;
    use crate::unit_path::tests::{f, l};

    fn dirs() -> Vec<SearchDir> {
        vec![
            SearchDir {
                path: "/etc/systemd/system".into(),
                role: DirRole::Config,
                entries: vec![
                    l(
                        "multi-user.target.wants/web.service",
                        "/lib/systemd/system/web.service",
                    ),
                    l(
                        "getty.target.wants/getty@tty1.service",
                        "/lib/systemd/system/getty@.service",
                    ),
                    l("dbus-org.x.service", "/lib/systemd/system/xd.service"),
                    l("old.service", "/dev/null"),
                ],
            }
            .sorted(),
            SearchDir {
                path: "/lib/systemd/system".into(),
                role: DirRole::Vendor,
                entries: vec![
                    f("web.service"),
                    f("db.service"),
                    f("getty@.service"),
                    f("xd.service"),
                    f("old.service"),
                    f("plain.service"),
                    f("sock.service"),
                    f("sock.socket"),
                ],
            }
            .sorted(),
        ]
    }

    fn install(name: &str) -> Option<InstallInfo> {
        let text = match name {
            "web.service" | "db.service" => {
                "[Install]\nWantedBy=multi-user.target\nAlias=www.service\n"
            }
            "getty@.service" => "[Install]\nWantedBy=getty.target\nDefaultInstance=tty1\n",
            "xd.service" => "[Install]\nAlias=dbus-org.x.service\n",
            "sock.service" => "[Install]\nAlso=sock.socket\n",
            "sock.socket" => "[Install]\nWantedBy=sockets.target\nRequiredBy=x.target\n",
            _ => "",
        };
        Some(InstallInfo::from_unit_file(name, &parse(text)).unwrap())
    }

    fn link(p: &str, t: &str) -> Link {
        Link {
            path: p.into(),
            target: t.into(),
        }
    }

    #[test]
    fn enable_creates_the_links_systemctl_creates() {
        let d = dirs();
        assert_eq!(
            enable_links(&d, "/etc/systemd/system", "db.service", &install).unwrap(),
            [
                link(
                    "/etc/systemd/system/multi-user.target.wants/db.service",
                    "/lib/systemd/system/db.service"
                ),
                link(
                    "/etc/systemd/system/www.service",
                    "/lib/systemd/system/db.service"
                ),
            ]
        );
        // Already enabled: only the missing alias.
        assert_eq!(
            enable_links(&d, "/etc/systemd/system", "web.service", &install).unwrap(),
            [link(
                "/etc/systemd/system/www.service",
                "/lib/systemd/system/web.service"
            )]
        );
        assert_eq!(
            enable_links(&d, "/etc/systemd/system", "getty@tty2.service", &install).unwrap(),
            [link(
                "/etc/systemd/system/getty.target.wants/getty@tty2.service",
                "/lib/systemd/system/getty@.service"
            )]
        );
        assert_eq!(
            enable_links(&d, "/etc/systemd/system", "getty@.service", &install).unwrap(),
            []
        );
        assert_eq!(
            enable_links(&d, "/etc/systemd/system", "sock.service", &install).unwrap(),
            [
                link(
                    "/etc/systemd/system/sockets.target.wants/sock.socket",
                    "/lib/systemd/system/sock.socket"
                ),
                link(
                    "/etc/systemd/system/x.target.requires/sock.socket",
                    "/lib/systemd/system/sock.socket"
                ),
            ]
        );
        assert_eq!(
            enable_links(&d, "/etc/systemd/system", "nope.service", &install)
                .unwrap_err()
                .to_string(),
            "Unit file nope.service does not exist."
        );
        assert_eq!(
            enable_links(&d, "/etc/systemd/system", "old.service", &install)
                .unwrap_err()
                .to_string(),
            "Unit file old.service is masked."
        );
    }

    #[test]
    fn disable_removes_links_by_name_and_target_but_not_masks() {
        let d = dirs();
        assert_eq!(
            disable_links(&d, "web.service", &install),
            [link(
                "/etc/systemd/system/multi-user.target.wants/web.service",
                "/lib/systemd/system/web.service"
            )]
        );
        assert_eq!(
            disable_links(&d, "xd.service", &install),
            [link(
                "/etc/systemd/system/dbus-org.x.service",
                "/lib/systemd/system/xd.service"
            )]
        );
        assert_eq!(disable_links(&d, "old.service", &install), []);
    }

    #[test]
    fn is_enabled_states() {
        let d = dirs();
        let state = |n: &str| is_enabled(&d, n, &install(n).unwrap_or_default());
        assert_eq!(state("web.service"), Some("enabled"));
        assert_eq!(state("db.service"), Some("disabled"));
        assert_eq!(state("getty@.service"), Some("enabled"));
        assert_eq!(state("old.service"), Some("masked"));
        assert_eq!(state("dbus-org.x.service"), Some("alias"));
        assert_eq!(state("xd.service"), Some("enabled"));
        assert_eq!(state("plain.service"), Some("static"));
        assert_eq!(state("sock.service"), Some("indirect"));
        assert_eq!(state("nope.service"), None);
    }

    /// `GetUnitFileLinks`: the links that make a unit enabled, those of
    /// the configuration directories (or with `runtime` of the runtime
    /// ones); a unit without a file, or not enabled, has none.
    #[test]
    fn the_links_that_enable_a_unit() {
        let d = dirs();
        assert_eq!(
            unit_file_links(&d, "web.service", false),
            ["/etc/systemd/system/multi-user.target.wants/web.service"]
        );
        assert!(unit_file_links(&d, "web.service", true).is_empty());
        assert_eq!(
            unit_file_links(&d, "xd.service", false),
            ["/etc/systemd/system/dbus-org.x.service"]
        );
        assert!(unit_file_links(&d, "db.service", false).is_empty());
        assert!(unit_file_links(&d, "old.service", false).is_empty());
        assert!(unit_file_links(&d, "nope.service", false).is_empty());
    }

    #[test]
    fn bad_install_lines() {
        let e = |t: &str| {
            InstallInfo::from_unit_file("a.service", &parse(t))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            e("[Install]\nWantedBy=multi user\n"),
            "WantedBy=multi user: unit name \"multi\" has no suffix such as .service"
        );
        assert_eq!(
            e("[Install]\nAlias=b.socket\n"),
            "Alias=b.socket: alias b.socket must have the same suffix as a.service"
        );
        let i = InstallInfo::from_unit_file(
            "a@x.service",
            &parse("[Install]\nWantedBy=a.target\nWantedBy=\nWantedBy=%p.target b.target\n"),
        )
        .unwrap();
        assert_eq!(i.wanted_by, ["a.target", "b.target"]);
    }
}
