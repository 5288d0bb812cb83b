//! The sockets and FIFOs of socket units, on the kernel: one `Listen…=`
//! line made into a descriptor the init holds and a service is handed
//! (`LISTEN_FDS`), as systemd makes it — non-blocking and close-on-exec
//! while the init holds it (the spawn moves it to 3 and up, which clears
//! close-on-exec, and hands it over blocking unless the service says
//! `NonBlocking=yes`, as systemd's `flags_fds()` does: `sys/procs/spawn/`),
//! `SO_REUSEADDR` on
//! IP sockets, a port alone on `[::]` taking IPv4 too, the socket
//! options of the unit, `listen(2)` for stream and sequential-packet
//! sockets. A unix socket in the file system gets its missing parents
//! (`DirectoryMode=`), replaces a stale socket file (anything else there
//! is refused), and gets `SocketMode=` and `SocketUser=`/`SocketGroup=`;
//! a FIFO is made (or an existing FIFO reused) and opened read-write, so
//! that it never reads end of file. [`crate::sys::real::RealSys`] calls these.

use std::ffi::CString;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, PermissionsExt};
use std::path::Path;

use flotilla_units::trigger::{
    BindIpv6Only, Listen, ListenAddr, ListenKind, Peer, SocketSettings, Timestamping,
};
use nix::sys::socket::{SockaddrLike, UnixAddr};

use crate::sys::{Errno, Os, SysError};

fn error(what: &Listen, op: &str) -> impl Fn(Errno) -> SysError {
    let call = format!("{op} {}", what.addr);
    move |errno| SysError::Call {
        call: call.clone(),
        errno: Os(errno),
    }
}

fn last(what: &Listen, op: &str) -> SysError {
    error(what, op)(Errno::last())
}

/// Makes the socket (or FIFO) of `l` with the unit's settings `s`;
/// `owner`: the uid and gid of `SocketUser=`/`SocketGroup=`, resolved.
pub fn open(
    l: &Listen,
    s: &SocketSettings,
    owner: Option<(u32, u32)>,
) -> Result<OwnedFd, SysError> {
    match &l.addr {
        ListenAddr::Path(p) if l.kind == ListenKind::Fifo => fifo(l, p, s, owner),
        ListenAddr::Path(p) if l.kind == ListenKind::Special => special(l, p, s),
        ListenAddr::Netlink { family, group } => netlink(l, *family, *group, s),
        ListenAddr::Inet { ip, port } => inet(l, *ip, *port, s),
        ListenAddr::Path(p) => {
            crate::sys::sockets::check_socket_path(p)?;
            make_parents(l, p, s.directory_mode)?;
            clear_socket_file(l, p)?;
            let addr = UnixAddr::new(p).map_err(error(l, "address"))?;
            let fd = unix(l, &addr, s)?;
            let perms = std::fs::Permissions::from_mode(s.socket_mode);
            std::fs::set_permissions(p, perms).map_err(|e| io(l, "chmod", &e))?;
            chown(l, p, owner)?;
            Ok(fd)
        }
        ListenAddr::Abstract(name) => {
            let addr = UnixAddr::new_abstract(name.as_bytes()).map_err(error(l, "address"))?;
            unix(l, &addr, s)
        }
    }
}

fn io(l: &Listen, op: &str, e: &std::io::Error) -> SysError {
    error(l, op)(Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO)))
}

fn sock_type(kind: ListenKind) -> libc::c_int {
    match kind {
        ListenKind::Datagram => libc::SOCK_DGRAM,
        ListenKind::SequentialPacket => libc::SOCK_SEQPACKET,
        ListenKind::Netlink => libc::SOCK_RAW,
        ListenKind::Stream | ListenKind::Fifo | ListenKind::Special => libc::SOCK_STREAM,
    }
}

fn new_socket(l: &Listen, family: libc::c_int) -> Result<OwnedFd, SysError> {
    new_socket_proto(l, family, 0)
}

fn new_socket_proto(l: &Listen, family: libc::c_int, proto: u32) -> Result<OwnedFd, SysError> {
    let ty = sock_type(l.kind) | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;
    // SAFETY: plain system call; the result is checked.
    let raw = unsafe { libc::socket(family, ty, proto as libc::c_int) };
    if raw < 0 {
        return Err(last(l, "socket"));
    }
    // SAFETY: a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

fn set_int(fd: &OwnedFd, level: libc::c_int, opt: libc::c_int, v: libc::c_int) -> bool {
    // SAFETY: the option's value is a c_int that outlives the call.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            opt,
            std::ptr::from_ref(&v).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ) == 0
    }
}

