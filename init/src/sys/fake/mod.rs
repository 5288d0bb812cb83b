//! [`FakeSys`]: a [`Sys`] that touches nothing outside the test process.
//! It records every call (in a list of [`Call`]), answers from a script,
//! and has a clock that moves only when the test moves it — or when the
//! loop waits with a time-out and nothing happens, as a real wait would
//! pass that time. So the event loop and the PID-1 duties are tested
//! without forking, mounting, binding in the file system or sleeping.
//!
//! ```
//! use flotilla_init::sys::fake::{Call, FakeSys};
//! use flotilla_init::sys::{Env, Event, ExitStatus, SpawnRequest, Sys};
//! use std::time::Duration;
//!
//! let sys = FakeSys::new();
//! let argv = vec!["/bin/daemon".to_string()];
//! let env = Env::new();
//! let pid = sys.spawn(&SpawnRequest::new(&argv, &env)).unwrap();
//! sys.exit(pid, ExitStatus::Exited(0));
//! let mut events = Vec::new();
//! sys.wait(&mut events, None).unwrap();
//! assert_eq!(events, [Event::Signal(libc::SIGCHLD)]);
//! assert_eq!(sys.wait_any().unwrap(), Some((pid, ExitStatus::Exited(0))));
//! assert_eq!(sys.wait_any().unwrap(), None);
//! events.clear();
//! sys.wait(&mut events, Some(Duration::from_secs(2))).unwrap();
//! assert!(events.is_empty());
//! assert_eq!(sys.monotonic_now().as_millis(), 2000, "the wait's time passed");
//! assert!(matches!(&sys.calls()[0], Call::Spawn(s) if s.argv == argv));
//! ```
//!
//! The descriptors the loop watches are real (pipes, and sockets in the
//! abstract namespace, named per fake), and so is the readiness of them
//! that [`Sys::wait`] reports: a test talks to the loop through
//! [`FakeSys::connect_control`] and writes a unit's output with
//! [`FakeSys::write_output`]. Signals are raised by the test
//! ([`FakeSys::raise`], [`FakeSys::exit`]). Everything succeeds unless the
//! test scripted a failure with [`FakeSys::fail_next`].

