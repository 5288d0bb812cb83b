//! Sets of exit statuses a unit names: `SuccessExitStatus=` (YAML
//! `success-exit-status`: exits that count as success besides status 0)
//! and `RestartPreventExitStatus=` (`restart-prevent-exit-status`: exits
//! after which the unit is not restarted, whatever its `restart`).
//!
//! The syntax is systemd's: exit codes (`0` to `255`), the names of
//! `systemd.exec(5)`'s table (the LSB's `SUCCESS`, `FAILURE`, …, the BSD
//! `DATAERR`, `CANTCREAT`, …, systemd's `EXEC`, `STATE_DIRECTORY`, …) and
//! signal names (`SIGTERM`, `TERM`),
//! separated by blanks; several assignments add up and an empty one
//! empties the set. [`ExitStatus`], how a process ended, is what they are
//! matched against.

use crate::signal::Signal;
use serde::{Deserialize, Serialize};

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExitStatus {
    /// It exited with this status.
    Code(i32),
    /// A signal killed it.
    Signal(i32),
}

impl ExitStatus {
    /// Exit status 0.
    pub fn success(self) -> bool {
        self == ExitStatus::Code(0)
    }

    /// `exit status 3`, `killed by SIGKILL`.
    pub fn describe(self) -> String {
        match self {
            ExitStatus::Code(c) => format!("exit status {c}"),
            ExitStatus::Signal(s) => format!("killed by {}", Signal(s).name()),
        }
    }
}

/// A set of exit codes and signals.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ExitSet {
    /// Exit codes, in the order given, each once.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub codes: Vec<u8>,
    /// Signal numbers, in the order given, each once.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<i32>,
}

/// The names of exit codes as `systemd.exec(5)` lists them: the LSB's,
/// the BSD `sysexits.h` ones, and systemd's own (which flotilla gives the
/// same meaning where it fails a process for the same reason).
const NAMES: &[(&str, u8)] = &[
    ("SUCCESS", 0),
    ("FAILURE", 1),
    ("INVALIDARGUMENT", 2),
    ("NOTIMPLEMENTED", 3),
    ("NOPERMISSION", 4),
    ("NOTINSTALLED", 5),
    ("NOTCONFIGURED", 6),
    ("NOTRUNNING", 7),
    ("USAGE", 64),
    ("DATAERR", 65),
    ("NOINPUT", 66),
    ("NOUSER", 67),
    ("NOHOST", 68),
    ("UNAVAILABLE", 69),
    ("SOFTWARE", 70),
    ("OSERR", 71),
    ("OSFILE", 72),
    ("CANTCREAT", 73),
    ("IOERR", 74),
    ("TEMPFAIL", 75),
    ("PROTOCOL", 76),
    ("NOPERM", 77),
    ("CONFIG", 78),
    ("CHDIR", 200),
    ("NICE", 201),
    ("FDS", 202),
    ("EXEC", 203),
    ("MEMORY", 204),
    ("LIMITS", 205),
    ("OOM_ADJUST", 206),
    ("SIGNAL_MASK", 207),
    ("STDIN", 208),
    ("STDOUT", 209),
    ("CHROOT", 210),
    ("IOPRIO", 211),
    ("TIMERSLACK", 212),
    ("SECUREBITS", 213),
    ("SETSCHEDULER", 214),
    ("CPUAFFINITY", 215),
    ("GROUP", 216),
    ("USER", 217),
    ("CAPABILITIES", 218),
    ("CGROUP", 219),
    ("SETSID", 220),
    ("CONFIRM", 221),
    ("STDERR", 222),
    ("PAM", 224),
    ("NETWORK", 225),
    ("NAMESPACE", 226),
    ("NO_NEW_PRIVILEGES", 227),
    ("SECCOMP", 228),
    ("SELINUX_CONTEXT", 229),
    ("PERSONALITY", 230),
    ("APPARMOR_PROFILE", 231),
    ("ADDRESS_FAMILIES", 232),
    ("RUNTIME_DIRECTORY", 233),
    ("CHOWN", 235),
    ("SMACK_PROCESS_LABEL", 236),
    ("KEYRING", 237),
    ("STATE_DIRECTORY", 238),
    ("CACHE_DIRECTORY", 239),
    ("LOGS_DIRECTORY", 240),
    ("CONFIGURATION_DIRECTORY", 241),
    ("NUMA_POLICY", 242),
    ("CREDENTIALS", 243),
];

