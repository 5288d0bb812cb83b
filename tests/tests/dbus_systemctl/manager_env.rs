//! The manager's settings for every unit with Debian's `/bin/systemctl`
//! (docs/dbus.md, "The manager's environment"): `show-environment`,
//! `set-environment`, `unset-environment`, `import-environment` (a unit
//! started after gets the variables; a reload keeps them; unsetting a
//! variable of the init's own gives its value back; a bad name refused
//! and nothing changed), `--output=json`, and `service-watchdogs`
//! (systemd's test 26).

use super::{busd, started, systemctl, Busd};
use flotilla_tests::init::TestDir;
use flotilla_units::state::UnitState;

fn environment(bus: &Busd) -> Vec<String> {
    let out = systemctl(bus, &["show-environment"]);
    out.expect(0);
    out.stdout.lines().map(str::to_string).collect()
}

fn has(env: &[String], line: &str) -> bool {
    env.iter().any(|l| l == line)
}

#[test]
fn systemctl_sets_and_unsets_the_environment_units_get() {
    let dir = TestDir::new();
    let out_file = dir.join("env.out");
    dir.file(
        "units/envdump.service",
        &format!(
            "[Service]\nType=oneshot\nExecStart=/bin/sh -c 'env > {}'\n",
            out_file.display()
        ),
    );
    let init = started(&dir);
    let bus = busd(&dir);

    let before = environment(&bus);
    let path = before
        .iter()
        .find(|l| l.starts_with("PATH="))
        .cloned()
        .unwrap_or_default();
    assert!(!path.is_empty(), "no PATH: {before:?}");

    let mine = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/testaddition";
    systemctl(&bus, &["set-environment", mine, "FOO=BAR"]).expect(0);
    let env = environment(&bus);
    assert!(has(&env, mine) && has(&env, "FOO=BAR"), "{env:?}");

    // A unit started now gets them.
    systemctl(&bus, &["start", "envdump.service"]).expect(0);
    init.wait_state("envdump.service", UnitState::Exited);
    let seen = std::fs::read_to_string(&out_file).unwrap_or_default();
    assert!(seen.lines().any(|l| l == "FOO=BAR"), "{seen}");
    assert!(seen.lines().any(|l| l == mine), "{seen}");

    systemctl(&bus, &["daemon-reload"]).expect(0);
    let env = environment(&bus);
    assert!(
        has(&env, mine) && has(&env, "FOO=BAR"),
        "after a reload: {env:?}"
    );
    let out = systemctl(&bus, &["show-environment", "--output=json"]);
    out.expect(0);
    assert!(
        out.stdout.starts_with('{') && out.stdout.contains("\"FOO\":\"BAR\""),
        "{out:?}"
    );

    // A bad name: refused, nothing changed.
    let out = systemctl(&bus, &["set-environment", "OK=1", "1BAD=x"]);
    assert_ne!(out.code, 0, "{out:?}");
    let out = systemctl(&bus, &["unset-environment", "A B"]);
    assert_ne!(out.code, 0, "{out:?}");
    let env = environment(&bus);
    assert!(!env.iter().any(|l| l.starts_with("OK=")), "{env:?}");

    systemctl(&bus, &["unset-environment", "FOO", "PATH"]).expect(0);
    let env = environment(&bus);
    assert!(!env.iter().any(|l| l.starts_with("FOO=")), "{env:?}");
    assert!(has(&env, &path), "PATH not back to the init's: {env:?}");

    // systemctl reads the variable from its own environment (LC_ALL=C).
    systemctl(&bus, &["import-environment", "LC_ALL"]).expect(0);
    assert!(has(&environment(&bus), "LC_ALL=C"));
    systemctl(&bus, &["unset-environment", "LC_ALL"]).expect(0);
    assert!(!environment(&bus).iter().any(|l| l.starts_with("LC_ALL=")));
}

#[test]
fn systemctl_turns_the_service_watchdogs_off_and_on() {
    let dir = TestDir::new();
    let _init = started(&dir);
    let bus = busd(&dir);
    let get = || {
        let out = systemctl(&bus, &["service-watchdogs"]);
        out.expect(0);
        out.stdout.trim_end().to_string()
    };
    assert_eq!(get(), "yes");
    systemctl(&bus, &["service-watchdogs", "no"]).expect(0);
    assert_eq!(get(), "no");
    let out = systemctl(&bus, &["show", "-P", "ServiceWatchdogs"]);
    assert_eq!(out.stdout, "no\n", "{out:?}");
    systemctl(&bus, &["service-watchdogs", "yes"]).expect(0);
    assert_eq!(get(), "yes");
}
