//! systemd's `AttachProcessesToUnit` (and a unit's `AttachProcesses`):
//! processes moved into a running unit's cgroup, or a cgroup below it,
//! by someone who may. Its main caller is a delegated unit's own manager:
//! Debian's `systemd --user` in `user@UID.service` starts a scope for a
//! process of the user's that runs outside its subtree (`runas testuser
//! systemd-run --scope --user`, systemd's test 20), cannot move it across
//! the tree itself (the kernel wants write access to the common
//! ancestor's `cgroup.procs`), and asks the system manager.
//!
//! The rules are systemd 252's (`bus_unit_method_attach_processes`,
//! `unit_pid_attachable`), in its order and words:
//!
//! - the subcgroup is empty (the unit's own cgroup) or an absolute,
//!   normalized path below it ([`subcgroup`]);
//! - the unit is delegated (`Delegate=`) and active;
//! - each process is a valid PID, not the manager's own (PID 1 or the
//!   init), exists, and is no kernel thread;
//! - a caller other than root or the manager's own user moves only
//!   processes of its own user, into a unit of that same user (systemd's
//!   `ref_uid`: the unit's `User=`); a unit without one takes nobody
//!   else's ([`judge`]).
//!
//! Only once every process passed are they moved. The moved processes
//! need no following of their own: the init follows a unit's processes by
//! its cgroup, which covers every cgroup below it (docs/dbus.md). This
//! module decides; the init reads `/proc` and writes `cgroup.procs`
//! (`init/src/runtime/attach.rs`).

use crate::protocol::ErrorCode;

/// Why a move is refused, in systemd's words ([`Refusal::message`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The subcgroup is not an absolute path.
    NotAbsolute(String),
    /// The subcgroup has `.`, `..`, `//` or an over-long part.
    NotNormalized(String),
    /// The unit has no `Delegate=`.
    NotDelegated,
    /// The unit is inactive or failed.
    Inactive,
    /// 0, or past the largest PID.
    InvalidPid(u32),
    /// PID 1 or the init itself.
    Manager(u32),
    /// No such process.
    NoSuchProcess(u32),
    /// A kernel thread.
    KernelThread(u32),
    /// Not a process of the caller's user.
    NotCallers(u32),
    /// Not a process of the unit's user.
    NotUnits(u32),
}

impl Refusal {
    /// systemd's message for it.
    pub fn message(&self) -> String {
        match self {
            Refusal::NotAbsolute(p) => format!("Control group path is not absolute: {p}"),
            Refusal::NotNormalized(p) => format!("Control group path is not normalized: {p}"),
            Refusal::NotDelegated => {
                "Process migration not available on non-delegated units.".to_string()
            }
            Refusal::Inactive => "Unit is not active, refusing.".to_string(),
            Refusal::InvalidPid(p) => format!("Process identifier {p} is not valid."),
            Refusal::Manager(p) => format!("Process {p} is a manager process, refusing."),
            Refusal::NoSuchProcess(p) => format!("Process with ID {p} does not exist."),
            Refusal::KernelThread(p) => format!("Process {p} is a kernel thread, refusing."),
            Refusal::NotCallers(p) => format!("Process {p} not owned by client's UID. Refusing."),
            Refusal::NotUnits(p) => {
                format!("Process {p} not owned by target unit's UID. Refusing.")
            }
        }
    }

    /// The protocol's code for it, which flotilla-busd turns into
    /// systemd's error name: `invalid` for systemd's `InvalidArgs`,
    /// `permission-denied` for `AccessDenied`, and `not-possible` for
    /// `UnixProcessIdUnknown` (a process that does not exist, the only
    /// refusal of that code).
    pub fn code(&self) -> ErrorCode {
        match self {
            Refusal::NoSuchProcess(_) => ErrorCode::NotPossible,
            Refusal::NotCallers(_) | Refusal::NotUnits(_) => ErrorCode::PermissionDenied,
            _ => ErrorCode::Invalid,
        }
    }
}

/// The longest file name (`NAME_MAX`) and path (`PATH_MAX`) Linux takes.
const NAME_MAX: usize = 255;
const PATH_MAX: usize = 4096;

