//! The writer's connection to the init, and its signals: one `poll(2)` on
//! the socket and a `signalfd(2)` (SIGTERM, SIGINT and SIGHUP blocked and
//! read from it), so the writer wakes for a reply, a request to stop or
//! its retry time, and for nothing else.

use flotilla_client::{parse_reply, request_line};
use flotilla_units::protocol::{Reply, Request};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What woke the writer.
#[derive(Debug)]
pub enum Event {
    /// A reply from the init (boxed: a batch is big, the other events
    /// are nothing).
    Reply(Box<Reply>),
    /// SIGTERM, SIGINT or SIGHUP: stop.
    Stop,
    /// The deadline passed.
    TimedOut,
    /// The init closed the connection.
    Closed,
}

/// The connection. See the module documentation.
pub struct Channel {
    path: PathBuf,
    stream: UnixStream,
    signals: OwnedFd,
    buf: Vec<u8>,
}

fn open(path: &Path) -> Result<UnixStream, String> {
    UnixStream::connect(path).map_err(|e| {
        format!(
            "cannot reach the init at {}: {}",
            path.display(),
            crate::store::describe(&e)
        )
    })
}

fn os_error(what: &str) -> String {
    format!(
        "{what}: {}",
        crate::store::describe(&io::Error::last_os_error())
    )
}

impl Channel {
    /// Blocks the stop signals (they come through the channel) and
    /// connects to the init at `path`.
    pub fn connect(path: &Path) -> Result<Channel, String> {
        // SAFETY: a sigset_t filled by sigemptyset/sigaddset, then used to
        // block the signals in this (single-threaded) process and to make
        // a signalfd; every return value is checked.
        let signals = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
                libc::sigaddset(&mut set, sig);
            }
            if libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
                return Err(os_error("sigprocmask"));
            }
            let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
            if fd < 0 {
                return Err(os_error("signalfd"));
            }
            OwnedFd::from_raw_fd(fd)
        };
        Ok(Channel {
            path: path.to_path_buf(),
            stream: open(path)?,
            signals,
            buf: Vec::new(),
        })
    }

    /// Connects again (the init closed the connection: it re-executed
    /// itself, and its socket listens on); what was unread is dropped.
    pub fn reconnect(&mut self) -> Result<(), String> {
        self.stream = open(&self.path)?;
        self.buf.clear();
        Ok(())
    }

    /// Sends a request.
    pub fn send(&mut self, request: Request) -> Result<(), String> {
        self.stream
            .write_all(&request_line(request))
            .map_err(|e| format!("send to {}: {}", self.path.display(), e))
    }

    /// Waits for the next reply, a stop signal, or `deadline`.
    pub fn next(&mut self, deadline: Option<Instant>) -> Result<Event, String> {
        loop {
            if let Some(nl) = self.buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=nl).collect();
                return parse_reply(&line)
                    .map(|r| Event::Reply(Box::new(r)))
                    .map_err(|e| e.to_string());
            }
            let timeout = match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok(Event::TimedOut);
                    }
                    // Rounded up: waking early would only wait again.
                    i32::try_from(left.as_millis() + 1).unwrap_or(i32::MAX)
                }
                None => -1,
            };
            let mut fds = [
                libc::pollfd {
                    fd: self.stream.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: self.signals.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: two valid pollfd entries, open descriptors.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(format!("poll: {e}"));
            }
            if fds.get(1).is_some_and(|f| f.revents != 0) {
                let mut info = [0u8; std::mem::size_of::<libc::signalfd_siginfo>()];
                // SAFETY: reads at most the buffer's length into it.
                unsafe {
                    libc::read(
                        self.signals.as_raw_fd(),
                        info.as_mut_ptr().cast(),
                        info.len(),
                    )
                };
                return Ok(Event::Stop);
            }
            if fds.first().is_some_and(|f| f.revents != 0) {
                let mut chunk = [0u8; 64 * 1024];
                match self.stream.read(&mut chunk) {
                    Ok(0) => return Ok(Event::Closed),
                    Ok(n) => self
                        .buf
                        .extend_from_slice(chunk.get(..n).unwrap_or_default()),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if e.kind() == io::ErrorKind::ConnectionReset => {
                        return Ok(Event::Closed)
                    }
                    Err(e) => return Err(format!("read from {}: {e}", self.path.display())),
                }
            }
        }
    }
}
