//! The real `initctl cluster` against real clusterds and a real etcd: two
//! machines, each a real init in supervisor mode running its clusterd (one
//! API on a unix socket, the other on loopback TCP). Every verb, fleetctl's
//! exact tables and messages, `--no-legend`, `--full`, `FLEETCTL_ENDPOINT`,
//! `unix://` and `http://` endpoints, `--no-block`, `--block-attempts`, and
//! the exit codes; what runs is checked on the inits.

use crate::support::etcd::{free_port, Etcd};
use crate::support::initctl_cluster as ctl;
use crate::support::*;
use flotilla_systemd::{canonical_text, parse, unit_hash};
use std::path::Path;
use std::time::{Duration, Instant};

const A: &str = "aaaaaaaa1111";
const B: &str = "bbbbbbbb2222";
const LIMIT: Duration = Duration::from_secs(20);

/// Asserts success and returns stdout.
fn ok(o: Out) -> String {
    assert_eq!(o.code, 0, "{o:?}");
    o.stdout
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn hash7(text: &str) -> String {
    unit_hash(&parse(text).options)[..7].to_string()
}

#[test]
fn every_verb_of_initctl_cluster() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let port = free_port();
    let a = Machine::start(
        &etcd.url(),
        dir.path(),
        A,
        "region=east,disk=ssd",
        "192.0.2.1",
        "2s",
        &[],
    );
    let b = Machine::start(
        &etcd.url(),
        dir.path(),
        B,
        "",
        "192.0.2.2",
        "2s",
        &[format!("--api-listen=tcp://127.0.0.1:{port}")],
    );
    let unix = format!("unix://{}", a.sock.display());
    let http = format!("http://127.0.0.1:{port}");
    a.wait_api();
    wait_for(LIMIT, "both machines, through both APIs", || {
        let x = ctl(&unix, &["--no-legend", "list-machines"]);
        let y = ctl(&http, &["--no-legend", "list-machines"]);
        (x.stdout.lines().count() == 2 && y.stdout == x.stdout).then_some(())
    });

    // list-machines: fleetctl's columns, short IDs, metadata sorted by key;
    // the endpoint from FLEETCTL_ENDPOINT.
    let machines = "MACHINE\tIP\tMETADATA\n\
                    aaaaaaaa...\t192.0.2.1\tdisk=ssd,region=east\n\
                    bbbbbbbb...\t192.0.2.2\t-\n";
    let env = ok(initctl(
        &["cluster", "list-machines"],
        &[("FLEETCTL_ENDPOINT", &unix)],
    ));
    assert_eq!(env, machines);
    assert_eq!(ok(ctl(&http, &["list-machines"])), machines);
    assert_eq!(
        ok(ctl(&unix, &["--full", "--no-legend", "list-machines"])),
        "aaaaaaaa1111\t192.0.2.1\tdisk=ssd,region=east\nbbbbbbbb2222\t192.0.2.2\t-\n"
    );
    // --endpoint wins over FLEETCTL_ENDPOINT.
    let o = initctl(
        &["cluster", "--endpoint", &http, "list-machines"],
        &[("FLEETCTL_ENDPOINT", "unix:///nonexistent/fleet.sock")],
    );
    assert_eq!(ok(o), machines);

    // submit: the unit is known and inactive; nothing is printed.
    let src = dir.path().join("src");
    std::fs::create_dir(&src).unwrap();
    let hello_text =
        "# a comment\n[Unit]\nDescription=hello\n\n[Service]\nExecStart=/bin/sleep 1200\n\n[X-Fleet]\nMachineID=aaaaaaaa\n";
    let hello = write(&src, "hello.service", hello_text);
    let h7 = hash7(hello_text);
    assert_eq!(ok(ctl(&unix, &["submit", &hello])), "");
    assert_eq!(
        ok(ctl(&unix, &["list-unit-files"])),
        format!("UNIT\tHASH\tDSTATE\tSTATE\tTARGET\nhello.service\t{h7}\tinactive\tinactive\t-\n")
    );

    // cat: the canonical unit file; a missing unit is an error, exit 1.
    assert_eq!(
        ok(ctl(&unix, &["cat", "hello"])),
        canonical_text(&parse(hello_text).options)
    );
    assert_eq!(
        ok(ctl(&unix, &["cat", "hello.service"])),
        "[Unit]\nDescription=hello\n\n[Service]\nExecStart=/bin/sleep 1200\n\n[X-Fleet]\nMachineID=aaaaaaaa\n"
    );
    let o = ctl(&unix, &["cat", "nope"]);
    assert_eq!(
        (o.code, o.stdout.as_str(), o.stderr.as_str()),
        (1, "", "initctl cluster: Unit nope.service not found\n")
    );

    // load: scheduled, in the machine's graph, not started.
    assert_eq!(
        ok(ctl(&unix, &["load", "hello"])),
        "Unit hello.service loaded on aaaaaaaa.../192.0.2.1\n"
    );
    let st = a.init.fleet_units();
    assert_eq!(
        st.get("hello.service").map(|u| u.state),
        Some(flotilla_units::state::UnitState::Disabled),
        "{st:?}"
    );
    assert_eq!(
        ok(ctl(&unix, &["list-units"])),
        "UNIT\tMACHINE\tACTIVE\tSUB\nhello.service\taaaaaaaa.../192.0.2.1\tinactive\tdead\n"
    );

    // start: waits until launched (and active), then says where.
    assert_eq!(
        ok(ctl(&unix, &["start", "hello.service"])),
        "Unit hello.service launched on aaaaaaaa.../192.0.2.1\n"
    );
    let pid = *a
        .init
        .running()
        .get("hello.service")
        .expect("hello.service runs on machine A once start returns");
    assert!(b.init.running().is_empty());
    assert_eq!(
        ok(ctl(&unix, &["--full", "--no-legend", "list-units"])),
        "hello.service\taaaaaaaa1111/192.0.2.1\tactive\trunning\n"
    );
    assert_eq!(
        ok(ctl(&http, &["list-unit-files"])),
        format!("UNIT\tHASH\tDSTATE\tSTATE\tTARGET\nhello.service\t{h7}\tlaunched\tlaunched\taaaaaaaa.../192.0.2.1\n")
    );
    let status = ok(ctl(&unix, &["status", "hello"]));
    assert!(
        status.starts_with("● hello.service on aaaaaaaa.../192.0.2.1\n"),
        "{status}"
    );
    assert!(status.contains("Active: active (running)"), "{status}");
    let o = ctl(&unix, &["status", "nope"]);
    assert_eq!(o.code, 1);
    assert_eq!(
        o.stderr,
        "initctl cluster: Unit nope.service does not exist.\n"
    );

    // stop: back to loaded, the process ends.
    assert_eq!(
        ok(ctl(&http, &["stop", "hello"])),
        "Unit hello.service loaded on aaaaaaaa.../192.0.2.1\n"
    );
    wait_for(LIMIT, "hello's process ends", || {
        (!pid_alive(pid)).then_some(())
    });
    // unload: unscheduled, gone from the machine's graph.
    assert_eq!(
        ok(ctl(&unix, &["unload", "hello"])),
        "Unit hello.service inactive\n"
    );
    wait_for(LIMIT, "hello leaves machine A's graph", || {
        (!a.init.fleet_units().contains_key("hello.service")).then_some(())
    });
    let o = ctl(&unix, &["stop", "hello"]);
    assert_eq!(o.code, 1);
    assert_eq!(
        o.stderr,
        "initctl cluster: Unable to stop unit hello.service in state inactive\n"
    );
    // destroy: gone.
    assert_eq!(
        ok(ctl(&unix, &["destroy", "hello"])),
        "Destroyed hello.service\n"
    );
    assert_eq!(ok(ctl(&unix, &["--no-legend", "list-unit-files"])), "");
    let o = ctl(&unix, &["unload", "hello"]);
    assert_eq!(o.code, 1);
    assert_eq!(
        o.stderr,
        "initctl cluster: Unit hello.service does not exist.\n"
    );

    // --no-block: start returns at once and prints nothing; the unit still
    // comes up, on one machine.
    let nb = write(&src, "nb.service", "[Service]\nExecStart=/bin/sleep 1201\n");
    assert_eq!(ok(ctl(&http, &["--no-block", "start", &nb])), "");
    wait_for(LIMIT, "nb.service runs once", || {
        let n = a.init.running().contains_key("nb.service") as u8
            + b.init.running().contains_key("nb.service") as u8;
        (n == 1).then_some(())
    });

    // --block-attempts: a unit that fits nowhere gives up after N attempts
    // of 2 s, exit 1.
    let never = write(
        &src,
        "never.service",
        "[Service]\nExecStart=/bin/sleep 1202\n[X-Fleet]\nMachineID=ffffffff\n",
    );
    let t0 = Instant::now();
    let o = ctl(&unix, &["--block-attempts", "1", "start", &never]);
    let took = t0.elapsed();
    assert_eq!(o.code, 1, "{o:?}");
    assert_eq!(o.stdout, "");
    assert!(
        o.stderr.starts_with("initctl cluster: ") && o.stderr.contains("never.service"),
        "{o:?}"
    );
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(10),
        "{took:?}"
    );

    // A global unit: triggered, runs on both machines.
    let g = write(
        &src,
        "g.service",
        "[Service]\nExecStart=/bin/sleep 1203\n[X-Fleet]\nGlobal=true\n",
    );
    assert_eq!(
        ok(ctl(&unix, &["start", &g])),
        "Triggered global unit g.service start\n"
    );
    wait_for(LIMIT, "g.service on both machines", || {
        (a.init.running().contains_key("g.service") && b.init.running().contains_key("g.service"))
            .then_some(())
    });
    let files = ok(ctl(&unix, &["--no-legend", "list-unit-files"]));
    assert!(
        files.contains(&format!(
            "g.service\t{}\tlaunched\t-\tglobal\n",
            hash7("[Service]\nExecStart=/bin/sleep 1203\n[X-Fleet]\nGlobal=true\n")
        )),
        "{files}"
    );

    // An instance without a file of its own takes the template's options
    // (the template file beside it).
    write(
        &src,
        "web@.service",
        "[Service]\nExecStart=/bin/sleep 1204\n[X-Fleet]\nMachineID=%i\n",
    );
    let inst = src.join("web@bbbbbbbb.service").display().to_string();
    assert_eq!(
        ok(ctl(&unix, &["start", &inst])),
        "Unit web@bbbbbbbb.service launched on bbbbbbbb.../192.0.2.2\n"
    );
    assert!(b.init.running().contains_key("web@bbbbbbbb.service"));
}

