//! The log directory: each unit's `<unit>.log`, appended to, rotated by
//! size and count (`<unit>.log.1` the newest of the old ones), and read
//! back where a writer must find out what it already wrote.
//!
//! # Writing each line once
//!
//! The init moves a unit's `persisted` cursor only when the writer
//! acknowledges a batch, after writing it. A writer stopped between the
//! two (killed, or its disk failed in the middle of a write) leaves lines
//! in the file that the init will hand over again. So before it writes a
//! unit's first chunk, a writer reads the end of the unit's file:
//!
//! - a last line without its newline (a write cut short) is cut off;
//! - the last header in it names the stream its lines belong to: if that
//!   is the chunk's stream, the highest number after it is the last line
//!   written, and lines up to it are skipped; if another stream's header
//!   is last, the chunk's stream begins here (a header first);
//! - with no header in it, the lines are the stream's only if the init
//!   has acknowledged some of it (`persisted > 0`): lines written since
//!   then follow them.
//!
//! What was written and not acknowledged is at most one chunk (the init
//! sends the next batch only after the ack), and a chunk is at most the
//! init's ring of that unit, so reading the last [`TAIL`] bytes is
//! enough. After that the writer keeps count itself.
//!
//! Nothing is synced to the disk: an acknowledged line has left both the
//! init and the writer, and is lost only if the machine goes down before
//! the kernel writes it back (as with journald between its syncs).

use crate::format::{self, Entry, FileLine};
use flotilla_units::protocol::LogChunk;
use std::collections::HashMap;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// How much of a file's end is read to find where a writer left off.
pub const TAIL: u64 = 256 * 1024;

/// At most this many files are kept open (the least recently written
/// are closed first). The init raises the limit on open files for itself
/// and its units to the hard limit.
const MAX_OPEN: usize = 1024;

/// When a unit's file is rotated, and how many are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rotation {
    /// `<unit>.log` is rotated before a write would take it past this.
    pub max_size: u64,
    /// Files kept per unit, `<unit>.log` included (at least 1: then the
    /// old lines are removed at each rotation).
    pub max_files: u32,
}

impl Default for Rotation {
    fn default() -> Self {
        Rotation {
            max_size: 8 << 20,
            max_files: 5,
        }
    }
}

/// One unit's file as the writer knows it.
#[derive(Debug)]
struct UnitLog {
    file: Option<File>,
    size: u64,
    /// The stream its last lines belong to.
    stream: String,
    /// The last line of that stream in the files.
    last: u64,
    /// The stream's header must come before its next line.
    header_due: bool,
    /// When it was last written (a counter), to close the least used.
    used: u64,
}

/// The log directory. See the module documentation.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    rotation: Rotation,
    logs: HashMap<String, UnitLog>,
    tick: u64,
}

impl Store {
    /// A store rotating files as `rotation` says; the directory comes with
    /// each chunk.
    pub fn new(rotation: Rotation) -> Store {
        Store {
            dir: PathBuf::new(),
            rotation,
            logs: HashMap::new(),
            tick: 0,
        }
    }

    /// Appends a chunk's lines (those not in the file yet) to its unit's
    /// file in `dir`, rotating it first when it would grow past its size.
    /// The error says what failed, with the path.
    pub fn write_chunk(&mut self, dir: &Path, chunk: &LogChunk) -> Result<(), String> {
        check_name(&chunk.unit)?;
        if self.dir != dir {
            self.dir = dir.to_path_buf();
            self.logs.clear();
        }
        let path = self.path(&chunk.unit, 0);
        let log = match self.logs.remove(&chunk.unit) {
            Some(log) if log.stream == chunk.stream && log.file.is_some() => Ok(log),
            Some(log) if log.stream == chunk.stream => reopen(&self.dir, &path, log),
            _ => resume(&self.dir, &path, chunk),
        };
        let mut log = log?;
        self.tick += 1;
        log.used = self.tick;
        // A failed write may have left part of a line: the next attempt
        // finds out from the file again.
        self.append(&mut log, &path, chunk)?;
        self.logs.insert(chunk.unit.clone(), log);
        self.close_idle();
        Ok(())
    }

