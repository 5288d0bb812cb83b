//! The stack a `CLONE_VM` child runs on (`mod.rs`, `flight.rs`).

use std::ffi::c_void;

use super::Errno;

/// The size of the child's stack. The child's deepest call chain is a few
/// frames of its own plus a C library system-call wrapper: well under a
/// page in release builds, a few in debug builds.
pub(super) const STACK_SIZE: usize = 64 << 10;

/// The child's stack: an anonymous mapping with a guard page below it (an
/// overflow kills the child, whose signals are blocked, instead of writing
/// over the parent's memory). Only the pages the child touches are ever
/// backed.
#[derive(Debug)]
pub(super) struct Stack {
    base: *mut c_void,
    len: usize,
    /// The highest address: stacks grow down.
    pub(super) top: *mut c_void,
}

// SAFETY: the mapping belongs to the stack alone; it is only used under the
// spawner's lock.
unsafe impl Send for Stack {}

impl Stack {
    pub(super) fn new() -> Result<Stack, Errno> {
        // SAFETY: sysconf(3) has no memory-safety requirements.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
            .unwrap_or(4096)
            .max(4096);
        let len = STACK_SIZE + page;
        // SAFETY: a new private anonymous mapping; nothing else is touched.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(Errno::last());
        }
        let stack = Stack {
            base,
            len,
            top: base.cast::<u8>().wrapping_add(len).cast(),
        };
        // SAFETY: the lowest page of the mapping just made.
        if unsafe { libc::mprotect(base, page, libc::PROT_NONE) } < 0 {
            return Err(Errno::last());
        }
        Ok(stack)
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: our mapping, unmapped once; no child is running on it
        // (dropping needs the spawner, which a spawn borrows).
        unsafe { libc::munmap(self.base, self.len) };
    }
}
