//! The control socket: a unix stream listener speaking newline-delimited JSON
//! (`flotilla_units::protocol`), with every connection non-blocking in the
//! one event loop.
//!
//! This module does framing and buffering only; the runtime decides what a
//! request means. Each connection has a read buffer (a request line may be at
//! most [`MAX_REQUEST_LINE`] bytes) and a write buffer. A client that stops
//! reading is never waited for: once its unsent output passes
//! [`MAX_PENDING_OUTPUT`] the connection is closed, so a stuck `initctl logs
//! -f` cannot grow the init's memory. The peer's credentials (`SO_PEERCRED`)
//! are read once at accept; the runtime refuses mutating requests from users
//! other than root and the init's own.

use crate::sys::fdpass;
use crate::sys::{Accepted, FileId, Interest, Sys, SysError, Token};
use flotilla_units::protocol::{decode_request, BadRequest, Envelope, Reply, MAX_REQUEST_LINE};
use std::collections::VecDeque;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// Unsent output a connection may hold before it is dropped.
pub const MAX_PENDING_OUTPUT: usize = 8 * 1024 * 1024;

/// An output buffer that grew past this for a big reply (`list`, `analyze`
/// with many units, a log) is given back once sent, rather than kept for
/// the life of the connection.
const KEEP_OUTPUT_BUFFER: usize = 16 * 1024;

/// A connection's id: its slot.
pub type ConnId = usize;

/// What a connection follows after its request, if anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Watch {
    /// Nothing: one request, one reply.
    None,
    /// `set-target --wait`: progress until the switch settles.
    Target(String),
    /// `logs -f`: lines of a unit after a sequence number.
    Logs {
        /// The unit.
        unit: String,
        /// The next line's sequence number.
        next: u64,
    },
    /// `subscribe`: every state change.
    Changes,
    /// `log-pull`: the log writer (`runtime/logfeed.rs` answers it).
    LogWriter,
    /// `reload` while the generators run: the reply comes when they end
    /// (`runtime/generators.rs`).
    Reload,
    /// `clean`: the reply comes when the cleaner ends
    /// (`runtime/cleaning.rs`).
    Clean,
    /// `bind-mount`: the reply comes when the binder ends
    /// (`runtime/binding.rs`).
    BindMount,
    /// `freeze`: the reply comes when the kernel says it is done
    /// (`runtime/freezer.rs`).
    Freeze,
}

/// One client connection.
#[derive(Debug)]
pub struct Conn {
    stream: UnixStream,
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
    woff: usize,
    /// Whether the connection is watched for room to write (its output is
    /// pending): changed only when that changes, not at every reply.
    watching_writes: bool,
    /// The peer's user id.
    pub uid: u32,
    /// The peer's process id.
    pub pid: i32,
    /// A number no other connection of this init had: a slot is reused
    /// once its connection closes.
    pub serial: u64,
    /// What the connection follows.
    pub watch: Watch,
    /// Close once the output is flushed.
    pub closing: bool,
    /// Descriptors received (`SCM_RIGHTS`) and not yet taken by a
    /// request ([`Request::passed_fds`](flotilla_units::protocol::Request::passed_fds)).
    passed: VecDeque<OwnedFd>,
}

/// A request read from a connection.
#[derive(Debug)]
pub struct Incoming {
    /// The connection.
    pub conn: ConnId,
    /// The connection's serial: requests are answered after every event
    /// of the turn, and a connection closed meanwhile may have left its
    /// slot to one accepted after it ([`Control::is_open`]).
    pub serial: u64,
    /// The decoded request, or why the line is not one.
    pub request: Result<Envelope, BadRequest>,
    /// The descriptors the request carries ([`Request::passed_fds`](flotilla_units::protocol::Request::passed_fds)),
    /// in order.
    pub fds: Vec<OwnedFd>,
}

/// The most descriptors a connection holds for its requests: a
/// transient unit's three standard streams.
const MAX_PASSED: usize = 3;

/// A decoded request with the descriptors it carries, taken from those
/// the connection received; a request that says it carries more than
/// came is refused (and takes none).
fn with_fds(
    conn: ConnId,
    serial: u64,
    request: Result<Envelope, BadRequest>,
    passed: &mut VecDeque<OwnedFd>,
) -> Incoming {
    let want = request.as_ref().map_or(0, |e| e.request.passed_fds());
    if want > passed.len() {
        let got = passed.len();
        return Incoming {
            conn,
            serial,
            request: Err(BadRequest::Malformed(format!(
                "the request carries {want} descriptors, {got} came with it"
            ))),
            fds: Vec::new(),
        };
    }
    Incoming {
        conn,
        serial,
        request,
        fds: passed.drain(..want).collect(),
    }
}

/// The listener and its connections.
#[derive(Debug)]
pub struct Control {
    listener: UnixListener,
    path: PathBuf,
    id: FileId,
    conns: Vec<Option<Conn>>,
    /// Token of the listener; connections use `base + slot`.
    base: usize,
    /// The serial number of the next connection.
    next_serial: u64,
    /// Room for the descriptors one read may bring.
    cmsg: Vec<u8>,
}

