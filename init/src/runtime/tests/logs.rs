//! The log writer's channel and the output rate limit, on the fake: the
//! loop hands lines over, one batch in flight, without a single file
//! call; what a writer did not acknowledge goes to the next; what the
//! ring could not keep is counted; units that could not be written are
//! held back until the writer retries; a flood past the rate limit is
//! dropped, counted and read at most once per throttle period.

use super::*;
use crate::ratelimit::THROTTLE;
use crate::sys::fake::Call;
use flotilla_units::protocol::{LogAck, LogBatch, LogFailure};

const LOGS: &str = "/var/log/init";

fn with_logs(target: &str) -> Settings {
    let mut s = settings(target);
    s.log_dir = Some(PathBuf::from(LOGS));
    s
}

const TALKER: &str = "unit: talker\nexec-start: /bin/talk\n";

fn pull(ack: Option<(u64, Vec<LogFailure>)>, retry: bool) -> Request {
    Request::LogPull {
        ack: ack.map(|(batch, failed)| LogAck { batch, failed }),
        retry,
        max_bytes: None,
        leaving: false,
    }
}

/// A unit providing `log-writer` that nothing starts: these tests' writer
/// is the test's own connection, so the init runs no writer of its own.
const IDLE_WRITER: &str = "unit: idle-writer\nprovides: log-writer\nexec-start: /bin/w\n";

impl Harness {
    fn start_logging(sys: FakeSys, target: &str) -> Harness {
        sys.set_file(format!("{UNITS}/idle-writer.yaml"), IDLE_WRITER);
        let rt = Runtime::new(sys, with_logs(target), false).unwrap_or_else(|e| panic!("{e}"));
        let mut h = Harness { rt };
        h.settle();
        h
    }

    /// Turns until the writer `c` has a batch; `None` if the loop went idle
    /// without sending one.
    fn batch(&mut self, c: &mut Client) -> Option<LogBatch> {
        for _ in 0..MAX_TURNS {
            self.turn();
            if let Some(r) = c.replies().into_iter().next() {
                match r {
                    Reply::LogBatch(b) => return Some(b),
                    other => panic!("writer got {other:?}"),
                }
            }
            if self.sys().idle() {
                return None;
            }
        }
        panic!("the loop never went idle");
    }

    /// A unit's lines, as `initctl logs` gets them.
    fn log_texts(&mut self, unit: &str) -> Vec<String> {
        self.request(Request::Logs {
            unit: unit.into(),
            lines: None,
            follow: false,
            source: false,
        })
        .into_iter()
        .filter_map(|r| match r {
            Reply::Log(l) => Some(l.line),
            _ => None,
        })
        .collect()
    }
}

/// The texts of a batch's chunk for `unit` and their numbers.
fn chunk_of(b: &LogBatch, unit: &str) -> (Vec<String>, Vec<u64>, u64, u64) {
    let c = b
        .chunks
        .iter()
        .find(|c| c.unit == unit)
        .unwrap_or_else(|| panic!("no chunk for {unit} in {b:?}"));
    (
        c.lines.iter().map(|l| l.line.clone()).collect(),
        c.lines.iter().filter_map(|l| l.seq).collect(),
        c.persisted,
        c.lost,
    )
}

/// `console-output: all`: each line is also on standard output, with
/// its unit's name, and still in the unit's log; a full standard output
/// drops and counts without holding the loop (no wait in the turns).
#[test]
fn console_output_copies_the_lines_to_stdout() {
    let sys = fake_with(&[("talker", TALKER)]);
    let mut s = settings("talker");
    s.console_output = true;
    let rt = Runtime::new(sys, s, false).unwrap_or_else(|e| panic!("{e}"));
    let mut h = Harness { rt };
    h.settle();
    let pid = h.pid("talker");
    h.sys().write_output(pid, b"one\ntwo\n");
    h.settle();
    assert_eq!(h.sys().take_stdout(), "talker: one\ntalker: two\n");
    h.sys().set_stdout_room(0);
    h.sys().write_output(pid, b"three\n");
    h.settle();
    assert_eq!(h.sys().take_stdout(), "");
    h.sys().set_stdout_room(usize::MAX);
    h.sys().write_output(pid, b"four\n");
    h.settle();
    assert_eq!(
        h.sys().take_stdout(),
        "init: console-output: 1 lines dropped: standard output was full\ntalker: four\n"
    );
    let logged: Vec<String> = h
        .log_texts("talker")
        .into_iter()
        .filter(|l| !l.starts_with('['))
        .collect();
    assert_eq!(logged, ["one", "two", "three", "four"]);
}

