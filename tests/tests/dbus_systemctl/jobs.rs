//! Jobs as systemd lists and waits for them: a start waiting for its
//! dependency, what a target pulls in, a stop of a waiting unit, a reload
//! during a start.

use super::*;

/// A reload asked while the unit is still starting waits for the start
/// and then reloads, as systemd queues the reload job after the start
/// job: what a package's trigger does right after its postinst started
/// the service (nginx's "Triggering nginx reload").
#[test]
fn a_reload_during_the_start_waits_for_it() {
    let dir = TestDir::new();
    units(&dir);
    let marker = dir.join("reloaded");
    dir.file(
        "units/slow.service",
        &format!(
            "[Service]\nExecStartPre=/bin/sleep 1\nExecStart=/bin/sleep 1000\n\
             ExecReload=/bin/touch {}\n",
            marker.display()
        ),
    );
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    systemctl(&bus, &["start", "--no-block", "slow.service"]).expect(0);
    assert_eq!(init.unit("slow.service").state, UnitState::Starting);
    systemctl(&bus, &["reload", "slow.service"]).expect(0);
    assert_eq!(init.unit("slow.service").state, UnitState::Running);
    wait_for(WAIT, "the reload command's file", || {
        marker.exists().then_some(())
    });
}

/// `systemctl list-jobs` shows the jobs of what a start pulls in, as
/// systemd's: `after.service` requires and is ordered after `slow.service`,
/// a oneshot that runs until the test lets it end; a start of `after`
/// lists `slow`'s start job `running` and `after`'s `waiting`, each with
/// its number (`GetJob`, the unit's `Job` property), and none once both
/// are up.
#[test]
fn list_jobs_shows_a_start_waiting_for_its_dependency() {
    let dir = TestDir::new();
    units(&dir);
    let go = dir.join("go");
    dir.file(
        "units/slow.service",
        &format!(
            "[Service]\nType=oneshot\nExecStart=/bin/sh -c 'while [ ! -e {} ]; do sleep 0.1; done'\n",
            go.display()
        ),
    );
    dir.file(
        "units/after.service",
        "[Unit]\nRequires=slow.service\nAfter=slow.service\n\
         [Service]\nExecStart=/bin/sleep 1000\n",
    );
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    systemctl(&bus, &["start", "--no-block", "after.service"]).expect(0);

    let rows = wait_for(WAIT, "both jobs in list-jobs", || {
        let out = systemctl(&bus, &["list-jobs", "--no-legend"])
            .expect(0)
            .stdout
            .clone();
        (out.contains("slow.service") && out.contains("after.service")).then_some(out)
    });
    let row = |unit: &str| -> Vec<String> {
        rows.lines()
            .find(|l| l.contains(unit))
            .unwrap_or_else(|| panic!("no {unit} in {rows}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    let (slow, after) = (row("slow.service"), row("after.service"));
    assert_eq!(&slow[1..], ["slow.service", "start", "running"], "{rows}");
    assert_eq!(&after[1..], ["after.service", "start", "waiting"], "{rows}");
    assert_eq!(init.unit("after.service").state, UnitState::Waiting);
    // The job by number, and as the unit's property.
    let id = &after[0];
    let shown = systemctl(&bus, &["show", "-P", "Job", "after.service"]);
    assert_eq!(shown.expect(0).stdout.trim(), id.as_str(), "{rows}");
    let path = format!("/org/freedesktop/systemd1/job/{id}");
    let state = busctl(
        &bus.socket,
        None,
        &[
            "get-property",
            "org.freedesktop.systemd1",
            &path,
            "org.freedesktop.systemd1.Job",
            "State",
        ],
    );
    assert_eq!(state.expect(0).stdout.trim(), "s \"waiting\"");

    std::fs::write(&go, "").expect("go");
    init.wait_state("after.service", UnitState::Running);
    wait_for(WAIT, "no jobs in list-jobs", || {
        let out = systemctl(&bus, &["list-jobs"]).expect(0).stdout.clone();
        out.contains("No jobs running.").then_some(())
    });
}

/// systemd's testsuite-03 first reads `list-jobs` after `systemctl start
/// --no-block hello-after-sleep.target` (its units, as Debian's
/// systemd-tests ships them, with a sleep the test ends): the target wants
/// `sleep.service` and `hello.service` and sits between them (`After=`
/// one, `Before=` the other), so the oneshot's start job is `running` and
/// the target's and `hello`'s are `waiting`.
#[test]
fn list_jobs_shows_what_a_target_pulls_in() {
    let dir = TestDir::new();
    let (go, _) = hello_after_sleep(&dir);
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    systemctl(&bus, &["start", "--no-block", "hello-after-sleep.target"]).expect(0);
    let rows = wait_for(WAIT, "hello.service's job in list-jobs", || {
        let out = systemctl(&bus, &["list-jobs"]).expect(0).stdout.clone();
        out.contains("hello.service").then_some(out)
    });
    let state = |unit: &str| -> Option<String> {
        let l = rows.lines().find(|l| l.contains(unit))?;
        let words: Vec<&str> = l.split_whitespace().collect();
        Some(format!("{} {}", words.get(2)?, words.get(3)?))
    };
    assert_eq!(
        state("sleep.service").as_deref(),
        Some("start running"),
        "{rows}"
    );
    assert_eq!(
        state("hello.service").as_deref(),
        Some("start waiting"),
        "{rows}"
    );
    assert_eq!(
        state("hello-after-sleep.target").as_deref(),
        Some("start waiting"),
        "{rows}"
    );
    assert!(rows.contains("3 jobs listed."), "{rows}");

    std::fs::write(&go, "").expect("go");
    wait_for(WAIT, "no jobs in list-jobs", || {
        let out = systemctl(&bus, &["list-jobs"]).expect(0).stdout.clone();
        out.contains("No jobs running.").then_some(())
    });
}

/// testsuite-03's units: `hello-after-sleep.target` wants `sleep.service`
/// (a oneshot that runs until the test makes the returned `go` file) and
/// `hello.service` (which writes the returned `hello` file), and is
/// ordered after the one and before the other.
fn hello_after_sleep(dir: &TestDir) -> (std::path::PathBuf, std::path::PathBuf) {
    units(dir);
    let go = dir.join("go");
    let hello = dir.join("hello");
    dir.file(
        "units/hello-after-sleep.target",
        "[Unit]\nWants=sleep.service hello.service\nAfter=sleep.service\n\
         Before=hello.service\n",
    );
    dir.file(
        "units/hello.service",
        &format!(
            "[Service]\nExecStart=/bin/sh -c 'echo Hello World > {}'\n",
            hello.display()
        ),
    );
    dir.file(
        "units/sleep.service",
        &format!(
            "[Service]\nType=oneshot\nExecStart=/bin/sh -c 'while [ ! -e {} ]; do sleep 0.1; done'\n",
            go.display()
        ),
    );
    (go, hello)
}

/// testsuite-03's first part: with `hello.service` waiting in the
/// target's transaction for `sleep.service`, `systemctl start
/// --job-mode=ignore-dependencies hello` runs it now and returns (its job
/// done), `sleep.service` still running and the target still waiting.
#[test]
fn a_start_ignoring_dependencies_does_not_wait() {
    let dir = TestDir::new();
    let (go, hello) = hello_after_sleep(&dir);
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    systemctl(&bus, &["start", "--no-block", "hello-after-sleep.target"]).expect(0);
    wait_for(WAIT, "hello.service waiting", || {
        (init.unit("hello.service").state == UnitState::Waiting).then_some(())
    });
    systemctl(
        &bus,
        &["start", "--job-mode=ignore-dependencies", "hello.service"],
    )
    .expect(0);
    // A simple service's start is done once its process has exec'd; its
    // shell writes the file after that.
    wait_for(WAIT, "hello.service's file", || {
        hello.exists().then_some(())
    });
    assert!(!go.exists());
    let jobs = systemctl(&bus, &["list-jobs"]).expect(0).stdout.clone();
    assert!(
        jobs.contains("sleep.service") && !jobs.contains("hello.service"),
        "{jobs}"
    );
    assert_eq!(init.unit("sleep.service").state, UnitState::Starting);
    assert_eq!(
        init.unit("hello-after-sleep.target").state,
        UnitState::Waiting
    );
    std::fs::write(&go, "").expect("go");
    init.wait_state("hello-after-sleep.target", UnitState::Running);
}

/// testsuite-63's last part: a path unit starts a service that requires
/// and is ordered after a oneshot that does not end; both have their jobs
/// in `list-jobs`; `systemctl stop` of the waiting service returns (as
/// systemd's stop of a unit that is not active yet is done at once), and
/// the path unit queues its start again while its path exists.
#[test]
fn a_stop_of_a_unit_waiting_for_its_dependency_returns() {
    let dir = TestDir::new();
    units(&dir);
    let hoge = dir.join("hoge");
    dir.file(
        "units/trig.path",
        &format!("[Path]\nPathExists={}\n", hoge.display()),
    );
    dir.file(
        "units/trig-dep.service",
        "[Service]\nType=oneshot\nExecStart=/bin/sleep 1000\n",
    );
    dir.file(
        "units/trig.service",
        "[Unit]\nRequires=trig-dep.service\nAfter=trig-dep.service\n\
         [Service]\nType=oneshot\nExecStart=/bin/sleep 1000\n",
    );
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    systemctl(&bus, &["start", "trig.path"]).expect(0);
    std::fs::write(&hoge, "").expect("hoge");
    let rows = wait_for(WAIT, "both jobs in list-jobs", || {
        let out = systemctl(&bus, &["list-jobs"]).expect(0).stdout.clone();
        (out.contains("trig.service") && out.contains("trig-dep.service")).then_some(out)
    });
    assert!(rows.contains("trig.service     start waiting"), "{rows}");
    // The path unit starts it again at once: its job is listed again.
    systemctl(&bus, &["stop", "trig.service"]).expect(0);
    let rows = systemctl(&bus, &["list-jobs"]).expect(0).stdout.clone();
    assert!(rows.contains("trig.service     start waiting"), "{rows}");
    // Without the path, the stop ends the service's start. (systemd's
    // start job of the dependency goes on; flotilla stops the dependency
    // that nothing requires any more: docs/debian.md, testsuite-63.)
    std::fs::remove_file(&hoge).expect("rm hoge");
    systemctl(&bus, &["stop", "trig.service"]).expect(0);
    wait_for(WAIT, "trig.service's job gone", || {
        let out = systemctl(&bus, &["list-jobs"]).expect(0).stdout.clone();
        (!out.contains("trig.service ")).then_some(())
    });
    let s = init.unit("trig.service");
    assert_eq!(s.state, UnitState::Disabled, "{s:?}");
}

/// testsuite-03's `unstoppable.service`: its stop command starts it again
/// (`systemctl start --no-block`), so a plain `systemctl stop` fails, its
/// job `canceled` by that start (systemd's start job replaces the stop
/// job), and the unit is up again; a stop with `--job-mode=
/// replace-irreversibly` refuses that start (`TransactionIsDestructive`)
/// and succeeds, the unit stopped.
#[test]
fn a_stop_a_start_replaces_is_canceled_unless_irreversible() {
    let dir = TestDir::new();
    units(&dir);
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    let again = systemctl_command(&dir, &bus, "start --no-block unstoppable.service");
    dir.file(
        "units/unstoppable.service",
        &format!(
            "[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/echo up\n\
             ExecStop={again}\n"
        ),
    );
    systemctl(&bus, &["daemon-reload"]).expect(0);
    systemctl(&bus, &["start", "unstoppable.service"]).expect(0);

    let stop = systemctl(&bus, &["stop", "unstoppable.service"]);
    assert_ne!(stop.code, 0, "{stop:?}");
    assert!(stop.stderr.contains("canceled"), "{stop:?}");
    init.wait_state("unstoppable.service", UnitState::Exited);

    systemctl(
        &bus,
        &[
            "stop",
            "--job-mode=replace-irreversibly",
            "unstoppable.service",
        ],
    )
    .expect(0);
    let state = init.unit("unstoppable.service").state;
    assert!(
        matches!(state, UnitState::Disabled | UnitState::Failed),
        "{state:?}"
    );
    // Its start is refused no more.
    systemctl(&bus, &["start", "unstoppable.service"]).expect(0);
    init.wait_state("unstoppable.service", UnitState::Exited);
}
