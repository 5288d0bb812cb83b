//! Tests of the systemd view of a unit.

use super::*;

pub(crate) fn unit(name: &str, kind: UnitType, state: UnitState, status: &str) -> UnitStatus {
    UnitStatus {
        unit: name.into(),
        kind,
        state,
        status: status.into(),
        since: "2026-11-22T04:00:00.123Z".into(),
        required: true,
        ..Default::default()
    }
}

#[test]
fn names_as_systemd_has_them() {
    let web = unit(
        "web",
        UnitType::ForegroundSupervised,
        UnitState::Running,
        "",
    );
    assert_eq!(systemd_name(&web), "web.service");
    let net = unit("net", UnitType::Virtual, UnitState::Running, "");
    assert_eq!(systemd_name(&net), "net.target");
    let cron = unit("cron.service", UnitType::Oneshot, UnitState::Running, "");
    assert_eq!(systemd_name(&cron), "cron.service");
    assert_eq!(candidates("web.service"), ["web.service", "web"]);
    assert_eq!(candidates("web"), ["web.service", "web"]);
    assert_eq!(candidates(".service"), [".service"]);
    assert!(means("web.service", &web));
    assert!(means("web", &web));
    // The init answers a target's provider: `web.target` is not `web`.
    assert!(!means("web.target", &web));
    assert!(!means("webd", &web));
    assert!(means("net.target", &net));
    assert!(means("cron", &cron));
    // An alias (a link to the file under another name of its type) is the
    // unit; a target it provides under another type's name is not.
    let mut hostnamed = unit(
        "systemd-hostnamed.service",
        UnitType::ForegroundSupervised,
        UnitState::Running,
        "",
    );
    hostnamed.provides = vec![
        "systemd-hostnamed.service".into(),
        "dbus-org.freedesktop.hostname1.service".into(),
        "hostnames.target".into(),
    ];
    assert!(means("dbus-org.freedesktop.hostname1.service", &hostnamed));
    assert!(!means("hostnames.target", &hostnamed));
    assert!(!means("other.service", &hostnamed));
}

/// Between a failure and the restart `Restart=` makes: `activating`,
/// `auto-restart`; failed once no restart is pending.
#[test]
fn a_failed_unit_waiting_to_restart_is_activating() {
    let mut u = unit(
        "f.service",
        UnitType::ForegroundSupervised,
        UnitState::Failed,
        "",
    );
    u.restart_in_ms = Some(100);
    assert_eq!((active_of(&u), sub_of(&u)), ("activating", "auto-restart"));
    u.restart_in_ms = None;
    assert_eq!((active_of(&u), sub_of(&u)), ("failed", "failed"));
}

#[test]
fn states_in_systemds_words() {
    use UnitState::*;
    let cases = [
        (Running, "active", "running"),
        (Exited, "active", "exited"),
        (Reloading, "reloading", "reload"),
        (Starting, "activating", "start"),
        (Stopping, "deactivating", "stop"),
        (Failed, "failed", "failed"),
        (Disabled, "inactive", "dead"),
        (Waiting, "inactive", "dead"),
    ];
    for (st, active, sub) in cases {
        assert_eq!(active_state(UnitType::Oneshot, st), active);
        assert_eq!(sub_state(UnitType::Oneshot, st), sub);
    }
    assert_eq!(sub_state(UnitType::Virtual, Running), "active");
    assert_eq!(sub_state(UnitType::Timer, Running), "waiting");
    assert_eq!(sub_state(UnitType::Socket, Running), "listening");
    assert_eq!(sub_state(UnitType::Socket, Disabled), "dead");
    // A scope whose processes have ended is over.
    assert_eq!(active_state(UnitType::Scope, Exited), "inactive");
    assert_eq!(sub_state(UnitType::Scope, Exited), "dead");
    assert_eq!(active_state(UnitType::Scope, Running), "active");
}

/// A unit whose condition failed at its start (`exited`, skipped) is
/// shown as systemd shows one: never started, `inactive` and `dead`
/// (test 63 of systemd's suite starts such a unit by hand).
#[test]
fn a_skipped_unit_is_inactive() {
    let mut u = unit("x", UnitType::Oneshot, UnitState::Exited, "");
    assert_eq!(shown(&u), UnitState::Exited);
    u.skipped = true;
    assert_eq!(shown(&u), UnitState::Disabled);
    assert_eq!(active_state(u.kind, shown(&u)), "inactive");
    assert_eq!(sub_state(u.kind, shown(&u)), "dead");
    assert_eq!(result(&u), "success");
    // Its start job is done: it did what a start with a failed
    // condition does.
    assert_eq!(settled(Goal::Up, &u), Some("done"));
    u.state = UnitState::Running;
    assert_eq!(shown(&u), UnitState::Running);
}

