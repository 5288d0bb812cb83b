//! `PrivateDevices=`: the child's new `/dev`, a tmpfs holding copies of
//! the basic device nodes of the host's, the host's `pts`, `shm`, `mqueue`
//! and `hugepages` (snapshots taken before anything changed), and the
//! `fd` and standard stream links (`sandbox.rs` says how the mount API is
//! used).

use std::ffi::{c_int, CStr};
use std::sync::atomic::Ordering;

use crate::sys::kernel::k;
use crate::sys::mount_api::{detached_tmpfs, move_mount, open_tree};
use crate::sys::steps::{Op, Step};

fn errno() -> c_int {
    nix::errno::Errno::last_raw()
}

/// The device nodes of a private `/dev`, bound from the host's.
const DEVICES: [(&CStr, &CStr); 7] = [
    (c"null", c"/dev/null"),
    (c"zero", c"/dev/zero"),
    (c"full", c"/dev/full"),
    (c"random", c"/dev/random"),
    (c"urandom", c"/dev/urandom"),
    (c"tty", c"/dev/tty"),
    (c"ptmx", c"/dev/ptmx"),
];

/// Links in a private `/dev`.
const LINKS: [(&CStr, &CStr); 4] = [
    (c"fd", c"/proc/self/fd"),
    (c"stdin", c"/proc/self/fd/0"),
    (c"stdout", c"/proc/self/fd/1"),
    (c"stderr", c"/proc/self/fd/2"),
];

pub(crate) unsafe fn private_dev(
    dirs: &[(&'static CStr, usize)],
    steps: &[Step],
) -> Result<(), c_int> {
    // Copies of the device nodes first: once the new /dev is attached, the
    // host's are out of reach.
    let mut nodes = [-1; DEVICES.len()];
    let mut r = Ok(());
    for ((_, source), fd) in DEVICES.iter().zip(nodes.iter_mut()) {
        match open_tree(
            libc::AT_FDCWD,
            source.as_ptr(),
            k::OPEN_TREE_CLONE | k::OPEN_TREE_CLOEXEC,
        ) {
            Ok(t) => *fd = t,
            // Not every host has every device (a container without a tty).
            Err(libc::ENOENT | libc::ENXIO) => {}
            Err(e) => {
                r = Err(e);
                break;
            }
        }
    }
    let r = r.and_then(|()| {
        let dev = detached_tmpfs(c"0755", k::MOUNT_ATTR_NOSUID | k::MOUNT_ATTR_NOEXEC)?;
        let r = move_mount(dev, c"".as_ptr(), libc::AT_FDCWD, c"/dev".as_ptr())
            .and_then(|()| fill_dev(dev, &nodes, dirs, steps));
        libc::close(dev);
        r
    });
    for fd in nodes {
        if fd >= 0 {
            libc::close(fd);
        }
    }
    r
}

/// Puts the device copies `nodes` (in [`DEVICES`] order; -1 for none), the
/// snapshots of `dirs` and the links into the new `/dev`, attached and
/// open as `dev`.
unsafe fn fill_dev(
    dev: c_int,
    nodes: &[c_int],
    dirs: &[(&'static CStr, usize)],
    steps: &[Step],
) -> Result<(), c_int> {
    for (&(name, _), &t) in DEVICES.iter().zip(nodes) {
        if t < 0 {
            continue;
        }
        let f = libc::openat(
            dev,
            name.as_ptr(),
            libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
            0o666,
        );
        if f < 0 {
            return Err(errno());
        }
        libc::close(f);
        move_mount(t, c"".as_ptr(), dev, name.as_ptr())?;
    }
    for &(name, snapshot) in dirs {
        let fd = match steps.get(snapshot).map(|s| &s.op) {
            Some(Op::Snapshot { fd, .. }) => fd.swap(-1, Ordering::Relaxed),
            _ => -1,
        };
        if fd < 0 {
            continue;
        }
        let r = if libc::mkdirat(dev, name.as_ptr(), 0o755) < 0 {
            Err(errno())
        } else {
            move_mount(fd, c"".as_ptr(), dev, name.as_ptr())
        };
        libc::close(fd);
        r?;
    }
    for (name, target) in LINKS {
        if libc::symlinkat(target.as_ptr(), dev, name.as_ptr()) < 0 {
            return Err(errno());
        }
    }
    Ok(())
}
