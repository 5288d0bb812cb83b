//! udev's broadcast, on the kernel: a netlink socket of the uevent
//! family bound to udevd's multicast group (2, "udev"; the kernel's own
//! is 1), non-blocking and close-on-exec, watched in the loop; its
//! datagrams read until the queue is empty. What they say is
//! `flotilla_units::udev::monitor`'s to read. Whether udev can run here
//! at all is systemd's test: `/sys` is writable (a container's is not).

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use nix::sys::socket::{
    bind, recvfrom, setsockopt, socket, sockopt, AddressFamily, NetlinkAddr, SockFlag,
    SockProtocol, SockType,
};
use nix::sys::statvfs::{statvfs, FsFlags};

use crate::sys::{Os, SysError};

/// udevd's multicast group.
const UDEV_GROUP: u32 = 2;
/// The receive buffer asked for: a boot's coldplug sends thousands of
/// messages before the loop reads them (systemd asks 128 MiB; the kernel
/// caps it at `rmem_max` without privilege, and forces it with).
const RCVBUF: usize = 128 << 20;
/// The largest message read (udev's are well under it).
const MAX_MESSAGE: usize = 64 << 10;
/// The most messages read at one wake: the rest at the next one.
const MAX_BATCH: usize = 4096;

/// Whether udev can run here: `/sys` is mounted read-write.
pub fn available() -> bool {
    statvfs("/sys").is_ok_and(|s| !s.flags().contains(FsFlags::ST_RDONLY))
}

/// The socket, bound to udevd's group.
pub fn open() -> Result<OwnedFd, SysError> {
    let call = |call: &str| {
        let call = call.to_string();
        move |errno| SysError::Call {
            call,
            errno: Os(errno),
        }
    };
    let fd = socket(
        AddressFamily::Netlink,
        SockType::Raw,
        SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkKObjectUEvent,
    )
    .map_err(call("socket(NETLINK_KOBJECT_UEVENT)"))?;
    // Forced as PID 1 may; else as large as the kernel lets.
    if setsockopt(&fd, sockopt::RcvBufForce, &RCVBUF).is_err() {
        let _ = setsockopt(&fd, sockopt::RcvBuf, &RCVBUF);
    }
    bind(fd.as_raw_fd(), &NetlinkAddr::new(0, UDEV_GROUP)).map_err(call("bind(udev group)"))?;
    Ok(fd)
}

/// What one wake read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Uevents {
    /// Every datagram waiting from user space (udevd; the kernel's port
    /// is 0), in order.
    pub messages: Vec<Vec<u8>>,
    /// Whether some were lost (`ENOBUFS`: the buffer overflowed): what
    /// the devices are now is then in udev's database only.
    pub lost: bool,
}

/// Reads what is waiting on `fd`.
pub fn read(fd: BorrowedFd<'_>) -> Uevents {
    let mut out = Uevents::default();
    let mut buf = vec![0u8; MAX_MESSAGE];
    while out.messages.len() < MAX_BATCH {
        match recvfrom::<NetlinkAddr>(fd.as_raw_fd(), &mut buf) {
            Ok((n, from)) => {
                if from.is_some_and(|a| a.pid() != 0) {
                    out.messages.extend(buf.get(..n).map(<[u8]>::to_vec));
                }
            }
            Err(nix::errno::Errno::ENOBUFS) => out.lost = true,
            // EAGAIN: read to the end; anything else: stop too.
            Err(_) => break,
        }
    }
    out
}