/// Every line goes to the writer once, in order, numbered; the next
/// batch waits for the ack; the loop makes no file call for it.
#[test]
fn lines_go_to_the_writer_one_batch_at_a_time() {
    let sys = fake_with(&[("talker", TALKER)]);
    let mut h = Harness::start_logging(sys, "talker");
    let pid = h.pid("talker");
    h.sys().write_output(pid, b"one\ntwo\n");
    h.settle();
    let mut w = h.connect();
    w.send(&pull(None, false));
    let b = h.batch(&mut w).unwrap_or_else(|| panic!("a batch"));
    assert_eq!(b.dir, LOGS);
    let (texts, seqs, persisted, lost) = chunk_of(&b, "talker");
    assert_eq!(texts, ["[init] running: running", "one", "two"]);
    assert_eq!(seqs, [1, 2, 3]);
    assert_eq!((persisted, lost), (0, 0));
    let stream = b.chunks[0].stream.clone();
    assert!(stream.starts_with("1795320000.000000000-4242/"), "{stream}");
    // More lines while the batch is in flight: nothing until the ack.
    h.sys().write_output(pid, b"three\n");
    assert!(h.batch(&mut w).is_none());
    w.send(&pull(Some((b.batch, Vec::new())), false));
    let b2 = h.batch(&mut w).unwrap_or_else(|| panic!("the next batch"));
    let (texts, seqs, persisted, _) = chunk_of(&b2, "talker");
    assert_eq!(
        (texts, seqs, persisted),
        (vec!["three".to_string()], vec![4], 3)
    );
    assert_eq!(b2.chunks[0].stream, stream);
    w.send(&pull(Some((b2.batch, Vec::new())), false));
    assert!(h.batch(&mut w).is_none(), "nothing more");
    let st = h.request(Request::Status { name: None });
    let Some(Reply::Status(s)) = st.first() else {
        panic!("{st:?}")
    };
    let lw = s
        .log_writer
        .clone()
        .unwrap_or_else(|| panic!("a log directory"));
    assert_eq!(lw.dir, LOGS);
    assert!(lw.connected);
    assert_eq!((lw.waiting, lw.lost, lw.error), (0, 0, None));
    // Not one file call on the log directory's behalf, ever.
    for c in h.sys().calls() {
        assert!(!format!("{c:?}").contains(LOGS), "{c:?}");
    }
}

/// A writer that goes away with a batch it did not acknowledge: the next
/// one gets those lines again; a second writer meanwhile is refused.
#[test]
fn what_a_writer_did_not_acknowledge_goes_to_the_next() {
    let sys = fake_with(&[("talker", TALKER)]);
    let mut h = Harness::start_logging(sys, "talker");
    let pid = h.pid("talker");
    h.sys().write_output(pid, b"one\n");
    let mut w = h.connect();
    w.send(&pull(None, false));
    let b = h.batch(&mut w).unwrap_or_else(|| panic!("a batch"));
    assert_eq!(chunk_of(&b, "talker").1, [1, 2]);
    let refused = h.request(pull(None, false));
    assert!(
        matches!(&refused[..], [Reply::Error { message, .. }] if message.contains("another log writer")),
        "{refused:?}"
    );
    drop(w);
    h.sys().write_output(pid, b"two\n");
    h.settle();
    let mut w2 = h.connect();
    w2.send(&pull(None, false));
    let b = h.batch(&mut w2).unwrap_or_else(|| panic!("a batch"));
    let (texts, seqs, persisted, _) = chunk_of(&b, "talker");
    assert_eq!(seqs, [1, 2, 3]);
    assert_eq!(texts[1..], ["one".to_string(), "two".to_string()]);
    assert_eq!(persisted, 0);
    // A stale ack changes nothing.
    w2.send(&pull(Some((b.batch + 100, Vec::new())), false));
    assert!(h.batch(&mut w2).is_none());
}

