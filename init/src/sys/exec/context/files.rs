//! A context's first steps: the unit's directories, its credentials, its
//! output files and its standard input, made or opened by the unit's own
//! process before anything else (`dirs.rs`, `credentials.rs`,
//! `terminal.rs`).

use std::ffi::{c_int, CString};
use std::path::Path;

use flotilla_units::context::mounts::{self, MountEntry};
use flotilla_units::context::process::Output;
use flotilla_units::context::{Key, ServiceContext};

use super::{ContextError, Params};
use crate::sys::mount_steps::{cpath, dir_link};
use crate::sys::steps::{Builder, DirLink, OnError, Op};

/// The file an output goes to and how it is opened, if it is a file.
fn output_file(o: Option<&Output>) -> Option<(&Path, c_int)> {
    match o {
        Some(Output::File(p)) => Some((p, 0)),
        Some(Output::Append(p)) => Some((p, libc::O_APPEND)),
        Some(Output::Truncate(p)) => Some((p, libc::O_TRUNC)),
        _ => None,
    }
}

/// The parents of `path` below `above` (not it itself), outermost first.
fn parents(path: &Path, above: &Path) -> Result<Vec<CString>, String> {
    let mut out = Vec::new();
    let mut at = path.parent();
    while let Some(p) = at.filter(|p| *p != above && *p != Path::new("/")) {
        out.push(cpath(p)?);
        at = p.parent();
    }
    out.reverse();
    Ok(out)
}

/// The first steps: the unit's directories and their links, then its
/// output files, made by its own process while it still has the init's
/// privileges and sees the host's mounts (`dirs.rs`). A link whose place a
/// tmpfs of the unit's mount namespace (`plan`) covers is made there
/// instead (`mount_steps.rs`).
pub(super) fn file_steps(
    b: &mut Builder,
    ctx: &ServiceContext,
    params: &Params<'_>,
    plan: &[MountEntry],
    plain_credentials: bool,
) -> Result<(), ContextError> {
    let fail = |key: Key, message: String| ContextError {
        key: Some(key),
        message,
    };
    for place in ctx.directories.places() {
        let kind = place.kind;
        let key = kind.key();
        let owner = params.owner.filter(|_| kind.owned_and_writable());
        let status = crate::sys::dirs::exit_status(kind);
        let (dir, link, above) = match &place.private {
            Some(p) => {
                // The private root first: 0700, root's, its parents
                // 0755 (as systemd makes it); the directory's parents
                // below it are 0755 again.
                b.push(
                    Op::MakeDir {
                        parents: parents(&p.root, Path::new("/")).map_err(|e| fail(key, e))?,
                        path: cpath(&p.root).map_err(|e| fail(key, e))?,
                        mode: 0o700,
                        owner: None,
                        status,
                        link: None,
                        private_copy: None,
                    },
                    format!("{key} make {}", p.root.display()),
                    OnError::Fail,
                );
                // A name below another of its kind's is reached through
                // that one's link, and has none of its own.
                let link = match &p.target {
                    Some(target) => Some(DirLink {
                        parents: parents(&place.path, kind.base()).map_err(|e| fail(key, e))?,
                        path: cpath(&place.path).map_err(|e| fail(key, e))?,
                        target: cpath(target).map_err(|e| fail(key, e))?,
                        replace: true,
                    }),
                    None => None,
                };
                (p.dir.clone(), link, p.root.as_path())
            }
            None => (place.path.clone(), None, Path::new("/")),
        };
        let shown = match &link {
            Some(_) => format!(
                "{key} make {} linked from {}",
                dir.display(),
                place.path.display()
            ),
            None => format!("{key} make {}", dir.display()),
        };
        b.push(
            Op::MakeDir {
                parents: parents(&dir, above).map_err(|e| fail(key, e))?,
                path: cpath(&dir).map_err(|e| fail(key, e))?,
                mode: place.mode,
                owner,
                status,
                link,
                private_copy: match &place.private_copy {
                    Some(p) => Some(cpath(p).map_err(|e| fail(key, e))?),
                    None => None,
                },
            },
            shown,
            OnError::Fail,
        );
    }
    for link in ctx.directories.links() {
        if mounts::tmpfs_holding(plan, &link.path).is_some() {
            continue;
        }
        let key = link.kind.key();
        b.push(
            Op::MakeLink {
                link: dir_link(&link, link.kind.base(), false).map_err(|e| fail(key, e))?,
                status: crate::sys::dirs::exit_status(link.kind),
            },
            format!(
                "{key} link {} to {}",
                link.path.display(),
                link.target.display()
            ),
            OnError::Fail,
        );
    }
    if !ctx.credentials.is_empty() {
        let key = ctx.credentials.key();
        let dir = params.credentials.ok_or_else(|| {
            fail(
                key,
                "the init gave no credentials directory for this unit".into(),
            )
        })?;
        let first = b.steps.len();
        let ops = crate::sys::credentials::ops(
            &ctx.credentials,
            dir,
            params.owner,
            first,
            plain_credentials,
        )
        .map_err(|(k, m)| fail(k, m))?;
        for (op, name) in ops {
            b.push(op, name, OnError::Fail);
        }
    }
    // Standard error goes where standard output goes unless it says
    // otherwise (as the executor decides for pipes and the console).
    let out = output_file(ctx.standard_output.as_ref());
    let err_follows = matches!(ctx.standard_error, None | Some(Output::Inherit));
    let err = if err_follows {
        None
    } else {
        output_file(ctx.standard_error.as_ref())
    };
    let outputs = [
        (out, true, err_follows && out.is_some(), Key::StandardOutput),
        (err, false, true, Key::StandardError),
    ];
    // Standard input, and the outputs that follow it (`terminal.rs`).
    let stdio = crate::sys::terminal::stdio_ops(ctx).map_err(|(key, m)| fail(key, m))?;
    for (target, stdout, stderr, key) in outputs {
        let Some((path, flags)) = target else {
            continue;
        };
        b.push(
            Op::OpenOutput {
                path: cpath(path).map_err(|e| fail(key, e))?,
                flags,
                stdout,
                stderr,
            },
            format!("{key} open {}", path.display()),
            OnError::Fail,
        );
    }
    for (op, name) in stdio {
        b.push(op, name, OnError::Fail);
    }
    Ok(())
}
