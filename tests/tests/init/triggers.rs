//! System tests of the trigger units (`timer`) through the real `init`
//! and `initctl` binaries (harness: `tests/src/`): a systemd `.timer`
//! beside its `.service` in the units directory fires the oneshot, which
//! writes a file; `initctl status` shows the next elapse and the last
//! trigger; a `Persistent=` timer's stamp lands in the state directory
//! (`timers/stamp-NAME`, systemd's stamp file).

use flotilla_tests::init::TestDir;
use flotilla_tests::{wait_for, WAIT};
use flotilla_units::state::UnitState;

/// A root unit `default` (virtual) that depends on `deps`.
fn default_on(dir: &TestDir, deps: &str) {
    dir.unit(
        "default",
        &format!("unit: default\ntype: virtual\ndepends-on: [{deps}]\n"),
    );
}

/// `stamp.timer` (with `timer_keys`) and `stamp.service`, a oneshot that
/// appends a line to `fired` in the test's directory.
fn stamp_units(dir: &TestDir, timer_keys: &str) {
    let out = dir.join("fired");
    dir.file(
        "units/stamp.service",
        &format!(
            "[Service]\nType=oneshot\nExecStart=/bin/sh -c 'echo fired >> {}'\n",
            out.display()
        ),
    );
    dir.file("units/stamp.timer", &format!("[Timer]\n{timer_keys}"));
}

#[test]
fn a_timer_fires_its_oneshot_once_on_active_sec() {
    let dir = TestDir::new();
    stamp_units(&dir, "OnActiveSec=1s\nAccuracySec=1ms\n");
    default_on(&dir, "stamp.timer");
    let init = dir.start("default");
    let t = init.wait_state("stamp.timer", UnitState::Running);
    assert!(
        t.status.starts_with("next elapse ") && t.status.contains("not triggered yet"),
        "{}",
        t.status
    );
    assert_eq!(
        init.unit("stamp.service").state,
        UnitState::Disabled,
        "a timer does not pull its unit in before it fires"
    );
    // systemctl list-timers: the next elapse within the second, nothing
    // triggered yet.
    let out = dir.systemctl(&["list-timers", "--no-pager"]);
    out.expect(0);
    let row = out
        .stdout
        .lines()
        .find(|l| l.contains("stamp.timer"))
        .unwrap_or_else(|| panic!("no row: {out:?}"));
    assert!(
        row.contains(" UTC ")
            && (row.contains("ms left") || row.contains("1s left") || row.contains("0s left"))
            && row.ends_with("stamp.timer stamp.service"),
        "{out:?}"
    );
    assert!(out.stdout.contains("\n1 timer listed.\n"), "{out:?}");
    let fired = dir.join("fired");
    wait_for(WAIT, "the timer's oneshot to write its file", || {
        fired.exists().then_some(())
    });
    // Nothing is left to fire: the timer says when it last did.
    let t = init.wait_unit("stamp.timer", "elapsed", |u| {
        u.state == UnitState::Exited && u.status.contains("last trigger ")
    });
    assert!(
        t.status.starts_with("elapsed; last trigger 20"),
        "{}",
        t.status
    );
    // The oneshot settled and left the triggered set.
    init.wait_state("stamp.service", UnitState::Disabled);
    assert_eq!(dir.lines("fired"), ["fired"]);
    let shown = init
        .ctl(&["status", "stamp.timer"])
        .expect(0)
        .stdout
        .clone();
    assert!(shown.contains("last trigger"), "{shown}");
}

#[test]
fn on_unit_active_sec_repeats_and_a_persistent_stamp_is_kept() {
    let dir = TestDir::new();
    stamp_units(
        &dir,
        "OnActiveSec=100ms\nOnUnitActiveSec=300ms\nAccuracySec=1ms\nPersistent=yes\nOnCalendar=2000-01-01\n",
    );
    default_on(&dir, "stamp.timer");
    let config = dir.file("init.yaml", "{}\n");
    let init = dir.init().target("default").config(config).start();
    wait_for(WAIT, "the oneshot to run three times", || {
        (dir.join("fired").exists() && dir.lines("fired").len() >= 3).then_some(())
    });
    assert_eq!(init.unit("stamp.timer").state, UnitState::Running);
    // Its stamp is systemd's: a file whose modification time is the last
    // trigger (`timers/stamp-NAME` in the state directory when the init is
    // not PID 1), made at the timer's start and set at each trigger.
    let stamp = dir.join("timers/stamp-stamp.timer");
    wait_for(WAIT, "the stamp file", || stamp.exists().then_some(()));
    let us = std::fs::metadata(&stamp)
        .and_then(|m| m.modified())
        .expect("the stamp's time")
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0);
    let now_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0);
    assert!(us <= now_us && now_us - us < 60_000_000, "{us} vs {now_us}");
}

