//! The bounded log of one unit: the last lines of its stdout and stderr in
//! memory (a ring measured in bytes), and every line appended to
//! `<log-dir>/<unit>.log`, which is rotated once to `<unit>.log.1` when it
//! passes a size.
//!
//! Nothing here blocks on a reader or grows without bound (the rule of
//! dinit's and s6's loggers): when the ring is full the oldest lines go,
//! and readers learn how many they missed from the sequence numbers. Every
//! line gets the next sequence number (1, 2, …) of its unit, so:
//!
//! - `initctl logs UNIT -n N` is [`LogBuf::last`];
//! - `initctl logs UNIT -f` remembers the last sequence number it sent and
//!   asks [`LogBuf::after`] after each loop turn;
//! - both return a [`Tail`] whose `missed` counts the lines asked for that
//!   are no longer in memory; [`Tail::overflow_mark`] spells it
//!   `-- N lines dropped --`.
//!
//! The file gets `TIMESTAMP STREAM TEXT` lines (`2026-11-22T04:00:00.123Z
//! stdout listening on :25`); a piece of a line longer than
//! [`crate::outpipe::MAX_LINE`] that continues on the next line has the
//! stream written `stdout+`. Lines are buffered and written by
//! [`LogBuf::flush`] (the loop calls it after draining a pipe), so a burst
//! of lines costs one `write(2)`. The file is opened
//! `O_APPEND | O_CLOEXEC | O_NONBLOCK`; a regular file's writes do not
//! honour `O_NONBLOCK` (`open(2)`), so a slow disk can still stall a write,
//! which this single-threaded design accepts. A failed write drops what was
//! buffered and is reported by `flush`; the ring is unaffected.

use std::collections::vec_deque::{self, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::outpipe::{Line, Stream};
use crate::sys::{Errno, Os, WallTime};

/// Default size of the in-memory ring: 64 KiB per unit.
pub const DEFAULT_RING_BYTES: usize = 64 * 1024;

/// Default size at which `<unit>.log` is rotated: 8 MiB (so at most about
/// 16 MiB on disk per unit).
pub const DEFAULT_FILE_MAX: u64 = 8 << 20;

/// What each line costs in the ring besides its text (its header and the
/// allocation), so that many short lines are bounded too.
pub const LINE_OVERHEAD: usize = 48;

/// Buffered file output beyond this is written at once, even before
/// [`LogBuf::flush`].
const PENDING_MAX: usize = 64 * 1024;

/// Up to this many lines, a ring grows one line at a time.
const SMALL_RING: usize = 4;

/// A log file problem.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The unit name cannot be a file name.
    #[error("log file for unit {0:?}: invalid file name")]
    InvalidName(String),
    /// Opening, writing or rotating the file failed.
    #[error("{op} {path}: {errno}")]
    Io {
        /// `open`, `write`, `rotate`.
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        errno: Os,
    },
}

/// One line in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// Its number in the unit's log, from 1.
    pub seq: u64,
    /// When the init read it.
    pub time: WallTime,
    /// Which stream.
    pub stream: Stream,
    /// The text (invalid UTF-8 replaced).
    pub text: Box<str>,
    /// It continues in the next line.
    pub cut: bool,
}

/// Lines a reader asked for: those still in memory, and how many are gone.
#[derive(Debug, Clone)]
pub struct Tail<'a> {
    /// Lines asked for that the ring has already dropped (they came before
    /// the first of `lines`).
    pub missed: u64,
    /// The lines, oldest first.
    pub lines: vec_deque::Iter<'a, LogLine>,
}

impl Tail<'_> {
    /// `-- N lines dropped --` when lines were missed.
    pub fn overflow_mark(&self) -> Option<String> {
        (self.missed > 0).then(|| overflow_mark(self.missed))
    }
}

/// `-- N lines dropped --` (`-- 1 line dropped --`).
pub fn overflow_mark(n: u64) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("-- {n} line{s} dropped --")
}

/// The log of one unit. See the module documentation.
#[derive(Debug)]
pub struct LogBuf {
    lines: VecDeque<LogLine>,
    bytes: usize,
    cap: usize,
    next_seq: u64,
    /// Boxed: most units of a big set never get one, and a `LogBuf` lives
    /// as long as its unit.
    file: Option<Box<LogFile>>,
}

impl LogBuf {
    /// A log keeping about `cap_bytes` of lines in memory (text plus
    /// [`LINE_OVERHEAD`] each; the newest line is always kept), with no file.
    pub fn new(cap_bytes: usize) -> LogBuf {
        LogBuf {
            lines: VecDeque::new(),
            bytes: 0,
            cap: cap_bytes,
            next_seq: 1,
            file: None,
        }
    }

