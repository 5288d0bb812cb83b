//! The standard streams a transient service is handed by its caller:
//! `transient-add`'s `stdio`, the descriptors that came with the request
//! (D-Bus's `StandardInputFileDescriptor`, `…Output…`, `…Error…`, what
//! `systemd-run --pipe` sends; docs/dbus.md). As systemd's `stdio_as_fds`,
//! every process of the unit gets each one given as that stream, in place
//! of what its context says (and a stream given does not go to the
//! journal). The init keeps its copies until the unit's run ends (it
//! stops or fails, not while it restarts), so that the caller's reader
//! sees the end of the output once the unit's processes are gone. They
//! are not carried across a re-exec (a running unit keeps its own).

use flotilla_units::protocol::StdStream;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use crate::sys::Stdio;

/// Each unit's streams, by its name (few units have any, for a while).
#[derive(Default)]
pub(super) struct Passed {
    by_unit: Vec<(String, [Option<OwnedFd>; 3])>,
}

impl Passed {
    /// Keeps `fds` as unit `name`'s streams `stdio` (in order), in place
    /// of any it had.
    pub fn keep(&mut self, name: &str, stdio: &[StdStream], fds: Vec<OwnedFd>) {
        self.release(name);
        let mut streams: [Option<OwnedFd>; 3] = Default::default();
        for (s, fd) in stdio.iter().zip(fds) {
            if let Some(slot) = streams.get_mut(s.index()) {
                *slot = Some(fd);
            }
        }
        if streams.iter().any(Option::is_some) {
            self.by_unit.push((name.to_string(), streams));
        }
    }

    /// Unit `name`'s streams: the descriptor of each given.
    pub fn streams(&self, name: &str) -> [Option<RawFd>; 3] {
        self.by_unit
            .iter()
            .find(|(n, _)| n == name)
            .map_or([None; 3], |(_, s)| {
                [0, 1, 2].map(|i| s.get(i).and_then(|f| f.as_ref().map(AsRawFd::as_raw_fd)))
            })
    }

    /// Closes unit `name`'s streams.
    pub fn release(&mut self, name: &str) {
        self.by_unit.retain(|(n, _)| n != name);
    }
}

/// `streams` with each stream given in `passed` in place of what the
/// context said.
pub(super) fn apply(streams: [Stdio<'_>; 3], passed: [Option<RawFd>; 3]) -> [Stdio<'_>; 3] {
    let [i, o, e] = streams;
    let [pi, po, pe] = passed;
    [
        pi.map_or(i, Stdio::Socket),
        po.map_or(o, Stdio::Socket),
        pe.map_or(e, Stdio::Socket),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn kept_until_released_each_in_its_place() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let (a, b): (OwnedFd, OwnedFd) = (a.into(), b.into());
        let (ra, rb) = (a.as_raw_fd(), b.as_raw_fd());
        let mut p = Passed::default();
        p.keep(
            "run-u1.service",
            &[StdStream::Stdout, StdStream::Stdin],
            vec![a, b],
        );
        assert_eq!(p.streams("run-u1.service"), [Some(rb), Some(ra), None]);
        assert_eq!(p.streams("other.service"), [None; 3]);
        let got = apply(
            [Stdio::Null, Stdio::Inherit, Stdio::Null],
            p.streams("run-u1.service"),
        );
        assert!(
            matches!(got, [Stdio::Socket(x), Stdio::Socket(y), Stdio::Null] if x == rb && y == ra)
        );
        p.release("run-u1.service");
        assert_eq!(p.streams("run-u1.service"), [None; 3]);
        // Released is closed: a reader of a kept pipe sees its end.
        let (r, w) = nix::unistd::pipe().unwrap();
        p.keep("x.service", &[StdStream::Stderr], vec![w]);
        assert!(p.streams("x.service")[2].is_some());
        p.release("x.service");
        let mut buf = [0u8; 4];
        assert_eq!(nix::unistd::read(&r, &mut buf).unwrap(), 0);
    }
}
