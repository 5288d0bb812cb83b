//! Upgrade in place, the system half: executing the init's binary again
//! with its state and descriptors ([`exec`]), and, in the new image,
//! taking them back ([`inherited`], [`adopt`]). What the state is and how
//! it is rebuilt is `runtime/reexec.rs`'s; its format is
//! `flotilla_units::snapshot`.
//!
//! **Which binary.** The path `/proc/self/exe` names when the init starts
//! ([`remember_exe`]), executed by that path at the re-exec: an upgrade
//! replaces the file at that path (a package manager writes a new file and
//! renames it over the old one), and the re-exec must run the new file.
//! `/proc/self/exe` read at the re-exec would name the old, deleted inode;
//! `argv[0]` may be relative or a bare name looked up in a `PATH` that has
//! changed since. A path resolved at start is absolute and free of links.
//!
//! **The hand-over.** The snapshot is written to a memory file
//! (`memfd_create`), and exactly the descriptors to keep (the snapshot's,
//! the control socket's, the output pipes', the notify sockets') lose
//! `FD_CLOEXEC`; every other descriptor the init holds has it and closes
//! at the `execve`. The new image finds the memory file's number in
//! [`ENV`]. If `execve` fails (the file is missing, not executable, not a
//! program), nothing has changed: `FD_CLOEXEC` is set back on those
//! descriptors, the memory file is closed, and the error is returned.
//! Once `execve` succeeds there is no way back: the new image must start.

use std::collections::HashSet;
use std::convert::Infallible;
use std::ffi::CString;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use nix::fcntl::{fcntl, FcntlArg, FdFlag};

use crate::sys::{Errno, Os, SysError};

/// The variable naming the snapshot's descriptor in the new image.
pub const ENV: &str = "FLOTILLA_REEXEC_FD";

/// The binary's path, read at start.
static EXE: OnceLock<Option<PathBuf>> = OnceLock::new();

/// The descriptors adopted in this image: each at most once.
static ADOPTED: Mutex<Option<HashSet<RawFd>>> = Mutex::new(None);

/// Reads the binary's path from `/proc/self/exe` (once; as PID 1, after
/// `/proc` is mounted). Falls back to an absolute `argv[0]`.
pub fn remember_exe() {
    EXE.get_or_init(|| {
        std::fs::read_link("/proc/self/exe")
            .ok()
            .or_else(|| {
                std::env::args_os()
                    .next()
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
            })
            .map(|p| {
                // Read after the file was replaced: the kernel marks the name.
                let s = p.as_os_str().as_bytes();
                match s.strip_suffix(b" (deleted)") {
                    Some(head) => PathBuf::from(std::ffi::OsStr::from_bytes(head)),
                    None => p,
                }
            })
    });
}

/// The binary a re-exec runs.
pub fn exe() -> Option<PathBuf> {
    EXE.get().cloned().flatten()
}

/// The binary the init's own helpers run (the unit loader, the generator
/// runner, the cleaner): the one running, `/proc/self/exe`, which names it
/// even after an upgrade renamed a new file over its path, so that a
/// helper always speaks the protocol of the init that started it (the new
/// binary is run by the re-exec only, [`exe`]). `None` where the init's
/// binary is not known.
pub fn own_image() -> Option<PathBuf> {
    exe().map(|_| PathBuf::from("/proc/self/exe"))
}

/// Starts the init's own binary as a helper child, `init FLAG ARGS…`
/// (the cleaner, the binder), its output on the init's console; `what`
/// names it in an error.
pub fn spawn_helper(
    sys: &dyn crate::sys::Sys,
    flag: &str,
    args: Vec<String>,
    what: &str,
) -> Result<crate::sys::Pid, String> {
    let exe = own_image().ok_or_else(|| format!("cannot {what} ({flag}): own binary unknown"))?;
    let mut argv = vec![exe.to_string_lossy().into_owned(), flag.to_string()];
    argv.extend(args);
    let env = crate::sys::env::Env::from_current();
    let mut req = crate::sys::SpawnRequest::new(&argv, &env);
    req.stdout = crate::sys::Stdio::Inherit;
    req.stderr = crate::sys::Stdio::Inherit;
    sys.spawn(&req)
        .map_err(|e| format!("cannot {what}: cannot start init {flag}: {e}"))
}

fn err(call: impl Into<String>, errno: Errno) -> SysError {
    SysError::Call {
        call: call.into(),
        errno: Os(errno),
    }
}

