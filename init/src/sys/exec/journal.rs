//! A service's output on journald's stream socket, as systemd connects it
//! for `StandardOutput=journal` (docs/service-context.md, "The journal").
//!
//! The child connects before it changes its identity (journald believes
//! the unit's name in the header only from a peer with UID 0, and reads
//! the sender's PID, cgroup and command from the connection), writes the
//! header, and puts the socket on its standard output and/or error. When
//! any of that fails (journald's socket is gone, its backlog full), the
//! streams stay on the unit's log pipes: the lines are kept, in the init's
//! ring. The connection is non-blocking until the header is written, so
//! that a journald that does not accept can never hold the init (which
//! waits for the child's exec) up.

use std::ffi::c_int;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use nix::sys::socket::{SockaddrLike, UnixAddr};

/// journald's stream socket.
pub const STDOUT_SOCKET: &str = "/run/systemd/journal/stdout";

/// journald's socket for messages in its native protocol.
pub const NATIVE_SOCKET: &str = "/run/systemd/journal/socket";

/// The init's datagram socket to [`NATIVE_SOCKET`], made at the first
/// message (-1 until then; gone at a re-exec, close-on-exec).
static NATIVE_FD: AtomicI32 = AtomicI32::new(-1);

/// Sends `datagram`, a message in journald's native protocol (the
/// manager's own about a unit: `flotilla_units::unit_messages`), to
/// journald. A message journald does not take at once (its socket
/// missing, its queue full) is lost: the init never waits for journald,
/// and the console has the line too.
pub fn send_native(datagram: &[u8]) {
    let mut fd = NATIVE_FD.load(Ordering::Relaxed);
    if fd < 0 {
        // SAFETY: socket(2) takes no pointers; the result is checked.
        fd = unsafe {
            libc::socket(
                libc::AF_UNIX,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
                0,
            )
        };
        if fd < 0 {
            return;
        }
        NATIVE_FD.store(fd, Ordering::Relaxed);
    }
    let Ok(addr) = UnixAddr::new(NATIVE_SOCKET) else {
        return;
    };
    // SAFETY: the buffer and the address are valid for their lengths.
    unsafe {
        libc::sendto(
            fd,
            datagram.as_ptr().cast(),
            datagram.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            addr.as_ptr().cast(),
            addr.len(),
        )
    };
}

/// The room the parent leaves for `JOURNAL_STREAM`'s value in the
/// child's environment: the child writes `DEV:INO` there, two 64-bit
/// numbers in decimal (at most 20 digits each) and a colon.
pub const STREAM_ID_ROOM: usize = 20 + 1 + 20;

/// journald's own default for a stream's send buffer (systemd's
/// `SNDBUF_SIZE`): a burst of output does not block the service at once.
const SEND_BUFFER: c_int = 8 << 20;

/// One spawn's connection to the journal, prepared by the parent.
#[derive(Debug)]
pub struct JournalStream {
    addr: UnixAddr,
    header: Vec<u8>,
    /// Standard output, standard error.
    targets: [bool; 2],
    /// Set by the child once the socket is on its streams.
    connected: AtomicBool,
}

impl JournalStream {
    /// A stream to the socket at `path` (journald's: [`STDOUT_SOCKET`])
    /// with `header` (`flotilla_units::context::journal`) onto standard
    /// output and/or standard error; `None` if the path does not fit in a
    /// socket address.
    pub fn new(path: &Path, header: Vec<u8>, stdout: bool, stderr: bool) -> Option<JournalStream> {
        Some(JournalStream {
            addr: UnixAddr::new(path).ok()?,
            header,
            targets: [stdout, stderr],
            connected: AtomicBool::new(false),
        })
    }

    /// The socket's path.
    pub fn socket(&self) -> Option<&Path> {
        self.addr.path()
    }

    /// Whether the child's output went to the journal (read after the
    /// spawn returned).
    pub fn connected(&self) -> bool {
        self.connected.load(Ordering::Relaxed)
    }

