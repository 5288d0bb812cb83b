//! The design's example units (maddy, network-online, dhcpcd, netif,
//! unbound, inspircd, irc-bot; `contrib/seed/` has them as a unit set) load
//! from the model's `tests/fixtures/yaml/seed/`, with what the design says
//! of each.

use crate::load::{is_unit_file_name, load_files, FileRead};
use flotilla_units::load::{parse_yaml, LoadedDir};
use flotilla_units::spec::{Command, RestartPolicy, UnitSpec, UnitType};
use std::path::Path;

fn seed_dir() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../units/tests/fixtures/yaml/seed"
    ))
}

/// The seed's unit files, read in name order as the init reads a units
/// directory.
fn load_seed() -> LoadedDir {
    let mut names: Vec<String> = std::fs::read_dir(seed_dir())
        .expect("the fixture directory is readable")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| is_unit_file_name(n))
        .collect();
    names.sort();
    load_files(names.into_iter().map(|n| {
        let path = seed_dir().join(&n);
        let bytes = std::fs::read(&path).expect("a fixture file");
        (path.display().to_string(), FileRead::Bytes(bytes))
    }))
}

fn units() -> Vec<UnitSpec> {
    let loaded = load_seed();
    let shown: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    assert!(shown.is_empty(), "{shown:#?}");
    loaded.units.into_iter().map(|(s, _)| s).collect()
}

fn unit(name: &str) -> UnitSpec {
    units()
        .into_iter()
        .find(|u| u.name == name)
        .unwrap_or_else(|| panic!("no unit {name}"))
}

#[test]
fn all_seven_load_in_file_name_order() {
    let names: Vec<String> = units().into_iter().map(|u| u.name).collect();
    assert_eq!(
        names,
        [
            "dhcpcd",
            "inspircd",
            "irc-bot",
            "maddy",
            "netif",
            "network-online",
            "unbound"
        ]
    );
}

#[test]
fn maddy() {
    let u = unit("maddy");
    assert_eq!(u.kind, UnitType::ForegroundNotified);
    assert_eq!(u.provides, ["imapd", "smtpd"]);
    assert_eq!(u.depends_ms, ["network-online"]);
    assert_eq!(u.exec_start, Some(Command::new(["/usr/bin/maddy", "run"])));
    assert_eq!(
        u.extras.exec_reload,
        Some(Command::new(["/bin/kill", "-USR1", "$MAINPID"]))
    );
    assert_eq!(
        u.exec_stop,
        Some(Command::new(["/bin/kill", "-TERM", "$MAINPID"]))
    );
    // `$MAINPID` is the init's to replace.
    let stop = u.exec_stop.unwrap_or_else(|| unreachable!());
    assert_eq!(stop.with_mainpid(Some(42)), ["/bin/kill", "-TERM", "42"]);
    assert_eq!(u.restart, RestartPolicy::OnFailure);
}

#[test]
fn network_online_is_virtual() {
    let u = unit("network-online");
    assert_eq!(u.kind, UnitType::Virtual);
    assert_eq!(u.provides, ["network-online"]);
    assert_eq!(u.depends_on, ["netif", "dhcp", "dns"]);
    assert_eq!(u.exec_start, None);
}

#[test]
fn dhcpcd_netif_unbound_inspircd() {
    let dhcpcd = unit("dhcpcd");
    assert_eq!(dhcpcd.kind, UnitType::ForegroundSupervised);
    assert_eq!(dhcpcd.provides, ["dhcp"]);
    assert_eq!(dhcpcd.depends_on, ["netif"]);
    let netif = unit("netif");
    assert_eq!(netif.kind, UnitType::Oneshot);
    assert_eq!(netif.restart, RestartPolicy::No);
    assert_eq!(
        netif.exec_start,
        Some(Command::new([
            "/etc/my-script-to-set-up-interfaces-with-iproute2"
        ]))
    );
    let unbound = unit("unbound");
    assert_eq!(unbound.provides, ["dns"]);
    assert_eq!(unbound.depends_on, ["netif"]);
    let inspircd = unit("inspircd");
    assert_eq!(inspircd.provides, ["ircd"]);
    assert_eq!(inspircd.depends_ms, ["network-online"]);
}

#[test]
fn irc_bot_uses_name_and_waits_for() {
    let u = unit("irc-bot");
    assert_eq!(u.provides, ["irc-bot"]);
    assert_eq!(u.depends_ms, ["network-online"]);
    assert_eq!(u.waits_for, ["ircd"]);
    assert_eq!(u.extras.ready_grep.as_deref(), Some("^connected to"));
    assert_eq!(
        u.exec_start,
        Some(Command::new([
            "/usr/local/bin/irc-bot",
            "-c",
            "/etc/irc-bot.conf"
        ]))
    );
}

/// The seed's irc-bot, verbatim, is `foreground-notified` with a
/// `ready-grep`, which docs/contract.md §3 allows on `foreground-supervised` units only:
/// exactly one error, at the key, saying why.
#[test]
fn the_verbatim_seed_irc_bot_gets_one_clear_error() {
    let verbatim = "name: irc-bot\ntype: foreground-notified\nprovides: irc-bot\n\
                    depends-ms: network-online\nwaits-for: ircd\nready-grep: ^connected to\n\
                    exec-start: /usr/local/bin/irc-bot -c /etc/irc-bot.conf\n\
                    exec-reload: /bin/kill -USR1 $MAINPID\n";
    let p = parse_yaml("irc-bot.yaml", verbatim);
    let shown: Vec<String> = p.diagnostics.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "irc-bot.yaml:6:1: `ready-grep` only applies to `foreground-supervised` units, and \
          this one is `foreground-notified` (it is ready when it sends `READY=1`)"
        ]
    );
    assert!(p.spec.is_none());
}

#[test]
fn origins_point_into_the_files() {
    let loaded = load_seed();
    let (_, origin) = loaded
        .units
        .iter()
        .find(|(u, _)| u.name == "maddy")
        .expect("maddy");
    assert!(
        origin.file.ends_with("tests/fixtures/yaml/seed/maddy.yaml"),
        "{}",
        origin.file
    );
    // `unit: maddy` is on line 3 (after two comment lines).
    assert_eq!(origin.pos, flotilla_units::diag::Pos::new(3, 7));
    assert_eq!(
        origin.provides_pos(),
        [
            flotilla_units::diag::Pos::new(5, 11),
            flotilla_units::diag::Pos::new(5, 18)
        ]
    );
}