use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Write;
use std::os::fd::{OwnedFd, RawFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use flotilla_units::time::Instant;
use nix::sys::epoll::Epoll;

use super::{Errno, ExitStatus, FileOwner, Os, Pid, Sys, SysError, Token, UserInfo, WallTime};

mod answers;
mod calls;
mod mount_table;
mod paths;
mod spawns;
mod tree;
mod udev;
pub use calls::{Call, Op, SpawnRecord, StdioRecord};

/// What a test runs inside [`Sys::wait`] instead of letting the time-out
/// pass (see [`FakeSys::on_wait`]).
pub type WaitHook = Box<dyn FnMut(&FakeSys, Option<Duration>)>;

/// Numbers the abstract socket names of every fake in this process.
static SOCKETS: AtomicU64 = AtomicU64::new(0);

#[derive(Debug)]
struct State {
    calls: Vec<Call>,
    /// The directories of each run made ([`super::Sys::start_unit`]), by
    /// unit, in order.
    runs: Vec<(String, flotilla_units::context::dirs::Directories)>,
    next_pid: Pid,
    pid: Pid,
    euid: u32,
    live: HashSet<Pid>,
    /// Children that left the group they led (`setsid` in a daemon): each
    /// one's group now. Every other live child leads its own.
    left_group: HashMap<Pid, Pid>,
    exits: VecDeque<(Pid, ExitStatus)>,
    failures: HashMap<Op, VecDeque<SysError>>,
    files: HashMap<PathBuf, Vec<u8>>,
    /// Modification times set by [`super::Sys::touch_at`] or a test.
    mtimes: HashMap<PathBuf, u64>,
    dirs: HashSet<PathBuf>,
    links: HashMap<PathBuf, PathBuf>,
    /// Owners and modes set by a test; any other path is root's, 0755.
    owners: HashMap<PathBuf, FileOwner>,
    users: HashMap<String, UserInfo>,
    groups: HashMap<String, u32>,
    monotonic: u64,
    wall: WallTime,
    /// The wall clock was set ([`FakeSys::jump_wall`]) and the init has not
    /// asked yet.
    wall_was_set: bool,
    kill_exits: bool,
    /// Signals raised and not yet reported by a wait.
    signals: VecDeque<i32>,
    /// The epoll instance for the watched (real) descriptors, once opened.
    epoll: Option<Epoll>,
    watched: HashMap<RawFd, Token>,
    /// The last wait had nothing to report and no time-out (or the clock
    /// is held): a real loop would sleep until something happens.
    idle: bool,
    /// Waits pass no time ([`FakeSys::hold_clock`]).
    clock_held: bool,
    /// The abstract name of the last control listener bound.
    listener: Option<Vec<u8>>,
    /// The abstract name of each notify socket, by its path.
    notify_sockets: HashMap<PathBuf, Vec<u8>>,
    /// The sockets of socket units: the line (`stream 127.0.0.1:80`) and
    /// the abstract name of the stream socket standing for it.
    listening: HashMap<String, Vec<u8>>,
    /// Path watches: each instance's eventfd (readable when a test
    /// touches a path) and each watched path by its watch descriptor.
    path_instances: Vec<OwnedFd>,
    path_wds: Vec<PathBuf>,
    /// udev here (`udev.rs`): its socket's eventfd, once opened, and the
    /// messages sent and not yet read.
    udev: Option<(Option<OwnedFd>, Vec<Vec<u8>>)>,
    /// The mount table's watch (`mount_table.rs`), once opened.
    mount_watch: Option<OwnedFd>,
    /// How many times a file, directory, link or time changed, and the
    /// count when the search path's watch was made or last asked
    /// (`paths.rs`).
    changes: u64,
    stamp_watch: Option<u64>,
    peer_uid: u32,
    /// The write ends of each child's output pipes, as the child would
    /// hold them until it dies.
    child_output: HashMap<Pid, Vec<OwnedFd>>,
    console: Vec<String>,
    /// What was sent to journald ([`Sys::journal_send`]).
    journal: Vec<Vec<u8>>,
    /// Whether console lines are also printed (the harness shows them on
    /// a failure; a test that counts the heap turns this off, since the
    /// harness's capture of them is heap too).
    echo: bool,
    stdio_open: [bool; 3],
    /// Whether standard input is a terminal (by default it is).
    stdin_terminal: bool,
    /// What [`Sys::write_now`] wrote, and how much more it takes.
    stdout: Vec<u8>,
    stdout_room: usize,
    /// What the next [`Sys::unit_oom_kills`] answers (then 0).
    oom_kills: u32,
    /// What the next [`Sys::init_oom_kills`] answers (then 0).
    init_oom_kills: u32,
    /// Whether `/dev/console` opens.
    console_ok: bool,
    /// The machine conditions are checked against.
    machine: flotilla_units::condition::ScriptedFacts,
}

impl State {
    /// `path` written now by the wall clock: its time, and its
    /// directory's when the name is new there.
    fn modified(&mut self, path: &Path, new_name: bool) {
        self.changes += 1;
        let now = u64::try_from(self.wall.secs)
            .unwrap_or(0)
            .saturating_mul(1_000_000)
            .saturating_add(u64::from(self.wall.nanos / 1000));
        self.mtimes.insert(path.to_owned(), now);
        if let Some(dir) = path.parent().filter(|_| new_name) {
            self.mtimes.insert(dir.to_owned(), now);
        }
    }

    /// `path` removed now: it has no time, its directory a new one.
    fn unlinked(&mut self, path: &Path) {
        self.changes += 1;
        self.mtimes.remove(path);
        if let Some(dir) = path.parent() {
            self.modified(dir, false);
        }
    }
}

/// The recording fake. See the module documentation.
pub struct FakeSys {
    state: RefCell<State>,
    on_wait: RefCell<Option<WaitHook>>,
}

impl std::fmt::Debug for FakeSys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeSys")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl Default for FakeSys {
    fn default() -> FakeSys {
        FakeSys::new()
    }
}