/// A writer killed just after its pull: the pull and the end of the
/// connection come in one turn, and a client connecting in that turn takes
/// the writer's slot. The pull is the dead writer's: the client becomes
/// no writer and gets no batch, only the reply to its own request; the
/// next writer gets the lines.
#[test]
fn a_pull_from_a_writer_gone_in_the_same_turn_reaches_no_other_client() {
    let sys = fake_with(&[("talker", TALKER)]);
    let mut h = Harness::start_logging(sys, "talker");
    let pid = h.pid("talker");
    h.sys().write_output(pid, b"one\n");
    let mut w = h.connect();
    w.send(&pull(None, false));
    let b = h.batch(&mut w).unwrap_or_else(|| panic!("a batch"));
    h.sys().write_output(pid, b"two\n");
    // Its ack, then gone: data and end of file wait together, before the
    // client's connection.
    w.send(&pull(Some((b.batch, Vec::new())), false));
    drop(w);
    let mut c = h.connect();
    h.turn();
    c.send(&Request::Status { name: None });
    let got = h.replies_until_final(&mut c);
    let [Reply::Status(s)] = &got[..] else {
        let heads: Vec<String> = got
            .iter()
            .map(|r| format!("{r:?}").chars().take(80).collect())
            .collect();
        panic!("the client got what it did not ask for: {heads:?}")
    };
    let lw = s
        .log_writer
        .clone()
        .unwrap_or_else(|| panic!("a log directory"));
    assert!(!lw.connected && lw.waiting > 0, "{lw:?}");
    drop(c);
    let mut w2 = h.connect();
    w2.send(&pull(None, false));
    let b = h.batch(&mut w2).unwrap_or_else(|| panic!("a batch"));
    assert!(chunk_of(&b, "talker")
        .0
        .ends_with(&["one".into(), "two".into()]));
}

/// Lines the ring could not keep before a writer came are counted in
/// the unit's chunk, and in `status` once acknowledged.
#[test]
fn lines_the_ring_lost_are_counted() {
    let sys = fake_with(&[("talker", TALKER)]);
    let mut h = Harness::start_logging(sys, "talker");
    let pid = h.pid("talker");
    // About 1,300 lines of 60 bytes: more than the 64 KiB ring holds
    // (and fewer than the rate limit lets through).
    let line = [b'x'; 59];
    let mut out = Vec::new();
    for _ in 0..1300 {
        out.extend_from_slice(&line);
        out.push(b'\n');
    }
    assert_eq!(h.sys().write_output(pid, &out), out.len());
    h.settle();
    let mut w = h.connect();
    w.send(&pull(None, false));
    let b = h.batch(&mut w).unwrap_or_else(|| panic!("a batch"));
    let (_, seqs, _, lost) = chunk_of(&b, "talker");
    assert!(lost > 0);
    assert_eq!(
        seqs[0],
        lost + 1,
        "the first line kept follows the lost ones"
    );
    w.send(&pull(Some((b.batch, Vec::new())), false));
    let mut last = *seqs.last().unwrap();
    // The rest of the ring, in batches of the writer's size.
    while let Some(b) = h.batch(&mut w) {
        let (_, seqs, _, lost) = chunk_of(&b, "talker");
        assert_eq!((seqs[0], lost), (last + 1, 0));
        last = *seqs.last().unwrap();
        w.send(&pull(Some((b.batch, Vec::new())), false));
    }
    assert_eq!(last, 1301);
    let st = h.request(Request::Status { name: None });
    let Some(Reply::Status(s)) = st.first() else {
        panic!("{st:?}")
    };
    assert_eq!(s.log_writer.as_ref().map(|l| l.lost), Some(lost));
}

