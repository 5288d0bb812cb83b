//! `initctl kill [-s SIGNAL] [--kill-whom=all|main] UNIT...` (and
//! systemctl's `kill`): a signal to each unit's processes, through the
//! init (`kill-unit`), which knows them: every process of the unit's
//! group and cgroup, or its main process.

use super::Ctx;
use crate::client::unexpected;
use crate::command::{usage, Topic, UsageError};
use crate::error::{CtlError, EXIT_OK};
use flotilla_units::protocol::{Reply, Request};
use flotilla_units::spec::Signal;

/// Runs the command: each unit in turn; the first error ends it.
pub fn run(
    ctx: &mut Ctx<'_>,
    units: Vec<String>,
    signal: i32,
    main_only: bool,
) -> Result<i32, CtlError> {
    for unit in units {
        match ctx.call(Request::KillUnit {
            unit,
            signal,
            main_only,
        })? {
            Reply::Accepted { .. } => {}
            other => return Err(unexpected(&other, "accepted")),
        }
    }
    Ok(EXIT_OK)
}

/// `-s`'s value: a signal's name (`HUP`, `SIGHUP`) or number.
pub fn signal(value: &str, topic: Topic) -> Result<Signal, UsageError> {
    Signal::parse(value).ok_or_else(|| usage(topic, format!("'{value}' is not a signal")))
}

/// `--kill-whom`'s value: whether only the main process gets it.
pub fn main_only(value: &str, topic: Topic) -> Result<bool, UsageError> {
    match value {
        "all" => Ok(false),
        "main" => Ok(true),
        other => Err(usage(
            topic,
            format!("--kill-whom: '{other}' is not 'all' or 'main' (flotilla tells no control process apart)"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_and_whom() {
        assert_eq!(signal("HUP", Topic::Kill).ok(), Some(Signal::HUP));
        assert_eq!(signal("SIGKILL", Topic::Kill).ok(), Some(Signal::KILL));
        assert_eq!(signal("15", Topic::Kill).ok(), Some(Signal::TERM));
        assert_eq!(
            signal("HUPP", Topic::Kill).map_err(|e| e.message),
            Err("'HUPP' is not a signal".to_string())
        );
        assert_eq!(main_only("main", Topic::Kill).ok(), Some(true));
        assert!(main_only("control", Topic::Kill).is_err());
    }
}
