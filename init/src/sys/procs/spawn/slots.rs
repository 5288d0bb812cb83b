//! The spawner's reserved descriptors ("slots"): where a child's stdin,
//! stdout and stderr wait, low in the table, for the child to `dup2` them
//! onto 0, 1 and 2 (the module documentation of `mod.rs`, step 1; the
//! lanes of `lanes.rs` are slots too). Between spawns a slot holds
//! `/dev/null`, or a placeholder while that cannot be opened, so that the
//! init keeps no reference to a child's pipe.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::child::Step;
use super::{Errno, Failure, Stdio};

/// What a reserved slot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Holds {
    /// The `O_PATH` descriptor of `/` (a free lane, or no `/dev/null`
    /// yet).
    Placeholder,
    /// `/dev/null`.
    Null,
    /// A descriptor of the caller's, during a spawn.
    Handed,
}

#[derive(Debug)]
pub(super) struct Slot {
    pub(super) fd: OwnedFd,
    pub(super) holds: Holds,
}

/// Puts each stream's source into its slot of `slots` (`null`: the
/// spawner's `/dev/null`); returns, for each of 0, 1, 2, the slot to
/// `dup2` from in the child, or -1 to inherit. A stream without a slot
/// (`None`) takes `/dev/null` itself, and can be nothing else.
pub(super) fn fill_slots(
    slots: [Option<&mut Slot>; 3],
    null: Option<RawFd>,
    stdio: &[Stdio<'_>; 3],
) -> Result<[RawFd; 3], Failure> {
    let mut fds = [-1; 3];
    for (((target, slot), s), out) in (0..).zip(slots).zip(stdio).zip(fds.iter_mut()) {
        let (src, holds) = match (*s, null) {
            (Stdio::Inherit, _) => continue,
            (Stdio::Null, _) if slot.as_ref().is_some_and(|s| s.holds == Holds::Null) => {
                *out = slot.map_or(-1, |s| s.fd.as_raw_fd());
                continue;
            }
            (Stdio::Null, Some(null)) => (null, Holds::Null),
            // Opened by `spawn` just before.
            (Stdio::Null, None) => return Err(Failure::Child(Step::OpenNull, Errno::ENOENT)),
            (Stdio::Fd(fd), _) => (fd.as_raw_fd(), Holds::Handed),
            (Stdio::Socket(fd), _) => (fd, Holds::Handed),
        };
        let Some(slot) = slot else {
            if holds != Holds::Null {
                return Err(Failure::Child(Step::dup2(target), Errno::EBADF));
            }
            *out = src;
            continue;
        };
        // SAFETY: dup3(2) onto a descriptor this spawner owns; `src` is
        // valid (borrowed by the request, or ours).
        if unsafe { libc::dup3(src, slot.fd.as_raw_fd(), libc::O_CLOEXEC) } < 0 {
            return Err(Failure::Child(Step::dup2(target), Errno::last()));
        }
        slot.holds = holds;
        *out = slot.fd.as_raw_fd();
    }
    Ok(fds)
}

/// Gives each of `slots` that holds a caller's descriptor (or the
/// placeholder, when `src` is `/dev/null`) `src` back.
pub(super) fn restore_slots<'a>(
    slots: impl Iterator<Item = &'a mut Slot>,
    src: RawFd,
    holds: Holds,
) {
    for slot in slots {
        if slot.holds == holds || slot.holds == Holds::Null {
            continue;
        }
        // SAFETY: dup3(2) between two descriptors the spawner owns. It
        // cannot fail for two valid, distinct descriptors; if it did, the
        // slot would be retried at the next restore.
        if unsafe { libc::dup3(src, slot.fd.as_raw_fd(), libc::O_CLOEXEC) } >= 0 {
            slot.holds = holds;
        }
    }
}

/// `fd` itself if above 2, else a close-on-exec copy from 3 up (PID 1 may
/// start with 0, 1, 2 closed, and reopens the console onto them later).
pub(super) fn above_stdio(fd: OwnedFd) -> Result<OwnedFd, Errno> {
    if fd.as_raw_fd() > 2 {
        Ok(fd)
    } else {
        dup_above_stdio(&fd)
    }
}

/// A close-on-exec copy of `fd`, the lowest free descriptor from 3 up.
pub(super) fn dup_above_stdio(fd: &OwnedFd) -> Result<OwnedFd, Errno> {
    // SAFETY: fcntl(2) on a descriptor we own; the result is new and ours.
    let copy = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if copy < 0 {
        return Err(Errno::last());
    }
    // SAFETY: `copy` is a fresh descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(copy) })
}

/// `/dev/null`, read-write, close-on-exec, above 2.
pub(super) fn open_null() -> Result<OwnedFd, Errno> {
    use nix::fcntl::OFlag;
    let fd = nix::fcntl::open(
        c"/dev/null",
        OFlag::O_RDWR | OFlag::O_CLOEXEC | OFlag::O_NOCTTY,
        nix::sys::stat::Mode::empty(),
    )?;
    above_stdio(fd)
}
