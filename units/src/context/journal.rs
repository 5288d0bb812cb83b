//! What a service's output looks like in the journal: `SyslogIdentifier=`,
//! `SyslogLevel=`, `SyslogLevelPrefix=`, and the header that opens a
//! stream to journald's stdout socket (docs/service-context.md, "The
//! journal").
//!
//! journald reads a stream's first seven lines as its header (systemd's
//! `journald-stream.c`): the identifier, the unit's name, the priority of a
//! line without a prefix, whether a line's `<N>` prefix sets its priority,
//! and whether lines are forwarded to syslog, the kernel log and the
//! console. The unit's name is believed only from a peer with UID 0, which
//! is why the process connects before it changes its identity.

use serde::{Deserialize, Serialize};

/// The log keys of a service.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct Syslog {
    /// `SyslogIdentifier=`; `None`: the program's file name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identifier: Option<String>,
    /// `SyslogLevel=`, 0 (`emerg`) to 7 (`debug`); `None`: `info`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
    /// `SyslogLevelPrefix=`; `None`: yes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level_prefix: Option<bool>,
}

/// The level of a line without a prefix when `SyslogLevel=` is not set.
const INFO: u8 = 6;

const LEVELS: [&str; 8] = [
    "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
];

/// `SyslogLevel=`: a level's name.
pub fn parse_level(value: &str) -> Result<u8, String> {
    let v = value.trim();
    LEVELS
        .iter()
        .position(|l| *l == v)
        .map(|i| i as u8)
        .ok_or_else(|| format!("`{v}` is not a log level (write {})", LEVELS.join(", ")))
}

/// `SyslogIdentifier=`: any text but a line break, which would end the
/// header's line early.
pub fn parse_identifier(value: &str) -> Result<String, String> {
    if value.contains('\n') {
        return Err("an identifier is one line".into());
    }
    Ok(value.trim().to_string())
}

impl Syslog {
    /// The header of a stream of `unit`'s process running `program` (its
    /// path as the command line names it).
    pub fn stream_header(&self, unit: &str, program: &str) -> Vec<u8> {
        let identifier = self
            .identifier
            .as_deref()
            .unwrap_or_else(|| program.rsplit('/').next().unwrap_or(program));
        format!(
            "{identifier}\n{unit}\n{}\n{}\n0\n0\n0\n",
            self.level.unwrap_or(INFO),
            u8::from(self.level_prefix.unwrap_or(true))
        )
        .into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels() {
        assert_eq!(parse_level("info"), Ok(6));
        assert_eq!(parse_level(" err "), Ok(3));
        assert_eq!(parse_level("debug"), Ok(7));
        assert_eq!(
            parse_level("loud").unwrap_err(),
            "`loud` is not a log level (write emerg, alert, crit, err, warning, notice, info, debug)"
        );
    }

    #[test]
    fn headers_as_journald_reads_them() {
        let s = Syslog::default();
        assert_eq!(
            s.stream_header("cron.service", "/usr/sbin/cron"),
            b"cron\ncron.service\n6\n1\n0\n0\n0\n"
        );
        let s = Syslog {
            identifier: Some("postgresql@15-main".into()),
            level: Some(4),
            level_prefix: Some(false),
        };
        assert_eq!(
            s.stream_header("postgresql@15-main.service", "/usr/bin/pg_ctlcluster"),
            b"postgresql@15-main\npostgresql@15-main.service\n4\n0\n0\n0\n0\n"
        );
        assert_eq!(
            Syslog::default().stream_header("x.service", "sleep"),
            b"sleep\nx.service\n6\n1\n0\n0\n0\n"
        );
    }

    #[test]
    fn an_identifier_is_one_line() {
        assert!(parse_identifier("a\nb").is_err());
        assert_eq!(parse_identifier(" nginx "), Ok("nginx".into()));
    }
}
