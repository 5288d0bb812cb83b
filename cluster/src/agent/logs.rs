//! Answering requests for a unit's recent log lines.
//!
//! The dashboard may be served by any machine; the lines are in the init
//! of the machine that runs the unit. The API asks through etcd
//! (`logreq/<machine>/<unit>`, which this agent watches); the agent reads
//! the lines from its init (the control socket's `logs` request, without
//! following) and answers at `logs/<machine>/<unit>`, bound to its presence
//! lease, deleting the request in the same transaction. Only units the
//! engine assigned to this machine are answered for (the machine's own
//! units stay private), and answers are bounded in lines and bytes.
//!
//! A followed log (`initctl cluster logs -f`) is asked at
//! `logfollow/<machine>/<id>`, bound to the asker's lease: the agent
//! follows the unit's log on its init and writes the lines as they come at
//! `logtail/<machine>/<id>` (bound to its presence lease), a batch at a
//! time (gathered for [`FOLLOW_GATHER`]), until the request is deleted or
//! its lease ends (the asker went away), or the init closes the stream.

use crate::batch::Op;
use crate::control;
use crate::model::{LogAnswer, LogBatch, LogFollow, LogRequest};
use crate::registry::Registry;
use flotilla_units::protocol::{LogLine, Reply, Request};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Most lines an answer carries.
pub const MAX_LINES: usize = 1000;

/// Most bytes of lines an answer (or a batch of a followed log) carries
/// (older lines are dropped first): well within etcd's request limit.
pub const MAX_BYTES: usize = 512 * 1024;

/// How long the lines of a followed log are gathered into one write.
pub const FOLLOW_GATHER: Duration = Duration::from_millis(100);

/// Longest line kept (longer ones are cut).
const MAX_LINE: usize = 2048;

/// Reads the lines a request asks for and writes the answer. `assigned`:
/// whether the unit is one the engine assigned to this machine.
pub async fn answer(
    reg: Registry,
    control: PathBuf,
    machine: String,
    unit: String,
    req: LogRequest,
    assigned: bool,
    lease: i64,
) {
    let result = if assigned {
        read(&control, &unit, req.lines.clamp(1, MAX_LINES)).await
    } else {
        Err(format!("{unit} is not scheduled on machine {machine}"))
    };
    let answer = match result {
        Ok(lines) => LogAnswer {
            id: req.id,
            lines,
            error: None,
        },
        Err(e) => LogAnswer {
            id: req.id,
            lines: Vec::new(),
            error: Some(e),
        },
    };
    let k = reg.keys();
    let ops = vec![
        Op::put_leased(
            k.log_answer(&machine, &unit),
            Registry::encode(&answer),
            lease,
        ),
        Op::delete(k.log_request(&machine, &unit)),
    ];
    if let Err(e) = reg.write_groups(&[], vec![ops]).await {
        eprintln!("clusterd: agent: answering a log request for {unit}: {e}");
    }
}

async fn read(control: &std::path::Path, unit: &str, lines: usize) -> Result<Vec<LogLine>, String> {
    let replies = control::request_all(
        control,
        Request::Logs {
            unit: unit.to_string(),
            lines: Some(lines),
            follow: false,
            // The init's memory only: the log files are on this machine's
            // disk, written by its log writer.
            source: false,
        },
    )
    .await
    .map_err(|e| format!("cannot reach the init: {e}"))?;
    let mut out = Vec::new();
    for r in replies {
        match r {
            Reply::Log(l) => out.push(cut(l)),
            Reply::Error { message, .. } => return Err(message),
            _ => {}
        }
    }
    bound(&mut out);
    Ok(out)
}

/// A line cut to [`MAX_LINE`] bytes.
fn cut(mut l: LogLine) -> LogLine {
    if l.line.len() > MAX_LINE {
        let mut cut = MAX_LINE;
        while !l.line.is_char_boundary(cut) {
            cut -= 1;
        }
        l.line.truncate(cut);
    }
    l
}

/// Drops the oldest lines beyond [`MAX_BYTES`].
fn bound(out: &mut Vec<LogLine>) {
    let mut bytes: usize = out.iter().map(size).sum();
    let mut drop = 0;
    while bytes > MAX_BYTES && drop < out.len() {
        bytes -= size(&out[drop]);
        drop += 1;
    }
    out.drain(..drop);
}