/// The subcgroup asked for: `None` for the unit's own cgroup (an empty
/// path), else the path below it without its leading slashes. Refused
/// unless absolute and normalized as systemd's `path_is_normalized`: no
/// `.` or `..` part, no `//`, no part longer than a file name may be.
pub fn subcgroup(path: &str) -> Result<Option<&str>, Refusal> {
    if path.is_empty() {
        return Ok(None);
    }
    if !path.starts_with('/') {
        return Err(Refusal::NotAbsolute(path.to_string()));
    }
    let bad = path.len() >= PATH_MAX
        || path.contains("//")
        || path
            .split('/')
            .any(|part| part == "." || part == ".." || part.len() > NAME_MAX);
    if bad {
        return Err(Refusal::NotNormalized(path.to_string()));
    }
    Ok(Some(path.trim_start_matches('/')).filter(|p| !p.is_empty()))
}

/// Whether the caller may move any process (root, or the manager's own
/// user) or only its user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// Root or the manager's own user.
    Privileged,
    /// Another user: its UID, and the unit's user (`None`: the unit has
    /// no `User=`, and takes no unprivileged caller's process).
    User {
        /// The caller's UID.
        uid: u32,
        /// The unit's UID.
        unit: Option<u32>,
    },
}

impl Caller {
    /// The caller `uid` of a manager running as `manager_uid`, for a unit
    /// whose processes run as `unit_uid`.
    pub fn of(uid: u32, manager_uid: u32, unit_uid: Option<u32>) -> Caller {
        if uid == 0 || uid == manager_uid {
            Caller::Privileged
        } else {
            Caller::User {
                uid,
                unit: unit_uid,
            }
        }
    }
}

/// What `/proc` says of a process ([`process`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Process {
    /// Its real user (the first of `Uid:` in `/proc/PID/status`, as
    /// systemd reads it).
    pub uid: u32,
    /// A kernel thread (`PF_KTHREAD` in `/proc/PID/stat`'s flags).
    pub kernel_thread: bool,
}

/// The kernel's `PF_KTHREAD` flag.
const PF_KTHREAD: u64 = 0x0020_0000;

/// A process from its `/proc/PID/status` and `/proc/PID/stat` texts;
/// `None` when either says nothing usable (the process is gone).
pub fn process(status: &str, stat: &str) -> Option<Process> {
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    // The command, field 2, may hold spaces and parentheses: the fields
    // after it start at the last `)`; the flags are field 9.
    let (_, rest) = stat.rsplit_once(')')?;
    let flags: u64 = rest.split_whitespace().nth(6)?.parse().ok()?;
    Some(Process {
        uid,
        kernel_thread: flags & PF_KTHREAD != 0,
    })
}

