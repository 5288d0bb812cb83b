//! Receiving on a unix socket with what rides along: the sender's
//! credentials (`SCM_CREDENTIALS`) and descriptors (`SCM_RIGHTS`, received
//! close-on-exec). One `recvmsg(2)` for the notify socket's datagrams
//! (`notify.rs`: `FDSTORE=1`) and the control socket's stream
//! (`control.rs`: the standard streams a transient unit is handed,
//! docs/control-protocol.md).

use nix::errno::Errno;
use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
use std::io::IoSliceMut;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// What one `recvmsg(2)` got.
#[derive(Debug)]
pub struct Got {
    /// Bytes read into the buffer.
    pub bytes: usize,
    /// A datagram was longer than the buffer (its tail is lost).
    pub truncated: bool,
    /// The sender's PID and UID, when the kernel attached them.
    pub creds: Option<(i32, u32)>,
    /// The descriptors sent along, in order; closed when dropped.
    pub fds: Vec<OwnedFd>,
}

/// Reads once from `fd` without blocking into `buf`, with the control
/// data in `cmsg` (made with `nix::cmsg_space!`); `None` when nothing is waiting.
/// `EINTR` is retried. Descriptors that did not fit in `cmsg` are closed
/// by the kernel.
// nix's `recvmsg` takes the control buffer as a `Vec`.
#[allow(clippy::ptr_arg)]
pub fn recv(fd: RawFd, buf: &mut [u8], cmsg: &mut Vec<u8>) -> Result<Option<Got>, Errno> {
    loop {
        let mut iov = [IoSliceMut::new(buf)];
        let flags = MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_CMSG_CLOEXEC;
        let msg = match recvmsg::<()>(fd, &mut iov, Some(cmsg), flags) {
            Ok(m) => m,
            Err(Errno::EINTR) => continue,
            Err(Errno::EAGAIN) => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut creds = None;
        let mut fds = Vec::new();
        // `cmsgs` fails only when the control data was truncated, which
        // the buffer's size rules out; the kernel closes what did not fit.
        if let Ok(cmsgs) = msg.cmsgs() {
            for c in cmsgs {
                match c {
                    ControlMessageOwned::ScmCredentials(cred) => {
                        creds = Some((cred.pid(), cred.uid()));
                    }
                    ControlMessageOwned::ScmRights(got) => {
                        for fd in got {
                            // SAFETY: the kernel just installed this
                            // descriptor for us; nobody else owns it.
                            fds.push(unsafe { OwnedFd::from_raw_fd(fd) });
                        }
                    }
                    _ => {}
                }
            }
        }
        return Ok(Some(Got {
            bytes: msg.bytes,
            truncated: msg.flags.contains(MsgFlags::MSG_TRUNC),
            creds,
            fds,
        }));
    }
}