fn get_int(fd: &OwnedFd, level: libc::c_int, opt: libc::c_int) -> Option<libc::c_int> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: the value and its length outlive the call and match.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            opt,
            std::ptr::from_mut(&mut v).cast(),
            &mut len,
        )
    };
    (r == 0 && len as usize == std::mem::size_of::<libc::c_int>()).then_some(v)
}

/// `ReceiveBuffer=` or `SendBuffer=` as systemd applies it: `SO_RCVBUF`
/// (`SO_SNDBUF`), which the kernel caps at `net.core.rmem_max`
/// (`wmem_max`, 208 KiB by default), then, when the buffer read back is
/// not the size asked for (the kernel doubles it for its bookkeeping),
/// the `…FORCE` option, which a privileged caller may set past the cap.
/// udev's kernel socket asks for 128 MiB: the coldplug's events wait
/// there until udevd reads them, and a capped buffer drops what does not
/// fit.
fn buffer(
    l: &Listen,
    fd: &OwnedFd,
    opt: libc::c_int,
    force: libc::c_int,
    size: libc::c_int,
    name: &str,
) -> Result<(), SysError> {
    let enough = |fd: &OwnedFd| {
        get_int(fd, libc::SOL_SOCKET, opt)
            .is_some_and(|v| i64::from(v) == 2 * i64::from(size) || v == libc::c_int::MAX)
    };
    if !set_int(fd, libc::SOL_SOCKET, opt, size) {
        return Err(last(l, &format!("setsockopt {name}")));
    }
    if !enough(fd) {
        // Without the privilege (a container without CAP_NET_ADMIN) this
        // fails and the capped size stands: systemd warns and goes on.
        let _ = set_int(fd, libc::SOL_SOCKET, force, size);
    }
    Ok(())
}

/// The unit's socket options, for a socket of address family `family`.
fn options(
    l: &Listen,
    fd: &OwnedFd,
    s: &SocketSettings,
    family: libc::c_int,
) -> Result<(), SysError> {
    let mut want: Vec<(libc::c_int, libc::c_int, libc::c_int, &str)> = Vec::new();
    let ip = family == libc::AF_INET || family == libc::AF_INET6;
    if ip {
        want.push((libc::SOL_SOCKET, libc::SO_REUSEADDR, 1, "SO_REUSEADDR"));
        if s.free_bind {
            want.push((libc::SOL_IP, libc::IP_FREEBIND, 1, "FreeBind="));
        }
        if s.transparent {
            want.push((libc::SOL_IP, libc::IP_TRANSPARENT, 1, "Transparent="));
        }
        if s.no_delay && l.kind == ListenKind::Stream {
            want.push((libc::IPPROTO_TCP, libc::TCP_NODELAY, 1, "NoDelay="));
        }
    } else if s.pass_credentials {
        want.push((libc::SOL_SOCKET, libc::SO_PASSCRED, 1, "PassCredentials="));
    }
    if s.pass_security && !ip {
        want.push((libc::SOL_SOCKET, libc::SO_PASSSEC, 1, "PassSecurity="));
    }
    if s.pass_packet_info {
        let (level, opt) = match family {
            libc::AF_INET => (libc::SOL_IP, libc::IP_PKTINFO),
            libc::AF_INET6 => (libc::SOL_IPV6, libc::IPV6_RECVPKTINFO),
            libc::AF_NETLINK => (libc::SOL_NETLINK, libc::NETLINK_PKTINFO),
            // Unix sockets carry no packet information: nothing to ask.
            _ => (0, 0),
        };
        if opt != 0 {
            want.push((level, opt, 1, "PassPacketInfo="));
        }
    }
    match s.timestamping {
        Timestamping::Off => {}
        Timestamping::Us => want.push((libc::SOL_SOCKET, libc::SO_TIMESTAMP, 1, "Timestamping=")),
        Timestamping::Ns => want.push((libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1, "Timestamping=")),
    }
    if s.reuse_port {
        want.push((libc::SOL_SOCKET, libc::SO_REUSEPORT, 1, "ReusePort="));
    }
    if s.keep_alive {
        want.push((libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1, "KeepAlive="));
    }
    if s.broadcast {
        want.push((libc::SOL_SOCKET, libc::SO_BROADCAST, 1, "Broadcast="));
    }
    let clamp = |b: u64| libc::c_int::try_from(b).unwrap_or(libc::c_int::MAX);
    if let Some(m) = s.mark {
        want.push((libc::SOL_SOCKET, libc::SO_MARK, m as libc::c_int, "Mark="));
    }
    for (level, opt, v, name) in want {
        if !set_int(fd, level, opt, v) {
            return Err(last(l, &format!("setsockopt {name}")));
        }
    }
    if let Some(b) = s.receive_buffer {
        let (opt, force) = (libc::SO_RCVBUF, libc::SO_RCVBUFFORCE);
        buffer(l, fd, opt, force, clamp(b), "ReceiveBuffer=")?;
    }
    if let Some(b) = s.send_buffer {
        let (opt, force) = (libc::SO_SNDBUF, libc::SO_SNDBUFFORCE);
        buffer(l, fd, opt, force, clamp(b), "SendBuffer=")?;
    }
    if let Some(dev) = &s.bind_to_device {
        // SAFETY: the name's bytes outlive the call; the length is theirs.
        let r = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_BINDTODEVICE,
                dev.as_ptr().cast(),
                dev.len() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(last(l, "setsockopt BindToDevice="));
        }
    }
    Ok(())
}

