//! The file-system work a unit's context asks for around its start and
//! stop: its directories (`RuntimeDirectory=` …), its output files
//! (`StandardOutput=file:` …) and its private `/tmp`.
//!
//! # Where it happens
//!
//! The init's loop does no file-system work on a unit's behalf that could
//! wait on a disk (issue 17's rule):
//!
//! - **directories and output files** are made and opened by the unit's
//!   own process, before it does anything else ([`make_dir`],
//!   [`open_output`], run as context steps by `sandbox.rs`). A spawn that
//!   has any hands the child off first (`spawn/child.rs`: the `CLONE_VM`
//!   child forks a process of the init's with `CLONE_PARENT` and exits),
//!   so the init is back in its loop at once while that process waits on
//!   `/var` or an NFS-mounted log file. A main process's start is told
//!   once it has exec'd (`runtime/execs.rs`), its directories made by
//!   then: a `Type=exec` unit is not started before they exist. A
//!   failure ends the process with systemd's exit status for it (`238`
//!   for `StateDirectory=`, `209` for an output file …) and a line saying
//!   why in the unit's log.
//!   Unlike systemd, an existing directory is not chowned recursively when
//!   its owner changed (that walk is unbounded): only the directory itself.
//! - **removing the runtime directories** at stop walks them, on the loop:
//!   they live in `/run`, a tmpfs, so no call waits on a disk.
//! - **a private `/tmp`** is a tmpfs per unit, mounted below the init's
//!   private directory (`/run/flotilla/private/UNIT`, a tmpfs) at start and
//!   detached (`umount2(MNT_DETACH)`) at stop: the kernel frees it, however
//!   much the unit wrote, with no walk at all.

use std::ffi::{c_int, CStr, CString};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use flotilla_units::context::dirs::{DirKind, Directories};

use nix::mount::{mount, umount2, MntFlags, MsFlags};

use crate::sys::steps::DirLink;
use crate::sys::Os;

/// Where the init keeps the units' private `/tmp`s.
pub const PRIVATE_DIR: &str = "/run/flotilla/private";

/// The empty, mode-000 file bound over the paths a unit may not see that
/// are not directories (as systemd's `/run/systemd/inaccessible/reg`).
pub const INACCESSIBLE_FILE: &str = "/run/flotilla/inaccessible/file";

/// [`INACCESSIBLE_FILE`], made if missing (once per process: later calls
/// only return the answer kept), as a C string for the child.
pub(crate) fn inaccessible_file() -> Result<std::ffi::CString, String> {
    static MADE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    let path = Path::new(INACCESSIBLE_FILE);
    MADE.get_or_init(|| {
        let fail = |e: std::io::Error| format!("make {}: {e}", path.display());
        if let Some(dir) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o755)
                .create(dir)
                .map_err(fail)?;
        }
        if !path.exists() {
            std::fs::write(path, b"").map_err(fail)?;
        }
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o000)).map_err(fail)
    })
    .clone()?;
    Ok(std::ffi::CString::new(INACCESSIBLE_FILE).unwrap_or_default())
}

