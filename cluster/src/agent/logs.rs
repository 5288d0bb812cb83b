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

use crate::batch::Op;
use crate::control;
use crate::model::{LogAnswer, LogRequest};
use crate::registry::Registry;
use flotilla_units::protocol::{LogLine, Reply, Request};
use std::path::PathBuf;

/// Most lines an answer carries.
pub const MAX_LINES: usize = 200;

/// Most bytes of lines an answer carries (older lines are dropped first).
pub const MAX_BYTES: usize = 128 * 1024;

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
        },
    )
    .await
    .map_err(|e| format!("cannot reach the init: {e}"))?;
    let mut out = Vec::new();
    for r in replies {
        match r {
            Reply::Log(mut l) => {
                if l.line.len() > MAX_LINE {
                    let mut cut = MAX_LINE;
                    while !l.line.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    l.line.truncate(cut);
                }
                out.push(l);
            }
            Reply::Error { message, .. } => return Err(message),
            _ => {}
        }
    }
    let mut bytes: usize = out.iter().map(|l| l.line.len() + l.time.len() + 16).sum();
    let mut drop = 0;
    while bytes > MAX_BYTES && drop < out.len() {
        bytes -= out[drop].line.len() + out[drop].time.len() + 16;
        drop += 1;
    }
    out.drain(..drop);
    Ok(out)
}
