//! A scope's processes (`docs/dbus.md`, `StartTransientUnit` of a scope):
//! started by someone else (sshd for logind's session, `systemd-run
//! --scope` itself), moved into the scope's cgroup at its start, and
//! watched until none is left, without polling:
//!
//! - with a cgroup, one inotify watch on its `cgroup.events`, which the
//!   kernel modifies when `populated` changes: the scope lasts as long as
//!   any process in it, children and grandchildren included, as
//!   systemd's;
//! - without one (a container that gives the init no cgroup), one pidfd
//!   per process given (Linux 5.3): readable when that process ends. What
//!   they fork is not followed then, and `initctl status` says so.
//!
//! The processes are not the init's children: their exits come from here,
//! never from `waitpid`.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;

use crate::sys::unitrun::UnitRun;
use crate::sys::Pid;

/// What watches a scope's processes.
#[derive(Debug)]
pub enum Adoption {
    /// An inotify instance watching the cgroup's `cgroup.events`.
    Cgroup {
        /// The instance.
        inotify: OwnedFd,
        /// The file, read again at each event.
        events: PathBuf,
    },
    /// A pidfd per process still alive.
    Pids(Vec<(Pid, OwnedFd)>),
}

impl Adoption {
    /// The descriptors to watch for readability.
    pub fn fds(&self) -> Vec<RawFd> {
        match self {
            Adoption::Cgroup { inotify, .. } => vec![inotify.as_raw_fd()],
            Adoption::Pids(p) => p.iter().map(|(_, fd)| fd.as_raw_fd()).collect(),
        }
    }

    /// The processes watched by pidfd, each with its descriptor (none
    /// where the cgroup is watched): what a re-exec carries.
    pub fn pidfds(&self) -> Vec<(Pid, RawFd)> {
        match self {
            Adoption::Cgroup { .. } => Vec::new(),
            Adoption::Pids(p) => p.iter().map(|(pid, fd)| (*pid, fd.as_raw_fd())).collect(),
        }
    }

    /// Whether `fd` is still one of its descriptors (the cgroup's inotify
    /// instance stays; a pidfd whose process ended is dropped by
    /// [`any_left`]).
    pub fn holds(&self, fd: RawFd) -> bool {
        match self {
            Adoption::Cgroup { inotify, .. } => inotify.as_raw_fd() == fd,
            Adoption::Pids(p) => p.iter().any(|(_, f)| f.as_raw_fd() == fd),
        }
    }
}

/// Moves `pids` into the run's cgroup (if it has one) and watches them.
/// A process that does not exist is an error naming it (nothing is
/// adopted then); so is one the kernel refuses to move.
pub fn adopt(run: &UnitRun, pids: &[Pid]) -> Result<Adoption, String> {
    for &pid in pids {
        // SAFETY: kill(2) with signal 0 sends nothing and takes no pointers.
        if pid <= 0 || unsafe { libc::kill(pid, 0) } != 0 && errno() == libc::ESRCH {
            return Err(format!("process {pid}: no such process"));
        }
    }
    let Some(cg) = run.cgroup() else {
        let mut fds = Vec::with_capacity(pids.len());
        for &pid in pids {
            fds.push((pid, pidfd(pid)?));
        }
        return Ok(Adoption::Pids(fds));
    };
    for &pid in pids {
        cg.join(pid)
            .map_err(|e| format!("move process {pid} into the scope's cgroup: {e}"))?;
    }
    watch_events(cg.events_path())
}

