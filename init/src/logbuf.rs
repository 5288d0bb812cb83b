//! The bounded log of one unit: the last lines of its stdout and stderr in
//! memory (a ring measured in bytes), and how far the log directory has
//! them.
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
//! The init writes no file: the log writer (`flotilla-logd`, a unit of its
//! own) takes the lines over the control socket (`runtime/logfeed.rs`).
//! Two cursors say how far it got: `sent`, the last line handed to it, and
//! `persisted`, the last one it said is in the files ([`LogBuf::hand_over`],
//! [`LogBuf::ack`], [`LogBuf::unsend`]). The ring does not hold lines back
//! for the writer: the oldest go first whatever their state, and those that
//! went before they were handed over are counted as lost in the next
//! hand-over. Each log has an `id` of its own (a unit removed and added
//! again starts a new numbering), which with the init's instance names
//! its *stream* in the files.

use std::collections::vec_deque::{self, VecDeque};

use crate::outpipe::{Line, Stream};
use crate::sys::WallTime;

/// Default size of the in-memory ring: 64 KiB per unit.
pub const DEFAULT_RING_BYTES: usize = 64 * 1024;

/// What each line costs in the ring besides its text (its header and the
/// allocation), so that many short lines are bounded too.
pub const LINE_OVERHEAD: usize = 48;

/// Up to this many lines, a ring grows one line at a time.
const SMALL_RING: usize = 4;

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
    /// Its number among the logs of this init (a part of its stream's name).
    id: u32,
    /// The writer has the lines up to this one in the files.
    persisted: u64,
    /// The lines up to this one have been handed to the writer
    /// (`persisted <= sent`).
    sent: u64,
    /// Waiting in the writer's queue.
    queued: bool,
    /// The writer could not write it: left out until it retries.
    held: bool,
}

/// Lines handed to the writer by [`LogBuf::hand_over`].
#[derive(Debug, Clone)]
pub struct Handover<'a> {
    /// The writer had the lines up to this one.
    pub persisted: u64,
    /// Lines before the first of `lines` that went from the ring before
    /// they were handed over.
    pub lost: u64,
    /// The lines, oldest first.
    pub lines: vec_deque::Iter<'a, LogLine>,
}

impl LogBuf {
    /// A log keeping about `cap_bytes` of lines in memory (text plus
    /// [`LINE_OVERHEAD`] each; the newest line is always kept), the
    /// init's `id`-th.
    pub fn new(cap_bytes: usize, id: u32) -> LogBuf {
        LogBuf {
            lines: VecDeque::new(),
            bytes: 0,
            cap: cap_bytes,
            next_seq: 1,
            id,
            persisted: 0,
            sent: 0,
            queued: false,
            held: false,
        }
    }

    /// A log carried across a re-exec: `lines` (oldest first, numbered
    /// below `next_seq`) and the writer's cursor; what was handed over
    /// and not acknowledged is handed over again.
    pub fn restore(
        cap_bytes: usize,
        id: u32,
        next_seq: u64,
        persisted: u64,
        lines: impl IntoIterator<Item = LogLine>,
    ) -> LogBuf {
        let mut log = LogBuf::new(cap_bytes, id);
        for l in lines {
            log.bytes += l.text.len() + LINE_OVERHEAD;
            log.lines.push_back(l);
        }
        log.next_seq = next_seq.max(log.lines.back().map_or(1, |l| l.seq + 1));
        log.persisted = persisted.min(log.next_seq - 1);
        log.sent = log.persisted;
        log
    }

