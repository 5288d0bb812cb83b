//! The mount calls of the spawned child, with the new mount API (Linux
//! 5.12): a tree copied (`open_tree`) or made (a detached tmpfs) and
//! attached (`move_mount`), attributes set on a whole tree at once
//! (`mount_setattr`), a path covered so that it cannot be reached. Each
//! is a raw system call: the child allocates nothing.

use crate::sys::kernel::{check, errno, k, MountAttr};
use std::ffi::{c_char, c_int, c_ulong, c_void, CStr};

pub(crate) unsafe fn mount(
    src: *const c_char,
    target: *const c_char,
    fstype: *const c_char,
    flags: c_ulong,
    data: *const c_void,
) -> Result<(), c_int> {
    check(libc::syscall(
        libc::SYS_mount,
        src,
        target,
        fstype,
        flags,
        data,
    ))
    .map(drop)
}

pub(crate) unsafe fn bind_self(path: &CStr) -> Result<(), c_int> {
    mount(
        path.as_ptr(),
        path.as_ptr(),
        std::ptr::null(),
        libc::MS_BIND | libc::MS_REC,
        std::ptr::null(),
    )
}

pub(crate) unsafe fn set_attr(
    dfd: c_int,
    path: *const c_char,
    flags: u32,
    set: u64,
) -> Result<(), c_int> {
    change_attr(dfd, path, flags, set, 0)
}

pub(crate) unsafe fn change_attr(
    dfd: c_int,
    path: *const c_char,
    flags: u32,
    set: u64,
    clr: u64,
) -> Result<(), c_int> {
    let attr = MountAttr {
        set,
        clr,
        propagation: 0,
        userns_fd: 0,
    };
    check(libc::syscall(
        libc::SYS_mount_setattr,
        dfd,
        path,
        flags,
        std::ptr::addr_of!(attr),
        std::mem::size_of::<MountAttr>(),
    ))
    .map(drop)
}

pub(crate) unsafe fn open_tree(
    dfd: c_int,
    path: *const c_char,
    flags: u32,
) -> Result<c_int, c_int> {
    check(libc::syscall(libc::SYS_open_tree, dfd, path, flags)).map(|fd| fd as c_int)
}

/// Attaches the detached tree `fd` at `to_path` (relative to `to_dfd`).
pub(crate) unsafe fn move_mount(
    fd: c_int,
    empty: *const c_char,
    to_dfd: c_int,
    to_path: *const c_char,
) -> Result<(), c_int> {
    check(libc::syscall(
        libc::SYS_move_mount,
        fd,
        empty,
        to_dfd,
        to_path,
        k::MOVE_MOUNT_F_EMPTY_PATH,
    ))
    .map(drop)
}

/// `MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC`.
pub(crate) const MOUNT_ATTR_NOSUID_NODEV_NOEXEC: u64 =
    k::MOUNT_ATTR_NOSUID | k::MOUNT_ATTR_NODEV | k::MOUNT_ATTR_NOEXEC;

/// `MOUNT_ATTR_RDONLY`.
pub(crate) const MOUNT_ATTR_RDONLY: u64 = k::MOUNT_ATTR_RDONLY;

/// Sets `attrs` on the mount `fd` itself (a detached one too).
pub(crate) unsafe fn set_empty_path_attr(fd: c_int, attrs: u64) -> Result<(), c_int> {
    set_attr(fd, c"".as_ptr(), libc::AT_EMPTY_PATH as u32, attrs)
}

/// Attaches the detached tree `fd` at `path`.
pub(crate) unsafe fn attach(fd: c_int, path: &CStr) -> Result<(), c_int> {
    move_mount(fd, c"".as_ptr(), libc::AT_FDCWD, path.as_ptr())
}

