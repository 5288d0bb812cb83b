//! The program a spawned child runs to enter its service's context: its
//! steps ([`Op`], each with what a failure of it means), listed in the
//! parent by a [`Builder`] with a name each (what `--check` and a failed
//! spawn name), and the [`Scratch`] the parent and the child share. The
//! child runs them with `sandbox::run`.

use std::ffi::{c_int, c_uint, CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64};

use flotilla_units::context::placement::{InvalidPolicy, MemRequest};
use seccompiler::BpfProgram;

/// A link of the unit's directories (`dirs.rs`'s `make_link`): from a
/// directory's usual place to where it is kept below `private/`, or one
/// of a `NAME:LINK` word.
#[derive(Debug)]
pub(crate) struct DirLink {
    /// Its missing parents to make (mode 0755), outermost first.
    pub parents: Vec<CString>,
    /// Where the link is (`/var/lib/NAME`).
    pub path: CString,
    /// What it says (`private/NAME`).
    pub target: CString,
    /// A link there that says something else is replaced (the private
    /// directory's, whose place a dynamic user takes over), else an
    /// error (`EEXIST`), as systemd's `symlink_idempotent`.
    pub replace: bool,
}

/// One step of the child.
#[derive(Debug)]
pub(crate) enum Op {
    /// Makes one of the unit's directories (`dirs.rs`); `status` is the
    /// exit status that says which kind failed.
    MakeDir {
        parents: Vec<CString>,
        path: CString,
        mode: libc::mode_t,
        owner: Option<(libc::uid_t, libc::gid_t)>,
        status: u8,
        /// A directory kept below its kind's `private/` (a dynamic
        /// user's): the link to it from its usual place.
        link: Option<DirLink>,
        /// One not kept there: its place there, moved back up when a
        /// link at `path` leads to it.
        private_copy: Option<CString>,
    },
    /// Makes the link of a `NAME:LINK` word (`dirs.rs`); `status` as
    /// [`Op::MakeDir`]'s.
    MakeLink { link: DirLink, status: u8 },
    /// Opens an output file onto standard output and/or error (`dirs.rs`).
    OpenOutput {
        path: CString,
        flags: c_int,
        stdout: bool,
        stderr: bool,
    },
    /// Opens a file onto standard input, and onto output and error when
    /// they follow it (`terminal.rs`).
    OpenInput {
        path: CString,
        stdout: bool,
        stderr: bool,
    },
    /// Prepares a terminal and opens it onto the standard streams
    /// `targets` says; `mode`: taken as the controlling terminal, as
    /// `StandardInput=tty…` says (`terminal.rs`).
    OpenTty {
        path: CString,
        mode: Option<flotilla_units::context::input::TtyMode>,
        prepare: TtyPrepare,
        targets: [bool; 3],
    },
    /// Makes a new detached tmpfs for the unit's credentials
    /// (`credentials.rs`), kept in `fd`; `total` counts what is written.
    CredentialsBegin {
        base: CString,
        /// In the unit's directory itself, a plain one (no mount).
        plain: Option<CString>,
        fd: AtomicI32,
        total: AtomicU64,
    },
    /// Writes one credential into the tmpfs of op `begin`
    /// (`credentials.rs`).
    Credential {
        begin: usize,
        id: CString,
        sources: Vec<CString>,
        fallback: Option<Vec<u8>>,
        required: bool,
        owner: Option<(libc::uid_t, libc::gid_t)>,
    },
    /// Writes every credential of `dirs` that `import` matches into the
    /// tmpfs of op `begin` (`credentials.rs`).
    ImportCredentials {
        begin: usize,
        import: flotilla_units::context::credentials::Import,
        dirs: Vec<CString>,
        owner: Option<(libc::uid_t, libc::gid_t)>,
    },
    /// Puts the tmpfs of op `begin`, read-only, on `dir`; or, when op
    /// `begin` wrote into `dir` itself, makes it read-only
    /// (`credentials.rs`).
    CredentialsEnd {
        begin: usize,
        dir: CString,
        owner: Option<(libc::uid_t, libc::gid_t)>,
    },
    /// Writes `0` to this `cgroup.procs`: the child joins its cgroup.
    JoinCgroup(CString),
    /// Writes this text to `/proc/self/oom_score_adj`.
    OomScoreAdj(Vec<u8>),
    /// `setpriority(PRIO_PROCESS, 0, n)`.
    Nice(c_int),
    /// `sched_setscheduler(0, policy, {priority})`.
    Scheduler { policy: c_int, priority: c_int },
    /// `ioprio_set(IOPRIO_WHO_PROCESS, 0, value)`.
    IoPrio(c_int),
    /// `sched_setaffinity(0, …)` with this CPU bitmap (`CPUAffinity=`).
    CpuAffinity(Vec<u64>),
    /// `set_mempolicy(2)` (`NUMAPolicy=`, `NUMAMask=`; `placement.rs`).
    MemPolicy(Result<MemRequest, InvalidPolicy>),
    /// `prlimit(0, resource, {soft, hard})`.
    Rlimit {
        resource: c_uint,
        soft: u64,
        hard: u64,
    },
    /// `unshare(flags)`.
    Unshare(c_int),
    /// A user namespace of its own with these maps (`userns.rs`).
    PrivateUsers { uid_map: Vec<u8>, gid_map: Vec<u8> },
    /// Brings the loopback interface of a new network namespace up.
    LoopbackUp,
    /// Every mount a slave: nothing made here propagates back.
    MakeSlave,
    /// A copy of the tree at `source` as it is now (its own mount only
    /// when not `recursive`), kept for a `Restore` (the descriptor lives
    /// in the child's table; -1 when none).
    Snapshot {
        source: CString,
        recursive: bool,
        fd: AtomicI32,
    },
    /// Puts the snapshot taken by op `snapshot` on top of `target`,
    /// read-only with everything below it when asked. With `mount_point`,
    /// a missing `target` is made first: these parents (outermost first),
    /// then a directory or an empty file, as the snapshot's root is.
    Restore {
        snapshot: usize,
        target: CString,
        read_only: bool,
        mount_point: Option<Vec<CString>>,
    },
    /// `path` and everything below it read-only (`path` is `/` itself, or
    /// is bound onto itself first).
    ReadOnly(CString),
    /// `path` and everything below it not executable (`noexec`) or
    /// executable again (`path` is `/` itself, or is bound onto itself
    /// first).
    Exec { path: CString, noexec: bool },
    /// `path` covered by an empty, mode-000, read-only node; `file` is the
    /// init's empty file, for paths that are not directories.
    Inaccessible { path: CString, file: CString },
    /// A tmpfs on `path` with these `mount(2)` flags and data, holding
    /// the directories `dirs` (outermost first: the mount points of what
    /// the plan puts back below it) and `links`, then made read-only
    /// (this mount alone) if `read_only`.
    Tmpfs {
        path: CString,
        flags: libc::c_ulong,
        data: CString,
        dirs: Vec<CString>,
        links: Vec<DirLink>,
        read_only: bool,
    },
    /// A new `/dev`; the ops listed hold snapshots of the host's `pts`,
    /// `shm`, `mqueue` (taken before anything was made read-only).
    PrivateDev { dirs: Vec<(&'static CStr, usize)> },
    /// A new procfs instance at `path` with `options` (`hidepid=`,
    /// `subset=pid`).
    Proc { path: CString, options: CString },
    /// `umask(mask)`.
    Umask(libc::mode_t),
    /// `SIGPIPE` back to its default disposition (`IgnoreSIGPIPE=no`; the
    /// child ignores it otherwise, as systemd's services do).
    DefaultSigpipe,
    /// Drops from the bounding set every capability up to `last` that is
    /// not in `keep`.
    DropBounding { keep: u64, last: u32 },
    /// `prctl(PR_SET_KEEPCAPS, 1)`: the permitted set survives the switch
    /// to a non-root user (for ambient capabilities).
    KeepCaps,
    /// After the identity change: these capabilities permitted, effective,
    /// inheritable and ambient (`non_root`: only they remain).
    Ambient { caps: u64, non_root: bool },
    /// `AppArmorProfile=`: `exec PROFILE` written to the child's
    /// `attr/apparmor/exec` (or `attr/exec`), the profile it changes to at
    /// `execve`, as systemd's `aa_change_onexec()`.
    AppArmorExec(Vec<u8>),
    /// `prctl(PR_SET_NO_NEW_PRIVS, 1)`.
    NoNewPrivs,
    /// Installs a seccomp program.
    Seccomp(BpfProgram),
}

impl Op {
    /// Whether the op works on the file system outside the init's own
    /// tmpfs, where a call may wait on a disk, or on a terminal, where it
    /// may wait for a carrier or another session: a spawn with such an op
    /// hands its child off (`spawn/child.rs`) so that the init does not
    /// wait with it.
    pub(crate) fn may_wait_on_disk(&self) -> bool {
        matches!(
            self,
            Op::MakeDir { .. }
                | Op::MakeLink { .. }
                | Op::OpenOutput { .. }
                | Op::OpenInput { .. }
                | Op::OpenTty { .. }
                | Op::CredentialsBegin { .. }
                | Op::Credential { .. }
                | Op::ImportCredentials { .. }
                | Op::CredentialsEnd { .. }
        )
    }

    /// The exit status of a handed-off child that failed this op: systemd's
    /// for the same failure where it has one, else 127.
    pub(crate) fn exit_status(&self) -> u8 {
        match self {
            Op::MakeDir { status, .. } | Op::MakeLink { status, .. } => *status,
            Op::OpenOutput { .. } => EXIT_OUTPUT,
            Op::OpenInput { .. } => EXIT_STDIN,
            Op::OpenTty { mode: Some(_), .. } => EXIT_STDIN,
            Op::OpenTty { mode: None, .. } => EXIT_OUTPUT,
            Op::CredentialsBegin { .. }
            | Op::Credential { .. }
            | Op::ImportCredentials { .. }
            | Op::CredentialsEnd { .. } => EXIT_CREDENTIALS,
            Op::AppArmorExec(_) => EXIT_APPARMOR_PROFILE,
            Op::CpuAffinity(_) => EXIT_CPUAFFINITY,
            Op::MemPolicy(_) => EXIT_NUMA_POLICY,
            _ => 127,
        }
    }
}

/// systemd's `EXIT_STDIN`: standard input could not be set up.
pub(crate) const EXIT_STDIN: u8 = 208;
/// systemd's `EXIT_STDOUT`: an output file could not be opened.
pub(crate) const EXIT_OUTPUT: u8 = 209;
/// systemd's `EXIT_APPARMOR_PROFILE`: the AppArmor profile could not be
/// prepared.
pub(crate) const EXIT_APPARMOR_PROFILE: u8 = 231;
/// systemd's `EXIT_CPUAFFINITY`: the CPU affinity could not be set.
pub(crate) const EXIT_CPUAFFINITY: u8 = 215;
/// systemd's `EXIT_NUMA_POLICY`: the memory policy could not be set.
pub(crate) const EXIT_NUMA_POLICY: u8 = 242;
/// systemd's `EXIT_CREDENTIALS`: a credential could not be set up.
pub(crate) const EXIT_CREDENTIALS: u8 = 243;

/// What is done to a terminal before it is opened for the process
/// (`terminal.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct TtyPrepare {
    /// `TTYReset=`.
    pub reset: bool,
    /// `TTYVHangup=`.
    pub vhangup: bool,
    /// `TTYVTDisallocate=` of the virtual console N.
    pub vt: Option<u32>,
}

/// Where a failed op stands: skip it, or fail the spawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnError {
    /// Fail the spawn.
    Fail,
    /// A missing path (`ENOENT`) is skipped (systemd's `-`).
    SkipMissing,
    /// Any failure is passed over (`AppArmorProfile=-NAME`).
    Ignore,
    /// A refusal (`EPERM`, `EACCES`) is skipped and recorded in
    /// [`Scratch::denied`], as systemd skips `OOMScoreAdjust=` in a
    /// container (`degrade.rs`).
    SkipDenied,
}

