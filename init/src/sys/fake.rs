//! [`FakeSys`]: a [`Sys`] that touches nothing. It records every call (in a
//! list of [`Call`]), answers from a script, and has a clock that moves only
//! when the test moves it, so the event loop and the PID-1 duties are tested
//! without forking, mounting or rebooting.
//!
//! ```
//! use flotilla_init::sys::fake::{Call, FakeSys};
//! use flotilla_init::sys::{Env, ExitStatus, SpawnRequest, Sys};
//! use std::time::Duration;
//!
//! let sys = FakeSys::new();
//! let argv = vec!["/bin/daemon".to_string()];
//! let env = Env::new();
//! let pid = sys.spawn(&SpawnRequest::new(&argv, &env)).unwrap();
//! sys.push_exit(pid, ExitStatus::Exited(0));
//! sys.advance(Duration::from_secs(2));
//! assert_eq!(sys.wait_any().unwrap(), Some((pid, ExitStatus::Exited(0))));
//! assert_eq!(sys.wait_any().unwrap(), None);
//! assert_eq!(sys.monotonic_now().as_millis(), 2000);
//! assert!(matches!(&sys.calls()[..], [Call::Spawn(s)] if s.argv == argv));
//! ```
//!
//! Clock reads, `getpid` and `wait_any` are not recorded (the loop makes
//! them all the time); everything else is. Everything succeeds unless the
//! test scripted a failure with [`FakeSys::fail_next`].

use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use flotilla_units::time::Instant;

use super::{
    Credentials, Env, Errno, ExitStatus, MountRequest, MsFlags, Os, Pid, RebootCmd, SpawnRequest,
    Stdio, Sys, SysError, UserInfo, WallTime,
};

/// How a stdio stream was set up, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdioRecord {
    /// [`Stdio::Null`].
    Null,
    /// [`Stdio::Inherit`].
    Inherit,
    /// [`Stdio::Fd`] with this descriptor number.
    Fd(RawFd),
}

impl From<Stdio<'_>> for StdioRecord {
    fn from(s: Stdio<'_>) -> StdioRecord {
        match s {
            Stdio::Null => StdioRecord::Null,
            Stdio::Inherit => StdioRecord::Inherit,
            Stdio::Fd(_) => StdioRecord::Fd(s.raw_fd().unwrap_or(-1)),
        }
    }
}

/// A recorded [`Sys::spawn`] call, with what it returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnRecord {
    /// The PID returned, `None` if the call failed.
    pub pid: Option<Pid>,
    /// `argv`.
    pub argv: Vec<String>,
    /// The whole environment.
    pub env: Env,
    /// The working directory.
    pub cwd: Option<PathBuf>,
    /// The identity.
    pub credentials: Option<Credentials>,
    /// Descriptor 0.
    pub stdin: StdioRecord,
    /// Descriptor 1.
    pub stdout: StdioRecord,
    /// Descriptor 2.
    pub stderr: StdioRecord,
}

impl SpawnRecord {
    /// The value of an environment variable of the child, as text.
    pub fn env_var(&self, key: &str) -> Option<String> {
        self.env
            .get(key)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }
}

/// One recorded call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// [`Sys::spawn`].
    Spawn(SpawnRecord),
    /// [`Sys::kill`].
    Kill {
        /// The PID.
        pid: Pid,
        /// The signal.
        signal: i32,
    },
    /// [`Sys::killpg`].
    KillPg {
        /// The process group.
        pgid: Pid,
        /// The signal.
        signal: i32,
    },
    /// [`Sys::kill_all`].
    KillAll {
        /// The signal.
        signal: i32,
    },
    /// [`Sys::read_file_limited`].
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The limit.
        max: usize,
    },
    /// [`Sys::set_child_subreaper`].
    SetChildSubreaper,
    /// [`Sys::lookup_user`].
    LookupUser(String),
    /// [`Sys::lookup_group`].
    LookupGroup(String),
    /// [`Sys::mount`].
    Mount {
        /// The source.
        source: Option<String>,
        /// The mount point.
        target: PathBuf,
        /// The file system type.
        fstype: Option<String>,
        /// The flags.
        flags: MsFlags,
        /// The options.
        data: Option<String>,
    },
    /// [`Sys::umount`].
    Umount(PathBuf),
    /// [`Sys::remount_readonly`].
    RemountReadonly(PathBuf),
    /// [`Sys::sync`].
    Sync,
    /// [`Sys::reboot`].
    Reboot(RebootCmd),
    /// [`Sys::set_cad_disabled`].
    SetCadDisabled,
    /// [`Sys::sethostname`].
    Sethostname(String),
}