/// A service that ran to its end and does not remain after its exit
/// (`exited`, `ended`) is `inactive` and `dead`, as systemd shows it:
/// `systemd-run --wait` waits for that (test 27 of systemd's suite); its
/// start job was done; one that remains stays `active`, `exited`.
#[test]
fn a_service_that_ended_without_remaining_is_inactive() {
    let mut u = unit("x", UnitType::ForegroundSupervised, UnitState::Exited, "");
    assert_eq!(active_state(u.kind, shown(&u)), "active");
    assert_eq!(sub_state(u.kind, shown(&u)), "exited");
    u.ended = true;
    assert_eq!(active_state(u.kind, shown(&u)), "inactive");
    assert_eq!(sub_state(u.kind, shown(&u)), "dead");
    assert_eq!(result(&u), "success");
    assert_eq!(settled(Goal::Up, &u), Some("done"));
}

#[test]
fn results_and_exit_statuses() {
    let t = UnitType::ForegroundSupervised;
    let mut failed = unit("x", t, UnitState::Failed, "exit status 3");
    failed.result = Some(FailureKind::ExitCode);
    failed.exit_status = Some(3);
    assert_eq!(result(&failed), "exit-code");
    assert_eq!(exit_status(&failed), 3);
    // The words do not decide: the init's typed answer does.
    let mut timeout = unit("x", t, UnitState::Failed, "exit status 3, killed");
    timeout.result = Some(FailureKind::Timeout);
    assert_eq!(result(&timeout), "timeout");
    assert_eq!(exit_status(&timeout), 0);
    let fine = unit("x", t, UnitState::Running, "ready");
    assert_eq!(result(&fine), "success");
    assert_eq!(exit_status(&fine), 0);
}

#[test]
fn rfc3339_to_microseconds() {
    assert_eq!(usec_of_rfc3339("1970-01-01T00:00:00.000Z"), Some(0));
    assert_eq!(
        usec_of_rfc3339("2026-11-22T04:00:00.123Z"),
        Some(1_795_320_000_123_000)
    );
    assert_eq!(
        usec_of_rfc3339("2000-03-01T00:00:01Z"),
        Some(951_868_801_000_000)
    );
    assert_eq!(usec_of_rfc3339("yesterday"), None);
    assert_eq!(usec_of_rfc3339(""), None);
    let s = stamps(&unit("x", UnitType::Oneshot, UnitState::Running, ""));
    assert_eq!(s.active_enter, 1_795_320_000_123_000);
    assert_eq!(s.inactive_enter, 0);
}

#[test]
fn jobs_settle() {
    let t = UnitType::ForegroundSupervised;
    let mut u = unit("x", t, UnitState::Starting, "");
    assert_eq!(settled(Goal::Up, &u), None);
    u.state = UnitState::Running;
    assert_eq!(settled(Goal::Up, &u), Some("done"));
    assert_eq!(settled(Goal::Down, &u), None);
    u.state = UnitState::Failed;
    assert_eq!(settled(Goal::Up, &u), Some("failed"));
    u.state = UnitState::Waiting;
    assert_eq!(settled(Goal::Up, &u), None);
    u.blocked_by = Some("db".into());
    assert_eq!(settled(Goal::Up, &u), Some("dependency"));
    // A stop of a unit that never started is done at once.
    assert_eq!(settled(Goal::Down, &u), Some("done"));
    u.blocked_by = None;
    assert_eq!(settled(Goal::Down, &u), Some("done"));
    u.state = UnitState::Stopping;
    assert_eq!(settled(Goal::Down, &u), None);
    u.state = UnitState::Disabled;
    assert_eq!(settled(Goal::Down, &u), Some("done"));
    // A reload job waits for the reload command, not only for an active
    // state.
    u.blocked_by = None;
    u.state = UnitState::Reloading;
    assert_eq!(settled(Goal::Up, &u), Some("done"));
    assert_eq!(settled(Goal::Reloaded, &u), None);
    u.state = UnitState::Running;
    assert_eq!(settled(Goal::Reloaded, &u), Some("done"));
    u.state = UnitState::Failed;
    assert_eq!(settled(Goal::Reloaded, &u), Some("failed"));
}

#[test]
fn a_failed_reload_fails_its_job_and_the_unit_stays_active() {
    let mut u = unit("x", UnitType::ForegroundSupervised, UnitState::Running, "");
    assert_eq!(reload_result(&u), "success");
    u.reload_result = Some(FailureKind::ExitCode);
    assert_eq!(settled(Goal::Reloaded, &u), Some("failed"));
    assert_eq!(reload_result(&u), "exit-code");
    // A start or restart job of the same unit is done: it is active.
    assert_eq!(settled(Goal::Up, &u), Some("done"));
    u.state = UnitState::Exited;
    assert_eq!(settled(Goal::Reloaded, &u), Some("failed"));
    u.reload_result = None;
    assert_eq!(settled(Goal::Reloaded, &u), Some("done"));
}

