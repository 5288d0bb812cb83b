//! A unit's credentials (`LoadCredential=`, `SetCredential=`): a
//! read-only tmpfs on `/run/credentials/UNIT`, owned by the unit's user
//! (mode 0500), one file of mode 0400 per credential, which the unit's
//! processes find through `$CREDENTIALS_DIRECTORY`.
//!
//! # Where it happens
//!
//! The credentials are read by the unit's own process, as context steps
//! (`sandbox.rs`) run before anything else changes, while it still has the
//! init's privileges and sees the host's mounts: the files it reads may be
//! on a disk, so the spawn hands the child off first (`spawn/child.rs`),
//! and the init's loop never waits on them. [`Op::CredentialsBegin`] makes
//! a new detached tmpfs (mode 0500), each [`Op::Credential`] writes one
//! file into it (at most [`TOTAL_MAX`] bytes in all, as in systemd), and
//! [`Op::CredentialsEnd`] gives the root of the tmpfs to the unit's user,
//! makes it read-only and puts it on the unit's directory in place of what
//! an earlier process of the unit put there (the files are read again for
//! every process, as systemd does). A stop detaches it ([`remove`]): the
//! kernel frees it, with no walk.
//!
//! A credential from an absolute path that is missing fails the start
//! (systemd's exit status 243), unless a `SetCredential=` of the same ID
//! stands in; one named without a path is looked for in the init's own
//! `$CREDENTIALS_DIRECTORY`, then in `/etc/credstore`, `/run/credstore` and
//! `/usr/lib/credstore`, and skipped when none has it (as systemd does).

use std::ffi::{c_int, CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

use flotilla_units::context::credentials::{Credentials, Source, BASE, STORE, TOTAL_MAX};
use flotilla_units::context::Key;

use super::mount_api;
use super::steps::{Op, Step};

/// The ops that set up `creds` on `dir`, each with its name, the first
/// to be step `first` of the child's steps. `owner`: the unit's user and
/// group. `plain`: in `dir` itself, a plain directory (the init cannot
/// mount).
pub(crate) fn ops(
    creds: &Credentials,
    dir: &Path,
    owner: Option<(u32, u32)>,
    first: usize,
    plain: bool,
) -> Result<Vec<(Op, String)>, (Key, String)> {
    let key = creds.key();
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| (key, format!("{}: contains a NUL byte", p.display())))
    };
    let mut out = vec![(
        Op::CredentialsBegin {
            base: c(Path::new(BASE))?,
            plain: plain.then(|| c(dir)).transpose()?,
            fd: AtomicI32::new(-1),
            total: AtomicU64::new(0),
        },
        format!("{key} make the credentials of {}", dir.display()),
    )];
    let own = std::env::var_os("CREDENTIALS_DIRECTORY").map(PathBuf::from);
    for id in creds.ids() {
        let fallback = creds.value_of(id).map(<[u8]>::to_vec);
        let load = creds.load.iter().find(|l| l.id == id);
        let (sources, required, what) = match load.map(|l| &l.source) {
            Some(Source::Path(p)) => (
                vec![c(p)?],
                fallback.is_none(),
                format!("{} load {id} from {}", Key::LoadCredential, p.display()),
            ),
            Some(Source::Name(n)) => {
                let dirs = own.iter().cloned().chain(STORE.iter().map(PathBuf::from));
                (
                    dirs.map(|d| c(&d.join(n))).collect::<Result<_, _>>()?,
                    false,
                    format!(
                        "{} load {id} from the credential store ({n})",
                        Key::LoadCredential
                    ),
                )
            }
            None => (
                Vec::new(),
                false,
                format!("{} write {id}", Key::SetCredential),
            ),
        };
        out.push((
            Op::Credential {
                begin: first,
                id: c(Path::new(id))?,
                sources,
                fallback,
                required,
                owner,
            },
            what,
        ));
    }
    out.push((
        Op::CredentialsEnd {
            begin: first,
            dir: c(dir)?,
            owner,
        },
        format!("{key} put the credentials on {}", dir.display()),
    ));
    Ok(out)
}

