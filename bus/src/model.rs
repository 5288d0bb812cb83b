//! flotilla's unit, as systemd names and describes it: the unit's systemd
//! name ([`systemd_name`]), its `ActiveState`, `SubState`, `LoadState`
//! and `Result` ([`View`]), the timestamps systemd reports, and whether a
//! job on it has settled ([`settled`]), and which states it has not told
//! yet after a gap in the init's changes ([`catch_up`]). Pure: the bus
//! side reads a unit from the init (`status`) and shows it through this.

use flotilla_units::protocol::UnitStatus;
use flotilla_units::spec::UnitType;
use flotilla_units::state::{FailureKind, UnitState};
use std::collections::HashMap;

/// The unit-type suffixes systemd knows.
pub const SUFFIXES: [&str; 11] = [
    ".service",
    ".target",
    ".socket",
    ".timer",
    ".path",
    ".mount",
    ".slice",
    ".scope",
    ".device",
    ".swap",
    ".automount",
];

/// Whether `name` ends in one of systemd's unit suffixes.
pub fn has_suffix(name: &str) -> bool {
    SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// The suffix systemd gives a unit of this type.
pub fn suffix_of(kind: UnitType) -> &'static str {
    match kind {
        UnitType::Virtual => ".target",
        UnitType::Timer => ".timer",
        UnitType::Socket => ".socket",
        UnitType::Path => ".path",
        UnitType::Slice => ".slice",
        _ => ".service",
    }
}

/// Whether systemd's freezer applies to it (`Freeze`, `CanFreeze`): a
/// unit that runs processes, or a slice.
pub fn freezable(s: &UnitStatus) -> bool {
    s.source == flotilla_units::protocol::SLICE_SOURCE
        || s.kind.row().runs != flotilla_units::spec::Runs::Nothing
}

/// A unit's name as systemd has it: flotilla's YAML units are named
/// without a suffix (`web`); systemd's are not (`web.service`).
pub fn systemd_name(s: &UnitStatus) -> String {
    if has_suffix(&s.unit) {
        s.unit.clone()
    } else {
        format!("{}{}", s.unit, suffix_of(s.kind))
    }
}

/// The names flotilla may have for what a client calls `name`: the name
/// itself, then, for `web.service` (or any suffix), the YAML unit `web`;
/// a name without a suffix is systemd's `.service`, as systemctl takes it.
pub fn candidates(name: &str) -> Vec<String> {
    if let Some(bare) = SUFFIXES.iter().find_map(|s| name.strip_suffix(s)) {
        if bare.is_empty() {
            return vec![name.to_string()];
        }
        return vec![name.to_string(), bare.to_string()];
    }
    vec![format!("{name}.service"), name.to_string()]
}

/// Whether a client's `name` means the unit `s`: its systemd name, its
/// own name, an alias of it, or (for a name without a suffix, which
/// systemctl takes as a `.service`) the service of that name.
pub fn means(name: &str, s: &UnitStatus) -> bool {
    let sysname = systemd_name(s);
    sysname == name
        || s.unit == name
        || is_alias(name, &sysname, s)
        || (!has_suffix(name) && sysname == format!("{name}.service"))
}

/// An alias is a link to the unit's file under another name of the same
/// type, which the unit provides (`dbus-org.freedesktop.hostname1.service`
/// is `systemd-hostnamed.service`, what D-Bus activation asks for). A
/// target the unit provides under another type's name is not one.
fn is_alias(name: &str, sysname: &str, s: &UnitStatus) -> bool {
    let suffix = SUFFIXES.iter().find(|x| sysname.ends_with(*x));
    suffix.is_some_and(|x| name.ends_with(x)) && s.provides.iter().any(|p| p == name)
}

/// The state systemd shows of `s`: a unit skipped at its start by a
/// failed condition is `exited` in flotilla (what needs it goes on, as
/// under systemd), but systemd never started it: it shows `inactive`
/// (`dead`), with `Result=success` (docs/dbus.md). So does a service that
/// ran to its end and does not remain after its exit (`ended`): flotilla
/// keeps it `exited` so that it is not started again while required.
pub fn shown(s: &UnitStatus) -> UnitState {
    match s.state {
        UnitState::Exited if s.skipped || s.ended => UnitState::Disabled,
        st => st,
    }
}

/// systemd's `ActiveState` of `s`: while its directories are removed
/// (`systemctl clean`), `maintenance`; else that of the state shown.
pub fn active_of(s: &UnitStatus) -> &'static str {
    if s.cleaning {
        return "maintenance";
    }
    if auto_restart(s) {
        return "activating";
    }
    active_state(s.kind, shown(s))
}

/// A failed unit whose `Restart=` starts it again after its delay:
/// systemd's `activating`/`auto-restart` between attempts, never
/// `failed` until it gives up (its test 11 waits for `failed` as the end).
fn auto_restart(s: &UnitStatus) -> bool {
    s.state == UnitState::Failed && s.restart_in_ms.is_some()
}