    /// `<dir>/<unit>.log`, or its `n`-th rotated file.
    fn path(&self, unit: &str, n: u32) -> PathBuf {
        match n {
            0 => self.dir.join(format!("{unit}.log")),
            n => self.dir.join(format!("{unit}.log.{n}")),
        }
    }

    fn append(&self, log: &mut UnitLog, path: &Path, chunk: &LogChunk) -> Result<(), String> {
        let first = chunk.lines.first();
        let time = first.map_or("", |l| l.time.as_str());
        let mut body = Vec::new();
        let mut last = log.last;
        if chunk.lost > 0 {
            let through = first.and_then(|l| l.seq).unwrap_or(1).saturating_sub(1);
            if through > last {
                format::push_entry(
                    &mut body,
                    &Entry {
                        time,
                        seq: Some(through),
                        stream: "init",
                        cut: false,
                        text: &format::lost_text(chunk.lost),
                    },
                );
                last = through;
            }
        }
        for l in &chunk.lines {
            let Some(seq) = l.seq.filter(|&s| s > last) else {
                continue;
            };
            format::push_entry(
                &mut body,
                &Entry {
                    time: &l.time,
                    seq: Some(seq),
                    stream: &l.stream,
                    cut: l.cut,
                    text: &l.line,
                },
            );
            last = seq;
        }
        if body.is_empty() {
            return Ok(());
        }
        let header = format::header(time, &chunk.stream);
        let mut len = body.len() as u64;
        if log.header_due {
            len += header.len() as u64;
        }
        if log.size > 0 && log.size.saturating_add(len) > self.rotation.max_size {
            log.file = None;
            self.rotate(&chunk.unit)?;
            log.file = Some(open(&self.dir, path)?);
            log.size = 0;
            log.header_due = true;
        }
        let mut out = Vec::with_capacity(header.len() + body.len());
        if log.header_due {
            out.extend_from_slice(header.as_bytes());
        }
        out.extend_from_slice(&body);
        let Some(file) = log.file.as_mut() else {
            return Err(format!("write {}: not open", path.display()));
        };
        file.write_all(&out)
            .map_err(|e| format!("write {}: {}", path.display(), describe(&e)))?;
        log.size = log.size.saturating_add(out.len() as u64);
        log.last = last;
        log.header_due = false;
        Ok(())
    }

    /// `<unit>.log.N-1` goes, each `<unit>.log.K` becomes `.K+1`, and
    /// `<unit>.log` becomes `.1` (with one file kept, `<unit>.log` goes).
    fn rotate(&self, unit: &str) -> Result<(), String> {
        let keep = self.rotation.max_files.max(1);
        let fail = |op: &str, p: &Path, e: &io::Error| {
            format!("rotate: {op} {}: {}", p.display(), describe(e))
        };
        let oldest = self.path(unit, keep - 1);
        if let Err(e) = std::fs::remove_file(&oldest) {
            if e.kind() != io::ErrorKind::NotFound {
                return Err(fail("remove", &oldest, &e));
            }
        }
        for n in (0..keep - 1).rev() {
            let from = self.path(unit, n);
            if let Err(e) = std::fs::rename(&from, self.path(unit, n + 1)) {
                if e.kind() != io::ErrorKind::NotFound {
                    return Err(fail("rename", &from, &e));
                }
            }
        }
        Ok(())
    }

    /// Closes the least recently written files past [`MAX_OPEN`].
    fn close_idle(&mut self) {
        let open = self.logs.values().filter(|l| l.file.is_some()).count();
        for _ in MAX_OPEN..open {
            let oldest = self
                .logs
                .values_mut()
                .filter(|l| l.file.is_some())
                .min_by_key(|l| l.used);
            if let Some(l) = oldest {
                l.file = None;
            }
        }
    }
}

/// A unit name that cannot be a file name in the directory.
fn check_name(unit: &str) -> Result<(), String> {
    if unit.is_empty() || unit == "." || unit == ".." || unit.contains(['/', '\0']) {
        return Err(format!("unit {unit:?}: not a file name"));
    }
    Ok(())
}