    /// Every line in memory, oldest first.
    pub fn lines(&self) -> vec_deque::Iter<'_, LogLine> {
        self.lines.iter()
    }

    /// Its number among the logs of this init.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Adds a line read at `time`; returns its sequence number.
    pub fn push(&mut self, time: WallTime, line: Line<'_>) -> u64 {
        self.push_text(time, line.stream, line.text, line.cut)
    }

    /// [`LogBuf::push`] from parts (the init's own messages about the unit
    /// can go here too).
    pub fn push_text(&mut self, time: WallTime, stream: Stream, text: &[u8], cut: bool) -> u64 {
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

    // ----- the writer's cursors -----------------------------------------

    /// The last line the log directory has (as the writer said).
    pub fn persisted(&self) -> u64 {
        self.persisted
    }

    /// Whether lines wait to be handed to the writer.
    pub fn has_unsent(&self) -> bool {
        self.next_seq - 1 > self.sent
    }

    /// Lines in memory that the log directory does not have yet.
    pub fn waiting(&self) -> u64 {
        let first = self.first_seq();
        (self.next_seq - 1).saturating_sub(self.persisted.max(first - 1))
    }

    /// Hands the writer the lines after the last one handed over, about
    /// `max_bytes` of them (text plus [`LINE_OVERHEAD`] each, at least one
    /// line), and counts them as sent.
    pub fn hand_over(&mut self, max_bytes: usize) -> Handover<'_> {
        let first = self.first_seq();
        let from = self.sent.saturating_add(1);
        let lost = first.saturating_sub(from);
        let skip = usize::try_from(from.saturating_sub(first))
            .unwrap_or(usize::MAX)
            .min(self.lines.len());
        let mut take = 0;
        let mut bytes = 0;
        for l in self.lines.range(skip..) {
            let cost = l.text.len() + LINE_OVERHEAD;
            if take > 0 && bytes + cost > max_bytes {
                break;
            }
            bytes += cost;
            take += 1;
        }
        if let Some(last) = self.lines.range(skip..skip + take).next_back() {
            self.sent = last.seq;
        }
        Handover {
            persisted: self.persisted,
            lost,
            lines: self.lines.range(skip..skip + take),
        }
    }

    /// The writer has the lines up to `seq` in the files.
    pub fn ack(&mut self, seq: u64) {
        self.persisted = self.persisted.max(seq.min(self.sent));
    }

    /// What was handed over and not acknowledged is to be handed over again
    /// (the writer went away, or could not write it).
    pub fn unsend(&mut self) {
        self.sent = self.persisted;
    }

    /// Marks the log as queued for the writer; `true` when it was not
    /// queued, not held, and has lines to hand over: the caller queues it.
    pub fn enqueue(&mut self) -> bool {
        let queue = !self.queued && !self.held && self.has_unsent();
        self.queued |= queue;
        queue
    }

    /// Marks the log as no longer queued.
    pub fn dequeue(&mut self) {
        self.queued = false;
    }

    /// Holds the log back from the writer (it could not write it), or lets
    /// it go again.
    pub fn set_held(&mut self, held: bool) {
        self.held = held;
    }

    /// Whether the log is held back from the writer.
    pub fn held(&self) -> bool {
        self.held
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
        let mut b = LogBuf::new(DEFAULT_RING_BYTES, 0);
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
        let mut b = LogBuf::new(3 * (2 + LINE_OVERHEAD), 0);
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
        let mut b = LogBuf::new(10, 0);
        push(&mut b, "a line longer than the whole ring");
        push(&mut b, "another");
        assert_eq!(texts(b.last(5)), ["another"]);
        assert_eq!(b.dropped(), 1);
    }

    proptest::proptest! {
        #[test]
        fn ring_stays_bounded(lens in proptest::collection::vec(0usize..300, 1..200), cap in 0usize..4000) {
            let mut b = LogBuf::new(cap, 0);
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
    fn hands_lines_over_and_counts_the_lost() {
        // Room for exactly 3 lines of 2 bytes.
        let mut b = LogBuf::new(3 * (2 + LINE_OVERHEAD), 7);
        assert_eq!(b.id(), 7);
        assert!(!b.has_unsent());
        assert!(!b.enqueue());
        push(&mut b, "01");
        push(&mut b, "02");
        assert!(b.enqueue());
        assert!(!b.enqueue(), "already queued");
        assert_eq!(b.waiting(), 2);
        // One line per hand-over at the smallest budget.
        let h = b.hand_over(1);
        assert_eq!((h.persisted, h.lost), (0, 0));
        assert_eq!(h.lines.map(|l| l.seq).collect::<Vec<_>>(), [1]);
        assert!(b.has_unsent());
        let h = b.hand_over(usize::MAX);
        assert_eq!(h.lines.map(|l| l.seq).collect::<Vec<_>>(), [2]);
        assert!(!b.has_unsent());
        b.ack(1);
        assert_eq!(b.persisted(), 1);
        assert_eq!(b.waiting(), 1);
        // The writer went away with line 2: handed over again.
        b.unsend();
        assert!(b.has_unsent());
        // Lines 3..6 push 1..3 out: 2 and 3 went before they were persisted.
        for i in 3..=6 {
            push(&mut b, &format!("{i:02}"));
        }
        let h = b.hand_over(usize::MAX);
        assert_eq!((h.persisted, h.lost), (1, 2));
        assert_eq!(h.lines.map(|l| l.seq).collect::<Vec<_>>(), [4, 5, 6]);
        // An acknowledgement never goes past what was handed over.
        b.ack(99);
        assert_eq!(b.persisted(), 6);
        assert_eq!(b.waiting(), 0);
        b.dequeue();
        b.set_held(true);
        push(&mut b, "07");
        assert!(!b.enqueue(), "held back");
        b.set_held(false);
        assert!(b.enqueue());
    }
}