/// systemd's `SubState` of `s`: `cleaning` while its directories are
/// removed; else that of the state shown.
pub fn sub_of(s: &UnitStatus) -> &'static str {
    if s.cleaning {
        return "cleaning";
    }
    if auto_restart(s) {
        return "auto-restart";
    }
    if is_device(s) {
        // A device unit is `plugged` while its device is there; flotilla
        // has no `tentative` (docs/systemd-units.md, "Device units").
        return if shown(s).is_active() {
            "plugged"
        } else {
            "dead"
        };
    }
    if is_mount(s) {
        return mount_sub_state(shown(s));
    }
    sub_state(s.kind, shown(s))
}

/// Whether `s` is a mount unit (the init's, of a `[Mount]` file: a
/// oneshot running mount(8)).
pub fn is_mount(s: &UnitStatus) -> bool {
    s.kind == UnitType::Oneshot && s.unit.ends_with(".mount")
}

/// systemd's `SubState` of a mount unit in `state`.
fn mount_sub_state(state: UnitState) -> &'static str {
    match state {
        UnitState::Running | UnitState::Exited | UnitState::Reloading => "mounted",
        UnitState::Starting => "mounting",
        UnitState::Stopping => "unmounting",
        UnitState::Failed => "failed",
        UnitState::Disabled | UnitState::Waiting => "dead",
    }
}

/// Whether `s` is a device unit (the init's, of a device udev told of).
pub fn is_device(s: &UnitStatus) -> bool {
    s.kind == UnitType::Virtual && s.unit.ends_with(".device")
}

/// systemd's `Following` of `s`: for a device unit not named after its
/// sysfs path, the unit that is; else nothing.
pub fn following(s: &UnitStatus) -> String {
    s.device
        .as_ref()
        .and_then(|d| d.following.clone())
        .unwrap_or_default()
}

/// systemd's `ActiveState` of a flotilla state of a unit of `kind`.
pub fn active_state(kind: UnitType, state: UnitState) -> &'static str {
    match state {
        // A scope whose processes have all ended is over, as systemd's
        // (`inactive`); it then leaves the unit set.
        UnitState::Exited if kind.row().adopts() => "inactive",
        UnitState::Running | UnitState::Exited => "active",
        UnitState::Reloading => "reloading",
        UnitState::Starting => "activating",
        UnitState::Stopping => "deactivating",
        UnitState::Failed => "failed",
        UnitState::Disabled | UnitState::Waiting => "inactive",
    }
}

/// systemd's `SubState` of a flotilla state, in the words of the unit's
/// type (a target is `active`, a timer `waiting`, a socket `listening`).
pub fn sub_state(kind: UnitType, state: UnitState) -> &'static str {
    let up = state.is_active();
    match kind {
        UnitType::Virtual | UnitType::Slice if up => "active",
        UnitType::Timer | UnitType::Path if up => "waiting",
        UnitType::Socket if up => "listening",
        _ if kind.row().adopts() && state == UnitState::Exited => "dead",
        _ => match state {
            UnitState::Running => "running",
            UnitState::Exited => "exited",
            UnitState::Reloading => "reload",
            UnitState::Starting => "start",
            UnitState::Stopping => "stop",
            UnitState::Failed => "failed",
            UnitState::Disabled | UnitState::Waiting => "dead",
        },
    }
}

/// systemd's `Result` of a unit: `success`, or why it failed, as the
/// init says it (`result` in the unit's status).
pub fn result(s: &UnitStatus) -> &'static str {
    s.result.map_or("success", FailureKind::as_str)
}

/// The exit status (or killing signal) of the process whose end failed
/// the unit, as the init says it; 0 when there is none.
pub fn exit_status(s: &UnitStatus) -> i32 {
    s.exit_status.unwrap_or(0)
}

/// Microseconds since the epoch of an RFC 3339 UTC time as the init
/// writes it (`2026-11-22T04:00:00.123Z`); `None` when it is not one.
pub fn usec_of_rfc3339(t: &str) -> Option<u64> {
    let (date, time) = t.strip_suffix('Z')?.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let mut h = hms.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (hh, mm, ss) = (h.next()??, h.next()??, h.next()??);
    let digits: String = frac.chars().take(6).collect();
    let width = u32::try_from(digits.len()).ok()?;
    let micros = digits.parse::<i64>().ok()? * 10_i64.pow(6 - width);
    let secs = days_from_civil(y, m, day) * 86_400 + hh * 3600 + mm * 60 + ss;
    u64::try_from(secs * 1_000_000 + micros).ok()
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The four timestamps systemd keeps of a unit's state changes, as far as
/// the init's one `since` tells them: the moment the unit entered its
/// present state is the matching timestamp; the others are 0 (unknown).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stamps {
    /// `InactiveExitTimestamp`: the start began.
    pub inactive_exit: u64,
    /// `ActiveEnterTimestamp`.
    pub active_enter: u64,
    /// `ActiveExitTimestamp`: the stop began.
    pub active_exit: u64,
    /// `InactiveEnterTimestamp`.
    pub inactive_enter: u64,
    /// `StateChangeTimestamp`.
    pub state_change: u64,
}

