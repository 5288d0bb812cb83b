//! System tests of docs/contract.md §3b through the real `init` and `initctl`: targets
//! with several providers (a group runs all of them; an alternative runs
//! one, chosen by preference or `initctl set-alternative`, kept across a
//! restart of the init), and masks (`initctl mask`/`unmask`, kept across a
//! restart). Orders of stops are recorded by the units' own `exec-stop`.

use flotilla_tests::init::{Init, TestDir};
use flotilla_units::protocol::UnitStatus;
use flotilla_units::state::UnitState;

/// A long-running unit whose stop appends its name to `order`.
fn recorded(dir: &TestDir, name: &str, extra: &str) {
    recorded_after(dir, name, "", extra);
}

/// The same, its stop command first running `before` (a slow stop).
fn recorded_after(dir: &TestDir, name: &str, before: &str, extra: &str) {
    let d = dir.path().display().to_string();
    dir.unit(
        name,
        &format!(
            "unit: {name}\nexec-start: sleep 100\n\
             exec-stop: [sh, -c, '{before}echo {name} >> {d}/order; kill $MAINPID']\n{extra}"
        ),
    );
}

/// The machine of these tests: two log shippers (a group), two databases
/// (an alternative, `pg` preferred), `web` on the database.
fn machine(dir: &TestDir) -> std::path::PathBuf {
    recorded(dir, "ship-a", "provides: [logs]\nrestart: no\n");
    recorded(dir, "ship-b", "provides: [logs]\n");
    recorded(dir, "pg", "provides: [db]\npreference: 10\n");
    recorded(dir, "maria", "provides: [db]\n");
    // web's stop takes its time: the new database must not come up, nor
    // the old one stop, while it runs (an alternative's switch once let
    // the old provider stop beside web's stop).
    recorded_after(dir, "web", "sleep 0.5; ", "depends-on: [db]\n");
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: [logs, web]\n",
    );
    dir.file(
        "init.yaml",
        "targets:\n  logs: {mode: group}\n  db: {mode: alternative}\n",
    )
}

fn start(dir: &TestDir, config: &std::path::Path) -> Init {
    dir.init()
        .target("default")
        .config(config.to_path_buf())
        .start()
}

fn unit_json(init: &Init, name: &str) -> UnitStatus {
    let out = init.ctl(&["status", name, "--json"]);
    out.expect(0);
    serde_json::from_str(&out.stdout).expect("status json")
}

#[test]
fn group_and_alternative_and_set_alternative_across_a_restart() {
    let dir = TestDir::new();
    let config = machine(&dir);
    let init = start(&dir, &config);
    init.wait_all(
        &["ship-a", "ship-b", "pg", "web", "default"],
        UnitState::Running,
    );
    assert_eq!(init.unit("maria").state, UnitState::Disabled);

    let logs = unit_json(&init, "logs");
    let p = logs.providers.expect("group providers");
    assert_eq!(p.mode.as_str(), "group");
    assert_eq!(p.chosen, None);
    let db = unit_json(&init, "db");
    let p = db.providers.expect("alternative providers");
    assert_eq!(p.chosen.as_deref(), Some("pg"));
    assert_eq!(p.why, "highest preference (10)");
    let human = init.ctl(&["status", "db"]);
    assert!(
        human.stdout.contains("Chosen: pg: highest preference (10)"),
        "{}",
        human.stdout
    );

    // Bad input changes nothing.
    let out = init.ctl(&["set-alternative", "db", "web"]);
    out.expect(1);
    assert!(
        out.stderr
            .contains("`web` does not provide the target `db` (its providers: `pg`, `maria`)"),
        "{out:?}"
    );
    init.ctl(&["set-alternative", "nosuch", "pg"]).expect(4);
    init.ctl(&["set-alternative", "logs", "ship-a"]).expect(1);
    init.ctl(&["set-alternative", "db"]).expect(2);

    // The switch: web stops, then pg; then maria starts, then web again.
    init.ctl(&["set-alternative", "db", "maria"]).expect(0);
    init.wait_all(&["maria", "web", "default"], UnitState::Running);
    init.wait_state("pg", UnitState::Disabled);
    // What a wrong order needs to be read (seen once in a fresh-clone
    // run): the init's output, in the order it acted, and the two units'
    // logs, with what the init noted of their processes.
    let order = dir.lines("order");
    if order != ["web", "pg"] {
        let logs = |u: &str| init.ctl(&["logs", u, "-n", "50"]).stdout;
        panic!(
            "the stop commands ran in the order {order:?}, not web then pg; \
             the init's output:\n{}\nweb's log:\n{}\npg's log:\n{}",
            init.output(),
            logs("web"),
            logs("pg")
        );
    }
    assert_eq!(dir.read("alternatives/db").trim(), "maria");

    // One shipper dies: the group stays up, degraded.
    let a = init.pid_of("ship-a");
    flotilla_tests::procs::signal(a, libc::SIGKILL);
    init.wait_unit("default", "degraded", |u| {
        u.state == UnitState::Running && u.degraded
    });
    let logs = unit_json(&init, "logs");
    assert!(
        logs.state == UnitState::Running && logs.degraded,
        "{logs:?}"
    );

    // Across a restart of the init, the choice holds.
    drop(init);
    let init = start(&dir, &config);
    init.wait_all(&["maria", "web", "default"], UnitState::Running);
    assert_eq!(init.unit("pg").state, UnitState::Disabled);
    let p = unit_json(&init, "db").providers.expect("providers");
    assert_eq!(p.chosen.as_deref(), Some("maria"));
    assert_eq!(p.why, "set with `initctl set-alternative`");
}

