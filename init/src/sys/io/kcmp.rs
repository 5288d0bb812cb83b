//! Whether two descriptors of the init are the same open file, which
//! the descriptor store asks so as not to keep one twice
//! (`runtime/fdstore.rs`): a service handed back its stored descriptors
//! often stores them again. Read-only: nothing is made or changed.

use std::os::fd::{AsRawFd, BorrowedFd};

/// `kcmp(2)`'s `KCMP_FILE`.
const KCMP_FILE: libc::c_long = 0;

/// Whether `a` and `b` refer to the same open file description:
/// `kcmp(2)`, and where the kernel or a filter refuses it the same inode
/// opened for the same access (the two ends of a pipe share an inode, so
/// the access mode tells them apart).
pub fn same_file(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
    let pid = std::process::id() as libc::pid_t;
    // SAFETY: kcmp reads only; both descriptors are open for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_kcmp,
            pid,
            pid,
            KCMP_FILE,
            a.as_raw_fd(),
            b.as_raw_fd(),
        )
    };
    if r >= 0 {
        return r == 0;
    }
    let key = |fd: BorrowedFd<'_>| {
        let st = nix::sys::stat::fstat(fd).ok()?;
        let fl = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_GETFL).ok()?;
        Some((st.st_dev, st.st_ino, fl & libc::O_ACCMODE))
    };
    match (key(a), key(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn tells_copies_from_other_files() {
        let (r, w) = nix::unistd::pipe().unwrap();
        let r2 = r.try_clone().unwrap();
        assert!(same_file(r.as_fd(), r2.as_fd()));
        assert!(!same_file(r.as_fd(), w.as_fd()));
        let (r3, _w3) = nix::unistd::pipe().unwrap();
        assert!(!same_file(r.as_fd(), r3.as_fd()));
    }
}
