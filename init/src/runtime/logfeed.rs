//! The log writer's channel: how the units' lines get from the rings in
//! memory to the log directory without the loop ever touching a file.
//!
//! The writer (`flotilla-logd`, an ordinary unit) connects to the control
//! socket and sends `log-pull` requests; the init answers each with a
//! `log-batch` once it has lines the writer has not had: one chunk per
//! unit, each line with its sequence number. The writer appends them to
//! `<log-dir>/<unit>.log`, then acknowledges the batch in its next pull,
//! naming the units it could not write. So:
//!
//! - **one batch in flight**: the next goes out only after the ack, so
//!   what the init holds for the writer's connection is bounded by one
//!   batch, and a writer that is stopped, slow or blocked on its disk costs
//!   the loop nothing;
//! - **nothing lost on the way**: a unit's `persisted` cursor moves only on
//!   an ack; when the writer goes away, what it had and did not
//!   acknowledge is handed to the next one (which finds in the files what
//!   it may already have written: see `logd/`);
//! - **what the ring cannot keep** is counted as lost in the unit's next
//!   chunk, and the writer writes the count into the file;
//! - **a unit it cannot write** (a full or read-only directory) is held
//!   back until the writer asks again with `retry` (after its back-off),
//!   and `initctl status` says why;
//! - **a writer that is stopping** (`leaving`) gets what there is, then a
//!   batch marked `last` once nothing more is to come: at once, or during
//!   a shutdown once every other unit has stopped, so that the last lines
//!   of the system reach the files although the writer, on which no unit
//!   depends, is told to stop with the first.
//!
//! Units with lines to hand over wait in a queue, once each; a batch takes
//! them in turn, up to the writer's size, so one noisy unit cannot keep
//! the others out. The work per turn is O(units with new lines).

use super::reports::has_processes;
use super::slots::SlotId;
use super::Runtime;
use crate::control::{ConnId, Watch};
use crate::logbuf::LINE_OVERHEAD;
use crate::sys::{Sys, WallTime};
use flotilla_units::protocol::{
    ErrorCode, LogAck, LogBatch, LogChunk, LogLine, LogWriterStatus, Reply,
};
use std::collections::VecDeque;

/// A batch's size when the writer does not say.
const DEFAULT_BATCH: usize = 256 * 1024;
/// The largest batch, whatever the writer asks for.
const MAX_BATCH: usize = 1 << 20;
/// The smallest.
const MIN_BATCH: usize = 4 * 1024;

/// The channel's state. See the module documentation.
pub(super) struct LogFeed {
    /// This init's name in the stream names: its start time and PID.
    instance: String,
    /// The number of the next log made.
    next_id: u32,
    writer: Option<Writer>,
    /// Units whose lines wait to be handed over.
    queue: VecDeque<SlotId>,
    /// Units held back after a failed write.
    held: Vec<SlotId>,
    next_batch: u64,
    /// Lines that went from memory before they were written.
    lost: u64,
    /// Why the writer could not write, until it writes again.
    error: Option<String>,
    /// The last time stamp written into a batch, by second and
    /// millisecond: the lines of a burst share it, and format it once.
    stamp: (i64, u32, String),
}

struct Writer {
    conn: ConnId,
    /// The connection's serial number: the slot may be reused once it
    /// closes.
    serial: u64,
    pid: i32,
    /// A pull waits for lines.
    parked: bool,
    /// The writer is stopping.
    leaving: bool,
    max_bytes: usize,
    in_flight: Option<InFlight>,
}

/// The batch the writer has not acknowledged.
struct InFlight {
    batch: u64,
    /// Per chunk: the unit's slot, its log's id, the last line handed
    /// over, the lines counted lost in it.
    logs: Vec<(SlotId, u32, u64, u64)>,
}

impl LogFeed {
    /// A channel for the init started at `instance`.
    pub fn new(instance: String) -> LogFeed {
        LogFeed {
            instance,
            next_id: 0,
            writer: None,
            queue: VecDeque::new(),
            held: Vec::new(),
            next_batch: 1,
            lost: 0,
            error: None,
            stamp: (i64::MIN, 0, String::new()),
        }
    }

    /// `time` in RFC 3339, formatted once per millisecond.
    fn stamp(&mut self, time: WallTime) -> String {
        let millis = time.nanos / 1_000_000;
        if (self.stamp.0, self.stamp.1) != (time.secs, millis) {
            self.stamp = (time.secs, millis, time.rfc3339());
        }
        self.stamp.2.clone()
    }

    /// The channel of an init carried across a re-exec: the same
    /// instance (the writer appends to the same streams), logs numbered on.
    pub fn resume(instance: String, next_id: u32) -> LogFeed {
        let mut feed = LogFeed::new(instance);
        feed.next_id = next_id;
        feed
    }

    /// The instance name and the number of the next log.
    pub fn carry(&self) -> (&str, u32) {
        (&self.instance, self.next_id)
    }

