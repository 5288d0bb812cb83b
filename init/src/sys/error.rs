//! Why a system call of the init failed: [`SysError`], each variant with
//! what the call was about, and [`Os`], an `errno` in the lowercase words
//! the init's messages are written in.

use std::fmt;
use std::path::PathBuf;

use nix::errno::Errno;

/// An `errno` value displayed in lowercase words ("no such file or
/// directory"), as error messages here are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Os(pub Errno);

impl fmt::Display for Os {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let desc = self.0.desc();
        let mut chars = desc.chars();
        if let Some(first) = chars.next() {
            write!(f, "{}{}", first.to_ascii_lowercase(), chars.as_str())?;
        }
        Ok(())
    }
}

/// Why a system call failed, with what it was about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SysError {
    /// `argv` was empty.
    #[error("empty command")]
    EmptyCommand,
    /// An argument, the working directory or the program path holds a NUL
    /// byte.
    #[error("{program}: {what} contains a NUL byte")]
    Nul {
        /// `argv[0]`.
        program: String,
        /// Which part.
        what: &'static str,
    },
    /// The program was not found (before anything was forked).
    #[error("{program}: {reason}")]
    NoProgram {
        /// `argv[0]`, as written.
        program: String,
        /// `no such file`, `not found in PATH`, `is a directory`, …
        reason: String,
    },
    /// Spawning failed in the parent (`clone(2)`, the spawner's reserved
    /// descriptors or stack).
    #[error("{program}: spawn: {errno}")]
    Spawn {
        /// `argv[0]`.
        program: String,
        /// The error.
        errno: Os,
    },
    /// A step of the child failed, `execve(2)` included (or, before the
    /// clone, opening `/dev/null` or putting a stream in place); the child,
    /// if there was one, has been reaped.
    #[error("{program}: {step}: {errno}")]
    ChildSetup {
        /// `argv[0]`.
        program: String,
        /// `setgroups`, `setgid`, `setuid`, `set up stdout`, `chdir <dir>`,
        /// `execve`, `open /dev/null`, …
        step: String,
        /// The error.
        errno: Os,
        /// systemd's exit status for the same failure of its child
        /// (`EXIT_EXEC` 203, `EXIT_USER` 217 …).
        status: u8,
    },
    /// The child was killed by a signal before it reached `execve(2)` (a
    /// seccomp filter of its context refusing a call of its own setup);
    /// it has been reaped.
    #[error("{program}: killed by {signal} before execve")]
    ChildKilled {
        /// `argv[0]`.
        program: String,
        /// The signal's name.
        signal: String,
    },
    /// `kill(2)` or `killpg(3)` failed.
    #[error("kill {target} signal {signal}: {errno}")]
    Kill {
        /// `pid 12`, `process group 12` or `every process`.
        target: String,
        /// The signal number.
        signal: i32,
        /// The error.
        errno: Os,
    },
    /// `waitpid(2)` failed.
    #[error("waitpid: {0}")]
    Wait(Os),
    /// A file could not be opened or read.
    #[error("{path}: {errno}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        errno: Os,
    },
    /// A file was not a regular file.
    #[error("{path}: not a regular file")]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// It is a directory.
        directory: bool,
    },
    /// A file was longer than allowed.
    #[error("{path}: longer than {max} bytes")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit.
        max: usize,
    },
    /// A user name or number is not in the passwd database.
    #[error("user {0}: no such user")]
    NoUser(String),
    /// A group name or number is not in the group database.
    #[error("group {0}: no such group")]
    NoGroup(String),
    /// A passwd or group look-up failed.
    #[error("{what} {name}: look-up failed: {errno}")]
    Lookup {
        /// `user` or `group`.
        what: &'static str,
        /// The name.
        name: String,
        /// The error.
        errno: Os,
    },
    /// `mount(2)`, `umount2(2)` or a remount failed.
    #[error("{op} {target}: {errno}")]
    Mount {
        /// `mount`, `umount` or `remount read-only`.
        op: &'static str,
        /// The mount point.
        target: PathBuf,
        /// The error.
        errno: Os,
    },
    /// A socket could not be made, bound or set up.
    #[error("{path}: {op}: {errno}")]
    Socket {
        /// The socket's path.
        path: PathBuf,
        /// `bind`, `chmod`, `unlink stale socket`, …
        op: &'static str,
        /// The error.
        errno: Os,
    },
    /// A socket path cannot be used (too long, a NUL byte, relative).
    #[error("{path}: {reason}")]
    BadSocketPath {
        /// The path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Something other than a socket is where a socket is to be bound.
    #[error("{0} exists and is not a socket")]
    NotASocket(PathBuf),
    /// A directory could not be listed or made, or a file changed owner.
    #[error("{op} {path}: {errno}")]
    File {
        /// `read directory`, `create directory`, `chown`, `readlink`.
        op: &'static str,
        /// The path.
        path: PathBuf,
        /// The error.
        errno: Os,
    },
    /// Another call failed (`reboot`, `prctl`, `sethostname`, …).
    #[error("{call}: {errno}")]
    Call {
        /// What was called, with its argument.
        call: String,
        /// The error.
        errno: Os,
    },
}

impl SysError {
    /// The status systemd's child exits with when it meets the same
    /// failure on its way to the program (`EXIT_EXEC` 203 for a program
    /// not found or not run, `EXIT_USER` 217, `EXIT_GROUP` 216, the
    /// failed step's otherwise); `None` for a failure of the init's own.
    /// A `Type=simple` service's start is done before these
    /// (`UnitSpec::started_at_fork`).
    pub fn exit_status(&self) -> Option<i32> {
        match self {
            SysError::NoProgram { .. } => Some(203),
            SysError::NoUser(_) | SysError::Lookup { what: "user", .. } => Some(217),
            SysError::NoGroup(_) | SysError::Lookup { .. } => Some(216),
            SysError::ChildSetup { status, .. } => Some(i32::from(*status)),
            _ => None,
        }
    }
}
