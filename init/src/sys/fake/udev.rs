//! The fake's udev: off unless a test turns it on ([`FakeSys::enable_udev`]:
//! `/sys` writable, the socket opens); then the socket is an eventfd made
//! readable by each message the test sends as udevd
//! ([`FakeSys::send_uevent`]), and a read takes them all.

use super::FakeSys;
use crate::sys::io::uevents::Uevents;
use crate::sys::{Errno, Os, Sys, SysError};
use std::os::fd::{BorrowedFd, OwnedFd};

impl FakeSys {
    /// udev runs here: `/sys` is writable, its socket opens.
    pub fn enable_udev(&self) {
        self.state
            .borrow_mut()
            .udev
            .get_or_insert((None, Vec::new()));
    }

    /// udevd broadcasts `message`: the socket, once open, is readable.
    pub fn send_uevent(&self, message: Vec<u8>) {
        let mut st = self.state.borrow_mut();
        if let Some((fd, queue)) = &mut st.udev {
            queue.push(message);
            if let Some(fd) = fd {
                let _ = nix::unistd::write(&*fd, &1u64.to_ne_bytes());
            }
        }
    }

    /// Whether [`FakeSys::enable_udev`] was called.
    pub(super) fn udev_enabled(&self) -> bool {
        self.state.borrow().udev.is_some()
    }

    /// [`Sys::udev_monitor`]: an eventfd, a copy kept to make it readable.
    pub(super) fn open_udev(&self) -> Result<OwnedFd, SysError> {
        if !self.udev_enabled() {
            return Err(SysError::Call {
                call: "socket(NETLINK_KOBJECT_UEVENT)".into(),
                errno: Os(Errno::EPROTONOSUPPORT),
            });
        }
        let fd = self.wall_clock_watch()?;
        let copy = fd.try_clone().map_err(|e| SysError::Call {
            call: "dup".into(),
            errno: Os(Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO))),
        })?;
        if let Some((slot, _)) = &mut self.state.borrow_mut().udev {
            *slot = Some(copy);
        }
        Ok(fd)
    }

    /// [`Sys::udev_messages`]: what was sent since the last read.
    pub(super) fn read_uevents(&self, fd: BorrowedFd<'_>) -> Uevents {
        let mut b = [0u8; 8];
        let _ = nix::unistd::read(fd, &mut b);
        let mut st = self.state.borrow_mut();
        let messages = st
            .udev
            .as_mut()
            .map(|(_, q)| std::mem::take(q))
            .unwrap_or_default();
        Uevents {
            messages,
            lost: false,
        }
    }
}