fn set_cloexec(fd: RawFd, on: bool) -> Result<(), Errno> {
    let flags = if on {
        FdFlag::FD_CLOEXEC
    } else {
        FdFlag::empty()
    };
    // SAFETY: the descriptor is one of the init's own, open for the whole
    // call; F_SETFD changes only its close-on-exec flag.
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    fcntl(fd, FcntlArg::F_SETFD(flags)).map(drop)
}

/// Executes the init's binary again with `snapshot`, keeping `keep` open.
/// Returns only if that failed, with everything as it was.
pub fn exec(snapshot: &[u8], keep: &[RawFd]) -> Result<Infallible, SysError> {
    let exe = exe().ok_or_else(|| err("readlink /proc/self/exe", Errno::ENOENT))?;
    let path = CString::new(exe.as_os_str().as_bytes())
        .map_err(|_| err(format!("execve {}", exe.display()), Errno::EINVAL))?;
    let mut file = crate::sys::memfd::create(c"flotilla-reexec", 0).map_err(|e| {
        err(
            "memfd_create",
            Errno::from_raw(e.raw_os_error().unwrap_or(0)),
        )
    })?;
    file.write_all(snapshot)
        .and_then(|()| file.seek(SeekFrom::Start(0)).map(drop))
        .map_err(|e| {
            err(
                "write the re-exec snapshot",
                Errno::from_raw(e.raw_os_error().unwrap_or(0)),
            )
        })?;
    let argv: Vec<CString> = std::env::args_os()
        .filter_map(|a| CString::new(a.as_bytes()).ok())
        .collect();
    let mut env: Vec<CString> = std::env::vars_os()
        .filter(|(k, _)| k != ENV)
        .filter_map(|(k, v)| {
            let mut kv = k;
            kv.push("=");
            kv.push(v);
            CString::new(kv.as_bytes()).ok()
        })
        .collect();
    let fd = file.as_raw_fd();
    env.extend(CString::new(format!("{ENV}={fd}")).ok());
    let mut cleared = Vec::with_capacity(keep.len() + 1);
    let mut result = Ok(());
    for &k in keep.iter().chain([&fd]) {
        match set_cloexec(k, false) {
            Ok(()) => cleared.push(k),
            Err(e) => {
                result = Err(err(format!("fcntl({k}, F_SETFD)"), e));
                break;
            }
        }
    }
    let failure = match result {
        Ok(()) => match nix::unistd::execve(&path, &argv, &env) {
            Err(e) => err(format!("execve {}", exe.display()), e),
            Ok(never) => match never {},
        },
        Err(e) => e,
    };
    for k in cleared {
        let _ = set_cloexec(k, true);
    }
    Err(failure)
}

/// The snapshot handed over by the image before this one, if this image
/// was started by a re-exec: its bytes, or why they cannot be read. The
/// variable is removed (the units do not inherit it) and the memory file
/// closed.
pub fn inherited() -> Option<Result<Vec<u8>, String>> {
    let v = std::env::var_os(ENV)?;
    std::env::remove_var(ENV);
    let fd: RawFd = match v.to_str().and_then(|s| s.parse().ok()) {
        Some(fd) if fd > 2 => fd,
        _ => {
            return Some(Err(format!(
                "{ENV}={}: not a descriptor",
                v.to_string_lossy()
            )))
        }
    };
    let owned = match adopt(fd) {
        Ok(o) => o,
        Err(e) => return Some(Err(format!("{ENV}={fd}: {e}"))),
    };
    let mut bytes = Vec::new();
    let max = flotilla_units::snapshot::MAX_BYTES as u64 + 1;
    Some(
        std::fs::File::from(owned)
            .take(max)
            .read_to_end(&mut bytes)
            .map(|_| bytes)
            .map_err(|e| format!("read the re-exec snapshot: {e}")),
    )
}

/// Takes descriptor `fd`, inherited across the re-exec, as the init's
/// own (close-on-exec again). Refused when it is not open, is standard
/// input, output or error, or was already taken.
pub fn adopt(fd: RawFd) -> Result<OwnedFd, SysError> {
    let mut adopted = ADOPTED.lock().map_err(|_| err("adopt", Errno::EDEADLK))?;
    let set = adopted.get_or_insert_with(HashSet::new);
    if fd <= 2 || set.contains(&fd) {
        return Err(err(format!("adopt descriptor {fd}"), Errno::EBADF));
    }
    set_cloexec(fd, true).map_err(|e| err(format!("adopt descriptor {fd}"), e))?;
    set.insert(fd);
    // SAFETY: the descriptor is open (F_SETFD succeeded), was inherited
    // across execve for this purpose, and is taken once (the set above).
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
