//! A signal as a unit names it (`kill-signal`, `KillSignal=`, …).

use serde::{Deserialize, Serialize};

/// A signal, kept by name and number so it prints as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Signal(pub i32);

impl Signal {
    /// SIGTERM, the default `kill-signal`.
    pub const TERM: Signal = Signal(15);
    /// SIGKILL, what a stop escalates to.
    pub const KILL: Signal = Signal(9);
    /// SIGHUP, what `SendSIGHUP=` adds to a stop.
    pub const HUP: Signal = Signal(1);

    const NAMES: [(&'static str, i32); 24] = [
        ("HUP", 1),
        ("INT", 2),
        ("QUIT", 3),
        ("ILL", 4),
        ("TRAP", 5),
        ("ABRT", 6),
        ("BUS", 7),
        ("FPE", 8),
        ("KILL", 9),
        ("USR1", 10),
        ("SEGV", 11),
        ("USR2", 12),
        ("PIPE", 13),
        ("ALRM", 14),
        ("TERM", 15),
        ("STKFLT", 16),
        ("CHLD", 17),
        ("CONT", 18),
        ("STOP", 19),
        ("TSTP", 20),
        ("TTIN", 21),
        ("TTOU", 22),
        ("URG", 23),
        ("WINCH", 28),
    ];

    /// Parses `SIGTERM`, `TERM`, `sigterm` or a number from 1 to 64.
    pub fn parse(s: &str) -> Option<Signal> {
        let t = s.trim();
        if let Ok(n) = t.parse::<i32>() {
            return (1..=64).contains(&n).then_some(Signal(n));
        }
        let up = t.to_ascii_uppercase();
        let bare = up.strip_prefix("SIG").unwrap_or(&up);
        Signal::NAMES
            .iter()
            .find(|(n, _)| *n == bare)
            .map(|&(_, v)| Signal(v))
    }

    /// `SIGTERM` and so on; a number for signals without a name here.
    pub fn name(self) -> String {
        match Signal::NAMES.iter().find(|(_, v)| *v == self.0) {
            Some((n, _)) => format!("SIG{n}"),
            None => self.0.to_string(),
        }
    }
}