impl Control {
    /// Binds the socket at `path` (its directory is created; a stale
    /// socket file is replaced), watched under `listener_token`;
    /// connections get tokens from `conn_base` up.
    pub fn bind(
        sys: &dyn Sys,
        path: &Path,
        listener_token: Token,
        conn_base: usize,
    ) -> Result<Control, SysError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            sys.create_dir_all(dir)?;
        }
        let (listener, id) = sys.bind_listener(path)?;
        Control::adopt(sys, listener, path, id, listener_token, conn_base)
    }

    /// Takes a listener bound at `path` already (`id`: its file), as one
    /// carried across a re-exec; watched as [`Control::bind`] does.
    pub fn adopt(
        sys: &dyn Sys,
        listener: UnixListener,
        path: &Path,
        id: FileId,
        listener_token: Token,
        conn_base: usize,
    ) -> Result<Control, SysError> {
        sys.watch(listener.as_raw_fd(), listener_token, Interest::Read)?;
        Ok(Control {
            listener,
            path: path.to_path_buf(),
            id,
            conns: Vec::new(),
            base: conn_base,
            next_serial: 1,
            cmsg: nix::cmsg_space!([RawFd; MAX_PASSED]),
        })
    }

    /// The listener's descriptor and file, for a re-exec.
    pub fn listener(&self) -> (RawFd, FileId) {
        (self.listener.as_raw_fd(), self.id)
    }

    /// A connection's descriptor, for a re-exec.
    pub fn conn_fd(&self, id: ConnId) -> Option<RawFd> {
        self.conn(id).map(|c| c.stream.as_raw_fd())
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The connection a token belongs to, if any.
    pub fn conn_of(&self, token: Token) -> Option<ConnId> {
        token
            .0
            .checked_sub(self.base)
            .filter(|&s| s < self.conns.len())
    }

    /// Accepts every pending connection.
    pub fn accept(&mut self, sys: &dyn Sys) {
        loop {
            match sys.accept(&self.listener) {
                Ok(Some(Accepted { stream, uid, pid })) => {
                    let _ = self.insert(sys, stream, uid, pid);
                }
                Ok(None) => return,
                // EMFILE and friends: stop accepting for now; the listener
                // stays readable and is retried on the next event.
                Err(_) => return,
            }
        }
    }

    /// Takes a connected stream (accepted, or carried across a re-exec) as
    /// a connection; `None` if it cannot be watched (it is closed).
    pub fn insert(
        &mut self,
        sys: &dyn Sys,
        stream: UnixStream,
        uid: u32,
        pid: i32,
    ) -> Option<ConnId> {
        let slot = self
            .conns
            .iter()
            .position(Option::is_none)
            .unwrap_or(self.conns.len());
        let token = Token(self.base + slot);
        sys.watch(stream.as_raw_fd(), token, Interest::Read).ok()?;
        let conn = Conn {
            stream,
            rbuf: Vec::new(),
            wbuf: Vec::new(),
            woff: 0,
            watching_writes: false,
            uid,
            pid,
            serial: self.next_serial,
            watch: Watch::None,
            closing: false,
            passed: VecDeque::new(),
        };
        self.next_serial += 1;
        if slot == self.conns.len() {
            self.conns.push(Some(conn));
        } else if let Some(s) = self.conns.get_mut(slot) {
            *s = Some(conn);
        }
        Some(slot)
    }

    /// Handles readiness of a connection: reads requests into `out`,
    /// flushes output. Closed or broken connections are dropped.
    pub fn ready(&mut self, id: ConnId, sys: &dyn Sys, out: &mut Vec<Incoming>) {
        let Some(Some(conn)) = self.conns.get_mut(id) else {
            return;
        };
        let before = out.len();
        let mut drop_it = false;
        let mut buf = [0u8; 8192];
        loop {
            let got = match fdpass::recv(conn.stream.as_raw_fd(), &mut buf, &mut self.cmsg) {
                Ok(Some(g)) => {
                    // More than a request may carry are closed at once.
                    let room = MAX_PASSED.saturating_sub(conn.passed.len());
                    conn.passed.extend(g.fds.into_iter().take(room));
                    Ok(g.bytes)
                }
                Ok(None) => Err(io::Error::from(io::ErrorKind::WouldBlock)),
                Err(e) => Err(io::Error::from(e)),
            };
            match got {
                Ok(0) => {
                    // The client closed its side: finish what it asked, then close.
                    conn.closing = true;
                    if !matches!(
                        conn.watch,
                        Watch::None | Watch::Reload | Watch::Clean | Watch::BindMount
                    ) {
                        drop_it = true;
                    }
                    break;
                }
                Ok(n) => {
                    conn.rbuf
                        .extend_from_slice(buf.get(..n).unwrap_or_default());
                    while let Some(nl) = conn.rbuf.iter().position(|&b| b == b'\n') {
                        let line: Vec<u8> = conn.rbuf.drain(..=nl).collect();
                        let text = line.get(..nl).unwrap_or_default();
                        if text.iter().all(u8::is_ascii_whitespace) {
                            continue;
                        }
                        out.push(with_fds(
                            id,
                            conn.serial,
                            decode_request(text),
                            &mut conn.passed,
                        ));
                    }
                    if conn.rbuf.len() > MAX_REQUEST_LINE {
                        conn.rbuf.clear();
                        out.push(Incoming {
                            conn: id,
                            serial: conn.serial,
                            request: Err(BadRequest::Malformed(format!(
                                "request line longer than {MAX_REQUEST_LINE} bytes"
                            ))),
                            fds: Vec::new(),
                        });
                        conn.closing = true;
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    drop_it = true;
                    break;
                }
            }
        }
        if drop_it {
            self.close(id, sys);
            return;
        }
        // Requests read just now are answered after this call returns: a
        // closing connection (the client shut its side after writing, or
        // sent an over-long line) must stay open until their replies are
        // queued; the flush after the last reply closes it.
        if out.len() > before {
            self.flush_inner(id, sys, false);
        } else {
            self.flush(id, sys);
        }
    }

    /// Queues a reply on a connection and tries to send it.
    pub fn send(&mut self, id: ConnId, reply: &Reply, sys: &dyn Sys) {
        let Some(Some(conn)) = self.conns.get_mut(id) else {
            return;
        };
        match serde_json::to_writer(&mut conn.wbuf, reply) {
            Ok(()) => conn.wbuf.push(b'\n'),
            Err(_) => return,
        }
        if conn.wbuf.len() - conn.woff > MAX_PENDING_OUTPUT {
            self.close(id, sys);
            return;
        }
        self.flush(id, sys);
    }

    /// Marks a connection to close once its output is sent.
    pub fn finish(&mut self, id: ConnId, sys: &dyn Sys) {
        if let Some(Some(conn)) = self.conns.get_mut(id) {
            conn.closing = true;
        }
        self.flush(id, sys);
    }

    fn flush(&mut self, id: ConnId, sys: &dyn Sys) {
        self.flush_inner(id, sys, true);
    }

    /// Writes what it can; with `may_close`, closes a `closing` connection
    /// once everything is sent.
    fn flush_inner(&mut self, id: ConnId, sys: &dyn Sys, may_close: bool) {
        let Some(Some(conn)) = self.conns.get_mut(id) else {
            return;
        };
        let mut broken = false;
        while conn.woff < conn.wbuf.len() {
            match conn
                .stream
                .write(conn.wbuf.get(conn.woff..).unwrap_or_default())
            {
                Ok(0) => {
                    broken = true;
                    break;
                }
                Ok(n) => conn.woff += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    broken = true;
                    break;
                }
            }
        }
        if broken {
            self.close(id, sys);
            return;
        }
        let pending = conn.woff < conn.wbuf.len();
        if !pending {
            if conn.wbuf.capacity() > KEEP_OUTPUT_BUFFER {
                conn.wbuf = Vec::new();
            } else {
                conn.wbuf.clear();
            }
            conn.woff = 0;
            if may_close && conn.closing && conn.watch == Watch::None {
                self.close(id, sys);
                return;
            }
        } else if conn.woff > 64 * 1024 {
            conn.wbuf.drain(..conn.woff);
            conn.woff = 0;
        }
        if pending != conn.watching_writes {
            let interest = if pending {
                Interest::ReadWrite
            } else {
                Interest::Read
            };
            let token = Token(self.base + id);
            if sys
                .rewatch(conn.stream.as_raw_fd(), token, interest)
                .is_ok()
            {
                conn.watching_writes = pending;
            }
        }
    }

    /// Closes a connection.
    pub fn close(&mut self, id: ConnId, sys: &dyn Sys) {
        if let Some(slot) = self.conns.get_mut(id) {
            if let Some(conn) = slot.take() {
                let _ = sys.unwatch(conn.stream.as_raw_fd());
            }
        }
    }

    /// Whether connection `id` is still the one numbered `serial`: a slot
    /// is reused once its connection closes, so a request or a reply kept
    /// by slot alone could reach the client accepted next.
    pub fn is_open(&self, id: ConnId, serial: u64) -> bool {
        self.conn(id).is_some_and(|c| c.serial == serial)
    }

    /// A connection, if open.
    pub fn conn(&self, id: ConnId) -> Option<&Conn> {
        self.conns.get(id).and_then(Option::as_ref)
    }

    /// A connection, if open.
    pub fn conn_mut(&mut self, id: ConnId) -> Option<&mut Conn> {
        self.conns.get_mut(id).and_then(Option::as_mut)
    }

    /// Ids of the open connections that watch something.
    pub fn watchers(&self) -> Vec<ConnId> {
        self.conns
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.as_ref().filter(|c| c.watch != Watch::None).map(|_| i))
            .collect()
    }

    /// Removes the socket file (at exit), if it is still ours.
    pub fn remove_socket(&self, sys: &dyn Sys) {
        sys.remove_socket(&self.path, self.id);
    }
}