    /// In the child: the socket, connected and past its header, at a
    /// descriptor above 2; -1 if it cannot be had. Only system calls.
    ///
    /// # Safety
    /// Called by the spawned child, which owns its descriptor table.
    pub(in crate::sys) unsafe fn connect(&self) -> c_int {
        let fd = libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        );
        if fd < 0 {
            return -1;
        }
        // Above the standard streams, which the child fills afterwards.
        let fd = if fd < 3 {
            let moved = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3);
            libc::close(fd);
            if moved < 0 {
                return -1;
            }
            moved
        } else {
            fd
        };
        if libc::connect(fd, SockaddrLike::as_ptr(&self.addr), self.addr.len()) < 0 {
            libc::close(fd);
            return -1;
        }
        libc::shutdown(fd, libc::SHUT_RD);
        let size = SEND_BUFFER;
        let len = std::mem::size_of::<c_int>() as libc::socklen_t;
        let size_ptr = std::ptr::addr_of!(size).cast();
        if libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, size_ptr, len) < 0 {
            libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, size_ptr, len);
        }
        let mut rest: &[u8] = &self.header;
        while !rest.is_empty() {
            let n = libc::write(fd, rest.as_ptr().cast(), rest.len());
            if n <= 0 {
                libc::close(fd);
                return -1;
            }
            rest = rest.get(n as usize..).unwrap_or_default();
        }
        // The service writes as to any stream: blocking.
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0 {
            libc::close(fd);
            return -1;
        }
        fd
    }

    /// In the child, once its standard streams are in place: the socket
    /// `fd` (from [`JournalStream::connect`]) onto them, then closed. The
    /// stream's device and inode (systemd's `JOURNAL_STREAM`, by which a
    /// program knows its output is on the journal), once it is on them.
    ///
    /// # Safety
    /// As for [`JournalStream::connect`].
    pub(in crate::sys) unsafe fn attach(&self, fd: c_int) -> Option<(u64, u64)> {
        if fd < 0 {
            return None;
        }
        // SAFETY: all zeros is a valid `stat`; fstat(2) fills it.
        let mut st: libc::stat = std::mem::zeroed();
        let mut ok = libc::fstat(fd, &mut st) == 0;
        for (target, on) in (1..).zip(self.targets) {
            if on && libc::dup2(fd, target) < 0 {
                ok = false;
            }
        }
        libc::close(fd);
        if !ok {
            return None;
        }
        self.connected.store(true, Ordering::Relaxed);
        Some((st.st_dev, st.st_ino))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;
    use crate::sys::real::RealSys;
    use crate::sys::tests::{process_lock, wait_for};
    use crate::sys::{Env, SpawnRequest, Stdio, Sys};
    use std::io::Read;
    use std::os::fd::{AsFd, AsRawFd, OwnedFd};
    use std::os::unix::net::UnixListener;

    const HEADER: &[u8] = b"sh\nt.service\n6\n1\n0\n0\n0\n";

    /// The environment with the room the init makes for `JOURNAL_STREAM`.
    fn env() -> Env {
        let mut env = Env::new();
        env.set("PATH", "/usr/bin:/bin").unwrap();
        env.set("JOURNAL_STREAM", &"0".repeat(STREAM_ID_ROOM))
            .unwrap();
        env
    }

    /// A blocking pipe: (read end, write end).
    fn pipe() -> (std::fs::File, OwnedFd) {
        let (r, w) = nix::unistd::pipe().unwrap();
        (std::fs::File::from(r), w)
    }

    /// Runs `script` with both streams on a pipe and on `stream`; what
    /// the pipe got, and the PID.
    fn run(sys: &RealSys, script: &str, stream: &JournalStream) -> (String, i32) {
        let argv = vec!["/bin/sh".to_string(), "-c".into(), script.into()];
        let env = env();
        let (mut r, w) = pipe();
        let req = SpawnRequest::new(&argv, &env)
            .stdout(Stdio::Fd(w.as_fd()))
            .stderr(Stdio::Fd(w.as_fd()))
            .journal(stream);
        let pid = sys.spawn(&req).unwrap();
        drop(w);
        let mut got = String::new();
        r.read_to_string(&mut got).unwrap();
        wait_for(sys, pid);
        (got, pid)
    }

    #[test]
    fn the_output_goes_to_the_stream_after_its_header() {
        let _g = process_lock();
        let sys = RealSys::new();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stdout");
        let listener = UnixListener::bind(&path).unwrap();
        let stream = JournalStream::new(&path, HEADER.to_vec(), true, true).unwrap();
        let script = "echo out; echo err >&2; \
                      echo \"$JOURNAL_STREAM $(stat -L -c %d:%i /proc/$$/fd/1)\"";
        let (piped, pid) = run(&sys, script, &stream);
        assert!(stream.connected());
        assert_eq!(piped, "", "nothing on the unit's log pipe");
        let (mut conn, _) = listener.accept().unwrap();
        // journald reads the sender from the connection: the service's own
        // process (it connected before its exec), as root.
        let cred = nix::sys::socket::getsockopt(&conn, nix::sys::socket::sockopt::PeerCredentials)
            .unwrap();
        assert_eq!((cred.pid(), cred.uid()), (pid, 0));
        let mut got = Vec::new();
        conn.read_to_end(&mut got).unwrap();
        let got = String::from_utf8_lossy(&got);
        let body = got
            .strip_prefix(std::str::from_utf8(HEADER).unwrap())
            .unwrap_or_else(|| panic!("no header: {got:?}"));
        let lines: Vec<&str> = body.lines().collect();
        assert_eq!(lines[..2], ["out", "err"]);
        // JOURNAL_STREAM names the stream the output is on, as systemd's.
        let (said, actual) = lines[2].split_once(' ').unwrap();
        assert_eq!(said, actual, "{body}");
    }

    #[test]
    fn without_the_socket_the_output_stays_on_the_pipe() {
        let _g = process_lock();
        let sys = RealSys::new();
        let dir = tempfile::tempdir().unwrap();
        let stream =
            JournalStream::new(&dir.path().join("none"), HEADER.to_vec(), true, false).unwrap();
        let script = "echo out; echo err >&2; echo \"[$JOURNAL_STREAM]\"";
        let (piped, _) = run(&sys, script, &stream);
        assert!(!stream.connected());
        assert_eq!(
            piped, "out\nerr\n[]\n",
            "no stream, no JOURNAL_STREAM value"
        );
    }

    /// A journald that does not accept (its backlog full) never holds the
    /// spawn up: the child's connect does not wait, the output stays on
    /// the pipe.
    #[test]
    fn a_full_backlog_leaves_the_output_on_the_pipe() {
        let _g = process_lock();
        let sys = RealSys::new();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stdout");
        let listener = UnixListener::bind(&path).unwrap();
        // SAFETY: listen(2) on our socket: a backlog of one pending
        // connection, which the first client takes.
        assert_eq!(unsafe { libc::listen(listener.as_raw_fd(), 0) }, 0);
        let _pending = std::os::unix::net::UnixStream::connect(&path).unwrap();
        let stream = JournalStream::new(&path, HEADER.to_vec(), true, true).unwrap();
        let (piped, _) = run(&sys, "echo out", &stream);
        assert!(!stream.connected());
        assert_eq!(piped, "out\n");
    }

    #[test]
    fn a_path_too_long_for_a_socket_is_refused() {
        let long = std::path::PathBuf::from(format!("/{}", "x".repeat(200)));
        assert!(JournalStream::new(&long, Vec::new(), true, true).is_none());
    }
}