fn errno() -> c_int {
    nix::errno::Errno::last_raw()
}

/// [`Op::CredentialsBegin`]: makes `/run/credentials` if missing and a new
/// detached tmpfs, kept in `fd`; with `plain`, the unit's directory
/// itself (mode 0700 until [`finish`]), opened.
///
/// # Safety
///
/// In a spawned child (`sandbox.rs`): plain system calls only.
pub(crate) unsafe fn begin(
    base: &CStr,
    plain: Option<&CStr>,
    fd: &AtomicI32,
    total: &AtomicU64,
) -> Result<(), c_int> {
    fd.store(-1, Ordering::Relaxed);
    total.store(0, Ordering::Relaxed);
    if libc::mkdir(base.as_ptr(), 0o755) < 0 && errno() != libc::EEXIST {
        return Err(errno());
    }
    if let Some(dir) = plain {
        if libc::mkdir(dir.as_ptr(), 0o700) < 0 && errno() != libc::EEXIST {
            return Err(errno());
        }
        let d = libc::open(
            dir.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC | libc::O_NOFOLLOW,
        );
        if d < 0 {
            return Err(errno());
        }
        // Back to 0700 while it is written (an earlier process's left it
        // 0500).
        if libc::fchmod(d, 0o700) < 0 {
            let e = errno();
            libc::close(d);
            return Err(e);
        }
        fd.store(d, Ordering::Relaxed);
        return Ok(());
    }
    let attrs = mount_api::MOUNT_ATTR_NOSUID_NODEV_NOEXEC;
    let t = mount_api::detached_tmpfs(c"0500", attrs)?;
    fd.store(t, Ordering::Relaxed);
    Ok(())
}

/// [`Op::Credential`]: writes credential `id` into the tmpfs of `begin`:
/// the first of `sources` that exists, else `fallback`; none of them is
/// an error when `required`. The file is `owner`'s.
///
/// # Safety
///
/// In a spawned child (`sandbox.rs`): plain system calls only.
pub(crate) unsafe fn write(
    (mnt, total): (c_int, &AtomicU64),
    id: &CStr,
    sources: &[CString],
    fallback: Option<&[u8]>,
    required: bool,
    owner: Option<(libc::uid_t, libc::gid_t)>,
) -> Result<(), c_int> {
    for src in sources {
        let fd = libc::open(
            src.as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOCTTY,
        );
        if fd < 0 {
            if errno() == libc::ENOENT {
                continue;
            }
            return Err(errno());
        }
        let r = create(mnt, id, owner).and_then(|out| {
            let r = copy(fd, out, total);
            libc::close(out);
            r
        });
        libc::close(fd);
        return r;
    }
    match fallback {
        Some(bytes) => {
            let out = create(mnt, id, owner)?;
            let r = add(total, bytes.len() as u64).and_then(|()| write_all(out, bytes));
            libc::close(out);
            r
        }
        None if required => Err(libc::ENOENT),
        None => Ok(()),
    }
}

/// A new file `id` of mode 0400 in the tmpfs (or plain directory) `mnt`,
/// `owner`'s, in place of an earlier process's.
unsafe fn create(
    mnt: c_int,
    id: &CStr,
    owner: Option<(libc::uid_t, libc::gid_t)>,
) -> Result<c_int, c_int> {
    if libc::unlinkat(mnt, id.as_ptr(), 0) < 0 && errno() != libc::ENOENT {
        return Err(errno());
    }
    let fd = libc::openat(
        mnt,
        id.as_ptr(),
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC | libc::O_NOFOLLOW,
        0o400 as libc::c_uint,
    );
    if fd < 0 {
        return Err(errno());
    }
    // The exact mode, whatever the umask.
    let mut r = libc::fchmod(fd, 0o400);
    if let (0, Some((uid, gid))) = (r, owner) {
        r = libc::fchown(fd, uid, gid);
    }
    if r < 0 {
        let e = errno();
        libc::close(fd);
        return Err(e);
    }
    Ok(fd)
}

