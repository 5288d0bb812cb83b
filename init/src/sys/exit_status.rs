//! How a child terminated, as `waitpid(2)` says it.

use std::fmt;

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