#[test]
fn mask_stops_a_unit_blocks_what_needs_it_and_survives_a_restart() {
    let dir = TestDir::new();
    let config = machine(&dir);
    let init = start(&dir, &config);
    init.wait_all(&["pg", "web", "default"], UnitState::Running);

    init.ctl(&["mask", "nosuch"]).expect(4);
    let out = init.ctl(&["mask", "web"]);
    out.expect(0);
    assert_eq!(out.stdout, "web: masked\n");
    init.ctl(&["mask", "web"]).expect(1);
    init.wait_state("web", UnitState::Disabled);
    let d = init.wait_unit("default", "blocked by the mask", |u| {
        u.blocked_by.as_deref() == Some("masked")
    });
    assert_eq!(d.state, UnitState::Waiting);
    let web = unit_json(&init, "web");
    assert!(web.masked);
    let table = init.ctl(&["status"]);
    assert!(
        table
            .stdout
            .lines()
            .any(|l| l.starts_with("web ") && l.contains(" masked")),
        "{}",
        table.stdout
    );
    assert!(dir.join("masked/web").exists());
    // Not by a restart either.
    init.ctl(&["restart", "web"]).expect(1);

    drop(init);
    let init = start(&dir, &config);
    init.wait_state("ship-a", UnitState::Running);
    let d = init.wait_unit("default", "blocked by the mask", |u| {
        u.blocked_by.as_deref() == Some("masked")
    });
    assert_eq!(d.state, UnitState::Waiting);
    // Only web needed the database.
    assert_eq!(init.unit("web").state, UnitState::Disabled);
    assert_eq!(init.unit("pg").state, UnitState::Disabled);

    init.ctl(&["unmask", "web"]).expect(0);
    init.ctl(&["unmask", "web"]).expect(1);
    init.wait_all(&["pg", "web", "default"], UnitState::Running);
    assert!(!dir.join("masked/web").exists());
}

#[test]
fn check_lists_masks_and_says_which_provider_runs_and_why() {
    let dir = TestDir::new();
    let config = machine(&dir);
    dir.file("masked/ship-b", "");
    let units = dir.units().display().to_string();
    let cfg = config.display().to_string();
    let out = dir.run_init(&[
        "--check", "--units", &units, "--config", &cfg, "--target", "default",
    ]);
    out.expect(0);
    let masked = dir.join("masked/ship-b").display().to_string();
    for line in [
        format!("masked: ship-b ({masked} (initctl mask))"),
        "alternative db: runs pg (highest preference (10)); providers: pg maria".to_string(),
        "group logs: runs ship-a".to_string(),
    ] {
        assert!(out.stdout.contains(&line), "{line}\n{}", out.stdout);
    }

    // A choice that names no provider is an error.
    dir.file(
        "init.yaml",
        "targets:\n  logs: {mode: group}\n  db: {mode: alternative, choose: web}\n",
    );
    let out = dir.run_init(&[
        "--check", "--units", &units, "--config", &cfg, "--target", "default",
    ]);
    out.expect(1);
    assert!(
        out.stdout.contains(
            "`choose: web`: `web` does not provide the target `db` (its providers: `pg`, \
             `maria`); `pg` runs"
        ),
        "{}",
        out.stdout
    );
}