/// An I/O error as the rest of flotilla words them (`read-only file
/// system`).
pub fn describe(e: &io::Error) -> String {
    let text = e.to_string();
    let text = match text.find(" (os error ") {
        Some(at) => text.get(..at).unwrap_or(&text).to_string(),
        None => text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

/// Opens a unit's file to append and read, making the directory when it
/// is missing.
fn open(dir: &Path, path: &Path) -> Result<File, String> {
    let attempt = || {
        OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o640)
            .custom_flags(libc::O_NOCTTY)
            .open(path)
    };
    let opened = match attempt() {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            DirBuilder::new()
                .recursive(true)
                .mode(0o755)
                .create(dir)
                .map_err(|e| format!("create {}: {}", dir.display(), describe(&e)))?;
            attempt()
        }
        other => other,
    };
    opened.map_err(|e| format!("open {}: {}", path.display(), describe(&e)))
}

fn size_of(file: &File, path: &Path) -> Result<u64, String> {
    file.metadata()
        .map(|m| m.len())
        .map_err(|e| format!("stat {}: {}", path.display(), describe(&e)))
}

/// A file closed to save descriptors, opened again: the count is known.
fn reopen(dir: &Path, path: &Path, mut log: UnitLog) -> Result<UnitLog, String> {
    let file = open(dir, path)?;
    log.size = size_of(&file, path)?;
    log.header_due |= log.size == 0;
    log.file = Some(file);
    Ok(log)
}

/// A unit's file met for the first time (or after a failure): where the
/// chunk's stream is in it.
fn resume(dir: &Path, path: &Path, chunk: &LogChunk) -> Result<UnitLog, String> {
    let file = open(dir, path)?;
    let size = size_of(&file, path)?;
    let from = size.saturating_sub(TAIL);
    let mut tail = vec![0u8; usize::try_from(size - from).unwrap_or(0)];
    file.read_exact_at(&mut tail, from)
        .map_err(|e| format!("read {}: {}", path.display(), describe(&e)))?;
    let found = scan(&tail, from == 0, &chunk.stream, chunk.persisted);
    let keep = from + found.keep as u64;
    if keep < size {
        file.set_len(keep)
            .map_err(|e| format!("truncate {}: {}", path.display(), describe(&e)))?;
    }
    Ok(UnitLog {
        file: Some(file),
        size: keep,
        stream: chunk.stream.clone(),
        last: found.last,
        header_due: found.header_due,
        used: 0,
    })
}

/// What the end of a file says about a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scan {
    /// The stream's last line in the file (at least `persisted`).
    pub last: u64,
    /// The stream's header must be written before its lines.
    pub header_due: bool,
    /// Bytes of the tail to keep: up to its last complete line.
    pub keep: usize,
}

/// Reads the end of a file (`whole`: the whole file) for `stream`, of
/// which the init says the files have the lines up to `persisted`. See the
/// module documentation.
pub fn scan(tail: &[u8], whole: bool, stream: &str, persisted: u64) -> Scan {
    let keep = tail.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let complete = tail.get(..keep).unwrap_or_default();
    let mut lines = complete.split(|&b| b == b'\n');
    if !whole {
        // The first line may have begun before the tail.
        lines.next();
    }
    let mut header: Option<bool> = None;
    let mut last = 0;
    for raw in lines {
        let text = String::from_utf8_lossy(raw);
        match format::parse(&text) {
            FileLine::Header { stream: s, .. } => {
                header = Some(s == stream);
                last = 0;
            }
            FileLine::Entry(Entry { seq: Some(n), .. }) => last = last.max(n),
            FileLine::Entry(_) | FileLine::Other(_) => {}
        }
    }
    let (last, header_due) = match header {
        Some(true) => (last, false),
        Some(false) => (0, true),
        None if persisted > 0 => (last, keep == 0 && whole),
        None => (0, true),
    };
    Scan {
        last: last.max(persisted),
        header_due,
        keep,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests;