/// An op and what a failure of it means.
#[derive(Debug)]
pub(crate) struct Step {
    pub(crate) op: Op,
    pub(crate) on_error: OnError,
}

/// What the parent tells the child at each spawn: whether it was born in
/// its cgroup. Lives in the parent's context, shared with the child.
#[derive(Debug)]
pub(crate) struct Scratch {
    /// The child was created in its cgroup (`CLONE_INTO_CGROUP`), so
    /// [`Op::JoinCgroup`] has nothing to do.
    pub(crate) joined: AtomicBool,
    /// Bit `i`: step `i` was skipped as denied ([`OnError::SkipDenied`]).
    pub(crate) denied: AtomicU64,
}

impl Scratch {
    pub(crate) fn new() -> Scratch {
        Scratch {
            joined: AtomicBool::new(false),
            denied: AtomicU64::new(0),
        }
    }
}

/// The child's steps, each with its name, as `context::prepare` adds them.
#[derive(Default)]
pub(in crate::sys) struct Builder {
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The name of each.
    pub names: Vec<String>,
}

impl Builder {
    pub(in crate::sys) fn push(&mut self, op: Op, name: String, on_error: OnError) -> usize {
        self.steps.push(Step { op, on_error });
        self.names.push(name);
        self.steps.len() - 1
    }
}