impl FakeSys {
    /// A fake that is not PID 1 (its PID is 4242) and runs as root, whose
    /// children get PIDs from 1000 up, whose monotonic clock reads 0 and
    /// whose wall clock reads 2026-11-22T04:00:00Z. It knows the user and
    /// group `root` (0); descriptors 0 to 2 are open.
    pub fn new() -> FakeSys {
        let mut users = HashMap::new();
        users.insert(
            "root".to_owned(),
            UserInfo {
                name: "root".to_owned(),
                uid: 0,
                gid: 0,
                groups: vec![0],
                home: PathBuf::from("/root"),
                shell: PathBuf::from("/bin/sh"),
            },
        );
        let mut groups = HashMap::new();
        groups.insert("root".to_owned(), 0);
        FakeSys {
            state: RefCell::new(State {
                runs: Vec::new(),
                calls: Vec::new(),
                next_pid: 1000,
                pid: 4242,
                euid: 0,
                live: HashSet::new(),
                left_group: HashMap::new(),
                exits: VecDeque::new(),
                failures: HashMap::new(),
                files: HashMap::new(),
                mtimes: HashMap::new(),
                dirs: HashSet::new(),
                links: HashMap::new(),
                owners: HashMap::new(),
                users,
                groups,
                monotonic: 0,
                wall: WallTime {
                    secs: 1_795_320_000,
                    nanos: 0,
                },
                wall_was_set: false,
                kill_exits: false,
                signals: VecDeque::new(),
                epoll: None,
                watched: HashMap::new(),
                idle: false,
                clock_held: false,
                listener: None,
                notify_sockets: HashMap::new(),
                listening: HashMap::new(),
                path_instances: Vec::new(),
                path_wds: Vec::new(),
                udev: None,
                mount_watch: None,
                changes: 0,
                stamp_watch: None,
                peer_uid: 0,
                child_output: HashMap::new(),
                console: Vec::new(),
                journal: Vec::new(),
                echo: true,
                stdio_open: [true; 3],
                stdin_terminal: true,
                stdout: Vec::new(),
                stdout_room: usize::MAX,
                oom_kills: 0,
                init_oom_kills: 0,
                console_ok: true,
                machine: flotilla_units::condition::ScriptedFacts::default(),
            }),
            on_wait: RefCell::new(None),
        }
    }

    /// A fake whose [`Sys::getpid`] is 1.
    pub fn pid1() -> FakeSys {
        let f = FakeSys::new();
        f.state.borrow_mut().pid = 1;
        f
    }

    /// Every call recorded so far.
    pub fn calls(&self) -> Vec<Call> {
        self.state.borrow().calls.clone()
    }

    /// Every call recorded so far, forgetting them.
    pub fn take_calls(&self) -> Vec<Call> {
        std::mem::take(&mut self.state.borrow_mut().calls)
    }

    /// The directories of each run made since the last call, by unit
    /// name, in order (not a [`Call`]: a run is made at every start, and
    /// the calls asserted elsewhere do not list it); the record is let go.
    pub fn take_runs(&self) -> Vec<(String, flotilla_units::context::dirs::Directories)> {
        std::mem::take(&mut self.state.borrow_mut().runs)
    }

    /// The successful spawns recorded so far.
    pub fn spawns(&self) -> Vec<SpawnRecord> {
        self.state
            .borrow()
            .calls
            .iter()
            .filter_map(|c| match c {
                Call::Spawn(s) if s.pid.is_some() => Some(s.clone()),
                _ => None,
            })
            .collect()
    }

    /// The PID the next successful spawn returns.
    pub fn set_next_pid(&self, pid: Pid) {
        self.state.borrow_mut().next_pid = pid;
    }

    /// Makes the next call of `op` fail with `err` (queued: several calls
    /// fail in order).
    pub fn fail_next(&self, op: Op, err: SysError) {
        self.state
            .borrow_mut()
            .failures
            .entry(op)
            .or_default()
            .push_back(err);
    }

    /// Queues a child termination for [`Sys::wait_any`]; the child's ends
    /// of its output pipes close, as they do when a process dies.
    pub fn push_exit(&self, pid: Pid, status: ExitStatus) {
        let mut st = self.state.borrow_mut();
        st.exits.push_back((pid, status));
        st.child_output.remove(&pid);
    }

    /// A child terminates: [`FakeSys::push_exit`] and a `SIGCHLD`.
    pub fn exit(&self, pid: Pid, status: ExitStatus) {
        self.push_exit(pid, status);
        self.raise(libc::SIGCHLD);
    }

    /// A signal arrives: the next [`Sys::wait`] reports it.
    pub fn raise(&self, signal: i32) {
        self.state.borrow_mut().signals.push_back(signal);
    }

