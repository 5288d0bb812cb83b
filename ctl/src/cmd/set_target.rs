//! `initctl set-target NAME [--wait] [--timeout DUR]`: switch the one target.
//!
//! Without `--wait` the init answers `accepted` at once. With it, the init
//! streams `progress` replies until `settled`; on a terminal the progress is
//! one line redrawn in place, otherwise a line is printed per change (so logs
//! of scripts stay readable). `--timeout` is the client's: when it passes we
//! stop waiting and exit 1, and the init carries on with the switch.

use super::{eprint_line, Ctx};
use crate::client::{unexpected, Received};
use crate::duration::format_timeout;
use crate::error::{CtlError, EXIT_FAILED, EXIT_OK};
use crate::term;
use flotilla_units::protocol::{Progress, Reply, Request};
use flotilla_units::state::UnitState;
use std::time::{Duration, Instant};

/// At most this many names of a list in a progress line.
const MAX_NAMES: usize = 5;

/// Clears the terminal line the cursor is on.
const CLEAR_LINE: &str = "\r\x1b[K";

/// Runs the command.
pub fn run(
    ctx: &mut Ctx<'_>,
    target: String,
    wait: bool,
    timeout: Option<Duration>,
) -> Result<i32, CtlError> {
    let started = Instant::now();
    if !wait {
        return match ctx.call(Request::SetTarget {
            target: target.clone(),
            wait: false,
            isolate: false,
        })? {
            Reply::Accepted { message } => {
                let text = if message.is_empty() {
                    format!("switching to target '{target}'")
                } else {
                    message
                };
                ctx.print(&format!("{text}\n"))?;
                Ok(EXIT_OK)
            }
            other => Err(unexpected(&other, "accepted")),
        };
    }
    let mut conn = ctx.connect()?;
    conn.send(Request::SetTarget {
        target: target.clone(),
        wait: true,
        isolate: false,
    })?;
    conn.set_deadline(timeout.map(|t| started + t));
    let width = if ctx.tty {
        term::width().saturating_sub(1).max(10)
    } else {
        0
    };
    let mut shown = String::new();
    let mut last: Option<Progress> = None;
    loop {
        let received = conn.recv()?;
        if ctx.tty && !shown.is_empty() && !matches!(received, Received::Reply(Reply::Progress(_)))
        {
            ctx.print(CLEAR_LINE)?;
            ctx.flush()?;
        }
        match received {
            Received::Reply(Reply::Progress(p)) => {
                let line = progress_line(&p);
                if line != shown {
                    if ctx.tty {
                        ctx.print(&format!("{CLEAR_LINE}{}", term::truncate(&line, width)))?;
                    } else {
                        ctx.print(&format!("{line}\n"))?;
                    }
                    ctx.flush()?;
                    shown = line;
                }
                last = Some(p);
            }
            Received::Reply(Reply::Settled {
                target,
                state,
                ok,
                failed,
            }) => {
                let line = settled_line(&target, state, ok, &failed);
                return if ok {
                    ctx.print(&format!("{line}\n"))?;
                    Ok(EXIT_OK)
                } else {
                    ctx.flush()?;
                    eprint_line(&format!("initctl: {line}"));
                    Ok(EXIT_FAILED)
                };
            }
            Received::Reply(other) => return Err(unexpected(&other, "settled")),
            Received::TimedOut => {
                ctx.flush()?;
                let after = timeout.map(format_timeout).unwrap_or_default();
                eprint_line(&format!(
                    "initctl: {}",
                    timed_out_line(&target, &after, last.as_ref())
                ));
                return Ok(EXIT_FAILED);
            }
        }
    }
}

/// One progress line: `default: 3/7 active, 1 failed; starting: db;
/// waiting: web (db); stopping: old` (the units outside the target that
/// have not stopped yet: the switch is not over until they have).
pub fn progress_line(p: &Progress) -> String {
    let mut line = format!("{}: {}/{} active", p.target, p.active, p.total);
    if p.failed > 0 {
        line.push_str(&format!(", {} failed", p.failed));
    }
    if p.starting_count() > 0 {
        line.push_str(&format!(
            "; starting: {}",
            names(&p.starting, p.starting_count())
        ));
    }
    if p.waiting_count() > 0 {
        line.push_str(&format!(
            "; waiting: {}",
            names(&p.waiting, p.waiting_count())
        ));
    }
    if p.stopping_count() > 0 {
        line.push_str(&format!(
            "; stopping: {}",
            names(&p.stopping, p.stopping_count())
        ));
    }
    line
}

