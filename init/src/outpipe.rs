//! Capturing a unit's stdout or stderr: one pipe per stream, read without
//! blocking by the event loop and split into lines.
//!
//! Two pipes per unit, not one: with one pipe the stream of a line would be
//! lost, and `initctl logs` shows it. The price is that the order between a
//! stdout line and a stderr line written at nearly the same time is the
//! order in which the loop happens to read the two pipes.
//!
//! How the loop uses an [`OutPipe`]:
//!
//! 1. [`OutPipe::new`] before the spawn; pass [`OutPipe::stdio`] as the
//!    request's stdout or stderr; watch the read end
//!    ([`OutPipe::as_raw_fd`], [`crate::sys::Sys::watch`]) under a token.
//! 2. After the spawn, [`OutPipe::close_writer`]: the init must not keep the
//!    write end, or EOF never comes.
//! 3. On each readable event, [`OutPipe::drain`] with a sink that stores the
//!    lines (in [`crate::logbuf::LogBuf`]) and runs `ready-grep`. It reads at
//!    most [`READ_BUDGET`] bytes per call so that one flooding unit cannot
//!    starve the others. Watching is edge-triggered: when `drain` returns
//!    [`Drained::More`] no new event will come for what is already in the
//!    pipe, so the loop must call `drain` again itself (after serving the
//!    other ready sources). [`Drained::Closed`] means every writer is gone
//!    (the unit and whatever inherited its stdout): unwatch and drop.
//!
//! Lines longer than [`MAX_LINE`] bytes are cut into pieces of that size,
//! each piece but the last marked [`Line::cut`]: nothing is lost, and
//! memory per pipe stays bounded. The read end is non-blocking and
//! close-on-exec; the write end is close-on-exec but *blocking*, because the
//! child's stdout must block when the pipe is full (`O_NONBLOCK` belongs to
//! the open file description, which `dup2(2)` shares; see `fcntl(2)`). A
//! unit that writes faster than the loop reads is therefore slowed down,
//! never dropped.

use std::fmt;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::fcntl::{fcntl, FcntlArg, OFlag};

use crate::sys::{Os, Stdio};

/// The longest line kept whole; longer ones are cut into pieces this long.
pub const MAX_LINE: usize = 4096;

/// The most [`OutPipe::drain`] reads in one call.
pub const READ_BUDGET: usize = 64 * 1024;

/// Which output stream a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stream {
    /// Descriptor 1.
    Stdout,
    /// Descriptor 2.
    Stderr,
    /// Not the unit's output: the init's own notes about the unit (state
    /// changes, spawn errors), kept in the same log.
    Init,
}

impl Stream {
    /// `stdout`, `stderr` or `init`.
    pub fn as_str(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
            Stream::Init => "init",
        }
    }
}

impl fmt::Display for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One line of output, without its newline. Borrowed: copy what you keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// The stream.
    pub stream: Stream,
    /// The bytes (not necessarily UTF-8).
    pub text: &'a [u8],
    /// The line goes on in the next piece (it was longer than [`MAX_LINE`]).
    pub cut: bool,
}

/// What [`OutPipe::drain`] left behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drained {
    /// The pipe is empty; the next write raises a new event.
    WouldBlock,
    /// The budget ran out with data left: call `drain` again soon, no event
    /// will come for it.
    More,
    /// End of file: every write end is closed. A last unterminated line has
    /// been delivered.
    Closed,
}

/// Creating or reading a pipe failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutPipeError {
    /// `pipe2(2)` or `fcntl(2)` failed.
    #[error("create {stream} pipe: {errno}")]
    Create {
        /// The stream.
        stream: Stream,
        /// The error.
        errno: Os,
    },
    /// `read(2)` failed.
    #[error("read {stream} pipe: {errno}")]
    Read {
        /// The stream.
        stream: Stream,
        /// The error.
        errno: Os,
    },
}

/// One captured stream of one unit. See the module documentation.
#[derive(Debug)]
pub struct OutPipe {
    stream: Stream,
    reader: OwnedFd,
    writer: Option<OwnedFd>,
    lines: LineSplitter,
}

impl OutPipe {
    /// A new pipe: `pipe2(O_CLOEXEC)`, then `O_NONBLOCK` on the read end
    /// only.
    pub fn new(stream: Stream) -> Result<OutPipe, OutPipeError> {
        let err = |e: Errno| OutPipeError::Create {
            stream,
            errno: Os(e),
        };
        let (reader, writer) = nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(err)?;
        fcntl(&reader, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).map_err(err)?;
        Ok(OutPipe {
            stream,
            reader,
            writer: Some(writer),
            lines: LineSplitter::new(MAX_LINE),
        })
    }

