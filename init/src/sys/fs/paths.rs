//! The paths of path units, on the kernel: an inotify instance per path
//! unit (non-blocking, close-on-exec, watched in the loop), its watches,
//! its events read until the queue is empty, and the questions a level
//! kind asks of the file system now (`PathExists=`: `stat`;
//! `PathExistsGlob=`: `glob(3)`; `DirectoryNotEmpty=`: one entry read).
//! [`crate::sys::real::RealSys`] calls these; the bounds on that I/O in the
//! loop are those of conditions (`docs/design.md`): a few calls per event
//! of a watched directory, on local paths.

use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use flotilla_units::trigger::{PathKind, PathSpec};

use crate::sys::{Errno, Os, SysError};

/// One inotify event: the watch, what happened (`IN_*` bits) and the
/// entry's name for an event in a watched directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathEvent {
    /// The watch descriptor.
    pub wd: i32,
    /// `IN_*` bits.
    pub mask: u32,
    /// The entry, for an event of a directory's entry.
    pub name: Option<OsString>,
}

/// What a watch of a directory (or the watched file itself) listens for:
/// entries made, removed, renamed, written, changed in attributes, and the
/// watched object itself gone.
pub const WATCH_MASK: u32 = libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_CLOSE_WRITE
    | libc::IN_ATTRIB
    | libc::IN_MODIFY
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF;

fn call(what: &str, path: Option<&Path>) -> SysError {
    SysError::Call {
        call: match path {
            Some(p) => format!("{what} {}", p.display()),
            None => what.to_string(),
        },
        errno: Os(Errno::last()),
    }
}

/// A new inotify instance.
pub fn instance() -> Result<OwnedFd, SysError> {
    // SAFETY: plain system call; the result is checked.
    let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
    if raw < 0 {
        return Err(call("inotify_init1", None));
    }
    // SAFETY: a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Watches `path` on instance `fd`: its watch descriptor (the same one
/// again for a path watched already).
pub fn add(fd: BorrowedFd<'_>, path: &Path) -> Result<i32, SysError> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| SysError::Call {
        call: format!("inotify_add_watch {}", path.display()),
        errno: Os(Errno::EINVAL),
    })?;
    // SAFETY: a NUL-terminated path; the result is checked.
    let wd = unsafe { libc::inotify_add_watch(fd.as_raw_fd(), c.as_ptr(), WATCH_MASK) };
    if wd < 0 {
        return Err(call("inotify_add_watch", Some(path)));
    }
    Ok(wd)
}