    /// Whether `pid` was spawned and its exit not yet reaped.
    pub fn is_live(&self, pid: Pid) -> bool {
        self.state.borrow().live.contains(&pid)
    }

    /// Child `pid` left the process group it led, for group `pgid` (as a
    /// daemon's `setsid`).
    pub fn set_pgid(&self, pid: Pid, pgid: Pid) {
        self.state.borrow_mut().left_group.insert(pid, pgid);
    }

    /// The group of live child `pid`: its own, unless [`FakeSys::set_pgid`]
    /// moved it.
    pub(super) fn pgid_of(&self, pid: Pid) -> Option<Pid> {
        let st = self.state.borrow();
        st.live
            .contains(&pid)
            .then(|| st.left_group.get(&pid).copied().unwrap_or(pid))
    }

    /// When on, a `kill` or `killpg` with a non-zero signal to a live child
    /// makes it exit, killed by that signal, with a `SIGCHLD` (a child that
    /// obeys at once).
    pub fn set_kill_exits(&self, on: bool) {
        self.state.borrow_mut().kill_exits = on;
    }

    /// Runs `hook` inside every [`Sys::wait`] from now on, instead of
    /// letting its time-out pass: the hook moves the clock, queues exits and
    /// raises signals as it sees fit; the wait then reports what is pending.
    pub fn on_wait(&self, hook: WaitHook) {
        *self.on_wait.borrow_mut() = Some(hook);
    }

    /// Whether the last [`Sys::wait`] had nothing to report and no
    /// time-out (or the clock is held): a real loop would sleep until
    /// something happens.
    pub fn idle(&self) -> bool {
        self.state.borrow().idle
    }

    /// The machine units' conditions are checked against (by default
    /// [`flotilla_units::condition::ScriptedFacts::default`]: a container
    /// with no paths).
    pub fn set_machine(&self, machine: flotilla_units::condition::ScriptedFacts) {
        self.state.borrow_mut().machine = machine;
    }

    /// While held, a wait with nothing to report passes no time and counts
    /// as idle: the test looks at the loop before its next deadline.
    pub fn hold_clock(&self, held: bool) {
        self.state.borrow_mut().clock_held = held;
    }

    /// Makes `path` readable with `contents` (its directory then lists it),
    /// modified now by the wall clock (and its directory, when the file is
    /// new), as a write would leave them.
    pub fn set_file(&self, path: impl Into<PathBuf>, contents: impl Into<Vec<u8>>) {
        let path = path.into();
        let mut st = self.state.borrow_mut();
        let new = st.files.insert(path.clone(), contents.into()).is_none();
        st.modified(&path, new);
    }

    /// The modification time of `path` (a timer's stamp), if set.
    pub fn mtime(&self, path: &Path) -> Option<u64> {
        self.state.borrow().mtimes.get(path).copied()
    }

    /// Sets the modification time of `path` (a timer's stamp).
    pub fn set_mtime(&self, path: impl Into<PathBuf>, realtime_us: u64) {
        let mut st = self.state.borrow_mut();
        st.changes += 1;
        st.mtimes.insert(path.into(), realtime_us);
    }

    /// Makes file `path` (with no contents) and tells every path watch
    /// of its directory: readable, an `IN_CREATE` event for it.
    pub fn create_watched(&self, path: &Path) {
        let mut st = self.state.borrow_mut();
        st.changes += 1;
        st.files.insert(path.to_path_buf(), Vec::new());
        for fd in &st.path_instances {
            let _ = nix::unistd::write(fd, &1u64.to_ne_bytes());
        }
    }

    /// Makes `path` missing again (its directory modified now).
    pub fn remove_file(&self, path: &Path) {
        let mut st = self.state.borrow_mut();
        st.files.remove(path);
        st.unlinked(path);
    }

    /// Makes `path` an (empty) directory.
    pub fn add_dir(&self, path: impl Into<PathBuf>) {
        let path = path.into();
        let mut st = self.state.borrow_mut();
        if st.dirs.insert(path.clone()) {
            st.modified(&path, true);
        }
    }

    /// Makes `path` a symbolic link to `target`.
    pub fn set_link(&self, path: impl Into<PathBuf>, target: impl Into<PathBuf>) {
        let path = path.into();
        let mut st = self.state.borrow_mut();
        st.links.insert(path.clone(), target.into());
        st.modified(&path, true);
    }

