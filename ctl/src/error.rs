//! What can go wrong in `initctl`, and the exit code each failure maps to.
//!
//! The exit codes are part of the interface (docs/contract.md §5, `docs/initctl.md`):
//!
//! | code | meaning |
//! | --- | --- |
//! | 0 | success (also: stdout was closed early, e.g. `initctl logs x \| head`) |
//! | 1 | the request failed: a target failed or a wait timed out, a reload was refused, the init answered with an error, or its reply was unreadable |
//! | 2 | usage error, or the init cannot be reached |
//! | 3 | permission denied |
//! | 4 | unknown unit or target |

use flotilla_units::protocol::ErrorCode;
use std::fmt;
use std::io;
use std::path::PathBuf;

/// Success.
pub const EXIT_OK: i32 = 0;
/// The request failed.
pub const EXIT_FAILED: i32 = 1;
/// Usage error, or no init to talk to.
pub const EXIT_USAGE: i32 = 2;
/// Permission denied.
pub const EXIT_PERMISSION: i32 = 3;
/// Unknown unit or target.
pub const EXIT_UNKNOWN: i32 = 4;

/// A failure that ends `initctl`.
#[derive(Debug)]
pub enum CtlError {
    /// The control socket cannot be found or connected to.
    Unreachable {
        /// The socket tried.
        path: PathBuf,
        /// Why it failed.
        source: io::Error,
    },
    /// No socket path could be worked out (no `--control`, no
    /// `$INIT_CONTROL`, not root and no `$XDG_RUNTIME_DIR`).
    NoSocket,
    /// The init refused the request, or the socket refused us.
    PermissionDenied(String),
    /// No unit or target by that name.
    Unknown(String),
    /// The request failed; the message says why.
    Failed(String),
    /// The conversation with the init broke: an unreadable reply, a closed
    /// connection, an I/O error on the socket.
    Protocol(String),
    /// The init closed the connection before its final reply.
    Closed(PathBuf),
    /// Writing our own output failed (a broken pipe is not reported).
    Output(io::Error),
}

impl CtlError {
    /// The exit code for this failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            CtlError::Unreachable { source, .. }
                if source.kind() == io::ErrorKind::PermissionDenied =>
            {
                EXIT_PERMISSION
            }
            CtlError::Unreachable { .. } | CtlError::NoSocket => EXIT_USAGE,
            CtlError::PermissionDenied(_) => EXIT_PERMISSION,
            CtlError::Unknown(_) => EXIT_UNKNOWN,
            CtlError::Failed(_) | CtlError::Protocol(_) | CtlError::Closed(_) => EXIT_FAILED,
            CtlError::Output(e) if e.kind() == io::ErrorKind::BrokenPipe => EXIT_OK,
            CtlError::Output(_) => EXIT_FAILED,
        }
    }

    /// Whether there is no message to print: a broken pipe on stdout ends
    /// `initctl` quietly.
    pub fn is_quiet(&self) -> bool {
        matches!(self, CtlError::Output(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }

    /// The error for a [`Reply::Error`](flotilla_units::protocol::Reply::Error)
    /// the init sent.
    pub fn from_server(code: ErrorCode, message: &str) -> CtlError {
        let message = message.to_string();
        match code {
            ErrorCode::PermissionDenied => CtlError::PermissionDenied(message),
            ErrorCode::UnknownUnit | ErrorCode::UnknownTarget => CtlError::Unknown(message),
            ErrorCode::BadRequest | ErrorCode::UnsupportedVersion | ErrorCode::Internal => {
                CtlError::Failed(format!(
                    "the init refused the request ({}): {message}",
                    code_name(code)
                ))
            }
            ErrorCode::Invalid
            | ErrorCode::NotPossible
            | ErrorCode::Refused
            | ErrorCode::Failed => CtlError::Failed(message),
        }
    }

    /// An error writing to stdout.
    pub fn output(e: io::Error) -> CtlError {
        CtlError::Output(e)
    }
}

/// The wire name of an error code.
pub fn code_name(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::BadRequest => "bad-request",
        ErrorCode::UnsupportedVersion => "unsupported-version",
        ErrorCode::PermissionDenied => "permission-denied",
        ErrorCode::UnknownUnit => "unknown-unit",
        ErrorCode::UnknownTarget => "unknown-target",
        ErrorCode::Invalid => "invalid",
        ErrorCode::NotPossible => "not-possible",
        ErrorCode::Refused => "refused",
        ErrorCode::Failed => "failed",
        ErrorCode::Internal => "internal",
    }
}

