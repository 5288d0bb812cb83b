//! Why a trigger's unit was started, when a path unit or a timer started
//! it: what systemd calls the unit's activation details. Its commands get
//! them as `TRIGGER_UNIT`, `TRIGGER_PATH`, `TRIGGER_TIMER_REALTIME_USEC`
//! and `TRIGGER_TIMER_MONOTONIC_USEC` ([`Activated::env`]), and D-Bus
//! shows them as the unit's `ActivationDetails` ([`Activated::pairs`]),
//! from that start until the unit is inactive again: `disabled` or
//! `failed` (docs/units.md, "What a triggered unit is told"). A socket's unit and an `on-failure` unit have
//! none, as under systemd.

use std::path::PathBuf;

/// The trigger that started a unit, and what it saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activated {
    /// The trigger unit's name.
    pub by: String,
    /// A path unit's: the path whose state or change fired it (for
    /// `PathExistsGlob=`, the first match).
    pub path: Option<PathBuf>,
    /// A timer's: when it elapsed, realtime and monotonic microseconds.
    pub timer: Option<(u64, u64)>,
}

impl Activated {
    /// The variables a command of the unit gets, in systemd's names.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        self.pairs()
            .into_iter()
            .map(|(k, v)| {
                let name = match k {
                    "trigger_unit" => "TRIGGER_UNIT",
                    "trigger_path" => "TRIGGER_PATH",
                    "trigger_timer_realtime_usec" => "TRIGGER_TIMER_REALTIME_USEC",
                    _ => "TRIGGER_TIMER_MONOTONIC_USEC",
                };
                (name, v)
            })
            .collect()
    }

    /// The pairs of systemd's `ActivationDetails` property, in its order:
    /// the unit first, then the path or the timer's two times.
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut out = vec![("trigger_unit", self.by.clone())];
        if let Some(p) = &self.path {
            out.push(("trigger_path", p.display().to_string()));
        }
        if let Some((real, mono)) = self.timer {
            out.push(("trigger_timer_realtime_usec", real.to_string()));
            out.push(("trigger_timer_monotonic_usec", mono.to_string()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_units_details_are_its_name_and_the_path() {
        let a = Activated {
            by: "x.path".into(),
            path: Some("/tmp/x-foo".into()),
            timer: None,
        };
        assert_eq!(
            a.pairs(),
            [
                ("trigger_unit", "x.path".into()),
                ("trigger_path", "/tmp/x-foo".into())
            ]
        );
        assert_eq!(
            a.env(),
            [
                ("TRIGGER_UNIT", "x.path".into()),
                ("TRIGGER_PATH", "/tmp/x-foo".into())
            ]
        );
    }

    #[test]
    fn a_timers_details_are_its_name_and_both_times() {
        let a = Activated {
            by: "x.timer".into(),
            path: None,
            timer: Some((1_700_000_000_000_000, 42_000_000)),
        };
        assert_eq!(
            a.env(),
            [
                ("TRIGGER_UNIT", "x.timer".into()),
                ("TRIGGER_TIMER_REALTIME_USEC", "1700000000000000".into()),
                ("TRIGGER_TIMER_MONOTONIC_USEC", "42000000".into()),
            ]
        );
    }
}
