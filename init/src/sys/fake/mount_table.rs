//! The fake's mount table: `/proc/self/mountinfo` is a file of the fake
//! tree, and its watch an eventfd made readable each time a test changes
//! the table ([`FakeSys::set_mount_table`]), as the kernel wakes the
//! real file's watchers.

use super::FakeSys;
use crate::sys::{Errno, Os, Sys, SysError};
use std::os::fd::OwnedFd;

/// Where the init reads the table.
const TABLE: &str = "/proc/self/mountinfo";

impl FakeSys {
    /// The mount table is `text` now; its watch, once open, wakes.
    pub fn set_mount_table(&self, text: &str) {
        self.set_file(TABLE, text);
        if let Some(fd) = &self.state.borrow().mount_watch {
            let _ = nix::unistd::write(fd, &1u64.to_ne_bytes());
        }
    }

    /// [`Sys::mount_table_watch`]: an eventfd, a copy kept to wake it.
    pub(super) fn open_mount_table(&self) -> Result<OwnedFd, SysError> {
        let fd = self.wall_clock_watch()?;
        let copy = fd.try_clone().map_err(|e| SysError::Call {
            call: "dup".into(),
            errno: Os(Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO))),
        })?;
        self.state.borrow_mut().mount_watch = Some(copy);
        Ok(fd)
    }
}
