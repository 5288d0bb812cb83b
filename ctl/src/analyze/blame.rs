//! `initctl analyze blame`: every unit by the time its last start took,
//! slowest first, as `systemd-analyze blame` prints them.
//!
//! A unit is listed when it became active after its last start (the time is
//! `active_ms - start_ms`) or when that start failed (`end_ms - start_ms`,
//! marked `(failed)`). Ties are listed by name.

use super::activation_ms;
use crate::duration::format_ms;
use flotilla_units::protocol::AnalyzeData;
use flotilla_units::state::UnitState;

/// One line of the blame list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blame {
    /// The unit.
    pub unit: String,
    /// How long its last start took.
    pub ms: u64,
    /// Whether that start failed.
    pub failed: bool,
}

/// The units by start time, slowest first.
pub fn blame(data: &AnalyzeData) -> Vec<Blame> {
    let mut list: Vec<Blame> = data
        .units
        .iter()
        .filter_map(|u| {
            if let Some(ms) = activation_ms(u) {
                return Some(Blame {
                    unit: u.unit.clone(),
                    ms,
                    failed: false,
                });
            }
            match (u.state, u.start_ms, u.end_ms) {
                (UnitState::Failed, Some(s), Some(e)) if e >= s => Some(Blame {
                    unit: u.unit.clone(),
                    ms: e - s,
                    failed: true,
                }),
                _ => None,
            }
        })
        .collect();
    list.sort_by(|a, b| b.ms.cmp(&a.ms).then_with(|| a.unit.cmp(&b.unit)));
    list
}

/// The list as text: the time right-aligned, then the unit.
pub fn render(list: &[Blame]) -> String {
    let times: Vec<String> = list.iter().map(|b| format_ms(b.ms)).collect();
    let width = times.iter().map(String::len).max().unwrap_or(0);
    let mut out = String::new();
    for (b, t) in list.iter().zip(&times) {
        out.push_str(&format!("{t:>width$} {}", b.unit));
        if b.failed {
            out.push_str(" (failed)");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::tests::{boot, timing};

    #[test]
    fn slowest_first() {
        let list = blame(&boot());
        let got: Vec<(&str, u64, bool)> = list
            .iter()
            .map(|b| (b.unit.as_str(), b.ms, b.failed))
            .collect();
        assert_eq!(
            got,
            vec![
                ("opt", 2000, true),
                ("db", 1200, false),
                ("web", 1035, false),
                ("cache", 290, false),
                ("net", 100, false),
                ("default", 0, false),
            ]
        );
    }

    #[test]
    fn rendered_like_systemd_analyze() {
        assert_eq!(
            render(&blame(&boot())),
            concat!(
                "    2s opt (failed)\n",
                "  1.2s db\n",
                "1.035s web\n",
                " 290ms cache\n",
                " 100ms net\n",
                "   0ms default\n",
            )
        );
        assert_eq!(render(&[]), "");
    }

    #[test]
    fn leaves_out_units_without_a_finished_start() {
        let mut d = boot();
        d.units = vec![
            timing("starting", UnitState::Starting, Some(5), None, None),
            timing("restarted", UnitState::Starting, Some(500), Some(100), None),
            timing("never", UnitState::Waiting, None, None, None),
            timing("a", UnitState::Running, Some(0), Some(7), None),
            timing("b", UnitState::Running, Some(3), Some(10), None),
        ];
        let names: Vec<String> = blame(&d).into_iter().map(|b| b.unit).collect();
        assert_eq!(names, ["a", "b"]);
    }
}
