use super::*;
use flotilla_units::protocol::LogLine;

const S: &str = "1795320000.000000000-1/0";

fn line(seq: u64, text: &str) -> LogLine {
    LogLine {
        time: format!("2026-11-22T04:00:{:02}.000Z", seq % 60),
        stream: "stdout".into(),
        line: text.into(),
        seq: Some(seq),
        cut: false,
    }
}

fn chunk(unit: &str, stream: &str, persisted: u64, lost: u64, seqs: &[u64]) -> LogChunk {
    LogChunk {
        unit: unit.into(),
        stream: stream.into(),
        persisted,
        lost,
        lines: seqs
            .iter()
            .map(|&n| line(n, &format!("line {n}")))
            .collect(),
    }
}

/// Every line of the file, parsed to (seq or "-", text).
fn read(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| match format::parse(l) {
            FileLine::Entry(e) => format!("{} {}", e.seq.unwrap_or(0), e.text),
            FileLine::Header { stream, .. } => format!("header {stream}"),
            FileLine::Other(o) => format!("other {o}"),
        })
        .collect()
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_stream_begins_with_its_header_and_each_line_is_written_once() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let mut st = Store::new(Rotation::default());
    st.write_chunk(&logs, &chunk("web", S, 0, 0, &[1, 2]))
        .unwrap();
    // Handed over again (the ack was lost), with more.
    st.write_chunk(&logs, &chunk("web", S, 0, 0, &[1, 2, 3]))
        .unwrap();
    assert_eq!(
        read(&logs.join("web.log")),
        strings(&[&format!("header {S}"), "1 line 1", "2 line 2", "3 line 3"])
    );
}

#[test]
fn a_new_writer_finds_what_the_last_one_wrote_and_did_not_acknowledge() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Store::new(Rotation::default());
    st.write_chunk(dir.path(), &chunk("web", S, 0, 0, &[1, 2, 3, 4, 5]))
        .unwrap();
    // A new writer: the init knows of 3 only.
    let mut st = Store::new(Rotation::default());
    st.write_chunk(dir.path(), &chunk("web", S, 3, 0, &[4, 5, 6, 7]))
        .unwrap();
    let got = read(&dir.path().join("web.log"));
    assert_eq!(got.len(), 8, "{got:?}");
    assert_eq!(got[5..], strings(&["5 line 5", "6 line 6", "7 line 7"]));
    // And the first chunk of a stream, written and not acknowledged.
    let mut st = Store::new(Rotation::default());
    st.write_chunk(dir.path(), &chunk("db", S, 0, 0, &[1, 2]))
        .unwrap();
    let mut st = Store::new(Rotation::default());
    st.write_chunk(dir.path(), &chunk("db", S, 0, 0, &[1, 2, 3]))
        .unwrap();
    assert_eq!(
        read(&dir.path().join("db.log")),
        strings(&[&format!("header {S}"), "1 line 1", "2 line 2", "3 line 3"])
    );
}

#[test]
fn a_line_cut_short_is_written_again_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("web.log");
    let mut st = Store::new(Rotation::default());
    st.write_chunk(dir.path(), &chunk("web", S, 0, 0, &[1]))
        .unwrap();
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b"2026-11-22T04:00:02.000Z 2 stdout li")
        .unwrap();
    let mut st = Store::new(Rotation::default());
    st.write_chunk(dir.path(), &chunk("web", S, 1, 0, &[2]))
        .unwrap();
    assert_eq!(
        read(&path),
        strings(&[&format!("header {S}"), "1 line 1", "2 line 2"])
    );
}

#[test]
fn another_streams_lines_do_not_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("web.log");
    let mut st = Store::new(Rotation::default());
    st.write_chunk(dir.path(), &chunk("web", "old/0", 0, 0, &[1, 2, 3]))
        .unwrap();
    // The init restarted: a new stream, numbered from 1 again; the same
    // store, then a new one.
    st.write_chunk(dir.path(), &chunk("web", S, 0, 0, &[1]))
        .unwrap();
    let mut st = Store::new(Rotation::default());
    st.write_chunk(dir.path(), &chunk("web", "newer/0", 0, 0, &[1, 2]))
        .unwrap();
    assert_eq!(
        read(&path),
        strings(&[
            "header old/0",
            "1 line 1",
            "2 line 2",
            "3 line 3",
            &format!("header {S}"),
            "1 line 1",
            "header newer/0",
            "1 line 1",
            "2 line 2",
        ])
    );
}

#[test]
fn lost_lines_are_counted_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Store::new(Rotation::default());
    st.write_chunk(dir.path(), &chunk("web", S, 0, 0, &[1]))
        .unwrap();
    st.write_chunk(dir.path(), &chunk("web", S, 1, 40, &[42, 43]))
        .unwrap();
    // The count again (a writer that did not get to acknowledge it).
    let mut st = Store::new(Rotation::default());
    st.write_chunk(dir.path(), &chunk("web", S, 1, 40, &[42, 43, 44]))
        .unwrap();
    assert_eq!(
        read(&dir.path().join("web.log")),
        strings(&[
            &format!("header {S}"),
            "1 line 1",
            "41 -- 40 lines not persisted --",
            "42 line 42",
            "43 line 43",
            "44 line 44",
        ])
    );
}