/// A new detached tmpfs of mode `mode` with the mount attributes `attrs`,
/// as a mount descriptor.
pub(crate) unsafe fn detached_tmpfs(mode: &CStr, attrs: u64) -> Result<c_int, c_int> {
    let fs = check(libc::syscall(
        libc::SYS_fsopen,
        c"tmpfs".as_ptr(),
        k::FSOPEN_CLOEXEC,
    ))? as c_int;
    let r = check(libc::syscall(
        libc::SYS_fsconfig,
        fs,
        k::FSCONFIG_SET_STRING,
        c"mode".as_ptr(),
        mode.as_ptr(),
        0,
    ))
    .and_then(|_| {
        check(libc::syscall(
            libc::SYS_fsconfig,
            fs,
            k::FSCONFIG_CMD_CREATE,
            std::ptr::null::<c_char>(),
            std::ptr::null::<c_char>(),
            0,
        ))
    })
    .and_then(|_| {
        check(libc::syscall(
            libc::SYS_fsmount,
            fs,
            k::FSMOUNT_CLOEXEC,
            attrs,
        ))
    });
    libc::close(fs);
    r.map(|fd| fd as c_int)
}

/// Covers `path`: a directory with an empty tmpfs, anything else with a
/// bind of `file`, the init's empty mode-000 file.
pub(crate) unsafe fn inaccessible(path: &CStr, file: &CStr) -> Result<(), c_int> {
    let mut st: libc::stat = std::mem::zeroed();
    if libc::stat(path.as_ptr(), &mut st) < 0 {
        return Err(errno());
    }
    if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
        return mount(
            c"tmpfs".as_ptr(),
            path.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            c"mode=000".as_ptr().cast(),
        );
    }
    mount(
        file.as_ptr(),
        path.as_ptr(),
        std::ptr::null(),
        libc::MS_BIND,
        std::ptr::null(),
    )?;
    let ro =
        k::MOUNT_ATTR_RDONLY | k::MOUNT_ATTR_NOSUID | k::MOUNT_ATTR_NODEV | k::MOUNT_ATTR_NOEXEC;
    set_attr(libc::AT_FDCWD, path.as_ptr(), 0, ro)
}

/// A detached copy of the tree at `source` (its own mount only when not
/// `recursive`), as a mount descriptor.
pub(crate) unsafe fn clone_tree(source: &CStr, recursive: bool) -> Result<c_int, c_int> {
    let mut flags = k::OPEN_TREE_CLONE | k::OPEN_TREE_CLOEXEC;
    if recursive {
        flags |= k::AT_RECURSIVE;
    }
    open_tree(libc::AT_FDCWD, source.as_ptr(), flags)
}

/// Attaches the detached tree `fd` at `target`, read-only with everything
/// below it when asked (set on the detached tree, so that it is never
/// writable where the service sees it). With `mount_point`, a missing
/// `target` is made first, as systemd makes a bind's mount point: these
/// parents (outermost first, mode 0755), then a directory (0755) or an
/// empty file (0644), as the tree's root is.
pub(crate) unsafe fn attach_tree(
    fd: c_int,
    target: &CStr,
    read_only: bool,
    mount_point: Option<&[std::ffi::CString]>,
) -> Result<(), c_int> {
    if read_only {
        set_attr(
            fd,
            c"".as_ptr(),
            libc::AT_EMPTY_PATH as u32 | k::AT_RECURSIVE,
            k::MOUNT_ATTR_RDONLY,
        )?;
    }
    match attach(fd, target) {
        Err(libc::ENOENT) => {}
        r => return r,
    }
    let Some(parents) = mount_point else {
        return Err(libc::ENOENT);
    };
    for p in parents {
        if libc::mkdir(p.as_ptr(), 0o755) < 0 && errno() != libc::EEXIST {
            return Err(errno());
        }
    }
    let mut st: libc::stat = std::mem::zeroed();
    check(libc::fstat(fd, &mut st).into())?;
    if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
        if libc::mkdir(target.as_ptr(), 0o755) < 0 && errno() != libc::EEXIST {
            return Err(errno());
        }
    } else {
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC | libc::O_NOCTTY;
        let f = libc::open(target.as_ptr(), flags, 0o644 as libc::c_uint);
        if f < 0 {
            return Err(errno());
        }
        libc::close(f);
    }
    attach(fd, target)
}