    /// Also appends every line to `file` from now on (replacing any other).
    pub fn set_file(&mut self, file: Option<LogFile>) {
        self.file = file.map(Box::new);
    }

    /// The file lines are appended to.
    pub fn file(&self) -> Option<&LogFile> {
        self.file.as_deref()
    }

    /// Adds a line read at `time`; returns its sequence number.
    pub fn push(&mut self, time: WallTime, line: Line<'_>) -> u64 {
        self.push_text(time, line.stream, line.text, line.cut)
    }

    /// [`LogBuf::push`] from parts (the init's own messages about the unit
    /// can go here too).
    pub fn push_text(&mut self, time: WallTime, stream: Stream, text: &[u8], cut: bool) -> u64 {
        if let Some(f) = self.file.as_mut() {
            f.append(time, stream, text, cut);
        }
        let text: Box<str> = String::from_utf8_lossy(text).into();
        let cost = text.len() + LINE_OVERHEAD;
        while self.bytes + cost > self.cap {
            let Some(old) = self.lines.pop_front() else {
                break;
            };
            self.bytes -= old.text.len() + LINE_OVERHEAD;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.bytes += cost;
        // A unit's ring usually holds a line or two (the init's notes on
        // its state): room for exactly those, where `VecDeque` would make
        // room for four; past that, the usual doubling.
        if self.lines.len() == self.lines.capacity() && self.lines.len() < SMALL_RING {
            self.lines.reserve_exact(1);
        }
        self.lines.push_back(LogLine {
            seq,
            time,
            stream,
            text,
            cut,
        });
        seq
    }

    /// The sequence number the next line will get (one more than the last).
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Lines dropped from memory so far.
    pub fn dropped(&self) -> u64 {
        self.first_seq() - 1
    }

    /// Lines in memory.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether no line is in memory.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Bytes of the ring in use (as counted against the capacity).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The sequence number of the oldest line in memory (`next_seq` when
    /// there is none).
    fn first_seq(&self) -> u64 {
        self.lines.front().map_or(self.next_seq, |l| l.seq)
    }

    /// The last `n` lines (`initctl logs -n N`).
    pub fn last(&self, n: usize) -> Tail<'_> {
        let have = self.lines.len();
        let start = have.saturating_sub(n);
        let wanted_gone = u64::try_from(n.saturating_sub(have)).unwrap_or(u64::MAX);
        Tail {
            missed: wanted_gone.min(self.dropped()),
            lines: self.lines.range(start..),
        }
    }

