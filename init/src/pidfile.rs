//! Pidfiles of `background-pidfile` units: the daemon writes its PID
//! there, the init reads it to know whom to supervise.
//!
//! [`parse_pid`] is the pure check; [`read_pidfile`] reads through
//! [`Sys::read_file_chased`] (its links followed and checked as
//! systemd's `CHASE_SAFE`, non-blocking open, regular files only, at most
//! [`MAX_PIDFILE`] bytes). A pidfile holds one positive decimal
//! integer, optionally surrounded by blanks and newlines; 0 and 1 are
//! refused (0 would mean "my process group" to `kill(2)`, 1 is the init or
//! the system's init). Whether the PID is alive, and not the init itself,
//! is for the caller to check, with the file's owner and path, by
//! `flotilla_units::pidfile`'s rule (`runtime/pidfiles.rs`).

use std::path::{Path, PathBuf};

use crate::sys::{Pid, Sys, SysError};
use flotilla_units::chase::Unsafe;

/// The largest pidfile read.
pub const MAX_PIDFILE: usize = 64;

/// Why a pidfile was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PidfileError {
    /// It could not be read (missing, not a regular file, too large).
    #[error("pidfile {0}")]
    Read(SysError),
    /// Its contents are not a usable PID.
    #[error("pidfile {path}: {problem}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: PidProblem,
    },
}

/// What is wrong with a pidfile's contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PidProblem {
    /// Nothing but blanks.
    #[error("empty")]
    Empty,
    /// Not a decimal number (signs are refused too).
    #[error("not a number")]
    NotANumber,
    /// Larger than any PID.
    #[error("out of range")]
    OutOfRange,
    /// 0 or 1.
    #[error("refusing PID {0}")]
    Reserved(i32),
}

/// Parses the contents of a pidfile.
pub fn parse_pid(bytes: &[u8]) -> Result<Pid, PidProblem> {
    let digits = bytes.trim_ascii();
    if digits.is_empty() {
        return Err(PidProblem::Empty);
    }
    if !digits.iter().all(u8::is_ascii_digit) {
        return Err(PidProblem::NotANumber);
    }
    let mut n: Pid = 0;
    for d in digits {
        n = n
            .checked_mul(10)
            .and_then(|n| n.checked_add(Pid::from(d - b'0')))
            .ok_or(PidProblem::OutOfRange)?;
    }
    if n <= 1 {
        return Err(PidProblem::Reserved(n));
    }
    Ok(n)
}

/// A pidfile's PID with what [`flotilla_units::pidfile::take`] asks of
/// the file: its owner and how it was reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PidRead {
    /// The PID it names.
    pub pid: Pid,
    /// The file's owner.
    pub owner: u32,
    /// The first unsafe step on its path ([`flotilla_units::chase`]).
    pub unsafe_step: Option<Unsafe>,
}

