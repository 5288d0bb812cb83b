//! A blocking connection to the init, with deadlines.

use crate::{parse_reply, request_line, Error};
use flotilla_units::protocol::{Reply, Request};
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One open connection. A connection carries any number of requests, one
/// after another; replies are read a line at a time.
pub struct Connection {
    path: PathBuf,
    stream: UnixStream,
    /// What was read past the last line handed out.
    buf: Vec<u8>,
    eof: bool,
}

impl Connection {
    /// Connects to the socket at `path`.
    pub fn connect(path: &Path) -> Result<Connection, Error> {
        let stream = UnixStream::connect(path).map_err(|source| Error::Unreachable {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Connection {
            path: path.to_path_buf(),
            stream,
            buf: Vec::new(),
            eof: false,
        })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Sends one request.
    pub fn send(&mut self, request: Request) -> Result<(), Error> {
        self.send_raw(&request_line(request))
    }

    /// Sends bytes as they are (a test's malformed request; a line should
    /// end with a newline).
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.stream
            .write_all(bytes)
            .and_then(|()| self.stream.flush())
            .map_err(|source| Error::Send {
                path: self.path.clone(),
                source,
            })
    }

    /// The next reply line, without its newline, waiting until `deadline`
    /// (`None`: for as long as it takes).
    pub fn recv_line(&mut self, deadline: Option<Instant>) -> Result<Vec<u8>, Error> {
        loop {
            if let Some(nl) = self.buf.iter().position(|&b| b == b'\n') {
                let mut line: Vec<u8> = self.buf.drain(..=nl).collect();
                line.pop();
                return Ok(line);
            }
            if self.eof {
                return Err(Error::Closed {
                    path: self.path.clone(),
                });
            }
            let timeout = match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(Error::TimedOut);
                    }
                    // A zero read timeout would mean none at all.
                    Some(left.max(Duration::from_millis(1)))
                }
                None => None,
            };
            self.stream
                .set_read_timeout(timeout)
                .map_err(|source| self.receive_error(source))?;
            let mut chunk = [0u8; 64 * 1024];
            match self.stream.read(&mut chunk) {
                Ok(0) => self.eof = true,
                Ok(n) => self
                    .buf
                    .extend_from_slice(chunk.get(..n).unwrap_or_default()),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) => {}
                // The init went away while we read: the same as a close.
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => self.eof = true,
                Err(e) => return Err(self.receive_error(e)),
            }
        }
    }

    /// The next reply, waiting until `deadline` (`None`: no limit).
    pub fn recv(&mut self, deadline: Option<Instant>) -> Result<Reply, Error> {
        let line = self.recv_line(deadline)?;
        parse_reply(&line)
    }

    /// Sends `request` and returns its first reply (the only one, for a
    /// request that gets one).
    pub fn call(&mut self, request: Request) -> Result<Reply, Error> {
        self.send(request)?;
        self.recv(None)
    }

    fn receive_error(&self, source: io::Error) -> Error {
        Error::Receive {
            path: self.path.clone(),
            source,
        }
    }
}

/// Sends `request` on a new connection and returns the one reply it gets.
pub fn call(path: &Path, request: Request) -> Result<Reply, Error> {
    Connection::connect(path)?.call(request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader};
    use std::os::unix::net::UnixListener;

    #[test]
    fn talks_to_a_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let listener = UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut r = BufReader::new(stream);
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            // A reply in two writes: it is read as one line.
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
        assert!(matches!(c.recv(None).unwrap(), Reply::Log(_)));
        assert_eq!(c.recv(None).unwrap(), Reply::LogEnd);
        assert_eq!(server.join().unwrap(), "{\"v\":1,\"op\":\"list\"}\n");
        let e = c.recv(None).unwrap_err();
        assert!(matches!(e, Error::Closed { .. }), "{e:?}");
    }

    #[test]
    fn a_deadline_ends_a_wait() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let listener = UnixListener::bind(&path).unwrap();
        let mut c = Connection::connect(&path).unwrap();
        let (_kept_open, _) = listener.accept().unwrap();
        let deadline = Instant::now() + Duration::from_millis(50);
        assert!(matches!(c.recv(Some(deadline)), Err(Error::TimedOut)));
    }

    #[test]
    fn no_socket_is_unreachable() {
        let dir = tempfile::tempdir().unwrap();
        let e = call(&dir.path().join("none"), Request::List).unwrap_err();
        assert!(
            matches!(&e, Error::Unreachable { source, .. } if source.kind() == io::ErrorKind::NotFound),
            "{e:?}"
        );
    }
}
