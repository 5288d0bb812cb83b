//! fleet's `install_test.go` (TestInstallUnit), ported: a unit with an
//! `[Install]` section is enabled on its machine when loaded (fleet's
//! agent enabled such units; clusterd's makes the unit it is
//! `WantedBy=` want it), so `WantedBy=hello.service` starts it with
//! `hello.service`, and `BindsTo=hello.service` stops it with it.

use crate::functional::smoke;
use crate::support::etcd::Etcd;
use crate::support::platform::*;
use crate::support::*;
use flotilla_units::state::UnitState;

/// TestInstallUnit: on two machines, `load hello.service
/// discovery.service` (discovery: `BindsTo=` and `WantedBy=`
/// hello.service, `MachineOf=hello.service`); discovery is loaded, not
/// started; `start hello.service` starts it; `stop hello.service` stops
/// it. fleet asks `systemctl show --property=ActiveState
/// discovery.service` over SSH on discovery's machine; here that
/// machine's init says whether it runs.
#[test]
fn fleet_install_unit() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let ms = smoke(&etcd, dir.path(), 2);
    let ep = endpoint(&ms[0]);
    let hello = fixture(dir.path(), "hello.service", HELLO);
    let discovery = fixture(
        dir.path(),
        "discovery.service",
        "[Unit]\nBindsTo=hello.service\n\n[Service]\nExecStart=/bin/bash -c \"while true; do echo discovery.service unit file; sleep 1; done\"\n\n[Install]\nWantedBy=hello.service\n\n[X-Fleet]\nMachineOf=hello.service\n",
    );
    fleetctl(&ep, &["load", &hello, &discovery]);

    // Whether discovery.service runs on the machine it is on.
    let active = || -> Option<bool> {
        let (_, b) = ms[0].api("GET", "/fleet/v1/units/discovery.service", None);
        let id = json(&b)["machineID"].as_str()?.to_string();
        let m = ms.iter().find(|m| m.id == id)?;
        let st = m.init.list().remove("discovery.service")?;
        Some(st.state == UnitState::Running)
    };
    let check = |want: bool| {
        wait_state(&format!("discovery.service active={want}"), || {
            (active()? == want).then_some(())
        })
    };
    check(false);
    fleetctl(&ep, &["start", &hello]);
    check(true);
    fleetctl(&ep, &["stop", &hello]);
    check(false);
}
