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

use flotilla_units::protocol::{Envelope, Reply, MAX_REQUEST_LINE, PROTOCOL_VERSION};
use mio::net::{UnixListener, UnixStream};
use mio::{Interest, Registry, Token};
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
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
    /// `set-target --wait`: progress until the target settles.
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
}

/// One client connection.
#[derive(Debug)]
pub struct Conn {
    stream: UnixStream,
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
    woff: usize,
    /// The peer's user id.
    pub uid: u32,
    /// The peer's process id.
    pub pid: i32,
    /// What the connection follows.
    pub watch: Watch,
    /// Close once the output is flushed.
    pub closing: bool,
}

/// A request read from a connection.
#[derive(Debug)]
pub struct Incoming {
    /// The connection.
    pub conn: ConnId,
    /// The decoded request, or why the line is not one.
    pub request: Result<Envelope, String>,
}

/// The listener and its connections.
#[derive(Debug)]
pub struct Control {
    listener: UnixListener,
    path: PathBuf,
    conns: Vec<Option<Conn>>,
    /// Token of the listener; connections use `base + slot`.
    base: usize,
}

/// Reads the peer credentials of a unix stream socket.
fn peer_cred(stream: &UnixStream) -> (u32, i32) {
    match nix::sys::socket::getsockopt(&stream.as_fd(), nix::sys::socket::sockopt::PeerCredentials)
    {
        Ok(c) => (c.uid(), c.pid()),
        // Unknown peer: treat as nobody, so mutating requests are refused.
        Err(_) => (u32::MAX, 0),
    }
}

