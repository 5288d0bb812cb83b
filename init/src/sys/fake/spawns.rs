//! The fake's children: a spawn takes the next PID (or fails as the
//! test scripted), keeps the write ends of the child's output pipes until
//! it exits (a test writes its output through them), and is recorded
//! whole ([`SpawnRecord`]).

use std::os::fd::OwnedFd;
use std::path::Path;

use super::super::{Pid, SpawnRequest, Stdio, SysError};
use super::{Call, FakeSys, Op, SpawnRecord};

impl FakeSys {
    /// [`super::super::Sys::spawn`] on the fake.
    pub(super) fn spawn_child(&self, req: &SpawnRequest<'_>) -> Result<Pid, SysError> {
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
        if let Some(pid) = pid {
            // The child holds the write ends of its output pipes: copies
            // kept until it exits, through which a test writes its output.
            let output: Vec<OwnedFd> = [req.stdout, req.stderr]
                .iter()
                .filter_map(|s| match s {
                    Stdio::Fd(fd) => fd.try_clone_to_owned().ok(),
                    Stdio::Null | Stdio::Inherit | Stdio::Socket(_) => None,
                })
                .collect();
            for fd in &output {
                use nix::fcntl::{fcntl, FcntlArg, OFlag};
                let _ = fcntl(fd, FcntlArg::F_SETFL(OFlag::O_NONBLOCK));
                // Room for a test to write a flood in one go (1 MiB is
                // what an unprivileged process may ask for).
                let _ = fcntl(fd, FcntlArg::F_SETPIPE_SZ(1 << 20));
            }
            if !output.is_empty() {
                st.child_output.insert(pid, output);
            }
        }
        st.calls.push(Call::Spawn(SpawnRecord {
            pid,
            argv: req.argv.to_vec(),
            env: req.env.clone(),
            cwd: req.cwd.map(Path::to_path_buf),
            credentials: req.credentials.cloned(),
            stdin: req.stdin.into(),
            stdout: req.stdout.into(),
            stderr: req.stderr.into(),
            listen_fds: req.listen_fds.len(),
            journal: req.journal.and_then(|j| j.socket().map(Path::to_path_buf)),
        }));
        match (pid, failure) {
            (Some(pid), _) => Ok(pid),
            (None, Some(err)) => Err(err),
            (None, None) => Err(SysError::EmptyCommand),
        }
    }
}