    /// The id of a new log.
    pub fn new_log_id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        id
    }

    /// The name of log `id`'s stream.
    pub fn stream(&self, id: u32) -> String {
        format!("{}/{id}", self.instance)
    }

    /// Queues a unit whose log said it has lines to hand over.
    pub fn queue(&mut self, slot: SlotId) {
        self.queue.push_back(slot);
    }
}

impl<S: Sys> Runtime<S> {
    /// Queues `slot`'s log for the writer if it has new lines (and the init
    /// has a log directory).
    pub(super) fn queue_log(&mut self, slot: SlotId) {
        if self.settings.log_dir.is_none() {
            return;
        }
        let queue = self
            .slots
            .slot_mut(slot)
            .and_then(|s| s.io.as_deref_mut())
            .is_some_and(|io| io.log.enqueue());
        if queue {
            self.feed.queue(slot);
        }
    }

    /// `log-pull`: the connection is (or becomes) the writer; its ack is
    /// applied; the next batch goes out at the end of the turn.
    pub(super) fn log_pull(
        &mut self,
        c: ConnId,
        ack: Option<LogAck>,
        retry: bool,
        max_bytes: Option<usize>,
        leaving: bool,
    ) {
        if self.settings.log_dir.is_none() {
            self.reply(
                c,
                Reply::error(
                    ErrorCode::NotPossible,
                    "this init has no log directory (--log-dir, config log-dir)",
                ),
            );
            return;
        }
        let Some((serial, pid)) = self.control.conn(c).map(|x| (x.serial, x.pid)) else {
            return;
        };
        self.check_writer();
        match &self.feed.writer {
            Some(w) if (w.conn, w.serial) != (c, serial) => {
                let message = format!("another log writer (PID {}) is connected", w.pid);
                self.reply(c, Reply::error(ErrorCode::NotPossible, message));
                return;
            }
            Some(_) => {}
            None => {
                self.feed.writer = Some(Writer {
                    conn: c,
                    serial,
                    pid,
                    parked: false,
                    leaving: false,
                    max_bytes: DEFAULT_BATCH,
                    in_flight: None,
                });
                if let Some(conn) = self.control.conn_mut(c) {
                    conn.watch = Watch::LogWriter;
                }
            }
        }
        if let Some(ack) = ack {
            self.apply_ack(ack);
        }
        if retry {
            for slot in std::mem::take(&mut self.feed.held) {
                if let Some(io) = self.slots.slot_mut(slot).and_then(|s| s.io.as_deref_mut()) {
                    io.log.set_held(false);
                }
                self.queue_log(slot);
            }
        }
        if let Some(w) = self.feed.writer.as_mut() {
            w.parked = true;
            w.leaving |= leaving;
            w.max_bytes = max_bytes
                .unwrap_or(DEFAULT_BATCH)
                .clamp(MIN_BATCH, MAX_BATCH);
        }
    }

    /// Applies the writer's ack of the batch in flight (an ack of any
    /// other batch is stale and ignored).
    fn apply_ack(&mut self, ack: LogAck) {
        let Some(w) = self.feed.writer.as_mut() else {
            return;
        };
        let Some(inf) = w.in_flight.take_if(|f| f.batch == ack.batch) else {
            return;
        };
        let mut first_error = None;
        for (slot, id, seq, lost) in inf.logs {
            let Some(s) = self.slots.slot_mut(slot) else {
                continue;
            };
            let name = self
                .planner
                .graph()
                .get(s.unit)
                .map(|n| n.spec.name.as_str())
                .unwrap_or_default();
            let Some(io) = s.io.as_deref_mut().filter(|io| io.log.id() == id) else {
                continue;
            };
            match ack.failed.iter().find(|f| f.unit == name) {
                Some(f) => {
                    io.log.unsend();
                    if !io.log.held() {
                        io.log.set_held(true);
                        self.feed.held.push(slot);
                    }
                    first_error.get_or_insert_with(|| format!("{}: {}", f.unit, f.error));
                }
                None => {
                    io.log.ack(seq);
                    self.feed.lost = self.feed.lost.saturating_add(lost);
                }
            }
        }
        match first_error {
            Some(e) => self.feed.error = Some(e),
            None if self.feed.held.is_empty() => self.feed.error = None,
            None => {}
        }
    }

    /// Forgets a writer whose connection closed: what it had and did not
    /// acknowledge goes to the next one.
    fn check_writer(&mut self) {
        let gone = self
            .feed
            .writer
            .as_ref()
            .is_some_and(|w| !self.control.is_open(w.conn, w.serial));
        if !gone {
            return;
        }
        let logs = self
            .feed
            .writer
            .take()
            .and_then(|w| w.in_flight)
            .map(|f| f.logs)
            .unwrap_or_default();
        for (slot, id, _, _) in logs {
            if let Some(io) = self.slots.slot_mut(slot).and_then(|s| s.io.as_deref_mut()) {
                if io.log.id() == id {
                    io.log.unsend();
                }
            }
            self.queue_log(slot);
        }
        // A new writer gets its own chance at the held units.
        for slot in std::mem::take(&mut self.feed.held) {
            if let Some(io) = self.slots.slot_mut(slot).and_then(|s| s.io.as_deref_mut()) {
                io.log.set_held(false);
            }
            self.queue_log(slot);
        }
    }

