//! The client of the init's control socket, in one place: where the socket
//! is ([`control_path`]), how a request line is written and a reply line
//! read ([`request_line`], [`parse_reply`]), and a connection that speaks
//! them — [`Connection`] (blocking, for `initctl` and the tests) and, with
//! the `tokio` feature, [`tokio`] (for `clusterd`); and [`unit_dirs`], the
//! unit search path the init names, listed as the tools beside it read it.
//!
//! The wire is `units/src/protocol/` (`docs/control-protocol.md`): one
//! JSON line per request, reply lines until one is final
//! ([`Reply::is_final`]). Failures come as [`Error`], whose variants are
//! the cases a caller tells apart (no init there, the init hung up, a reply
//! that is not one, a deadline): match on them, not on their text.

mod blocking;
pub mod fds;
#[cfg(feature = "tokio")]
pub mod tokio;
pub mod unit_dirs;

pub use blocking::{call, Connection};

use flotilla_units::protocol::{
    control_socket_path, unprivileged_control_socket, Envelope, Reply, Request,
    SYSTEM_CONTROL_SOCKET,
};
use std::io;
use std::path::PathBuf;

/// Why a conversation with the init failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The socket cannot be connected to (no init there, no permission).
    #[error("cannot reach the init at {}: {source}", path.display())]
    Unreachable {
        /// The socket tried.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Writing the request failed.
    #[error("cannot send the request to the init at {}: {source}", path.display())]
    Send {
        /// The socket.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Reading a reply failed.
    #[error("lost the connection to the init at {}: {source}", path.display())]
    Receive {
        /// The socket.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The init closed the connection before a final reply.
    #[error("the init at {} closed the connection", path.display())]
    Closed {
        /// The socket.
        path: PathBuf,
    },
    /// A line from the init that is not a reply.
    #[error("unreadable reply from the init ({reason}): {line}")]
    Unreadable {
        /// What is wrong with it.
        reason: String,
        /// The line (its first 200 characters).
        line: String,
    },
    /// The deadline passed before a reply came.
    #[error("timed out waiting for the init")]
    TimedOut,
}

impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        let kind = match &e {
            Error::Unreachable { source, .. }
            | Error::Send { source, .. }
            | Error::Receive { source, .. } => source.kind(),
            Error::Closed { .. } => io::ErrorKind::UnexpectedEof,
            Error::Unreadable { .. } => io::ErrorKind::InvalidData,
            Error::TimedOut => io::ErrorKind::TimedOut,
        };
        io::Error::new(kind, e)
    }
}

/// The control socket: `flag` (`--control PATH`) if given, else docs/contract.md §2's
/// rule on this process's environment and effective user
/// ([`control_socket_path`]: `$INIT_CONTROL`, the system socket for root,
/// `$XDG_RUNTIME_DIR/init/control.sock`), else where a non-root PID 1
/// puts it ([`unprivileged_control_socket`]: `/run/init/control.sock`
/// when that socket exists, else `/tmp/flotilla-UID/control.sock`).
pub fn control_path(flag: Option<PathBuf>) -> Option<PathBuf> {
    if flag.is_some() {
        return flag;
    }
    // SAFETY: geteuid(2) has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    control_socket_path(
        std::env::var_os("INIT_CONTROL").as_deref(),
        uid == 0,
        std::env::var_os("XDG_RUNTIME_DIR").as_deref(),
    )
    .or_else(|| {
        let run = std::path::Path::new(SYSTEM_CONTROL_SOCKET).exists();
        Some(unprivileged_control_socket(uid, run))
    })
}

/// A request as its line on the wire, newline included.
pub fn request_line(request: Request) -> Vec<u8> {
    // An envelope of plain data always serializes; the fallback is never
    // taken.
    let mut line = serde_json::to_vec(&Envelope::new(request)).unwrap_or_default();
    line.push(b'\n');
    line
}

/// Parses one reply line (with or without its newline).
pub fn parse_reply(line: &[u8]) -> Result<Reply, Error> {
    let text = line.strip_suffix(b"\n").unwrap_or(line);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    serde_json::from_slice(text).map_err(|e| Error::Unreadable {
        reason: e.to_string(),
        line: String::from_utf8_lossy(text).chars().take(200).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins() {
        assert_eq!(
            control_path(Some("/tmp/c.sock".into())),
            Some(PathBuf::from("/tmp/c.sock"))
        );
    }

    #[test]
    fn request_lines() {
        assert_eq!(request_line(Request::List), b"{\"v\":1,\"op\":\"list\"}\n");
    }

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
    fn unreadable_replies() {
        for bad in [&b"garbage\n"[..], b"{\"reply\":\"nonsense\"}", b"{}", b""] {
            let e = parse_reply(bad).unwrap_err();
            assert!(matches!(e, Error::Unreadable { .. }), "{e:?}");
            assert!(
                e.to_string().starts_with("unreadable reply from the init"),
                "{e}"
            );
        }
    }

    #[test]
    fn io_errors_keep_their_kind() {
        let e = io::Error::from(Error::Closed { path: "/x".into() });
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(e.to_string(), "the init at /x closed the connection");
    }
}
