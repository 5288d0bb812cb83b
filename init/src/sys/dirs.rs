//! The file-system work a unit's context asks for around its start and
//! stop: its directories (`RuntimeDirectory=` …) and its private `/tmp`.
//!
//! # How much work, and where
//!
//! All of it happens in the init, at a unit's start or stop, never per
//! event, and each call is bounded:
//!
//! - making a directory is `mkdir` of each missing parent, then `mkdir`,
//!   `chown` and `chmod` of the directory itself: a few metadata calls per
//!   directory the unit lists. `/run` is a tmpfs; `/var/lib`, `/var/cache`,
//!   `/var/log` and `/etc` may be on a disk, where such a call can wait for
//!   the file system (a journal commit) — rarely, and once per start.
//!   Unlike systemd, an existing directory is not chowned recursively when
//!   its owner changed (that walk is unbounded): only the directory itself.
//! - removing the runtime directories at stop walks them, but they live in
//!   `/run`, a tmpfs: no disk, and as many calls as the unit left files.
//! - a private `/tmp` is a tmpfs per unit, mounted below the init's
//!   private directory (`/run/flotilla/private/UNIT`) at start and
//!   detached (`umount2(MNT_DETACH)`) at stop: the kernel frees it, however
//!   much the unit wrote, with no walk at all.
//!
//! If the lead moves this off the loop (to a helper process), these are the
//! calls to move.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use flotilla_units::context::dirs::{DirKind, Directories};
use flotilla_units::context::Key;

use nix::mount::{mount, umount2, MntFlags, MsFlags};

use super::Os;

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

/// Makes every directory `dirs` lists (parents with mode 0755, owned by
/// root), each with its mode, and owned by `owner` (UID, GID) but for the
/// configuration ones. Returns the environment the unit gets
/// (`RUNTIME_DIRECTORY=/run/a:/run/b`, …). The error names the key.
pub fn create(
    dirs: &Directories,
    owner: Option<(u32, u32)>,
) -> Result<Vec<(&'static str, String)>, (Key, String)> {
    let mut env: Vec<(&'static str, String)> = Vec::new();
    for (kind, path, mode) in dirs.paths() {
        let key = kind.key();
        let fail = |what: &str, e: std::io::Error| (key, format!("{what} {}: {e}", path.display()));
        if let Some(parent) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o755)
                .create(parent)
                .map_err(|e| fail("create the parents of", e))?;
        }
        match std::fs::DirBuilder::new().mode(mode).create(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let meta = std::fs::symlink_metadata(&path).map_err(|e| fail("look at", e))?;
                if !meta.is_dir() {
                    return Err((
                        key,
                        format!("{} exists and is not a directory", path.display()),
                    ));
                }
            }
            Err(e) => return Err(fail("create", e)),
        }
        if let (Some((uid, gid)), true) = (owner, kind.owned_and_writable()) {
            let meta = std::fs::symlink_metadata(&path).map_err(|e| fail("look at", e))?;
            if meta.uid() != uid || meta.gid() != gid {
                std::os::unix::fs::lchown(&path, Some(uid), Some(gid))
                    .map_err(|e| fail("chown", e))?;
            }
        }
        // Exactly the mode asked, whatever the umask was.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| fail("chmod", e))?;
        let var = kind.env_var();
        match env.iter_mut().find(|(v, _)| *v == var) {
            Some((_, list)) => {
                list.push(':');
                list.push_str(&path.to_string_lossy());
            }
            None => env.push((var, path.to_string_lossy().into_owned())),
        }
    }
    Ok(env)
}

/// Removes the runtime directories (at stop, unless
/// `RuntimeDirectoryPreserve=` keeps them). Missing ones are fine.
pub fn remove_runtime(dirs: &Directories) -> Result<(), String> {
    for (kind, path, _) in dirs.paths() {
        if kind != DirKind::Runtime {
            continue;
        }
        match std::fs::remove_dir_all(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("remove {}: {e}", path.display())),
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

    /// The directory to give [`super::context::Params::private_tmp`].
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