/// `OnFailure=`: a service that fails for good (no `Restart=`) starts the
/// unit it names, which runs once; `init --check` takes the key.
#[test]
fn on_failure_starts_the_named_unit_once() {
    let dir = TestDir::new();
    let alerted = dir.join("alerted");
    dir.file(
        "units/alert.service",
        &format!(
            "[Service]\nType=oneshot\nExecStart=/bin/sh -c 'echo alert \
             $$MONITOR_SERVICE_RESULT $$MONITOR_EXIT_CODE $$MONITOR_EXIT_STATUS \
             $$MONITOR_UNIT $${{#MONITOR_INVOCATION_ID}} >> {}'\n",
            alerted.display()
        ),
    );
    dir.file(
        "units/flaky.service",
        "[Unit]\nOnFailure=alert.service\n[Service]\nExecStart=/bin/sh -c 'exit 3'\n",
    );
    default_on(&dir, "flaky.service");
    let units = dir.units().display().to_string();
    let out = dir.run_init(&["--check", "--units", &units]);
    out.expect(0);
    assert!(!out.stdout.contains("OnFailure"), "{}", out.stdout);
    let init = dir.start("default");
    let flaky = init.wait_state("flaky.service", UnitState::Failed);
    assert_eq!(flaky.status, "exit status 3", "{flaky:?}");
    // Told how flaky ended, as systemd tells it (MONITOR_*).
    let line = "alert exit-code exited 3 flaky.service 32";
    wait_for(WAIT, "the OnFailure= unit's line", || {
        (dir.lines("alerted") == [line]).then_some(())
    });
    let alert = init.wait_unit("alert.service", "settled", |u| !u.required);
    assert_ne!(alert.state, UnitState::Failed, "{alert:?}");
    assert_eq!(dir.lines("alerted"), [line], "once");
}

/// `OnSuccess=`: a oneshot done (without `RemainAfterExit=`, so inactive
/// as systemd sees it) starts the unit it names, told it succeeded; its
/// `ExecStartPost=` is not told.
#[test]
fn on_success_starts_the_named_unit_with_how_the_unit_ended() {
    let dir = TestDir::new();
    let noted = dir.join("noted");
    let n = noted.display();
    dir.file(
        "units/note.service",
        &format!(
            "[Service]\nType=oneshot\n\
             ExecStart=/bin/sh -c 'echo start $$MONITOR_SERVICE_RESULT $$MONITOR_EXIT_CODE \
             $$MONITOR_EXIT_STATUS $$MONITOR_UNIT >> {n}'\n\
             ExecStartPost=/bin/sh -c 'echo post $${{MONITOR_UNIT:-none}} >> {n}'\n"
        ),
    );
    dir.file(
        "units/job.service",
        "[Unit]\nOnSuccess=note.service\n[Service]\nType=oneshot\nExecStart=/bin/true\n",
    );
    default_on(&dir, "job.service");
    let init = dir.start("default");
    wait_for(WAIT, "the OnSuccess= unit's lines", || {
        (dir.lines("noted") == ["start success exited 0 job.service", "post none"]).then_some(())
    });
    let note = init.wait_unit("note.service", "settled", |u| !u.required);
    assert_ne!(note.state, UnitState::Failed, "{note:?}");
}

/// `BindsTo=` + `After=` (testsuite-57-binds-to.service): the unit it
/// is bound to ends by itself with a clean exit (inactive as systemd sees
/// it), so the bound unit is stopped, its `ExecStopPost=` run, and stays
/// stopped.
#[test]
fn a_unit_bound_to_a_service_that_exits_cleanly_stops() {
    let dir = TestDir::new();
    let stopped = dir.join("stopped");
    dir.file(
        "units/short.service",
        "[Service]\nExecStart=/bin/sleep 0.5\n",
    );
    dir.file(
        "units/bound.service",
        &format!(
            "[Unit]\nBindsTo=short.service\nAfter=short.service\n\
             [Service]\nExecStart=/bin/sleep infinity\n\
             ExecStopPost=/bin/sh -c 'echo stopped >> {}'\n",
            stopped.display()
        ),
    );
    default_on(&dir, "bound.service");
    let init = dir.start("default");
    wait_for(WAIT, "bound.service's ExecStopPost= line", || {
        (dir.lines("stopped") == ["stopped"]).then_some(())
    });
    let bound = init.wait_unit("bound.service", "stopped", |u| {
        u.state == UnitState::Disabled && !u.required
    });
    assert_eq!(bound.state, UnitState::Disabled, "{bound:?}");
    assert_eq!(dir.lines("stopped"), ["stopped"], "stopped once");
}

/// `SuccessAction=exit`: the job's success shuts the init down (exit 0,
/// outside PID 1); `FailureAction=poweroff` of a unit that fails for good
/// does the same, the console naming the unit and the key.
#[test]
fn a_units_action_shuts_the_system_down() {
    for (unit, expect) in [
        (
            "[Unit]\nSuccessAction=exit\n[Service]\nType=oneshot\nExecStart=/bin/true\n",
            "job.service: SuccessAction=exit: stopping every unit",
        ),
        (
            "[Unit]\nFailureAction=poweroff-force\n[Service]\nExecStart=/bin/false\n",
            "job.service: FailureAction=poweroff: stopping every unit",
        ),
    ] {
        let dir = TestDir::new();
        dir.file("units/job.service", unit);
        dir.unit("keep", "unit: keep\nexec-start: sleep 1000\n");
        default_on(&dir, "job.service, keep");
        // The whole system may be up and down again before the test
        // reaches the control socket.
        let mut init = dir.init().target("default").may_end_at_once().start();
        let code = init.wait_exit();
        let out = init.output();
        assert!(out.contains(expect), "{out}");
        assert!(out.contains("stopping keep"), "every unit stopped: {out}");
        assert_eq!(code, 0, "{out}");
    }
}