/// An IP socket address as the kernel takes it.
fn sockaddr(a: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: all-zero is a valid `sockaddr_storage`.
    let mut st: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match a {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: `sockaddr_storage` is larger than and aligned for
            // every socket address.
            unsafe { std::ptr::write(std::ptr::from_mut(&mut st).cast(), sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: as above.
            unsafe { std::ptr::write(std::ptr::from_mut(&mut st).cast(), sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (st, len as libc::socklen_t)
}

fn bind_listen(
    l: &Listen,
    fd: &OwnedFd,
    (addr, len): (*const libc::sockaddr, libc::socklen_t),
    s: &SocketSettings,
) -> Result<(), SysError> {
    // SAFETY: `addr` is a valid socket address of `len` bytes.
    if unsafe { libc::bind(fd.as_raw_fd(), addr, len) } < 0 {
        return Err(last(l, "bind"));
    }
    if l.kind.connects() {
        let backlog = s.backlog.map_or(libc::SOMAXCONN, |b| {
            libc::c_int::try_from(b).unwrap_or(libc::c_int::MAX)
        });
        // SAFETY: plain system call on our socket.
        if unsafe { libc::listen(fd.as_raw_fd(), backlog) } < 0 {
            return Err(last(l, "listen"));
        }
    }
    Ok(())
}

fn inet(
    l: &Listen,
    ip: Option<IpAddr>,
    port: u16,
    s: &SocketSettings,
) -> Result<OwnedFd, SysError> {
    let any6 = SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::UNSPECIFIED, port, 0, 0));
    let addr = match ip {
        Some(ip) => SocketAddr::new(ip, port),
        None => any6,
    };
    let fd = match addr {
        SocketAddr::V4(_) => new_socket(l, libc::AF_INET)?,
        SocketAddr::V6(_) => match new_socket(l, libc::AF_INET6) {
            Ok(fd) => fd,
            // No IPv6 in this kernel: a port alone is every IPv4 address.
            Err(_) if ip.is_none() => {
                let v4 = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port));
                return inet_v4(l, v4, s);
            }
            Err(e) => return Err(e),
        },
    };
    let family = if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    options(l, &fd, s, family)?;
    match addr {
        SocketAddr::V4(_) => {
            let (st, len) = sockaddr(addr);
            bind_listen(l, &fd, (std::ptr::from_ref(&st).cast(), len), s)?;
        }
        SocketAddr::V6(_) => {
            let only = match (s.bind_ipv6_only, ip) {
                (BindIpv6Only::Ipv6Only, _) => Some(1),
                (BindIpv6Only::Both, _) | (BindIpv6Only::Default, None) => Some(0),
                (BindIpv6Only::Default, Some(_)) => None,
            };
            if let Some(v) = only {
                if !set_int(&fd, libc::IPPROTO_IPV6, libc::IPV6_V6ONLY, v) {
                    return Err(last(l, "setsockopt IPV6_V6ONLY"));
                }
            }
            let (st, len) = sockaddr(addr);
            bind_listen(l, &fd, (std::ptr::from_ref(&st).cast(), len), s)?;
        }
    }
    Ok(fd)
}

fn inet_v4(l: &Listen, addr: SocketAddr, s: &SocketSettings) -> Result<OwnedFd, SysError> {
    let fd = new_socket(l, libc::AF_INET)?;
    options(l, &fd, s, libc::AF_INET)?;
    let (st, len) = sockaddr(addr);
    bind_listen(l, &fd, (std::ptr::from_ref(&st).cast(), len), s)?;
    Ok(fd)
}

fn unix(l: &Listen, addr: &UnixAddr, s: &SocketSettings) -> Result<OwnedFd, SysError> {
    let fd = new_socket(l, libc::AF_UNIX)?;
    options(l, &fd, s, libc::AF_UNIX)?;
    bind_listen(l, &fd, (addr.as_ptr().cast(), addr.len()), s)?;
    Ok(fd)
}

/// The missing parents of `path`, with `mode`.
fn make_parents(l: &Listen, path: &Path, mode: u32) -> Result<(), SysError> {
    let Some(dir) = path.parent() else {
        return Ok(());
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(mode)
        .create(dir)
        .map_err(|e| io(l, "mkdir", &e))
}

/// A stale socket file at `path` is removed; anything else there is
/// refused.
fn clear_socket_file(l: &Listen, path: &Path) -> Result<(), SysError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_socket() => {
            std::fs::remove_file(path).map_err(|e| io(l, "unlink stale socket", &e))
        }
        Ok(_) => Err(SysError::NotASocket(path.to_owned())),
        Err(_) => Ok(()),
    }
}

