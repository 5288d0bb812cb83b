//! Hearing of the wall clock being set: a `timerfd` on `CLOCK_REALTIME`
//! armed at the end of time with `TFD_TIMER_CANCEL_ON_SET`, which the
//! kernel cancels (a read fails with `ECANCELED`, the descriptor readable)
//! whenever the clock is set or jumps. The loop watches it and moves the
//! timers' calendar elapses (`Planner::wall_clock_set`); no polling.

use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use crate::sys::{Errno, Os, SysError};

fn call_error(call: &str) -> SysError {
    SysError::Call {
        call: call.to_string(),
        errno: Os(Errno::last()),
    }
}

/// Arms `fd` at the end of time, cancelled when the clock is set.
fn arm(fd: BorrowedFd<'_>) -> Result<(), SysError> {
    // The libc crate marks musl's `time_t` deprecated (a notice of musl
    // 1.2's 64-bit change, which x86_64 always had): its maximum is meant.
    #[allow(deprecated)]
    let spec = libc::itimerspec {
        it_interval: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: libc::timespec {
            tv_sec: libc::time_t::MAX,
            tv_nsec: 0,
        },
    };
    let flags = libc::TFD_TIMER_ABSTIME | libc::TFD_TIMER_CANCEL_ON_SET;
    // SAFETY: `fd` is a valid timerfd; `spec` outlives the call, and a
    // null old value is allowed.
    let r = unsafe { libc::timerfd_settime(fd.as_raw_fd(), flags, &spec, std::ptr::null_mut()) };
    if r < 0 {
        return Err(call_error("timerfd_settime(CLOCK_REALTIME, CANCEL_ON_SET)"));
    }
    Ok(())
}

/// The watch: non-blocking, close-on-exec, armed.
pub fn watch() -> Result<OwnedFd, SysError> {
    // SAFETY: plain system call; the result is checked.
    let raw = unsafe {
        libc::timerfd_create(libc::CLOCK_REALTIME, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC)
    };
    if raw < 0 {
        return Err(call_error("timerfd_create(CLOCK_REALTIME)"));
    }
    // SAFETY: `raw` is a new descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    arm(std::os::fd::AsFd::as_fd(&fd))?;
    Ok(fd)
}

/// After the watch was readable: whether the clock was set (the read
/// failed with `ECANCELED`); the watch is armed again either way.
pub fn was_set(fd: BorrowedFd<'_>) -> bool {
    let mut buf = [0u8; 8];
    let set = match nix::unistd::read(fd, &mut buf) {
        Err(Errno::ECANCELED) => true,
        Err(Errno::EAGAIN) => return false,
        _ => false,
    };
    let _ = arm(fd);
    set
}
