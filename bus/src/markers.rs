//! A unit's markers (systemd's `Markers=`, docs/dbus.md, "Markers"):
//! `needs-reload` and `needs-restart`, set at run time by
//! `systemctl set-property UNIT Markers=…` (never written to a file),
//! shown as the unit's `Markers` property, and acted on by the manager's
//! `EnqueueMarkedJobs` (`systemctl reload-or-restart --marked`). Pure:
//! the words read, the set after a state change, the job a set asks
//! for; the bus side keeps the sets ([`crate::hub::Hub`]).

use flotilla_units::state::UnitState;

/// One marker, as a bit of a set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// `needs-reload`.
    NeedsReload = 1,
    /// `needs-restart`.
    NeedsRestart = 2,
}

/// Every marker, in systemd's order (how `Markers` lists them).
const ALL: [(Marker, &str); 2] = [
    (Marker::NeedsReload, "needs-reload"),
    (Marker::NeedsRestart, "needs-restart"),
];

/// A set of markers.
pub type Markers = u8;

/// The set `words` makes of `now`, as systemd reads `Markers=`: plain
/// words replace the set; words each prefixed `+` or `-` add to it or
/// take from it (no words leave it as it is, as systemd's); the two
/// kinds mixed, or a word that names no marker, are an error, with the
/// set unchanged.
pub fn apply(now: Markers, words: &[String]) -> Result<Markers, String> {
    let (mut plain, mut relative) = (false, false);
    let (mut set, mut cleared) = (0u8, 0u8);
    for w in words {
        let (word, on) = match w.strip_prefix('+') {
            Some(rest) => {
                relative = true;
                (rest, true)
            }
            None => match w.strip_prefix('-') {
                Some(rest) => {
                    relative = true;
                    (rest, false)
                }
                None => {
                    plain = true;
                    (w.as_str(), true)
                }
            },
        };
        let Some((m, _)) = ALL.iter().find(|(_, n)| *n == word) else {
            return Err(format!(
                "Unknown marker \"{word}\": a marker is needs-reload or needs-restart."
            ));
        };
        let bit = *m as u8;
        if on {
            set |= bit;
            cleared &= !bit;
        } else {
            cleared |= bit;
            set &= !bit;
        }
    }
    if plain && relative {
        return Err(
            "Bad marker syntax: give the markers, or each with + or -, not both.".to_string(),
        );
    }
    if plain {
        return Ok(set);
    }
    Ok((now | set) & !cleared)
}

/// The names of a set, in systemd's order.
pub fn names(m: Markers) -> Vec<String> {
    ALL.iter()
        .filter(|(b, _)| m & *b as u8 != 0)
        .map(|(_, n)| n.to_string())
        .collect()
}

/// The set left once the unit changed to `state`: systemd clears both
/// when a unit becomes inactive or failed, which a restart passes through
/// (flotilla tells the stop that begins it, and the start after it), and
/// `needs-reload` when it reloads.
pub fn after(m: Markers, state: UnitState) -> Markers {
    match state {
        UnitState::Stopping | UnitState::Disabled | UnitState::Failed | UnitState::Starting => 0,
        UnitState::Reloading => m & !(Marker::NeedsReload as u8),
        _ => m,
    }
}

/// What `EnqueueMarkedJobs` asks of a unit with the set `m`, as systemd
/// does: a try-restart for `needs-restart`, a reload-or-try-restart for
/// `needs-reload` alone (`ReloadOrTryRestart`), nothing without one.
pub fn job(m: Markers) -> Option<&'static str> {
    if m & Marker::NeedsRestart as u8 != 0 {
        Some("TryRestart")
    } else if m & Marker::NeedsReload as u8 != 0 {
        Some("ReloadOrTryRestart")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RELOAD: Markers = Marker::NeedsReload as u8;
    const RESTART: Markers = Marker::NeedsRestart as u8;
    const BOTH: Markers = RELOAD | RESTART;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn words_set_add_and_take_as_systemd_reads_them() {
        // (set before, words, set after)
        let table: &[(Markers, &str, Markers)] = &[
            (0, "needs-restart", RESTART),
            (RELOAD, "needs-restart", RESTART),
            (0, "needs-reload needs-restart", BOTH),
            (BOTH, "", BOTH),
            (RELOAD, "+needs-restart", BOTH),
            (BOTH, "-needs-reload", RESTART),
            (RESTART, "-needs-restart +needs-reload", RELOAD),
            (0, "+needs-reload -needs-reload", 0),
            (RESTART, "-needs-reload", RESTART),
        ];
        for (before, w, want) in table {
            assert_eq!(apply(*before, &words(w)), Ok(*want), "{before} {w:?}");
        }
    }

    #[test]
    fn unknown_words_and_mixed_kinds_are_refused() {
        for w in [
            "needs-stop",
            "restart",
            "+needs-restart needs-reload",
            "needs-reload -needs-restart",
        ] {
            let got = apply(RELOAD, &words(w));
            assert!(
                got.as_ref().is_err_and(|e| e.contains("marker")),
                "{w}: {got:?}"
            );
        }
    }

    #[test]
    fn names_are_listed_in_systemds_order() {
        assert_eq!(names(0), Vec::<String>::new());
        assert_eq!(names(RESTART), ["needs-restart"]);
        assert_eq!(names(BOTH), ["needs-reload", "needs-restart"]);
    }

    #[test]
    fn a_stop_or_failure_clears_both_and_a_reload_needs_reload() {
        use UnitState::*;
        let table: &[(UnitState, Markers)] = &[
            (Stopping, 0),
            (Disabled, 0),
            (Failed, 0),
            (Reloading, RESTART),
            (Running, BOTH),
            (Starting, 0),
            (Waiting, BOTH),
            (Exited, BOTH),
        ];
        for (state, want) in table {
            assert_eq!(after(BOTH, *state), *want, "{state:?}");
        }
    }

    #[test]
    fn restart_wins_over_reload() {
        assert_eq!(job(0), None);
        assert_eq!(job(RELOAD), Some("ReloadOrTryRestart"));
        assert_eq!(job(RESTART), Some("TryRestart"));
        assert_eq!(job(BOTH), Some("TryRestart"));
    }
}