    /// The lines after sequence number `seq` (`initctl logs -f`: pass the
    /// last one sent, or 0 for everything).
    pub fn after(&self, seq: u64) -> Tail<'_> {
        let first = self.first_seq();
        let want = seq.saturating_add(1);
        let missed = first.saturating_sub(want);
        let skip = usize::try_from(want.saturating_sub(first))
            .unwrap_or(usize::MAX)
            .min(self.lines.len());
        Tail {
            missed,
            lines: self.lines.range(skip..),
        }
    }

    /// Writes the lines buffered for the file, rotating it when it passes
    /// its size. Returns the first error since the last call (the lines
    /// concerned are dropped from the file, not from memory).
    pub fn flush(&mut self) -> Result<(), LogError> {
        match self.file.as_mut() {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

/// `<log-dir>/<unit>.log`, appended to and rotated once to
/// `<unit>.log.1`.
#[derive(Debug)]
pub struct LogFile {
    path: PathBuf,
    rotated: PathBuf,
    file: Option<File>,
    size: u64,
    max: u64,
    pending: Vec<u8>,
    error: Option<LogError>,
    stamp: (i64, u32, String),
}

impl LogFile {
    /// Opens (creating it, and `dir` if missing) the log file of `unit`,
    /// to be rotated when it passes `max_bytes`.
    pub fn open(dir: &Path, unit: &str, max_bytes: u64) -> Result<LogFile, LogError> {
        if unit.is_empty()
            || unit.contains('/')
            || unit.contains('\0')
            || unit == "."
            || unit == ".."
        {
            return Err(LogError::InvalidName(unit.to_owned()));
        }
        let path = dir.join(format!("{unit}.log"));
        let rotated = dir.join(format!("{unit}.log.1"));
        let file = match open_append(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                std::fs::create_dir_all(dir).map_err(|e| io_error("create", dir, &e))?;
                open_append(&path)
            }
            other => other,
        }
        .map_err(|e| io_error("open", &path, &e))?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        Ok(LogFile {
            path,
            rotated,
            file: Some(file),
            size,
            max: max_bytes,
            pending: Vec::new(),
            error: None,
            stamp: (i64::MIN, 0, String::new()),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Buffers one line.
    fn append(&mut self, time: WallTime, stream: Stream, text: &[u8], cut: bool) {
        let millis = time.nanos / 1_000_000;
        if self.stamp.0 != time.secs || self.stamp.1 != millis {
            self.stamp = (time.secs, millis, time.rfc3339());
        }
        self.pending.extend_from_slice(self.stamp.2.as_bytes());
        self.pending.push(b' ');
        self.pending.extend_from_slice(stream.as_str().as_bytes());
        if cut {
            self.pending.push(b'+');
        }
        self.pending.push(b' ');
        self.pending.extend_from_slice(text);
        self.pending.push(b'\n');
        if self.pending.len() >= PENDING_MAX {
            if let Err(e) = self.write_pending() {
                self.error.get_or_insert(e);
            }
        }
    }

    fn flush(&mut self) -> Result<(), LogError> {
        let now = self.write_pending();
        match self.error.take() {
            Some(e) => Err(e),
            None => now,
        }
    }

    fn write_pending(&mut self) -> Result<(), LogError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let len = u64::try_from(self.pending.len()).unwrap_or(u64::MAX);
        if self.size > 0 && self.size.saturating_add(len) > self.max {
            if let Err(e) = self.rotate() {
                self.pending.clear();
                return Err(e);
            }
        }
        let result = match self.file.as_mut() {
            Some(f) => f
                .write_all(&self.pending)
                .map_err(|e| io_error("write", &self.path, &e)),
            None => Err(LogError::Io {
                op: "write",
                path: self.path.clone(),
                errno: Os(Errno::EBADF),
            }),
        };
        if result.is_ok() {
            self.size = self.size.saturating_add(len);
        }
        self.pending.clear();
        result
    }

    /// `<unit>.log` becomes `<unit>.log.1` (replacing it), and a new,
    /// empty `<unit>.log` is opened.
    fn rotate(&mut self) -> Result<(), LogError> {
        self.file = None;
        std::fs::rename(&self.path, &self.rotated)
            .map_err(|e| io_error("rotate", &self.path, &e))?;
        let file = open_append(&self.path).map_err(|e| io_error("open", &self.path, &e))?;
        self.file = Some(file);
        self.size = 0;
        Ok(())
    }
}

fn open_append(path: &Path) -> io::Result<File> {
    // std adds O_CLOEXEC itself.
    OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o640)
        .custom_flags(libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

fn io_error(op: &'static str, path: &Path, e: &io::Error) -> LogError {
    LogError::Io {
        op,
        path: path.to_owned(),
        errno: Os(Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    const T: WallTime = WallTime {
        secs: 1_795_320_000,
        nanos: 123_456_789,
    };

    fn push(b: &mut LogBuf, s: &str) -> u64 {
        b.push(
            T,
            Line {
                stream: Stream::Stdout,
                text: s.as_bytes(),
                cut: false,
            },
        )
    }

    fn texts(t: Tail<'_>) -> Vec<String> {
        t.lines.map(|l| l.text.to_string()).collect()
    }

    #[test]
    fn keeps_lines_in_order_with_sequence_numbers() {
        let mut b = LogBuf::new(DEFAULT_RING_BYTES);
        assert_eq!(push(&mut b, "a"), 1);
        assert_eq!(push(&mut b, "b"), 2);
        b.push(
            T,
            Line {
                stream: Stream::Stderr,
                text: b"c\xff",
                cut: true,
            },
        );
        assert_eq!(texts(b.last(10)), ["a", "b", "c\u{fffd}"]);
        assert_eq!(b.last(10).missed, 0);
        assert_eq!(texts(b.last(2)), ["b", "c\u{fffd}"]);
        let last = b.last(1).lines.next().unwrap().clone();
        assert_eq!(
            (last.seq, last.stream, last.cut, last.time),
            (3, Stream::Stderr, true, T)
        );
        assert_eq!(texts(b.after(1)), ["b", "c\u{fffd}"]);
        assert_eq!(texts(b.after(3)), Vec::<String>::new());
        assert_eq!(texts(b.after(99)), Vec::<String>::new());
        assert_eq!(b.next_seq(), 4);
    }

    #[test]
    fn overflow_drops_oldest_and_counts_them() {
        // Room for exactly 3 lines of 2 bytes.
        let mut b = LogBuf::new(3 * (2 + LINE_OVERHEAD));
        for i in 0..10 {
            push(&mut b, &format!("{i:02}"));
        }
        assert_eq!(b.len(), 3);
        assert!(b.bytes() <= 3 * (2 + LINE_OVERHEAD));
        assert_eq!(b.dropped(), 7);
        assert_eq!(texts(b.last(3)), ["07", "08", "09"]);
        assert_eq!(b.last(3).missed, 0);
        let t = b.last(5);
        assert_eq!(t.missed, 2);
        assert_eq!(t.overflow_mark().as_deref(), Some("-- 2 lines dropped --"));
        assert_eq!(b.last(100).missed, 7);
        // Kept are lines 8, 9 and 10: a follower that last saw line 4 missed
        // lines 5, 6 and 7.
        let t = b.after(4);
        assert_eq!(t.missed, 3);
        assert_eq!(texts(t), ["07", "08", "09"]);
        let t = b.after(8);
        assert_eq!(t.missed, 0);
        assert_eq!(texts(t), ["08", "09"]);
        assert_eq!(overflow_mark(1), "-- 1 line dropped --");
    }

    #[test]
    fn the_newest_line_is_always_kept() {
        let mut b = LogBuf::new(10);
        push(&mut b, "a line longer than the whole ring");
        push(&mut b, "another");
        assert_eq!(texts(b.last(5)), ["another"]);
        assert_eq!(b.dropped(), 1);
    }

    proptest::proptest! {
        #[test]
        fn ring_stays_bounded(lens in proptest::collection::vec(0usize..300, 1..200), cap in 0usize..4000) {
            let mut b = LogBuf::new(cap);
            for (i, n) in lens.iter().enumerate() {
                let s = "x".repeat(*n);
                let seq = push(&mut b, &s);
                proptest::prop_assert_eq!(seq, i as u64 + 1);
                proptest::prop_assert!(b.bytes() <= cap.max(n + LINE_OVERHEAD));
                proptest::prop_assert_eq!(b.dropped() + b.len() as u64, seq);
            }
            let all: Vec<u64> = b.after(0).lines.map(|l| l.seq).collect();
            proptest::prop_assert!(all.windows(2).all(|w| w[1] == w[0] + 1));
            proptest::prop_assert_eq!(b.after(0).missed, b.dropped());
        }
    }

    #[test]
    fn writes_the_file_on_flush_and_rotates_once() {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("logs");
        let mut b = LogBuf::new(DEFAULT_RING_BYTES);
        b.set_file(Some(LogFile::open(&logs, "web", 100).unwrap()));
        let path = logs.join("web.log");
        push(&mut b, "hello");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
        b.push(
            T,
            Line {
                stream: Stream::Stderr,
                text: b"piece",
                cut: true,
            },
        );
        b.flush().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "2026-11-22T04:00:00.123Z stdout hello\n2026-11-22T04:00:00.123Z stderr+ piece\n"
        );
        // 77 bytes written; the next 38-byte line passes 100: rotate.
        push(&mut b, "third");
        b.flush().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "2026-11-22T04:00:00.123Z stdout third\n"
        );
        assert!(std::fs::read_to_string(logs.join("web.log.1"))
            .unwrap()
            .starts_with("2026-11-22T04:00:00.123Z stdout hello\n"));
        push(&mut b, "fourth");
        push(&mut b, "fifth");
        b.flush().unwrap();
        assert!(std::fs::read_to_string(logs.join("web.log.1"))
            .unwrap()
            .contains("third"));
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
        // Reopening appends.
        let f = LogFile::open(&logs, "web", 1000).unwrap();
        assert_eq!(f.size, 77);
    }

    #[test]
    fn file_errors_are_reported_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let mut b = LogBuf::new(DEFAULT_RING_BYTES);
        b.set_file(Some(LogFile::open(dir.path(), "u", 10).unwrap()));
        push(&mut b, "first line");
        b.flush().unwrap();
        // Rotation cannot rename a file that vanished with its directory.
        drop(dir);
        push(&mut b, "second");
        let err = b.flush().unwrap_err();
        assert!(err.to_string().starts_with("rotate "), "{err}");
        assert_eq!(b.len(), 2);
        assert!(LogFile::open(Path::new("/tmp"), "../x", 1).is_err());
        assert!(LogFile::open(Path::new("/tmp"), "", 1).is_err());
    }
}