impl fmt::Display for CtlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CtlError::Unreachable { path, source } => {
                let why = describe_connect_error(source);
                let hint = match source.kind() {
                    io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused => {
                        " (is init running?)"
                    }
                    io::ErrorKind::PermissionDenied => " (try as root)",
                    _ => "",
                };
                write!(
                    f,
                    "cannot reach the init at {}: {why}{hint}",
                    path.display()
                )
            }
            CtlError::NoSocket => f.write_str(
                "cannot find the control socket: $XDG_RUNTIME_DIR is not set \
                 (use --control PATH or $INIT_CONTROL)",
            ),
            CtlError::PermissionDenied(m) => write!(f, "permission denied: {m}"),
            CtlError::Unknown(m) | CtlError::Failed(m) => f.write_str(m),
            CtlError::Protocol(m) => write!(f, "{m}"),
            CtlError::Closed(path) => {
                write!(
                    f,
                    "the init at {} closed the connection before it answered",
                    path.display()
                )
            }
            CtlError::Output(e) => write!(f, "cannot write output: {e}"),
        }
    }
}

/// A lowercase description of a connect error, without the `(os error N)`
/// suffix that `io::Error`'s `Display` adds.
fn describe_connect_error(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or directory".to_string(),
        io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => {
            let s = e.to_string();
            let s = match s.find(" (os error") {
                Some(i) => s[..i].to_string(),
                None => s,
            };
            let mut chars = s.chars();
            match chars.next() {
                Some(c) => c.to_lowercase().chain(chars).collect(),
                None => s,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreachable_messages_name_the_socket() {
        let e = CtlError::Unreachable {
            path: "/run/init/control.sock".into(),
            source: io::Error::from(io::ErrorKind::ConnectionRefused),
        };
        assert_eq!(
            e.to_string(),
            "cannot reach the init at /run/init/control.sock: connection refused (is init running?)"
        );
        assert_eq!(e.exit_code(), EXIT_USAGE);
        let e = CtlError::Unreachable {
            path: "/x".into(),
            source: io::Error::from_raw_os_error(libc::ENOENT),
        };
        assert_eq!(
            e.to_string(),
            "cannot reach the init at /x: no such file or directory (is init running?)"
        );
        let e = CtlError::Unreachable {
            path: "/x".into(),
            source: io::Error::from_raw_os_error(libc::EACCES),
        };
        assert_eq!(e.exit_code(), EXIT_PERMISSION);
        let e = CtlError::Unreachable {
            path: "/x".into(),
            source: io::Error::from_raw_os_error(libc::ENOTSOCK),
        };
        assert_eq!(
            e.to_string(),
            "cannot reach the init at /x: socket operation on non-socket"
        );
    }

    #[test]
    fn server_codes_map_to_exit_codes() {
        let code = |c| CtlError::from_server(c, "m").exit_code();
        assert_eq!(code(ErrorCode::PermissionDenied), EXIT_PERMISSION);
        assert_eq!(code(ErrorCode::UnknownUnit), EXIT_UNKNOWN);
        assert_eq!(code(ErrorCode::UnknownTarget), EXIT_UNKNOWN);
        for c in [
            ErrorCode::BadRequest,
            ErrorCode::UnsupportedVersion,
            ErrorCode::Invalid,
            ErrorCode::NotPossible,
            ErrorCode::Failed,
            ErrorCode::Internal,
        ] {
            assert_eq!(code(c), EXIT_FAILED, "{c:?}");
        }
    }

    #[test]
    fn code_names_match_the_wire() {
        for c in [
            ErrorCode::BadRequest,
            ErrorCode::UnsupportedVersion,
            ErrorCode::PermissionDenied,
            ErrorCode::UnknownUnit,
            ErrorCode::UnknownTarget,
            ErrorCode::Invalid,
            ErrorCode::NotPossible,
            ErrorCode::Failed,
            ErrorCode::Internal,
        ] {
            assert_eq!(
                serde_json::to_string(&c).unwrap(),
                format!("\"{}\"", code_name(c))
            );
        }
    }

    #[test]
    fn broken_pipe_is_quiet_success() {
        let e = CtlError::output(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(e.is_quiet());
        assert_eq!(e.exit_code(), EXIT_OK);
        let e = CtlError::output(io::Error::from(io::ErrorKind::Other));
        assert!(!e.is_quiet());
        assert_eq!(e.exit_code(), EXIT_FAILED);
    }
}