    /// Gives `path` an owner and permission bits (what
    /// [`Sys::owner_and_mode`] answers; other paths are root's, 0755).
    pub fn set_owner(&self, path: impl Into<PathBuf>, owner: FileOwner) {
        self.state.borrow_mut().owners.insert(path.into(), owner);
    }

    /// Adds a user to the passwd database (by its name and its number).
    pub fn add_user(&self, info: UserInfo) {
        let mut st = self.state.borrow_mut();
        st.users.insert(info.uid.to_string(), info.clone());
        st.users.insert(info.name.clone(), info);
    }

    /// Adds a group to the group database.
    pub fn add_group(&self, name: &str, gid: u32) {
        self.state.borrow_mut().groups.insert(name.to_owned(), gid);
    }

    /// Sets what [`Sys::geteuid`] answers.
    pub fn set_euid(&self, uid: u32) {
        self.state.borrow_mut().euid = uid;
    }

    /// Sets the user id the next accepted control connections come from.
    pub fn set_peer_uid(&self, uid: u32) {
        self.state.borrow_mut().peer_uid = uid;
    }

    /// Sets whether console lines are also printed (on by default).
    pub fn set_echo(&self, on: bool) {
        self.state.borrow_mut().echo = on;
    }

    /// What [`Sys::write_now`] wrote, taken.
    pub fn take_stdout(&self) -> String {
        String::from_utf8_lossy(&std::mem::take(&mut self.state.borrow_mut().stdout)).into_owned()
    }

    /// Makes the next [`Sys::unit_oom_kills`] answer `n`: the kernel's OOM
    /// killer took that many of a unit's processes.
    pub fn set_oom_kills(&self, n: u32) {
        self.state.borrow_mut().oom_kills = n;
    }

    /// Makes the next [`Sys::init_oom_kills`] answer `n`: the kernel's OOM
    /// killer took that many children still in the init's memory.
    pub fn set_init_oom_kills(&self, n: u32) {
        self.state.borrow_mut().init_oom_kills = n;
    }

    /// Sets how many more bytes [`Sys::write_now`] takes (a full pipe: 0).
    pub fn set_stdout_room(&self, room: usize) {
        self.state.borrow_mut().stdout_room = room;
    }

    /// Sets whether standard input is a terminal.
    pub fn set_stdin_terminal(&self, on: bool) {
        self.state.borrow_mut().stdin_terminal = on;
    }

    /// Sets which of descriptors 0 to 2 are open.
    pub fn set_stdio_open(&self, open: [bool; 3]) {
        self.state.borrow_mut().stdio_open = open;
    }

    /// Sets whether `/dev/console` opens.
    pub fn set_console_ok(&self, ok: bool) {
        self.state.borrow_mut().console_ok = ok;
    }

    /// The lines written on the console so far.
    pub fn console_lines(&self) -> Vec<String> {
        self.state.borrow().console.clone()
    }

    /// The messages sent to journald so far, as text.
    pub fn journal_messages(&self) -> Vec<String> {
        let st = self.state.borrow();
        st.journal
            .iter()
            .map(|d| String::from_utf8_lossy(d).into_owned())
            .collect()
    }

    /// The lines written on the console so far, forgetting them.
    pub fn take_console(&self) -> Vec<String> {
        std::mem::take(&mut self.state.borrow_mut().console)
    }

    /// A new connection to the control listener bound last (the loop sees
    /// it at its next wait).
    pub fn connect_control(&self) -> std::io::Result<UnixStream> {
        let name = self
            .state
            .borrow()
            .listener
            .clone()
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?;
        UnixStream::connect_addr(&SocketAddr::from_abstract_name(name)?)
    }

    /// Connects to the socket a socket unit listens on for `line` (as
    /// status shows it: `stream 127.0.0.1:80`): every line is an abstract
    /// stream socket under the fake.
    pub fn connect_listening(&self, line: &str) -> std::io::Result<UnixStream> {
        let name = self
            .state
            .borrow()
            .listening
            .get(line)
            .cloned()
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?;
        UnixStream::connect_addr(&SocketAddr::from_abstract_name(name)?)
    }

