use super::*;
use flotilla_logd::format;

const S: &str = "1.0-1/3";

fn line(seq: u64) -> LogLine {
    LogLine {
        time: format!("2026-11-22T04:00:{:02}.000Z", seq % 60),
        stream: "stdout".into(),
        line: format!("line {seq}"),
        seq: Some(seq),
        cut: false,
    }
}

fn file_line(seq: u64) -> String {
    format!(
        "2026-11-22T04:00:{:02}.000Z {seq} stdout line {seq}\n",
        seq % 60
    )
}

/// A log directory with `web.log.1` (lines 1-4) and `web.log` (5-8), and
/// memory holding lines `first` to 10.
fn setup(first: u64) -> (tempfile::TempDir, LogSource, Vec<LogLine>) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let h = format::header("2026-11-22T04:00:00.000Z", S);
    let mut old = h.clone();
    let mut new = h;
    for n in 1..=4 {
        old.push_str(&file_line(n));
    }
    for n in 5..=8 {
        new.push_str(&file_line(n));
    }
    std::fs::write(dir.path().join("web.log.1"), old).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("web.log"), new).unwrap_or_else(|e| panic!("{e}"));
    let source = LogSource {
        dir: Some(dir.path().display().to_string()),
        stream: S.into(),
        persisted: 8,
        first,
        next: 11,
    };
    let memory = (first..=10).map(line).collect();
    (dir, source, memory)
}

fn ask(lines: Option<usize>, since: Option<Since>) -> Ask {
    Ask {
        unit: "web".into(),
        lines,
        since,
        follow: false,
        verbose: false,
    }
}

fn texts(lines: &[Line]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l.origin != Origin::Stream)
        .map(|l| l.text.clone())
        .collect()
}

fn numbered(range: std::ops::RangeInclusive<u64>) -> Vec<String> {
    range.map(|n| format!("line {n}")).collect()
}

#[test]
fn everything_files_then_memory_each_line_once() {
    let (_d, src, mem) = setup(7);
    let got = history(&ask(None, None), &src, mem, None);
    assert_eq!(texts(&got), numbered(1..=10));
    assert_eq!(got.last().map(|l| &l.origin), Some(&Origin::Memory));
    assert!(matches!(&got[1].origin, Origin::File(p) if p.ends_with("web.log.1")));
}

#[test]
fn n_reads_the_files_only_beyond_memory() {
    let (_d, src, mem) = setup(7);
    assert_eq!(
        texts(&history(&ask(Some(3), None), &src, mem.clone(), None)),
        numbered(8..=10)
    );
    assert_eq!(
        texts(&history(&ask(Some(6), None), &src, mem.clone(), None)),
        numbered(5..=10)
    );
    assert_eq!(
        texts(&history(&ask(Some(99), None), &src, mem.clone(), None)),
        numbered(1..=10)
    );
    assert!(history(&ask(Some(0), None), &src, mem, None).is_empty());
}

#[test]
fn since_goes_back_in_the_files_as_far_as_needed() {
    let (_d, src, mem) = setup(7);
    let at = parse_rfc3339("2026-11-22T04:00:03.000Z");
    let got = history(&ask(None, None), &src, mem, at);
    assert_eq!(texts(&got), numbered(3..=10));
}

#[test]
fn lines_in_neither_are_counted() {
    // Memory from 10: line 9 was never written (the files stop at 8).
    let (_d, src, mem) = setup(10);
    let got = history(&ask(None, None), &src, mem, None);
    let mut want = numbered(1..=8);
    want.push("-- 1 line dropped --".into());
    want.push("line 10".into());
    assert_eq!(texts(&got), want);
    assert_eq!(got[got.len() - 2].origin, Origin::Gap);
}

#[test]
fn without_a_log_directory_memory_is_all() {
    let (_d, mut src, mem) = setup(7);
    src.dir = None;
    let got = history(&ask(None, None), &src, mem, None);
    let mut want = vec!["-- 6 lines dropped --".to_string()];
    want.extend(numbered(7..=10));
    assert_eq!(texts(&got), want);
}
