//! What a signal to the init asks for (docs/pid1.md, "Signals"): the one
//! table from a signal number to a request of the loop, pure.
//!
//! Besides the classic signals (SIGTERM, SIGINT, SIGPWR, SIGHUP), the init
//! takes the real-time signals systemd's PID 1 takes for a shutdown
//! (systemd(1), "Signals"): container engines send them to an image whose
//! entrypoint is an init (`podman stop` sends `SIGRTMIN+3` when the
//! command is `/sbin/init` or systemd), and `systemctl`'s `--force` paths
//! and older tools use them.
//!
//! The numbers are systemd's as the senders compute them: glibc's
//! `SIGRTMIN` is 34 (the kernel's 32 plus the two glibc keeps for its
//! threads), and podman's, Go's and `kill -s RTMIN+3`'s tables agree. A
//! musl build's `SIGRTMIN()` is 35 (musl keeps three), so the numbers are
//! fixed here, not computed from the C library the init is linked with.

use flotilla_units::protocol::ShutdownKind;

/// `SIGRTMIN` as systemd and the programs that signal it count.
pub const SYSTEMD_RTMIN: i32 = 34;

/// What a signal asks of the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    /// Shut down: stop every unit in order, then end as `kind` says.
    Shutdown(ShutdownKind),
    /// Shut down at once: the units are not stopped one by one; the final
    /// sequence's SIGTERM (then SIGKILL) ends every process (systemd's
    /// `--force --force`).
    Immediate(ShutdownKind),
    /// Reload the unit set.
    Reload,
    /// Nothing (SIGCHLD is reaped after every batch; the rest ignored).
    Nothing,
}

/// systemd's real-time signals to PID 1 with the shutdown each asks for:
/// `+3` halt, `+4` poweroff, `+5` reboot, `+6` kexec (a reboot here: the
/// init loads no kernel), and `+13`…`+16` the same at once.
pub const SYSTEMD_SIGNALS: [(i32, Asked); 8] = [
    (SYSTEMD_RTMIN + 3, Asked::Shutdown(ShutdownKind::Halt)),
    (SYSTEMD_RTMIN + 4, Asked::Shutdown(ShutdownKind::Poweroff)),
    (SYSTEMD_RTMIN + 5, Asked::Shutdown(ShutdownKind::Reboot)),
    (SYSTEMD_RTMIN + 6, Asked::Shutdown(ShutdownKind::Reboot)),
    (SYSTEMD_RTMIN + 13, Asked::Immediate(ShutdownKind::Halt)),
    (SYSTEMD_RTMIN + 14, Asked::Immediate(ShutdownKind::Poweroff)),
    (SYSTEMD_RTMIN + 15, Asked::Immediate(ShutdownKind::Reboot)),
    (SYSTEMD_RTMIN + 16, Asked::Immediate(ShutdownKind::Reboot)),
];

/// What `signo` asks for, `sigint` being what SIGINT means where the init
/// runs (a machine's Ctrl-Alt-Del reboots; a terminal's or a container's
/// Ctrl-C powers off). Not as PID 1 (`pid1` false) there is no system to
/// end at once: an immediate form stops the units as the others do, so
/// that none is left running without its supervisor.
pub fn asked(signo: i32, sigint: ShutdownKind, pid1: bool) -> Asked {
    match signo {
        libc::SIGTERM | libc::SIGPWR => Asked::Shutdown(ShutdownKind::Poweroff),
        libc::SIGINT => Asked::Shutdown(sigint),
        libc::SIGHUP => Asked::Reload,
        _ => match SYSTEMD_SIGNALS.iter().find(|(s, _)| *s == signo) {
            Some((_, Asked::Immediate(kind))) if !pid1 => Asked::Shutdown(*kind),
            Some((_, a)) => *a,
            None => Asked::Nothing,
        },
    }
}

/// The name of a signal the init takes, for its console lines
/// (`SIGRTMIN+3`, systemd's and podman's spelling).
pub fn name(signo: i32) -> String {
    match signo {
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGPWR => "SIGPWR".into(),
        libc::SIGINT => "SIGINT".into(),
        libc::SIGHUP => "SIGHUP".into(),
        s if s > SYSTEMD_RTMIN => format!("SIGRTMIN+{}", s - SYSTEMD_RTMIN),
        s => format!("signal {s}"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use ShutdownKind::{Halt, Poweroff, Reboot};

    #[test]
    fn systemds_table() {
        let pid1 = |s| asked(s, Reboot, true);
        // systemd(1): 37 halt, 38 poweroff, 39 reboot, 40 kexec; 47..50 forced.
        assert_eq!(pid1(37), Asked::Shutdown(Halt));
        assert_eq!(pid1(38), Asked::Shutdown(Poweroff));
        assert_eq!(pid1(39), Asked::Shutdown(Reboot));
        assert_eq!(pid1(40), Asked::Shutdown(Reboot));
        assert_eq!(pid1(47), Asked::Immediate(Halt));
        assert_eq!(pid1(48), Asked::Immediate(Poweroff));
        assert_eq!(pid1(49), Asked::Immediate(Reboot));
        assert_eq!(pid1(50), Asked::Immediate(Reboot));
        for other in [
            35,
            36,
            41,
            46,
            51,
            libc::SIGUSR1,
            libc::SIGQUIT,
            libc::SIGCHLD,
        ] {
            assert_eq!(pid1(other), Asked::Nothing, "{other}");
        }
        assert_eq!(pid1(libc::SIGTERM), Asked::Shutdown(Poweroff));
        assert_eq!(pid1(libc::SIGPWR), Asked::Shutdown(Poweroff));
        assert_eq!(pid1(libc::SIGINT), Asked::Shutdown(Reboot));
        assert_eq!(
            asked(libc::SIGINT, Poweroff, true),
            Asked::Shutdown(Poweroff)
        );
        assert_eq!(pid1(libc::SIGHUP), Asked::Reload);
        // A supervisor stops its units even when asked to be quick.
        assert_eq!(asked(48, Poweroff, false), Asked::Shutdown(Poweroff));
        assert_eq!(asked(37, Poweroff, false), Asked::Shutdown(Halt));
    }

    #[test]
    fn names() {
        assert_eq!(name(37), "SIGRTMIN+3");
        assert_eq!(name(50), "SIGRTMIN+16");
        assert_eq!(name(libc::SIGTERM), "SIGTERM");
    }
}