    /// Sends one datagram to the notify socket bound at `path`, from this
    /// process.
    pub fn send_notify(&self, path: &Path, msg: &[u8]) -> std::io::Result<()> {
        let name = self
            .state
            .borrow()
            .notify_sockets
            .get(path)
            .cloned()
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?;
        let sock = UnixDatagram::unbound()?;
        sock.send_to_addr(msg, &SocketAddr::from_abstract_name(name)?)?;
        Ok(())
    }

    /// Writes what child `pid` prints on its stdout; returns how much fit
    /// in the pipe (it does not block).
    pub fn write_output(&self, pid: Pid, bytes: &[u8]) -> usize {
        let st = self.state.borrow();
        let Some(fd) = st.child_output.get(&pid).and_then(|fds| fds.first()) else {
            return 0;
        };
        let mut file = std::fs::File::from(match fd.try_clone() {
            Ok(fd) => fd,
            Err(_) => return 0,
        });
        let mut done = 0;
        while let Some(rest) = bytes.get(done..).filter(|r| !r.is_empty()) {
            match file.write(rest) {
                Ok(0) | Err(_) => break,
                Ok(n) => done += n,
            }
        }
        done
    }

    /// Moves both clocks forward.
    pub fn advance(&self, d: Duration) {
        let mut st = self.state.borrow_mut();
        st.monotonic = Instant(st.monotonic).after(d).0;
        let nanos = u64::from(st.wall.nanos) + u64::from(d.subsec_nanos());
        let carry = i64::try_from(nanos / 1_000_000_000).unwrap_or(0);
        let secs = i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
        st.wall.secs = st.wall.secs.saturating_add(secs).saturating_add(carry);
        st.wall.nanos = u32::try_from(nanos % 1_000_000_000).unwrap_or(0);
    }

    /// Sets the monotonic clock.
    pub fn set_monotonic(&self, now: Instant) {
        self.state.borrow_mut().monotonic = now.0;
    }

    /// Sets the wall clock.
    pub fn set_wall(&self, now: WallTime) {
        self.state.borrow_mut().wall = now;
    }

    /// Sets the wall clock as `date -s` does: the next
    /// `wall_clock_was_set` says so.
    pub fn jump_wall(&self, now: WallTime) {
        let mut st = self.state.borrow_mut();
        st.wall = now;
        st.wall_was_set = true;
    }

    /// Whether the wall clock was set since the last call.
    pub(super) fn take_wall_was_set(&self) -> bool {
        std::mem::take(&mut self.state.borrow_mut().wall_was_set)
    }

    /// Records `call`, then fails if a failure of `op` is queued.
    fn record(&self, op: Option<Op>, call: Call) -> Result<(), SysError> {
        let mut st = self.state.borrow_mut();
        st.calls.push(call);
        match op
            .and_then(|op| st.failures.get_mut(&op))
            .and_then(VecDeque::pop_front)
        {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

    fn failure(&self, op: Op) -> Option<SysError> {
        self.state
            .borrow_mut()
            .failures
            .get_mut(&op)
            .and_then(VecDeque::pop_front)
    }

    fn signalled(&self, pid: Pid, signal: i32) {
        let obeys = {
            let st = self.state.borrow();
            st.kill_exits
                && signal != 0
                && st.live.contains(&pid)
                && !st.exits.iter().any(|(p, _)| *p == pid)
        };
        if obeys {
            self.exit(
                pid,
                ExitStatus::Signaled {
                    signal,
                    core_dumped: false,
                },
            );
        }
    }

    /// A fresh name in the abstract socket namespace.
    fn socket_name(&self) -> Vec<u8> {
        let n = SOCKETS.fetch_add(1, Ordering::Relaxed);
        format!("flotilla-fake-{}-{n}", std::process::id()).into_bytes()
    }

    fn socket_error(path: &Path, op: &'static str, e: &std::io::Error) -> SysError {
        SysError::Socket {
            path: path.to_owned(),
            op,
            errno: Os(Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO))),
        }
    }

    /// The epoll instance, made at the first use.
    fn with_epoll<T>(&self, f: impl FnOnce(&Epoll) -> T) -> Result<T, SysError> {
        self.open_events()?;
        let st = self.state.borrow();
        match st.epoll.as_ref() {
            Some(e) => Ok(f(e)),
            None => Err(SysError::Call {
                call: "epoll_create1".into(),
                errno: Os(Errno::EBADF),
            }),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests;
