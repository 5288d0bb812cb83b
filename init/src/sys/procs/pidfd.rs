//! `pidfd_open(2)` (Linux 5.3): a descriptor of a process that `poll(2)`
//! and epoll report readable once it has ended.

use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use crate::sys::{Errno, Pid};

/// A pidfd of `pid`: `ESRCH` once it has been reaped, `ENOSYS` on a kernel
/// without them.
pub(crate) fn open(pid: Pid) -> Result<OwnedFd, Errno> {
    // SAFETY: pidfd_open(2) takes a PID and flags and returns a new
    // descriptor or -1.
    let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    match RawFd::try_from(raw) {
        // SAFETY: a descriptor just made, owned by nothing else.
        Ok(fd) if fd >= 0 => Ok(unsafe { OwnedFd::from_raw_fd(fd) }),
        _ => Err(Errno::last()),
    }
}
