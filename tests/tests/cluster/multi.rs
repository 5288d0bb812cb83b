//! Three machines against one real etcd, each a real `init` in supervisor
//! mode (its own units directory, control socket and log dir) running its
//! own real `clusterd` as a unit (restarted when it dies, as
//! contrib/cluster/clusterd.yaml has it), with its own machine ID and
//! metadata. What runs where is checked on the inits themselves, through
//! their control sockets: every `[X-Fleet]` option, a global unit on every
//! matching machine, templates with specifiers, unit replacement, clusterd
//! SIGKILL, etcd stopped and restarted, and the loss of the machine that
//! leads the engine.
//!
//! No stand-in: every fault here is one the real processes can be given
//! (SIGKILL of clusterd, of a whole machine, etcd killed).

use crate::support::etcd::Etcd;
use crate::support::*;
use flotilla_units::state::UnitState;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The agent TTL: presence and leadership expire this long after a
/// machine dies.
const TTL: Duration = Duration::from_secs(3);
const IDS: [&str; 3] = ["aaaaaaaa0001", "bbbbbbbb0002", "cccccccc0003"];
const METADATA: [&str; 3] = ["region=east,disk=ssd", "region=west", "region=east"];
const LIMIT: Duration = Duration::from_secs(20);

struct Cluster {
    etcd: Etcd,
    machines: Vec<Machine>,
    _dir: tempfile::TempDir,
}

impl Cluster {
    /// Three machines, and a global unit `probe.service` running on all of
    /// them: from then on the engine's leader knows every machine, so that
    /// placements are deterministic.
    fn start() -> Cluster {
        let etcd = Etcd::start();
        let dir = tempdir();
        let machines: Vec<Machine> = (0..3)
            .map(|i| {
                Machine::start(
                    &etcd.url(),
                    dir.path(),
                    IDS[i],
                    METADATA[i],
                    &format!("192.0.2.{}", i + 1),
                    &format!("{}s", TTL.as_secs()),
                    &[],
                )
            })
            .collect();
        let c = Cluster {
            etcd,
            machines,
            _dir: dir,
        };
        c.machines[0].wait_api();
        wait_for(LIMIT, "three machines", || {
            (c.machine_ids().len() == 3).then_some(())
        });
        c.submit(
            "probe.service",
            "launched",
            "/bin/sleep 999",
            &[("Global", "true")],
        );
        c.wait_running_on("probe.service", &IDS);
        c
    }

    /// A request to any live machine's API.
    fn req(&self, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
        let mut last = (0, String::new());
        for m in &self.machines {
            if m.init.pid().is_none() {
                continue;
            }
            last = m.api(method, path, body);
            if last.0 != 0 {
                return last;
            }
        }
        last
    }

