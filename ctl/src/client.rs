//! One conversation with the init, through the shared client
//! (`flotilla_client`), its failures sorted into the cases `main` maps to
//! exit codes ([`CtlError`]): the socket cannot be reached, the init closed
//! the connection early or sent something unreadable, or a wait outlived
//! its deadline.

use crate::error::CtlError;
use flotilla_client::Error;
use flotilla_units::protocol::{Reply, Request};
use std::path::Path;
use std::time::Instant;

impl From<Error> for CtlError {
    fn from(e: Error) -> CtlError {
        match e {
            Error::Unreachable { path, source } => CtlError::Unreachable { path, source },
            Error::Closed { path } => CtlError::Closed(path),
            Error::TimedOut => CtlError::Failed("timed out".into()),
            e @ (Error::Send { .. } | Error::Receive { .. } | Error::Unreadable { .. }) => {
                CtlError::Protocol(e.to_string())
            }
        }
    }
}

/// An open connection to the init.
pub struct Connection {
    inner: flotilla_client::Connection,
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
        Ok(Connection {
            inner: flotilla_client::Connection::connect(path)?,
            deadline: None,
        })
    }

    /// Sends one request.
    pub fn send(&mut self, request: Request) -> Result<(), CtlError> {
        Ok(self.inner.send(request)?)
    }

    /// Gives up waiting for replies at `deadline` ([`Received::TimedOut`]).
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    /// Reads the next reply; a closed connection is an error.
    pub fn recv(&mut self) -> Result<Received, CtlError> {
        match self.inner.recv(self.deadline) {
            Ok(reply) => Ok(Received::Reply(reply)),
            Err(Error::TimedOut) => Ok(Received::TimedOut),
            Err(e) => Err(e.into()),
        }
    }
}

/// Sends `request` on a new connection and returns the one reply it gets.
pub fn call(path: &Path, request: Request) -> Result<Reply, CtlError> {
    Ok(flotilla_client::call(path, request)?)
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
    fn client_errors_map_to_exit_codes() {
        let closed = CtlError::from(Error::Closed { path: "/s".into() });
        assert!(matches!(closed, CtlError::Closed(_)));
        assert_eq!(closed.exit_code(), crate::error::EXIT_FAILED);
        let unreadable = CtlError::from(flotilla_client::parse_reply(b"garbage").unwrap_err());
        assert!(matches!(unreadable, CtlError::Protocol(_)));
        assert!(unreadable
            .to_string()
            .starts_with("unreadable reply from the init"));
        let unreachable = CtlError::from(Error::Unreachable {
            path: "/s".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        });
        assert_eq!(unreachable.exit_code(), crate::error::EXIT_USAGE);
    }
}