/// `initctl reload` reads the config's `targets:` again: a new `choose`
/// switches the alternative; a config with an error is refused whole.
#[test]
fn reload_reads_the_configs_targets_again() {
    let dir = TestDir::new();
    let config = machine(&dir);
    let init = start(&dir, &config);
    init.wait_all(&["pg", "web", "default"], UnitState::Running);

    // A bad config: refused, nothing changes.
    dir.file("init.yaml", "targets:\n  db: {mode: sometimes}\n");
    let out = init.ctl(&["reload"]);
    out.expect(1);
    assert!(
        out.stderr.contains(&format!("{}:2:", config.display())),
        "{out:?}"
    );
    assert_eq!(init.unit("pg").state, UnitState::Running);

    dir.file(
        "init.yaml",
        "targets:\n  logs: {mode: group}\n  db: {mode: alternative, choose: maria}\n",
    );
    init.ctl(&["reload"]).expect(0);
    init.wait_all(&["maria", "web", "default"], UnitState::Running);
    init.wait_state("pg", UnitState::Disabled);
    let p = unit_json(&init, "db").providers.expect("providers");
    assert_eq!(p.chosen.as_deref(), Some("maria"));

    // Without the declaration, two providers of `db` are the error they
    // are at boot: refused, nothing changes.
    dir.file("init.yaml", "targets:\n  logs: {mode: group}\n");
    init.ctl(&["reload"]).expect(1);
    assert_eq!(init.unit("maria").state, UnitState::Running);
}

/// The declared targets are rows of `initctl list`, with their state.
#[test]
fn declared_targets_are_listed() {
    let dir = TestDir::new();
    let config = machine(&dir);
    let init = start(&dir, &config);
    init.wait_all(&["pg", "web", "default"], UnitState::Running);
    let out = init.ctl(&["list", "--json"]);
    out.expect(0);
    let list: serde_json::Value = serde_json::from_str(&out.stdout).expect("list json");
    let units: Vec<UnitStatus> = serde_json::from_value(list["units"].clone()).expect("list units");
    for target in ["logs", "db"] {
        let row = units
            .iter()
            .find(|u| u.unit == target)
            .unwrap_or_else(|| panic!("no row for {target}: {units:?}"));
        assert_eq!(row.state, UnitState::Running, "{row:?}");
        assert!(row.providers.is_some(), "{row:?}");
    }
    let out = init.ctl(&["list"]);
    out.expect(0);
    assert!(
        out.stdout.lines().any(|l| l.starts_with("db ")),
        "{}",
        out.stdout
    );
}

/// `sysv-scripts: true`: Debian's init scripts in `/etc/init.d` with LSB
/// headers are units (`NAME.service`, `background-scripted`) unless a
/// unit file of that name is on the path; `--check` lists them.
#[test]
fn sysv_scripts_are_units_when_the_config_says_so() {
    let dir = TestDir::new();
    dir.unit("default", "unit: default\ntype: virtual\n");
    dir.unit(
        "nginx.service",
        "unit: nginx.service\nexec-start: /bin/sleep 100\n",
    );
    let units = dir.units().display().to_string();
    let check = |config: &str| {
        let cfg = dir.file("init.yaml", config).display().to_string();
        dir.run_init(&["--check", "--units", &units, "--config", &cfg])
    };
    let out = check("sysv-scripts: true\n");
    out.expect(0);
    assert!(
        out.stdout
            .lines()
            .any(|l| l == "unit cron.service: from /etc/init.d/cron (SysV init script)"),
        "{}",
        out.stdout
    );
    // A unit file of the same name wins.
    assert!(
        !out.stdout.contains("from /etc/init.d/nginx "),
        "{}",
        out.stdout
    );
    let out = check("sysv-scripts: false\n");
    out.expect(0);
    assert!(!out.stdout.contains("SysV"), "{}", out.stdout);
    // A bad value: the config's error, nothing loaded (exit 2).
    let out = check("sysv-scripts: sometimes\n");
    out.expect(2);
    assert!(
        out.stderr
            .contains("expected `true` or `false` for `sysv-scripts`, found a string"),
        "{out:?}"
    );
}
