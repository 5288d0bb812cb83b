//! The OS layer: every system call the init makes goes through the [`Sys`]
//! trait, the one door to the kernel. Nothing here imports the rest of the
//! init: `sys/` is its bottom.
//!
//! - [`real::RealSys`] implements it with `nix` and `libc`;
//! - [`fake::FakeSys`] records every call and returns scripted results, with
//!   a clock that moves only when the test (or a wait with a time-out) moves
//!   it, so the whole event loop runs in unit tests without forking,
//!   binding in the file system or sleeping;
//! - [`unitrun`]: one run of a unit, what [`Sys::start_unit`] makes and
//!   [`Sys::end_unit`] removes, drawn from the rooms below;
//! - [`env::Env`] builds a child's environment (and parses environment
//!   files); [`mountinfo`] parses `/proc/self/mountinfo`. Both are pure.
//!
//! # Rooms
//!
//! What `RealSys` calls is kept in five rooms by concept, each with its
//! module doc (what it owns, and what it does not know):
//!
//! - [`procs`]: starting processes (the spawn path, its request and
//!   environment, `clone3`, pidfds), the init's own limits and re-exec,
//!   users and groups, and the helper programs the init runs;
//! - [`exec`]: a unit's exec context, prepared in the parent and applied
//!   by the child before `execve` (identity, credentials, seccomp, user
//!   namespaces, terminals, journald's stream);
//! - [`fs`]: files and mounts (mount calls and namespace steps, a unit's
//!   directories, safe path walks, path units' inotify, the machine's
//!   facts for conditions);
//! - [`cgroups`]: cgroup v2, its eBPF programs, the freezer, attaching
//!   and adopting processes;
//! - [`io`]: the event queue, the wall clock's watch, sockets and
//!   descriptors, memory files.
//!
//! Their modules are also named here as before (`sys::cgroup`,
//! `sys::spawn`, …): the rest of the init reaches them by those names.
//! The real-process tests of `RealSys` are in `tests/`.
//!
//! # What is behind the trait, and what is not
//!
//! Behind the trait: everything that reaches outside the init's own memory
//! or that a test cannot undo — processes (spawn, signal, reap), clocks,
//! waiting for signals and readiness, files it reads, directories it lists
//! or makes, sockets it binds in the file system and the connections it
//! accepts, users, `chown`, mounts, `reboot(2)`, the hostname, the console,
//! and the allocator's free memory.
//!
//! Not behind it: reading and writing the descriptors the loop already
//! holds (output pipes in [`crate::outpipe`], notify datagrams in
//! [`crate::notify`], control connections in [`crate::control`]), and the
//! pipes themselves, which never leave the process. They are real
//! descriptors under the fake too (the fake's sockets live in the abstract
//! namespace), so a loop test exercises the real reading code. The init
//! writes no log file: the log writer (`flotilla-logd`) does, outside
//! PID 1 (`runtime/logfeed.rs`).
//!
//! # Descriptors
//!
//! Every descriptor this crate creates is close-on-exec (`pipe2(O_CLOEXEC)`,
//! `SOCK_CLOEXEC`, `O_CLOEXEC`, `MSG_CMSG_CLOEXEC`, `F_DUPFD_CLOEXEC`), so a
//! spawned child gets exactly its stdin, stdout and stderr. The spawn path
//! does not rely on it: the child takes over only the descriptors below a
//! few slots reserved at start-up and closes those from 3 up
//! (`close_range(2)`, see `procs/spawn/`), which also covers descriptors the
//! init inherited from whoever started it (on kernels before 5.9, without
//! `close_range`, only close-on-exec protects the rest).
//!
//! # Signals
//!
//! Signals are plain `i32` numbers (as [`flotilla_units::spec::Signal`]
//! holds them), so real-time signals work too. The init blocks the ones it
//! handles and reads them as events ([`events::HANDLED_SIGNALS`]). Every
//! spawned child starts with an empty signal mask and every disposition at
//! its default, whatever the init blocks or ignores (Rust ignores
//! `SIGPIPE`).

pub mod cgroups;
pub mod exec;
pub mod fs;
pub mod io;
pub mod procs;