#[test]
fn usage_errors_and_an_unreachable_api_exit_2() {
    for args in [
        &["cluster"][..],
        &["cluster", "bogus"],
        &["cluster", "--bogus", "list-units"],
        &["cluster", "cat"],
        &["cluster", "start"],
        &["cluster", "list-machines", "extra"],
        &["cluster", "--endpoint", "ftp://x", "list-units"],
        &["cluster", "--block-attempts", "many", "start", "x"],
    ] {
        let o = initctl(
            args,
            &[("FLEETCTL_ENDPOINT", "unix:///nonexistent/fleet.sock")],
        );
        assert_eq!(o.code, 2, "{args:?}: {o:?}");
        assert!(o.stderr.starts_with("initctl cluster: "), "{args:?}: {o:?}");
        assert!(
            o.stderr.contains("usage: initctl cluster"),
            "{args:?}: {o:?}"
        );
    }
    let o = initctl(
        &["cluster", "list-units"],
        &[("FLEETCTL_ENDPOINT", "unix:///nonexistent/fleet.sock")],
    );
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.starts_with(
            "initctl cluster: cannot reach the fleet API at unix:///nonexistent/fleet.sock"
        ),
        "{o:?}"
    );
    let o = initctl(
        &[
            "cluster",
            "--endpoint",
            &format!("http://127.0.0.1:{}", free_port()),
            "list-units",
        ],
        &[],
    );
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.starts_with("initctl cluster: cannot reach"),
        "{o:?}"
    );
}