/// Counts `n` more bytes: too many is `EFBIG`.
fn add(total: &AtomicU64, n: u64) -> Result<(), c_int> {
    let now = total.load(Ordering::Relaxed).saturating_add(n);
    total.store(now, Ordering::Relaxed);
    if now > TOTAL_MAX {
        Err(libc::EFBIG)
    } else {
        Ok(())
    }
}

/// Copies `from` to its end into `to`, through a buffer on the stack.
unsafe fn copy(from: c_int, to: c_int, total: &AtomicU64) -> Result<(), c_int> {
    let mut buf = [0u8; 4096];
    loop {
        let n = libc::read(from, buf.as_mut_ptr().cast(), buf.len());
        if n < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            return Err(errno());
        }
        if n == 0 {
            return Ok(());
        }
        let got = buf.get(..n as usize).unwrap_or(&[]);
        add(total, got.len() as u64)?;
        write_all(to, got)?;
    }
}

unsafe fn write_all(fd: c_int, mut data: &[u8]) -> Result<(), c_int> {
    while !data.is_empty() {
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        if n < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            return Err(errno());
        }
        data = data.get(n as usize..).unwrap_or(&[]);
    }
    Ok(())
}

/// [`Op::CredentialsEnd`]: the root of the tmpfs `mnt` to `owner`, the
/// tmpfs read-only, and onto `dir` in place of what is there; a plain
/// directory (`plain`) is only given to `owner`, mode 0500.
///
/// # Safety
///
/// In a spawned child (`sandbox.rs`): plain system calls only.
pub(crate) unsafe fn finish(
    mnt: c_int,
    dir: &CStr,
    owner: Option<(libc::uid_t, libc::gid_t)>,
    plain: bool,
) -> Result<(), c_int> {
    if let Some((uid, gid)) = owner {
        if libc::fchownat(mnt, c"".as_ptr(), uid, gid, libc::AT_EMPTY_PATH) < 0 {
            return Err(errno());
        }
    }
    if plain {
        return if libc::fchmod(mnt, 0o500) < 0 {
            Err(errno())
        } else {
            Ok(())
        };
    }
    mount_api::set_empty_path_attr(mnt, mount_api::MOUNT_ATTR_RDONLY)?;
    if libc::mkdir(dir.as_ptr(), 0o700) < 0 && errno() != libc::EEXIST {
        return Err(errno());
    }
    // What an earlier process of the unit put there goes (its processes
    // keep what they hold open).
    for _ in 0..16 {
        if libc::umount2(dir.as_ptr(), libc::MNT_DETACH) < 0 {
            break;
        }
    }
    mount_api::attach(mnt, dir)
}

/// The tmpfs (or plain directory) that [`Op::CredentialsBegin`] number
/// `begin` of `steps` made, and its byte count.
pub(crate) fn mount_of(steps: &[Step], begin: usize) -> Option<(c_int, &AtomicU64)> {
    match steps.get(begin).map(|s| &s.op) {
        Some(Op::CredentialsBegin { fd, total, .. }) => {
            let fd = fd.load(Ordering::Relaxed);
            (fd >= 0).then_some((fd, total))
        }
        _ => None,
    }
}

/// Whether [`Op::CredentialsBegin`] number `begin` of `steps` writes into
/// the unit's directory itself, a plain one.
pub(crate) fn is_plain(steps: &[Step], begin: usize) -> bool {
    matches!(
        steps.get(begin).map(|s| &s.op),
        Some(Op::CredentialsBegin { plain: Some(_), .. })
    )
}

/// Takes a unit's credentials down at its stop: whatever is mounted on
/// `dir` is detached (the kernel frees it once no process holds it) and
/// the directory removed. Missing is fine.
pub fn remove(dir: &Path) -> Result<(), String> {
    for _ in 0..16 {
        match nix::mount::umount2(dir, nix::mount::MntFlags::MNT_DETACH) {
            Ok(()) => {}
            Err(nix::errno::Errno::EINVAL | nix::errno::Errno::ENOENT) => break,
            Err(e) => return Err(format!("umount {}: {}", dir.display(), super::Os(e))),
        }
    }
    // A plain directory (the init could not mount) holds the files.
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("remove {}: {e}", dir.display())),
    }
}