// The rooms' modules, under the names the rest of the init and the rooms
// themselves use (`crate::sys::cgroup`, …).
pub use cgroups::{adopt, attach, cgroup, freezer};
use cgroups::{bpf, devices, ipfilter, slices};
pub use exec::{context, credentials, journal};
use exec::{degrade, host, input_data, kernel, sandbox, seccomp, steps, terminal, userns};
pub use fs::{bind_mount, clean, conditions, dirs, paths, unit_state};
use fs::{chase, mount_api, mount_steps, private_dev};
use io::clock;
pub(crate) use io::memfd;
pub use io::{events, fdpass, kcmp, listen, signals, sockets};
pub use procs::placement::MemOutcome;
use procs::{clone3, pidfd, spawn, spawn_request, users};
pub use procs::{env, generators, ipc, pam, reexec, rlimits};

mod error;
pub mod fake;
mod user_info;
/// `/proc/self/mountinfo`, parsed by `units/` (the bus side reads it too).
pub use flotilla_units::mountinfo;
pub mod real;
pub mod unitrun;

pub use spawn::{program_on_path, set_clone_into_cgroup, ExecOutcome, ExecWatch};
#[cfg(test)]
pub(crate) mod tests;

use std::ffi::OsString;
use std::fmt;
use std::os::fd::{BorrowedFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use flotilla_units::context::placement::{InvalidPolicy, MemRequest};
use flotilla_units::time::Instant;
pub use nix::errno::Errno;
pub use nix::mount::MsFlags;

pub use chase::ChasedFile;
pub use env::Env;
pub use error::{Os, SysError};
pub use events::{Event, Interest, Token};
pub use spawn_request::{Credentials, SpawnRequest, Stdio};
pub use user_info::UserInfo;

/// A process ID, as the kernel and the control protocol spell it.
pub type Pid = i32;

/// The processes a signal has reached already, by process group and by
/// PID: [`Sys::signal_unit`] spares them, so that no process gets one
/// signal twice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reached {
    /// Every process of this process group.
    pub group: Option<Pid>,
    /// This process.
    pub process: Option<Pid>,
}

impl Reached {
    /// Whether `pid` was reached (its process group is asked of the
    /// kernel only when a group was signalled).
    pub fn covers(self, pid: Pid) -> bool {
        // SAFETY: getpgid(2) takes no pointers.
        self.process == Some(pid)
            || self
                .group
                .is_some_and(|g| unsafe { libc::getpgid(pid) } == g)
    }
}

/// The largest `/proc/self/mountinfo` that [`Sys::is_mounted`] reads.
pub const MOUNTINFO_MAX: usize = 4 << 20;

