//! What a process start is asked ([`SpawnRequest`]): the program, its
//! environment, directory, identity ([`Credentials`]), standard
//! descriptors ([`Stdio`]) and context. `Sys::spawn` and its kin take it.

use crate::sys::Env;
use crate::sys::{context, journal};
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::path::Path;

/// The identity a child switches to before `execve(2)` (`setgroups`,
/// `setresgid`, `setresuid` in the child, in that order); the init must be
/// privileged for it to work.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Credentials {
    /// `setuid(2)`.
    pub uid: Option<u32>,
    /// `setgid(2)`.
    pub gid: Option<u32>,
    /// `setgroups(2)`: the whole supplementary list.
    pub groups: Option<Vec<u32>>,
}

impl Credentials {
    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.uid.is_none() && self.gid.is_none() && self.groups.is_none()
    }

    /// What an init running as `euid` can apply of these: root all of it;
    /// any other user (a container's `--user`) only its own uid, and no
    /// group change (`setresgid` and `setgroups` need `CAP_SETGID`). The
    /// rest is left out and named: `User` when another user was asked,
    /// `Group` when the unit asked for a group (`group_asked`; a user's
    /// own primary group goes with `User`), so that the unit runs as the
    /// init's own user and says what it did not get.
    pub fn within_reach(self, euid: u32, group_asked: bool) -> (Credentials, Vec<&'static str>) {
        if euid == 0 {
            return (self, Vec::new());
        }
        let mut refused = Vec::new();
        if self.uid.is_some_and(|u| u != euid) {
            refused.push("User");
        }
        if group_asked {
            refused.push("Group");
        }
        (Credentials::default(), refused)
    }
}

/// Where a child's stdin, stdout or stderr comes from.
#[derive(Debug, Clone, Copy)]
pub enum Stdio<'a> {
    /// `/dev/null`, opened in the child (read-only for stdin, write-only
    /// otherwise).
    Null,
    /// The init's own descriptor of the same number (the console, as PID 1).
    Inherit,
    /// This descriptor, `dup2(2)`-ed into place: typically
    /// [`crate::outpipe::OutPipe::writer`]. Any number works, 0 to 2
    /// included; the descriptor stays the init's.
    Fd(BorrowedFd<'a>),
    /// A socket the unit is handed by its socket unit
    /// (`StandardInput=socket`, `fd:NAME`), `dup2(2)`-ed into place like
    /// [`Stdio::Fd`]; the init holds it through the spawn.
    Socket(RawFd),
}

impl Stdio<'_> {
    /// The descriptor for [`Stdio::Fd`].
    pub fn raw_fd(&self) -> Option<RawFd> {
        match self {
            Stdio::Fd(fd) => Some(fd.as_raw_fd()),
            Stdio::Socket(fd) => Some(*fd),
            Stdio::Null | Stdio::Inherit => None,
        }
    }
}

/// Everything [`Sys::spawn`] needs to start one process.
///
/// ```
/// use flotilla_init::sys::{Env, SpawnRequest, Stdio};
/// let argv = vec!["/bin/true".to_string()];
/// let env = Env::new();
/// let req = SpawnRequest::new(&argv, &env).stdout(Stdio::Inherit);
/// assert!(req.cwd.is_none());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct SpawnRequest<'a> {
    /// The program and its arguments; `argv[0]` is a path, or a name looked
    /// up in the `PATH` of `env`.
    pub argv: &'a [String],
    /// The child's whole environment (build it with [`Env`]).
    pub env: &'a Env,
    /// `chdir(2)` here before `execve(2)` (after the identity change).
    pub cwd: Option<&'a Path>,
    /// A `cwd` that is missing (or cannot be entered) is no failure: the
    /// child stays in the init's directory.
    pub cwd_optional: bool,
    /// The identity to switch to; `None` keeps the init's.
    pub credentials: Option<&'a Credentials>,
    /// Descriptor 0.
    pub stdin: Stdio<'a>,
    /// Descriptor 1.
    pub stdout: Stdio<'a>,
    /// Descriptor 2.
    pub stderr: Stdio<'a>,
    /// The unit's context (cgroup, limits, namespaces, sandbox) the child
    /// enters before `execve(2)`; `None` changes nothing.
    pub context: Option<&'a context::ChildContext>,
    /// `argv[0]` is only the program's path and `argv[1..]` the words it
    /// gets, its own `argv[0]` first (systemd's `@`).
    pub argv0_given: bool,
    /// Descriptors the child gets as 3, 4, … (a socket unit's, handed to
    /// its service); with any, `env` must hold `LISTEN_PID`, which the
    /// child sets to its own PID before `execve`.
    pub listen_fds: &'a [RawFd],
    /// The handed sockets keep `O_NONBLOCK` (`NonBlocking=yes`); by
    /// default they are handed over blocking, as systemd hands them.
    pub listen_nonblocking: bool,
    /// How many of `listen_fds`, from the first, are the socket units'
    /// sockets, whose `O_NONBLOCK` follows `listen_nonblocking`; the rest
    /// (the descriptor store's) are handed with the flags their sender
    /// gave them, as systemd's `flags_fds()` hands them.
    pub listen_sockets: usize,
    /// Standard output and/or error on journald's stream socket, when the
    /// child can connect; else they stay as given above.
    pub journal: Option<&'a journal::JournalStream>,
    /// The child stays in the init's session, in a process group of its
    /// own made the foreground one of the terminal on descriptor 0 when
    /// that is the session's (the command after `--`: Ctrl-C and job
    /// control reach it, as under tini); else it gets a session of its
    /// own (`setsid`), as every unit.
    pub foreground: bool,
}