    /// The read end of a pipe made by the image before a re-exec (its
    /// write ends are the unit's; a line it had begun is lost).
    pub fn adopt(stream: Stream, reader: OwnedFd) -> OutPipe {
        OutPipe {
            stream,
            reader,
            writer: None,
            lines: LineSplitter::new(MAX_LINE),
        }
    }

    /// The stream this pipe captures.
    pub fn stream(&self) -> Stream {
        self.stream
    }

    /// The write end, for [`crate::sys::SpawnRequest`], until
    /// [`OutPipe::close_writer`].
    pub fn writer(&self) -> Option<BorrowedFd<'_>> {
        self.writer.as_ref().map(AsFd::as_fd)
    }

    /// The write end as a child's stdio ([`Stdio::Null`] once closed).
    pub fn stdio(&self) -> Stdio<'_> {
        self.writer().map_or(Stdio::Null, Stdio::Fd)
    }

    /// Closes the init's copy of the write end (call it right after the
    /// spawn, whether it succeeded or not).
    pub fn close_writer(&mut self) {
        self.writer = None;
    }

    /// Bytes of an unterminated line held back.
    pub fn pending(&self) -> usize {
        self.lines.pending()
    }

    /// Reads what is available, up to [`READ_BUDGET`] bytes, and hands each
    /// complete line (and each [`MAX_LINE`] piece) to `sink`. An
    /// unterminated line is kept for the next call, and delivered at EOF.
    pub fn drain(&mut self, mut sink: impl FnMut(Line<'_>)) -> Result<Drained, OutPipeError> {
        let stream = self.stream;
        let mut emit = |text: &[u8], cut: bool| sink(Line { stream, text, cut });
        let mut buf = [0u8; 16 * 1024];
        let mut budget = READ_BUDGET;
        loop {
            let want = budget.min(buf.len());
            if want == 0 {
                return Ok(Drained::More);
            }
            let Some(chunk) = buf.get_mut(..want) else {
                return Ok(Drained::More);
            };
            match nix::unistd::read(&self.reader, chunk) {
                Ok(0) => {
                    self.lines.finish(&mut emit);
                    return Ok(Drained::Closed);
                }
                Ok(n) => {
                    self.lines
                        .feed(chunk.get(..n).unwrap_or_default(), &mut emit);
                    // Even after a short read, read again: if the writers
                    // closed meanwhile, the EOF raised no new edge for
                    // epoll(7) to report, so it must be seen now.
                    budget = budget.saturating_sub(n);
                }
                Err(Errno::EAGAIN) => return Ok(Drained::WouldBlock),
                Err(Errno::EINTR) => {}
                Err(e) => {
                    return Err(OutPipeError::Read {
                        stream,
                        errno: Os(e),
                    })
                }
            }
        }
    }
}

impl AsRawFd for OutPipe {
    /// The read end.
    fn as_raw_fd(&self) -> RawFd {
        self.reader.as_raw_fd()
    }
}

/// Splits a byte stream into lines of at most `max` bytes, holding back an
/// unterminated line (at most `max` bytes) between calls. Pure.
///
/// The held-back line is boxed and freed once delivered: an [`OutPipe`]
/// (two per running process) is 32 bytes rather than 48, and holds no
/// buffer between lines.
#[derive(Debug, Clone)]
pub struct LineSplitter {
    // Boxed on purpose: 8 bytes in every pipe rather than 24, the second
    // allocation only while a line is held back.
    #[allow(clippy::box_collection)]
    partial: Option<Box<Vec<u8>>>,
    max: u32,
}

impl LineSplitter {
    /// A splitter cutting lines longer than `max` bytes (at least 1, at
    /// most `u32::MAX`).
    pub fn new(max: usize) -> LineSplitter {
        LineSplitter {
            partial: None,
            max: u32::try_from(max.max(1)).unwrap_or(u32::MAX),
        }
    }

    /// Bytes held back.
    pub fn pending(&self) -> usize {
        self.partial().len()
    }

    /// The line held back (empty if none).
    fn partial(&self) -> &[u8] {
        self.partial.as_deref().map_or(&[], Vec::as_slice)
    }