    fn machine_ids(&self) -> Vec<String> {
        let (c, b) = self.req("GET", "/fleet/v1/machines", None);
        if c != 200 {
            return Vec::new();
        }
        json(&b)["machines"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|m| m["id"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn submit(&self, name: &str, desired: &str, exec: &str, xfleet: &[(&str, &str)]) {
        let (c, b) = self.req(
            "PUT",
            &format!("/fleet/v1/units/{name}"),
            Some(&unit_body(desired, exec, xfleet)),
        );
        assert_eq!(c, 201, "{name}: {b}");
    }

    /// Creates each unit through the API (`PUT`, answered `201`).
    fn create(&self, units: &[(&str, serde_json::Value)]) {
        for (name, body) in units {
            let (code, b) = self.req(
                "PUT",
                &format!("/fleet/v1/units/{name}"),
                Some(&format!("{body}\n")),
            );
            assert_eq!(code, 201, "{name}: {b}");
        }
    }

    fn units(&self) -> BTreeMap<String, serde_json::Value> {
        let (c, b) = self.req("GET", "/fleet/v1/units", None);
        if c != 200 {
            return BTreeMap::new();
        }
        json(&b)["units"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(|u| (u["name"].as_str().unwrap_or("").to_string(), u))
            .collect()
    }

    /// unit -> machine, once every named unit is `launched` in the API.
    fn wait_launched(&self, names: &[&str]) -> BTreeMap<String, String> {
        wait_for(LIMIT, &format!("{names:?} launched"), || {
            let us = self.units();
            let mut out = BTreeMap::new();
            for n in names {
                let u = us.get(*n)?;
                if u["currentState"] != "launched" {
                    return None;
                }
                out.insert(n.to_string(), u["machineID"].as_str()?.to_string());
            }
            Some(out)
        })
    }

    /// What really runs: unit -> [(machine, PID)], from the inits.
    fn running(&self) -> BTreeMap<String, Vec<(String, i32)>> {
        let mut out: BTreeMap<String, Vec<(String, i32)>> = BTreeMap::new();
        for m in &self.machines {
            if m.init.pid().is_none() {
                continue;
            }
            for (u, pid) in m.init.running() {
                out.entry(u).or_default().push((m.id.clone(), pid));
            }
        }
        out
    }

    /// Machines a unit runs on, from the inits.
    fn where_running(&self, unit: &str) -> Vec<String> {
        self.running()
            .remove(unit)
            .unwrap_or_default()
            .into_iter()
            .map(|(m, _)| m)
            .collect()
    }

    fn wait_running_on(&self, unit: &str, machines: &[&str]) {
        wait_for(LIMIT, &format!("{unit} running on {machines:?}"), || {
            (self.where_running(unit) == machines).then_some(())
        });
    }

    /// Every non-global unit runs at most once in the whole cluster.
    fn assert_no_duplicates(&self) {
        for (u, on) in self.running() {
            assert!(
                u == "probe.service" || u == "gl.service" || on.len() == 1,
                "{u} runs {} times: {on:?}",
                on.len()
            );
        }
    }
}

#[test]
fn every_xfleet_option_on_real_machines() {
    let c = Cluster::start();
    let sleep = "/bin/sleep 1000";
    c.submit("a1.service", "launched", sleep, &[]);
    c.submit("a2.service", "launched", sleep, &[]);
    c.submit("a3.service", "launched", sleep, &[]);
    c.submit(
        "id.service",
        "launched",
        sleep,
        &[("MachineID", "cccccccc")],
    );
    c.submit(
        "md.service",
        "launched",
        sleep,
        &[("MachineMetadata", "\"region=east\" \"disk=ssd\"")],
    );
    c.submit(
        "of.service",
        "launched",
        sleep,
        &[("MachineOf", "id.service")],
    );
    c.submit(
        "cf.service",
        "launched",
        sleep,
        &[
            ("Conflicts", "a*.service"),
            ("MachineMetadata", "region=west"),
        ],
    );
    c.submit(
        "gl.service",
        "launched",
        sleep,
        &[("Global", "true"), ("MachineMetadata", "region=east")],
    );
    let placed = c.wait_launched(&[
        "a1.service",
        "a2.service",
        "a3.service",
        "id.service",
        "md.service",
        "of.service",
    ]);
    // Least-loaded in name order (probe counts once everywhere): a1, a2, a3
    // on the three machines in ID order.
    assert_eq!(placed["a1.service"], IDS[0]);
    assert_eq!(placed["a2.service"], IDS[1]);
    assert_eq!(placed["a3.service"], IDS[2]);
    // MachineID by its first 8 characters; MachineMetadata values AND-ed;
    // MachineOf follows its peer.
    assert_eq!(placed["id.service"], IDS[2]);
    assert_eq!(placed["md.service"], IDS[0]);
    assert_eq!(placed["of.service"], IDS[2]);
    // ... and that is where the inits run them.
    for (u, m) in &placed {
        c.wait_running_on(u, &[m.as_str()]);
    }
    // cf conflicts with a2 on the only west machine: unschedulable, and
    // nowhere to be seen.
    let us = c.units();
    assert_eq!(us["cf.service"]["currentState"], "inactive");
    assert!(us["cf.service"].get("machineID").is_none());
    assert!(c.where_running("cf.service").is_empty());
    // The global unit runs on both east machines; no machineID in the API,
    // one state per machine.
    c.wait_running_on("gl.service", &[IDS[0], IDS[2]]);
    assert!(c.units()["gl.service"].get("machineID").is_none());
    // The agents write their states paced (at most every 200 ms here):
    // the API shows both once both have written.
    wait_for(LIMIT, "one state of gl.service per east machine", || {
        let (_, b) = c.req("GET", "/fleet/v1/state?unitName=gl.service", None);
        (json(&b)["states"].as_array().map(Vec::len) == Some(2)).then_some(())
    });
    // Freeing a2 (unload) lets cf run on the west machine; a2's process ends.
    let a2_pid = c.running()["a2.service"][0].1;
    assert_eq!(
        c.req(
            "PUT",
            "/fleet/v1/units/a2.service",
            Some(r#"{"desiredState":"inactive"}"#)
        )
        .0,
        204
    );
    let placed = c.wait_launched(&["cf.service"]);
    assert_eq!(placed["cf.service"], IDS[1]);
    c.wait_running_on("cf.service", &[IDS[1]]);
    wait_for(LIMIT, "a2's process ends", || {
        (!pid_alive(a2_pid)).then_some(())
    });
    assert!(c.where_running("a2.service").is_empty());

    // Replaces: the replaced unit leaves the machine the new one lands on.
    // md needs region=east and disk=ssd, which only machine 0 has, so it is
    // unscheduled (the scheduler's tables cover a move to another machine).
    let md_pid = c.running()["md.service"][0].1;
    c.submit(
        "new.service",
        "launched",
        sleep,
        &[("Replaces", "md.service"), ("MachineMetadata", "disk=ssd")],
    );
    let placed = c.wait_launched(&["new.service"]);
    assert_eq!(placed["new.service"], IDS[0]);
    c.wait_running_on("new.service", &[IDS[0]]);
    wait_for(LIMIT, "the replaced unit stops", || {
        (!pid_alive(md_pid) && c.where_running("md.service").is_empty()).then_some(())
    });
    assert!(c.units()["md.service"].get("machineID").is_none());

    // A template with specifiers; its instance follows `%p-peer.service`
    // and runs with `%i` expanded.
    let t = unit_body(
        "inactive",
        "/bin/sleep 700%i",
        &[("MachineOf", "%p-peer.service")],
    );
    assert_eq!(
        c.req("PUT", "/fleet/v1/units/web@.service", Some(&t)).0,
        201
    );
    c.submit(
        "web-peer.service",
        "launched",
        sleep,
        &[("MachineID", "bbbbbbbb0002")],
    );
    let inst = t.replace("\"inactive\"", "\"launched\"");
    assert_eq!(
        c.req("PUT", "/fleet/v1/units/web@1.service", Some(&inst)).0,
        201
    );
    let placed = c.wait_launched(&["web@1.service"]);
    assert_eq!(placed["web@1.service"], IDS[1]);
    c.wait_running_on("web@1.service", &[IDS[1]]);
    assert!(c.where_running("web@.service").is_empty());
    let (_, web1) = c.running()["web@1.service"][0].clone();
    let cmdline = std::fs::read_to_string(format!("/proc/{web1}/cmdline")).unwrap_or_default();
    assert_eq!(cmdline, "/bin/sleep\x007001\x00", "%i is the instance");

    // Unit replacement: new options (a different hash) for a running unit;
    // its agent restarts it with the new contents, in place.
    let old_pid = c.running()["a1.service"][0].1;
    let new_exec = "/bin/sleep 1001";
    c.submit("a1.service", "launched", new_exec, &[]);
    let new_hash = {
        let (_, b) = c.req("GET", "/fleet/v1/units/a1.service", None);
        let u = json(&b);
        assert_eq!(u["options"][0]["value"], new_exec);
        let opts: Vec<flotilla_units::fleet::UnitOption> =
            serde_json::from_value(u["options"].clone()).expect("options");
        flotilla_systemd::unit_hash(&opts)
    };
    let new_pid = wait_for(LIMIT, "a1 restarted with its new contents", || {
        let on = c.running().remove("a1.service")?;
        let (m, pid) = on.first()?.clone();
        let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).ok()?;
        (m == IDS[0] && pid != old_pid && cmdline.contains("1001")).then_some(pid)
    });
    assert!(!pid_alive(old_pid), "the old process is gone");
    wait_for(LIMIT, "the new hash reported", || {
        let (_, b) = c.req("GET", "/fleet/v1/state/a1.service", None);
        let s = json(&b);
        (s["hash"] == new_hash.as_str() && s["systemdActiveState"] == "active").then_some(())
    });
    assert_eq!(
        c.running()["a1.service"],
        vec![(IDS[0].to_string(), new_pid)]
    );

    c.assert_no_duplicates();
}

#[test]
fn clusterd_sigkill_etcd_outage_and_leader_machine_loss() {
    let mut c = Cluster::start();
    let names: Vec<String> = (0..6).map(|i| format!("s{i}.service")).collect();
    for (i, n) in names.iter().enumerate() {
        c.submit(n, "launched", &format!("/bin/sleep 10{i:02}"), &[]);
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let placed = c.wait_launched(&refs);
    for (u, m) in &placed {
        c.wait_running_on(u, &[m.as_str()]);
    }
    let before = c.running();

    // clusterd SIGKILL on machine 1: the init restarts it, its units keep
    // running with the same PIDs, nothing moves, nothing runs twice.
    let old = c.machines[1].clusterd_pid().expect("clusterd runs");
    signal(old, libc::SIGKILL);
    let back = wait_for(LIMIT, "the init restarts clusterd", || {
        c.machines[1].clusterd_pid().filter(|p| *p != old)
    });
    assert_ne!(back, old);
    // Something new for machine 1 proves its agent is back and has applied
    // its whole set again (the set always holds every assigned unit).
    c.submit(
        "after-kill.service",
        "launched",
        "/bin/sleep 1100",
        &[("MachineID", IDS[1])],
    );
    c.wait_launched(&["after-kill.service"]);
    c.wait_running_on("after-kill.service", &[IDS[1]]);
    assert_eq!(
        c.wait_launched(&refs),
        placed,
        "a restarted clusterd must not move units"
    );
    let now = c.running();
    for (u, on) in &before {
        assert_eq!(&now[u], on, "{u} keeps its machine and PID");
    }
    c.assert_no_duplicates();

    // etcd stopped for longer than the TTL: the global probe keeps running
    // with the same PID all along; every other unit is stopped by its
    // machine's fence before its lease could expire (a machine cannot tell
    // the outage from a partition: docs/cluster.md "Agent", the fence).
    // Then etcd restarts, the API catches up, nothing is unscheduled, and
    // each unit runs again where it ran.
    let before = c.running();
    let probe = before["probe.service"].clone();
    let only_probe = |c: &Cluster| {
        let now = c.running();
        match now.len() == 1 && now.get("probe.service") == Some(&probe) {
            true => Ok(()),
            false => Err(format!("running {now:?}, the probe was {probe:?}")),
        }
    };
    c.etcd.stop();
    let (code, _) = c.req("GET", "/fleet/v1/units", None);
    assert_eq!(code, 503);
    wait_for(TTL, "every non-global unit stopped by the fence", || {
        only_probe(&c).ok()
    });
    hold(Duration::from_millis(500), "while etcd is down", || {
        only_probe(&c)
    });
    c.etcd.restart();
    wait_for(LIMIT, "API back", || {
        (c.req("GET", "/fleet/v1/units", None).0 == 200).then_some(())
    });
    assert_eq!(
        c.wait_launched(&refs),
        placed,
        "an etcd outage must not unschedule running units"
    );
    let machines = |r: &BTreeMap<String, Vec<(String, i32)>>| -> BTreeMap<String, Vec<String>> {
        r.iter()
            .map(|(u, on)| (u.clone(), on.iter().map(|(m, _)| m.clone()).collect()))
            .collect()
    };
    let again = wait_for(LIMIT, "every unit running again where it ran", || {
        let now = c.running();
        (machines(&now) == machines(&before)).then_some(now)
    });
    assert_eq!(
        again["probe.service"], probe,
        "the global unit kept its PID"
    );
    c.submit("post.service", "launched", "/bin/sleep 1101", &[]);
    let post = c.wait_launched(&["post.service"]);
    c.wait_running_on("post.service", &[post["post.service"].as_str()]);
    wait_for(LIMIT, "states catch up", || {
        let (_, b) = c.req("GET", "/fleet/v1/state", None);
        let active = json(&b)["states"]
            .as_array()?
            .iter()
            .filter(|s| s["systemdActiveState"] == "active")
            .count();
        // 6 units, after-kill, post, and probe on three machines.
        (active == 6 + 2 + 3).then_some(())
    });

    // The machine that leads the engine is lost (its init, clusterd and
    // units die at once). Within 2x the TTL another engine leads and its
    // units run elsewhere, once each, as the surviving inits show; the new
    // leader schedules new units.
    let leader = wait_for(LIMIT, "a leader", || {
        let id = etcd_get(&c.etcd, "/flotilla/engine/leader")?;
        IDS.iter().position(|m| *m == id)
    });
    let lost_id = IDS[leader];
    let lost: Vec<String> = c
        .units()
        .iter()
        // after-kill.service is pinned to machine 1 by its MachineID.
        .filter(|(n, u)| u["machineID"] == lost_id && *n != "after-kill.service")
        .map(|(n, _)| n.clone())
        .collect();
    assert!(!lost.is_empty(), "the leader's machine runs fleet units");
    let t0 = Instant::now();
    c.machines[leader].init.crash();
    let survivors: Vec<&str> = IDS.iter().copied().filter(|m| *m != lost_id).collect();
    wait_for(2 * TTL, "the lost units run on the other machines", || {
        let r = c.running();
        lost.iter()
            .all(|u| {
                r.get(u)
                    .is_some_and(|on| on.len() == 1 && survivors.contains(&on[0].0.as_str()))
            })
            .then_some(())
    });
    let moved = t0.elapsed();
    eprintln!("units of the lost machine ran elsewhere after {moved:?} (TTL {TTL:?})");
    assert!(moved <= 2 * TTL);
    let leader_now = wait_for(LIMIT, "a new leader", || {
        etcd_get(&c.etcd, "/flotilla/engine/leader").filter(|l| l != lost_id)
    });
    assert!(survivors.contains(&leader_now.as_str()));
    let target = survivors[1];
    c.submit(
        "late.service",
        "launched",
        "/bin/sleep 1102",
        &[("MachineID", target)],
    );
    assert_eq!(c.wait_launched(&["late.service"])["late.service"], target);
    c.wait_running_on("late.service", &[target]);
    // The API agrees with the inits.
    let us = c.units();
    for u in &lost {
        let m = us[u]["machineID"].as_str().unwrap_or("");
        assert_eq!(c.where_running(u), vec![m.to_string()], "{u}");
    }
    wait_for(LIMIT, "two machines left", || {
        (c.machine_ids().len() == 2).then_some(())
    });
    c.assert_no_duplicates();
}

/// fleet's pattern of a scheduled job: `backup.service` (a oneshot) on one
/// machine, and `backup.timer` with `MachineOf=backup.service`, both
/// submitted through the API. Both reach `launched` on the service's
/// machine; the timer fires the service there (its status says when).
#[test]
fn a_fleet_timer_with_machine_of_fires_its_service_on_that_machine() {
    let c = Cluster::start();
    let dir = tempdir();
    let out = dir.path().join("fired");
    let service = serde_json::json!({"desiredState": "launched", "options": [
        {"section": "Service", "name": "Type", "value": "oneshot"},
        {"section": "Service", "name": "ExecStart",
         "value": format!("/bin/sh -c 'echo fired >> {}'", out.display())},
        {"section": "X-Fleet", "name": "MachineID", "value": "bbbbbbbb"},
    ]});
    let timer = serde_json::json!({"desiredState": "launched", "options": [
        {"section": "Timer", "name": "OnActiveSec", "value": "2s"},
        {"section": "Timer", "name": "AccuracySec", "value": "1ms"},
        {"section": "X-Fleet", "name": "MachineOf", "value": "backup.service"},
    ]});
    c.create(&[("backup.service", service), ("backup.timer", timer)]);
    let placed = c.wait_launched(&["backup.service", "backup.timer"]);
    assert_eq!(placed["backup.service"], IDS[1]);
    assert_eq!(placed["backup.timer"], IDS[1]);
    // Launched, the oneshot ran once; the timer fires it a second time.
    let line_count = || {
        std::fs::read_to_string(&out)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    wait_for(LIMIT, "the timer to fire the service", || {
        (line_count() >= 2).then_some(())
    });
    let units = c.machines[1].init.fleet_units();
    let t = &units["backup.timer"];
    assert!(t.status.contains("last trigger 20"), "{}", t.status);
    for m in [&c.machines[0], &c.machines[2]] {
        assert!(!m.init.fleet_units().contains_key("backup.timer"));
    }
}

/// fleet's socket-activated service, through `initctl cluster` as through
/// fleetctl: `start echo.socket` (a loopback port) and `load echo.service`,
/// which takes the listening socket as descriptor 3 (`LISTEN_FDS`) and is
/// held on the socket's machine by `MachineOf=`. The service does not run
/// until the first connection, which it answers, on that machine; the API
/// then reports it active there.
#[test]
fn a_fleet_socket_starts_its_loaded_service_on_the_first_connection() {
    let c = Cluster::start();
    let dir = tempdir();
    let port = etcd::free_port();
    let script = "import os, socket; assert os.environ['LISTEN_FDS'] == '1'; \
                  s = socket.socket(fileno=3); c, _ = s.accept(); \
                  c.sendall(b'echo from ' + open('/etc/machine-id', 'rb').read()); \
                  c.close(); s.close(); import time; time.sleep(3600)";
    let file = |name: &str, text: String| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("write the unit file");
        p.display().to_string()
    };
    let socket = file(
        "echo.socket",
        format!("[Socket]\nListenStream=127.0.0.1:{port}\n[X-Fleet]\nMachineID=cccccccc\n"),
    );
    let service = file(
        "echo.service",
        format!("[Service]\nExecStart=/usr/bin/python3 -c \"{script}\"\n[X-Fleet]\nMachineOf=echo.socket\n"),
    );
    let endpoint = format!("unix://{}", c.machines[0].sock.display());
    let ctl = |args: &[&str]| {
        let mut a = vec!["cluster", "--endpoint", &endpoint];
        a.extend_from_slice(args);
        let o = initctl(&a, &[]);
        assert_eq!(o.code, 0, "{o:?}");
        o.stdout
    };
    let started = ctl(&["start", &socket]);
    assert!(
        started.starts_with("Unit echo.socket launched on cccccccc..."),
        "{started}"
    );
    let loaded = ctl(&["load", &service]);
    assert!(
        loaded.starts_with("Unit echo.service loaded on cccccccc..."),
        "{loaded}"
    );
    let init = &c.machines[2].init;
    wait_for(
        LIMIT,
        "the socket listening, its service loaded there",
        || {
            let units = init.fleet_units();
            let listening = units.get("echo.socket")?.state == UnitState::Running;
            (listening && units.contains_key("echo.service")).then_some(())
        },
    );
    // Listening, and nothing has started the service yet.
    assert_ne!(init.fleet_units()["echo.service"].state, UnitState::Running);
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    conn.set_read_timeout(Some(LIMIT)).expect("timeout");
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut conn, &mut answer).expect("read the answer");
    assert!(answer.starts_with("echo from "), "{answer:?}");
    c.wait_running_on("echo.service", &[IDS[2]]);
    wait_for(LIMIT, "the API to report echo.service active", || {
        let (code, b) = c.req("GET", "/fleet/v1/state?unitName=echo.service", None);
        let st = json(&b);
        let s = &st["states"][0];
        (code == 200 && s["systemdActiveState"] == "active" && s["machineID"] == IDS[2])
            .then_some(())
    });
}
