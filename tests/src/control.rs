//! A client of the init's control socket: newline-delimited JSON
//! (`flotilla_units::protocol`, `docs/control-protocol.md`).
//!
//! [`Client`] is the shared client (`flotilla_client`) that panics on what
//! a test does not expect: it sends typed requests or raw lines (for
//! bad-input tests) and reads reply lines with a deadline. Replies are read
//! as JSON values first, so that a test can check the exact keys of the
//! wire, and decoded into the protocol types when it wants them.

use flotilla_client::{Connection, Error};
use flotilla_units::protocol::{Reply, Request, SystemStatus, UnitStatus};
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

/// One connection to the init.
pub struct Client {
    conn: Connection,
}

/// Why [`Client::recv_value`] got no line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecvError {
    /// The deadline passed.
    Timeout,
    /// The init closed the connection.
    Eof,
}

impl Client {
    /// Connects to the socket at `path`.
    pub fn connect(path: &Path) -> io::Result<Client> {
        Ok(Client {
            conn: Connection::connect(path)?,
        })
    }

    /// Sends one request (the envelope carries this crate's version).
    pub fn send(&mut self, request: Request) {
        self.conn
            .send(request)
            .unwrap_or_else(|e| panic!("write to the control socket: {e}"));
    }

    /// Sends bytes as they are (they should end with a newline).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.try_send_raw(bytes)
            .unwrap_or_else(|e| panic!("write to the control socket: {e}"));
    }

    /// Tries to send bytes; the init may close the connection meanwhile.
    pub fn try_send_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        Ok(self.conn.send_raw(bytes)?)
    }

    /// The next reply line as JSON, waiting until `deadline`.
    pub fn recv_value(&mut self, deadline: Instant) -> Result<serde_json::Value, RecvError> {
        match self.conn.recv_line(Some(deadline)) {
            Ok(line) => Ok(serde_json::from_slice(&line).unwrap_or_else(|e| {
                panic!(
                    "the init sent a line that is not JSON ({e}): {}",
                    String::from_utf8_lossy(&line)
                )
            })),
            Err(Error::TimedOut) => Err(RecvError::Timeout),
            Err(Error::Closed { .. }) => Err(RecvError::Eof),
            Err(e) => panic!("read from the control socket: {e}"),
        }
    }

    /// The next reply, decoded, waiting until `deadline`.
    pub fn recv(&mut self, deadline: Instant) -> Result<Reply, RecvError> {
        let v = self.recv_value(deadline)?;
        Ok(serde_json::from_value(v.clone())
            .unwrap_or_else(|e| panic!("a reply the protocol types do not know ({e}): {v}")))
    }

    /// The next reply within `limit`; panics on timeout or end of stream.
    pub fn expect_reply(&mut self, limit: Duration) -> Reply {
        match self.recv(Instant::now() + limit) {
            Ok(r) => r,
            Err(e) => panic!("no reply from the init: {e:?}"),
        }
    }

    /// Sends a request and returns its first reply (within 10 s).
    pub fn call(&mut self, request: Request) -> Reply {
        self.send(request);
        self.expect_reply(Duration::from_secs(10))
    }

    /// Sends a request and returns its first reply as raw JSON.
    pub fn call_value(&mut self, request: Request) -> serde_json::Value {
        self.send(request);
        self.recv_value(Instant::now() + Duration::from_secs(10))
            .unwrap_or_else(|e| panic!("no reply from the init: {e:?}"))
    }

    /// `status`: the whole system.
    pub fn status(&mut self) -> SystemStatus {
        match self.call(Request::Status { name: None }) {
            Reply::Status(s) => s,
            other => panic!("status: unexpected reply {other:?}"),
        }
    }

    /// `status NAME`: one unit, or `None` for an unknown name.
    pub fn unit(&mut self, name: &str) -> Option<UnitStatus> {
        match self.call(Request::Status {
            name: Some(name.to_string()),
        }) {
            Reply::Unit(u) => Some(u),
            Reply::Error { .. } => None,
            other => panic!("status {name}: unexpected reply {other:?}"),
        }
    }
}