#[test]
fn a_unit_gone_from_the_set_settles_a_stop_only() {
    let u = unit("x", UnitType::Scope, UnitState::Stopping, "");
    assert_eq!(settled_or_gone(Goal::Down, Some(&u)), None);
    assert_eq!(settled_or_gone(Goal::Down, None), Some("done"));
    assert_eq!(settled_or_gone(Goal::Up, None), None);
    assert_eq!(settled_or_gone(Goal::Reloaded, None), None);
}

/// After a gap in the init's changes: a unit whose state is not the one
/// last told is told again, one never told counts as changed, and a unit
/// gone is forgotten (it counts as changed if it comes back).
#[test]
fn a_gap_tells_what_changed_in_it() {
    let mut told = std::collections::HashMap::new();
    let first = [
        unit(
            "web",
            UnitType::ForegroundSupervised,
            UnitState::Running,
            "",
        ),
        unit("session-1.scope", UnitType::Scope, UnitState::Running, ""),
    ];
    assert_eq!(catch_up(&mut told, first.to_vec()).len(), 2);
    assert!(catch_up(&mut told, first.to_vec()).is_empty());
    let after = [
        unit("web", UnitType::ForegroundSupervised, UnitState::Failed, ""),
        unit(
            "db",
            UnitType::ForegroundSupervised,
            UnitState::Starting,
            "",
        ),
    ];
    let names: Vec<String> = catch_up(&mut told, after.to_vec())
        .into_iter()
        .map(|s| s.unit)
        .collect();
    assert_eq!(names, ["web", "db"]);
    assert!(!told.contains_key("session-1.scope"));
    let back = [unit(
        "session-1.scope",
        UnitType::Scope,
        UnitState::Running,
        "",
    )];
    assert_eq!(catch_up(&mut told, back.to_vec()).len(), 1);
}

/// Scopes that came and went (one per login) stay in the states told only
/// until they outnumber the limit; catching up then keeps the set alone.
#[test]
fn scopes_that_left_are_forgotten_at_the_limit() {
    let set = [
        unit(
            "web",
            UnitType::ForegroundSupervised,
            UnitState::Running,
            "",
        ),
        unit("db", UnitType::ForegroundSupervised, UnitState::Running, ""),
    ];
    let mut told = std::collections::HashMap::new();
    catch_up(&mut told, set.to_vec());
    let limit = told_limit(set.len());
    let mut n = 0;
    while told.len() <= limit {
        n += 1;
        told.insert(format!("session-{n}.scope"), UnitState::Disabled);
    }
    assert_eq!(n, limit - set.len() + 1);
    assert!(catch_up(&mut told, set.to_vec()).is_empty());
    assert_eq!(told.len(), set.len());
}

/// A unit that a path unit started shows what it was told as systemd's
/// `ActivationDetails`, in the init's order; one that was not, an empty
/// array.
#[test]
#[allow(clippy::expect_used)]
fn activation_details_are_the_inits_pairs() {
    let mut s = unit("x.service", UnitType::Oneshot, UnitState::Exited, "");
    let details = |s: &UnitStatus| {
        let p = crate::props::unit(s, None);
        let v = p
            .into_iter()
            .find(|(n, _)| *n == "ActivationDetails")
            .expect("ActivationDetails")
            .1;
        assert_eq!(v.value_signature().to_string(), "a(ss)");
        Vec::<(String, String)>::try_from(v).expect("a(ss)")
    };
    assert!(details(&s).is_empty());
    s.activation = vec![
        ("trigger_unit".into(), "x.path".into()),
        ("trigger_path".into(), "/tmp/x-foo".into()),
    ];
    assert_eq!(details(&s), s.activation);
}

/// testsuite-03's `always-activating.service`: a unit on its way up has
/// its invocation ID (stable while it starts, another once it starts
/// again with a new process); one waiting or stopped has none.
#[test]
fn an_invocation_begins_with_the_start() {
    let starting = |pid| UnitStatus {
        pid,
        ..unit(
            "a.service",
            UnitType::ForegroundNotified,
            UnitState::Starting,
            "",
        )
    };
    let first = invocation_id(&starting(Some(10)));
    assert_eq!(first.len(), 16);
    assert_eq!(first, invocation_id(&starting(Some(10))));
    assert_ne!(first, invocation_id(&starting(Some(11))));
    for state in [UnitState::Waiting, UnitState::Disabled, UnitState::Failed] {
        let s = unit("a.service", UnitType::ForegroundNotified, state, "");
        assert!(invocation_id(&s).is_empty(), "{state:?}");
    }
}
