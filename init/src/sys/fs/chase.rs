//! A small file read with its path's links followed by
//! [`flotilla_units::chase`] on descriptors (a pidfile:
//! [`crate::sys::Sys::read_file_chased`]): each name opened `O_PATH|O_NOFOLLOW`
//! below the descriptor of its directory, so the owners the walk checks
//! and the file read at its end are the same objects, whatever is renamed
//! meanwhile; the file is opened for reading from its `O_PATH`
//! descriptor through `/proc/self/fd`, as systemd's
//! `service_load_pid_file` does.

use std::ffi::OsString;
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use flotilla_units::chase::{self, ChaseError, Kind, Node, Tree, Unsafe};
use nix::fcntl::OFlag;
use nix::sys::stat::{fstat, Mode, SFlag};

use crate::sys::{Errno, Os, SysError};

/// A file read through [`crate::sys::Sys::read_file_chased`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChasedFile {
    /// Its contents.
    pub bytes: Vec<u8>,
    /// Its owner (`st_uid`).
    pub owner: u32,
    /// The first unsafe step on the way to it, if any.
    pub unsafe_step: Option<Unsafe>,
}

/// The real file system as the walk's [`Tree`].
struct Descriptors;

/// `fstat` of an opened node, as the walk sees it.
fn node(fd: OwnedFd) -> Result<Node<OwnedFd>, Errno> {
    let st = fstat(&fd)?;
    let kind = match SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits()) {
        SFlag::S_IFDIR => Kind::Dir,
        SFlag::S_IFLNK => Kind::Link,
        _ => Kind::Other,
    };
    Ok(Node {
        handle: fd,
        uid: st.st_uid,
        kind,
    })
}

impl Tree for Descriptors {
    type Handle = OwnedFd;
    type Error = Errno;
    fn root(&mut self) -> Result<Node<OwnedFd>, Errno> {
        let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        node(nix::fcntl::open("/", flags, Mode::empty())?)
    }
    fn child(&mut self, dir: &OwnedFd, name: &OsString) -> Result<Node<OwnedFd>, Errno> {
        let flags = OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        node(nix::fcntl::openat(
            dir,
            name.as_os_str(),
            flags,
            Mode::empty(),
        )?)
    }
    fn read_link(&mut self, dir: &OwnedFd, name: &OsString) -> Result<PathBuf, Errno> {
        Ok(PathBuf::from(nix::fcntl::readlinkat(
            dir,
            name.as_os_str(),
        )?))
    }
}

/// The errno a walk's failure stands for.
pub(in crate::sys) fn errno(e: ChaseError<Errno>) -> Errno {
    match e {
        ChaseError::Tree(e) => e,
        ChaseError::TooManyLinks => Errno::ELOOP,
        ChaseError::EmptyLink(_) | ChaseError::Relative => Errno::EINVAL,
        ChaseError::NotADirectory(_) => Errno::ENOTDIR,
    }
}

/// Reads the regular file at `path`, its links followed and checked; at
/// most `max` bytes, as [`crate::sys::Sys::read_file_limited`].
pub(in crate::sys) fn read(path: &Path, max: usize) -> Result<ChasedFile, SysError> {
    let read_err = |errno: Errno| SysError::Read {
        path: path.to_owned(),
        errno: Os(errno),
    };
    let chased = chase::chase(&mut Descriptors, path).map_err(|e| read_err(errno(e)))?;
    let owner = chased.node.uid;
    // O_NONBLOCK: a FIFO at the end must not wait for a writer.
    let flags = OFlag::O_RDONLY | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK | OFlag::O_NOCTTY;
    let reopen = format!("/proc/self/fd/{}", chased.node.handle.as_raw_fd());
    let fd = nix::fcntl::open(reopen.as_str(), flags, Mode::empty()).map_err(read_err)?;
    Ok(ChasedFile {
        bytes: read_regular(fd, path, max)?,
        owner,
        unsafe_step: chased.unsafe_step,
    })
}