/// Watches `path` on instance `fd`, or where it does not exist the nearest
/// directory above it that does (where it would appear).
pub fn add_or_above(fd: BorrowedFd<'_>, path: &Path) -> Result<(), SysError> {
    let mut at = Some(path);
    while let Some(path) = at {
        match add(fd, path) {
            Ok(_) => return Ok(()),
            Err(SysError::Call {
                errno: Os(Errno::ENOENT | Errno::ENOTDIR),
                ..
            }) => at = path.parent(),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Every event queued on instance `fd` (read until it is empty).
pub fn read(fd: BorrowedFd<'_>) -> Vec<PathEvent> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: reads into our buffer of its length.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        let Ok(n) = usize::try_from(n) else {
            break;
        };
        if n == 0 {
            break;
        }
        parse(buf.get(..n).unwrap_or_default(), &mut out);
    }
    out
}

/// The events in `bytes` (whole `struct inotify_event`s, as `read(2)`
/// returns them).
fn parse(mut bytes: &[u8], out: &mut Vec<PathEvent>) {
    const HEAD: usize = std::mem::size_of::<libc::inotify_event>();
    while bytes.len() >= HEAD {
        let field = |at: usize| {
            let mut b = [0u8; 4];
            b.copy_from_slice(bytes.get(at..at + 4).unwrap_or(&[0; 4]));
            b
        };
        let wd = i32::from_ne_bytes(field(0));
        let mask = u32::from_ne_bytes(field(4));
        let len = u32::from_ne_bytes(field(12)) as usize;
        let name = bytes
            .get(HEAD..HEAD + len)
            .map(|n| n.split(|&b| b == 0).next().unwrap_or_default())
            .filter(|n| !n.is_empty())
            .map(|n| OsString::from_vec(n.to_vec()));
        out.push(PathEvent { wd, mask, name });
        bytes = bytes.get(HEAD + len..).unwrap_or_default();
    }
}

/// Whether a level kind's state holds now (never for the event kinds):
/// the path it holds for (for `PathExistsGlob=`, the first match), which
/// the unit it starts gets as `TRIGGER_PATH`.
pub fn holding(spec: &PathSpec) -> Option<PathBuf> {
    let holds = match spec.kind {
        PathKind::Exists => std::fs::metadata(&spec.path).is_ok(),
        PathKind::ExistsGlob => return first_match(&spec.path),
        PathKind::DirectoryNotEmpty => std::fs::read_dir(&spec.path)
            .map(|mut d| d.next().is_some())
            .unwrap_or(false),
        PathKind::Changed | PathKind::Modified => false,
    };
    holds.then(|| spec.path.clone())
}

/// The first path `pattern` matches, in `glob(3)`'s sorted order.
fn first_match(pattern: &Path) -> Option<PathBuf> {
    let c = CString::new(pattern.as_os_str().as_bytes()).ok()?;
    // SAFETY: `glob` fills the zeroed struct, freed by `globfree` below;
    // its first path is read (and copied) before that.
    unsafe {
        let mut g: libc::glob_t = std::mem::zeroed();
        let r = libc::glob(c.as_ptr(), 0, None, &mut g);
        let first = if r == 0 && g.gl_pathc > 0 && !g.gl_pathv.is_null() {
            let p = *g.gl_pathv;
            (!p.is_null()).then(|| {
                PathBuf::from(std::ffi::OsStr::from_bytes(
                    std::ffi::CStr::from_ptr(p).to_bytes(),
                ))
            })
        } else {
            None
        };
        libc::globfree(&mut g);
        first
    }
}

/// `MakeDirectory=`: `path` and its missing parents, with `mode`.
pub fn make_dir(path: &Path, mode: u32) -> Result<(), SysError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(mode)
        .create(path)
        .map_err(|e| SysError::Call {
            call: format!("mkdir {}", path.display()),
            errno: Os(Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO))),
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn events_of_a_watched_directory_and_the_level_kinds() {
        let dir = tempfile::tempdir().unwrap();
        let fd = instance().unwrap();
        let wd = add(fd.as_fd(), dir.path()).unwrap();
        assert!(read(fd.as_fd()).is_empty());
        std::fs::write(dir.path().join("a.job"), b"x").unwrap();
        let ev = read(fd.as_fd());
        assert!(ev.iter().all(|e| e.wd == wd));
        assert!(ev
            .iter()
            .any(|e| e.mask & libc::IN_CREATE != 0 && e.name.as_deref() == Some("a.job".as_ref())));
        let spec = |kind, p: &Path| PathSpec {
            kind,
            path: p.to_path_buf(),
        };
        let a = dir.path().join("a.job");
        assert_eq!(holding(&spec(PathKind::Exists, &a)), Some(a.clone()));
        assert_eq!(
            holding(&spec(PathKind::Exists, &dir.path().join("b"))),
            None
        );
        // The first match in sorted order is the path a glob fired for.
        std::fs::write(dir.path().join("c.job"), b"x").unwrap();
        assert_eq!(
            holding(&spec(PathKind::ExistsGlob, &dir.path().join("*.job"))),
            Some(a.clone())
        );
        assert_eq!(
            holding(&spec(PathKind::ExistsGlob, &dir.path().join("*.txt"))),
            None
        );
        assert_eq!(
            holding(&spec(PathKind::DirectoryNotEmpty, dir.path())),
            Some(dir.path().to_path_buf())
        );
        let empty = dir.path().join("sub/empty");
        make_dir(&empty, 0o700).unwrap();
        assert_eq!(holding(&spec(PathKind::DirectoryNotEmpty, &empty)), None);
    }
}
