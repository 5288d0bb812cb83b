//! What a service's output looks like in the journal: `SyslogIdentifier=`,
//! `SyslogLevel=`, `SyslogLevelPrefix=`, and the header that opens a
//! stream to journald's stdout socket; `LogLevelMax=` and
//! `LogExtraFields=`, which journald applies to every message of the unit
//! and reads from files under `/run/systemd/units/` (their contents:
//! [`Syslog::level_max_link`], [`Syslog::extra_fields_file`])
//! (docs/service-context.md, "The journal").
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
    /// `LogLevelMax=`, 0 to 7: journald drops the unit's messages of a
    /// lower priority (a higher number); `None`: all are kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level_max: Option<u8>,
    /// `LogExtraFields=`, each `FIELD=value`, in order: journald adds them
    /// to every message of the unit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extra_fields: Vec<String>,
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

/// `LogLevelMax=`: a level's name or its number, 0 to 7 (systemd takes
/// both).
pub fn parse_level_max(value: &str) -> Result<u8, String> {
    let v = value.trim();
    match v.parse::<u8>() {
        Ok(n) if n <= 7 => Ok(n),
        Ok(n) => Err(format!("{n} is not a log level (0 to 7)")),
        Err(_) => parse_level(v),
    }
}

/// Whether `name` may name a journal field that a unit sets: 1 to 64
/// characters, uppercase letters, digits and `_`, not starting with a
/// digit or with `_` (journald's own, trusted fields).
fn valid_field(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with(|c: char| c.is_ascii_digit() || c == '_')
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// Applies one `LogExtraFields=` line: one or more `FIELD=value` words
/// (quotes as in systemd's lists), added in order; an empty line forgets
/// the lines before it. A bad word changes nothing.
pub fn assign_extra_fields(list: &mut Vec<String>, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        list.clear();
        return Ok(());
    }
    let words = super::value::words(value)?;
    for w in &words {
        let (name, _) = w
            .split_once('=')
            .ok_or_else(|| format!("`{w}` has no `=`: write FIELD=value"))?;
        if !valid_field(name) {
            return Err(format!(
                "`{name}` is not a journal field a unit may set (1 to 64 of A-Z, 0-9 and `_`, \
                 not starting with a digit or `_`)"
            ));
        }
    }
    list.extend(words);
    Ok(())
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

    /// What `/run/systemd/units/log-level-max:UNIT` links to, as systemd
    /// writes it: the level's number (journald reads the link's target).
    pub fn level_max_link(&self) -> Option<String> {
        self.level_max.map(|l| l.to_string())
    }

    /// The bytes of `/run/systemd/units/log-extra-fields:UNIT`, as systemd
    /// writes them: each field as its length (64 bits, little-endian) and
    /// `FIELD=value`. `None` when there is none.
    pub fn extra_fields_file(&self) -> Option<Vec<u8>> {
        if self.extra_fields.is_empty() {
            return None;
        }
        let mut out = Vec::new();
        for f in &self.extra_fields {
            out.extend_from_slice(&(f.len() as u64).to_le_bytes());
            out.extend_from_slice(f.as_bytes());
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_level_max_and_extra_fields() {
        assert_eq!(parse_level_max("info"), Ok(6));
        assert_eq!(parse_level_max("3"), Ok(3));
        assert_eq!(
            parse_level_max("8"),
            Err("8 is not a log level (0 to 7)".into())
        );
        assert!(parse_level_max("loud").is_err());
        let mut s = Syslog {
            level_max: Some(6),
            ..Syslog::default()
        };
        assert_eq!(s.level_max_link().as_deref(), Some("6"));
        assert_eq!(s.extra_fields_file(), None);
        assign_extra_fields(&mut s.extra_fields, "FOO=bar \"QUX=a b\"").unwrap();
        assign_extra_fields(&mut s.extra_fields, "N2=").unwrap();
        assert_eq!(s.extra_fields, ["FOO=bar", "QUX=a b", "N2="]);
        let mut want = Vec::new();
        for f in ["FOO=bar", "QUX=a b", "N2="] {
            want.extend_from_slice(&(f.len() as u64).to_le_bytes());
            want.extend_from_slice(f.as_bytes());
        }
        assert_eq!(s.extra_fields_file(), Some(want));
        for (bad, why) in [
            ("_PID=1", "`_PID` is not a journal field"),
            ("foo=1", "`foo` is not a journal field"),
            ("1X=1", "`1X` is not a journal field"),
            ("NOEQUALS", "`NOEQUALS` has no `=`"),
        ] {
            let e = assign_extra_fields(&mut s.extra_fields, &format!("OK=1 {bad}")).unwrap_err();
            assert!(e.starts_with(why), "{bad}: {e}");
        }
        assert_eq!(s.extra_fields.len(), 3, "a bad line adds nothing");
        assign_extra_fields(&mut s.extra_fields, "").unwrap();
        assert!(s.extra_fields.is_empty());
    }

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
            ..Syslog::default()
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
