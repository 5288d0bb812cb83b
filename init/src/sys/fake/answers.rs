//! How [`FakeSys`] answers each system call: it records the call, fails
//! it if the test scripted a failure, and otherwise does what the kernel
//! would, on the fake's own state (its processes, files, clock) or, for
//! the descriptors the loop watches, on real pipes and abstract sockets.

use std::ffi::OsString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd, RawFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram, UnixListener};
use std::path::{Path, PathBuf};
use std::time::Duration;

use flotilla_units::context::placement::{InvalidPolicy, MemRequest};
use flotilla_units::time::Instant;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollTimeout};

use super::super::events::epoll_flags;
use super::super::unitrun::UnitRun;
use super::super::{
    sockets, Accepted, Errno, Event, ExitStatus, FileId, FileOwner, Interest, MemOutcome,
    MountRequest, Os, Pid, RebootCmd, SpawnRequest, Sys, SysError, Token, UserInfo, WallTime,
};
use super::{Call, FakeSys, Op};

impl Sys for FakeSys {
    fn spawn(&self, req: &SpawnRequest<'_>) -> Result<Pid, SysError> {
        self.spawn_child(req)
    }

    fn kill(&self, pid: Pid, signal: i32) -> Result<(), SysError> {
        self.record(Some(Op::Kill), Call::Kill { pid, signal })?;
        self.signalled(pid, signal);
        Ok(())
    }

    fn killpg(&self, pgid: Pid, signal: i32) -> Result<(), SysError> {
        self.record(Some(Op::KillPg), Call::KillPg { pgid, signal })?;
        self.signalled(pgid, signal);
        Ok(())
    }

    fn pgid(&self, pid: Pid) -> Option<Pid> {
        self.pgid_of(pid)
    }

    fn kill_all(&self, signal: i32) -> Result<(), SysError> {
        self.record(Some(Op::KillAll), Call::KillAll { signal })?;
        let live: Vec<Pid> = self.state.borrow().live.iter().copied().collect();
        for pid in live {
            self.signalled(pid, signal);
        }
        Ok(())
    }

    fn wait_any(&self) -> Result<Option<(Pid, ExitStatus)>, SysError> {
        if let Some(err) = self.failure(Op::WaitAny) {
            return Err(err);
        }
        let mut st = self.state.borrow_mut();
        let exit = st.exits.pop_front();
        if let Some((pid, _)) = exit {
            st.live.remove(&pid);
        }
        Ok(exit)
    }

    fn monotonic_now(&self) -> Instant {
        Instant(self.state.borrow().monotonic)
    }

    fn wall_now(&self) -> WallTime {
        self.state.borrow().wall
    }

    fn read_file_limited(&self, path: &Path, max: usize) -> Result<Vec<u8>, SysError> {
        self.record(
            None,
            Call::ReadFile {
                path: path.to_owned(),
                max,
            },
        )?;
        super::tree::read_limited(&self.state.borrow(), path, max)
    }

    fn read_file_chased(
        &self,
        path: &Path,
        max: usize,
    ) -> Result<crate::sys::ChasedFile, SysError> {
        let (end, owner, unsafe_step) = super::tree::chase(&self.state.borrow(), path)?;
        Ok(crate::sys::ChasedFile {
            bytes: self.read_file_limited(&end, max)?,
            owner,
            unsafe_step,
        })
    }

    fn set_child_subreaper(&self) -> Result<(), SysError> {
        self.record(Some(Op::SetChildSubreaper), Call::SetChildSubreaper)
    }

    fn getpid(&self) -> Pid {
        self.state.borrow().pid
    }

    fn raise_nofile_limit(&self) -> Result<u64, SysError> {
        Ok(1 << 20)
    }

    fn session_of(&self, pid: Pid) -> Option<Pid> {
        // Every fake process leads its own session.
        Some(pid)
    }

