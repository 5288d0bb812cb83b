//! Links by name rather than from a unit's `[Install]` section: those
//! `systemctl add-wants`/`add-requires` make (a unit file linked into
//! another unit's `NAME.wants/` or `NAME.requires/`, systemd's
//! `AddDependencyUnitFiles`), and `default.target`'s, which `systemctl
//! set-default` makes and `get-default` reads (systemd's
//! `SetDefaultTarget`, `GetDefaultTarget`).

use super::install::{unit_file, InstallError, Link};
use super::search_dir::SearchDir;
use flotilla_units::unit_name::validate_systemd_unit_name;

/// The id (`name` with alias links followed) and unit file path of
/// `name` ([`unit_file`]).
fn file_of(dirs: &[SearchDir], name: &str) -> Result<(String, String), InstallError> {
    unit_file(dirs, name).map(|(r, path)| (r.id, path))
}

fn check_name(name: &str) -> Result<(), InstallError> {
    validate_systemd_unit_name(name).map_err(|e| InstallError::BadName {
        key: "unit".into(),
        value: name.into(),
        reason: e,
    })
}

/// The links `systemctl add-wants TARGET FILE...` (`hard`:
/// `add-requires`) makes in `config` (the configuration or runtime
/// directory): `config/TARGET.wants/FILE` (`.requires/`) to each file's
/// unit file. `target` and every file must have a unit file.
pub fn dependency_links(
    dirs: &[SearchDir],
    config: &str,
    target: &str,
    files: &[String],
    hard: bool,
) -> Result<Vec<Link>, InstallError> {
    check_name(target)?;
    let (target_id, _) = file_of(dirs, target)?;
    let kind = if hard { "requires" } else { "wants" };
    files
        .iter()
        .map(|f| {
            check_name(f)?;
            let (id, path) = file_of(dirs, f)?;
            Ok(Link {
                path: format!("{config}/{target_id}.{kind}/{id}"),
                target: path,
            })
        })
        .collect()
}

/// The link `systemctl set-default NAME` makes in `config`:
/// `config/default.target` to `name`'s unit file. `default.target`
/// itself is refused, as systemd refuses it (a link to itself).
pub fn default_target_link(
    dirs: &[SearchDir],
    config: &str,
    name: &str,
) -> Result<Link, InstallError> {
    check_name(name)?;
    if name == "default.target" {
        return Err(InstallError::BadName {
            key: "unit".into(),
            value: name.into(),
            reason: "the default target cannot be linked to itself".into(),
        });
    }
    let (_, path) = file_of(dirs, name)?;
    Ok(Link {
        path: format!("{config}/default.target"),
        target: path,
    })
}

/// The target `default.target` resolves to on `dirs` (`graphical.target`
/// for Debian's link), as `systemctl get-default` shows it; `None` when
/// there is no `default.target`.
pub fn default_target(dirs: &[SearchDir]) -> Option<String> {
    file_of(dirs, "default.target").ok().map(|(id, _)| id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unit_path::tests::{f, l};
    use crate::DirRole;

    fn dirs() -> Vec<SearchDir> {
        vec![
            SearchDir {
                path: "/etc/systemd/system".into(),
                role: DirRole::Config,
                entries: vec![
                    l("default.target", "/lib/systemd/system/graphical.target"),
                    l("old.service", "/dev/null"),
                    l("alias.service", "/lib/systemd/system/web.service"),
                ],
            }
            .sorted(),
            SearchDir {
                path: "/lib/systemd/system".into(),
                role: DirRole::Vendor,
                entries: vec![
                    f("web.service"),
                    f("db.service"),
                    f("old.service"),
                    f("graphical.target"),
                    f("emergency.target"),
                ],
            }
            .sorted(),
        ]
    }

    #[test]
    fn add_wants_and_add_requires_link_into_the_targets_directory() {
        let d = dirs();
        let links = dependency_links(
            &d,
            "/etc/systemd/system",
            "web.service",
            &["db.service".into()],
            false,
        )
        .unwrap();
        assert_eq!(
            links,
            [Link {
                path: "/etc/systemd/system/web.service.wants/db.service".into(),
                target: "/lib/systemd/system/db.service".into(),
            }]
        );
        // An alias is followed on both sides; --runtime's directory is the caller's.
        let links = dependency_links(
            &d,
            "/run/systemd/system",
            "alias.service",
            &["db.service".into()],
            true,
        )
        .unwrap();
        assert_eq!(
            links[0].path,
            "/run/systemd/system/web.service.requires/db.service"
        );
    }

    #[test]
    fn bad_names_missing_and_masked_units_are_errors() {
        let d = dirs();
        let c = "/etc/systemd/system";
        let one = |n: &str| vec![n.to_string()];
        assert_eq!(
            dependency_links(&d, c, "nope.service", &one("db.service"), false),
            Err(InstallError::NotFound("nope.service".into()))
        );
        assert_eq!(
            dependency_links(&d, c, "web.service", &one("nope.service"), false),
            Err(InstallError::NotFound("nope.service".into()))
        );
        assert_eq!(
            dependency_links(&d, c, "web.service", &one("old.service"), false),
            Err(InstallError::Masked("old.service".into()))
        );
        assert!(matches!(
            dependency_links(&d, c, "web.service", &one("../x.service"), false),
            Err(InstallError::BadName { .. })
        ));
    }

    #[test]
    fn set_default_and_get_default() {
        let d = dirs();
        assert_eq!(default_target(&d).as_deref(), Some("graphical.target"));
        assert_eq!(
            default_target_link(&d, "/etc/systemd/system", "emergency.target").unwrap(),
            Link {
                path: "/etc/systemd/system/default.target".into(),
                target: "/lib/systemd/system/emergency.target".into(),
            }
        );
        assert!(default_target_link(&d, "/etc/systemd/system", "default.target").is_err());
        assert_eq!(
            default_target_link(&d, "/etc/systemd/system", "none.target"),
            Err(InstallError::NotFound("none.target".into()))
        );
        assert_eq!(default_target(&d[1..]), None);
    }
}