/// The environment a unit with `dirs` gets (`RUNTIME_DIRECTORY=/run/a:/run/b`,
/// …), in the order of the kinds.
pub fn environment(dirs: &Directories) -> Vec<(&'static str, String)> {
    let mut env: Vec<(&'static str, String)> = Vec::new();
    for (kind, path, _) in dirs.paths() {
        let var = kind.env_var();
        match env.iter_mut().find(|(v, _)| *v == var) {
            Some((_, list)) => {
                list.push(':');
                list.push_str(&path.to_string_lossy());
            }
            None => env.push((var, path.to_string_lossy().into_owned())),
        }
    }
    env
}

/// systemd's exit status for a directory of `kind` that could not be
/// made (`EXIT_RUNTIME_DIRECTORY` …).
pub(crate) fn exit_status(kind: DirKind) -> u8 {
    match kind {
        DirKind::Runtime => 233,
        DirKind::State => 238,
        DirKind::Cache => 239,
        DirKind::Logs => 240,
        DirKind::Configuration => 241,
    }
}

/// Makes a unit's directory `path`: each missing parent (`parents`,
/// outermost first) with mode 0755 owned by root, then `path` itself with
/// `mode`, owned by `owner` if given; an existing `path` must be a
/// directory, and gets the owner and the exact mode (whatever the umask).
///
/// With a `link` (a dynamic user's directory, kept below `private/`),
/// the link is made from the directory's usual place, as systemd's
/// `setup_exec_directory` does: a directory already there (made before
/// the unit had a dynamic user) is moved below `private/` first when
/// nothing is there yet; a link already there is kept when it says the
/// same, replaced when it says something else.
///
/// Without one, a link at `path` that leads to `private_copy` (the
/// directory's place below `private/`) is what an earlier start with a
/// dynamic user left: the link is removed and the directory moved back
/// up, as systemd migrates it.
///
/// # Safety
///
/// In a spawned child (`sandbox.rs`): plain system calls only.
pub(crate) unsafe fn make_dir(
    parents: &[CString],
    path: &CStr,
    (mode, owner): (libc::mode_t, Option<(libc::uid_t, libc::gid_t)>),
    link: Option<&DirLink>,
    private_copy: Option<&CStr>,
) -> Result<(), c_int> {
    for p in parents {
        if libc::mkdir(p.as_ptr(), 0o755) < 0 && errno() != libc::EEXIST {
            return Err(errno());
        }
    }
    if let Some(copy) = private_copy {
        if is_link(path)
            && same_file(path, copy)
            && (libc::unlink(path.as_ptr()) < 0 || libc::rename(copy.as_ptr(), path.as_ptr()) < 0)
        {
            return Err(errno());
        }
    }
    if let Some(l) = link {
        if is_dir(&l.path) && !exists(path) && libc::rename(l.path.as_ptr(), path.as_ptr()) < 0 {
            return Err(errno());
        }
    }
    make_one(path, mode, owner)?;
    match link {
        Some(l) => make_link(l),
        None => Ok(()),
    }
}

/// Whether `path` is a directory itself (not a link to one).
unsafe fn is_dir(path: &CStr) -> bool {
    let mut st: libc::stat = std::mem::zeroed();
    libc::lstat(path.as_ptr(), &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFDIR
}

/// Whether `path` is a link.
unsafe fn is_link(path: &CStr) -> bool {
    let mut st: libc::stat = std::mem::zeroed();
    libc::lstat(path.as_ptr(), &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFLNK
}

/// Whether `a` and `b`, links followed, are one file.
unsafe fn same_file(a: &CStr, b: &CStr) -> bool {
    let (mut sa, mut sb): (libc::stat, libc::stat) = (std::mem::zeroed(), std::mem::zeroed());
    libc::stat(a.as_ptr(), &mut sa) == 0
        && libc::stat(b.as_ptr(), &mut sb) == 0
        && (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)
}

/// Whether anything is at `path` (a dangling link counts).
unsafe fn exists(path: &CStr) -> bool {
    let mut st: libc::stat = std::mem::zeroed();
    libc::lstat(path.as_ptr(), &mut st) == 0
}

/// A link of the unit's directories: its missing parents (0755), then
/// the link, kept when one saying the same is there, replaced when one
/// says something else and `l.replace` allows it; anything else in its
/// place is an error (`EEXIST`).
///
/// # Safety
///
/// In a spawned child (`sandbox.rs`): plain system calls only.
pub(crate) unsafe fn make_link(l: &DirLink) -> Result<(), c_int> {
    for p in &l.parents {
        if libc::mkdir(p.as_ptr(), 0o755) < 0 && errno() != libc::EEXIST {
            return Err(errno());
        }
    }
    if libc::symlink(l.target.as_ptr(), l.path.as_ptr()) == 0 {
        return Ok(());
    }
    if errno() != libc::EEXIST {
        return Err(errno());
    }
    let mut buf = [0u8; 4096];
    let n = libc::readlink(l.path.as_ptr(), buf.as_mut_ptr().cast(), buf.len());
    if n < 0 {
        // Not a link (EINVAL): something else is there.
        return Err(libc::EEXIST);
    }
    let said = buf.get(..n.unsigned_abs()).unwrap_or_default();
    if said == l.target.to_bytes() {
        return Ok(());
    }
    if !l.replace {
        return Err(libc::EEXIST);
    }
    if libc::unlink(l.path.as_ptr()) < 0 || libc::symlink(l.target.as_ptr(), l.path.as_ptr()) < 0 {
        return Err(errno());
    }
    Ok(())
}

/// `path` itself, for [`make_dir`].
unsafe fn make_one(
    path: &CStr,
    mode: libc::mode_t,
    owner: Option<(libc::uid_t, libc::gid_t)>,
) -> Result<(), c_int> {
    if libc::mkdir(path.as_ptr(), mode) < 0 {
        if errno() != libc::EEXIST {
            return Err(errno());
        }
        let mut st: libc::stat = std::mem::zeroed();
        if libc::lstat(path.as_ptr(), &mut st) < 0 {
            return Err(errno());
        }
        if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
            return Err(libc::ENOTDIR);
        }
        if let Some((uid, gid)) = owner {
            if (st.st_uid != uid || st.st_gid != gid) && libc::lchown(path.as_ptr(), uid, gid) < 0 {
                return Err(errno());
            }
        }
    } else if let Some((uid, gid)) = owner {
        if libc::lchown(path.as_ptr(), uid, gid) < 0 {
            return Err(errno());
        }
    }
    if libc::chmod(path.as_ptr(), mode) < 0 {
        return Err(errno());
    }
    Ok(())
}

/// Opens an output file with `flags` (on top of write-only, create,
/// close-on-exec, no controlling terminal, non-blocking: a FIFO does not
/// wait for its reader) and puts it on standard output, standard error or
/// both.
///
/// # Safety
///
/// In a spawned child (`sandbox.rs`): plain system calls only.
pub(crate) unsafe fn open_output(
    path: &CStr,
    flags: c_int,
    stdout: bool,
    stderr: bool,
) -> Result<(), c_int> {
    let all = libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NONBLOCK;
    let fd = libc::open(path.as_ptr(), all | flags, 0o644 as libc::c_uint);
    if fd < 0 {
        return Err(errno());
    }
    crate::sys::terminal::onto(fd, [false, stdout, stderr])
}

fn errno() -> c_int {
    nix::errno::Errno::last_raw()
}

/// Removes the runtime directories (at stop, unless
/// `RuntimeDirectoryPreserve=` keeps them): each directory, and for one
/// kept below `private/`, the link to it too. Missing ones are fine.
pub fn remove_runtime(dirs: &Directories) -> Result<(), String> {
    for place in dirs.places() {
        if place.kind != DirKind::Runtime {
            continue;
        }
        let (dir, link) = match place.private {
            Some(p) => (p.dir, p.target.map(|_| place.path)),
            None => (place.path, None),
        };
        let gone = |r: std::io::Result<()>, path: &Path| match r {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("remove {}: {e}", path.display())),
        };
        gone(std::fs::remove_dir_all(&dir), &dir)?;
        if let Some(l) = link {
            // Only a link: a directory there is not the unit's to remove.
            if std::fs::symlink_metadata(&l).is_ok_and(|m| m.file_type().is_symlink()) {
                gone(std::fs::remove_file(&l), &l)?;
            }
        }
    }
    Ok(())
}

/// A unit's private `/tmp` and `/var/tmp`: one tmpfs, holding `tmp` and
/// `var-tmp` (mode 1777), that the unit's processes bind over theirs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivateTmp {
    dir: PathBuf,
}