/// A unit the writer could not write is held back (status says why)
/// until the writer retries; the others go on meanwhile.
#[test]
fn a_unit_that_could_not_be_written_waits_for_a_retry() {
    let other = "unit: other\nexec-start: /bin/other\n";
    let both = "unit: both\ntype: virtual\ndepends-on: [talker, other]\n";
    let sys = fake_with(&[("talker", TALKER), ("other", other), ("both", both)]);
    let mut h = Harness::start_logging(sys, "both");
    let mut w = h.connect();
    w.send(&pull(None, false));
    let b = h.batch(&mut w).unwrap_or_else(|| panic!("a batch"));
    assert_eq!(b.chunks.len(), 2);
    let failed = vec![LogFailure {
        unit: "talker".into(),
        error: "open /var/log/init/talker.log: read-only file system".into(),
    }];
    w.send(&pull(Some((b.batch, failed)), false));
    h.settle();
    let st = h.request(Request::Status { name: None });
    let Some(Reply::Status(s)) = st.first() else {
        panic!("{st:?}")
    };
    let lw = s.log_writer.clone().unwrap();
    assert_eq!(
        lw.error.as_deref(),
        Some("talker: open /var/log/init/talker.log: read-only file system")
    );
    assert_eq!(lw.waiting, 1);
    // New lines of both: only `other` goes.
    let (tp, op) = (h.pid("talker"), h.pid("other"));
    h.sys().write_output(tp, b"t\n");
    h.sys().write_output(op, b"o\n");
    let b = h.batch(&mut w).unwrap_or_else(|| panic!("a batch"));
    assert_eq!(b.chunks.len(), 1);
    assert_eq!(chunk_of(&b, "other").0, ["o"]);
    w.send(&pull(Some((b.batch, Vec::new())), false));
    assert!(h.batch(&mut w).is_none());
    // The retry: talker's lines from where the files have them.
    w.send(&pull(None, true));
    let b = h.batch(&mut w).unwrap_or_else(|| panic!("a batch"));
    let (texts, seqs, persisted, _) = chunk_of(&b, "talker");
    assert_eq!(seqs, [1, 2]);
    assert_eq!(texts[1], "t");
    assert_eq!(persisted, 0);
    w.send(&pull(Some((b.batch, Vec::new())), false));
    h.settle();
    let st = h.request(Request::Status { name: None });
    let Some(Reply::Status(s)) = st.first() else {
        panic!("{st:?}")
    };
    assert_eq!(s.log_writer.clone().unwrap().error, None, "writing again");
}

/// Without a log directory there is no writer to be.
#[test]
fn no_log_directory_no_writer() {
    let sys = fake_with(&[("talker", TALKER)]);
    let mut h = Harness::start(sys, "talker");
    let r = h.request(pull(None, false));
    assert!(
        matches!(&r[..], [Reply::Error { message, .. }] if message.contains("no log directory")),
        "{r:?}"
    );
}