impl ExitSet {
    /// Whether nothing is in the set.
    pub fn is_empty(&self) -> bool {
        self.codes.is_empty() && self.signals.is_empty()
    }

    /// Whether `status` is in the set.
    pub fn contains(&self, status: ExitStatus) -> bool {
        match status {
            ExitStatus::Code(c) => u8::try_from(c).is_ok_and(|c| self.codes.contains(&c)),
            ExitStatus::Signal(s) => self.signals.contains(&s),
        }
    }

    /// Applies one assignment: the words of `value` are added; an empty
    /// value empties the set. Nothing changes on error, which names the
    /// word that is not an exit status.
    ///
    /// ```
    /// use flotilla_units::exits::ExitSet;
    /// let mut s = ExitSet::default();
    /// s.assign("143 SIGTERM NOTRUNNING").unwrap();
    /// assert_eq!(s.codes, [143, 7]);
    /// assert_eq!(s.signals, [15]);
    /// assert!(s.assign("256").is_err());
    /// s.assign("").unwrap();
    /// assert!(s.is_empty());
    /// ```
    pub fn assign(&mut self, value: &str) -> Result<(), String> {
        if value.trim().is_empty() {
            *self = ExitSet::default();
            return Ok(());
        }
        let mut next = self.clone();
        for w in value.split_whitespace() {
            next.add(w)?;
        }
        *self = next;
        Ok(())
    }

    /// Adds one word: a code, a code's name or a signal.
    pub fn add(&mut self, word: &str) -> Result<(), String> {
        if let Ok(n) = word.parse::<u32>() {
            let code = u8::try_from(n)
                .map_err(|_| format!("`{word}` is not an exit status (0 to 255)"))?;
            push_new(&mut self.codes, code);
            return Ok(());
        }
        if let Some(&(_, code)) = NAMES.iter().find(|(n, _)| *n == word) {
            push_new(&mut self.codes, code);
            return Ok(());
        }
        match Signal::parse(word) {
            Some(s) if !word.chars().all(|c| c.is_ascii_digit()) => {
                push_new(&mut self.signals, s.0);
                Ok(())
            }
            _ => Err(format!(
                "`{word}` is not an exit status (write 0 to 255, a name such as NOTRUNNING, or a signal such as SIGTERM)"
            )),
        }
    }

    /// The set as systemd writes it: codes, then signal names.
    pub fn words(&self) -> Vec<String> {
        let codes = self.codes.iter().map(u8::to_string);
        codes
            .chain(self.signals.iter().map(|&s| Signal(s).name()))
            .collect()
    }
}

fn push_new<T: PartialEq>(v: &mut Vec<T>, x: T) {
    if !v.contains(&x) {
        v.push(x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_debian_units_use() {
        // systemd-tmpfiles-setup.service: `SuccessExitStatus=DATAERR CANTCREAT`.
        let mut s = ExitSet::default();
        s.assign("DATAERR CANTCREAT").unwrap();
        assert_eq!(s.codes, [65, 73]);
        s.assign("STATE_DIRECTORY STDERR").unwrap();
        assert_eq!(s.codes, [65, 73, 238, 222]);
        assert!(s.assign("DATAER").is_err());
    }

    #[test]
    fn codes_names_and_signals() {
        let mut s = ExitSet::default();
        s.assign("0 255 SIGHUP term").unwrap();
        s.assign("1 FAILURE INT").unwrap();
        assert_eq!(s.codes, [0, 255, 1]);
        assert_eq!(s.signals, [1, 15, 2]);
        assert!(s.contains(ExitStatus::Code(255)));
        assert!(s.contains(ExitStatus::Signal(15)));
        assert!(!s.contains(ExitStatus::Code(3)));
        assert!(!s.contains(ExitStatus::Code(-1)));
        assert_eq!(s.words(), ["0", "255", "1", "SIGHUP", "SIGTERM", "SIGINT"]);
        let before = s.clone();
        assert_eq!(
            s.assign("2 bogus").unwrap_err(),
            "`bogus` is not an exit status (write 0 to 255, a name such as NOTRUNNING, or a signal such as SIGTERM)"
        );
        assert_eq!(s, before, "nothing changes on error");
        assert!(s.assign("-1").is_err());
        assert!(s.assign("300").is_err());
    }
}