impl PrivateTmp {
    /// Mounts the private `/tmp` of `unit` below `base` (normally
    /// [`PRIVATE_DIR`]); a stale one left by an earlier run is replaced.
    pub fn create(base: &Path, unit: &str) -> Result<PrivateTmp, String> {
        let dir = base.join(unit);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| format!("create {}: {e}", dir.display()))?;
        detach(&dir)?;
        mount(
            Some("tmpfs"),
            &dir,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some("mode=0700"),
        )
        .map_err(|e| format!("mount a tmpfs on {}: {}", dir.display(), Os(e)))?;
        for sub in ["tmp", "var-tmp"] {
            let p = dir.join(sub);
            std::fs::create_dir(&p)
                .and_then(|()| {
                    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o1777))
                })
                .map_err(|e| format!("create {}: {e}", p.display()))?;
        }
        Ok(PrivateTmp { dir })
    }

    /// The directory to give [`crate::sys::context::Params::private_tmp`].
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Detaches the tmpfs (the kernel frees it once no process of the unit
    /// uses it) and removes its mount point.
    pub fn remove(&self) -> Result<(), String> {
        detach(&self.dir)?;
        match std::fs::remove_dir(&self.dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("remove {}: {e}", self.dir.display())),
        }
    }
}

/// Detaches what is mounted on `dir`, if anything is.
fn detach(dir: &Path) -> Result<(), String> {
    match umount2(dir, MntFlags::MNT_DETACH) {
        // EINVAL: not a mount point.
        Ok(()) | Err(nix::errno::Errno::EINVAL | nix::errno::Errno::ENOENT) => Ok(()),
        Err(e) => Err(format!("umount {}: {}", dir.display(), Os(e))),
    }
}