/// [`Stamps`] of a unit.
pub fn stamps(s: &UnitStatus) -> Stamps {
    let t = usec_of_rfc3339(&s.since).unwrap_or(0);
    let mut out = Stamps {
        state_change: t,
        ..Stamps::default()
    };
    match s.state {
        UnitState::Running | UnitState::Exited | UnitState::Reloading => out.active_enter = t,
        UnitState::Starting => out.inactive_exit = t,
        UnitState::Stopping => out.active_exit = t,
        UnitState::Failed | UnitState::Disabled | UnitState::Waiting => out.inactive_enter = t,
    }
    out
}

/// `InvocationID`: systemd draws 16 random bytes at each activation;
/// flotilla keeps none, so the bytes are derived from what tells one
/// activation from the next: the unit's name and its main process (or,
/// for a unit without one, when its state last changed). Stable while the
/// activation lasts, different for the next (a restart is a new process);
/// there from the start on (systemd draws it as the unit begins to
/// activate: testsuite-03 reads it of a service that never becomes
/// ready), empty for a unit that is not up nor on its way, as systemd's
/// before its first start.
pub fn invocation_id(s: &UnitStatus) -> Vec<u8> {
    use std::hash::{Hash, Hasher};
    if !s.state.is_active() && !matches!(s.state, UnitState::Starting | UnitState::Stopping) {
        return Vec::new();
    }
    let half = |salt: u8| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (salt, &s.unit, s.pid, s.pid.is_none().then_some(&s.since)).hash(&mut h);
        h.finish().to_be_bytes()
    };
    let [a0, a1, a2, a3, a4, a5, a6, a7] = half(0);
    let [b0, b1, b2, b3, b4, b5, b6, b7] = half(1);
    // A version-4, variant-1 UUID, as systemd's are.
    vec![
        a0,
        a1,
        a2,
        a3,
        a4,
        a5,
        (a6 & 0x0f) | 0x40,
        a7,
        (b0 & 0x3f) | 0x80,
        b1,
        b2,
        b3,
        b4,
        b5,
        b6,
        b7,
    ]
}

/// systemd's `ReloadResult` of `s`: `success`, or why its last reload
/// failed (`exit-code`, `signal`, `timeout`, `resources`).
pub fn reload_result(s: &UnitStatus) -> &'static str {
    s.reload_result.map_or("success", |k| k.as_str())
}

/// What a job waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goal {
    /// The unit active (a start, restart).
    Up,
    /// The unit active and done reloading (a reload: systemd's reload job
    /// ends with the reload command, not at its start).
    Reloaded,
    /// The unit stopped.
    Down,
}

/// systemd's result of a job on a unit now in `s`, or `None` while it has
/// not settled: `done`, `failed`, or `dependency` for a unit held back by
/// a failed or missing dependency.
pub fn settled(goal: Goal, s: &UnitStatus) -> Option<&'static str> {
    match goal {
        Goal::Up => match s.state {
            st if st.is_active() => Some("done"),
            UnitState::Failed => Some("failed"),
            UnitState::Waiting if s.blocked_by.is_some() => Some("dependency"),
            _ => None,
        },
        // systemd fails a reload job whose reload failed; the unit stays
        // active.
        Goal::Reloaded => match s.state {
            UnitState::Reloading => None,
            st if st.is_active() && s.reload_result.is_some() => Some("failed"),
            _ => settled(Goal::Up, s),
        },
        // A unit still waiting for its dependencies never started: as
        // systemd's stop of a unit not active yet, done at once (a start
        // its trigger queues again is a job of its own: crate::queue).
        Goal::Down => match s.state {
            UnitState::Disabled | UnitState::Failed => Some("done"),
            UnitState::Waiting => Some("done"),
            _ => None,
        },
    }
}

/// [`settled`] for a unit that may have left the unit set (`None`): a
/// transient unit or a scope that was stopped or ended is gone, which
/// settles a stop (its last change may have come while the bus side was
/// not following, as when the init re-executes).
pub fn settled_or_gone(goal: Goal, s: Option<&UnitStatus>) -> Option<&'static str> {
    match s {
        Some(s) => settled(goal, s),
        None if goal == Goal::Down => Some("done"),
        None => None,
    }
}

/// The states told so far, by flotilla's unit name, brought up to `now`
/// (every unit the init has): returns the units whose state is not the
/// one last told (a unit not told before counts as changed). Units gone
/// from `now` are forgotten: their jobs end by [`settled_or_gone`].
pub fn catch_up(told: &mut HashMap<String, UnitState>, now: Vec<UnitStatus>) -> Vec<UnitStatus> {
    let before = std::mem::take(told);
    told.extend(now.iter().map(|s| (s.unit.clone(), s.state)));
    now.into_iter()
        .filter(|s| before.get(&s.unit) != Some(&s.state))
        .collect()
}

/// How many states the bus side may hold, told since it last caught up
/// with a set of `set` units, before it catches up again: a unit that
/// left the set (a scope per login, a transient unit) is forgotten then,
/// so the states stay in proportion to the set however long it runs.
pub fn told_limit(set: usize) -> usize {
    2 * set + 64
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests;