/// Reads and parses the pidfile at `path`, its links followed and
/// checked ([`Sys::read_file_chased`]).
pub fn read_pidfile(sys: &dyn Sys, path: &Path) -> Result<PidRead, PidfileError> {
    let file = sys
        .read_file_chased(path, MAX_PIDFILE)
        .map_err(PidfileError::Read)?;
    let pid = parse_pid(&file.bytes).map_err(|problem| PidfileError::Invalid {
        path: path.to_owned(),
        problem,
    })?;
    Ok(PidRead {
        pid,
        owner: file.owner,
        unsafe_step: file.unsafe_step,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::sys::fake::FakeSys;
    use crate::sys::real::RealSys;

    #[test]
    fn accepts_positive_integers_with_blanks() {
        assert_eq!(parse_pid(b"4711"), Ok(4711));
        assert_eq!(parse_pid(b"4711\n"), Ok(4711));
        assert_eq!(parse_pid(b"  4711 \r\n\n"), Ok(4711));
        assert_eq!(parse_pid(b"0042"), Ok(42));
        assert_eq!(parse_pid(b"2147483647"), Ok(i32::MAX));
    }

    #[test]
    fn refuses_everything_else() {
        assert_eq!(parse_pid(b""), Err(PidProblem::Empty));
        assert_eq!(parse_pid(b" \n"), Err(PidProblem::Empty));
        assert_eq!(parse_pid(b"0"), Err(PidProblem::Reserved(0)));
        assert_eq!(parse_pid(b"1\n"), Err(PidProblem::Reserved(1)));
        assert_eq!(parse_pid(b"-5"), Err(PidProblem::NotANumber));
        assert_eq!(parse_pid(b"+5"), Err(PidProblem::NotANumber));
        assert_eq!(parse_pid(b"12 34"), Err(PidProblem::NotANumber));
        assert_eq!(parse_pid(b"12\n34\n"), Err(PidProblem::NotANumber));
        assert_eq!(parse_pid(b"abc"), Err(PidProblem::NotANumber));
        assert_eq!(parse_pid(b"\xff"), Err(PidProblem::NotANumber));
        assert_eq!(parse_pid(b"2147483648"), Err(PidProblem::OutOfRange));
        assert_eq!(
            parse_pid(b"99999999999999999999"),
            Err(PidProblem::OutOfRange)
        );
    }

    proptest::proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..80)) {
            let _ = parse_pid(&bytes);
        }

        #[test]
        fn round_trips(pid in 2i32..=i32::MAX, nl in proptest::bool::ANY) {
            let text = if nl { format!("{pid}\n") } else { pid.to_string() };
            proptest::prop_assert_eq!(parse_pid(text.as_bytes()), Ok(pid));
        }
    }

    #[test]
    fn reads_through_the_fake() {
        let sys = FakeSys::new();
        sys.set_file("/run/d.pid", "1234\n");
        assert_eq!(
            read_pidfile(&sys, Path::new("/run/d.pid")),
            Ok(PidRead {
                pid: 1234,
                owner: 0,
                unsafe_step: None
            })
        );
        sys.set_file("/run/d.pid", "garbage");
        let err = read_pidfile(&sys, Path::new("/run/d.pid")).unwrap_err();
        assert_eq!(err.to_string(), "pidfile /run/d.pid: not a number");
        let err = read_pidfile(&sys, Path::new("/run/none.pid")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "pidfile /run/none.pid: no such file or directory"
        );
        // Test 20's game: a dynamic user's link up into root's files.
        let user = crate::sys::FileOwner {
            uid: 61184,
            gid: 61184,
            mode: 0o755,
        };
        sys.set_file("/run/a/pid", "4711\n");
        sys.add_dir("/run/b");
        sys.set_owner("/run/b", user);
        sys.set_link("/run/b/pid", "../a/pid");
        sys.set_owner("/run/b/pid", user);
        let read = read_pidfile(&sys, Path::new("/run/b/pid")).unwrap();
        assert_eq!((read.pid, read.owner), (4711, 0));
        assert_eq!(
            read.unsafe_step.map(|u| u.to_string()).as_deref(),
            Some("unsafe path transition /run/b/pid (uid 61184) -> /run (uid 0)")
        );
        sys.set_file("/run/big.pid", vec![b'1'; MAX_PIDFILE + 1]);
        let err = read_pidfile(&sys, Path::new("/run/big.pid")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "pidfile /run/big.pid: longer than 64 bytes"
        );
    }

    #[test]
    fn reads_real_files_and_refuses_fifos() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.pid");
        std::fs::write(&p, "777\n").unwrap();
        assert_eq!(read_pidfile(&RealSys, &p).map(|r| r.pid), Ok(777));
        std::fs::write(&p, vec![b'7'; 65]).unwrap();
        assert!(matches!(
            read_pidfile(&RealSys, &p),
            Err(PidfileError::Read(SysError::TooLarge { .. }))
        ));
        // A FIFO would block a plain open(2) until a writer comes.
        let fifo = dir.path().join("fifo.pid");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        assert!(matches!(
            read_pidfile(&RealSys, &fifo),
            Err(PidfileError::Read(SysError::NotRegular { .. }))
        ));
        assert!(matches!(
            read_pidfile(&RealSys, dir.path()),
            Err(PidfileError::Read(SysError::NotRegular { .. }))
        ));
    }
}
