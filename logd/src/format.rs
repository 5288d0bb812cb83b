//! The lines of `<log-dir>/<unit>.log`, written by the log writer and read
//! back by it (to resume) and by `initctl logs`:
//!
//! ```text
//! 2026-11-22T04:00:00.100Z - init -- log 1795320000.100000000-1/7 --
//! 2026-11-22T04:00:00.123Z 41 stdout listening on :25
//! 2026-11-22T04:00:00.125Z 42 stderr+ the first 4096 bytes of a longer line
//! 2026-11-22T04:00:09.000Z 97 init -- 12 lines not persisted --
//! ```
//!
//! Each line is `TIME SEQ STREAM TEXT`: when the init read it (RFC 3339,
//! UTC, milliseconds), its number in the unit's log stream, `stdout`,
//! `stderr` or `init` (the init's notes about the unit; `+` when the line
//! goes on in the next one), and the text. The numbers are what make a
//! restarted writer and `initctl logs` exact: a line is in the file once,
//! and the part of the log that the init still holds in memory is told
//! apart from the part that only the files have.
//!
//! A **header** (`SEQ` is `-`) says which stream the lines after it
//! belong to: the writer writes one at the top of every new file and where
//! a new stream begins (the init restarted, or the unit was removed and
//! came back, and numbers from 1 again). Lines the init could not keep
//! until they were written are replaced by one `init` line counting them,
//! numbered as the last of them. Lines of the format before numbering
//! (`TIME STREAM TEXT`) are read as lines without a number.

/// One line of a log file, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileLine<'a> {
    /// A line of the unit's log.
    Entry(Entry<'a>),
    /// A new stream begins.
    Header {
        /// When.
        time: &'a str,
        /// The stream's name.
        stream: &'a str,
    },
    /// Not in the format (shown as it is).
    Other(&'a str),
}

/// A line of a unit's log as the file has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    /// RFC 3339, UTC.
    pub time: &'a str,
    /// Its number in the stream (none in the format before numbering).
    pub seq: Option<u64>,
    /// `stdout`, `stderr` or `init`.
    pub stream: &'a str,
    /// It goes on in the next line.
    pub cut: bool,
    /// The text.
    pub text: &'a str,
}

/// The header line that begins `stream` (with its newline).
pub fn header(time: &str, stream: &str) -> String {
    format!("{time} - init -- log {stream} --\n")
}

/// The text of the line that counts `n` lines lost before they were
/// written.
pub fn lost_text(n: u64) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("-- {n} line{s} not persisted --")
}

/// Appends one line (with its newline) to `out`.
pub fn push_entry(out: &mut Vec<u8>, e: &Entry<'_>) {
    out.extend_from_slice(e.time.as_bytes());
    out.push(b' ');
    match e.seq {
        Some(n) => out.extend_from_slice(n.to_string().as_bytes()),
        None => out.push(b'-'),
    }
    out.push(b' ');
    out.extend_from_slice(e.stream.as_bytes());
    if e.cut {
        out.push(b'+');
    }
    out.push(b' ');
    out.extend_from_slice(e.text.as_bytes());
    out.push(b'\n');
}

/// Whether `s` looks like a timestamp the init writes.
fn is_time(s: &str) -> bool {
    s.len() >= 20 && s.as_bytes().get(10) == Some(&b'T') && s.ends_with('Z')
}

fn is_stream(s: &str) -> bool {
    matches!(s, "stdout" | "stderr" | "init")
}

/// Parses one line (without its newline).
pub fn parse(line: &str) -> FileLine<'_> {
    let mut parts = line.splitn(4, ' ');
    let (Some(time), Some(second)) = (parts.next(), parts.next()) else {
        return FileLine::Other(line);
    };
    if !is_time(time) {
        return FileLine::Other(line);
    }
    let (seq, stream_field, text) = if second == "-" || second.bytes().all(|b| b.is_ascii_digit()) {
        let seq = second.parse().ok();
        let stream = parts.next().unwrap_or_default();
        (seq, stream, parts.next().unwrap_or_default())
    } else {
        // The format before numbering: TIME STREAM TEXT.
        let text = line
            .get(time.len() + second.len() + 2..)
            .unwrap_or_default();
        (None, second, text)
    };
    let (stream, cut) = match stream_field.strip_suffix('+') {
        Some(s) => (s, true),
        None => (stream_field, false),
    };
    if !is_stream(stream) {
        return FileLine::Other(line);
    }
    if second == "-" && stream == "init" {
        if let Some(id) = text
            .strip_prefix("-- log ")
            .and_then(|t| t.strip_suffix(" --"))
        {
            return FileLine::Header { time, stream: id };
        }
    }
    FileLine::Entry(Entry {
        time,
        seq,
        stream,
        cut,
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = "2026-11-22T04:00:00.123Z";

    fn line(e: &Entry<'_>) -> String {
        let mut out = Vec::new();
        push_entry(&mut out, e);
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn entries_round_trip() {
        for e in [
            Entry {
                time: T,
                seq: Some(42),
                stream: "stdout",
                cut: false,
                text: "listening on :25",
            },
            Entry {
                time: T,
                seq: Some(1),
                stream: "stderr",
                cut: true,
                text: "",
            },
            Entry {
                time: T,
                seq: Some(7),
                stream: "init",
                cut: false,
                text: "  spaces  kept  ",
            },
        ] {
            let text = line(&e);
            assert_eq!(parse(text.trim_end_matches('\n')), FileLine::Entry(e));
        }
        assert_eq!(
            line(&Entry {
                time: T,
                seq: Some(42),
                stream: "stderr",
                cut: true,
                text: "x"
            }),
            "2026-11-22T04:00:00.123Z 42 stderr+ x\n"
        );
    }

    #[test]
    fn headers_and_counts() {
        let h = header(T, "1795320000.1-4/7");
        assert_eq!(
            h,
            "2026-11-22T04:00:00.123Z - init -- log 1795320000.1-4/7 --\n"
        );
        assert_eq!(
            parse(h.trim_end()),
            FileLine::Header {
                time: T,
                stream: "1795320000.1-4/7"
            }
        );
        assert_eq!(lost_text(1), "-- 1 line not persisted --");
        assert_eq!(lost_text(12), "-- 12 lines not persisted --");
    }

    #[test]
    fn the_format_before_numbers_and_other_lines() {
        assert_eq!(
            parse("2026-11-22T04:00:00.123Z stdout hello world"),
            FileLine::Entry(Entry {
                time: T,
                seq: None,
                stream: "stdout",
                cut: false,
                text: "hello world"
            })
        );
        assert_eq!(
            parse("2026-11-22T04:00:00.123Z stderr+ piece"),
            FileLine::Entry(Entry {
                time: T,
                seq: None,
                stream: "stderr",
                cut: true,
                text: "piece"
            })
        );
        for other in [
            "",
            "hello",
            "2026-11-22T04:00:00.123Z 12 bogus x",
            "x y z w",
        ] {
            assert_eq!(parse(other), FileLine::Other(other));
        }
    }
}
