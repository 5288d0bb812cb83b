//! `systemctl revert NAME` (systemd's `RevertUnitFiles`): the unit back to
//! its vendor version. What it removes, computed from a search-path
//! listing ([`super::SearchDir`]): in each configuration and runtime
//! directory (`/etc/systemd/system`, `/run/systemd/system`, the
//! `system.control` ones `set-property` writes to) the drop-in directory
//! `NAME.d/` with its files, and, when a vendor directory has a file of
//! that name, the unit's own file or link there (a copy that overrides the
//! vendor's, or a mask). Enablement links stay: revert is not disable.

use super::search_dir::{DirRole, EntryKind, SearchDir};

/// A path `revert` removes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reverted {
    /// A file or a link.
    File(String),
    /// A drop-in directory, removed once its files are.
    Dir(String),
}

/// What `systemctl revert NAME` removes, files before their directory.
pub fn revert_paths(dirs: &[SearchDir], name: &str) -> Vec<Reverted> {
    let has_vendor = dirs
        .iter()
        .filter(|d| d.role == DirRole::Vendor)
        .any(|d| d.entry(name).is_some());
    let dropin = format!("{name}.d");
    let mut out = Vec::new();
    for d in dirs
        .iter()
        .filter(|d| matches!(d.role, DirRole::Config | DirRole::Runtime))
    {
        for e in &d.entries {
            let full = format!("{}/{}", d.path, e.path);
            if e.path.starts_with(&format!("{dropin}/")) {
                out.push(Reverted::File(full));
            } else if e.path == dropin && e.kind == EntryKind::Dir {
                out.push(Reverted::Dir(full));
            } else if e.path == name && has_vendor {
                out.push(Reverted::File(full));
            }
        }
    }
    // Files (sorted by path) first, then the directories they were in.
    out.sort_by_key(|r| matches!(r, Reverted::Dir(_)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search_dir::Entry;
    use crate::unit_path::tests::{f, l};

    fn d(path: &str) -> Entry {
        Entry {
            path: path.into(),
            kind: EntryKind::Dir,
        }
    }

    fn dir(path: &str, entries: Vec<Entry>) -> SearchDir {
        SearchDir {
            role: DirRole::of_path(path),
            path: path.into(),
            entries,
        }
        .sorted()
    }

    #[test]
    fn revert_removes_overrides_masks_and_drop_ins_not_enablement() {
        let dirs = vec![
            dir(
                "/etc/systemd/system.control",
                vec![d("web.service.d"), f("web.service.d/50-MemoryMax.conf")],
            ),
            dir(
                "/etc/systemd/system",
                vec![
                    f("web.service"),
                    d("web.service.d"),
                    f("web.service.d/override.conf"),
                    d("multi-user.target.wants"),
                    l(
                        "multi-user.target.wants/web.service",
                        "/lib/systemd/system/web.service",
                    ),
                    l("db.service", "/dev/null"),
                    f("local.service"),
                ],
            ),
            dir("/run/systemd/system", vec![l("cron.service", "/dev/null")]),
            dir(
                "/lib/systemd/system",
                vec![f("web.service"), f("db.service"), f("cron.service")],
            ),
        ];
        let file = |p: &str| Reverted::File(p.into());
        assert_eq!(
            revert_paths(&dirs, "web.service"),
            [
                file("/etc/systemd/system.control/web.service.d/50-MemoryMax.conf"),
                file("/etc/systemd/system/web.service"),
                file("/etc/systemd/system/web.service.d/override.conf"),
                Reverted::Dir("/etc/systemd/system.control/web.service.d".into()),
                Reverted::Dir("/etc/systemd/system/web.service.d".into()),
            ]
        );
        // A mask in /etc or /run of a vendor unit.
        assert_eq!(
            revert_paths(&dirs, "db.service"),
            [file("/etc/systemd/system/db.service")]
        );
        assert_eq!(
            revert_paths(&dirs, "cron.service"),
            [file("/run/systemd/system/cron.service")]
        );
        // No vendor version: the local file is the unit, kept.
        assert_eq!(revert_paths(&dirs, "local.service"), []);
    }
}