    fn lookup_user(&self, user: &str) -> Result<UserInfo, SysError> {
        self.record(None, Call::LookupUser(user.to_owned()))?;
        self.state
            .borrow()
            .users
            .get(user)
            .cloned()
            .ok_or_else(|| SysError::NoUser(user.to_owned()))
    }

    fn lookup_group(&self, group: &str) -> Result<u32, SysError> {
        self.record(None, Call::LookupGroup(group.to_owned()))?;
        if let Ok(n) = group.parse::<u32>() {
            return Ok(n);
        }
        self.state
            .borrow()
            .groups
            .get(group)
            .copied()
            .ok_or_else(|| SysError::NoGroup(group.to_owned()))
    }

    fn id_in_use(&self, id: u32) -> bool {
        let state = self.state.borrow();
        state.users.values().any(|u| u.uid == id) || state.groups.values().any(|&g| g == id)
    }

    fn mount(&self, req: &MountRequest<'_>) -> Result<(), SysError> {
        self.record(
            Some(Op::Mount),
            Call::Mount {
                source: req.source.map(str::to_owned),
                target: req.target.to_owned(),
                fstype: req.fstype.map(str::to_owned),
                flags: req.flags,
                data: req.data.map(str::to_owned),
            },
        )
    }

    fn umount(&self, target: &Path) -> Result<(), SysError> {
        self.record(Some(Op::Umount), Call::Umount(target.to_owned()))
    }

    fn remount_readonly(&self, target: &Path) -> Result<(), SysError> {
        self.record(
            Some(Op::RemountReadonly),
            Call::RemountReadonly(target.to_owned()),
        )
    }

    fn sync(&self) {
        let _ = self.record(None, Call::Sync);
    }

    fn reboot(&self, cmd: RebootCmd) -> Result<(), SysError> {
        self.record(Some(Op::Reboot), Call::Reboot(cmd))
    }

    fn set_cad_disabled(&self) -> Result<(), SysError> {
        self.record(Some(Op::SetCadDisabled), Call::SetCadDisabled)
    }

    fn sethostname(&self, name: &str) -> Result<(), SysError> {
        self.record(Some(Op::Sethostname), Call::Sethostname(name.to_owned()))
    }

    fn write_sysctl(&self, path: &Path, value: &str) -> Result<(), SysError> {
        self.record(
            Some(Op::WriteSysctl),
            Call::WriteSysctl(path.to_owned(), value.to_owned()),
        )
    }

