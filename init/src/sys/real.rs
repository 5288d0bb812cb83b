//! [`RealSys`]: the [`Sys`] trait on the running kernel, through `nix` and
//! `libc`. Each method is one system call or a short, bounded sequence of
//! them. What state there is belongs to the process, as the descriptor
//! table and the signal mask do: the spawner's reserved slots (`spawn/`)
//! and the event queue ([`super::events::EventQueue`]).

use std::ffi::OsString;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use flotilla_units::context::placement::{InvalidPolicy, MemRequest};
use flotilla_units::time::Instant;
use nix::fcntl::OFlag;
use nix::mount::{MntFlags, MsFlags};
use nix::sys::reboot::RebootMode;
use nix::sys::stat::Mode;
use nix::sys::time::TimeSpec;
use nix::time::{clock_gettime, ClockId};

use super::events::{Event, EventQueue, Interest, Token};
use super::ExecWatch;
use super::{
    sockets, spawn, Accepted, Errno, ExitStatus, FileId, FileOwner, MemOutcome, MountRequest, Os,
    Pid, RebootCmd, SpawnRequest, Sys, SysError, UserInfo, WallTime,
};

/// The real system. Cheap and copyable: create one at start-up and lend
/// it to whatever needs it. The one piece of state, the spawner's reserved
/// descriptors and child stack, is per process (as the descriptor table
/// is), made by the first [`RealSys::new`] or spawn.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealSys;

impl RealSys {
    /// The real system. The first call in a process also sets aside the
    /// spawner's descriptor slots (three descriptors from 3 up, so create
    /// it before opening much else: a child keeps only what lies below
    /// them) and the child's stack; a failure there is left for the first
    /// spawn to report.
    pub fn new() -> RealSys {
        spawn::reserve();
        // Before any unit can write /etc/machine-id.
        super::conditions::first_boot_at_start();
        RealSys
    }
}

fn kill_error(target: String, signal: i32) -> SysError {
    SysError::Kill {
        target,
        signal,
        errno: Os(Errno::last()),
    }
}

fn call_error(call: impl Into<String>, errno: Errno) -> SysError {
    SysError::Call {
        call: call.into(),
        errno: Os(errno),
    }
}

fn file_error(op: &'static str, path: &Path, e: &std::io::Error) -> SysError {
    SysError::File {
        op,
        path: path.to_owned(),
        errno: Os(Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO))),
    }
}

impl Sys for RealSys {
    fn spawn(&self, req: &SpawnRequest<'_>) -> Result<Pid, SysError> {
        spawn::spawn(req)
    }

    fn spawn_started(&self, req: &SpawnRequest<'_>) -> Result<(Pid, Option<ExecWatch>), SysError> {
        spawn::spawn_started(req)
    }

    /// Refuses `pid <= 0` (`EINVAL`): those would signal a whole group or
    /// every process; use [`Sys::killpg`] or [`Sys::kill_all`].
    fn kill(&self, pid: Pid, signal: i32) -> Result<(), SysError> {
        if pid <= 0 {
            return Err(SysError::Kill {
                target: format!("pid {pid}"),
                signal,
                errno: Os(Errno::EINVAL),
            });
        }
        // SAFETY: kill(2) has no memory-safety requirements.
        if unsafe { libc::kill(pid, signal) } < 0 {
            return Err(kill_error(format!("pid {pid}"), signal));
        }
        Ok(())
    }

    /// Refuses `pgid <= 0` (`EINVAL`), which would mean the init's own
    /// group or everything.
    fn killpg(&self, pgid: Pid, signal: i32) -> Result<(), SysError> {
        if pgid <= 0 {
            return Err(SysError::Kill {
                target: format!("process group {pgid}"),
                signal,
                errno: Os(Errno::EINVAL),
            });
        }
        // SAFETY: killpg(3) has no memory-safety requirements.
        if unsafe { libc::killpg(pgid, signal) } < 0 {
            return Err(kill_error(format!("process group {pgid}"), signal));
        }
        Ok(())
    }