fn size(l: &LogLine) -> usize {
    l.line.len() + l.time.len() + 16
}

/// The followed logs this agent sends, by request ID.
#[derive(Debug, Default)]
pub struct Follows {
    tasks: BTreeMap<String, tokio::task::JoinHandle<()>>,
}

impl Follows {
    /// Starts following for request `id` (once; `assigned`: whether the
    /// unit is one the engine assigned here).
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        &mut self,
        reg: &Registry,
        control: &std::path::Path,
        machine: &str,
        id: &str,
        req: LogFollow,
        assigned: bool,
        lease: i64,
    ) {
        self.tasks.retain(|_, t| !t.is_finished());
        if self.tasks.contains_key(id) {
            return;
        }
        let task = tokio::spawn(follow(
            reg.clone(),
            control.to_path_buf(),
            machine.to_string(),
            id.to_string(),
            req,
            assigned,
            lease,
        ));
        self.tasks.insert(id.to_string(), task);
    }

    /// The request is gone: stops, and removes what was sent.
    pub fn stop(&mut self, reg: &Registry, machine: &str, id: &str) {
        if let Some(t) = self.tasks.remove(id) {
            t.abort();
        }
        let key = reg.keys().log_tail(machine, id);
        let reg = reg.clone();
        tokio::spawn(async move {
            let _ = reg.client().delete(key, None).await;
        });
    }
}

/// Follows `req.unit`'s log on the init and writes its lines in batches.
async fn follow(
    reg: Registry,
    control: PathBuf,
    machine: String,
    id: String,
    req: LogFollow,
    assigned: bool,
    lease: i64,
) {
    let key = reg.keys().log_tail(&machine, &id);
    let send = |batch: LogBatch| {
        let reg = reg.clone();
        let key = key.clone();
        async move {
            let op = Op::put_leased(key, Registry::encode(&batch), lease);
            reg.write_groups(&[], vec![vec![op]]).await
        }
    };
    if !assigned {
        let why = format!("{} is not scheduled on machine {machine}", req.unit);
        let _ = send(LogBatch {
            lines: Vec::new(),
            error: Some(why),
        })
        .await;
        return;
    }
    let ask = Request::Logs {
        unit: req.unit.clone(),
        lines: Some(req.lines.min(MAX_LINES)),
        follow: true,
        source: false,
    };
    let mut sub = match control::stream(&control, ask).await {
        Ok(s) => s,
        Err(e) => {
            let _ = send(LogBatch {
                lines: Vec::new(),
                error: Some(format!("cannot reach the init: {e}")),
            })
            .await;
            return;
        }
    };
    loop {
        // The first line of a batch, then what else comes meanwhile.
        let mut lines = Vec::new();
        let mut end = None;
        match sub.next().await {
            Ok(Some(Reply::Log(l))) => lines.push(cut(l)),
            Ok(Some(Reply::Error { message, .. })) => end = Some(message),
            Ok(Some(_)) => continue,
            Ok(None) => end = Some("the init closed the log".to_string()),
            Err(e) => end = Some(e.to_string()),
        }
        let until = tokio::time::Instant::now() + FOLLOW_GATHER;
        while end.is_none() && lines.iter().map(size).sum::<usize>() < MAX_BYTES {
            match tokio::time::timeout_at(until, sub.next()).await {
                Err(_) => break,
                Ok(Ok(Some(Reply::Log(l)))) => lines.push(cut(l)),
                Ok(Ok(Some(Reply::Error { message, .. }))) => end = Some(message),
                Ok(Ok(Some(_))) => {}
                Ok(Ok(None)) => end = Some("the init closed the log".to_string()),
                Ok(Err(e)) => end = Some(e.to_string()),
            }
        }
        bound(&mut lines);
        let last = end.is_some();
        if let Err(e) = send(LogBatch { lines, error: end }).await {
            eprintln!("clusterd: agent: sending {}'s log lines: {e}", req.unit);
            return;
        }
        if last {
            return;
        }
    }
}