/// Reads the whole regular file opened as `fd` (named `path` in errors):
/// anything but a regular file is refused, and so is one longer than
/// `max` bytes.
pub(in crate::sys) fn read_regular(
    fd: OwnedFd,
    path: &Path,
    max: usize,
) -> Result<Vec<u8>, SysError> {
    let read_err = |errno: Errno| SysError::Read {
        path: path.to_owned(),
        errno: Os(errno),
    };
    let st = fstat(&fd).map_err(read_err)?;
    let kind = SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits());
    if kind != SFlag::S_IFREG {
        return Err(SysError::NotRegular {
            path: path.to_owned(),
            directory: kind == SFlag::S_IFDIR,
        });
    }
    // procfs files report size 0; regular files their real size.
    let hint = usize::try_from(st.st_size).unwrap_or(0).min(max);
    let mut buf = Vec::with_capacity(hint.saturating_add(1));
    let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    std::fs::File::from(fd)
        .take(limit)
        .read_to_end(&mut buf)
        .map_err(|e| read_err(Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO))))?;
    if buf.len() > max {
        return Err(SysError::TooLarge {
            path: path.to_owned(),
            max,
        });
    }
    Ok(buf)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// Test 20's game on the real file system: a directory and a link
    /// owned by an unprivileged user, pointing up into root's files.
    /// Runs as root (the suite's machines), which can chown.
    #[test]
    fn a_users_link_into_roots_files_is_unsafe() {
        assert!(nix::unistd::geteuid().is_root(), "runs as root");
        let dir = tempfile::tempdir().unwrap();
        let root_dir = dir.path().join("mainpidsh");
        let user_dir = dir.path().join("mainpidsh3");
        std::fs::create_dir(&root_dir).unwrap();
        std::fs::create_dir(&user_dir).unwrap();
        std::fs::write(root_dir.join("pid"), "4711\n").unwrap();
        std::fs::write(user_dir.join("own"), "4712\n").unwrap();
        symlink("../mainpidsh/pid", user_dir.join("pid")).unwrap();
        symlink("own", user_dir.join("mine")).unwrap();
        for p in ["", "own", "pid", "mine"] {
            let p = user_dir.join(p);
            nix::unistd::fchownat(
                nix::fcntl::AT_FDCWD,
                &p,
                Some(61184.into()),
                Some(61184.into()),
                nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
            )
            .unwrap();
        }

        let root_file = read(&root_dir.join("pid"), 64).unwrap();
        assert_eq!(root_file.bytes, b"4711\n");
        assert_eq!((root_file.owner, root_file.unsafe_step), (0, None));

        let game = read(&user_dir.join("pid"), 64).unwrap();
        assert_eq!(game.bytes, b"4711\n", "the link is followed");
        assert_eq!(game.owner, 0);
        let step = game.unsafe_step.unwrap();
        assert_eq!((step.from, step.from_uid), (user_dir.join("pid"), 61184));
        assert_eq!((step.to, step.to_uid), (dir.path().to_owned(), 0));

        let own = read(&user_dir.join("mine"), 64).unwrap();
        assert_eq!((own.bytes.as_slice(), own.owner), (&b"4712\n"[..], 61184));
        assert_eq!(own.unsafe_step, None, "the user's own link to its own file");
    }

    #[test]
    fn what_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, [b'1'; 100]).unwrap();
        assert!(matches!(
            read(&big, 64),
            Err(SysError::TooLarge { max: 64, .. })
        ));
        assert!(matches!(
            read(dir.path(), 64),
            Err(SysError::NotRegular {
                directory: true,
                ..
            })
        ));
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).unwrap();
        assert!(matches!(read(&fifo, 64), Err(SysError::NotRegular { .. })));
        symlink("loop", dir.path().join("loop")).unwrap();
        assert_eq!(
            read(&dir.path().join("loop"), 64).unwrap_err(),
            SysError::Read {
                path: dir.path().join("loop"),
                errno: Os(Errno::ELOOP)
            }
        );
        assert_eq!(
            read(&dir.path().join("none"), 64).unwrap_err(),
            SysError::Read {
                path: dir.path().join("none"),
                errno: Os(Errno::ENOENT)
            }
        );
    }
}
