//! A unit's credentials (`LoadCredential=`, `ImportCredential=`,
//! `SetCredential=`): a
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
//!
//! `ImportCredential=GLOB[:RENAME]` ([`Op::ImportCredentials`]) lists the
//! same directories in the same order and takes every regular file whose
//! name matches the glob (`fnmatch(3)`) and whose ID is not taken yet: a
//! `LoadCredential=` of the ID is written before the imports and wins, an
//! earlier directory wins over a later one, and a `SetCredential=` of an
//! ID that no `LoadCredential=` names is written after them, only when
//! none brought it (systemd's order). None found is no error: Debian 13's
//! units import optional credentials this way (`agetty.*`, `sysctl.*`).
//! Each process gets a credential directory of its own (a new tmpfs; a
//! plain directory is emptied first), so an ID already there was written
//! by this process.

use std::ffi::{c_int, CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

use flotilla_units::context::credentials::{Credentials, Source, BASE, STORE, TOTAL_MAX};
use flotilla_units::context::Key;

use crate::sys::mount_api;
use crate::sys::steps::{Op, Step};

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
    let stores = || own.iter().cloned().chain(STORE.iter().map(PathBuf::from));
    // The IDs a `LoadCredential=` names first, the imports, then the IDs
    // only a `SetCredential=` gives (each written only when no import
    // brought it).
    let loaded = creds.load.iter().map(|l| l.id.as_str());
    let set_only = creds
        .ids()
        .into_iter()
        .filter(|id| !creds.load.iter().any(|l| l.id == *id));
    let mut imports_at = None;
    for id in loaded.map(Some).chain([None]).chain(set_only.map(Some)) {
        let Some(id) = id else {
            imports_at = Some(out.len());
            continue;
        };
        let fallback = creds.value_of(id).map(<[u8]>::to_vec);
        let load = creds.load.iter().find(|l| l.id == id);
        let (sources, required, what) = match load.map(|l| &l.source) {
            Some(Source::Path(p)) => (
                vec![c(p)?],
                fallback.is_none(),
                format!("{} load {id} from {}", Key::LoadCredential, p.display()),
            ),
            Some(Source::Name(n)) => (
                stores().map(|d| c(&d.join(n))).collect::<Result<_, _>>()?,
                false,
                format!(
                    "{} load {id} from the credential store ({n})",
                    Key::LoadCredential
                ),
            ),
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
    let dirs: Vec<CString> = stores().map(|d| c(&d)).collect::<Result<_, _>>()?;
    let imports = creds.import.iter().map(|i| {
        (
            Op::ImportCredentials {
                begin: first,
                import: i.clone(),
                dirs: dirs.clone(),
                owner,
            },
            format!(
                "{} import {} from the credential store",
                Key::ImportCredential,
                i.glob
            ),
        )
    });
    let at = imports_at.unwrap_or(out.len());
    out.splice(at..at, imports);
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

fn check(r: c_int) -> Result<(), c_int> {
    if r < 0 {
        Err(errno())
    } else {
        Ok(())
    }
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
        // 0500), and emptied of what that process got.
        if let Err(e) = check(libc::fchmod(d, 0o700)).and_then(|()| empty_dir(d)) {
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
        // A `SetCredential=` alone gives way to an import that brought
        // the ID (written before it, by this process).
        Some(_) if sources.is_empty() && exists(mnt, id) => Ok(()),
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

/// Whether `mnt` holds an entry `id`.
unsafe fn exists(mnt: c_int, id: &CStr) -> bool {
    libc::faccessat(mnt, id.as_ptr(), libc::F_OK, libc::AT_SYMLINK_NOFOLLOW) == 0
}

/// The room for one `getdents64` batch, 8-byte aligned as its records are.
const DIRENT_ROOM: usize = 512;

/// Calls `each` with the name of every entry of the directory `dir` but
/// `.` and `..`, read with `getdents64` into a buffer on the stack.
unsafe fn each_entry(
    dir: c_int,
    mut each: impl FnMut(&CStr) -> Result<(), c_int>,
) -> Result<(), c_int> {
    let mut buf = [0u64; DIRENT_ROOM];
    loop {
        let n = libc::syscall(
            libc::SYS_getdents64,
            dir,
            buf.as_mut_ptr(),
            std::mem::size_of_val(&buf),
        );
        if n < 0 {
            return Err(errno());
        }
        if n == 0 {
            return Ok(());
        }
        let bytes = std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), n as usize);
        let mut at = 0;
        // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2),
        // d_type (1), d_name (NUL-terminated).
        while let Some(rec) = bytes.get(at..) {
            let Some(len) = rec
                .get(16..18)
                .and_then(|l| <[u8; 2]>::try_from(l).ok())
                .map(|l| u16::from_ne_bytes(l) as usize)
            else {
                break;
            };
            if len == 0 {
                break;
            }
            let name = rec
                .get(19..len.min(rec.len()))
                .and_then(|n| CStr::from_bytes_until_nul(n).ok());
            if let Some(name) = name {
                let b = name.to_bytes();
                if b != b"." && b != b".." {
                    each(name)?;
                }
            }
            at += len;
        }
    }
}

/// [`Op::ImportCredentials`]: every regular file of `dirs` whose name
/// matches the glob of `import`, written into the tmpfs of `begin` under the ID
/// `import` gives it, unless that ID is there already (an earlier
/// directory's, or a `LoadCredential=`'s). A directory that is missing is
/// skipped.
///
/// # Safety
///
/// In a spawned child (`sandbox.rs`): plain system calls only.
pub(crate) unsafe fn import(
    (mnt, total): (c_int, &AtomicU64),
    import: &flotilla_units::context::credentials::Import,
    dirs: &[CString],
    owner: Option<(libc::uid_t, libc::gid_t)>,
) -> Result<(), c_int> {
    for d in dirs {
        let dir = libc::open(
            d.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if dir < 0 {
            if matches!(errno(), libc::ENOENT | libc::ENOTDIR) {
                continue;
            }
            return Err(errno());
        }
        let r = each_entry(dir, |name| {
            // The ID, NUL-terminated, on the stack.
            let mut buf = [0u8; 257];
            let Some(len) = import.id_into(name.to_bytes(), &mut buf) else {
                return Ok(());
            };
            let Some(id) = buf
                .get(..=len)
                .and_then(|b| CStr::from_bytes_with_nul(b).ok())
            else {
                return Ok(());
            };
            if exists(mnt, id) {
                return Ok(());
            }
            let fd = libc::openat(
                dir,
                name.as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NONBLOCK,
            );
            if fd < 0 {
                return if errno() == libc::ENOENT {
                    Ok(())
                } else {
                    Err(errno())
                };
            }
            let mut st: libc::stat = std::mem::zeroed();
            let r = if libc::fstat(fd, &mut st) < 0 {
                Err(errno())
            } else if st.st_mode & libc::S_IFMT != libc::S_IFREG {
                Ok(())
            } else {
                create(mnt, id, owner).and_then(|out| {
                    let r = copy(fd, out, total);
                    libc::close(out);
                    r
                })
            };
            libc::close(fd);
            r
        });
        libc::close(dir);
        r?;
    }
    Ok(())
}

/// Removes every entry of the directory `dir` (a plain credential
/// directory: its files, written by an earlier process of the unit).
unsafe fn empty_dir(dir: c_int) -> Result<(), c_int> {
    // Unlinking while listing may skip entries: list again until none.
    for _ in 0..64 {
        let mut any = false;
        each_entry(dir, |name| {
            any = true;
            if libc::unlinkat(dir, name.as_ptr(), 0) < 0 && errno() != libc::ENOENT {
                return Err(errno());
            }
            Ok(())
        })?;
        if !any {
            return Ok(());
        }
        if libc::lseek(dir, 0, libc::SEEK_SET) < 0 {
            return Err(errno());
        }
    }
    Err(libc::ENOTEMPTY)
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
            Err(e) => return Err(format!("umount {}: {}", dir.display(), crate::sys::Os(e))),
        }
    }
    // A plain directory (the init could not mount) holds the files.
    match std::fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("remove {}: {e}", dir.display())),
    }
}
