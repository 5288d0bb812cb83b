//! `clone3(2)` with `CLONE_INTO_CGROUP`, for the spawn path: the child is
//! born in its unit's cgroup.
//!
//! # Why
//!
//! The other way in, writing `0` to `cgroup.procs` from the child, migrates
//! a task, which takes the kernel's cgroup thread-group lock for writing:
//! a full RCU grace period whenever spawns are not back to back. Measured
//! on this project's machine (`examples/cg_exp` in the commit that added
//! this), spawns 20 ms apart cost 8 to 21 ms each that way, against 0.1 to
//! 0.2 ms without a cgroup — and the init waits all that time, since the
//! parent of a `CLONE_VFORK` child sleeps until it execs. A task created
//! in its cgroup takes that lock for reading only.
//!
//! # How
//!
//! Neither glibc nor musl exports a `clone3` that runs a function on a new
//! stack, so this is the raw system call in inline assembly, x86_64 only:
//! the kernel starts the child with its stack pointer at the top of the
//! stack given; the child calls the entry function there, and if that ever
//! returned, exits. Elsewhere, or on a kernel without `clone3` or
//! `CLONE_INTO_CGROUP` (before 5.7), [`clone_into`] says so and the caller
//! uses `clone(2)` and the `cgroup.procs` write instead.

use std::ffi::{c_int, c_void};
use std::os::fd::RawFd;
use std::sync::atomic::AtomicU32;

/// `CLONE_INTO_CGROUP`.
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// `struct clone_args`, version 2 (with `cgroup`).
#[repr(C)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// Why `clone3` was not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotHere {
    /// Not built for this architecture, or the kernel lacks it: use
    /// `clone(2)`.
    Unsupported,
    /// The call failed with this `errno`.
    Failed(c_int),
}

/// Starts `entry(arg)` in a child on the stack `[stack, stack + size)`,
/// with `flags` (`CLONE_VM | CLONE_VFORK | …`) and `SIGCHLD` as its exit
/// signal, in the cgroup whose directory `cgroup` is open (`None`: the
/// parent's). With `cleared` (and `CLONE_VM`), the kernel writes 0 to
/// that word and wakes its futex when the child leaves the shared memory:
/// at its `execve` or its exit (`CLONE_CHILD_CLEARTID`). Returns the
/// child's PID (after it exec'd or exited, with `CLONE_VFORK`).
///
/// # Safety
///
/// As `clone(2)`: `entry` must never return into the parent's frames
/// (it runs on its own stack, and must only exit or exec), the stack must
/// be unused, and everything `arg` points to, and `cleared`, must outlive
/// the child's use of it.
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe fn clone_into(
    flags: c_int,
    cgroup: Option<RawFd>,
    cleared: Option<&AtomicU32>,
    stack: *mut c_void,
    size: usize,
    entry: extern "C" fn(*mut c_void) -> c_int,
    arg: *mut c_void,
) -> Result<libc::pid_t, NotHere> {
    let clear = cleared.map_or(0, |_| libc::CLONE_CHILD_CLEARTID as u32 as u64);
    let args = CloneArgs {
        flags: (flags as u32 as u64 & !0xff) | cgroup.map_or(0, |_| CLONE_INTO_CGROUP) | clear,
        pidfd: 0,
        child_tid: cleared.map_or(0, |w| w.as_ptr() as u64),
        parent_tid: 0,
        exit_signal: libc::SIGCHLD as u64,
        stack: stack as u64,
        stack_size: size as u64,
        tls: 0,
        set_tid: 0,
        set_tid_size: 0,
        cgroup: cgroup.map_or(0, |fd| fd as u64),
    };
    let ret: libc::c_long;
    // The child returns from the system call with 0 in rax, the registers
    // it had, and rsp at the top of its stack (16-byte aligned: the stack
    // is whole pages); it calls `entry(arg)` there and exits with what it
    // returns. The parent gets the PID or -errno and goes on.
    std::arch::asm!(
        "syscall",
        "test rax, rax",
        "jnz 2f",
        "xor ebp, ebp",
        "mov rdi, r12",
        "call r13",
        "mov edi, eax",
        "mov eax, {exit}",
        "syscall",
        "ud2",
        "2:",
        exit = const libc::SYS_exit,
        inlateout("rax") libc::SYS_clone3 => ret,
        in("rdi") std::ptr::addr_of!(args),
        in("rsi") std::mem::size_of::<CloneArgs>(),
        in("r12") arg,
        in("r13") entry,
        lateout("rcx") _,
        lateout("r11") _,
        options(nostack),
    );
    if ret >= 0 {
        return Ok(ret as libc::pid_t);
    }
    match -ret as c_int {
        // No clone3, or no CLONE_INTO_CGROUP (an older kernel refuses the
        // larger struct or the flag).
        libc::ENOSYS | libc::E2BIG => Err(NotHere::Unsupported),
        e => Err(NotHere::Failed(e)),
    }
}

/// Elsewhere: always [`NotHere::Unsupported`].
///
/// # Safety
///
/// Nothing is called.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) unsafe fn clone_into(
    _flags: c_int,
    _cgroup: Option<RawFd>,
    _cleared: Option<&AtomicU32>,
    _stack: *mut c_void,
    _size: usize,
    _entry: extern "C" fn(*mut c_void) -> c_int,
    _arg: *mut c_void,
) -> Result<libc::pid_t, NotHere> {
    Err(NotHere::Unsupported)
}
