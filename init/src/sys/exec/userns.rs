//! `PrivateUsers=`: the child enters a user namespace of its own in which
//! root and the unit's user and group are mapped to themselves and every
//! other ID is unmapped (seen as `nobody`, 65534), as systemd does.
//!
//! # How
//!
//! A process can map other IDs than its own only with `CAP_SETUID` (and
//! `CAP_SETGID`) in the parent namespace, which it lacks once it is in the
//! new one. So, as systemd does, the child first starts a helper that stays
//! in the init's namespace (`clone(CLONE_VM)` on a stack in the child's own
//! frame: no copy of the init's memory), then unshares the user namespace
//! and tells the helper through a pipe; the helper writes `deny` to the
//! child's `setgroups` and its `gid_map` and `uid_map` and exits with 0 or
//! the `errno` of the write that failed, which the child waits for.
//!
//! # Order
//!
//! systemd as the system manager (which holds `CAP_SYS_ADMIN`) sets the user
//! namespace up after the other namespaces, and so does the child (the last
//! step before its identity change): the mount, network and UTS namespaces
//! stay owned by the init's user namespace, the mounts are made with the
//! init's privileges, and the unit, root in its namespace only, can change
//! none of them. The supplementary groups are set before (`spawn/child.rs`):
//! `setgroups(2)` is denied in the new namespace.

use std::ffi::{c_int, c_void};

/// The maps of a unit: root, and its user and group if not root.
pub(crate) fn maps(uid: Option<u32>, gid: Option<u32>) -> (Vec<u8>, Vec<u8>) {
    let map = |id: Option<u32>| {
        let mut m = String::from("0 0 1\n");
        if let Some(id) = id.filter(|&i| i != 0) {
            m.push_str(&format!("{id} {id} 1\n"));
        }
        m.into_bytes()
    };
    (map(uid), map(gid))
}

/// What the helper is given.
struct Helper<'a> {
    /// The read end of the pipe: one byte once the child has unshared.
    ready: c_int,
    /// The child's `/proc/PID` directory.
    proc_dir: c_int,
    uid_map: &'a [u8],
    gid_map: &'a [u8],
}

fn errno() -> c_int {
    nix::errno::Errno::last_raw()
}

/// Enters a new user namespace with `uid_map` and `gid_map`.
///
/// # Safety
///
/// In a spawned child (`sandbox.rs`): plain system calls only.
pub(crate) unsafe fn enter(uid_map: &[u8], gid_map: &[u8]) -> Result<(), c_int> {
    let mut pipe = [-1; 2];
    if libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) < 0 {
        return Err(errno());
    }
    let proc_dir = libc::open(
        c"/proc/self".as_ptr(),
        libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
    );
    if proc_dir < 0 {
        let e = errno();
        libc::close(pipe[0]);
        libc::close(pipe[1]);
        return Err(e);
    }
    let helper = Helper {
        ready: pipe[0],
        proc_dir,
        uid_map,
        gid_map,
    };
    // The helper's stack, 16-byte aligned; this frame outlives the helper,
    // which is waited for below.
    let mut stack = [0u128; 1024];
    let top = stack
        .as_mut_ptr()
        .wrapping_add(stack.len())
        .cast::<c_void>();
    // No exit signal: the child's handlers are still the init's.
    let pid = libc::clone(
        helper_entry,
        top,
        libc::CLONE_VM,
        std::ptr::addr_of!(helper).cast_mut().cast(),
    );
    let failed = pid < 0
        || libc::unshare(libc::CLONE_NEWUSER) < 0
        || libc::write(pipe[1], b"1".as_ptr().cast(), 1) != 1;
    let r = if failed { Err(errno()) } else { Ok(()) };
    // Closed: a helper still waiting reads the end and exits.
    libc::close(pipe[1]);
    let mut status = 0;
    let waited = pid > 0 && {
        let mut w = libc::waitpid(pid, &mut status, libc::__WALL);
        while w < 0 && errno() == libc::EINTR {
            w = libc::waitpid(pid, &mut status, libc::__WALL);
        }
        w == pid
    };
    libc::close(pipe[0]);
    libc::close(proc_dir);
    r?;
    match (waited, libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
        (true, true, 0) => Ok(()),
        (true, true, e) => Err(e),
        _ => Err(libc::ECHILD),
    }
}

extern "C" fn helper_entry(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the child's `Helper`, alive until the child has
    // waited for this helper.
    unsafe { helper(&*arg.cast::<Helper<'_>>()) }
}

/// Waits for the child to unshare, then writes its maps; exits with 0 or
/// the errno of the write that failed.
unsafe fn helper(h: &Helper<'_>) -> c_int {
    let mut byte = 0u8;
    let mut n = libc::read(h.ready, std::ptr::addr_of_mut!(byte).cast(), 1);
    while n < 0 && errno() == libc::EINTR {
        n = libc::read(h.ready, std::ptr::addr_of_mut!(byte).cast(), 1);
    }
    if n != 1 {
        // The child could not unshare: it says why itself.
        return 0;
    }
    let files: [(&std::ffi::CStr, &[u8]); 3] = [
        (c"setgroups", b"deny"),
        (c"gid_map", h.gid_map),
        (c"uid_map", h.uid_map),
    ];
    for (name, data) in files {
        let fd = libc::openat(h.proc_dir, name.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return errno();
        }
        let w = libc::write(fd, data.as_ptr().cast(), data.len());
        let e = errno();
        libc::close(fd);
        if w < 0 {
            return e;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_name_root_and_the_units_ids() {
        assert_eq!(
            maps(Some(998), Some(997)),
            (
                b"0 0 1\n998 998 1\n".to_vec(),
                b"0 0 1\n997 997 1\n".to_vec()
            )
        );
        assert_eq!(
            maps(None, Some(0)),
            (b"0 0 1\n".to_vec(), b"0 0 1\n".to_vec())
        );
    }
}