/// A unit printing as fast as it can: past its limit (10,000 lines in
/// 30 s) the lines are dropped and counted in its log, and its pipe is
/// read once per throttle period, not at once again.
#[test]
fn a_flood_past_the_rate_limit() {
    let flood = "unit: flood\nexec-start: /bin/yes\n";
    let sys = fake_with(&[("flood", flood)]);
    let mut h = Harness::start(sys, "flood");
    let pid = h.pid("flood");
    // 12,000 short lines, written as the pipe takes them.
    let mut left = 12_000;
    while left > 0 {
        let chunk = "y\n".repeat(left.min(8000));
        left -= h.sys().write_output(pid, chunk.as_bytes()) / 2;
        h.turn();
    }
    h.settle();
    let next =
        h.rt.planner
            .graph()
            .unit("flood")
            .and_then(|id| h.rt.slots.io(id));
    assert_eq!(
        next.map(|io| io.log.next_seq()),
        Some(10_002),
        "10,000 and a note kept"
    );
    // Over the limit: more output is read only when the throttle period
    // has passed (the loop waits for it), and dropped.
    h.sys().take_calls();
    h.sys().write_output(pid, "y\n".repeat(100).as_bytes());
    h.settle();
    let w = waits(&h.sys().take_calls());
    assert!(
        w.iter()
            .any(|t| t.is_some_and(|d| d > Duration::ZERO && d <= THROTTLE)),
        "the pipe waits for the throttle: {w:?}"
    );
    let next =
        h.rt.planner
            .graph()
            .unit("flood")
            .and_then(|id| h.rt.slots.io(id));
    assert_eq!(next.map(|io| io.log.next_seq()), Some(10_002), "dropped");
    // The window ends: the count comes with the next line.
    h.sys().advance(Duration::from_secs(31));
    h.sys().write_output(pid, b"after\n");
    h.settle();
    let texts = h.log_texts("flood");
    // The count, then the line: 12,100 written, 10,000 kept.
    let note = texts
        .iter()
        .find(|t| t.starts_with("-- rate limit: "))
        .unwrap_or_else(|| panic!("no note in {:?}", &texts[texts.len() - 3..]));
    assert_eq!(
        note,
        "-- rate limit: 2100 lines dropped (more than 10000 in 30s) --"
    );
    assert_eq!(texts.last().map(String::as_str), Some("after"));
    // No file was touched for it either.
    assert!(!h
        .sys()
        .calls()
        .iter()
        .any(|c| matches!(c, Call::CreateDir(_))));
}

/// With a log directory and no unit providing `log-writer`, the init runs
/// its own, `flotilla-logd`, whatever the target.
#[test]
fn the_log_dir_alone_runs_the_inits_own_writer() {
    let sys = fake_with(&[("talker", TALKER)]);
    let rt = Runtime::new(sys, with_logs("talker"), false).unwrap_or_else(|e| panic!("{e}"));
    let mut h = Harness { rt };
    h.settle();
    assert_eq!(h.state("flotilla-logd"), UnitState::Running);
    let argv: Vec<Vec<String>> = h.sys().spawns().into_iter().map(|s| s.argv).collect();
    assert!(
        argv.contains(&vec![
            "flotilla-logd".to_string(),
            "--control".to_string(),
            CONTROL.to_string()
        ]),
        "{argv:?}"
    );
}

/// A writer told to stop during a shutdown gets the other units' last
/// lines: nothing says `last` while they stop. (This writer is no unit:
/// once the others have stopped the loop ends, and the writer sees the
/// connection close; `last` for a writer that is a unit is in the system
/// tests.)
#[test]
fn a_leaving_writer_gets_the_last_lines_of_a_shutdown() {
    let sys = fake_with(&[("talker", TALKER)]);
    let mut h = Harness::start_logging(sys, "talker");
    let mut w = h.connect();
    w.send(&pull(None, false));
    let b = h.batch(&mut w).unwrap_or_else(|| panic!("a batch"));
    w.send(&pull(Some((b.batch, Vec::new())), false));
    assert!(h.batch(&mut w).is_none());
    // The clock stays: talker takes its time to stop, within its timeout.
    h.sys().hold_clock(true);
    h.sys().raise(libc::SIGTERM);
    let b = h
        .batch(&mut w)
        .unwrap_or_else(|| panic!("the stopping note"));
    assert_eq!(chunk_of(&b, "talker").0, ["[init] stopping: shutting down"]);
    w.send(&Request::LogPull {
        ack: Some(LogAck {
            batch: b.batch,
            failed: Vec::new(),
        }),
        retry: false,
        max_bytes: None,
        leaving: true,
    });
    assert!(h.batch(&mut w).is_none(), "talker still stops");
    h.exit("talker", ExitStatus::Exited(0));
    let mut exit = None;
    for _ in 0..100 {
        exit = h.turn();
        if exit.is_some() {
            break;
        }
    }
    assert!(exit.is_some());
    let got = w.replies();
    let Some(Reply::LogBatch(b)) = got.first() else {
        panic!("{got:?}")
    };
    assert!(!b.last);
    assert_eq!(chunk_of(b, "talker").0, ["[init] disabled: stopped"]);
}
