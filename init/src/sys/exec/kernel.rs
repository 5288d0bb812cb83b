//! The kernel's interface as the spawned child calls it where `libc`
//! lacks it: constants of `linux/mount.h`, `linux/capability.h` and
//! `linux/prctl.h`, the C structures of `mount_setattr(2)`, `capget(2)`,
//! `SIOCSIFFLAGS` and seccomp, and a failed call's `errno`.

use std::ffi::c_int;

/// Constants of `linux/mount.h`, `linux/capability.h`, `linux/prctl.h`.
pub(crate) mod k {
    use std::ffi::{c_int, c_uint, c_ulong};

    pub(crate) const OPEN_TREE_CLONE: u32 = 1;
    pub(crate) const OPEN_TREE_CLOEXEC: u32 = libc::O_CLOEXEC as u32;
    pub(crate) const AT_RECURSIVE: u32 = 0x8000;
    pub(crate) const MOVE_MOUNT_F_EMPTY_PATH: u32 = 0x4;
    pub(crate) const FSOPEN_CLOEXEC: u32 = 1;
    pub(crate) const FSCONFIG_SET_STRING: u32 = 1;
    pub(crate) const FSCONFIG_CMD_CREATE: u32 = 6;
    pub(crate) const FSMOUNT_CLOEXEC: u32 = 1;
    pub(crate) const MOUNT_ATTR_RDONLY: u64 = 0x1;
    pub(crate) const MOUNT_ATTR_NOSUID: u64 = 0x2;
    pub(crate) const MOUNT_ATTR_NODEV: u64 = 0x4;
    pub(crate) const MOUNT_ATTR_NOEXEC: u64 = 0x8;
    pub(crate) const PR_SET_KEEPCAPS: c_int = 8;
    pub(crate) const PR_CAPBSET_DROP: c_int = 24;
    pub(crate) const PR_SET_NO_NEW_PRIVS: c_int = 38;
    pub(crate) const PR_CAP_AMBIENT: c_int = 47;
    pub(crate) const PR_CAP_AMBIENT_RAISE: c_int = 2;
    pub(crate) const CAP_V3: u32 = 0x2008_0522;
    pub(crate) const SECCOMP_SET_MODE_FILTER: c_uint = 1;
    pub(crate) const SIOCGIFFLAGS: c_ulong = 0x8913;
    pub(crate) const SIOCSIFFLAGS: c_ulong = 0x8914;
}

/// `struct mount_attr`, version 0.
#[repr(C)]
pub(crate) struct MountAttr {
    pub(crate) set: u64,
    pub(crate) clr: u64,
    pub(crate) propagation: u64,
    pub(crate) userns_fd: u64,
}

/// `struct ifreq` with its flags member.
#[repr(C)]
pub(crate) struct IfReqFlags {
    pub(crate) name: [u8; 16],
    pub(crate) flags: i16,
    pub(crate) _pad: [u8; 22],
}

/// `struct __user_cap_header_struct`.
#[repr(C)]
pub(crate) struct CapHeader {
    pub(crate) version: u32,
    pub(crate) pid: c_int,
}

/// `struct __user_cap_data_struct`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct CapData {
    pub(crate) effective: u32,
    pub(crate) permitted: u32,
    pub(crate) inheritable: u32,
}

/// `struct sock_fprog`.
#[repr(C)]
pub(crate) struct SockFprog {
    pub(crate) len: u16,
    pub(crate) filter: *const seccompiler::sock_filter,
}

/// The errno of the last failed call.
pub(crate) fn errno() -> c_int {
    nix::errno::Errno::last_raw()
}

/// `r` as a result: `Err(errno)` when negative.
pub(crate) fn check(r: libc::c_long) -> Result<libc::c_long, c_int> {
    if r < 0 {
        Err(errno())
    } else {
        Ok(r)
    }
}
