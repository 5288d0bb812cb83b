//! Three machines against one real etcd: each a clusterd with its own
//! machine ID, metadata and local init (a stand-in of the init's control
//! socket, see cluster_support). Scheduling with X-Fleet options, global
//! units, machine loss, leader loss, clusterd SIGKILL and an etcd restart.

mod cluster_support;

use cluster_support::etcd::Etcd;
use cluster_support::*;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const JSON: Option<&str> = Some("application/json");
const TTL: &str = "2s";

struct Machine {
    init: InitStandIn,
    cd: Clusterd,
}

struct Cluster {
    etcd: Etcd,
    dir: tempfile::TempDir,
    machines: Vec<Machine>,
}

const IDS: [&str; 3] = ["aaaaaaaa0001", "bbbbbbbb0002", "cccccccc0003"];

impl Cluster {
    fn start() -> Cluster {
        let etcd = Etcd::start();
        let dir = tempdir();
        let metas = ["region=east,disk=ssd", "region=west", "region=east"];
        let machines: Vec<Machine> = IDS
            .iter()
            .zip(metas)
            .map(|(id, md)| {
                let init = InitStandIn::start(&dir.path().join(format!("{id}.init.sock")));
                let cd = Clusterd::start(&etcd.url(), dir.path(), id, md, &init.path, TTL);
                Machine { init, cd }
            })
            .collect();
        let c = Cluster {
            etcd,
            dir,
            machines,
        };
        c.machines[0].cd.wait_api();
        wait_for(Duration::from_secs(20), "three machines", || {
            (c.machine_count() == 3).then_some(())
        });
        c
    }

    fn req(&self, m: &str, p: &str, b: Option<&str>) -> (u16, String) {
        // Any live machine's API will do.
        let live = self
            .machines
            .iter()
            .find(|x| x.cd.pid().is_some())
            .expect("a live clusterd");
        http_unix(
            &live.cd.sock,
            m,
            p,
            if b.is_some() { JSON } else { None },
            b,
        )
    }

    fn machine_count(&self) -> usize {
        let (c, b) = self.req("GET", "/fleet/v1/machines", None);
        if c != 200 {
            return 0;
        }
        json(&b)["machines"].as_array().map(Vec::len).unwrap_or(0)
    }

    fn submit(&self, name: &str, desired: &str, xfleet: &[(&str, &str)]) {
        let (c, b) = self.req(
            "PUT",
            &format!("/fleet/v1/units/{name}"),
            Some(&unit_body(desired, "/bin/sleep 1000", xfleet)),
        );
        assert_eq!(c, 201, "{name}: {b}");
    }

    fn units(&self) -> BTreeMap<String, serde_json::Value> {
        let (_, b) = self.req("GET", "/fleet/v1/units", None);
        json(&b)["units"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| (u["name"].as_str().unwrap().to_string(), u.clone()))
            .collect()
    }