/// Every system call the init makes: processes, time, events, files,
/// sockets, users, this process and the machine.
///
/// Methods take `&self`: the loop owns one value and may lend it out freely;
/// the fake keeps its records behind interior mutability. No method blocks
/// for longer than the system call it wraps ([`Sys::wait`] is the one that
/// waits), and none panics.
pub trait Sys {
    /// Starts a process as `req` describes and returns its PID.
    ///
    /// The program is looked up in the parent (an `argv[0]` without a slash
    /// is searched in the request's `PATH`, or [`env::DEFAULT_PATH`]; a
    /// relative one with a slash is taken from the request's `cwd`), so a
    /// missing program is an error here, not a child that exits 127. The
    /// child is the leader of a new session and process group (its PGID is
    /// its PID), has an empty signal mask and default signal dispositions,
    /// and holds exactly descriptors 0, 1 and 2. One
    /// `clone(CLONE_VM | CLONE_VFORK | CLONE_FILES)` whose child only makes
    /// async-signal-safe calls: its cost does not grow with the descriptors
    /// the init holds, and its failures before `execve(2)` (and that of
    /// `execve` itself) come back as errors here, the child reaped.
    fn spawn(&self, req: &SpawnRequest<'_>) -> Result<Pid, SysError>;

    /// As [`Sys::spawn`], but returns without waiting for the child's
    /// `execve(2)` when it can: the child is then forked (a copy of the
    /// init's memory and descriptor table, as `fork(2)`), and the
    /// [`ExecWatch`] returned tells, once its descriptor is readable or the
    /// child reaped, whether it exec'd or the error [`Sys::spawn`] would
    /// have returned; a handed-off child's watch is that of the process
    /// that goes on (the PID returned). Without one, the child has exec'd
    /// already (a spawn whose child reports back through shared memory: a
    /// journal stream; or a `Sys` that starts nothing).
    fn spawn_started(&self, req: &SpawnRequest<'_>) -> Result<(Pid, Option<ExecWatch>), SysError> {
        self.spawn(req).map(|pid| (pid, None))
    }

    /// `kill(2)`: sends `signal` (0 checks that `pid` exists) to one process.
    fn kill(&self, pid: Pid, signal: i32) -> Result<(), SysError>;

    /// `killpg(3)`: sends `signal` to every process of process group `pgid`
    /// (a unit's main PID, since every child leads its own group).
    fn killpg(&self, pgid: Pid, signal: i32) -> Result<(), SysError>;

    /// `getpgid(2)`: the process group `pid` is in, or `None` when that
    /// cannot be known (it is gone).
    fn pgid(&self, pid: Pid) -> Option<Pid>;

    /// `kill(-1, signal)`: every process the init may signal except itself
    /// (for PID 1's shutdown). `ESRCH` (nobody left) is not an error.
    fn kill_all(&self, signal: i32) -> Result<(), SysError>;

    /// `waitpid(-1, WNOHANG)`: one terminated child, or `None` when no child
    /// has terminated (or there are no children). Call it until `None` after
    /// each `SIGCHLD`: signals coalesce.
    fn wait_any(&self) -> Result<Option<(Pid, ExitStatus)>, SysError>;

    /// `CLOCK_MONOTONIC`, in nanoseconds; it does not count suspend.
    fn monotonic_now(&self) -> Instant;

    /// `CLOCK_REALTIME`: the wall clock, for log timestamps only.
    fn wall_now(&self) -> WallTime;

    /// Reads a whole regular file of at most `max` bytes (a pidfile, an
    /// environment file, `/proc/self/mountinfo`). Opened non-blocking, so a
    /// FIFO planted at `path` cannot hang the loop; anything but a regular
    /// file is refused, and so is a file longer than `max`.
    fn read_file_limited(&self, path: &Path, max: usize) -> Result<Vec<u8>, SysError>;

    /// Reads a small regular file as [`Sys::read_file_limited`] does, its
    /// path's links followed one name at a time and every step checked
    /// as systemd's `CHASE_SAFE` (`flotilla_units::chase`): the file's
    /// owner and the first unsafe step come with its bytes (a pidfile,
    /// `flotilla_units::pidfile`).
    fn read_file_chased(&self, path: &Path, max: usize) -> Result<ChasedFile, SysError>;

    /// `prctl(PR_SET_CHILD_SUBREAPER)`: orphans below the init are
    /// re-parented to it (the supervisor mode of docs/contract.md §2).
    fn set_child_subreaper(&self) -> Result<(), SysError>;

    /// `getpid(2)`: 1 when the init is PID 1.
    fn getpid(&self) -> Pid;

    /// The session id of `pid` (`getsid(2)`), `None` if the process is gone.
    /// A unit's processes share the session its main process leads, which
    /// is how the init tells whether a notify message comes from the unit.
    fn session_of(&self, pid: Pid) -> Option<Pid>;

    /// Raises the soft limit on open files to the hard limit and returns the
    /// new soft limit. Each unit holds a few descriptors (two output pipes,
    /// maybe a notify socket), so a thousand units need more than the usual
    /// soft limit of 1024. Where the init may, the hard limit goes up to
    /// the kernel's most (`fs.nr_open`), as systemd's does, so that a unit's
    /// `LimitNOFILE=infinity` is set to that.
    fn raise_nofile_limit(&self) -> Result<u64, SysError>;

    /// Resolves a user given by name or number (docs/contract.md §3 `user`) through
    /// the passwd and group databases: UID, primary GID, supplementary
    /// groups (`getgrouplist(3)`), home and shell. This reads files (NSS);
    /// do it once per start, not per event.
    fn lookup_user(&self, user: &str) -> Result<UserInfo, SysError>;

    /// Resolves a group given by name or number to its GID.
    fn lookup_group(&self, group: &str) -> Result<u32, SysError>;

    /// Whether `id` is a UID of the passwd database or a GID of the group
    /// database (a failed look-up counts as in use): a dynamic user's
    /// number must be neither (`runtime/dynamic_users.rs`).
    fn id_in_use(&self, id: u32) -> bool;

    /// `mount(2)`.
    fn mount(&self, req: &MountRequest<'_>) -> Result<(), SysError>;

    /// `umount2(2)` without flags.
    fn umount(&self, target: &Path) -> Result<(), SysError>;

    /// Remounts `target` read-only (`MS_REMOUNT | MS_RDONLY`), for the
    /// file systems that cannot be unmounted at shutdown.
    fn remount_readonly(&self, target: &Path) -> Result<(), SysError>;

    /// `sync(2)`.
    fn sync(&self);

    /// `reboot(2)`. Returns only on failure, or when the init is PID 1 of
    /// a PID namespace other than the initial one: there the kernel kills
    /// the init instead (`SIGHUP` for restart, `SIGINT` for power-off and
    /// halt, see `pid_namespaces(7)`), so a container's init should exit
    /// rather than call this.
    fn reboot(&self, cmd: RebootCmd) -> Result<(), SysError>;

    /// `reboot(RB_DISABLE_CAD)`: Ctrl-Alt-Del sends `SIGINT` to PID 1
    /// instead of rebooting at once.
    fn set_cad_disabled(&self) -> Result<(), SysError>;

    /// `sethostname(2)`.
    fn sethostname(&self, name: &str) -> Result<(), SysError>;

    /// Writes a kernel setting under `/proc/sys` in place (`sysctl -w`).
    fn write_sysctl(&self, path: &Path, value: &str) -> Result<(), SysError>;

    // ----- events ----------------------------------------------------------

    /// Makes the event queue ready: blocks [`events::HANDLED_SIGNALS`] so
    /// that they come as [`Event::Signal`]. Idempotent; [`Sys::wait`] and
    /// [`Sys::watch`] call it too, so a caller needs it only to hear of a
    /// failure early.
    fn open_events(&self) -> Result<(), SysError>;

    /// Waits until a handled signal arrives or a watched descriptor is
    /// ready, at most `timeout` (`None`: no limit), and appends what
    /// happened to `events` (nothing on time-out or interruption).
    fn wait(&self, events: &mut Vec<Event>, timeout: Option<Duration>) -> Result<(), SysError>;

    /// Starts watching `fd` (which the caller keeps open until
    /// [`Sys::unwatch`]) under `token`, edge-triggered: after an
    /// [`Event::Ready`], read (or write) until `EAGAIN`.
    fn watch(&self, fd: RawFd, token: Token, interest: Interest) -> Result<(), SysError>;

    /// Changes what a watched `fd` is watched for.
    fn rewatch(&self, fd: RawFd, token: Token, interest: Interest) -> Result<(), SysError>;

    /// Stops watching `fd` (before it is closed).
    fn unwatch(&self, fd: RawFd) -> Result<(), SysError>;

    /// A descriptor that becomes readable when the wall clock is set or
    /// jumps (a `timerfd` with `TFD_TIMER_CANCEL_ON_SET`, see `clock.rs`),
    /// for the timers' calendar elapses.
    fn wall_clock_watch(&self) -> Result<OwnedFd, SysError>;

    /// After the watch was readable: whether the wall clock was set; the
    /// watch is armed again.
    fn wall_clock_was_set(&self, fd: BorrowedFd<'_>) -> bool;

    // ----- sockets ---------------------------------------------------------

    /// Binds the control socket: a non-blocking stream listener at `path`,
    /// mode 0666. A stale socket file there is replaced; anything else is
    /// [`SysError::NotASocket`]. The directory must exist.
    fn bind_listener(&self, path: &Path) -> Result<(UnixListener, FileId), SysError>;

    /// Accepts one pending connection (non-blocking) with its peer's
    /// credentials; `None` when none is pending.
    fn accept(&self, listener: &UnixListener) -> Result<Option<Accepted>, SysError>;

    /// Binds a notify socket: a non-blocking datagram socket at the
    /// absolute `path`, mode 0666, receiving each sender's credentials
    /// (`SO_PASSCRED`). A stale socket there is replaced.
    fn bind_notify_socket(&self, path: &Path) -> Result<(OwnedFd, FileId), SysError>;

    /// Removes the socket file at `path` if it is still the one bound as
    /// `id` (another init may have bound a new one there since).
    fn remove_socket(&self, path: &Path, id: FileId);

    /// Makes one socket (or FIFO) of a socket unit, bound, listening and
    /// non-blocking, with the unit's settings (`listen.rs`); `owner`: the
    /// uid and gid of its `SocketUser=`/`SocketGroup=`.
    fn listen(
        &self,
        l: &flotilla_units::trigger::Listen,
        settings: &flotilla_units::trigger::SocketSettings,
        owner: Option<(u32, u32)>,
    ) -> Result<OwnedFd, SysError>;

    /// `Accept=yes`: takes one pending connection of a socket unit's
    /// listening socket `fd`, blocking and close-on-exec, with who is at
    /// its other end; `None` when none is pending (`listen.rs`).
    fn accept_connection(
        &self,
        fd: BorrowedFd<'_>,
    ) -> Result<Option<(OwnedFd, flotilla_units::trigger::Peer)>, SysError>;

    /// Who is at the other end of connection `fd` (after a re-exec, for
    /// an `Accept=yes` connection carried across it).
    fn connection_peer(&self, fd: BorrowedFd<'_>) -> flotilla_units::trigger::Peer;

    /// A new inotify instance for a path unit (`paths.rs`).
    fn path_watch(&self) -> Result<OwnedFd, SysError>;

    /// Watches `path` (a directory, or the watched file) on instance `fd`;
    /// its watch descriptor.
    fn path_watch_add(&self, fd: BorrowedFd<'_>, path: &Path) -> Result<i32, SysError>;

    /// Every event queued on instance `fd`.
    fn path_events(&self, fd: BorrowedFd<'_>) -> Vec<paths::PathEvent>;

    /// A new, empty watch for a read of the unit search path (`pathstamp`).
    fn path_stamp_instance(&self) -> Result<OwnedFd, SysError>;

    /// Adds `path` (else the nearest directory above it) to the watch `fd`.
    fn path_stamp_add(&self, fd: BorrowedFd<'_>, path: &Path) -> Result<(), SysError>;

    /// Whether anything changed on `fd` since it was made or last asked.
    fn path_stamp_changed(&self, fd: BorrowedFd<'_>) -> bool;

    /// Whether a path unit's level kind (`PathExists=`,
    /// `PathExistsGlob=`, `DirectoryNotEmpty=`) holds now: the path it
    /// holds for (a glob's first match).
    fn path_holding(&self, spec: &flotilla_units::trigger::PathSpec) -> Option<PathBuf>;

    /// Whether udev can run here (`/sys` is writable): then the init
    /// follows its devices (`io/uevents.rs`).
    fn udev_available(&self) -> bool;

    /// A socket on udevd's netlink group, to watch.
    fn udev_monitor(&self) -> Result<OwnedFd, SysError>;

    /// The messages waiting on the udev socket `fd`.
    fn udev_messages(&self, fd: BorrowedFd<'_>) -> io::uevents::Uevents;

    /// `/proc/self/mountinfo`, to watch: the kernel wakes its watchers at
    /// each change of the mount table.
    fn mount_table_watch(&self) -> Result<OwnedFd, SysError>;

    /// `MakeDirectory=`: `path` and its missing parents, with `mode`.
    fn make_dir(&self, path: &Path, mode: u32) -> Result<(), SysError>;

    // ----- files and directories -------------------------------------------

    /// The names in directory `dir` (not `.` and `..`), in no order.
    fn read_dir(&self, dir: &Path) -> Result<Vec<OsString>, SysError>;

    /// The entries of directory `dir` (not `.` and `..`), in no order, each
    /// with its kind as `lstat(2)` sees it (a link is not followed: its
    /// target is read), for a unit search directory's listing. Anything
    /// that is neither a directory nor a link is a file, empty only when it
    /// is a regular file of size 0 (a mask).
    fn list_dir(
        &self,
        dir: &Path,
    ) -> Result<Vec<(OsString, flotilla_systemd::EntryKind)>, SysError>;

    /// Creates `dir` and its missing parents (mode 0755); an existing
    /// directory is fine.
    fn create_dir_all(&self, dir: &Path) -> Result<(), SysError>;

    /// Replaces the file `path` with `data` at once (a new file renamed
    /// over it): the init's own state (masks, alternatives).
    fn write_file(&self, path: &Path, data: &[u8]) -> Result<(), SysError>;

    /// `unlink(2)`; a file that is not there is not an error.
    fn remove_file(&self, path: &Path) -> Result<(), SysError>;

    /// The modification time of `path` in microseconds since the epoch;
    /// `None` when there is no such file (a timer's stamp, as systemd
    /// keeps it).
    fn file_mtime_us(&self, path: &Path) -> Result<Option<u64>, SysError>;

    /// Creates `path` (and its missing parent directories) if it is not
    /// there and sets its modification time to `realtime_us`: a timer's
    /// stamp.
    fn touch_at(&self, path: &Path, realtime_us: u64) -> Result<(), SysError>;

    /// `symlink(2)`: `link` pointing at `target`, replacing a symbolic
    /// link already there (anything else there is an error).
    fn symlink(&self, target: &Path, link: &Path) -> Result<(), SysError>;

    /// `chown(2)`.
    fn chown(&self, path: &Path, uid: u32, gid: u32) -> Result<(), SysError>;

    /// `readlink(2)` (where `/proc/self` points tells whose `/proc` it is).
    fn read_link(&self, path: &Path) -> Result<PathBuf, SysError>;

    /// `stat(2)`'s owner and permission bits of `path` (whether a unit's
    /// user can reach its notify socket).
    fn owner_and_mode(&self, path: &Path) -> Result<FileOwner, SysError>;

    // ----- this process ----------------------------------------------------

    /// `geteuid(2)`.
    fn geteuid(&self) -> u32;

    /// Gives the allocator's free memory back to the system (after a peak:
    /// loading the unit files, a reload, a launch).
    fn release_free_memory(&self);

    /// Sets the init's own NUMA memory policy (the manager's `NUMAPolicy=`),
    /// which what it starts inherits ([`procs::placement::set_mempolicy`]).
    fn set_mempolicy(
        &self,
        request: &Result<MemRequest, InvalidPolicy>,
    ) -> Result<MemOutcome, SysError>;

    /// Sends one message in journald's native protocol (the manager's own
    /// about a unit) to journald, if it takes it at once
    /// ([`journal::send_native`]).
    fn journal_send(&self, datagram: &[u8]);

    /// Writes a line on the console (stdout); errors are ignored: the
    /// console may be gone, and that must not stop the init.
    fn console(&self, line: &str);

    /// Whether descriptor `fd` (0, 1 or 2) is open.
    fn stdio_open(&self, fd: i32) -> bool;

    /// The init's standard output opened anew for writes that never wait
    /// (`console-output`, `runtime/mirror.rs`): `/proc/self/fd/1` with
    /// `O_NONBLOCK` on a file description of its own, so that the units
    /// and the `-- CMD` sharing descriptor 1 keep theirs blocking; where
    /// that cannot be opened (a socket; a pipe another user made) a copy
    /// of descriptor 1, which [`Sys::write_now`] writes with
    /// `MSG_DONTWAIT` or `RWF_NOWAIT`.
    fn open_stdout_nonblocking(&self) -> Result<OwnedFd, SysError>;

    /// Writes what `fd` (from [`Sys::open_stdout_nonblocking`]) takes now:
    /// the bytes written, 0 when it is full. Never waits.
    fn write_now(&self, fd: RawFd, buf: &[u8]) -> Result<usize, SysError>;

    /// Whether standard input is a terminal (`isatty(0)`): where the
    /// emergency shell could be typed into.
    fn stdin_is_terminal(&self) -> bool;

    /// Opens `/dev/console` onto every closed descriptor of 0, 1 and 2.
    fn open_console(&self) -> Result<(), SysError>;

    /// Whether the init has any child left, dead or alive (`waitid(2)`
    /// without reaping). As PID 1 every process of the namespace but
    /// kernel threads descends from it, so `false` means none is left.
    fn children_left(&self) -> bool;

    /// Sets `PATH` to [`env::DEFAULT_PATH`], systemd's default for every
    /// unit: when unset, or with `replace` whatever the kernel or an
    /// initramfs left (PID 1 on a machine; a container's `PATH` is its
    /// image's).
    fn set_default_path(&self, replace: bool);

    /// Finds the cgroups for the units, once, at start (`pid1`: the
    /// init's cgroup is the hierarchy's root). The error says why there
    /// are none: the units then run in process groups only.
    fn setup_cgroups(&self, pid1: bool) -> Result<(), String>;

    /// Makes what a run of unit `name` needs: its cgroup, private `/tmp`,
    /// and its context prepared for the child, which makes the directories
    /// and opens the output files itself (`unitrun.rs`). `owner`: the unit's user and group. The error
    /// names the key that cannot be honoured.
    fn start_unit(
        &self,
        name: &str,
        ctx: &flotilla_units::context::ServiceContext,
        owner: Option<(u32, u32)>,
    ) -> Result<unitrun::UnitRun, String>;

    /// Tells journald the unit's `LogLevelMax=` and `LogExtraFields=` as
    /// systemd does, in files under `/run/systemd/units/`
    /// (`unit_state.rs`). The error says what could not be written.
    fn export_unit_state(
        &self,
        name: &str,
        syslog: &flotilla_units::context::journal::Syslog,
    ) -> Result<(), String>;

    /// Removes what [`Sys::export_unit_state`] wrote for the unit.
    fn remove_unit_state(&self, name: &str);

    /// The processes of the run's cgroup (none without a cgroup).
    fn unit_pids(&self, run: &unitrun::UnitRun) -> Vec<Pid>;

    /// What the run's cgroup uses now (`None` without a cgroup).
    fn unit_usage(&self, run: &unitrun::UnitRun) -> Option<flotilla_units::protocol::Usage>;

    /// The processes of the run's cgroup the kernel's OOM killer killed
    /// since the last call (`memory.events`; 0 without a cgroup or its
    /// memory controller).
    fn unit_oom_kills(&self, run: &unitrun::UnitRun) -> u32;

    /// The children the kernel's OOM killer killed while they still used
    /// the init's memory, since the last call: counted in the init's own
    /// cgroup, not their units' (`Cgroups::init_oom_kills` says why; 0
    /// without cgroups or the memory controller).
    fn init_oom_kills(&self) -> u32;

    /// Sends `signal` to every process of the run's cgroup that `reached`
    /// has not reached already; returns how many got it (0 without a
    /// cgroup).
    fn signal_unit(&self, run: &unitrun::UnitRun, signal: i32, reached: Reached) -> usize;

    /// Moves a scope's processes `pids` (not the init's children) into the
    /// run's cgroup, and watches them (`adopt.rs`). The error names the
    /// process that could not be adopted.
    fn adopt(&self, run: &unitrun::UnitRun, pids: &[Pid]) -> Result<adopt::Adoption, String>;

    /// A scope's watch after a re-exec ([`adopt::resume`]): its cgroup's
    /// events, or the pidfds `carried` across the `execve`.
    fn readopt(
        &self,
        run: &unitrun::UnitRun,
        carried: Vec<(Pid, OwnedFd)>,
    ) -> Result<adopt::Adoption, String>;

    /// Whether any of the adoption's processes is left: now (`None`), or
    /// after descriptor `fd` of it became readable.
    fn adopted_left(&self, adoption: &mut adopt::Adoption, fd: Option<RawFd>) -> bool;

    /// Sends `signal` to the processes of an adoption without a cgroup
    /// but `but` (with one, [`Sys::signal_unit`] reaches them); how many
    /// got it.
    fn signal_adopted(&self, adoption: &adopt::Adoption, signal: i32, but: Pid) -> usize;

    /// Moves process `pid` into the run's cgroup, or the cgroup `sub`
    /// below it (`attach.rs`, systemd's `AttachProcessesToUnit`). The
    /// error is the kernel's word, naming the file.
    fn attach_to_unit(
        &self,
        run: &unitrun::UnitRun,
        sub: Option<&str>,
        pid: Pid,
    ) -> Result<(), String>;

    /// The cgroup directory of `slice` below the units' cgroups, while it
    /// exists (`freezer.rs`).
    fn slice_cgroup(&self, slice: &str) -> Option<PathBuf>;

    /// Whether cgroup `dir` has cgroup v2's freezer (`cgroup.freeze`).
    fn can_freeze(&self, dir: &Path) -> bool;

    /// Writes `frozen` to cgroup `dir`'s `cgroup.freeze` and watches its
    /// `cgroup.events` for the kernel's word ([`Sys::cgroup_frozen`]).
    fn freeze_cgroup(&self, dir: &Path, frozen: bool) -> Result<adopt::Adoption, String>;

    /// Whether the watched cgroup is frozen now (its watch's events
    /// consumed).
    fn cgroup_frozen(&self, watch: &mut adopt::Adoption) -> bool;

    /// Kills what is left of a run (by its `KillMode=`) and removes what
    /// [`Sys::start_unit`] made (`keep_runtime`: the runtime directories
    /// stay for a restart, if the unit says so). The processes its
    /// `KillMode=` left running, each with its name.
    fn end_unit(&self, run: &unitrun::UnitRun, keep_runtime: bool) -> Vec<(Pid, String)>;

    /// Removes the cgroup [`Sys::setup_cgroups`] made for the init's units
    /// (at exit, after every unit ended).
    fn teardown_cgroups(&self);

    /// Executes the init's binary again with `snapshot`, keeping exactly
    /// `keep` open (`reexec.rs`). Returns only on failure, with every
    /// descriptor as it was.
    fn reexec(&self, snapshot: &[u8], keep: &[RawFd])
        -> Result<std::convert::Infallible, SysError>;

    /// Takes a descriptor inherited across a re-exec as the init's own.
    fn adopt_fd(&self, fd: RawFd) -> Result<OwnedFd, SysError>;

    /// Whether `path` is a mount point, from `/proc/self/mountinfo`
    /// (read through [`Sys::read_file_limited`] and parsed by
    /// [`mountinfo::is_mount_point`]). `path` is compared as written:
    /// pass an absolute path without symlinks or trailing slashes.
    fn is_mounted(&self, path: &Path) -> Result<bool, SysError> {
        let text = self.read_file_limited(Path::new("/proc/self/mountinfo"), MOUNTINFO_MAX)?;
        Ok(mountinfo::is_mount_point(&text, path))
    }

    /// Checks a unit's `Condition…=` and `Assert…=` against this machine
    /// (the file system, `/proc`, `/sys`, `/etc`: [`conditions::Machine`]),
    /// at the unit's start; why that I/O is acceptable in the loop is
    /// said there.
    fn check_conditions(
        &self,
        spec: &flotilla_units::spec::UnitSpec,
    ) -> flotilla_units::planner::CheckOutcome;
}

/// A file's identity (device and inode), to tell whether a path still
/// names the file it named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FileId {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
}

/// A control connection [`Sys::accept`] took.
#[derive(Debug)]
pub struct Accepted {
    /// The connection, non-blocking.
    pub stream: UnixStream,
    /// The peer's user id (`SO_PEERCRED`; `u32::MAX` when unknown).
    pub uid: u32,
    /// The peer's process id (0 when unknown).
    pub pid: i32,
}

/// How a child terminated, from `waitpid(2)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExitStatus {
    /// It called `exit` with this status (0 to 255).
    Exited(i32),
    /// A signal killed it.
    Signaled {
        /// The signal number.
        signal: i32,
        /// Whether it dumped core.
        core_dumped: bool,
    },
}

impl ExitStatus {
    /// Exited with status 0.
    pub fn success(self) -> bool {
        self == ExitStatus::Exited(0)
    }

    /// The status as the kernel encodes it in `waitpid(2)`'s `wstatus`.
    pub fn from_raw(status: i32) -> Option<ExitStatus> {
        if libc::WIFEXITED(status) {
            Some(ExitStatus::Exited(libc::WEXITSTATUS(status)))
        } else if libc::WIFSIGNALED(status) {
            Some(ExitStatus::Signaled {
                signal: libc::WTERMSIG(status),
                core_dumped: libc::WCOREDUMP(status),
            })
        } else {
            None
        }
    }
}

impl fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ExitStatus::Exited(code) => write!(f, "exited with status {code}"),
            ExitStatus::Signaled {
                signal,
                core_dumped,
            } => {
                let name = flotilla_units::spec::Signal(signal).name();
                let core = if core_dumped { " (core dumped)" } else { "" };
                write!(f, "killed by {name}{core}")
            }
        }
    }
}

/// A wall-clock reading: seconds and nanoseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct WallTime {
    /// Whole seconds since 1970-01-01T00:00:00Z.
    pub secs: i64,
    /// Nanoseconds within the second.
    pub nanos: u32,
}

impl WallTime {
    /// RFC 3339 UTC with milliseconds, e.g. `2026-11-22T04:00:00.123Z`.
    pub fn rfc3339(self) -> String {
        flotilla_units::protocol::rfc3339(self.secs, self.nanos)
    }
}

/// What `reboot(2)` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RebootCmd {
    /// `RB_POWER_OFF`.
    PowerOff,
    /// `RB_AUTOBOOT`: restart.
    Restart,
    /// `RB_HALT_SYSTEM`.
    Halt,
}

/// One `mount(2)` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MountRequest<'a> {
    /// The device or pseudo source (`proc`, `devtmpfs`, …).
    pub source: Option<&'a str>,
    /// Where to mount it.
    pub target: &'a Path,
    /// The file system type (`proc`, `sysfs`, `tmpfs`, …).
    pub fstype: Option<&'a str>,
    /// `MS_*` flags.
    pub flags: MsFlags,
    /// File-system-specific options (`mode=0755`, …).
    pub data: Option<&'a str>,
}

/// Who owns a file and its permission bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileOwner {
    /// The owner's user id.
    pub uid: u32,
    /// The owner's group id.
    pub gid: u32,
    /// The permission bits (`0o7777` of `st_mode`).
    pub mode: u32,
}