    fn open_events(&self) -> Result<(), SysError> {
        if self.state.borrow().epoll.is_some() {
            return Ok(());
        }
        self.record(Some(Op::OpenEvents), Call::OpenEvents)?;
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC).map_err(|e| SysError::Call {
            call: "epoll_create1".into(),
            errno: Os(e),
        })?;
        self.state.borrow_mut().epoll = Some(epoll);
        Ok(())
    }

    fn wait(&self, events: &mut Vec<Event>, timeout: Option<Duration>) -> Result<(), SysError> {
        self.record(None, Call::Wait(timeout))?;
        let hook = self.on_wait.borrow_mut().take();
        let hooked = hook.is_some();
        if let Some(mut hook) = hook {
            hook(self, timeout);
            self.on_wait.borrow_mut().get_or_insert(hook);
        }
        let before = events.len();
        let mut st = self.state.borrow_mut();
        events.extend(st.signals.drain(..).map(Event::Signal));
        if let Some(epoll) = st.epoll.as_ref() {
            let mut ready = [EpollEvent::empty(); 64];
            let n = epoll.wait(&mut ready, EpollTimeout::ZERO).unwrap_or(0);
            events.extend(
                ready
                    .iter()
                    .take(n)
                    .map(|e| Event::Ready(Token(usize::try_from(e.data()).unwrap_or(usize::MAX)))),
            );
        }
        let nothing = events.len() == before;
        let held = st.clock_held;
        st.idle = nothing && !hooked && (timeout.is_none() || held);
        drop(st);
        if nothing && !hooked && !held {
            if let Some(d) = timeout {
                self.advance(d);
            }
        }
        Ok(())
    }

    fn watch(&self, fd: RawFd, token: Token, interest: Interest) -> Result<(), SysError> {
        self.record(None, Call::Watch(token, interest))?;
        let ev = EpollEvent::new(epoll_flags(interest), token.0 as u64);
        // SAFETY: the caller keeps `fd` open for the call (see `Sys::watch`).
        let fd_ref = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        self.with_epoll(|e| e.add(fd_ref, ev))?
            .map_err(|e| SysError::Call {
                call: "epoll_ctl(ADD)".into(),
                errno: Os(e),
            })?;
        self.state.borrow_mut().watched.insert(fd, token);
        Ok(())
    }

    fn rewatch(&self, fd: RawFd, token: Token, interest: Interest) -> Result<(), SysError> {
        self.record(None, Call::Rewatch(token, interest))?;
        let mut ev = EpollEvent::new(epoll_flags(interest), token.0 as u64);
        // SAFETY: as in `watch`.
        let fd_ref = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        self.with_epoll(|e| e.modify(fd_ref, &mut ev))?
            .map_err(|e| SysError::Call {
                call: "epoll_ctl(MOD)".into(),
                errno: Os(e),
            })
    }

    fn unwatch(&self, fd: RawFd) -> Result<(), SysError> {
        let token = self.state.borrow_mut().watched.remove(&fd);
        self.record(None, Call::Unwatch(token.unwrap_or(Token(usize::MAX))))?;
        // SAFETY: as in `watch`.
        let fd_ref = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        self.with_epoll(|e| e.delete(fd_ref))?
            .map_err(|e| SysError::Call {
                call: "epoll_ctl(DEL)".into(),
                errno: Os(e),
            })
    }

    fn bind_listener(&self, path: &Path) -> Result<(UnixListener, FileId), SysError> {
        sockets::check_socket_path(path)?;
        self.record(Some(Op::BindListener), Call::BindListener(path.to_owned()))?;
        let name = self.socket_name();
        let bound = SocketAddr::from_abstract_name(&name)
            .and_then(|addr| UnixListener::bind_addr(&addr))
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(|e| Self::socket_error(path, "bind", &e))?;
        self.state.borrow_mut().listener = Some(name);
        Ok((bound, FileId::default()))
    }

    fn accept(&self, listener: &UnixListener) -> Result<Option<Accepted>, SysError> {
        match listener.accept() {
            Ok((stream, _)) => {
                let _ = stream.set_nonblocking(true);
                let uid = self.state.borrow().peer_uid;
                let pid = i32::try_from(std::process::id()).unwrap_or(0);
                Ok(Some(Accepted { stream, uid, pid }))
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(Self::socket_error(Path::new("control"), "accept", &e)),
        }
    }

    /// An `eventfd` nothing writes: a test that sets the fake's wall clock
    /// ([`FakeSys::jump_wall`]) hands the readiness to the init itself.
    fn wall_clock_watch(&self) -> Result<OwnedFd, SysError> {
        // SAFETY: plain system call; the result is checked.
        let raw = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if raw < 0 {
            return Err(SysError::Call {
                call: "eventfd".into(),
                errno: super::Os(super::Errno::last()),
            });
        }
        // SAFETY: `raw` is a new descriptor that nothing else owns.
        Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(raw) })
    }

    fn wall_clock_was_set(&self, _fd: std::os::fd::BorrowedFd<'_>) -> bool {
        self.take_wall_was_set()
    }

    fn bind_notify_socket(&self, path: &Path) -> Result<(OwnedFd, FileId), SysError> {
        sockets::check_socket_path(path)?;
        self.record(
            Some(Op::BindNotifySocket),
            Call::BindNotifySocket(path.to_owned()),
        )?;
        let name = self.socket_name();
        let sock = SocketAddr::from_abstract_name(&name)
            .and_then(|addr| UnixDatagram::bind_addr(&addr))
            .and_then(|s| s.set_nonblocking(true).map(|()| s))
            .map_err(|e| Self::socket_error(path, "bind", &e))?;
        nix::sys::socket::setsockopt(&sock.as_fd(), nix::sys::socket::sockopt::PassCred, &true)
            .map_err(|e| SysError::Socket {
                path: path.to_owned(),
                op: "setsockopt SO_PASSCRED",
                errno: Os(e),
            })?;
        self.state
            .borrow_mut()
            .notify_sockets
            .insert(path.to_owned(), name);
        Ok((OwnedFd::from(sock), FileId::default()))
    }

    fn remove_socket(&self, path: &Path, _id: FileId) {
        let _ = self.record(None, Call::RemoveSocket(path.to_owned()));
        self.state.borrow_mut().notify_sockets.remove(path);
    }

    fn listen(
        &self,
        l: &flotilla_units::trigger::Listen,
        _settings: &flotilla_units::trigger::SocketSettings,
        _owner: Option<(u32, u32)>,
    ) -> Result<OwnedFd, SysError> {
        let line = l.to_string();
        self.record(Some(Op::Listen), Call::Listen(line.clone()))?;
        let name = self.socket_name();
        let sock = SocketAddr::from_abstract_name(&name)
            .and_then(|addr| UnixListener::bind_addr(&addr))
            .and_then(|s| s.set_nonblocking(true).map(|()| s))
            .map_err(|e| SysError::Call {
                call: format!("listen {line}"),
                errno: Os(Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO))),
            })?;
        self.state.borrow_mut().listening.insert(line, name);
        Ok(OwnedFd::from(sock))
    }

    /// The fake's listening sockets are real (abstract unix sockets), so
    /// their connections are taken as the real side takes them.
    fn accept_connection(
        &self,
        fd: std::os::fd::BorrowedFd<'_>,
    ) -> Result<Option<(OwnedFd, flotilla_units::trigger::Peer)>, SysError> {
        crate::sys::listen::accept(fd)
    }

    fn connection_peer(&self, fd: std::os::fd::BorrowedFd<'_>) -> flotilla_units::trigger::Peer {
        crate::sys::listen::peer_of(fd)
    }

    fn path_watch(&self) -> Result<OwnedFd, SysError> {
        let fd = self.wall_clock_watch()?;
        let copy = fd.try_clone().map_err(|e| SysError::Call {
            call: "dup".into(),
            errno: Os(Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO))),
        })?;
        self.state.borrow_mut().path_instances.push(copy);
        Ok(fd)
    }

    fn path_watch_add(
        &self,
        _fd: std::os::fd::BorrowedFd<'_>,
        path: &Path,
    ) -> Result<i32, SysError> {
        self.record(None, Call::PathWatch(path.to_owned()))?;
        let mut st = self.state.borrow_mut();
        let wd = match st.path_wds.iter().position(|p| p == path) {
            Some(i) => i,
            None => {
                st.path_wds.push(path.to_owned());
                st.path_wds.len() - 1
            }
        };
        Ok(i32::try_from(wd).unwrap_or(i32::MAX))
    }

    fn path_events(&self, fd: BorrowedFd<'_>) -> Vec<crate::sys::paths::PathEvent> {
        self.read_path_events(fd)
    }

    fn udev_available(&self) -> bool {
        self.udev_enabled()
    }

    fn udev_monitor(&self) -> Result<OwnedFd, SysError> {
        self.open_udev()
    }

    fn udev_messages(&self, fd: BorrowedFd<'_>) -> crate::sys::io::uevents::Uevents {
        self.read_uevents(fd)
    }

    fn path_stamp_instance(&self) -> Result<OwnedFd, SysError> {
        self.open_stamp_watch()
    }

    // The fake's watch sees every change wherever it is.
    fn path_stamp_add(&self, _fd: BorrowedFd<'_>, _path: &Path) -> Result<(), SysError> {
        self.failure(Op::PathStampAdd).map_or(Ok(()), Err)
    }

    fn path_stamp_changed(&self, _fd: BorrowedFd<'_>) -> bool {
        self.stamp_changed()
    }

    fn mount_table_watch(&self) -> Result<OwnedFd, SysError> {
        self.open_mount_table()
    }

    fn path_holding(&self, spec: &flotilla_units::trigger::PathSpec) -> Option<PathBuf> {
        self.path_holds(spec)
    }

    fn make_dir(&self, path: &Path, _mode: u32) -> Result<(), SysError> {
        self.record(Some(Op::CreateDir), Call::CreateDir(path.to_owned()))?;
        let mut st = self.state.borrow_mut();
        st.changes += 1;
        st.dirs.insert(path.to_owned());
        Ok(())
    }

    fn read_dir(&self, dir: &Path) -> Result<Vec<OsString>, SysError> {
        self.record(None, Call::ReadDir(dir.to_owned()))?;
        let st = self.state.borrow();
        let names: Vec<OsString> = st
            .files
            .keys()
            .chain(st.dirs.iter())
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name().map(OsString::from))
            .collect();
        if names.is_empty() && !st.dirs.contains(dir) {
            return Err(SysError::File {
                op: "read directory",
                path: dir.to_owned(),
                errno: Os(Errno::ENOENT),
            });
        }
        Ok(names)
    }

    fn list_dir(
        &self,
        dir: &Path,
    ) -> Result<Vec<(OsString, flotilla_systemd::EntryKind)>, SysError> {
        self.record(None, Call::ReadDir(dir.to_owned()))?;
        super::tree::list_dir(&self.state.borrow(), dir)
    }

    fn create_dir_all(&self, dir: &Path) -> Result<(), SysError> {
        self.record(Some(Op::CreateDir), Call::CreateDir(dir.to_owned()))?;
        let mut st = self.state.borrow_mut();
        st.changes += 1;
        st.dirs.insert(dir.to_owned());
        Ok(())
    }

    fn write_file(&self, path: &Path, data: &[u8]) -> Result<(), SysError> {
        self.record(Some(Op::WriteFile), Call::WriteFile(path.to_owned()))?;
        let mut st = self.state.borrow_mut();
        st.files.insert(path.to_owned(), data.to_vec());
        // A new file renamed over it: a new name in its directory.
        st.modified(path, true);
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> Result<(), SysError> {
        self.record(None, Call::RemoveFile(path.to_owned()))?;
        let mut st = self.state.borrow_mut();
        if st.files.remove(path).is_some() {
            st.unlinked(path);
        }
        st.mtimes.remove(path);
        Ok(())
    }

    fn file_mtime_us(&self, path: &Path) -> Result<Option<u64>, SysError> {
        self.record(None, Call::FileMtime(path.to_owned()))?;
        Ok(self.state.borrow().mtimes.get(path).copied())
    }

    fn touch_at(&self, path: &Path, realtime_us: u64) -> Result<(), SysError> {
        self.record(None, Call::Touch(path.to_owned(), realtime_us))?;
        let mut st = self.state.borrow_mut();
        st.changes += 1;
        st.mtimes.insert(path.to_owned(), realtime_us);
        Ok(())
    }

    fn symlink(&self, target: &Path, link: &Path) -> Result<(), SysError> {
        self.record(
            None,
            Call::Symlink {
                target: target.to_owned(),
                link: link.to_owned(),
            },
        )?;
        let mut st = self.state.borrow_mut();
        st.links.insert(link.to_owned(), target.to_owned());
        st.modified(link, true);
        Ok(())
    }

    fn chown(&self, path: &Path, uid: u32, gid: u32) -> Result<(), SysError> {
        self.record(
            None,
            Call::Chown {
                path: path.to_owned(),
                uid,
                gid,
            },
        )
    }

    fn owner_and_mode(&self, path: &Path) -> Result<FileOwner, SysError> {
        self.record(None, Call::Stat(path.to_owned()))?;
        let st = self.state.borrow();
        Ok(st.owners.get(path).copied().unwrap_or(FileOwner {
            uid: 0,
            gid: 0,
            mode: 0o755,
        }))
    }

    fn read_link(&self, path: &Path) -> Result<PathBuf, SysError> {
        self.record(None, Call::ReadLink(path.to_owned()))?;
        self.state
            .borrow()
            .links
            .get(path)
            .cloned()
            .ok_or_else(|| SysError::File {
                op: "readlink",
                path: path.to_owned(),
                errno: Os(Errno::ENOENT),
            })
    }

    fn geteuid(&self) -> u32 {
        self.state.borrow().euid
    }

    fn release_free_memory(&self) {
        let _ = self.record(None, Call::ReleaseFreeMemory);
    }

    fn set_mempolicy(
        &self,
        request: &Result<MemRequest, InvalidPolicy>,
    ) -> Result<MemOutcome, SysError> {
        self.record(None, Call::SetMempolicy(request.clone()))?;
        // As the kernel: a policy it would refuse is EINVAL.
        request
            .as_ref()
            .map(|_| MemOutcome::Set)
            .map_err(|_| SysError::Call {
                call: "set_mempolicy".to_owned(),
                errno: Os(Errno::EINVAL),
            })
    }

    fn journal_send(&self, datagram: &[u8]) {
        self.state.borrow_mut().journal.push(datagram.to_vec());
    }

    fn console(&self, line: &str) {
        let mut st = self.state.borrow_mut();
        // Also on the test's own output, which the harness shows on failure.
        if st.echo {
            println!("{line}");
        }
        st.console.push(line.to_owned());
    }

    fn open_stdout_nonblocking(&self) -> Result<OwnedFd, SysError> {
        std::fs::File::open("/dev/null")
            .map(OwnedFd::from)
            .map_err(|e| SysError::Call {
                call: "open /dev/null".to_owned(),
                errno: Os(Errno::from_raw(e.raw_os_error().unwrap_or(0))),
            })
    }

    fn write_now(&self, _fd: RawFd, buf: &[u8]) -> Result<usize, SysError> {
        let mut st = self.state.borrow_mut();
        let n = buf.len().min(st.stdout_room);
        st.stdout_room -= n;
        st.stdout
            .extend_from_slice(buf.get(..n).unwrap_or_default());
        Ok(n)
    }

    fn stdin_is_terminal(&self) -> bool {
        self.state.borrow().stdin_terminal
    }

    fn stdio_open(&self, fd: i32) -> bool {
        let st = self.state.borrow();
        usize::try_from(fd).is_ok_and(|i| st.stdio_open.get(i) == Some(&true))
    }

    fn open_console(&self) -> Result<(), SysError> {
        self.record(Some(Op::OpenConsole), Call::OpenConsole)?;
        let mut st = self.state.borrow_mut();
        if !st.console_ok {
            return Err(SysError::Read {
                path: PathBuf::from("/dev/console"),
                errno: Os(Errno::ENOENT),
            });
        }
        st.stdio_open = [true; 3];
        Ok(())
    }

    fn children_left(&self) -> bool {
        let st = self.state.borrow();
        !st.live.is_empty() || !st.exits.is_empty()
    }

    fn set_default_path(&self, replace: bool) {
        let _ = self.record(None, Call::SetDefaultPath(replace));
    }

    // The fake has no cgroups: a unit's run holds nothing, and a stop
    // signals process groups, as on a host without cgroup2.
    fn setup_cgroups(&self, _pid1: bool) -> Result<(), String> {
        Ok(())
    }

    fn start_unit(
        &self,
        name: &str,
        ctx: &flotilla_units::context::ServiceContext,
        _owner: Option<(u32, u32)>,
    ) -> Result<UnitRun, String> {
        self.state
            .borrow_mut()
            .runs
            .push((name.to_string(), ctx.directories.clone()));
        Ok(UnitRun::default())
    }

    fn export_unit_state(
        &self,
        _name: &str,
        _syslog: &flotilla_units::context::journal::Syslog,
    ) -> Result<(), String> {
        Ok(())
    }

    fn remove_unit_state(&self, _name: &str) {}

    fn unit_pids(&self, _run: &UnitRun) -> Vec<Pid> {
        Vec::new()
    }

    fn unit_usage(&self, _run: &UnitRun) -> Option<flotilla_units::protocol::Usage> {
        None
    }

    fn unit_oom_kills(&self, _run: &UnitRun) -> u32 {
        std::mem::take(&mut self.state.borrow_mut().oom_kills)
    }

    fn init_oom_kills(&self) -> u32 {
        std::mem::take(&mut self.state.borrow_mut().init_oom_kills)
    }

    fn signal_unit(&self, _run: &UnitRun, _signal: i32, _reached: crate::sys::Reached) -> usize {
        0
    }

    fn adopt(&self, _run: &UnitRun, _pids: &[Pid]) -> Result<crate::sys::adopt::Adoption, String> {
        Err("the fake system adopts no process".to_string())
    }

    fn readopt(
        &self,
        _run: &UnitRun,
        _carried: Vec<(Pid, std::os::fd::OwnedFd)>,
    ) -> Result<crate::sys::adopt::Adoption, String> {
        Err("the fake system adopts no process".to_string())
    }

    fn adopted_left(
        &self,
        _adoption: &mut crate::sys::adopt::Adoption,
        _fd: Option<RawFd>,
    ) -> bool {
        false
    }

    fn signal_adopted(
        &self,
        _adoption: &crate::sys::adopt::Adoption,
        _signal: i32,
        _but: Pid,
    ) -> usize {
        0
    }

    fn end_unit(&self, _run: &UnitRun, _keep_runtime: bool) -> Vec<(Pid, String)> {
        Vec::new()
    }

    fn teardown_cgroups(&self) {}

    fn check_conditions(
        &self,
        spec: &flotilla_units::spec::UnitSpec,
    ) -> flotilla_units::planner::CheckOutcome {
        let _ = self.record(None, Call::CheckConditions(spec.name.clone()));
        flotilla_units::planner::check_unit(spec, &self.state.borrow().machine)
    }

    fn reexec(
        &self,
        snapshot: &[u8],
        keep: &[RawFd],
    ) -> Result<std::convert::Infallible, SysError> {
        self.record(
            None,
            Call::Reexec {
                snapshot: snapshot.to_vec(),
                keep: keep.to_vec(),
            },
        )?;
        // The fake never becomes another program: the exec fails as for a
        // file that is not one.
        Err(SysError::Call {
            call: "execve".into(),
            errno: crate::sys::Os(crate::sys::Errno::ENOEXEC),
        })
    }

    fn adopt_fd(&self, fd: RawFd) -> Result<OwnedFd, SysError> {
        Err(SysError::Call {
            call: format!("adopt descriptor {fd}"),
            errno: crate::sys::Os(crate::sys::Errno::EBADF),
        })
    }

    fn attach_to_unit(&self, _run: &UnitRun, _sub: Option<&str>, _pid: Pid) -> Result<(), String> {
        // The fake's runs have no cgroup, so the runtime refuses first.
        Err("the fake system has no cgroups".to_string())
    }

    fn slice_cgroup(&self, _slice: &str) -> Option<std::path::PathBuf> {
        None
    }

    fn can_freeze(&self, _dir: &std::path::Path) -> bool {
        false
    }

    fn freeze_cgroup(
        &self,
        _dir: &std::path::Path,
        _frozen: bool,
    ) -> Result<crate::sys::adopt::Adoption, String> {
        Err("the fake system has no cgroup freezer".to_string())
    }

    fn cgroup_frozen(&self, _watch: &mut crate::sys::adopt::Adoption) -> bool {
        false
    }
}