    /// At the end of a turn: sends the writer its next batch if it waits
    /// for one and there are lines.
    pub(super) fn feed_writer(&mut self) {
        if self.feed.writer.is_none() {
            return;
        }
        self.check_writer();
        let Some(w) = self.feed.writer.as_ref() else {
            return;
        };
        if !w.parked || w.in_flight.is_some() {
            return;
        }
        let (conn, mut budget) = (w.conn, w.max_bytes);
        if self.feed.queue.is_empty() {
            if w.leaving && self.nothing_more_to_log(w.pid) {
                self.send_batch(conn, Vec::new(), Vec::new(), true);
            }
            return;
        }
        let mut chunks = Vec::new();
        let mut logs = Vec::new();
        for _ in 0..self.feed.queue.len() {
            if budget == 0 {
                break;
            }
            let Some(slot) = self.feed.queue.pop_front() else {
                break;
            };
            let Some(s) = self.slots.slot_mut(slot) else {
                continue;
            };
            let Some(io) = s.io.as_deref_mut() else {
                continue;
            };
            if io.log.held() || !io.log.has_unsent() {
                io.log.dequeue();
                continue;
            }
            let id = io.log.id();
            let h = io.log.hand_over(budget);
            let (persisted, lost) = (h.persisted, h.lost);
            let mut lines = Vec::new();
            for l in h.lines {
                budget = budget.saturating_sub(l.text.len() + LINE_OVERHEAD);
                lines.push(LogLine {
                    time: self.feed.stamp(l.time),
                    stream: l.stream.as_str().to_string(),
                    line: l.text.to_string(),
                    seq: Some(l.seq),
                    cut: l.cut,
                });
            }
            let last = lines.last().and_then(|l| l.seq).unwrap_or(persisted);
            if io.log.has_unsent() {
                self.feed.queue.push_back(slot);
            } else {
                io.log.dequeue();
            }
            let unit = self
                .planner
                .graph()
                .get(s.unit)
                .map(|n| n.spec.name.clone())
                .unwrap_or_default();
            chunks.push(LogChunk {
                unit,
                stream: self.feed.stream(id),
                persisted,
                lost,
                lines,
            });
            logs.push((slot, id, last, lost));
        }
        if !chunks.is_empty() {
            self.send_batch(conn, chunks, logs, false);
        }
    }

    fn send_batch(
        &mut self,
        conn: ConnId,
        chunks: Vec<LogChunk>,
        logs: Vec<(SlotId, u32, u64, u64)>,
        last: bool,
    ) {
        let batch = self.feed.next_batch;
        self.feed.next_batch += 1;
        if let Some(w) = self.feed.writer.as_mut() {
            w.parked = false;
            w.in_flight = Some(InFlight { batch, logs });
        }
        let dir = self
            .settings
            .log_dir
            .as_deref()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        let reply = Reply::LogBatch(LogBatch {
            batch,
            dir,
            chunks,
            last,
        });
        self.control.send(conn, &reply, &self.sys);
    }

    /// Whether a leaving writer may go: not in a shutdown, or every unit
    /// but the writer's own has stopped.
    fn nothing_more_to_log(&self, writer_pid: i32) -> bool {
        if self.shutdown.is_none() {
            return true;
        }
        let own = self.planner.owner(writer_pid).map(|(u, _)| u);
        let g = self.planner.graph();
        g.ids()
            .filter(|&i| Some(i) != own)
            .all(|i| !has_processes(self.planner.state(i)))
    }

    /// The log directory and its writer, for `status`.
    pub(super) fn log_writer_status(&self) -> Option<LogWriterStatus> {
        let dir = self.settings.log_dir.as_ref()?;
        let writer = self
            .feed
            .writer
            .as_ref()
            .filter(|w| self.control.is_open(w.conn, w.serial));
        let pid = writer.map(|w| w.pid).filter(|&p| p > 0);
        let waiting = self
            .slots
            .all()
            .filter_map(|s| s.io.as_deref())
            .map(|io| io.log.waiting())
            .sum();
        Some(LogWriterStatus {
            dir: dir.display().to_string(),
            connected: writer.is_some(),
            pid,
            unit: pid
                .and_then(|p| self.planner.owner(p))
                .map(|(u, _)| self.unit_name(u)),
            waiting,
            lost: self.feed.lost,
            error: self.feed.error.clone(),
        })
    }
}