/// The outcome of the wait.
pub fn settled_line(target: &str, state: UnitState, ok: bool, failed: &[String]) -> String {
    let mut line = if ok {
        format!("target '{target}' is active ({state})")
    } else {
        format!("target '{target}' failed ({state})")
    };
    if !failed.is_empty() {
        line.push_str(&format!("; failed units: {}", failed.join(", ")));
    }
    line
}

/// The message when `--timeout` passes.
pub fn timed_out_line(target: &str, after: &str, last: Option<&Progress>) -> String {
    let mut line = format!("timed out after {after} waiting for target '{target}'");
    if let Some(p) = last {
        line.push_str(&format!(" ({}/{} active)", p.active, p.total));
    }
    line.push_str("; the switch goes on");
    line
}

/// `a, b, c, d, e +2 more`: the first names of `list`, of `count` in all
/// (the init lists only the first few of a long list).
fn names(list: &[String], count: usize) -> String {
    let shown = list.iter().take(MAX_NAMES).cloned().collect::<Vec<_>>();
    let more = count.saturating_sub(shown.len());
    let mut s = shown.join(", ");
    if more > 0 {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(&format!("+{more} more"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(active: usize, failed: usize, starting: &[&str], waiting: &[&str]) -> Progress {
        Progress {
            target: "default".into(),
            total: 7,
            active,
            failed,
            starting: starting.iter().map(|s| s.to_string()).collect(),
            waiting: waiting.iter().map(|s| s.to_string()).collect(),
            starting_more: 0,
            waiting_more: 0,
            stopping: Vec::new(),
            stopping_more: 0,
        }
    }

    #[test]
    fn progress_lines() {
        assert_eq!(
            progress_line(&progress(0, 0, &[], &[])),
            "default: 0/7 active"
        );
        assert_eq!(
            progress_line(&progress(3, 1, &["db"], &["web (db)", "app (web)"])),
            "default: 3/7 active, 1 failed; starting: db; waiting: web (db), app (web)"
        );
        assert_eq!(
            progress_line(&progress(1, 0, &["a", "b", "c", "d", "e", "f", "g"], &[])),
            "default: 1/7 active; starting: a, b, c, d, e +2 more"
        );
        // The init listed 16 of 300 waiting units.
        let mut p = progress(
            0,
            0,
            &[],
            &["a (x)", "b (x)", "c (x)", "d (x)", "e (x)", "f (x)"],
        );
        p.waiting_more = 294;
        assert_eq!(
            progress_line(&p),
            "default: 0/7 active; waiting: a (x), b (x), c (x), d (x), e (x) +295 more"
        );
        // The switch also waits for the units outside the target to stop.
        let mut p = progress(7, 0, &[], &[]);
        p.stopping = vec!["old".into()];
        assert_eq!(progress_line(&p), "default: 7/7 active; stopping: old");
    }

    #[test]
    fn settled_lines() {
        assert_eq!(
            settled_line("default", UnitState::Running, true, &[]),
            "target 'default' is active (running)"
        );
        assert_eq!(
            settled_line("default", UnitState::Running, true, &["opt".into()]),
            "target 'default' is active (running); failed units: opt"
        );
        assert_eq!(
            settled_line(
                "web",
                UnitState::Failed,
                false,
                &["db".into(), "web".into()]
            ),
            "target 'web' failed (failed); failed units: db, web"
        );
    }

    #[test]
    fn timed_out_lines() {
        assert_eq!(
            timed_out_line("web", "2s", None),
            "timed out after 2s waiting for target 'web'; the switch goes on"
        );
        assert_eq!(
            timed_out_line("web", "500ms", Some(&progress(3, 0, &[], &[]))),
            "timed out after 500ms waiting for target 'web' (3/7 active); the switch goes on"
        );
    }
}
