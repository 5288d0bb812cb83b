//! The part of a unit's log that only the log directory has: the lines the
//! init no longer holds in memory, read from `<dir>/<unit>.log` and its
//! rotated files (`<unit>.log.1` the newest of those) in the format of
//! `flotilla_logd::format`.
//!
//! The init says which stream its lines are of and the first one it still
//! holds; a file line of that stream numbered from there on is in memory,
//! so it is left out here and the two parts join with no line twice. The
//! newest files are read first, and only as far back as the caller needs.

use crate::timestamp::parse_rfc3339;
use flotilla_logd::format::{self, FileLine};
use std::io;
use std::path::{Path, PathBuf};

/// Where a line comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A file of the log directory.
    File(PathBuf),
    /// The init's memory.
    Memory,
    /// Neither: lines lost between the two (a count).
    Gap,
    /// A stream begins (a header of a file, shown with `--verbose`).
    Stream,
}

/// One line to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// When it was read, in ms since the epoch (none for a line without
    /// a time).
    pub time_ms: Option<i64>,
    /// The text.
    pub text: String,
    /// Where it comes from.
    pub origin: Origin,
}

/// What the files add.
#[derive(Debug, Default)]
pub struct Older {
    /// Their lines, oldest first.
    pub lines: Vec<Line>,
    /// The last line of the init's stream in them.
    pub last_seq: Option<u64>,
    /// A file that could not be read, and why.
    pub problem: Option<String>,
}

/// `<dir>/<unit>.log`, or its `n`-th rotated file.
pub fn path(dir: &Path, unit: &str, n: u32) -> PathBuf {
    match n {
        0 => dir.join(format!("{unit}.log")),
        n => dir.join(format!("{unit}.log.{n}")),
    }
}

/// The unit's lines in the files of `dir` that the init does not hold
/// (its `stream` from `first` on), newest files first until `enough`
/// says the lines gathered (oldest first) are enough.
pub fn older_lines(
    dir: &Path,
    unit: &str,
    stream: &str,
    first: u64,
    enough: impl Fn(&[Line]) -> bool,
) -> Older {
    let mut older = Older::default();
    for n in 0..u32::MAX {
        let p = path(dir, unit, n);
        let text = match std::fs::read(&p) {
            Ok(t) => t,
            // A rotation cut short may leave no `<unit>.log`.
            Err(e) if e.kind() == io::ErrorKind::NotFound && n == 0 => continue,
            Err(e) if e.kind() == io::ErrorKind::NotFound => break,
            Err(e) => {
                older.problem = Some(format!(
                    "cannot read {}: {}",
                    p.display(),
                    flotilla_logd::store::describe(&e)
                ));
                break;
            }
        };
        let text = String::from_utf8_lossy(&text);
        let mut lines = Vec::new();
        let mut current = None;
        for raw in text.lines() {
            match format::parse(raw) {
                FileLine::Header { time, stream: s } => {
                    current = Some(s == stream);
                    lines.push(Line {
                        time_ms: parse_rfc3339(time),
                        text: format!("-- log stream {s} --"),
                        origin: Origin::Stream,
                    });
                }
                FileLine::Entry(e) => {
                    if current == Some(true) {
                        if let Some(seq) = e.seq {
                            if seq >= first {
                                continue;
                            }
                            older.last_seq = older.last_seq.max(Some(seq));
                        }
                    }
                    lines.push(Line {
                        time_ms: parse_rfc3339(e.time),
                        text: e.text.to_string(),
                        origin: Origin::File(p.clone()),
                    });
                }
                FileLine::Other(o) => lines.push(Line {
                    time_ms: None,
                    text: o.to_string(),
                    origin: Origin::File(p.clone()),
                }),
            }
        }
        lines.append(&mut older.lines);
        older.lines = lines;
        if enough(&older.lines) {
            break;
        }
    }
    older
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: &str = "1.0-1/3";

    fn write(dir: &Path, name: &str, lines: &[&str]) {
        let mut text = String::new();
        for l in lines {
            text.push_str(l);
            text.push('\n');
        }
        std::fs::write(dir.join(name), text).unwrap_or_else(|e| panic!("{e}"));
    }

    fn l(seq: u64, text: &str) -> String {
        format!("2026-11-22T04:00:{:02}.000Z {seq} stdout {text}", seq % 60)
    }

    fn h(stream: &str) -> String {
        format::header("2026-11-22T04:00:00.000Z", stream)
            .trim_end()
            .to_string()
    }

    fn texts(o: &Older) -> Vec<&str> {
        o.lines
            .iter()
            .filter(|l| l.origin != Origin::Stream)
            .map(|l| l.text.as_str())
            .collect()
    }

    #[test]
    fn joins_the_rotated_files_and_leaves_out_what_memory_has() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = dir.path();
        write(d, "web.log.2", &[&h("old/0"), &l(7, "old seven")]);
        write(d, "web.log.1", &[&h(S), &l(1, "one"), &l(2, "two")]);
        write(d, "web.log", &[&h(S), &l(3, "three"), &l(4, "four")]);
        let o = older_lines(d, "web", S, 4, |_| false);
        assert_eq!(texts(&o), ["old seven", "one", "two", "three"]);
        assert_eq!(o.last_seq, Some(3));
        assert_eq!(o.problem, None);
        assert_eq!(o.lines[1].origin, Origin::File(d.join("web.log.2")));
        // Only as far back as needed.
        let o = older_lines(d, "web", S, 4, |lines| lines.len() >= 2);
        assert_eq!(texts(&o), ["three"]);
        let o = older_lines(d, "web", S, 3, |lines| lines.len() >= 4);
        assert_eq!(texts(&o), ["one", "two"]);
    }

    #[test]
    fn no_files_and_files_of_the_format_before_numbers() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let d = dir.path();
        let o = older_lines(d, "web", S, 1, |_| false);
        assert!(o.lines.is_empty() && o.problem.is_none() && o.last_seq.is_none());
        write(
            d,
            "web.log",
            &["2026-11-22T04:00:00.000Z stdout before", "garbage"],
        );
        let o = older_lines(d, "web", S, 1, |_| false);
        assert_eq!(texts(&o), ["before", "garbage"]);
        assert_eq!(o.lines[0].time_ms, Some(1_795_320_000_000));
        assert_eq!(o.lines[1].time_ms, None);
    }
}
