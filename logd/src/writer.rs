//! The writer's loop: ask the init for lines (`log-pull`), write each
//! batch, acknowledge it in the next pull, naming the units whose files
//! could not be written.
//!
//! When a write fails (a full or read-only directory) the init holds
//! those units back; the writer asks for them again (`retry`) after a
//! back-off of 1 s, doubling up to 30 s, and says why on its stderr (its
//! own log) once per new reason. Nothing here waits on a timer otherwise:
//! the writer sleeps until the init has lines for it.
//!
//! On SIGTERM, SIGINT or SIGHUP it says it is `leaving`: the init sends
//! what is left (during a shutdown, until every other unit has stopped)
//! and a last, empty batch, and the writer exits 0.
//!
//! When the init closes the connection (it re-executed itself: `initctl
//! reexec`; its socket listens on), the writer connects again and pulls
//! anew: the init hands over again what it had not seen acknowledged.
//! After [`MAX_RECONNECTS`] closes in a row with no reply between them
//! (a pull waits for lines, so two re-execs in a row close a connection
//! that had none) the writer fails.

use crate::channel::{Channel, Event};
use crate::store::{Rotation, Store};
use flotilla_units::protocol::{LogAck, LogFailure, Reply, Request};
use std::path::Path;
use std::time::{Duration, Instant};

/// The first wait before units that could not be written are tried
/// again.
pub const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Connections the init may close in a row, with no reply between.
pub const MAX_RECONNECTS: u32 = 8;

fn pull(ack: Option<LogAck>, retry: bool, leaving: bool) -> Request {
    Request::LogPull {
        ack,
        retry,
        max_bytes: None,
        leaving,
    }
}

/// Sends a request; a connection the init closed meanwhile (a re-exec)
/// is seen by the next read, which connects again.
fn send(ch: &mut Channel, request: Request) {
    let _ = ch.send(request);
}

/// Runs the writer against the init at `control` until the init lets it
/// go (after a stop signal: `Ok`) or the connection fails.
pub fn run(control: &Path, rotation: Rotation) -> Result<(), String> {
    let mut ch = Channel::connect(control)?;
    let mut store = Store::new(rotation);
    let mut leaving = false;
    let mut retry_at: Option<Instant> = None;
    let mut backoff = FIRST_BACKOFF;
    let mut told: Option<String> = None;
    // Connections closed since the last reply.
    let mut closes = 0;
    ch.send(pull(None, false, false))?;
    loop {
        let event = match ch.next(retry_at)? {
            Event::Reply(r) => {
                closes = 0;
                Ok(*r)
            }
            other => Err(other),
        };
        match event {
            Ok(Reply::LogBatch(b)) => {
                if b.last {
                    return Ok(());
                }
                let dir = Path::new(&b.dir);
                let mut failed = Vec::new();
                for c in &b.chunks {
                    if let Err(error) = store.write_chunk(dir, c) {
                        failed.push(LogFailure {
                            unit: c.unit.clone(),
                            error,
                        });
                    }
                }
                match failed.first() {
                    None => backoff = FIRST_BACKOFF,
                    Some(f) => {
                        let why = format!("{}: {}", f.unit, f.error);
                        if told.as_ref() != Some(&why) {
                            eprintln!(
                                "flotilla-logd: cannot write {} unit(s), trying again in {}s: {why}",
                                failed.len(),
                                backoff.as_secs()
                            );
                            told = Some(why);
                        }
                        if retry_at.is_none() {
                            retry_at = Some(Instant::now() + backoff);
                            backoff = (backoff * 2).min(MAX_BACKOFF);
                        }
                    }
                }
                if failed.is_empty() && told.take().is_some() {
                    eprintln!("flotilla-logd: writing again");
                }
                let ack = LogAck {
                    batch: b.batch,
                    failed,
                };
                send(&mut ch, pull(Some(ack), false, leaving));
            }
            Ok(Reply::Error { message, .. }) => return Err(message),
            Ok(other) => return Err(format!("unexpected reply from the init: {other:?}")),
            Err(Event::TimedOut) => {
                retry_at = None;
                send(&mut ch, pull(None, true, leaving));
            }
            Err(Event::Stop) if !leaving => {
                leaving = true;
                send(&mut ch, pull(None, false, true));
            }
            Err(Event::Stop | Event::Reply(_)) => {}
            Err(Event::Closed) if leaving => return Ok(()),
            Err(Event::Closed) if closes < MAX_RECONNECTS => {
                closes += 1;
                eprintln!("flotilla-logd: the init closed the connection; connecting again");
                ch.reconnect()?;
                send(&mut ch, pull(None, false, false));
            }
            Err(Event::Closed) => return Err("the init closed the connection".into()),
        }
    }
}