impl Control {
    /// Binds the socket at `path` (a stale socket file is replaced; the
    /// directory is created mode 0755), registered under `listener_token`;
    /// connections get tokens from `conn_base` up.
    pub fn bind(
        path: &Path,
        registry: &Registry,
        listener_token: Token,
        conn_base: usize,
    ) -> io::Result<Control> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        match std::fs::symlink_metadata(path) {
            Ok(m) => {
                use std::os::unix::fs::FileTypeExt;
                if m.file_type().is_socket() {
                    std::fs::remove_file(path)?;
                } else {
                    return Err(io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        format!("{} exists and is not a socket", path.display()),
                    ));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let mut listener = UnixListener::bind(path)?;
        // Anyone may connect and read; mutating requests are checked by uid.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666))?;
        registry.register(&mut listener, listener_token, Interest::READABLE)?;
        Ok(Control {
            listener,
            path: path.to_path_buf(),
            conns: Vec::new(),
            base: conn_base,
        })
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
    pub fn accept(&mut self, registry: &Registry) {
        loop {
            match self.listener.accept() {
                Ok((mut stream, _)) => {
                    let slot = self
                        .conns
                        .iter()
                        .position(Option::is_none)
                        .unwrap_or(self.conns.len());
                    let token = Token(self.base + slot);
                    if registry
                        .register(&mut stream, token, Interest::READABLE)
                        .is_err()
                    {
                        continue;
                    }
                    let (uid, pid) = peer_cred(&stream);
                    let conn = Conn {
                        stream,
                        rbuf: Vec::new(),
                        wbuf: Vec::new(),
                        woff: 0,
                        uid,
                        pid,
                        watch: Watch::None,
                        closing: false,
                    };
                    if slot == self.conns.len() {
                        self.conns.push(Some(conn));
                    } else if let Some(s) = self.conns.get_mut(slot) {
                        *s = Some(conn);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // EMFILE and friends: stop accepting for now; the listener
                // stays readable and is retried on the next event.
                Err(_) => return,
            }
        }
    }

    /// Handles readiness of a connection: reads requests into `out`,
    /// flushes output. Closed or broken connections are dropped.
    pub fn ready(&mut self, id: ConnId, registry: &Registry, out: &mut Vec<Incoming>) {
        let Some(Some(conn)) = self.conns.get_mut(id) else {
            return;
        };
        let before = out.len();
        let mut drop_it = false;
        let mut buf = [0u8; 8192];
        loop {
            match conn.stream.read(&mut buf) {
                Ok(0) => {
                    // The client closed its side: finish what it asked, then close.
                    conn.closing = true;
                    if conn.watch != Watch::None {
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
                        out.push(Incoming {
                            conn: id,
                            request: decode(text),
                        });
                    }
                    if conn.rbuf.len() > MAX_REQUEST_LINE {
                        conn.rbuf.clear();
                        out.push(Incoming {
                            conn: id,
                            request: Err(format!(
                                "request line longer than {MAX_REQUEST_LINE} bytes"
                            )),
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
            self.close(id, registry);
            return;
        }
        // Requests read just now are answered after this call returns: a
        // closing connection (the client shut its side after writing, or
        // sent an over-long line) must stay open until their replies are
        // queued; the flush after the last reply closes it. Closing here
        // used to drop those replies.
        if out.len() > before {
            self.flush_inner(id, registry, false);
        } else {
            self.flush(id, registry);
        }
    }

    /// Queues a reply on a connection and tries to send it.
    pub fn send(&mut self, id: ConnId, reply: &Reply, registry: &Registry) {
        let Some(Some(conn)) = self.conns.get_mut(id) else {
            return;
        };
        match serde_json::to_writer(&mut conn.wbuf, reply) {
            Ok(()) => conn.wbuf.push(b'\n'),
            Err(_) => return,
        }
        if conn.wbuf.len() - conn.woff > MAX_PENDING_OUTPUT {
            self.close(id, registry);
            return;
        }
        self.flush(id, registry);
    }

    /// Marks a connection to close once its output is sent.
    pub fn finish(&mut self, id: ConnId, registry: &Registry) {
        if let Some(Some(conn)) = self.conns.get_mut(id) {
            conn.closing = true;
        }
        self.flush(id, registry);
    }

    fn flush(&mut self, id: ConnId, registry: &Registry) {
        self.flush_inner(id, registry, true);
    }

    /// Writes what it can; with `may_close`, closes a `closing` connection
    /// once everything is sent.
    fn flush_inner(&mut self, id: ConnId, registry: &Registry, may_close: bool) {
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
            self.close(id, registry);
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
                self.close(id, registry);
                return;
            }
        } else if conn.woff > 64 * 1024 {
            conn.wbuf.drain(..conn.woff);
            conn.woff = 0;
        }
        let interest = if pending {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        let token = Token(self.base + id);
        let _ = registry.reregister(&mut conn.stream, token, interest);
    }

    /// Closes a connection.
    pub fn close(&mut self, id: ConnId, registry: &Registry) {
        if let Some(slot) = self.conns.get_mut(id) {
            if let Some(mut conn) = slot.take() {
                let _ = registry.deregister(&mut conn.stream);
            }
        }
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

    /// Removes the socket file (at exit).
    pub fn remove_socket(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Decodes one request line.
fn decode(line: &[u8]) -> Result<Envelope, String> {
    let v: serde_json::Value =
        serde_json::from_slice(line).map_err(|e| format!("not JSON: {e}"))?;
    let version = v.get("v").and_then(serde_json::Value::as_u64);
    match version {
        None => return Err("missing protocol version `v`".to_string()),
        Some(x) if x != u64::from(PROTOCOL_VERSION) => {
            return Err(format!(
                "unsupported protocol version {x} (this init speaks {PROTOCOL_VERSION})"
            ))
        }
        Some(_) => {}
    }
    serde_json::from_value(v).map_err(|e| format!("bad request: {e}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use flotilla_units::protocol::Request;

    #[test]
    fn decode_requests_and_errors() {
        assert_eq!(
            decode(br#"{"v":1,"op":"list"}"#).map(|e| e.request),
            Ok(Request::List)
        );
        assert_eq!(
            decode(b"nope")
                .map(|e| e.request)
                .unwrap_err()
                .split(':')
                .next(),
            Some("not JSON")
        );
        assert_eq!(
            decode(br#"{"op":"list"}"#).unwrap_err(),
            "missing protocol version `v`"
        );
        assert_eq!(
            decode(br#"{"v":2,"op":"list"}"#).unwrap_err(),
            "unsupported protocol version 2 (this init speaks 1)"
        );
        assert!(decode(br#"{"v":1,"op":"explode"}"#)
            .unwrap_err()
            .starts_with("bad request: unknown variant `explode`"));
        assert!(decode(br#"{"v":1,"op":"restart"}"#)
            .unwrap_err()
            .contains("missing field `unit`"));
    }
}
