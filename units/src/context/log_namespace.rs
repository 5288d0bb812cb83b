//! `LogNamespace=`: the service logs to a journald instance of its own,
//! `systemd-journald@NAME.service`, rather than to the system's journal
//! (docs/service-context.md, "The journal").
//!
//! A namespace is a directory of its own under `/run/systemd`
//! (`journal.NAME`, where the instance's sockets listen) and a journal of
//! its own under `/var/log/journal` (`MACHINE-ID.NAME`), which
//! `journalctl --namespace=NAME` reads. A service with the key:
//!
//! - requires and is ordered after the instance's two sockets
//!   ([`LogNamespace::socket_units`]), so that they listen before its
//!   first process starts and start the instance when it writes;
//! - has its output stream on the namespace's stdout socket
//!   ([`LogNamespace::stdout_socket`]);
//! - runs in a mount namespace where the namespace's directory is bound,
//!   read-only, on `/run/systemd/journal` ([`LogNamespace::journal_dir`]),
//!   so that what it sends by `syslog(3)` or `sd_journal_send(3)` to the
//!   usual sockets reaches its namespace too.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The directory of the system journal's sockets, which a service with a
/// namespace sees its namespace's directory at.
pub const JOURNAL_DIR: &str = "/run/systemd/journal";

/// The longest name: the namespace's journal directory is
/// `MACHINE-ID.NAME`, one file name of at most 255 bytes with a machine
/// ID of 32 and a dot before the name.
const MAX_LEN: usize = 255 - 32 - 1;

/// A journal namespace's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct LogNamespace(String);

impl LogNamespace {
    /// The name: an instance of a unit name as it is (ASCII letters,
    /// digits and `:_.@-`, no escaping needed), one file name (not `.`
    /// or `..`), at most 222 bytes.
    pub fn parse(value: &str) -> Result<LogNamespace, String> {
        let v = value.trim();
        let allowed = |c: char| c.is_ascii_alphanumeric() || ":_.@-".contains(c);
        if v.is_empty() || v == "." || v == ".." {
            return Err(format!("`{v}` is not a journal namespace's name"));
        }
        if let Some(c) = v.chars().find(|&c| !allowed(c)) {
            return Err(format!(
                "`{v}` is not a journal namespace's name: {c:?} is not one of the letters, \
                 digits and `:_.@-` it may have"
            ));
        }
        if v.len() > MAX_LEN {
            return Err(format!(
                "a journal namespace's name has at most {MAX_LEN} characters, not {}",
                v.len()
            ));
        }
        Ok(LogNamespace(v.to_string()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The namespace's directory, where its journald instance's sockets
    /// listen: `/run/systemd/journal.NAME`.
    pub fn journal_dir(&self) -> PathBuf {
        PathBuf::from(format!("{JOURNAL_DIR}.{}", self.0))
    }

    /// The namespace's stream socket, which a service's output is
    /// connected to: `/run/systemd/journal.NAME/stdout`.
    pub fn stdout_socket(&self) -> PathBuf {
        self.journal_dir().join("stdout")
    }

    /// The socket unit whose listening says the namespace takes streams:
    /// `systemd-journald@NAME.socket`.
    pub fn stream_socket_unit(&self) -> String {
        format!("systemd-journald@{}.socket", self.0)
    }

    /// The units a service with the namespace requires and starts after:
    /// the instance's sockets, its messages' and its varlink one
    /// (`journalctl --namespace=NAME --sync` asks there).
    pub fn socket_units(&self) -> [String; 2] {
        [
            self.stream_socket_unit(),
            format!("systemd-journald-varlink@{}.socket", self.0),
        ]
    }
}

impl TryFrom<String> for LogNamespace {
    type Error = String;

    fn try_from(s: String) -> Result<LogNamespace, String> {
        LogNamespace::parse(&s)
    }
}

impl From<LogNamespace> for String {
    fn from(n: LogNamespace) -> String {
        n.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_namespace_names_its_directory_socket_and_units() {
        let n = LogNamespace::parse(" foobar ").unwrap();
        assert_eq!(n.as_str(), "foobar");
        assert_eq!(
            n.journal_dir(),
            PathBuf::from("/run/systemd/journal.foobar")
        );
        assert_eq!(
            n.stdout_socket(),
            PathBuf::from("/run/systemd/journal.foobar/stdout")
        );
        assert_eq!(
            n.socket_units(),
            [
                "systemd-journald@foobar.socket",
                "systemd-journald-varlink@foobar.socket"
            ]
        );
        assert_eq!(n.stream_socket_unit(), n.socket_units()[0]);
        // Stored as its name, and read back only if valid.
        let json = serde_json::to_string(&n).unwrap();
        assert_eq!(json, r#""foobar""#);
        assert_eq!(serde_json::from_str::<LogNamespace>(&json).unwrap(), n);
        assert!(serde_json::from_str::<LogNamespace>(r#""a/b""#).is_err());
    }

    #[test]
    fn names_that_are_no_file_or_instance_name_are_refused() {
        for ok in ["a", "web-1", "app:log", "x_y.z", "a@b"] {
            assert!(LogNamespace::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["", ".", "..", "a/b", "a b", "a\\x2db", "ä", "a*", "a\"b"] {
            assert!(LogNamespace::parse(bad).is_err(), "{bad:?}");
        }
        assert!(LogNamespace::parse(&"n".repeat(222)).is_ok());
        assert_eq!(
            LogNamespace::parse(&"n".repeat(223)).unwrap_err(),
            "a journal namespace's name has at most 222 characters, not 223"
        );
    }
}