/// A method whose next call can be made to fail ([`FakeSys::fail_next`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// [`Sys::spawn`].
    Spawn,
    /// [`Sys::kill`].
    Kill,
    /// [`Sys::killpg`].
    KillPg,
    /// [`Sys::kill_all`].
    KillAll,
    /// [`Sys::wait_any`].
    WaitAny,
    /// [`Sys::set_child_subreaper`].
    SetChildSubreaper,
    /// [`Sys::mount`].
    Mount,
    /// [`Sys::umount`].
    Umount,
    /// [`Sys::remount_readonly`].
    RemountReadonly,
    /// [`Sys::reboot`].
    Reboot,
    /// [`Sys::set_cad_disabled`].
    SetCadDisabled,
    /// [`Sys::sethostname`].
    Sethostname,
}

#[derive(Debug)]
struct State {
    calls: Vec<Call>,
    next_pid: Pid,
    pid: Pid,
    live: HashSet<Pid>,
    exits: VecDeque<(Pid, ExitStatus)>,
    failures: HashMap<Op, VecDeque<SysError>>,
    files: HashMap<PathBuf, Vec<u8>>,
    users: HashMap<String, UserInfo>,
    groups: HashMap<String, u32>,
    monotonic: u64,
    wall: WallTime,
    kill_exits: bool,
}

/// The recording fake. See the module documentation.
#[derive(Debug)]
pub struct FakeSys {
    state: RefCell<State>,
}

impl Default for FakeSys {
    fn default() -> FakeSys {
        FakeSys::new()
    }
}

impl FakeSys {
    /// A fake that is not PID 1 (its PID is 4242), whose children get PIDs
    /// from 1000 up, whose monotonic clock reads 0 and whose wall clock
    /// reads 2026-11-22T04:00:00Z. It knows the user and group `root` (0).
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
                calls: Vec::new(),
                next_pid: 1000,
                pid: 4242,
                live: HashSet::new(),
                exits: VecDeque::new(),
                failures: HashMap::new(),
                files: HashMap::new(),
                users,
                groups,
                monotonic: 0,
                wall: WallTime {
                    secs: 1_795_320_000,
                    nanos: 0,
                },
                kill_exits: false,
            }),
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

    /// Queues a child termination for [`Sys::wait_any`].
    pub fn push_exit(&self, pid: Pid, status: ExitStatus) {
        self.state.borrow_mut().exits.push_back((pid, status));
    }

    /// Whether `pid` was spawned and its exit not yet reaped.
    pub fn is_live(&self, pid: Pid) -> bool {
        self.state.borrow().live.contains(&pid)
    }

    /// When on, a `kill` or `killpg` with a non-zero signal to a live child
    /// queues its exit as killed by that signal (a child that obeys at once).
    pub fn set_kill_exits(&self, on: bool) {
        self.state.borrow_mut().kill_exits = on;
    }

    /// Makes `path` readable with `contents`.
    pub fn set_file(&self, path: impl Into<PathBuf>, contents: impl Into<Vec<u8>>) {
        self.state
            .borrow_mut()
            .files
            .insert(path.into(), contents.into());
    }

    /// Makes `path` missing again.
    pub fn remove_file(&self, path: &Path) {
        self.state.borrow_mut().files.remove(path);
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
        let mut st = self.state.borrow_mut();
        if st.kill_exits
            && signal != 0
            && st.live.contains(&pid)
            && !st.exits.iter().any(|(p, _)| *p == pid)
        {
            st.exits.push_back((
                pid,
                ExitStatus::Signaled {
                    signal,
                    core_dumped: false,
                },
            ));
        }
    }
}

