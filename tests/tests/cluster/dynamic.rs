//! fleet's `cluster_test.go` (TestDynamicClusterNewMemberUnitMigration,
//! TestDynamicClusterMemberReboot) and `shutdown_test.go` (TestShutdown,
//! TestShutdownVsMonitor), ported: fleet's fleetctl commands run as
//! `initctl cluster`, its checks on `list-units` (`support::platform`),
//! against real clusterds with real inits. fleet's `systemctl stop fleet`
//! on a machine is `initctl stop clusterd` on that machine's init, and
//! `systemctl show --property=ActiveState,Result fleet` is the init's
//! status of `clusterd`.

use crate::functional::{smoke, smoke_member};
use crate::support::etcd::Etcd;
use crate::support::platform::*;
use crate::support::relay::Relay;
use crate::support::*;
use flotilla_units::state::UnitState;
use std::path::Path;
use std::time::{Duration, Instant};

/// fleet's `conflict.N.service` fixtures (`Conflicts=conflict.*.service`):
/// their paths for N = 0, 1, 2.
fn conflict_units(dir: &Path) -> Vec<String> {
    let text = format!(
        "[Unit]\nDescription=Test Unit\n\n{HELLO}\n[X-Fleet]\nConflicts=conflict.*.service\n"
    );
    (0..3)
        .map(|i| fixture(dir, &format!("conflict.{i}.service"), &text))
        .collect()
}

/// `fleetctl start` of the three conflicting units; all three listed by
/// `list-units` at once (start waits for them), and each active on a
/// machine of its own: unit -> machine.
fn start_conflicts(ep: &str, dir: &Path) -> std::collections::BTreeMap<String, String> {
    let units = conflict_units(dir);
    let mut args = vec!["start"];
    args.extend(units.iter().map(String::as_str));
    fleetctl(ep, &args);
    let listed = fleetctl(ep, &["list-units", "--no-legend"]);
    assert_eq!(listed.lines().count(), 3, "{listed}");
    single_states(&wait_n_active_units(ep, 3))
}

/// TestDynamicClusterNewMemberUnitMigration: on four machines the three
/// conflicting units run; `systemctl stop fleet` on conflict.1's machine;
/// through another machine three machines are listed and three units
/// active again, conflict.1 on the fourth machine, the other two where
/// they were.
#[test]
fn fleet_dynamic_cluster_new_member_unit_migration() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let ms = smoke(&etcd, dir.path(), 4);
    let ep = endpoint(&ms[0]);
    let states = start_conflicts(&ep, dir.path());

    let unit = "conflict.1.service";
    let old = states[unit].clone();
    let down = ms.iter().position(|m| m.id == old).expect("a machine");
    stop_fleet(&ms[down]);
    let other = &ms[if down == 0 { 1 } else { 0 }];
    let ep = endpoint(other);
    wait_n_machines(&ep, 3);
    let new_states = single_states(&wait_n_active_units(&ep, 3));
    let new = &new_states[unit];
    assert_ne!(*new, old, "{unit} did not migrate from {old}");
    for u in ["conflict.0.service", "conflict.2.service"] {
        assert_ne!(*new, states[u], "{unit} landed on occupied machine");
        assert_eq!(new_states[u], states[u], "unnecessary churn in the cluster");
    }
}

/// TestDynamicClusterMemberReboot: on three machines the three
/// conflicting units run, one on each; the second machine is rebooted
/// (fleet's `ReplaceMember`: `machinectl poweroff`, two machines listed,
/// the member created again with a new machine ID, three listed). Here
/// the poweroff stops its clusterd as the shutdown would, then the init
/// and all under it end; the new member is a new init and clusterd with a
/// new ID, on the old one's IP. Three units active again, and exactly one
/// of them on another machine than before (the rebooted one's, now on the
/// new ID).
#[test]
fn fleet_dynamic_cluster_member_reboot() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let mut ms = smoke(&etcd, dir.path(), 3);
    let ep = endpoint(&ms[0]);
    let old_states = start_conflicts(&ep, dir.path());

    stop_fleet(&ms[1]);
    drop(ms.remove(1));
    wait_n_machines(&ep, 2);
    let reborn = smoke_member(&etcd, dir.path(), 3, 1);
    reborn.wait_api();
    wait_n_machines(&ep, 3);

    let new_states = single_states(&wait_n_active_units(&ep, 3));
    let migrated = old_states
        .iter()
        .filter(|(u, m)| new_states.get(*u) != Some(*m))
        .count();
    assert_eq!(
        migrated, 1,
        "initial state {old_states:?}, post-reboot state {new_states:?}"
    );
}

/// The init's `clusterd` as `systemctl show --property=ActiveState,Result`
/// would say it after fleet's tests stop it: inactive (stopped, not
/// running any more), and a success (not failed).
fn assert_stopped_cleanly(m: &Machine) {
    let st = wait_for(Duration::from_secs(10), "clusterd stopped", || {
        m.init
            .list()
            .remove("clusterd")
            .filter(|s| !matches!(s.state, UnitState::Stopping | UnitState::Running))
    });
    assert_eq!(
        st.state,
        UnitState::Disabled,
        "ActiveState=inactive: {st:?}"
    );
    assert!(m.clusterd_pid().is_none(), "{st:?}");
}

/// TestShutdown: `systemctl stop fleet` on a one-machine cluster; fleet's
/// unit is then inactive with the result success.
#[test]
fn fleet_shutdown() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let ms = smoke(&etcd, dir.path(), 1);
    stop_fleet(&ms[0]);
    assert_stopped_cleanly(&ms[0]);
}

/// TestShutdownVsMonitor: the machine's connection to etcd cut (fleet's
/// iptables rule; here the relay clusterd reaches etcd through), until
/// the daemon notices (fleet's journal says its server monitor triggered a
/// restart; clusterd logs that the claim of its machine ID lapsed and it
/// is claiming it again, which cannot succeed while etcd is cut), then
/// `systemctl stop fleet` while it tries to get back: it stops cleanly,
/// inactive and a success.
#[test]
fn fleet_shutdown_vs_monitor() {
    let etcd = Etcd::start();
    let relay = Relay::start(etcd.url().trim_start_matches("http://"));
    let dir = tempdir();
    let m = Machine::start(
        &relay.url(),
        dir.path(),
        "5m0ke000000000000000000000000000",
        "hostname=smoke5m0ke000000000000000000000000000",
        "192.0.2.100",
        "2s",
        &[],
    );
    m.wait_api();
    relay.cut();
    // fleet's test polls the journal every second.
    let end = Instant::now() + Duration::from_secs(30);
    while !m.log().contains("claiming it again") {
        assert!(Instant::now() < end, "clusterd never noticed: {}", m.log());
        std::thread::sleep(Duration::from_millis(250));
    }
    stop_fleet(&m);
    assert_stopped_cleanly(&m);
}
