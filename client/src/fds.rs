//! Descriptors sent with a request line (`SCM_RIGHTS`): a transient
//! unit's standard streams (`transient-add`'s `stdio`,
//! docs/control-protocol.md). They ride with the line's first byte; the
//! init takes as many as the request says it carries.

use std::io;
use std::os::fd::RawFd;

/// The most descriptors sent with one request.
pub const MAX_PASSED: usize = 3;

/// Sends `bytes` on the unix stream socket `fd` with `fds` attached, in
/// one `sendmsg(2)`: how many bytes went (the rest is written as usual;
/// the descriptors went with the first). `EINTR` is retried; a socket
/// without room returns `WouldBlock`, nothing sent.
pub fn send_with_fds(fd: RawFd, bytes: &[u8], fds: &[RawFd]) -> io::Result<usize> {
    if fds.len() > MAX_PASSED {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} descriptors, at most {MAX_PASSED}", fds.len()),
        ));
    }
    // Room for MAX_PASSED descriptors, aligned for a cmsghdr.
    let mut space = [0u64; 8];
    let payload = std::mem::size_of_val(fds);
    // SAFETY: CMSG_SPACE and CMSG_LEN only compute sizes.
    let (room, len) = unsafe {
        (
            libc::CMSG_SPACE(payload as u32),
            libc::CMSG_LEN(payload as u32),
        )
    };
    let mut iov = libc::iovec {
        iov_base: bytes.as_ptr() as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    // SAFETY: a zeroed msghdr is a valid empty one.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if !fds.is_empty() {
        msg.msg_control = space.as_mut_ptr().cast();
        msg.msg_controllen = room as _;
        // SAFETY: `space` (64 bytes) holds CMSG_SPACE of 3 descriptors
        // (24 bytes on 64-bit Linux); the header and data are written
        // inside it, where CMSG_FIRSTHDR and CMSG_DATA point.
        unsafe {
            let c = libc::CMSG_FIRSTHDR(&msg);
            (*c).cmsg_level = libc::SOL_SOCKET;
            (*c).cmsg_type = libc::SCM_RIGHTS;
            (*c).cmsg_len = len as _;
            std::ptr::copy_nonoverlapping(
                fds.as_ptr(),
                libc::CMSG_DATA(c).cast::<RawFd>(),
                fds.len(),
            );
        }
    }
    loop {
        // SAFETY: `msg` points at `iov` and `space`, alive for the call.
        let n = unsafe { libc::sendmsg(fd, &msg, libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) };
        if n >= 0 {
            return Ok(n.unsigned_abs());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::net::UnixStream;

    #[test]
    fn the_descriptors_go_with_the_bytes() {
        let (a, b) = UnixStream::pair().unwrap();
        let (mut r, w) = UnixStream::pair().unwrap();
        let sent = send_with_fds(a.as_raw_fd(), b"line\n", &[w.as_raw_fd()]).unwrap();
        assert_eq!(sent, 5);
        drop(w);
        // Received with recvmsg: the descriptor is the write end's.
        let mut buf = [0u8; 16];
        let mut space = [0u64; 8];
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = space.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&space) as _;
        let n = unsafe { libc::recvmsg(b.as_raw_fd(), &mut msg, 0) };
        assert_eq!(n, 5);
        let got = unsafe {
            let c = libc::CMSG_FIRSTHDR(&msg);
            assert_eq!((*c).cmsg_type, libc::SCM_RIGHTS);
            OwnedFd::from_raw_fd(*libc::CMSG_DATA(c).cast::<RawFd>())
        };
        let mut w = UnixStream::from(got);
        std::io::Write::write_all(&mut w, b"hi").unwrap();
        drop(w);
        let mut s = String::new();
        r.read_to_string(&mut s).unwrap();
        assert_eq!(s, "hi");
        assert!(send_with_fds(a.as_raw_fd(), b"x", &[0, 1, 2, 3]).is_err());
    }
}
