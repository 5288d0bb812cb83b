//! `initctl logs UNIT [-n N] [--since TIME] [-f] [--verbose]`: a unit's
//! captured output, one line per line and nothing else, so that `initctl
//! logs x | grep y` works.
//!
//! The init holds the newest lines in memory; the log writer has the older
//! ones in the log directory (`<dir>/<unit>.log` and its rotated files).
//! The init says where they are and from which line on it holds them
//! (`source`), so the two parts are joined with no line twice
//! (`logfiles.rs`); the files are read only when the lines asked for go
//! back further than memory. Lines that are in neither (the init could not
//! keep them until they were written) are one `-- N lines dropped --`
//! line. A file that cannot be read (another user's logs) is said on
//! stderr, and the rest is shown. `--verbose` says where each part comes
//! from. `-f` without `-n` starts with what memory holds.
//!
//! With `-f` each line is flushed as it comes, so that it is live through a
//! pipe, and the command ends when interrupted or when the init closes the
//! connection (exit 0). A closed stdout ends the command quietly.

use super::{eprint_line, Ctx};
use crate::client::{unexpected, Connection, Received};
use crate::error::{CtlError, EXIT_OK};
use crate::logfiles::{older_lines, Line, Origin};
use crate::since::Since;
use crate::timestamp::{now_ms, parse_rfc3339};
use flotilla_units::protocol::{LogLine, LogSource, Reply, Request};
use std::path::Path;

/// What `logs` was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    /// The unit.
    pub unit: String,
    /// Only the last N lines.
    pub lines: Option<usize>,
    /// Only lines from then on.
    pub since: Option<Since>,
    /// Keep printing new lines.
    pub follow: bool,
    /// Say where each part comes from.
    pub verbose: bool,
}

/// Runs the command.
pub fn run(ctx: &mut Ctx<'_>, ask: Ask) -> Result<i32, CtlError> {
    let mut conn = ctx.connect()?;
    conn.send(Request::Logs {
        unit: ask.unit.clone(),
        lines: None,
        follow: ask.follow,
        source: true,
    })?;
    let since = ask.since.map(|s| s.resolve(now_ms()));
    let source = match recv(&mut conn, ask.follow)? {
        None => return Ok(EXIT_OK),
        Some(Reply::LogSource(s)) => s,
        // An init from before `source`: what it sends is all there is.
        Some(Reply::Log(l)) => {
            print_line(ctx, &l, ask.follow)?;
            return stream(ctx, &mut conn, ask.follow, since);
        }
        Some(Reply::LogEnd) => return Ok(EXIT_OK),
        Some(other) => return Err(unexpected(&other, "log")),
    };
    // The lines in memory now: following, those numbered below `next`
    // (the rest is new); otherwise all until the end.
    let mut memory = Vec::new();
    let mut last = source.first.saturating_sub(1);
    while !ask.follow || last + 1 < source.next {
        match recv(&mut conn, ask.follow)? {
            None => return Ok(EXIT_OK),
            Some(Reply::Log(l)) => {
                last = l.seq.unwrap_or(source.next);
                memory.push(l);
            }
            Some(Reply::LogEnd) => break,
            Some(other) => return Err(unexpected(&other, "log")),
        }
    }
    let lines = history(&ask, &source, memory, since);
    let mut origin = None;
    for l in &lines {
        if ask.verbose && origin.as_ref() != Some(&l.origin) {
            origin = Some(l.origin.clone());
            ctx.print(&format!("{}\n", heading(&l.origin, &source)))?;
        }
        if l.origin != Origin::Stream || ask.verbose {
            ctx.print(&l.text)?;
            ctx.print("\n")?;
        }
    }
    if !ask.follow {
        return Ok(EXIT_OK);
    }
    if ask.verbose {
        ctx.print("-- following the init's memory --\n")?;
    }
    ctx.flush()?;
    stream(ctx, &mut conn, true, since)
}

/// The next reply; `None` when a followed stream ended.
fn recv(conn: &mut Connection, follow: bool) -> Result<Option<Reply>, CtlError> {
    match conn.recv() {
        // Following, the stream ends when the init goes away.
        Err(CtlError::Closed(_)) if follow => Ok(None),
        Err(e) => Err(e),
        Ok(Received::Reply(r)) => Ok(Some(r)),
        Ok(Received::TimedOut) => Ok(None),
    }
}

