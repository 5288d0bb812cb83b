//! The init's own log level and target: what systemd's manager properties
//! `LogLevel` and `LogTarget` hold (`systemd-analyze log-level debug`),
//! with systemd's names. The level decides which of the init's console
//! lines are written (docs/dbus.md): each line has a level, and a line
//! less important than the level is left out; the target `null` leaves
//! every one out.

use serde::{Deserialize, Serialize};

/// A syslog level, most important first (`LOG_EMERG` 0 … `LOG_DEBUG` 7).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// 0.
    Emerg,
    /// 1.
    Alert,
    /// 2.
    Crit,
    /// 3: a unit failed.
    Err,
    /// 4.
    Warning,
    /// 5.
    Notice,
    /// 6, the default: units starting, started, stopping, stopped.
    #[default]
    Info,
    /// 7: besides, every action the init carries out for a unit.
    Debug,
}

impl LogLevel {
    /// Every level, in order.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Emerg,
        LogLevel::Alert,
        LogLevel::Crit,
        LogLevel::Err,
        LogLevel::Warning,
        LogLevel::Notice,
        LogLevel::Info,
        LogLevel::Debug,
    ];

    /// systemd's name.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Emerg => "emerg",
            LogLevel::Alert => "alert",
            LogLevel::Crit => "crit",
            LogLevel::Err => "err",
            LogLevel::Warning => "warning",
            LogLevel::Notice => "notice",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
        }
    }

    /// A level as systemd reads one: its name or its number, 0 to 7.
    pub fn parse(s: &str) -> Result<LogLevel, String> {
        let s = s.trim();
        let by_number = s
            .parse::<usize>()
            .ok()
            .and_then(|n| LogLevel::ALL.get(n).copied());
        by_number
            .or_else(|| LogLevel::ALL.into_iter().find(|l| l.as_str() == s))
            .ok_or_else(|| {
                format!("invalid log level {s:?}: use emerg, alert, crit, err, warning, notice, info, debug or 0 to 7")
            })
    }

    /// Whether a line of level `line` is written at this level.
    pub fn keeps(self, line: LogLevel) -> bool {
        line <= self
    }
}

/// Where systemd's manager writes its log. The init has one place, its
/// console (as PID 1, `/dev/console`), where every target but `null`
/// writes; the name is kept and reported back as given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LogTarget {
    /// `console`, the default.
    #[default]
    Console,
    /// `kmsg`.
    Kmsg,
    /// `journal`.
    Journal,
    /// `journal-or-kmsg`.
    JournalOrKmsg,
    /// `syslog`.
    Syslog,
    /// `syslog-or-kmsg`.
    SyslogOrKmsg,
    /// `auto`.
    Auto,
    /// `null`: nothing is written.
    Null,
}

impl LogTarget {
    /// Every target.
    pub const ALL: [LogTarget; 8] = [
        LogTarget::Console,
        LogTarget::Kmsg,
        LogTarget::Journal,
        LogTarget::JournalOrKmsg,
        LogTarget::Syslog,
        LogTarget::SyslogOrKmsg,
        LogTarget::Auto,
        LogTarget::Null,
    ];

    /// systemd's name.
    pub fn as_str(self) -> &'static str {
        match self {
            LogTarget::Console => "console",
            LogTarget::Kmsg => "kmsg",
            LogTarget::Journal => "journal",
            LogTarget::JournalOrKmsg => "journal-or-kmsg",
            LogTarget::Syslog => "syslog",
            LogTarget::SyslogOrKmsg => "syslog-or-kmsg",
            LogTarget::Auto => "auto",
            LogTarget::Null => "null",
        }
    }

    /// A target by systemd's name.
    pub fn parse(s: &str) -> Result<LogTarget, String> {
        let s = s.trim();
        LogTarget::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| {
                format!("invalid log target {s:?}: use console, kmsg, journal, journal-or-kmsg, syslog, syslog-or-kmsg, auto or null")
            })
    }
}

/// The init's log settings (`SystemStatus::log`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct LogSettings {
    /// `LogLevel`.
    pub level: LogLevel,
    /// `LogTarget`.
    pub target: LogTarget,
}

impl LogSettings {
    /// Whether a console line of level `line` is written.
    pub fn writes(&self, line: LogLevel) -> bool {
        self.target != LogTarget::Null && self.level.keeps(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_by_name_and_number() {
        for (i, l) in LogLevel::ALL.into_iter().enumerate() {
            assert_eq!(LogLevel::parse(l.as_str()), Ok(l));
            assert_eq!(LogLevel::parse(&i.to_string()), Ok(l));
            let json = serde_json::to_string(&l).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", l.as_str()));
        }
        assert!(LogLevel::parse("8").is_err());
        assert!(LogLevel::parse("verbose")
            .unwrap_err()
            .contains("use emerg, alert"));
        for t in LogTarget::ALL {
            assert_eq!(LogTarget::parse(t.as_str()), Ok(t));
            let json = serde_json::to_string(&t).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", t.as_str()));
        }
        assert!(LogTarget::parse("file").is_err());
    }

    #[test]
    fn what_each_level_writes() {
        let at = |level, target| LogSettings { level, target };
        let info = LogSettings::default();
        assert!(info.writes(LogLevel::Info) && info.writes(LogLevel::Err));
        assert!(!info.writes(LogLevel::Debug));
        let debug = at(LogLevel::Debug, LogTarget::Journal);
        assert!(debug.writes(LogLevel::Debug) && debug.writes(LogLevel::Info));
        let warning = at(LogLevel::Warning, LogTarget::Console);
        assert!(warning.writes(LogLevel::Err) && !warning.writes(LogLevel::Info));
        assert!(!at(LogLevel::Debug, LogTarget::Null).writes(LogLevel::Emerg));
    }
}