    fn pgid(&self, pid: Pid) -> Option<Pid> {
        // SAFETY: getpgid(2) takes a number and no pointers.
        let g = unsafe { libc::getpgid(pid) };
        (g >= 0).then_some(g)
    }

    fn kill_all(&self, signal: i32) -> Result<(), SysError> {
        // SAFETY: kill(2) has no memory-safety requirements. kill(-1, sig)
        // signals every process we may signal except ourselves and PID 1's
        // kernel threads.
        if unsafe { libc::kill(-1, signal) } < 0 {
            if Errno::last() == Errno::ESRCH {
                return Ok(());
            }
            return Err(kill_error("every process".to_owned(), signal));
        }
        Ok(())
    }

    fn wait_any(&self) -> Result<Option<(Pid, ExitStatus)>, SysError> {
        loop {
            let mut status = 0;
            // SAFETY: `status` is valid for writes.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            match pid {
                0 => return Ok(None),
                p if p < 0 => match Errno::last() {
                    Errno::ECHILD => return Ok(None),
                    Errno::EINTR => continue,
                    e => return Err(SysError::Wait(Os(e))),
                },
                // Without WUNTRACED/WCONTINUED only terminations are
                // reported; anything else is skipped.
                p => {
                    if let Some(s) = ExitStatus::from_raw(status) {
                        return Ok(Some((p, s)));
                    }
                }
            }
        }
    }

    fn monotonic_now(&self) -> Instant {
        // clock_gettime(2) cannot fail for CLOCK_MONOTONIC with a valid
        // pointer; the fallback is never taken.
        let ts = clock_gettime(ClockId::CLOCK_MONOTONIC).unwrap_or(TimeSpec::new(0, 0));
        let secs = u64::try_from(ts.tv_sec()).unwrap_or(0);
        let nanos = u64::try_from(ts.tv_nsec()).unwrap_or(0);
        Instant(secs.saturating_mul(1_000_000_000).saturating_add(nanos))
    }

    fn wall_now(&self) -> WallTime {
        let ts = clock_gettime(ClockId::CLOCK_REALTIME).unwrap_or(TimeSpec::new(0, 0));
        WallTime {
            secs: ts.tv_sec(),
            nanos: u32::try_from(ts.tv_nsec()).unwrap_or(0),
        }
    }

    fn read_file_limited(&self, path: &Path, max: usize) -> Result<Vec<u8>, SysError> {
        let read_err = |errno: Errno| SysError::Read {
            path: path.to_owned(),
            errno: Os(errno),
        };
        // O_NONBLOCK: opening a FIFO would otherwise wait for a writer
        // (fifo(7)); it has no effect on regular files.
        let flags = OFlag::O_RDONLY | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK | OFlag::O_NOCTTY;
        let fd = nix::fcntl::open(path, flags, Mode::empty()).map_err(read_err)?;
        super::chase::read_regular(fd, path, max)
    }

    fn read_file_chased(&self, path: &Path, max: usize) -> Result<super::ChasedFile, SysError> {
        super::chase::read(path, max)
    }

    fn set_child_subreaper(&self) -> Result<(), SysError> {
        nix::sys::prctl::set_child_subreaper(true)
            .map_err(|e| call_error("prctl(PR_SET_CHILD_SUBREAPER)", e))
    }

    fn getpid(&self) -> Pid {
        nix::unistd::getpid().as_raw()
    }

    fn raise_nofile_limit(&self) -> Result<u64, SysError> {
        let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open")
            .ok()
            .and_then(|t| t.trim().parse().ok());
        super::rlimits::raise_nofile(nr_open)
            .map_err(|e| call_error("setrlimit(RLIMIT_NOFILE)", nix::errno::Errno::from_raw(e)))
    }

    fn session_of(&self, pid: Pid) -> Option<Pid> {
        nix::unistd::getsid(Some(nix::unistd::Pid::from_raw(pid)))
            .ok()
            .map(|p| p.as_raw())
    }

    fn lookup_user(&self, user: &str) -> Result<UserInfo, SysError> {
        super::users::lookup_user(user)
    }

    fn lookup_group(&self, group: &str) -> Result<u32, SysError> {
        super::users::lookup_group(group)
    }

    fn id_in_use(&self, id: u32) -> bool {
        super::users::id_in_use(id)
    }

    fn mount(&self, req: &MountRequest<'_>) -> Result<(), SysError> {
        nix::mount::mount(req.source, req.target, req.fstype, req.flags, req.data).map_err(|e| {
            SysError::Mount {
                op: "mount",
                target: req.target.to_owned(),
                errno: Os(e),
            }
        })
    }

    fn umount(&self, target: &Path) -> Result<(), SysError> {
        nix::mount::umount2(target, MntFlags::empty()).map_err(|e| SysError::Mount {
            op: "umount",
            target: target.to_owned(),
            errno: Os(e),
        })
    }

    fn remount_readonly(&self, target: &Path) -> Result<(), SysError> {
        let flags = MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY;
        nix::mount::mount(None::<&str>, target, None::<&str>, flags, None::<&str>).map_err(|e| {
            SysError::Mount {
                op: "remount read-only",
                target: target.to_owned(),
                errno: Os(e),
            }
        })
    }

    fn sync(&self) {
        nix::unistd::sync();
    }

    fn reboot(&self, cmd: RebootCmd) -> Result<(), SysError> {
        let (mode, name) = match cmd {
            RebootCmd::PowerOff => (RebootMode::RB_POWER_OFF, "reboot(RB_POWER_OFF)"),
            RebootCmd::Restart => (RebootMode::RB_AUTOBOOT, "reboot(RB_AUTOBOOT)"),
            RebootCmd::Halt => (RebootMode::RB_HALT_SYSTEM, "reboot(RB_HALT_SYSTEM)"),
        };
        match nix::sys::reboot::reboot(mode) {
            Ok(never) => match never {},
            Err(e) => Err(call_error(name, e)),
        }
    }

    fn set_cad_disabled(&self) -> Result<(), SysError> {
        nix::sys::reboot::set_cad_enabled(false)
            .map_err(|e| call_error("reboot(RB_DISABLE_CAD)", e))
    }

    fn sethostname(&self, name: &str) -> Result<(), SysError> {
        nix::unistd::sethostname(name).map_err(|e| call_error(format!("sethostname {name}"), e))
    }

    fn write_sysctl(&self, path: &Path, value: &str) -> Result<(), SysError> {
        use std::io::Write;
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|mut f| f.write_all(value.as_bytes()))
            .map_err(|e| file_error("write", path, &e))
    }

    fn open_events(&self) -> Result<(), SysError> {
        EventQueue::get().map(|_| ())
    }

    fn wait(&self, events: &mut Vec<Event>, timeout: Option<Duration>) -> Result<(), SysError> {
        EventQueue::get()?.wait(events, timeout)
    }

    fn watch(&self, fd: RawFd, token: Token, interest: Interest) -> Result<(), SysError> {
        EventQueue::get()?.watch(fd, token, interest)
    }

    fn rewatch(&self, fd: RawFd, token: Token, interest: Interest) -> Result<(), SysError> {
        EventQueue::get()?.rewatch(fd, token, interest)
    }

    fn unwatch(&self, fd: RawFd) -> Result<(), SysError> {
        EventQueue::get()?.unwatch(fd)
    }

    fn bind_listener(&self, path: &Path) -> Result<(UnixListener, FileId), SysError> {
        sockets::bind_listener(path)
    }

    fn accept(&self, listener: &UnixListener) -> Result<Option<Accepted>, SysError> {
        sockets::accept(listener)
    }

    fn wall_clock_watch(&self) -> Result<OwnedFd, SysError> {
        super::clock::watch()
    }

    fn wall_clock_was_set(&self, fd: std::os::fd::BorrowedFd<'_>) -> bool {
        super::clock::was_set(fd)
    }

    fn bind_notify_socket(&self, path: &Path) -> Result<(OwnedFd, FileId), SysError> {
        sockets::bind_datagram(path)
    }

    fn remove_socket(&self, path: &Path, id: FileId) {
        sockets::remove_socket(path, id);
    }

    fn listen(
        &self,
        l: &flotilla_units::trigger::Listen,
        settings: &flotilla_units::trigger::SocketSettings,
        owner: Option<(u32, u32)>,
    ) -> Result<OwnedFd, SysError> {
        super::listen::open(l, settings, owner)
    }

    fn accept_connection(
        &self,
        fd: std::os::fd::BorrowedFd<'_>,
    ) -> Result<Option<(OwnedFd, flotilla_units::trigger::Peer)>, SysError> {
        super::listen::accept(fd)
    }

    fn connection_peer(&self, fd: std::os::fd::BorrowedFd<'_>) -> flotilla_units::trigger::Peer {
        super::listen::peer_of(fd)
    }

    fn path_watch(&self) -> Result<OwnedFd, SysError> {
        super::paths::instance()
    }

    fn path_watch_add(
        &self,
        fd: std::os::fd::BorrowedFd<'_>,
        path: &Path,
    ) -> Result<i32, SysError> {
        super::paths::add(fd, path)
    }

    fn path_events(&self, fd: std::os::fd::BorrowedFd<'_>) -> Vec<super::paths::PathEvent> {
        super::paths::read(fd)
    }

    fn path_holding(&self, spec: &flotilla_units::trigger::PathSpec) -> Option<PathBuf> {
        super::paths::holding(spec)
    }

    fn udev_available(&self) -> bool {
        super::io::uevents::available()
    }

    fn udev_monitor(&self) -> Result<OwnedFd, SysError> {
        super::io::uevents::open()
    }

    fn udev_messages(&self, fd: std::os::fd::BorrowedFd<'_>) -> super::io::uevents::Uevents {
        super::io::uevents::read(fd)
    }

    fn path_stamp_instance(&self) -> Result<OwnedFd, SysError> {
        super::paths::instance()
    }

    fn path_stamp_add(&self, fd: std::os::fd::BorrowedFd<'_>, path: &Path) -> Result<(), SysError> {
        super::paths::add_or_above(fd, path)
    }

    fn path_stamp_changed(&self, fd: std::os::fd::BorrowedFd<'_>) -> bool {
        !super::paths::read(fd).is_empty()
    }

    fn mount_table_watch(&self) -> Result<OwnedFd, SysError> {
        let path = "/proc/self/mountinfo";
        let fd = nix::fcntl::open(path, OFlag::O_RDONLY | OFlag::O_CLOEXEC, Mode::empty());
        fd.map_err(|e| call_error(format!("open {path}"), e))
    }

    fn make_dir(&self, path: &Path, mode: u32) -> Result<(), SysError> {
        super::paths::make_dir(path, mode)
    }

    fn read_dir(&self, dir: &Path) -> Result<Vec<OsString>, SysError> {
        let err = |e: &std::io::Error| file_error("read directory", dir, e);
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| err(&e))? {
            names.push(entry.map_err(|e| err(&e))?.file_name());
        }
        Ok(names)
    }

    fn list_dir(
        &self,
        dir: &Path,
    ) -> Result<Vec<(OsString, flotilla_systemd::EntryKind)>, SysError> {
        use flotilla_systemd::EntryKind;
        let err = |e: &std::io::Error| file_error("read directory", dir, e);
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| err(&e))? {
            let entry = entry.map_err(|e| err(&e))?;
            let path = entry.path();
            // `file_type` comes from the directory entry (no system call
            // on most file systems); only files need their size.
            let kind = match entry.file_type() {
                Ok(t) if t.is_dir() => EntryKind::Dir,
                Ok(t) if t.is_symlink() => match std::fs::read_link(&path) {
                    Ok(target) => EntryKind::Symlink {
                        target: target.to_string_lossy().into_owned(),
                    },
                    // Gone since it was listed.
                    Err(_) => continue,
                },
                Ok(t) if t.is_file() => EntryKind::File {
                    empty: std::fs::symlink_metadata(&path).is_ok_and(|m| m.len() == 0),
                },
                Ok(_) => EntryKind::File { empty: false },
                Err(_) => continue,
            };
            out.push((entry.file_name(), kind));
        }
        Ok(out)
    }

    fn create_dir_all(&self, dir: &Path) -> Result<(), SysError> {
        std::fs::create_dir_all(dir).map_err(|e| file_error("create directory", dir, &e))
    }

    fn write_file(&self, path: &Path, data: &[u8]) -> Result<(), SysError> {
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".new");
        let tmp = PathBuf::from(tmp);
        std::fs::write(&tmp, data).map_err(|e| file_error("write", &tmp, &e))?;
        std::fs::rename(&tmp, path).map_err(|e| file_error("rename", path, &e))
    }

    fn remove_file(&self, path: &Path) -> Result<(), SysError> {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(file_error("remove", path, &e))
            }
            _ => Ok(()),
        }
    }

    fn file_mtime_us(&self, path: &Path) -> Result<Option<u64>, SysError> {
        match std::fs::metadata(path) {
            Ok(m) => {
                let t = m.modified().map_err(|e| file_error("stat", path, &e))?;
                // As the bus takes it (`NeedDaemonReload`).
                Ok(Some(flotilla_systemd::load::mtime_us(t)))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(file_error("stat", path, &e)),
        }
    }

    fn touch_at(&self, path: &Path, realtime_us: u64) -> Result<(), SysError> {
        if let Some(dir) = path.parent() {
            self.create_dir_all(dir)?;
        }
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| file_error("create", path, &e))?;
        let t = std::time::UNIX_EPOCH + Duration::from_micros(realtime_us);
        f.set_modified(t)
            .map_err(|e| file_error("set the time of", path, &e))
    }

    fn symlink(&self, target: &Path, link: &Path) -> Result<(), SysError> {
        if std::fs::symlink_metadata(link).is_ok_and(|m| m.file_type().is_symlink()) {
            self.remove_file(link)?;
        }
        std::os::unix::fs::symlink(target, link).map_err(|e| file_error("symlink", link, &e))
    }

    fn chown(&self, path: &Path, uid: u32, gid: u32) -> Result<(), SysError> {
        std::os::unix::fs::chown(path, Some(uid), Some(gid))
            .map_err(|e| file_error("chown", path, &e))
    }

    fn read_link(&self, path: &Path) -> Result<PathBuf, SysError> {
        std::fs::read_link(path).map_err(|e| file_error("readlink", path, &e))
    }

    fn owner_and_mode(&self, path: &Path) -> Result<FileOwner, SysError> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).map_err(|e| file_error("stat", path, &e))?;
        Ok(FileOwner {
            uid: m.uid(),
            gid: m.gid(),
            mode: m.mode() & 0o7777,
        })
    }

    fn geteuid(&self) -> u32 {
        nix::unistd::geteuid().as_raw()
    }

    /// glibc's `malloc` keeps the pages of what was freed inside its heap
    /// (only the top is given back on its own): after loading 1000 unit
    /// files that is 0.6 MiB. `malloc_trim(3)` walks the free chunks and
    /// gives back their whole pages. Its thresholds are fixed too: left
    /// to itself, glibc raises them to the largest block freed, so that a
    /// status reply of 1000 units (half a megabyte, and its list) is kept
    /// in the heap after it was sent rather than mapped on its own and
    /// unmapped. musl's allocator maps big blocks on their own and gives
    /// back free groups as it goes: nothing to do there.
    fn release_free_memory(&self) {
        // The stacks of the children a launch had in flight at once.
        spawn::trim_stacks();
        #[cfg(target_env = "gnu")]
        // SAFETY: mallopt(3) and malloc_trim(3) take no pointers; the
        // first sets thresholds, the second only gives back pages that the
        // allocator holds free; the init has one thread.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 128 * 1024);
            libc::malloc_trim(0);
        }
    }

    fn set_mempolicy(
        &self,
        request: &Result<MemRequest, InvalidPolicy>,
    ) -> Result<MemOutcome, SysError> {
        super::procs::placement::set_mempolicy(request).map_err(|e| SysError::Call {
            call: "set_mempolicy".to_owned(),
            errno: Os(Errno::from_raw(e)),
        })
    }

    fn journal_send(&self, datagram: &[u8]) {
        super::journal::send_native(datagram);
    }

    fn console(&self, line: &str) {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }

    fn stdio_open(&self, fd: i32) -> bool {
        // SAFETY: fcntl(F_GETFD) only queries the descriptor table.
        unsafe { libc::fcntl(fd, libc::F_GETFD) >= 0 }
    }

    fn open_stdout_nonblocking(&self) -> Result<OwnedFd, SysError> {
        let flags = libc::O_WRONLY | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY;
        // SAFETY: a valid NUL-terminated path; the result is checked.
        let fd = unsafe { libc::open(c"/proc/self/fd/1".as_ptr(), flags) };
        if fd >= 0 {
            // SAFETY: a descriptor just opened, ours alone.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        // A socket (ENXIO), or a pipe another user made (EACCES: a
        // container run with `--user`): a copy, written with
        // MSG_DONTWAIT or RWF_NOWAIT (`write_now`).
        // SAFETY: fcntl(F_DUPFD_CLOEXEC) only makes a descriptor.
        let dup = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3) };
        if dup < 0 {
            return Err(SysError::Call {
                call: "dup standard output".to_owned(),
                errno: Os(Errno::last()),
            });
        }
        // SAFETY: a descriptor just made, ours alone.
        Ok(unsafe { OwnedFd::from_raw_fd(dup) })
    }

    fn write_now(&self, fd: RawFd, buf: &[u8]) -> Result<usize, SysError> {
        super::io::nowait::write(fd, buf)
    }

    fn stdin_is_terminal(&self) -> bool {
        // SAFETY: isatty(3) only queries the descriptor.
        unsafe { libc::isatty(0) == 1 }
    }

    fn open_console(&self) -> Result<(), SysError> {
        let path = c"/dev/console";
        // Not close-on-exec: the descriptor becomes 0, 1 or 2, which
        // children inherit.
        // SAFETY: a valid NUL-terminated path.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NOCTTY) };
        if fd < 0 {
            return Err(SysError::Read {
                path: PathBuf::from("/dev/console"),
                errno: Os(Errno::last()),
            });
        }
        for target in 0..3 {
            if target != fd && !self.stdio_open(target) {
                // SAFETY: both descriptors are valid numbers.
                unsafe { libc::dup2(fd, target) };
            }
        }
        if fd > 2 {
            // SAFETY: `fd` is ours.
            unsafe { libc::close(fd) };
        }
        Ok(())
    }

    fn children_left(&self) -> bool {
        use nix::sys::wait::{waitid, Id, WaitPidFlag};
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        !matches!(waitid(Id::All, flags), Err(Errno::ECHILD))
    }

    fn set_default_path(&self, replace: bool) {
        // On a machine, as systemd's system manager: whatever PATH the
        // kernel or an initramfs left (Debian's lacks /usr/local) is not
        // the units'.
        if replace || std::env::var_os("PATH").is_none() {
            std::env::set_var("PATH", super::env::DEFAULT_PATH);
        }
    }

    fn setup_cgroups(&self, pid1: bool) -> Result<(), String> {
        super::unitrun::setup(pid1)
    }

    fn start_unit(
        &self,
        name: &str,
        ctx: &flotilla_units::context::ServiceContext,
        owner: Option<(u32, u32)>,
    ) -> Result<super::unitrun::UnitRun, String> {
        super::unitrun::start(name, ctx, owner)
    }

    fn export_unit_state(
        &self,
        name: &str,
        syslog: &flotilla_units::context::journal::Syslog,
    ) -> Result<(), String> {
        super::unit_state::export(std::path::Path::new(super::unit_state::DIR), name, syslog)
    }

    fn remove_unit_state(&self, name: &str) {
        super::unit_state::remove(std::path::Path::new(super::unit_state::DIR), name)
    }

    fn unit_pids(&self, run: &super::unitrun::UnitRun) -> Vec<Pid> {
        super::unitrun::pids(run)
    }

    fn unit_usage(&self, run: &super::unitrun::UnitRun) -> Option<flotilla_units::protocol::Usage> {
        super::unitrun::usage(run)
    }

    fn unit_oom_kills(&self, run: &super::unitrun::UnitRun) -> u32 {
        super::unitrun::oom_kills(run)
    }

    fn init_oom_kills(&self) -> u32 {
        super::unitrun::init_oom_kills()
    }

    fn signal_unit(
        &self,
        run: &super::unitrun::UnitRun,
        signal: i32,
        reached: super::Reached,
    ) -> usize {
        super::unitrun::signal(run, signal, reached)
    }

    fn adopt(
        &self,
        run: &super::unitrun::UnitRun,
        pids: &[super::Pid],
    ) -> Result<super::adopt::Adoption, String> {
        let a = super::adopt::adopt(run, pids)?;
        Ok(a)
    }

    fn readopt(
        &self,
        run: &super::unitrun::UnitRun,
        carried: Vec<(super::Pid, OwnedFd)>,
    ) -> Result<super::adopt::Adoption, String> {
        super::adopt::resume(run, carried)
    }

    fn adopted_left(&self, adoption: &mut super::adopt::Adoption, fd: Option<RawFd>) -> bool {
        match fd {
            Some(fd) => super::adopt::any_left(adoption, fd),
            None => super::adopt::left_now(adoption),
        }
    }

    fn signal_adopted(
        &self,
        adoption: &super::adopt::Adoption,
        signal: i32,
        but: super::Pid,
    ) -> usize {
        super::adopt::signal(adoption, signal, but)
    }

    fn end_unit(&self, run: &super::unitrun::UnitRun, keep_runtime: bool) -> Vec<(Pid, String)> {
        super::unitrun::end(run, keep_runtime)
    }

    fn teardown_cgroups(&self) {
        super::unitrun::teardown()
    }

    fn check_conditions(
        &self,
        spec: &flotilla_units::spec::UnitSpec,
    ) -> flotilla_units::planner::CheckOutcome {
        flotilla_units::planner::check_unit(spec, &super::conditions::Machine)
    }

    fn reexec(
        &self,
        snapshot: &[u8],
        keep: &[RawFd],
    ) -> Result<std::convert::Infallible, SysError> {
        super::reexec::exec(snapshot, keep)
    }

    fn adopt_fd(&self, fd: RawFd) -> Result<OwnedFd, SysError> {
        super::reexec::adopt(fd)
    }

    fn slice_cgroup(&self, slice: &str) -> Option<std::path::PathBuf> {
        super::unitrun::slice_cgroup(slice)
    }

    fn attach_to_unit(
        &self,
        run: &super::unitrun::UnitRun,
        sub: Option<&str>,
        pid: super::Pid,
    ) -> Result<(), String> {
        super::attach::attach(run, sub, pid)
    }

    fn can_freeze(&self, dir: &std::path::Path) -> bool {
        super::freezer::supported(dir)
    }

    fn freeze_cgroup(
        &self,
        dir: &std::path::Path,
        frozen: bool,
    ) -> Result<super::adopt::Adoption, String> {
        super::freezer::freeze(dir, frozen)
    }

    fn cgroup_frozen(&self, watch: &mut super::adopt::Adoption) -> bool {
        super::adopt::frozen(watch)
    }
}
