//! Memory files (`memfd_create(2)`): bytes handed to another process (a
//! unit's standard input, the unit loader's output) or to the init's next
//! image (the re-exec snapshot) without touching a disk.

use std::ffi::{c_uint, CStr};
use std::os::fd::{FromRawFd, OwnedFd};

/// A new, empty memory file named `name` (shown in `/proc/PID/fd`),
/// close-on-exec, with the further `flags` (`MFD_ALLOW_SEALING`).
pub fn create(name: &CStr, flags: c_uint) -> std::io::Result<std::fs::File> {
    // SAFETY: memfd_create takes a NUL-terminated name and flags, and
    // returns a new descriptor (or -1) that is ours alone.
    let raw = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC | flags) };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor memfd_create just returned, owned by nobody else.
    Ok(std::fs::File::from(unsafe { OwnedFd::from_raw_fd(raw) }))
}
