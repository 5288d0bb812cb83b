//! Where a process runs and takes its memory from: its CPU affinity and
//! its NUMA memory policy (`CPUAffinity=`, `NUMAPolicy=`, `NUMAMask=`;
//! the model's `context::placement`), set in a spawned child between
//! `fork` and `execve`, and the init's own policy from the manager's
//! settings. Only raw system calls: the child may not allocate.

use std::ffi::c_int;

use flotilla_units::context::placement::{InvalidPolicy, MemRequest};

/// What a memory policy's request came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemOutcome {
    /// The policy is set.
    Set,
    /// The kernel has no NUMA support (`ENOSYS`): nothing to set, as
    /// systemd ignores it.
    Unsupported,
}

/// Sets the calling process's memory policy, as systemd's
/// `apply_numa_policy`: a kernel without NUMA support is no error; a policy
/// the kernel would refuse fails with `EINVAL` without a call.
pub fn set_mempolicy(request: &Result<MemRequest, InvalidPolicy>) -> Result<MemOutcome, c_int> {
    let r = match request {
        // SAFETY: get_mempolicy with no outputs only asks whether the
        // call exists.
        Err(InvalidPolicy) => unsafe {
            libc::syscall(
                libc::SYS_get_mempolicy,
                0usize,
                0usize,
                0usize,
                0usize,
                0usize,
            )
        },
        Ok(req) => {
            let nodes = req.nodes.as_ref().map_or(std::ptr::null(), |w| w.as_ptr());
            // SAFETY: `nodes` is null with a maxnode of 0, or holds
            // exactly the words maxnode's bits span.
            unsafe { libc::syscall(libc::SYS_set_mempolicy, req.mode, nodes, req.max_node()) }
        }
    };
    match (r, request) {
        (r, _) if r < 0 && errno() == libc::ENOSYS => Ok(MemOutcome::Unsupported),
        (r, _) if r < 0 => Err(errno()),
        (_, Err(InvalidPolicy)) => Err(libc::EINVAL),
        (_, Ok(_)) => Ok(MemOutcome::Set),
    }
}

/// `sched_setaffinity(0, …)`: the calling process runs on the CPUs of
/// `words` (the set's kernel bitmap, [`IndexSet::words`]).
pub fn set_affinity(words: &[u64]) -> Result<(), c_int> {
    // SAFETY: the mask is `words`, its length in bytes given.
    let r = unsafe {
        libc::syscall(
            libc::SYS_sched_setaffinity,
            0,
            std::mem::size_of_val(words),
            words.as_ptr(),
        )
    };
    if r < 0 {
        Err(errno())
    } else {
        Ok(())
    }
}

fn errno() -> c_int {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}
