//! The mount namespace steps of a service's context: the plan `units/`
//! makes from the sandbox keys (`flotilla_units::context::mounts`), as
//! steps of the spawned child (`sandbox.rs`), each named by its key.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::AtomicI32;

use flotilla_units::context::mounts::{self, MountKind};
use flotilla_units::context::{Key, ServiceContext};

use crate::sys::steps::{Builder, DirLink, OnError, Op};

/// What a missing path means: skipped where the key allows it (`-`).
fn on_missing(optional: bool) -> OnError {
    if optional {
        OnError::SkipMissing
    } else {
        OnError::Fail
    }
}

pub(in crate::sys) fn cpath(p: &Path) -> Result<CString, String> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| format!("{}: contains a NUL byte", p.display()))
}

/// The directories an empty tmpfs at `top` must hold, outermost first:
/// each path below it that the plan puts back (a kept or bound path, as a
/// dynamic user's directory below its `private/` root), with the
/// directories between.
fn mount_points(plan: &[mounts::MountEntry], top: &Path) -> Result<Vec<CString>, String> {
    let mut out: Vec<std::path::PathBuf> = Vec::new();
    for e in plan {
        if !matches!(e.kind, MountKind::Keep | MountKind::Bind { .. }) {
            continue;
        }
        let Ok(rest) = e.path.strip_prefix(top) else {
            continue;
        };
        let mut at = top.to_path_buf();
        for c in rest.components() {
            at.push(c);
            if !out.contains(&at) {
                out.push(at.clone());
            }
        }
    }
    out.iter().map(|p| cpath(p)).collect()
}

/// The directories above `path` and below `above` (neither `above` nor
/// `/`), outermost first: what a missing mount point or link needs made
/// before it.
pub(in crate::sys) fn parents(path: &Path, above: &Path) -> Result<Vec<CString>, String> {
    let mut out: Vec<&Path> = path
        .ancestors()
        .skip(1)
        .take_while(|p| *p != above && *p != Path::new("/"))
        .collect();
    out.reverse();
    out.into_iter().map(cpath).collect()
}

/// A link of the unit's directories as the child makes it: its parents
/// below `above` (not `above` itself), outermost first.
pub(in crate::sys) fn dir_link(
    link: &flotilla_units::context::dirs::DirLink,
    above: &Path,
    replace: bool,
) -> Result<DirLink, String> {
    Ok(DirLink {
        parents: parents(&link.path, above)?,
        path: cpath(&link.path)?,
        target: cpath(&link.target)?,
        replace,
    })
}

