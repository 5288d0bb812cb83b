//! The unix sockets the init binds in the file system, on the kernel: the
//! control socket (a stream listener) and the notify sockets (datagrams
//! with the sender's credentials), and accepting a control connection with
//! its peer's credentials. [`crate::sys::real::RealSys`] calls these.
//!
//! A socket file is replaced only when it is a socket (a stale one from an
//! earlier run), made world-writable (anyone may connect; the init checks
//! who by credentials), and removed later only while it is still the one
//! bound here ([`FileId`]), so an init never removes a newer init's socket.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;

use nix::sys::socket::{
    bind, getsockopt, setsockopt, socket, sockopt, AddressFamily, SockFlag, SockType, UnixAddr,
};

use crate::sys::{Accepted, Errno, FileId, Os, SysError};

/// The longest path a unix socket address holds (`sun_path` less its NUL).
pub const MAX_SOCKET_PATH: usize = 107;

/// Checks a socket path before anything is done with it: no NUL byte,
/// short enough for `sun_path`.
pub fn check_socket_path(path: &Path) -> Result<(), SysError> {
    let bad = |reason: String| SysError::BadSocketPath {
        path: path.to_owned(),
        reason,
    };
    let bytes = path.as_os_str().as_bytes();
    if bytes.len() > MAX_SOCKET_PATH {
        return Err(bad(format!("longer than {MAX_SOCKET_PATH} bytes")));
    }
    if bytes.contains(&0) {
        return Err(bad("contains a NUL byte".into()));
    }
    Ok(())
}

fn socket_error<'a>(path: &'a Path, op: &'static str) -> impl Fn(Errno) -> SysError + 'a {
    move |errno| SysError::Socket {
        path: path.to_owned(),
        op,
        errno: Os(errno),
    }
}

fn io_errno(e: &std::io::Error) -> Errno {
    Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO))
}

/// Removes a stale socket file at `path`; refuses anything else there.
fn clear_path(path: &Path) -> Result<(), SysError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_socket() => std::fs::remove_file(path)
            .map_err(|e| socket_error(path, "unlink stale socket")(io_errno(&e))),
        Ok(_) => Err(SysError::NotASocket(path.to_owned())),
        Err(_) => Ok(()),
    }
}

/// Mode 0666, and the file's identity.
fn publish(path: &Path) -> Result<FileId, SysError> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666))
        .map_err(|e| socket_error(path, "chmod")(io_errno(&e)))?;
    let meta =
        std::fs::symlink_metadata(path).map_err(|e| socket_error(path, "stat")(io_errno(&e)))?;
    Ok(FileId {
        dev: meta.dev(),
        ino: meta.ino(),
    })
}

/// The control socket: a non-blocking stream listener at `path`.
pub fn bind_listener(path: &Path) -> Result<(UnixListener, FileId), SysError> {
    check_socket_path(path)?;
    clear_path(path)?;
    let listener =
        UnixListener::bind(path).map_err(|e| socket_error(path, "bind")(io_errno(&e)))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| socket_error(path, "set non-blocking")(io_errno(&e)))?;
    let id = publish(path)?;
    Ok((listener, id))
}

/// A notify socket: a non-blocking datagram socket at `path` that receives
/// each sender's credentials (`SO_PASSCRED`).
/// Its path must be absolute: it is handed to children (`NOTIFY_SOCKET`)
/// that may run in another directory.
pub fn bind_datagram(path: &Path) -> Result<(OwnedFd, FileId), SysError> {
    check_socket_path(path)?;
    if !path.is_absolute() {
        return Err(SysError::BadSocketPath {
            path: path.to_owned(),
            reason: "not an absolute path".into(),
        });
    }
    clear_path(path)?;
    let err = |op| socket_error(path, op);
    let fd = socket(
        AddressFamily::Unix,
        SockType::Datagram,
        SockFlag::SOCK_CLOEXEC | SockFlag::SOCK_NONBLOCK,
        None,
    )
    .map_err(err("socket"))?;
    setsockopt(&fd, sockopt::PassCred, &true).map_err(err("setsockopt SO_PASSCRED"))?;
    let addr = UnixAddr::new(path).map_err(err("address"))?;
    bind(fd.as_raw_fd(), &addr).map_err(err("bind"))?;
    let id = publish(path)?;
    Ok((fd, id))
}

/// One pending connection, non-blocking, with its peer's credentials
/// (`SO_PEERCRED`; an unknown peer counts as nobody, uid `u32::MAX`).
pub fn accept(listener: &UnixListener) -> Result<Option<Accepted>, SysError> {
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                let _ = stream.set_nonblocking(true);
                let (uid, pid) = peer(&stream);
                return Ok(Some(Accepted { stream, uid, pid }));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(SysError::Call {
                    call: "accept".into(),
                    errno: Os(io_errno(&e)),
                })
            }
        }
    }
}

fn peer(stream: &UnixStream) -> (u32, i32) {
    match getsockopt(&stream.as_fd(), sockopt::PeerCredentials) {
        Ok(c) => (c.uid(), c.pid()),
        Err(_) => (u32::MAX, 0),
    }
}

/// Removes the socket file at `path` if it is still the one `id` names.
pub fn remove_socket(path: &Path, id: FileId) {
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if (m.dev(), m.ino()) == (id.dev, id.ino) {
            let _ = std::fs::remove_file(path);
        }
    }
}
