//! The units' lines on the init's standard output (config
//! `console-output: all`, the default in a container: docs/pid1.md, "The
//! services' output"), so that `podman logs` and `docker logs` show them,
//! each prefixed with its unit's name (`web: listening on :8080`). The
//! unit's log (`initctl logs`) keeps every line as before; this is a copy.
//!
//! It never blocks the loop: standard output is opened anew with
//! `O_NONBLOCK` (`Sys::open_stdout_nonblocking`), the lines of one read
//! of a pipe are gathered in one buffer and written at once, and what the
//! pipe or terminal does not take is dropped and counted, as the output
//! rate limit does: a line cut by a short write is finished first at the
//! next write, so that no line is mixed with another, then a note says
//! how many lines were dropped. The buffer is kept between writes (no
//! allocation per line); it holds at most one read's lines.

use crate::sys::Sys;
use std::os::fd::{AsRawFd, OwnedFd};

/// The note written before the lines that follow a drop.
fn dropped_note(n: u64) -> String {
    format!("init: console-output: {n} lines dropped: standard output was full\n")
}

/// The copy of the units' lines on standard output.
#[derive(Debug)]
pub(super) struct Mirror {
    fd: OwnedFd,
    /// Lines to write: first, the rest of a line a short write cut.
    buf: Vec<u8>,
    /// How much of `buf` is the rest of a cut line.
    cut: usize,
    /// Lines dropped since the last note.
    dropped: u64,
}

impl Mirror {
    /// The mirror onto the init's standard output; `None` (said on the
    /// console) when it cannot be opened so.
    pub(super) fn open(sys: &dyn Sys) -> Option<Mirror> {
        match sys.open_stdout_nonblocking() {
            Ok(fd) => Some(Mirror {
                fd,
                buf: Vec::new(),
                cut: 0,
                dropped: 0,
            }),
            Err(e) => {
                sys.console(&format!("init: console-output off: {e}"));
                None
            }
        }
    }

    /// Adds one line of `unit`.
    pub(super) fn push(&mut self, unit: &str, text: &[u8]) {
        self.buf.extend_from_slice(unit.as_bytes());
        self.buf.extend_from_slice(b": ");
        self.buf.extend_from_slice(text);
        self.buf.push(b'\n');
    }

    /// Writes what standard output takes now; the rest is dropped and
    /// counted, but for the end of a line cut short, kept for the next
    /// write. After a drop, the lines that follow are headed by a note
    /// saying how many were dropped.
    pub(super) fn flush(&mut self, sys: &dyn Sys) {
        if self.buf.is_empty() {
            return;
        }
        let cut = self.cut;
        let mut noted = 0;
        if self.dropped > 0 && self.buf.len() > cut {
            let note = dropped_note(self.dropped);
            self.buf.splice(cut..cut, note.bytes());
            noted = std::mem::take(&mut self.dropped);
        }
        let n = sys.write_now(self.fd.as_raw_fd(), &self.buf).unwrap_or(0);
        let n = n.min(self.buf.len());
        self.buf.drain(..n);
        // Where the first whole line left starts: the rest of a line the
        // write cut (up to its newline) is kept.
        let keep = if self.buf.is_empty() {
            0
        } else if n == 0 {
            cut
        } else {
            self.buf
                .iter()
                .position(|&b| b == b'\n')
                .map_or(0, |i| i + 1)
        };
        let keep = keep.min(self.buf.len());
        let rest = self.buf.get(keep..).unwrap_or_default();
        // Every line pushed ends with a newline: counting them counts the
        // lines; the note, when it is dropped whole, stood for `noted`.
        let mut lost = rest.iter().filter(|&&b| b == b'\n').count() as u64;
        if noted > 0 && cut.checked_sub(n).is_some_and(|start| start >= keep) {
            lost = lost - 1 + noted;
        }
        self.dropped += lost;
        self.buf.truncate(keep);
        self.cut = keep;
    }

    /// Lines dropped and not yet told.
    #[cfg(test)]
    pub(super) fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::sys::fake::FakeSys;

    #[test]
    fn lines_are_prefixed_and_a_full_output_drops_and_counts() {
        let sys = FakeSys::new();
        let mut m = Mirror::open(&sys).unwrap();
        m.push("web", b"listening");
        m.push("db", b"ready");
        m.flush(&sys);
        assert_eq!(sys.take_stdout(), "web: listening\ndb: ready\n");
        // Room for 7 bytes: `web: on` of the first line; its rest waits,
        // the two lines after it are dropped.
        sys.set_stdout_room(7);
        m.push("web", b"one");
        m.push("web", b"two");
        m.push("web", b"three");
        m.flush(&sys);
        assert_eq!(sys.take_stdout(), "web: on");
        assert_eq!(m.dropped(), 2);
        // Full: nothing written, the cut line's rest still waits, and
        // what came meanwhile is dropped too.
        sys.set_stdout_room(0);
        m.push("db", b"four");
        m.flush(&sys);
        assert_eq!(m.dropped(), 3);
        // Room again: the cut line is finished, then the note, then the
        // new lines.
        sys.set_stdout_room(usize::MAX);
        m.push("db", b"five");
        m.flush(&sys);
        assert_eq!(
            sys.take_stdout(),
            "e\ninit: console-output: 3 lines dropped: standard output was full\ndb: five\n"
        );
        assert_eq!(m.dropped(), 0);
    }
}