fn chown(l: &Listen, path: &Path, owner: Option<(u32, u32)>) -> Result<(), SysError> {
    let Some((uid, gid)) = owner else {
        return Ok(());
    };
    std::os::unix::fs::chown(path, Some(uid), Some(gid)).map_err(|e| io(l, "chown", &e))
}

fn fifo(
    l: &Listen,
    path: &Path,
    s: &SocketSettings,
    owner: Option<(u32, u32)>,
) -> Result<OwnedFd, SysError> {
    make_parents(l, path, s.directory_mode)?;
    let c =
        CString::new(path.as_os_str().as_bytes()).map_err(|_| error(l, "mkfifo")(Errno::EINVAL))?;
    // SAFETY: a NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), s.socket_mode) } < 0 && Errno::last() != Errno::EEXIST {
        return Err(last(l, "mkfifo"));
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_fifo() => {}
        _ => return Err(error(l, "mkfifo")(Errno::EEXIST)),
    }
    // SAFETY: a NUL-terminated path; the result is checked.
    let raw = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY,
        )
    };
    if raw < 0 {
        return Err(last(l, "open"));
    }
    // SAFETY: a new descriptor nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let perms = std::fs::Permissions::from_mode(s.socket_mode);
    std::fs::set_permissions(path, perms).map_err(|e| io(l, "chmod", &e))?;
    chown(l, path, owner)?;
    Ok(fd)
}

/// `ListenNetlink=`: a raw netlink socket of protocol `family`, bound to
/// the multicast groups `group` (the kernel picks the port ID).
fn netlink(l: &Listen, family: u32, group: u32, s: &SocketSettings) -> Result<OwnedFd, SysError> {
    let fd = new_socket_proto(l, libc::AF_NETLINK, family)?;
    options(l, &fd, s, libc::AF_NETLINK)?;
    // SAFETY: all-zero is a valid sockaddr_nl.
    let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    addr.nl_groups = group;
    let len = std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
    bind_listen(l, &fd, (std::ptr::from_ref(&addr).cast(), len), s)?;
    Ok(fd)
}