#[test]
fn rotates_by_size_and_keeps_a_count() {
    let dir = tempfile::tempdir().unwrap();
    let rot = Rotation {
        max_size: 200,
        max_files: 3,
    };
    let mut st = Store::new(rot);
    for n in 1..=20 {
        st.write_chunk(dir.path(), &chunk("web", S, n - 1, 0, &[n]))
            .unwrap();
    }
    let file = |name: &str| dir.path().join(name);
    assert!(!file("web.log.3").exists());
    let mut all = Vec::new();
    for name in ["web.log.2", "web.log.1", "web.log"] {
        let size = std::fs::metadata(file(name)).unwrap().len();
        assert!(size <= 200, "{name}: {size}");
        let lines = read(&file(name));
        // Every file says which stream its lines are of.
        assert_eq!(lines[0], format!("header {S}"), "{name}");
        all.extend(lines.into_iter().skip(1));
    }
    // The newest lines, in order, none twice; the oldest ones gone.
    let nums: Vec<u64> = all
        .iter()
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(nums.last(), Some(&20));
    assert!(nums.windows(2).all(|w| w[1] == w[0] + 1), "{nums:?}");
    assert!(nums[0] > 1);
    // A new writer resumes in the rotated set.
    let mut st = Store::new(rot);
    st.write_chunk(dir.path(), &chunk("web", S, 19, 0, &[20, 21]))
        .unwrap();
    assert_eq!(read(&file("web.log")).last().unwrap(), "21 line 21");
    assert_eq!(
        read(&file("web.log"))
            .iter()
            .filter(|l| l.starts_with("20 "))
            .count(),
        1
    );
}

#[test]
fn one_file_kept_means_old_lines_go() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = Store::new(Rotation {
        max_size: 100,
        max_files: 1,
    });
    for n in 1..=5 {
        st.write_chunk(dir.path(), &chunk("web", S, n - 1, 0, &[n]))
            .unwrap();
    }
    assert!(!dir.path().join("web.log.1").exists());
    assert_eq!(
        read(&dir.path().join("web.log")).last().unwrap(),
        "5 line 5"
    );
}

#[test]
fn errors_name_the_path_and_the_next_attempt_starts_over() {
    let dir = tempfile::tempdir().unwrap();
    // The directory's place is taken by a file.
    let logs = dir.path().join("logs");
    std::fs::write(&logs, "").unwrap();
    let mut st = Store::new(Rotation::default());
    let e = st
        .write_chunk(&logs, &chunk("web", S, 0, 0, &[1]))
        .unwrap_err();
    assert!(
        e.starts_with(&format!("open {}/web.log: ", logs.display())),
        "{e}"
    );
    assert!(e.ends_with("not a directory"), "{e}");
    std::fs::remove_file(&logs).unwrap();
    st.write_chunk(&logs, &chunk("web", S, 0, 0, &[1, 2]))
        .unwrap();
    assert_eq!(read(&logs.join("web.log")).len(), 3);
    for bad in ["", ".", "..", "a/b"] {
        assert!(st.write_chunk(&logs, &chunk(bad, S, 0, 0, &[1])).is_err());
    }
}

#[test]
fn the_end_of_a_file() {
    let h = |s: &str| format::header("2026-11-22T04:00:00.000Z", s);
    let l = |n: u64| format!("2026-11-22T04:00:00.000Z {n} stdout x\n");
    let scan_of = |text: &str, whole, p| scan(text.as_bytes(), whole, S, p);
    let mine = format!("{}{}{}", h(S), l(1), l(2));
    assert_eq!(
        scan_of(&mine, true, 0),
        Scan {
            last: 2,
            header_due: false,
            keep: mine.len()
        }
    );
    // Another stream last: ours begins again.
    let other = format!("{mine}{}{}", h("x/1"), l(9));
    assert_eq!(scan_of(&other, true, 0).last, 0);
    assert!(scan_of(&other, true, 0).header_due);
    // No header in a tail: the stream's if the init acknowledged some.
    let bare = format!("xx partial first line\n{}{}", l(7), l(8));
    assert_eq!(
        scan_of(&bare, false, 5),
        Scan {
            last: 8,
            header_due: false,
            keep: bare.len()
        }
    );
    assert_eq!(scan_of(&bare, false, 0).last, 0);
    assert!(scan_of(&bare, false, 0).header_due);
    // Never below what the init knows; an empty file wants a header.
    assert_eq!(
        scan_of("", true, 4),
        Scan {
            last: 4,
            header_due: true,
            keep: 0
        }
    );
    // A cut line is not kept.
    let cut = format!("{mine}2026-11-22T04:00:00.000Z 3 std");
    assert_eq!(scan_of(&cut, true, 0).keep, mine.len());
    assert_eq!(scan_of(&cut, true, 0).last, 2);
}
