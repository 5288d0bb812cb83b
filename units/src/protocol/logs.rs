//! The unit output's lines in the protocol: a unit's lines as `logs`
//! returns them, where its older lines are, and the batches the init
//! hands its log writer with what the writer says of them.

use serde::{Deserialize, Serialize};

/// A line of a unit's captured output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogLine {
    /// When the init read it, RFC 3339 UTC.
    pub time: String,
    /// `stdout`, `stderr`, or `init` for the init's own notes about the unit.
    pub stream: String,
    /// The line, without its newline (invalid UTF-8 replaced).
    pub line: String,
    /// Its number in the unit's log stream, from 1 (none on an overflow
    /// mark, or from an init before this field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// The line was longer than the init keeps whole: it goes on in the
    /// next one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

/// Where a unit's older lines are ([`super::Reply::LogSource`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogSource {
    /// The log directory, if the init has one: `DIR/UNIT.log` and its
    /// rotated files `UNIT.log.1`, `UNIT.log.2`, … (oldest last).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// The unit's log stream: the files mark where its lines begin.
    pub stream: String,
    /// The files have the stream's lines up to this one.
    pub persisted: u64,
    /// The first line in the init's memory (`next` when there is none):
    /// older lines are only in the files.
    #[serde(default)]
    pub first: u64,
    /// The number the next line will get: the `log` lines that follow
    /// this reply and are numbered below it are the ones in memory now.
    #[serde(default)]
    pub next: u64,
}

/// How the writer's last batch went ([`super::Request::LogPull`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogAck {
    /// The batch.
    pub batch: u64,
    /// The units whose lines could not be written (every other chunk of
    /// the batch is in the files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<LogFailure>,
}

/// A unit whose lines the writer could not write, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogFailure {
    /// The unit.
    pub unit: String,
    /// Why (`open /var/log/init/web.log: read-only file system`).
    pub error: String,
}

/// Lines for the log writer: one chunk per unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogBatch {
    /// The batch's number, for its [`LogAck`].
    pub batch: u64,
    /// The log directory.
    pub dir: String,
    /// The chunks.
    pub chunks: Vec<LogChunk>,
    /// The answer to a leaving writer: nothing more is to come.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub last: bool,
}

/// A unit's lines in a [`LogBatch`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogChunk {
    /// The unit.
    pub unit: String,
    /// Its log stream: the numbering of its lines (it changes when the init
    /// restarts, or the unit is removed and comes back).
    pub stream: String,
    /// The files had the stream's lines up to this one when the batch was
    /// made (as far as the init knows: a writer that was stopped between
    /// writing and acknowledging may have written more).
    pub persisted: u64,
    /// Lines before the first of `lines` that left the init's memory
    /// before they were handed over: they are lost.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost: u64,
    /// The lines, in order, each with its `seq`.
    pub lines: Vec<LogLine>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