/// Whether process `pid` may be moved by `caller`: `init` is the init's
/// own PID, `found` what `/proc` said of it (`None`: no such process).
/// The PID as the kernel takes it, else the refusal.
pub fn judge(pid: u32, init: u32, found: Option<Process>, caller: Caller) -> Result<i32, Refusal> {
    let valid = i32::try_from(pid).ok().filter(|&p| p > 0);
    let Some(raw) = valid else {
        return Err(Refusal::InvalidPid(pid));
    };
    if pid == 1 || pid == init {
        return Err(Refusal::Manager(pid));
    }
    let p = found.ok_or(Refusal::NoSuchProcess(pid))?;
    if p.kernel_thread {
        return Err(Refusal::KernelThread(pid));
    }
    if let Caller::User { uid, unit } = caller {
        if p.uid != uid {
            return Err(Refusal::NotCallers(pid));
        }
        if unit != Some(p.uid) {
            return Err(Refusal::NotUnits(pid));
        }
    }
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subcgroup_is_empty_or_absolute_and_normalized() {
        assert_eq!(subcgroup(""), Ok(None));
        assert_eq!(subcgroup("/"), Ok(None));
        assert_eq!(
            subcgroup("/app.slice/run-r1.scope"),
            Ok(Some("app.slice/run-r1.scope"))
        );
        // A trailing slash is normalized enough for systemd.
        assert_eq!(subcgroup("/sub/"), Ok(Some("sub/")));
        assert_eq!(
            subcgroup("app.slice"),
            Err(Refusal::NotAbsolute("app.slice".into()))
        );
        for bad in ["/a/../b", "/..", "/a//b", "/./a", "/a/.", "//a"] {
            assert_eq!(
                subcgroup(bad),
                Err(Refusal::NotNormalized(bad.into())),
                "{bad}"
            );
        }
        let long = format!("/{}", "x".repeat(256));
        assert!(matches!(subcgroup(&long), Err(Refusal::NotNormalized(_))));
        assert_eq!(
            Refusal::NotAbsolute("a".into()).message(),
            "Control group path is not absolute: a"
        );
    }

    #[test]
    fn proc_says_the_user_and_whether_a_kernel_thread() {
        let status = "Name:\tsleep\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t812\n\
                      Uid:\t4711\t0\t4711\t4711\nGid:\t100\t100\t100\t100\n";
        let stat = "812 (a (odd) name) S 1 812 812 0 -1 4194560 91 0 0 0";
        assert_eq!(
            process(status, stat),
            Some(Process {
                uid: 4711,
                kernel_thread: false
            })
        );
        let kthread = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0";
        assert_eq!(
            process("Uid:\t0\t0\t0\t0\n", kthread),
            Some(Process {
                uid: 0,
                kernel_thread: true
            })
        );
        assert_eq!(process("", stat), None);
        assert_eq!(process(status, ""), None);
    }

    /// systemd's checks in its order: validity, the manager, existence,
    /// kernel threads, then the owners for an unprivileged caller.
    #[test]
    fn each_process_is_judged_as_systemd_judges_it() {
        let mine = Some(Process {
            uid: 4711,
            kernel_thread: false,
        });
        let roots = Some(Process {
            uid: 0,
            kernel_thread: false,
        });
        let user = Caller::of(4711, 0, Some(4711));
        assert_eq!(
            user,
            Caller::User {
                uid: 4711,
                unit: Some(4711)
            }
        );
        assert_eq!(judge(812, 300, mine, user), Ok(812));
        assert_eq!(judge(0, 300, mine, user), Err(Refusal::InvalidPid(0)));
        assert_eq!(
            judge(u32::MAX, 300, mine, user),
            Err(Refusal::InvalidPid(u32::MAX))
        );
        assert_eq!(judge(1, 300, mine, user), Err(Refusal::Manager(1)));
        assert_eq!(judge(300, 300, mine, user), Err(Refusal::Manager(300)));
        assert_eq!(
            judge(812, 300, None, user),
            Err(Refusal::NoSuchProcess(812))
        );
        let kthread = Some(Process {
            uid: 0,
            kernel_thread: true,
        });
        assert_eq!(
            judge(2, 300, kthread, Caller::Privileged),
            Err(Refusal::KernelThread(2))
        );
        // Root and the manager's own user move anyone's process anywhere.
        assert_eq!(Caller::of(0, 0, None), Caller::Privileged);
        assert_eq!(Caller::of(1000, 1000, Some(4711)), Caller::Privileged);
        assert_eq!(judge(812, 300, roots, Caller::Privileged), Ok(812));
        // A user moves only its own processes, into its own units.
        assert_eq!(judge(812, 300, roots, user), Err(Refusal::NotCallers(812)));
        let other_unit = Caller::of(4711, 0, Some(1000));
        assert_eq!(
            judge(812, 300, mine, other_unit),
            Err(Refusal::NotUnits(812))
        );
        let no_user = Caller::of(4711, 0, None);
        assert_eq!(judge(812, 300, mine, no_user), Err(Refusal::NotUnits(812)));
    }

    #[test]
    fn refusals_have_systemds_words_and_the_protocols_codes() {
        let table = [
            (
                Refusal::NotDelegated,
                "Process migration not available on non-delegated units.",
                ErrorCode::Invalid,
            ),
            (
                Refusal::Inactive,
                "Unit is not active, refusing.",
                ErrorCode::Invalid,
            ),
            (
                Refusal::NoSuchProcess(9),
                "Process with ID 9 does not exist.",
                ErrorCode::NotPossible,
            ),
            (
                Refusal::NotCallers(9),
                "Process 9 not owned by client's UID. Refusing.",
                ErrorCode::PermissionDenied,
            ),
            (
                Refusal::NotUnits(9),
                "Process 9 not owned by target unit's UID. Refusing.",
                ErrorCode::PermissionDenied,
            ),
            (
                Refusal::Manager(1),
                "Process 1 is a manager process, refusing.",
                ErrorCode::Invalid,
            ),
        ];
        for (r, message, code) in table {
            assert_eq!(r.message(), message);
            assert_eq!(r.code(), code, "{message}");
        }
    }
}