/// The mount namespace steps of `plan`, the plan `units/` makes for
/// `ctx`.
pub(in crate::sys) fn mount_steps(
    b: &mut Builder,
    ctx: &ServiceContext,
    plan: &[mounts::MountEntry],
) -> Result<(), (Key, String)> {
    let key = match plan.first() {
        Some(first) => first.key,
        // `PrivateMounts=` alone: the namespace, nothing mounted in it.
        None if ctx.sandbox.private_mounts => Key::PrivateMounts,
        None => return Ok(()),
    };
    b.push(
        Op::Unshare(libc::CLONE_NEWNS),
        format!("{key} a new mount namespace"),
        OnError::Fail,
    );
    b.push(
        Op::MakeSlave,
        format!("{key} make the mounts slaves of the init's"),
        OnError::Fail,
    );
    // Every copy is taken before anything changes.
    let mut snapshots = Vec::new();
    let mut dev_dirs = Vec::new();
    let mut inaccessible: Option<Result<CString, String>> = None;
    for e in plan {
        let on_error = on_missing(e.optional);
        let k = e.key;
        let (source, recursive) = match &e.kind {
            MountKind::Keep => (e.path.clone(), true),
            MountKind::Bind {
                source,
                no_recursive,
                ..
            } => (source.clone(), !no_recursive),
            MountKind::PrivateDev => {
                for (name, dir) in [
                    (c"pts", "/dev/pts"),
                    (c"shm", "/dev/shm"),
                    (c"mqueue", "/dev/mqueue"),
                    (c"hugepages", "/dev/hugepages"),
                ] {
                    let i = b.push(
                        Op::Snapshot {
                            source: cpath(Path::new(dir)).map_err(|m| (k, m))?,
                            recursive: true,
                            fd: AtomicI32::new(-1),
                        },
                        format!("{k} copy {dir}"),
                        OnError::SkipMissing,
                    );
                    dev_dirs.push((name, i));
                }
                continue;
            }
            _ => continue,
        };
        let i = b.push(
            Op::Snapshot {
                source: cpath(&source).map_err(|m| (k, m))?,
                recursive,
                fd: AtomicI32::new(-1),
            },
            format!("{k} copy {}", source.display()),
            on_error,
        );
        snapshots.push((e.path.clone(), i));
    }
    for e in plan {
        let on_error = on_missing(e.optional);
        let k = e.key;
        let path = cpath(&e.path).map_err(|m| (k, m))?;
        let shown = e.path.display();
        let (op, what) = match &e.kind {
            MountKind::ReadOnly => (Op::ReadOnly(path), format!("make {shown} read-only")),
            MountKind::NoExec => (
                Op::Exec { path, noexec: true },
                format!("make {shown} not executable"),
            ),
            MountKind::Exec => (
                Op::Exec {
                    path,
                    noexec: false,
                },
                format!("make {shown} executable"),
            ),
            MountKind::Inaccessible => {
                let file = inaccessible
                    .get_or_insert_with(crate::sys::dirs::inaccessible_file)
                    .clone()
                    .map_err(|m| (k, m))?;
                (
                    Op::Inaccessible { path, file },
                    format!("make {shown} inaccessible"),
                )
            }
            MountKind::EmptyTmpfs(mode) => (
                Op::Tmpfs {
                    path,
                    flags: libc::MS_NOSUID | libc::MS_NODEV | libc::MS_STRICTATIME,
                    data: CString::new(format!("mode={mode:04o}")).unwrap_or_default(),
                    dirs: mount_points(plan, &e.path).map_err(|m| (k, m))?,
                    links: Vec::new(),
                    read_only: true,
                },
                format!("mount an empty tmpfs on {shown}"),
            ),
            MountKind::Tmpfs { mount, links } => (
                Op::Tmpfs {
                    path,
                    flags: mount.flags as libc::c_ulong,
                    data: CString::new(mount.data.as_str()).map_err(|e| (k, e.to_string()))?,
                    dirs: mount_points(plan, &e.path).map_err(|m| (k, m))?,
                    links: links
                        .iter()
                        .map(|l| dir_link(l, &e.path, true))
                        .collect::<Result<_, _>>()
                        .map_err(|m| (k, m))?,
                    read_only: mount.read_only,
                },
                format!("mount a tmpfs on {shown} ({})", mount.data),
            ),
            MountKind::PrivateDev => (
                Op::PrivateDev {
                    dirs: std::mem::take(&mut dev_dirs),
                },
                "make a private /dev".to_string(),
            ),
            MountKind::Proc(options) => (
                Op::Proc {
                    path,
                    options: CString::new(options.as_str()).map_err(|e| (k, e.to_string()))?,
                },
                format!("mount a procfs on {shown} ({options})"),
            ),
            MountKind::Keep | MountKind::Bind { .. } => {
                let snapshot = snapshots
                    .iter()
                    .find(|(p, _)| *p == e.path)
                    .map_or(usize::MAX, |&(_, i)| i);
                let (what, read_only, mount_point) = match &e.kind {
                    MountKind::Bind {
                        source, read_only, ..
                    } => (
                        format!("bind {} on {shown}", source.display()),
                        *read_only,
                        Some(parents(&e.path, Path::new("/")).map_err(|m| (k, m))?),
                    ),
                    _ => (format!("keep {shown} as it was"), false, None),
                };
                (
                    Op::Restore {
                        snapshot,
                        target: path,
                        read_only,
                        mount_point,
                    },
                    what,
                )
            }
        };
        b.push(op, format!("{k} {what}"), on_error);
    }
    Ok(())
}