/// Prints the rest of the replies: the new lines while following.
fn stream(
    ctx: &mut Ctx<'_>,
    conn: &mut Connection,
    follow: bool,
    since: Option<i64>,
) -> Result<i32, CtlError> {
    loop {
        match recv(conn, follow)? {
            None | Some(Reply::LogEnd) => return Ok(EXIT_OK),
            Some(Reply::Log(l)) => {
                let t = parse_rfc3339(&l.time);
                if since.is_none_or(|s| t.is_none_or(|t| t >= s)) {
                    print_line(ctx, &l, follow)?;
                }
            }
            Some(other) => return Err(unexpected(&other, "log")),
        }
    }
}

fn print_line(ctx: &mut Ctx<'_>, l: &LogLine, flush: bool) -> Result<(), CtlError> {
    ctx.print(&l.line)?;
    ctx.print("\n")?;
    if flush {
        ctx.flush()?;
    }
    Ok(())
}

/// What `--verbose` says before the lines of `origin`.
fn heading(origin: &Origin, source: &LogSource) -> String {
    match origin {
        Origin::File(p) => format!("-- from {} --", p.display()),
        Origin::Memory => format!(
            "-- from the init's memory: lines {} to {} of log stream {} (the files have up to {}) --",
            source.first,
            source.next.saturating_sub(1),
            source.stream,
            source.persisted
        ),
        Origin::Gap => "-- in neither --".to_string(),
        Origin::Stream => "-- a header of the files --".to_string(),
    }
}

/// The lines to show before following: the files' part (when the lines
/// asked for go back further than memory), a count of the lines in
/// neither, memory's part; then `--since` and `-n`.
fn history(ask: &Ask, source: &LogSource, memory: Vec<LogLine>, since: Option<i64>) -> Vec<Line> {
    let mut lines: Vec<Line> = memory
        .into_iter()
        .map(|l| Line {
            time_ms: parse_rfc3339(&l.time),
            text: l.line,
            origin: Origin::Memory,
        })
        .collect();
    let held = lines.len();
    let first_time = lines.first().and_then(|l| l.time_ms);
    let from_memory_only = match (ask.lines, since) {
        (Some(n), _) if n <= held => true,
        (_, Some(s)) => first_time.is_some_and(|t| t <= s),
        (None, None) => ask.follow,
        (Some(_), None) => false,
    };
    let dropped_before = source.first.saturating_sub(1);
    let mut older = Vec::new();
    let mut covered = 0;
    if !from_memory_only {
        if let Some(dir) = &source.dir {
            let want = ask.lines.map(|n| n - held.min(n));
            let enough = |got: &[Line]| {
                let mut shown = got.iter().filter(|l| l.origin != Origin::Stream);
                let oldest = shown.clone().find_map(|l| l.time_ms);
                want.is_some_and(|w| shown.by_ref().count() >= w)
                    || since.is_some_and(|s| oldest.is_some_and(|t| t < s))
            };
            let o = older_lines(
                Path::new(dir),
                &ask.unit,
                &source.stream,
                source.first,
                enough,
            );
            if let Some(p) = o.problem {
                eprint_line(&format!("initctl: {p}; showing what the init holds"));
            }
            covered = o.last_seq.unwrap_or(0);
            older = o.lines;
        }
    }
    if dropped_before > covered && !from_memory_only {
        let n = dropped_before - covered;
        let s = if n == 1 { "" } else { "s" };
        older.push(Line {
            time_ms: first_time,
            text: format!("-- {n} line{s} dropped --"),
            origin: Origin::Gap,
        });
    }
    older.append(&mut lines);
    let mut lines = older;
    if let Some(s) = since {
        lines.retain(|l| l.time_ms.is_none_or(|t| t >= s));
    }
    if let Some(n) = ask.lines {
        let shown: Vec<usize> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.origin != Origin::Stream)
            .map(|(i, _)| i)
            .collect();
        let keep_from = match shown.len().checked_sub(n) {
            _ if n == 0 => lines.len(),
            Some(k) => shown.get(k).copied().unwrap_or(0),
            None => 0,
        };
        lines.drain(..keep_from);
    }
    lines
}

#[cfg(test)]
mod tests;
