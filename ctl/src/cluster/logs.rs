//! `initctl cluster logs UNIT [-n N] [--since TIME] [-f] [--machine ID]`: a
//! unit's output on the machine that runs it (for a global unit, the one
//! `--machine` names), through clusterd's API
//! (`GET /flotilla/v1/logs/<unit>`, docs/cluster.md "Logs"), printed as
//! `initctl logs` prints a local unit's: one line per line and nothing
//! else; with `-f` each new line as it comes, until interrupted or the
//! machine stops sending.

use super::http::{get, get_lines, Endpoint, Failure};
use super::{api_error, decode, unit_name};
use crate::since::{self, Since};
use crate::timestamp::{now_ms, parse_rfc3339};
use flotilla_units::protocol::LogLine;
use std::io::Write;

/// What was asked.
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
    /// The machine (a global unit runs on several).
    pub machine: Option<String>,
}

/// Parses the verb's arguments.
pub fn parse(args: &[String]) -> Result<Ask, String> {
    let mut unit = None;
    let (mut lines, mut since, mut follow, mut machine) = (None, None, false, None);
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (a, None),
        };
        let mut value = |what: &str| {
            inline
                .clone()
                .or_else(|| {
                    i += 1;
                    args.get(i).cloned()
                })
                .ok_or(format!("{name} needs {what}"))
        };
        match name {
            "-n" | "--lines" => {
                let v = value("a number")?;
                lines = Some(
                    v.parse::<usize>()
                        .map_err(|_| format!("{name} {v}: not a number"))?,
                );
            }
            "--since" => {
                let v = value("a time")?;
                since = Some(since::parse(&v).map_err(|e| format!("--since {v}: {e}"))?);
            }
            "-f" | "--follow" => follow = true,
            "--machine" => machine = Some(value("a machine ID")?),
            _ if a.len() > 1 && a.starts_with('-') => return Err(format!("unknown option {a:?}")),
            _ if unit.is_none() => unit = Some(unit_name(a)),
            _ => return Err("logs takes one unit".to_string()),
        }
        i += 1;
    }
    Ok(Ask {
        unit: unit.ok_or("logs needs a unit")?,
        lines,
        since,
        follow,
        machine,
    })
}

/// The answer without following.
#[derive(serde::Deserialize)]
struct Answer {
    lines: Vec<LogLine>,
}

/// Runs the verb.
pub fn run(ep: &Endpoint, ask: &Ask) -> Result<(), Failure> {
    let since = ask.since.map(|s| s.resolve(now_ms()));
    // With --since the lines are chosen here: ask for all the machine sends.
    let want = ask.lines.filter(|_| since.is_none());
    let mut path = format!("flotilla/v1/logs/{}", ask.unit);
    let mut sep = '?';
    if let Some(m) = &ask.machine {
        path.push_str(&format!("{sep}machine={m}"));
        sep = '&';
    }
    if let Some(n) = want {
        if n == 0 && !ask.follow {
            return Ok(());
        }
        path.push_str(&format!("{sep}lines={n}"));
        sep = '&';
    }
    let out = std::io::stdout();
    let mut out = out.lock();
    let keep = |l: &LogLine| since.is_none_or(|s| parse_rfc3339(&l.time).is_none_or(|t| t >= s));
    if !ask.follow {
        let r = get(ep, &path)?;
        if r.status != 200 {
            return Err(Failure::failed(api_error(&r.body, r.status)));
        }
        let a: Answer = decode("log answer", &r.body)?;
        let mut lines: Vec<&LogLine> = a.lines.iter().filter(|l| keep(l)).collect();
        if let Some(n) = ask.lines {
            let drop = lines.len().saturating_sub(n);
            lines.drain(..drop);
        }
        for l in lines {
            if writeln!(out, "{}", l.line).is_err() {
                return Ok(());
            }
        }
        return Ok(());
    }
    path.push_str(&format!("{sep}follow=true"));
    let (status, body) = get_lines(ep, &path)?;
    if status != 200 {
        let text: Vec<String> = body.map_while(Result::ok).collect();
        return Err(Failure::failed(api_error(
            text.join("\n").as_bytes(),
            status,
        )));
    }
    for line in body {
        let Ok(line) = line else {
            return Err(Failure::failed("the API closed the log stream"));
        };
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&line)
            .map_err(|e| Failure::failed(format!("the API sent a bad log line: {e}")))?;
        if let Some(e) = v.get("error").and_then(|e| e.as_str()) {
            return Err(Failure::failed(e.to_string()));
        }
        let l: LogLine = serde_json::from_value(v)
            .map_err(|e| Failure::failed(format!("the API sent a bad log line: {e}")))?;
        if keep(&l) && (writeln!(out, "{}", l.line).is_err() || out.flush().is_err()) {
            return Ok(());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn options_as_initctl_logs() {
        assert_eq!(
            parse(&args("web -n 5 -f")),
            Ok(Ask {
                unit: "web.service".into(),
                lines: Some(5),
                since: None,
                follow: true,
                machine: None,
            })
        );
        assert_eq!(
            parse(&args("--lines=3 db.socket")).map(|a| (a.unit, a.lines)),
            Ok(("db.socket".into(), Some(3)))
        );
        assert!(parse(&args("web --since -5min")).is_ok_and(|a| a.since.is_some()));
        assert_eq!(
            parse(&args("g --machine=m1")).map(|a| a.machine),
            Ok(Some("m1".to_string()))
        );
        assert_eq!(parse(&args("")), Err("logs needs a unit".into()));
        assert_eq!(parse(&args("a b")), Err("logs takes one unit".into()));
        assert_eq!(parse(&args("a -n x")), Err("-n x: not a number".into()));
        assert_eq!(parse(&args("a -n")), Err("-n needs a number".into()));
        assert_eq!(parse(&args("a -x")), Err("unknown option \"-x\"".into()));
    }
}