    /// Holds back `bytes` more.
    fn hold(&mut self, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.partial
                .get_or_insert_with(Box::default)
                .extend_from_slice(bytes);
        }
    }

    /// Delivers the line held back (if any) and frees it.
    fn deliver(&mut self, cut: bool, emit: &mut impl FnMut(&[u8], bool)) {
        if let Some(p) = self.partial.take() {
            emit(&p, cut);
        }
    }

    /// Feeds `data`; calls `emit(text, cut)` for each line or piece.
    pub fn feed(&mut self, data: &[u8], emit: &mut impl FnMut(&[u8], bool)) {
        let mut rest = data;
        loop {
            match rest.iter().position(|&c| c == b'\n') {
                Some(i) => {
                    let (line, after) = rest.split_at_checked(i).unwrap_or((rest, &[]));
                    self.segment(line, true, emit);
                    rest = after.get(1..).unwrap_or_default();
                }
                None => {
                    if !rest.is_empty() {
                        self.segment(rest, false, emit);
                    }
                    return;
                }
            }
        }
    }

    /// End of input: delivers the unterminated line, if any.
    pub fn finish(&mut self, emit: &mut impl FnMut(&[u8], bool)) {
        if !self.partial().is_empty() {
            self.deliver(false, emit);
        }
    }

    /// `seg` continues the current line; `complete` if a newline ended it.
    fn segment(&mut self, mut seg: &[u8], complete: bool, emit: &mut impl FnMut(&[u8], bool)) {
        let max = self.max as usize;
        loop {
            if self.partial().len() >= max && !seg.is_empty() {
                self.deliver(true, emit);
            }
            if self.partial().is_empty() {
                // Fast path: whole pieces straight from the input, no copy.
                while seg.len() > max {
                    let Some((piece, after)) = seg.split_at_checked(max) else {
                        break;
                    };
                    emit(piece, true);
                    seg = after;
                }
                if complete {
                    emit(seg, false);
                } else {
                    self.hold(seg);
                }
                return;
            }
            let take = max.saturating_sub(self.partial().len()).min(seg.len());
            let (head, after) = seg.split_at_checked(take).unwrap_or((seg, &[]));
            self.hold(head);
            seg = after;
            if seg.is_empty() {
                if complete {
                    self.deliver(false, emit);
                }
                return;
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_pipe_is_small() {
        // Two per running process, in the unit's `UnitIo`.
        assert_eq!(std::mem::size_of::<OutPipe>(), 32);
    }

    fn split(max: usize, chunks: &[&[u8]], eof: bool) -> Vec<(String, bool)> {
        let mut s = LineSplitter::new(max);
        let mut out = Vec::new();
        let mut emit =
            |t: &[u8], cut: bool| out.push((String::from_utf8_lossy(t).into_owned(), cut));
        for c in chunks {
            s.feed(c, &mut emit);
        }
        if eof {
            s.finish(&mut emit);
        }
        out
    }

    fn lines(v: &[(&str, bool)]) -> Vec<(String, bool)> {
        v.iter().map(|(s, c)| (s.to_string(), *c)).collect()
    }

    #[test]
    fn splits_lines_across_chunks() {
        let got = split(100, &[b"one\ntw", b"o\n\nthr", b"ee"], false);
        assert_eq!(got, lines(&[("one", false), ("two", false), ("", false)]));
        let got = split(100, &[b"one\ntw", b"o\n\nthr", b"ee"], true);
        assert_eq!(got.last().unwrap(), &("three".to_string(), false));
    }

    #[test]
    fn long_lines_are_cut_not_lost() {
        assert_eq!(
            split(4, &[b"abcdefghij\n"], false),
            lines(&[("abcd", true), ("efgh", true), ("ij", false)])
        );
        // Exactly `max` bytes is one whole line, even when the newline comes
        // in a later chunk.
        assert_eq!(
            split(4, &[b"abcd", b"\nx\n"], false),
            lines(&[("abcd", false), ("x", false)])
        );
        assert_eq!(
            split(4, &[b"ab", b"cd", b"e\n"], false),
            lines(&[("abcd", true), ("e", false)])
        );
        assert_eq!(
            split(4, &[b"abcdabcd\n"], false),
            lines(&[("abcd", true), ("abcd", false)])
        );
        assert_eq!(
            split(4, &[b"ab", b"cdefghijk"], true),
            lines(&[("abcd", true), ("efgh", true), ("ijk", false)])
        );
    }

    proptest::proptest! {
        /// Whatever the chunking, the pieces put back together are the
        /// input, no piece is longer than `max`, and only full-size pieces
        /// are cut.
        #[test]
        fn pieces_reassemble_the_input(
            data in proptest::collection::vec(proptest::sample::select(vec![b'a', b'b', b'\n']), 0..200),
            cuts in proptest::collection::vec(0usize..200, 0..6),
            max in 1usize..9,
        ) {
            let mut s = LineSplitter::new(max);
            let mut out: Vec<(Vec<u8>, bool)> = Vec::new();
            let mut emit = |t: &[u8], cut: bool| out.push((t.to_vec(), cut));
            let mut cuts = cuts.clone();
            cuts.push(data.len());
            cuts.sort_unstable();
            let mut at = 0;
            for c in cuts {
                let c = c.min(data.len());
                if c > at {
                    s.feed(data.get(at..c).unwrap(), &mut emit);
                    at = c;
                }
            }
            s.finish(&mut emit);
            let mut joined = Vec::new();
            for (t, cut) in &out {
                proptest::prop_assert!(t.len() <= max);
                proptest::prop_assert!(!cut || t.len() == max);
                joined.extend_from_slice(t);
                if !cut {
                    joined.push(b'\n');
                }
            }
            let mut want = data.clone();
            if !want.is_empty() && want.last() != Some(&b'\n') {
                want.push(b'\n');
            }
            proptest::prop_assert_eq!(joined, want);
        }
    }

    fn collect(pipe: &mut OutPipe) -> (Vec<(Stream, String, bool)>, Drained) {
        let mut got = Vec::new();
        let d = pipe
            .drain(|l| {
                got.push((
                    l.stream,
                    String::from_utf8_lossy(l.text).into_owned(),
                    l.cut,
                ))
            })
            .unwrap();
        (got, d)
    }

    #[test]
    fn drains_a_real_pipe_until_eof() {
        let mut pipe = OutPipe::new(Stream::Stderr).unwrap();
        let mut w = std::fs::File::from(pipe.writer.take().unwrap());
        assert_eq!(collect(&mut pipe), (vec![], Drained::WouldBlock));
        w.write_all(b"hello\nwor").unwrap();
        let (got, d) = collect(&mut pipe);
        assert_eq!(got, vec![(Stream::Stderr, "hello".to_string(), false)]);
        assert_eq!(d, Drained::WouldBlock);
        assert_eq!(pipe.pending(), 3);
        w.write_all(b"ld").unwrap();
        drop(w);
        let (got, d) = collect(&mut pipe);
        assert_eq!(got, vec![(Stream::Stderr, "world".to_string(), false)]);
        assert_eq!(d, Drained::Closed);
    }

    #[test]
    fn drain_is_bounded_and_resumes() {
        let mut pipe = OutPipe::new(Stream::Stdout).unwrap();
        // Grow the pipe so that more than one budget fits (fcntl(2)
        // F_SETPIPE_SZ; the default is 64 KiB).
        fcntl(
            pipe.writer().unwrap(),
            FcntlArg::F_SETPIPE_SZ(4 * READ_BUDGET as i32),
        )
        .unwrap();
        let mut w = std::fs::File::from(pipe.writer.take().unwrap());
        let line = [b'x'; 99];
        let n = 3 * READ_BUDGET / 100;
        for _ in 0..n {
            w.write_all(&line).unwrap();
            w.write_all(b"\n").unwrap();
        }
        drop(w);
        let mut total = 0;
        let mut rounds = 0;
        loop {
            let (got, d) = collect(&mut pipe);
            rounds += 1;
            assert!(got.len() <= READ_BUDGET / 100 + 1);
            total += got.len();
            match d {
                Drained::More => continue,
                Drained::Closed => break,
                Drained::WouldBlock => panic!("writer closed, data left"),
            }
        }
        assert_eq!(total, n);
        assert!(rounds >= 3, "{rounds}");
    }

    #[test]
    fn descriptors_are_close_on_exec_and_only_the_reader_nonblocking() {
        let pipe = OutPipe::new(Stream::Stdout).unwrap();
        for fd in [pipe.as_raw_fd(), pipe.writer().unwrap().as_raw_fd()] {
            // SAFETY: a valid descriptor we own.
            let fdflags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
            assert_eq!(fdflags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
        }
        // SAFETY: as above.
        let rd = unsafe { libc::fcntl(pipe.as_raw_fd(), libc::F_GETFL) };
        let wr = unsafe { libc::fcntl(pipe.writer().unwrap().as_raw_fd(), libc::F_GETFL) };
        assert_ne!(rd & libc::O_NONBLOCK, 0);
        assert_eq!(wr & libc::O_NONBLOCK, 0);
    }
}