impl<'a> SpawnRequest<'a> {
    /// A request to run `argv` with `env`: no `chdir`, the init's identity,
    /// every stdio stream on `/dev/null`.
    pub fn new(argv: &'a [String], env: &'a Env) -> SpawnRequest<'a> {
        SpawnRequest {
            argv,
            env,
            cwd: None,
            cwd_optional: false,
            credentials: None,
            stdin: Stdio::Null,
            stdout: Stdio::Null,
            stderr: Stdio::Null,
            context: None,
            argv0_given: false,
            listen_fds: &[],
            listen_nonblocking: false,
            listen_sockets: 0,
            journal: None,
            foreground: false,
        }
    }

    /// Runs the child in the init's session, as the terminal's foreground
    /// process group ([`SpawnRequest::foreground`]).
    pub fn foreground(mut self) -> Self {
        self.foreground = true;
        self
    }

    /// Puts standard output and/or error on the journal, if it answers.
    pub fn journal(mut self, stream: &'a journal::JournalStream) -> Self {
        self.journal = Some(stream);
        self
    }

    /// Hands the child `fds` as 3, 4, … (`LISTEN_FDS`), all of them
    /// sockets unless `listen_sockets` says fewer.
    pub fn listen_fds(mut self, fds: &'a [RawFd]) -> Self {
        self.listen_fds = fds;
        self.listen_sockets = fds.len();
        self
    }

    /// The handed sockets keep `O_NONBLOCK` (`NonBlocking=yes`).
    pub fn listen_nonblocking(mut self, on: bool) -> Self {
        self.listen_nonblocking = on;
        self
    }

    /// Only the first `n` handed descriptors are sockets whose
    /// `O_NONBLOCK` the spawn sets; the rest come from the descriptor
    /// store and keep their flags.
    pub fn listen_sockets(mut self, n: usize) -> Self {
        self.listen_sockets = n.min(self.listen_fds.len());
        self
    }

    /// `argv[1]` is the `argv[0]` the program sees (systemd's `@`).
    pub fn argv0_given(mut self) -> Self {
        self.argv0_given = self.argv.len() > 1;
        self
    }

    /// Sets the context (an empty one keeps the fast path).
    pub fn context(mut self, ctx: &'a context::ChildContext) -> Self {
        self.context = if ctx.is_empty() { None } else { Some(ctx) };
        self
    }

    /// Sets the working directory.
    pub fn cwd(mut self, cwd: &'a Path) -> Self {
        self.cwd = Some(cwd);
        self
    }

    /// Sets the working directory, which may be missing.
    pub fn optional_cwd(mut self, cwd: &'a Path) -> Self {
        self.cwd = Some(cwd);
        self.cwd_optional = true;
        self
    }

    /// Sets the identity (empty credentials keep the fast path).
    pub fn credentials(mut self, creds: &'a Credentials) -> Self {
        self.credentials = if creds.is_empty() { None } else { Some(creds) };
        self
    }

    /// Sets stdin.
    pub fn stdin(mut self, s: Stdio<'a>) -> Self {
        self.stdin = s;
        self
    }

    /// Sets stdout.
    pub fn stdout(mut self, s: Stdio<'a>) -> Self {
        self.stdout = s;
        self
    }

    /// Sets stderr.
    pub fn stderr(mut self, s: Stdio<'a>) -> Self {
        self.stderr = s;
        self
    }

    /// `argv[0]`, or `""` for an empty command.
    pub fn program(&self) -> &'a str {
        self.argv.first().map_or("", String::as_str)
    }
}
