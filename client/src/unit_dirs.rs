//! The unit search path as the tools beside the init read it (`initctl`'s
//! `list-unit-files`, `enable`, `cat`; `flotilla-busd`'s unit-file methods):
//! each directory the init names listed with its entries' kinds, the way
//! `systemd/src/unit_path.rs` takes them, and a directory the machine
//! does not have left out, as systemd leaves it out; and the links that
//! `enable`, `disable` and `mask` make and remove in it.

use flotilla_systemd::{list_search_dir, EntryKind, Link, SearchDir};
use std::io;

/// The directories of `paths` (the init's `units_path`), in order, those
/// that do not exist left out; the first that cannot be read is the error,
/// with its path.
pub fn list_search_path(
    paths: impl IntoIterator<Item = String>,
) -> Result<Vec<SearchDir>, (String, io::Error)> {
    let mut dirs = Vec::new();
    for p in paths {
        match list_search_dir(&p, &mut list_dir) {
            Ok(d) => dirs.push(d),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err((p, e)),
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

/// The directory `enable` and `mask` put links in: `/etc/systemd/system`
/// when it is on the path, else the first directory.
pub fn config_dir(dirs: &[SearchDir]) -> String {
    dirs.iter()
        .find(|d| d.path.ends_with("/etc/systemd/system"))
        .or_else(|| dirs.first())
        .map(|d| d.path.clone())
        .unwrap_or_default()
}

/// The directory `enable --runtime` and `mask --runtime` put links in:
/// the runtime one (`/run/systemd/system`), when it is on the path.
pub fn runtime_dir(dirs: &[SearchDir]) -> Option<String> {
    use flotilla_systemd::DirRole;
    dirs.iter()
        .find(|d| d.role == DirRole::Runtime)
        .map(|d| d.path.clone())
}

/// The directory links go in for `--runtime` (`runtime`) or not, as
/// systemd's `config_path`; an error naming what is missing.
pub fn link_dir(dirs: &[SearchDir], runtime: bool) -> Result<String, String> {
    if runtime {
        runtime_dir(dirs).ok_or_else(|| {
            "--runtime needs a runtime directory (/run/systemd/system) on the unit path".to_string()
        })
    } else {
        Ok(config_dir(dirs))
    }
}

/// True when `path` is on the side `--runtime` (`runtime`) chooses: in a
/// runtime directory, or in a configuration one. systemd's `disable` and
/// `unmask` remove links on one side only, so that `disable` leaves an
/// `enable --runtime` alone.
pub fn on_side(dirs: &[SearchDir], path: &str, runtime: bool) -> bool {
    use flotilla_systemd::DirRole;
    dirs.iter()
        .filter(|d| path.starts_with(&format!("{}/", d.path)))
        .any(|d| match d.role {
            DirRole::Runtime => runtime,
            DirRole::Config => !runtime,
            _ => false,
        })
}

/// The links `systemctl mask` (`on`) or `unmask` of `units` makes or
/// removes, as systemd's: for a mask, a link to `/dev/null` named like the
/// unit in the configuration directory (the runtime one for `runtime`;
/// none when one is there already; another link of that name is
/// replaced); for an unmask, every such link in the configuration
/// directories (the runtime ones for `runtime`). A mask refused: the
/// regular file in the way, as systemctl says it (`File PATH already
/// exists.`).
pub fn mask_links(
    dirs: &[SearchDir],
    units: &[String],
    on: bool,
    runtime: bool,
) -> Result<Vec<Link>, String> {
    let null = std::path::Path::new("/dev/null");
    let to_null = |path: &str| std::fs::read_link(path).is_ok_and(|t| t == null);
    let config = link_dir(dirs, runtime)?;
    let mut links = Vec::new();
    for u in units {
        if on {
            let path = format!("{config}/{u}");
            match std::fs::symlink_metadata(&path) {
                Ok(m) if !m.file_type().is_symlink() => {
                    return Err(format!("File {path} already exists."));
                }
                Ok(_) if to_null(&path) => continue,
                Ok(_) => {
                    let _ = std::fs::remove_file(&path);
                }
                Err(_) => {}
            }
            links.push(Link {
                path,
                target: "/dev/null".to_string(),
            });
        } else {
            for d in dirs {
                let path = format!("{}/{u}", d.path);
                if on_side(dirs, &path, runtime) && to_null(&path) {
                    links.push(Link {
                        path,
                        target: "/dev/null".to_string(),
                    });
                }
            }
        }
    }
    Ok(links)
}

/// Makes the symbolic link `l` (and its directory); one already there is
/// left as it is, as systemd says nothing of a link it finds.
pub fn make_link(l: &Link) -> io::Result<()> {
    if std::fs::symlink_metadata(&l.path).is_ok() {
        return Ok(());
    }
    if let Some(parent) = std::path::Path::new(&l.path).parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::os::unix::fs::symlink(&l.target, &l.path)
}

/// Removes the link `l`; one already gone is no error.
pub fn remove_link(l: &Link) -> io::Result<()> {
    match std::fs::remove_file(&l.path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// The presets of the search path `dirs` (`flotilla_systemd::Presets`
/// has systemd's rules), read from the `*.preset` files beside its
/// `systemd/system` directories, and a warning for each file that cannot
/// be read and each bad line (skipped, the rest kept, as systemd does).
pub fn load_presets(dirs: &[SearchDir]) -> (flotilla_systemd::Presets, Vec<String>) {
    use flotilla_systemd::{preset_dirs, preset_files, Presets};
    let paths: Vec<String> = dirs.iter().map(|d| d.path.clone()).collect();
    let listings: Vec<(String, Vec<String>)> = preset_dirs(&paths)
        .into_iter()
        .filter_map(|d| {
            let names = std::fs::read_dir(&d)
                .ok()?
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            Some((d, names))
        })
        .collect();
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    for p in preset_files(&listings) {
        match std::fs::read_to_string(&p) {
            Ok(text) => files.push((p, text)),
            Err(e) => warnings.push(format!("{p}: {e}; skipped")),
        }
    }
    let (presets, problems) = Presets::parse(&files);
    warnings.extend(problems.iter().map(ToString::to_string));
    (presets, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_listed_in_order_and_missing_ones_left_out() {
        let a = tempfile::tempdir().unwrap();
        std::fs::write(
            a.path().join("x.service"),
            "[Service]\nExecStart=/bin/true\n",
        )
        .unwrap();
        std::fs::write(a.path().join("masked.service"), "").unwrap();
        std::os::unix::fs::symlink("/dev/null", a.path().join("gone.service")).unwrap();
        let a_path = a.path().to_string_lossy().into_owned();
        let dirs = list_search_path([a_path.clone(), "/nonexistent/flotilla".to_string()]).unwrap();
        assert_eq!(dirs.len(), 1);
        let kinds: Vec<(&str, &EntryKind)> = dirs[0]
            .entries
            .iter()
            .map(|e| (e.path.as_str(), &e.kind))
            .collect();
        assert!(kinds.contains(&("x.service", &EntryKind::File { empty: false })));
        assert!(kinds.contains(&("masked.service", &EntryKind::File { empty: true })));
        assert!(kinds.contains(&(
            "gone.service",
            &EntryKind::Symlink {
                target: "/dev/null".into()
            }
        )));
    }

    #[test]
    fn an_unreadable_path_is_the_error_with_its_path() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let p = f.path().to_string_lossy().into_owned();
        let (path, _) = list_search_path([p.clone()]).unwrap_err();
        assert_eq!(path, p);
    }

    #[test]
    fn links_are_made_once_and_removed_once() {
        let d = tempfile::tempdir().unwrap();
        let l = Link {
            path: d
                .path()
                .join("multi-user.target.wants/x.service")
                .to_string_lossy()
                .into_owned(),
            target: "/lib/systemd/system/x.service".into(),
        };
        make_link(&l).unwrap();
        make_link(&l).unwrap();
        assert_eq!(
            std::fs::read_link(&l.path).unwrap().to_string_lossy(),
            l.target
        );
        remove_link(&l).unwrap();
        remove_link(&l).unwrap();
        assert!(std::fs::symlink_metadata(&l.path).is_err());
    }
}
