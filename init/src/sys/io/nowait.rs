//! A write that never waits, to the init's standard output (the console
//! or a pipe the container engine reads): what does not fit now is left
//! for the loop to retry once the descriptor is writable.

use super::super::{Errno, Os, SysError};
use std::os::fd::RawFd;

/// Writes what of `buf` fits now to `fd`: a socket with `MSG_DONTWAIT`,
/// a pipe with `RWF_NOWAIT`, a terminal only when the descriptor itself
/// never waits. `Ok(0)` when nothing fits.
pub fn write(fd: RawFd, buf: &[u8]) -> Result<usize, SysError> {
    let fail = |call: &str| SysError::Call {
        call: call.to_owned(),
        errno: Os(Errno::last()),
    };
    // SAFETY (each call below): `buf` is valid for its length, and the
    // calls only read it.
    let mut n = unsafe {
        libc::send(
            fd,
            buf.as_ptr().cast(),
            buf.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        )
    };
    if n < 0 && Errno::last() == Errno::ENOTSOCK {
        // A pipe: RWF_NOWAIT (Linux 5.8 for pipes), whatever the
        // descriptor's own flag.
        let iov = libc::iovec {
            iov_base: buf.as_ptr().cast_mut().cast(),
            iov_len: buf.len(),
        };
        n = unsafe { libc::pwritev2(fd, &iov, 1, -1, libc::RWF_NOWAIT) };
        if n < 0 && matches!(Errno::last(), Errno::EOPNOTSUPP | Errno::EINVAL) {
            // A terminal: a plain write, only on a descriptor of our
            // own that never waits.
            let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
            if fl < 0 || fl & libc::O_NONBLOCK == 0 {
                return Err(fail("write to standard output without waiting"));
            }
            n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        }
    }
    match usize::try_from(n) {
        Ok(n) => Ok(n),
        Err(_) => match Errno::last() {
            Errno::EAGAIN | Errno::EINTR => Ok(0),
            _ => Err(fail("write to standard output")),
        },
    }
}