    /// unit -> machine, once every named unit is launched.
    fn wait_launched(&self, names: &[&str], limit: Duration) -> BTreeMap<String, String> {
        wait_for(limit, &format!("{names:?} launched"), || {
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

    /// Where each unit really runs (from the inits).
    fn running(&self) -> BTreeMap<String, Vec<String>> {
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (i, m) in self.machines.iter().enumerate() {
            for u in m.init.running() {
                out.entry(u).or_default().push(IDS[i].to_string());
            }
        }
        out
    }
}

#[test]
fn scheduling_with_every_xfleet_option_and_global_units() {
    let c = Cluster::start();
    c.submit("a1.service", "launched", &[]);
    c.submit("a2.service", "launched", &[]);
    c.submit("a3.service", "launched", &[]);
    c.submit("id.service", "launched", &[("MachineID", "cccccccc")]);
    c.submit(
        "md.service",
        "launched",
        &[("MachineMetadata", "\"region=east\" \"disk=ssd\"")],
    );
    c.submit("of.service", "launched", &[("MachineOf", "id.service")]);
    c.submit(
        "cf.service",
        "launched",
        &[
            ("Conflicts", "a*.service"),
            ("MachineMetadata", "region=west"),
        ],
    );
    c.submit(
        "gl.service",
        "launched",
        &[("Global", "true"), ("MachineMetadata", "region=east")],
    );
    let placed = c.wait_launched(
        &[
            "a1.service",
            "a2.service",
            "a3.service",
            "id.service",
            "md.service",
            "of.service",
        ],
        Duration::from_secs(10),
    );
    // Least-loaded in name order: a1, a2, a3 on the three machines in ID order.
    assert_eq!(placed["a1.service"], IDS[0]);
    assert_eq!(placed["a2.service"], IDS[1]);
    assert_eq!(placed["a3.service"], IDS[2]);
    assert_eq!(placed["id.service"], IDS[2]);
    assert_eq!(placed["md.service"], IDS[0]);
    assert_eq!(placed["of.service"], IDS[2]);
    // cf conflicts with a2 on the only west machine: unschedulable.
    let us = c.units();
    assert_eq!(us["cf.service"]["currentState"], "inactive");
    assert!(us["cf.service"].get("machineID").is_none());
    // The global unit runs on both east machines; no machineID in the API.
    wait_for(
        Duration::from_secs(10),
        "global unit on east machines",
        || {
            let r = c.running();
            (r.get("gl.service") == Some(&vec![IDS[0].to_string(), IDS[2].to_string()]))
                .then_some(())
        },
    );
    assert!(c.units()["gl.service"].get("machineID").is_none());
    let (_, b) = c.req("GET", "/fleet/v1/state?unitName=gl.service", None);
    assert_eq!(json(&b)["states"].as_array().map(Vec::len), Some(2));
    // Freeing a2 lets cf run.
    assert_eq!(
        c.req(
            "PUT",
            "/fleet/v1/units/a2.service",
            Some(r#"{"desiredState":"inactive"}"#)
        )
        .0,
        204
    );
    let placed = c.wait_launched(&["cf.service"], Duration::from_secs(10));
    assert_eq!(placed["cf.service"], IDS[1]);
    // Replaces: the replaced unit moves elsewhere.
    c.submit(
        "new.service",
        "launched",
        &[("Replaces", "md.service"), ("MachineMetadata", "disk=ssd")],
    );
    let placed = c.wait_launched(&["new.service"], Duration::from_secs(10));
    assert_eq!(placed["new.service"], IDS[0]);
    // md requires region=east+disk=ssd: only machine 0 has it, so it is
    // unscheduled (the scheduler's unit tests cover a move to another machine).
    wait_for(Duration::from_secs(10), "replaced unit leaves", || {
        let r = c.running();
        (!r.contains_key("md.service") && r.get("new.service") == Some(&vec![IDS[0].to_string()]))
            .then_some(())
    });
    assert!(c.units()["md.service"].get("machineID").is_none());
    // Templates and instances with specifiers.
    let t = unit_body(
        "inactive",
        "/bin/sleep 1000",
        &[("MachineOf", "%p-peer.service")],
    );
    assert_eq!(
        c.req("PUT", "/fleet/v1/units/web@.service", Some(&t)).0,
        201
    );
    c.submit(
        "web-peer.service",
        "launched",
        &[("MachineID", "bbbbbbbb0002")],
    );
    let inst = t.replace("\"inactive\"", "\"launched\"");
    assert_eq!(
        c.req("PUT", "/fleet/v1/units/web@1.service", Some(&inst)).0,
        201
    );
    let placed = c.wait_launched(&["web@1.service"], Duration::from_secs(10));
    assert_eq!(placed["web@1.service"], IDS[1]);
    // No unit runs twice.
    for (u, ms) in c.running() {
        assert!(u == "gl.service" || ms.len() == 1, "{u} runs on {ms:?}");
    }
}

#[test]
fn machine_loss_leader_loss_sigkill_and_etcd_restart() {
    let mut c = Cluster::start();
    for i in 0..6 {
        c.submit(&format!("s{i}.service"), "launched", &[]);
    }
    let names: Vec<String> = (0..6).map(|i| format!("s{i}.service")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let before = c.wait_launched(&refs, Duration::from_secs(10));

    // clusterd SIGKILL on machine 1 and a quick restart: nothing moves,
    // nothing runs twice, its units keep running.
    let on1: Vec<String> = before
        .iter()
        .filter(|(_, m)| *m == IDS[1])
        .map(|(u, _)| u.clone())
        .collect();
    assert!(!on1.is_empty());
    c.machines[1].cd.kill();
    let running1 = c.machines[1].init.running();
    c.machines[1].cd.restart();
    std::thread::sleep(Duration::from_millis(10));
    let after = c.wait_launched(&refs, Duration::from_secs(10));
    assert_eq!(before, after, "a restarted clusterd must not move units");
    assert_eq!(c.machines[1].init.running(), running1);
    for (u, ms) in c.running() {
        assert_eq!(ms.len(), 1, "{u} runs on {ms:?}");
    }

    // etcd stopped for a while (longer than the TTL) and restarted: nothing
    // stops locally, nothing is rescheduled, the API catches up.
    let running_before = c.running();
    c.etcd.stop();
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        c.running(),
        running_before,
        "units keep running while etcd is down"
    );
    c.etcd.restart();
    wait_for(Duration::from_secs(20), "API back", || {
        (c.req("GET", "/fleet/v1/units", None).0 == 200).then_some(())
    });
    let after = c.wait_launched(&refs, Duration::from_secs(20));
    assert_eq!(
        before, after,
        "an etcd outage must not unschedule running units"
    );
    assert_eq!(c.running(), running_before);
    // Submitting still works after the outage.
    c.submit("post.service", "launched", &[]);
    c.wait_launched(&["post.service"], Duration::from_secs(20));

    // Leader loss: kill whichever clusterd leads; the next one schedules.
    let leader = wait_for(Duration::from_secs(5), "a leader", || {
        let id = etcd_get(&c.etcd, "/flotilla/engine/leader")?;
        IDS.iter().position(|m| *m == id)
    });
    let leader_machine = IDS[leader];
    c.machines[leader].cd.kill();
    let t0 = Instant::now();
    c.submit(
        "late.service",
        "launched",
        &[("MachineID", IDS[(leader + 1) % 3])],
    );
    c.wait_launched(&["late.service"], Duration::from_secs(15));
    eprintln!("new leader scheduled after {:?}", t0.elapsed());

    // Machine loss: the killed clusterd's machine expires; its units move
    // within 2x the TTL (the stand-in init of the dead machine stays, as a
    // partitioned machine would).
    let lost: Vec<String> = c
        .units()
        .iter()
        .filter(|(_, u)| u["machineID"] == leader_machine)
        .map(|(n, _)| n.clone())
        .collect();
    let t0 = Instant::now();
    wait_for(
        Duration::from_secs(4) + Duration::from_secs(3),
        "units moved off the lost machine",
        || {
            let us = c.units();
            lost.iter()
                .all(|n| {
                    us[n]["currentState"] == "launched" && us[n]["machineID"] != leader_machine
                })
                .then_some(())
        },
    );
    let moved_after = t0.elapsed();
    eprintln!("units moved {moved_after:?} after the machine was lost");
    let (_, b) = c.req("GET", "/fleet/v1/machines", None);
    assert_eq!(json(&b)["machines"].as_array().map(Vec::len), Some(2));
    let _ = &c.dir;
}
