//! `CPUAffinity=`, `NUMAPolicy=` and `NUMAMask=` through Debian's
//! `systemd-run` and `systemctl show` (what systemd's test 36 asks): the
//! properties come back as systemd prints them, the service's processes
//! run with them, and a policy the kernel would refuse fails the main
//! process with systemd's status 242.

use super::*;

/// The NUMA policy of each of `pid`'s mappings (`bind:0`, `local`, …):
/// the second field of each line of its numa_maps.
fn policies(pid: i32) -> Vec<String> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/numa_maps")).unwrap_or_default();
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .collect()
}

#[test]
fn systemd_run_numa_properties_apply_and_show_as_systemds() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    let node0 = std::fs::read_to_string("/sys/devices/system/node/node0/cpulist")
        .expect("the host's NUMA node 0");
    let run = |unit: &str, props: &[&str]| {
        let mut args = vec!["--unit", unit];
        for p in props {
            args.extend(["-p", p]);
        }
        args.extend(["/bin/sleep", "300"]);
        debian_tool(&bus, "/usr/bin/systemd-run", &args).expect(0);
        init.wait_state(&format!("{unit}.service"), UnitState::Running)
            .pid
            .expect("its pid")
    };
    let show = |unit: &str, prop: &str| {
        systemctl(&bus, &["show", "--value", "-p", prop, unit])
            .expect(0)
            .stdout
            .trim_end()
            .to_string()
    };

    let pid = run(
        "bound",
        &["NUMAPolicy=bind", "NUMAMask=0", "CPUAffinity=numa"],
    );
    assert_eq!(show("bound", "NUMAPolicy"), "bind");
    assert_eq!(show("bound", "NUMAMask"), "0");
    assert_eq!(show("bound", "CPUAffinity"), node0.trim());
    assert_eq!(show("bound", "CPUAffinityFromNUMA"), "yes");
    let p = policies(pid);
    assert!(!p.is_empty() && p.iter().all(|p| p == "bind:0"), "{p:?}");
    systemctl(&bus, &["stop", "bound.service"]).expect(0);

    let pid = run("pinned", &["CPUAffinity=0", "NUMAPolicy=local"]);
    assert_eq!(show("pinned", "CPUAffinity"), "0");
    assert_eq!(show("pinned", "NUMAPolicy"), "local");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    assert!(
        status.lines().any(|l| l == "Cpus_allowed_list:\t0"),
        "{status}"
    );
    let p = policies(pid);
    assert!(!p.is_empty() && p.iter().all(|p| p == "local"), "{p:?}");
    systemctl(&bus, &["stop", "pinned.service"]).expect(0);

    // interleave needs a mask: the main process fails with 242, after a
    // start that succeeded (a simple service's start is its fork).
    debian_tool(
        &bus,
        "/usr/bin/systemd-run",
        &[
            "--unit",
            "refused",
            "-p",
            "NUMAPolicy=interleave",
            "/bin/true",
        ],
    )
    .expect(0);
    init.wait_state("refused.service", UnitState::Failed);
    assert_eq!(show("refused", "ExecMainStatus"), "242");

    // The same from a unit file, started by `systemctl start`: its job is
    // done at the fork, as systemd's, however soon the process failed.
    dir.file(
        "units/numa-test.service",
        "[Service]\nExecStart=/bin/sleep 3600\nNUMAPolicy=bind\nNUMAMask=\n",
    );
    systemctl(&bus, &["daemon-reload"]).expect(0);
    for _ in 0..3 {
        systemctl(&bus, &["start", "numa-test.service"]).expect(0);
        init.wait_state("numa-test.service", UnitState::Failed);
        assert_eq!(show("numa-test", "ExecMainStatus"), "242");
        systemctl(&bus, &["stop", "numa-test.service"]).expect(0);
    }
}