/// An inotify watch of a cgroup's `cgroup.events` (`events`), which the
/// kernel modifies when `populated` or `frozen` changes: what a scope, an
/// `exit-type: cgroup` service and the freezer (`freezer.rs`) wait on.
pub fn watch_events(events: PathBuf) -> Result<Adoption, String> {
    // SAFETY: inotify_init1 takes flags only.
    let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
    if raw < 0 {
        return Err(format!(
            "inotify_init1: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: a new descriptor, owned from here on.
    let inotify = unsafe { OwnedFd::from_raw_fd(raw) };
    let path = std::ffi::CString::new(events.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("{}: contains a NUL byte", events.display()))?;
    // SAFETY: a valid descriptor and a NUL-terminated path.
    if unsafe { libc::inotify_add_watch(raw, path.as_ptr(), libc::IN_MODIFY) } < 0 {
        return Err(format!(
            "watch {}: {}",
            events.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(Adoption::Cgroup { inotify, events })
}

/// The watch of a scope that was up before a re-exec, made again: its
/// cgroup's `cgroup.events` where the run has a cgroup (its processes are
/// in it already), else the pidfds the image before this one held
/// (`carried`, inherited across the `execve`).
pub fn resume(run: &UnitRun, carried: Vec<(Pid, OwnedFd)>) -> Result<Adoption, String> {
    if run.cgroup().is_some() {
        return adopt(run, &[]);
    }
    Ok(Adoption::Pids(carried))
}

/// After `fd` (one of [`Adoption::fds`]) became readable: consumes what
/// it says and returns whether any of the processes is left.
pub fn any_left(a: &mut Adoption, fd: RawFd) -> bool {
    match a {
        Adoption::Cgroup { inotify, events } => {
            let mut buf = [0u8; 4096];
            // Drained: the events only say "look again".
            // SAFETY: a valid descriptor and a buffer of this length.
            while unsafe { libc::read(inotify.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) } > 0
            {
            }
            populated(events)
        }
        Adoption::Pids(p) => {
            p.retain(|(_, f)| f.as_raw_fd() != fd);
            !p.is_empty()
        }
    }
}

/// Whether any of the processes is left now (right after the adoption:
/// they may have ended before the watch began).
pub fn left_now(a: &Adoption) -> bool {
    match a {
        Adoption::Cgroup { events, .. } => populated(events),
        // SAFETY: kill(2) with signal 0 sends nothing.
        Adoption::Pids(p) => p.iter().any(|(pid, _)| unsafe { libc::kill(*pid, 0) } == 0),
    }
}

/// Sends `signal` to each process given that is still alive but `but`
/// (the adoption without a cgroup; with one, the cgroup is signalled, as
/// for any unit). How many got it.
pub fn signal(a: &Adoption, signal: i32, but: Pid) -> usize {
    let Adoption::Pids(p) = a else {
        return 0;
    };
    p.iter()
        .filter(|(pid, _)| *pid != but)
        .filter(|(_, fd)| {
            // SAFETY: pidfd_send_signal(2) with a valid pidfd and no info.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    fd.as_raw_fd(),
                    signal,
                    std::ptr::null::<libc::siginfo_t>(),
                    0,
                )
            };
            r == 0
        })
        .count()
}

fn populated(events: &std::path::Path) -> bool {
    std::fs::read_to_string(events).is_ok_and(|t| t.lines().any(|l| l == "populated 1"))
}

/// The cgroup's `frozen` in `cgroup.events` now, the watch's events
/// drained first (an adoption by pidfd has no cgroup: not frozen).
pub fn frozen(a: &mut Adoption) -> bool {
    let Adoption::Cgroup { inotify, events } = a else {
        return false;
    };
    let mut buf = [0u8; 4096];
    // SAFETY: a valid descriptor and a buffer of this length.
    while unsafe { libc::read(inotify.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
    std::fs::read_to_string(events).is_ok_and(|t| t.lines().any(|l| l == "frozen 1"))
}

fn pidfd(pid: Pid) -> Result<OwnedFd, String> {
    crate::sys::pidfd::open(pid).map_err(|e| format!("pidfd_open {pid}: {}", e.desc()))
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    /// Without a cgroup: a pidfd per process, which says when it ended.
    #[test]
    fn processes_without_a_cgroup_are_watched_by_pidfd() {
        // Its children must not be reaped by another test's wait for any
        // child, nor it reap theirs.
        let _g = crate::sys::tests::process_lock();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as Pid;
        let run = UnitRun::default();
        let mut a = adopt(&run, &[pid]).unwrap();
        assert!(left_now(&a));
        let [fd] = a.fds()[..] else {
            panic!("one pidfd: {:?}", a.fds());
        };
        assert_eq!(signal(&a, libc::SIGTERM, 0), 1);
        child.wait().unwrap();
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        assert_eq!(unsafe { libc::poll(&mut pfd, 1, 10_000) }, 1);
        assert!(!any_left(&mut a, fd));
    }

    #[test]
    fn a_process_that_does_not_exist_is_refused() {
        let run = UnitRun::default();
        let e = adopt(&run, &[i32::MAX - 1]).unwrap_err();
        assert!(e.contains("no such process"), "{e}");
        assert!(adopt(&run, &[0]).is_err());
    }
}
