//! One conversation with the init over its control socket.
//!
//! The wire (`units/src/protocol.rs`, `docs/control-protocol.md`): we write
//! one JSON line, an [`Envelope`] with the request, and read reply lines until
//! one is final ([`Reply::is_final`]). Errors are sorted here into the cases
//! `main` maps to exit codes: the socket cannot be reached, the init closed
//! the connection early or sent something unreadable, or a wait outlived its
//! deadline.

use crate::error::CtlError;
use flotilla_units::protocol::{Envelope, Reply, Request};
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// An open connection to the init.
pub struct Connection {
    path: PathBuf,
    reader: BufReader<UnixStream>,
    deadline: Option<Instant>,
}

/// What [`Connection::recv`] got.
// One value at a time, never stored: its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Received {
    /// A reply line.
    Reply(Reply),
    /// The deadline set with [`Connection::set_deadline`] passed.
    TimedOut,
}

impl Connection {
    /// Connects to the socket at `path`.
    pub fn connect(path: &Path) -> Result<Connection, CtlError> {
        let stream = UnixStream::connect(path).map_err(|source| CtlError::Unreachable {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Connection {
            path: path.to_path_buf(),
            reader: BufReader::new(stream),
            deadline: None,
        })
    }

    /// Sends one request.
    pub fn send(&mut self, request: Request) -> Result<(), CtlError> {
        let mut line = serde_json::to_vec(&Envelope::new(request))
            .map_err(|e| CtlError::Protocol(format!("cannot encode the request: {e}")))?;
        line.push(b'\n');
        let stream = self.reader.get_mut();
        stream
            .write_all(&line)
            .and_then(|()| stream.flush())
            .map_err(|e| {
                CtlError::Protocol(format!(
                    "cannot send the request to the init at {}: {e}",
                    self.path.display()
                ))
            })
    }

    /// Gives up waiting for replies at `deadline` ([`Received::TimedOut`]).
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    /// Reads the next reply; a closed connection is an error.
    pub fn recv(&mut self) -> Result<Received, CtlError> {
        let mut line = Vec::new();
        loop {
            if let Some(deadline) = self.deadline {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Ok(Received::TimedOut);
                }
                self.reader
                    .get_ref()
                    .set_read_timeout(Some(left))
                    .map_err(|e| self.io_error(e))?;
            }
            match self.reader.read_until(b'\n', &mut line) {
                Ok(0) => return Err(CtlError::Closed(self.path.clone())),
                Ok(_) if line.ends_with(b"\n") => break,
                // End of stream inside a line: the next read reports it.
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e)
                    if self.deadline.is_some()
                        && matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                        ) =>
                {
                    continue
                }
                Err(e) => return Err(self.io_error(e)),
            }
        }
        parse_reply(&line).map(Received::Reply)
    }

    /// Reads the one reply of a request that gets exactly one (no deadline).
    pub fn recv_one(&mut self) -> Result<Reply, CtlError> {
        match self.recv()? {
            Received::Reply(reply) => Ok(reply),
            Received::TimedOut => Err(CtlError::Failed("timed out".into())),
        }
    }

    fn io_error(&self, e: io::Error) -> CtlError {
        CtlError::Protocol(format!(
            "lost the connection to the init at {}: {e}",
            self.path.display()
        ))
    }
}

/// Parses one reply line (with or without its newline).
pub fn parse_reply(line: &[u8]) -> Result<Reply, CtlError> {
    let text = line.strip_suffix(b"\n").unwrap_or(line);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    serde_json::from_slice(text).map_err(|e| {
        let shown = String::from_utf8_lossy(text);
        let shown: String = shown.chars().take(200).collect();
        CtlError::Protocol(format!("unreadable reply from the init ({e}): {shown}"))
    })
}

/// Sends `request` on a new connection and returns the one reply it gets.
pub fn call(path: &Path, request: Request) -> Result<Reply, CtlError> {
    let mut conn = Connection::connect(path)?;
    conn.send(request)?;
    conn.recv_one()
}

/// The error for a reply that does not answer the request.
pub fn unexpected(reply: &Reply, wanted: &str) -> CtlError {
    match reply {
        Reply::Error { code, message, .. } => CtlError::from_server(*code, message),
        other => {
            let tag = serde_json::to_value(other)
                .ok()
                .and_then(|v| v.get("reply").and_then(|t| t.as_str()).map(str::to_string))
                .unwrap_or_else(|| "?".into());
            CtlError::Protocol(format!(
                "unexpected reply from the init: '{tag}' (wanted '{wanted}')"
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_units::protocol::ErrorCode;

    #[test]
    fn parses_reply_lines() {
        let r = parse_reply(b"{\"reply\":\"log-end\"}\n").unwrap();
        assert_eq!(r, Reply::LogEnd);
        let r = parse_reply(b"{\"reply\":\"accepted\",\"message\":\"ok\",\"new\":1}\r\n").unwrap();
        assert_eq!(
            r,
            Reply::Accepted {
                message: "ok".into()
            }
        );
    }

    #[test]
    fn unreadable_replies_are_protocol_errors() {
        for bad in [&b"garbage\n"[..], b"{\"reply\":\"nonsense\"}", b"{}", b""] {
            let e = parse_reply(bad).unwrap_err();
            assert!(matches!(e, CtlError::Protocol(_)), "{e:?}");
            assert!(
                e.to_string().starts_with("unreadable reply from the init"),
                "{e}"
            );
        }
    }

    #[test]
    fn unexpected_replies_name_both_tags() {
        let e = unexpected(&Reply::LogEnd, "status");
        assert_eq!(
            e.to_string(),
            "unexpected reply from the init: 'log-end' (wanted 'status')"
        );
        let e = unexpected(
            &Reply::error(ErrorCode::UnknownUnit, "no unit named x"),
            "status",
        );
        assert!(matches!(e, CtlError::Unknown(ref m) if m == "no unit named x"));
    }

    #[test]
    fn talks_to_a_socket() {
        use std::os::unix::net::UnixListener;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let listener = UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut r = BufReader::new(stream);
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            r.get_mut()
                .write_all(b"{\"reply\":\"log\",\"time\":\"t\",\"stream\":\"stdout\",")
                .unwrap();
            r.get_mut()
                .write_all(b"\"line\":\"hi\"}\n{\"reply\":\"log-end\"}\n")
                .unwrap();
            line
        });
        let mut c = Connection::connect(&path).unwrap();
        c.send(Request::List).unwrap();
        assert!(matches!(c.recv().unwrap(), Received::Reply(Reply::Log(_))));
        assert!(matches!(c.recv().unwrap(), Received::Reply(Reply::LogEnd)));
        assert_eq!(server.join().unwrap(), "{\"v\":1,\"op\":\"list\"}\n");
        let e = c.recv().unwrap_err();
        assert!(e.to_string().contains("closed the connection"), "{e}");
    }

    #[test]
    fn deadline_ends_a_wait() {
        use std::os::unix::net::UnixListener;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let listener = UnixListener::bind(&path).unwrap();
        let mut c = Connection::connect(&path).unwrap();
        let (_kept_open, _) = listener.accept().unwrap();
        c.set_deadline(Some(Instant::now() + std::time::Duration::from_millis(50)));
        assert!(matches!(c.recv().unwrap(), Received::TimedOut));
    }
}