impl Sys for FakeSys {
    fn spawn(&self, req: &SpawnRequest<'_>) -> Result<Pid, SysError> {
        let failure = if req.argv.is_empty() {
            Some(SysError::EmptyCommand)
        } else {
            self.failure(Op::Spawn)
        };
        let mut st = self.state.borrow_mut();
        let pid = match failure {
            Some(_) => None,
            None => {
                let pid = st.next_pid;
                st.next_pid = pid.saturating_add(1);
                st.live.insert(pid);
                Some(pid)
            }
        };
        st.calls.push(Call::Spawn(SpawnRecord {
            pid,
            argv: req.argv.to_vec(),
            env: req.env.clone(),
            cwd: req.cwd.map(Path::to_path_buf),
            credentials: req.credentials.cloned(),
            stdin: req.stdin.into(),
            stdout: req.stdout.into(),
            stderr: req.stderr.into(),
        }));
        match (pid, failure) {
            (Some(pid), _) => Ok(pid),
            (None, Some(err)) => Err(err),
            (None, None) => Err(SysError::EmptyCommand),
        }
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
        let st = self.state.borrow();
        match st.files.get(path) {
            None => Err(SysError::Read {
                path: path.to_owned(),
                errno: Os(Errno::ENOENT),
            }),
            Some(data) if data.len() > max => Err(SysError::TooLarge {
                path: path.to_owned(),
                max,
            }),
            Some(data) => Ok(data.clone()),
        }
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
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn records_spawns_with_their_context() {
        let sys = FakeSys::new();
        let argv = vec!["/bin/svc".to_string(), "-f".to_string()];
        let mut env = Env::new();
        env.set("NOTIFY_SOCKET", "/run/init/notify/svc").unwrap();
        let creds = Credentials {
            uid: Some(1000),
            gid: Some(1000),
            groups: None,
        };
        let req = SpawnRequest::new(&argv, &env)
            .cwd(Path::new("/srv"))
            .credentials(&creds)
            .stdout(Stdio::Inherit);
        let pid = sys.spawn(&req).unwrap();
        assert_eq!(pid, 1000);
        let spawns = sys.spawns();
        let s = spawns.first().unwrap();
        assert_eq!(s.argv, argv);
        assert_eq!(
            s.env_var("NOTIFY_SOCKET").as_deref(),
            Some("/run/init/notify/svc")
        );
        assert_eq!(s.cwd.as_deref(), Some(Path::new("/srv")));
        assert_eq!(s.credentials.as_ref(), Some(&creds));
        assert_eq!(
            (s.stdin, s.stdout, s.stderr),
            (StdioRecord::Null, StdioRecord::Inherit, StdioRecord::Null)
        );
        assert!(sys.is_live(pid));
    }

    #[test]
    fn scripted_failures_come_in_order() {
        let sys = FakeSys::new();
        let argv = vec!["x".to_string()];
        let env = Env::new();
        let err = SysError::NoProgram {
            program: "x".into(),
            reason: "not found in PATH".into(),
        };
        sys.fail_next(Op::Spawn, err.clone());
        assert_eq!(sys.spawn(&SpawnRequest::new(&argv, &env)), Err(err));
        assert_eq!(sys.spawn(&SpawnRequest::new(&argv, &env)), Ok(1000));
        assert_eq!(
            sys.spawn(&SpawnRequest::new(&[], &env)),
            Err(SysError::EmptyCommand)
        );
        assert_eq!(sys.spawns().len(), 1);
        assert_eq!(sys.calls().len(), 3);

        let kill_err = SysError::Kill {
            target: "pid 5".into(),
            signal: 15,
            errno: Os(Errno::ESRCH),
        };
        sys.fail_next(Op::Kill, kill_err.clone());
        assert_eq!(sys.kill(5, 15), Err(kill_err));
        assert_eq!(sys.kill(5, 15), Ok(()));
    }

    #[test]
    fn kill_exits_reap_as_signalled() {
        let sys = FakeSys::new();
        sys.set_kill_exits(true);
        let argv = vec!["/bin/sleep".to_string()];
        let env = Env::new();
        let a = sys.spawn(&SpawnRequest::new(&argv, &env)).unwrap();
        let b = sys.spawn(&SpawnRequest::new(&argv, &env)).unwrap();
        sys.killpg(a, 15).unwrap();
        sys.kill(a, 15).unwrap(); // a second signal does not queue a second exit
        sys.kill(b, 0).unwrap(); // signal 0 only probes
        assert_eq!(
            sys.wait_any().unwrap(),
            Some((
                a,
                ExitStatus::Signaled {
                    signal: 15,
                    core_dumped: false
                }
            ))
        );
        assert_eq!(sys.wait_any().unwrap(), None);
        assert!(!sys.is_live(a) && sys.is_live(b));
        sys.kill_all(9).unwrap();
        assert_eq!(
            sys.wait_any().unwrap(),
            Some((
                b,
                ExitStatus::Signaled {
                    signal: 9,
                    core_dumped: false
                }
            ))
        );
    }

    #[test]
    fn clock_moves_only_when_told() {
        let sys = FakeSys::new();
        let w0 = sys.wall_now();
        sys.advance(Duration::from_millis(1500));
        assert_eq!(sys.monotonic_now(), Instant(1_500_000_000));
        assert_eq!(
            sys.wall_now(),
            WallTime {
                secs: w0.secs + 1,
                nanos: 500_000_000
            }
        );
        sys.advance(Duration::from_millis(600));
        assert_eq!(
            sys.wall_now(),
            WallTime {
                secs: w0.secs + 2,
                nanos: 100_000_000
            }
        );
        sys.set_monotonic(Instant(7));
        assert_eq!(sys.monotonic_now(), Instant(7));
        assert_eq!(sys.wall_now().rfc3339(), "2026-11-22T04:00:02.100Z");
    }

    #[test]
    fn files_users_and_mounts() {
        let sys = FakeSys::pid1();
        assert_eq!(sys.getpid(), 1);
        sys.set_file(
            "/proc/self/mountinfo",
            "22 1 0:21 / /proc rw - proc proc rw\n",
        );
        assert!(sys.is_mounted(Path::new("/proc")).unwrap());
        assert!(!sys.is_mounted(Path::new("/sys")).unwrap());
        assert!(matches!(
            sys.read_file_limited(Path::new("/nope"), 10),
            Err(SysError::Read { .. })
        ));
        sys.set_file("/big", vec![b'x'; 11]);
        assert!(matches!(
            sys.read_file_limited(Path::new("/big"), 10),
            Err(SysError::TooLarge { max: 10, .. })
        ));
        assert_eq!(sys.lookup_user("root").unwrap().uid, 0);
        assert_eq!(
            sys.lookup_user("nobody"),
            Err(SysError::NoUser("nobody".into()))
        );
        assert_eq!(sys.lookup_group("42").unwrap(), 42);
        let m = MountRequest {
            source: Some("proc"),
            target: Path::new("/proc"),
            fstype: Some("proc"),
            flags: MsFlags::MS_NOSUID,
            data: None,
        };
        sys.take_calls();
        sys.mount(&m).unwrap();
        sys.sync();
        sys.fail_next(
            Op::Reboot,
            SysError::Call {
                call: "reboot".into(),
                errno: Os(Errno::EPERM),
            },
        );
        assert!(sys.reboot(RebootCmd::PowerOff).is_err());
        assert_eq!(
            sys.take_calls(),
            vec![
                Call::Mount {
                    source: Some("proc".into()),
                    target: "/proc".into(),
                    fstype: Some("proc".into()),
                    flags: MsFlags::MS_NOSUID,
                    data: None
                },
                Call::Sync,
                Call::Reboot(RebootCmd::PowerOff),
            ]
        );
    }
}