/// `ListenSpecial=`: the file opened as systemd opens it, read-only (read
/// and write with `Writable=`), never becoming the init's terminal.
fn special(l: &Listen, path: &Path, s: &SocketSettings) -> Result<OwnedFd, SysError> {
    let c =
        CString::new(path.as_os_str().as_bytes()).map_err(|_| error(l, "open")(Errno::EINVAL))?;
    let access = if s.writable {
        libc::O_RDWR
    } else {
        libc::O_RDONLY
    };
    // SAFETY: a NUL-terminated path; the result is checked.
    let raw = unsafe {
        libc::open(
            c.as_ptr(),
            access | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY,
        )
    };
    if raw < 0 {
        return Err(last(l, "open"));
    }
    // SAFETY: a new descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// `Accept=yes`: takes one pending connection of listening socket `fd`,
/// with who is at its other end; `None` when none is pending. The
/// connection is close-on-exec (the spawn hands it over as 3) and
/// blocking, as a service reading it expects (the init never reads it).
pub fn accept(fd: BorrowedFd<'_>) -> Result<Option<(OwnedFd, Peer)>, SysError> {
    loop {
        // SAFETY: plain system call; addresses not wanted here.
        let raw = unsafe {
            libc::accept4(
                fd.as_raw_fd(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                libc::SOCK_CLOEXEC,
            )
        };
        if raw >= 0 {
            // SAFETY: a new descriptor nobody else owns.
            let conn = unsafe { OwnedFd::from_raw_fd(raw) };
            let peer = peer_of(conn.as_fd());
            return Ok(Some((conn, peer)));
        }
        match Errno::last() {
            Errno::EAGAIN => return Ok(None),
            // The connection went before it was taken, or a signal: the
            // next one, if any.
            Errno::EINTR | Errno::ECONNABORTED | Errno::EPROTO => continue,
            e => {
                return Err(SysError::Call {
                    call: "accept".into(),
                    errno: Os(e),
                })
            }
        }
    }
}

/// Who is at the other end of connection `fd`: the addresses of an IP
/// connection, the credentials of a unix one.
pub fn peer_of(fd: BorrowedFd<'_>) -> Peer {
    let name = |f: unsafe extern "C" fn(
        libc::c_int,
        *mut libc::sockaddr,
        *mut libc::socklen_t,
    ) -> libc::c_int| {
        // SAFETY: all-zero is a valid `sockaddr_storage`.
        let mut st: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        // SAFETY: `st` has room for `len` bytes of any socket address.
        let r = unsafe { f(fd.as_raw_fd(), std::ptr::from_mut(&mut st).cast(), &mut len) };
        (r == 0).then(|| inet_of(&st)).flatten()
    };
    if let (Some(local), Some(remote)) = (name(libc::getsockname), name(libc::getpeername)) {
        return Peer::Inet { local, remote };
    }
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` has room for a `ucred`; the length says so.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            std::ptr::from_mut(&mut cred).cast(),
            &mut len,
        )
    };
    if r == 0 && cred.pid > 0 {
        Peer::Unix {
            pid: cred.pid,
            uid: cred.uid,
        }
    } else {
        Peer::Other
    }
}

/// An IP socket address from the kernel's form; `None` for other families.
fn inet_of(st: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match libc::c_int::from(st.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says it holds a `sockaddr_in`.
            let sin: libc::sockaddr_in = unsafe { std::ptr::read(std::ptr::from_ref(st).cast()) };
            let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
            Some(SocketAddr::new(IpAddr::V4(ip), u16::from_be(sin.sin_port)))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says it holds a `sockaddr_in6`.
            let sin6: libc::sockaddr_in6 = unsafe { std::ptr::read(std::ptr::from_ref(st).cast()) };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            Some(SocketAddr::V6(SocketAddrV6::new(
                ip,
                u16::from_be(sin6.sin6_port),
                sin6.sin6_flowinfo,
                sin6.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn listen(kind: ListenKind, addr: &str) -> Listen {
        Listen::parse(kind, addr).unwrap()
    }

    #[test]
    fn tcp_on_loopback_accepts_before_anyone_accepts() {
        let s = SocketSettings::default();
        // Port 0 is refused by the parser; take a free one first.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let fd = open(
            &listen(ListenKind::Stream, &format!("127.0.0.1:{port}")),
            &s,
            None,
        )
        .unwrap();
        let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.write_all(b"x").unwrap();
        let l = std::net::TcpListener::from(fd);
        l.set_nonblocking(false).unwrap();
        let (mut conn, _) = l.accept().unwrap();
        let mut b = [0u8; 1];
        conn.read_exact(&mut b).unwrap();
        assert_eq!(&b, b"x");
    }

    #[test]
    fn accept_takes_each_connection_with_its_peer() {
        let s = SocketSettings::default();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let l = open(
            &listen(ListenKind::Stream, &format!("127.0.0.1:{port}")),
            &s,
            None,
        )
        .unwrap();
        assert!(accept(l.as_fd()).unwrap().is_none());
        let c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (conn, peer) = accept(l.as_fd()).unwrap().unwrap();
        let want = Peer::Inet {
            local: c.peer_addr().unwrap(),
            remote: c.local_addr().unwrap(),
        };
        assert_eq!(peer, want);
        // Blocking, close-on-exec.
        // SAFETY: reading flags of our own descriptor.
        let fl = unsafe { libc::fcntl(conn.as_raw_fd(), libc::F_GETFL) };
        assert_eq!(fl & libc::O_NONBLOCK, 0);
        // SAFETY: as above.
        let fdfl = unsafe { libc::fcntl(conn.as_raw_fd(), libc::F_GETFD) };
        assert_ne!(fdfl & libc::FD_CLOEXEC, 0);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.sock");
        let u = open(
            &listen(ListenKind::Stream, path.to_str().unwrap()),
            &s,
            None,
        )
        .unwrap();
        let _c = std::os::unix::net::UnixStream::connect(&path).unwrap();
        let (_, peer) = accept(u.as_fd()).unwrap().unwrap();
        assert_eq!(
            peer,
            Peer::Unix {
                pid: std::process::id() as i32,
                // SAFETY: plain system call.
                uid: unsafe { libc::geteuid() },
            }
        );
    }

    /// `ReceiveBuffer=` past `net.core.rmem_max` (udev's kernel socket asks
    /// for 128 MiB): with the privilege (`SO_RCVBUFFORCE`, as root) the
    /// buffer is the size asked for, doubled by the kernel as systemd's
    /// would be; without it, the capped size, and no error.
    #[test]
    fn a_buffer_past_the_kernel_cap_is_forced_when_privileged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.sock");
        let want: libc::c_int = 64 << 20;
        let s = SocketSettings {
            receive_buffer: Some(want as u64),
            send_buffer: Some(want as u64),
            ..SocketSettings::default()
        };
        let fd = open(
            &listen(ListenKind::Datagram, path.to_str().unwrap()),
            &s,
            None,
        )
        .unwrap();
        let cap: i64 = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let got = get_int(&fd, libc::SOL_SOCKET, libc::SO_RCVBUF).unwrap();
        let sent = get_int(&fd, libc::SOL_SOCKET, libc::SO_SNDBUF).unwrap();
        // SAFETY: plain system call.
        if unsafe { libc::geteuid() } == 0 {
            assert_eq!(got, 2 * want);
            assert_eq!(sent, 2 * want);
        } else {
            assert!(i64::from(got) <= 2 * cap.max(i64::from(want)), "{got}");
        }
    }

    #[test]
    fn unix_path_gets_its_directory_and_mode_and_replaces_a_stale_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/d.sock");
        let s = SocketSettings {
            socket_mode: 0o600,
            directory_mode: 0o750,
            ..SocketSettings::default()
        };
        let l = listen(ListenKind::Stream, path.to_str().unwrap());
        let first = open(&l, &s, None).unwrap();
        drop(first);
        // The file of the first is stale now: replaced.
        let _fd = open(&l, &s, None).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dmode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dmode, 0o750);
        std::os::unix::net::UnixStream::connect(&path).unwrap();
        // A regular file is not replaced.
        let file = dir.path().join("f");
        std::fs::write(&file, b"").unwrap();
        let l = listen(ListenKind::Stream, file.to_str().unwrap());
        assert!(matches!(open(&l, &s, None), Err(SysError::NotASocket(_))));
    }

    #[test]
    fn datagram_fifo_and_abstract() {
        let dir = tempfile::tempdir().unwrap();
        let s = SocketSettings::default();
        let fifo_path = dir.path().join("f.fifo");
        let f = open(
            &listen(ListenKind::Fifo, fifo_path.to_str().unwrap()),
            &s,
            None,
        )
        .unwrap();
        assert!(std::fs::symlink_metadata(&fifo_path)
            .unwrap()
            .file_type()
            .is_fifo());
        std::fs::OpenOptions::new()
            .write(true)
            .open(&fifo_path)
            .unwrap()
            .write_all(b"hi")
            .unwrap();
        let mut b = [0u8; 2];
        std::fs::File::from(f).read_exact(&mut b).unwrap();
        assert_eq!(&b, b"hi");
        let name = format!("@flotilla-test-listen-{}", std::process::id());
        let _a = open(&listen(ListenKind::SequentialPacket, &name), &s, None).unwrap();
        let d = dir.path().join("d.sock");
        let _d = open(&listen(ListenKind::Datagram, d.to_str().unwrap()), &s, None).unwrap();
        std::os::unix::net::UnixDatagram::unbound()
            .unwrap()
            .send_to(b"x", &d)
            .unwrap();
    }
}
