//! What [`super::FakeSys`] records: one [`Call`] per system call a test may
//! want to assert, and the [`Op`]s a test can make fail.

use std::os::fd::RawFd;
use std::path::PathBuf;
use std::time::Duration;

use super::super::{Credentials, Env, Interest, MsFlags, Pid, RebootCmd, Stdio, Token};

/// How a stdio stream was set up, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdioRecord {
    /// [`Stdio::Null`].
    Null,
    /// [`Stdio::Inherit`].
    Inherit,
    /// [`Stdio::Fd`] or [`Stdio::Socket`] with this descriptor number.
    Fd(RawFd),
}

impl From<Stdio<'_>> for StdioRecord {
    fn from(s: Stdio<'_>) -> StdioRecord {
        match s {
            Stdio::Null => StdioRecord::Null,
            Stdio::Inherit => StdioRecord::Inherit,
            Stdio::Fd(_) | Stdio::Socket(_) => StdioRecord::Fd(s.raw_fd().unwrap_or(-1)),
        }
    }
}

/// A recorded [`super::Sys::spawn`] call, with what it returned.
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
    /// How many descriptors it was handed as 3, 4, … (`LISTEN_FDS`).
    pub listen_fds: usize,
    /// The journal socket its output was to be connected to.
    pub journal: Option<PathBuf>,
}

impl SpawnRecord {
    /// The value of an environment variable of the child, as text.
    pub fn env_var(&self, key: &str) -> Option<String> {
        self.env
            .get(key)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }
}

/// One recorded call. Clock reads, `getpid`, `geteuid`, `wait_any`,
/// `accept` and the descriptor checks of PID 1 are not recorded (they are
/// made all the time, and change nothing); everything else is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    /// [`super::Sys::spawn`].
    Spawn(SpawnRecord),
    /// [`super::Sys::kill`].
    Kill {
        /// The PID.
        pid: Pid,
        /// The signal.
        signal: i32,
    },
    /// [`super::Sys::killpg`].
    KillPg {
        /// The process group.
        pgid: Pid,
        /// The signal.
        signal: i32,
    },
    /// [`super::Sys::kill_all`].
    KillAll {
        /// The signal.
        signal: i32,
    },
    /// [`super::Sys::read_file_limited`].
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The limit.
        max: usize,
    },
    /// [`super::Sys::set_child_subreaper`].
    SetChildSubreaper,
    /// [`super::Sys::reexec`]: the snapshot and the descriptors it was
    /// to keep.
    Reexec {
        /// The snapshot's bytes.
        snapshot: Vec<u8>,
        /// The descriptors.
        keep: Vec<RawFd>,
    },
    /// [`super::Sys::lookup_user`].
    LookupUser(String),
    /// [`super::Sys::lookup_group`].
    LookupGroup(String),
    /// [`super::Sys::mount`].
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
    /// [`super::Sys::umount`].
    Umount(PathBuf),
    /// [`super::Sys::remount_readonly`].
    RemountReadonly(PathBuf),
    /// [`super::Sys::sync`].
    Sync,
    /// [`super::Sys::reboot`].
    Reboot(RebootCmd),
    /// [`super::Sys::set_cad_disabled`].
    SetCadDisabled,
    /// [`super::Sys::sethostname`].
    Sethostname(String),
    /// [`super::Sys::write_sysctl`]: the setting's path and value.
    WriteSysctl(PathBuf, String),
    /// [`super::Sys::open_events`] (the first time only: it is idempotent).
    OpenEvents,
    /// [`super::Sys::wait`], with its time-out.
    Wait(Option<Duration>),
    /// [`super::Sys::watch`].
    Watch(Token, Interest),
    /// [`super::Sys::rewatch`].
    Rewatch(Token, Interest),
    /// [`super::Sys::unwatch`], with the token the descriptor had.
    Unwatch(Token),
    /// [`super::Sys::bind_listener`].
    BindListener(PathBuf),
    /// [`super::Sys::bind_notify_socket`].
    BindNotifySocket(PathBuf),
    /// [`super::Sys::remove_socket`].
    RemoveSocket(PathBuf),
    /// [`super::Sys::listen`], with the `Listen…=` line as status shows
    /// it (`stream 127.0.0.1:80`).
    Listen(String),
    /// [`super::Sys::path_watch_add`].
    PathWatch(PathBuf),
    /// [`super::Sys::read_dir`].
    ReadDir(PathBuf),
    /// [`super::Sys::create_dir_all`].
    CreateDir(PathBuf),
    /// [`super::Sys::write_file`].
    WriteFile(PathBuf),
    /// [`super::Sys::remove_file`].
    RemoveFile(PathBuf),
    /// [`super::Sys::file_mtime_us`].
    FileMtime(PathBuf),
    /// [`super::Sys::touch_at`].
    Touch(PathBuf, u64),
    /// [`super::Sys::chown`].
    Chown {
        /// The file.
        path: PathBuf,
        /// The owner.
        uid: u32,
        /// The group.
        gid: u32,
    },
    /// [`super::Sys::read_link`].
    ReadLink(PathBuf),
    /// `symlink`.
    Symlink {
        /// What the link points at.
        target: PathBuf,
        /// The link.
        link: PathBuf,
    },
    /// [`super::Sys::owner_and_mode`].
    Stat(PathBuf),
    /// [`super::Sys::release_free_memory`].
    ReleaseFreeMemory,
    /// [`super::Sys::set_mempolicy`].
    SetMempolicy(
        Result<
            flotilla_units::context::placement::MemRequest,
            flotilla_units::context::placement::InvalidPolicy,
        >,
    ),
    /// [`super::Sys::check_conditions`], for this unit.
    CheckConditions(String),
    /// [`super::Sys::open_console`].
    OpenConsole,
    /// [`super::Sys::set_default_path`]: whether it replaces a `PATH`.
    SetDefaultPath(bool),
}

/// A method whose next call can be made to fail
/// ([`super::FakeSys::fail_next`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// [`super::Sys::spawn`].
    Spawn,
    /// [`super::Sys::kill`].
    Kill,
    /// [`super::Sys::killpg`].
    KillPg,
    /// [`super::Sys::kill_all`].
    KillAll,
    /// [`super::Sys::wait_any`].
    WaitAny,
    /// [`super::Sys::set_child_subreaper`].
    SetChildSubreaper,
    /// [`super::Sys::mount`].
    Mount,
    /// [`super::Sys::umount`].
    Umount,
    /// [`super::Sys::remount_readonly`].
    RemountReadonly,
    /// [`super::Sys::reboot`].
    Reboot,
    /// [`super::Sys::set_cad_disabled`].
    SetCadDisabled,
    /// [`super::Sys::sethostname`].
    Sethostname,
    /// [`super::Sys::write_sysctl`].
    WriteSysctl,
    /// [`super::Sys::open_events`].
    OpenEvents,
    /// [`super::Sys::bind_listener`].
    BindListener,
    /// [`super::Sys::bind_notify_socket`].
    BindNotifySocket,
    /// [`super::Sys::listen`].
    Listen,
    /// [`super::Sys::create_dir_all`].
    CreateDir,
    /// [`super::Sys::open_console`].
    OpenConsole,
    /// [`super::Sys::path_stamp_add`].
    PathStampAdd,
    /// [`super::Sys::write_file`].
    WriteFile,
}
