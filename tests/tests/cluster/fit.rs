//! Placement by fit on real machines: a real etcd and real inits running
//! their own clusterd with different `--capacity` (and `--reserve`),
//! units with `[X-Fleet] MemoryReservation=` and `CoresReservation=` that
//! fill them, one that fits nowhere until a machine with room joins, and a
//! machine lost whose units are placed again where they fit (the rest
//! reported, not squeezed in). What runs where is read from the inits;
//! the reasons from the API and `initctl cluster`; a unit's output through
//! `initctl cluster logs` (also followed). fleetctl's request sequences
//! with the new keys are replayed as in `api.rs`.

use crate::support::etcd::Etcd;
use crate::support::*;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::Duration;

const TTL: &str = "3s";
const LIMIT: Duration = Duration::from_secs(30);
const JSON: Option<&str> = Some("application/json");

/// A unit of 512 MiB and half a core that says its name, then sleeps.
fn filler(name: &str) -> String {
    unit_body(
        "launched",
        &format!("/bin/sh -c \"echo started {name}; exec sleep 1000\""),
        &[("MemoryReservation", "512"), ("CoresReservation", "50")],
    )
}

fn put(m: &Machine, name: &str, body: &str) {
    let (c, b) = m.api("PUT", &format!("/fleet/v1/units/{name}"), Some(body));
    assert_eq!(c, 201, "{name}: {b}");
}

/// unit -> (machine, reason), as the API lists them.
fn placements(m: &Machine) -> BTreeMap<String, (String, String)> {
    let (c, b) = m.api("GET", "/fleet/v1/units", None);
    assert_eq!(c, 200, "{b}");
    json(&b)["units"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|u| {
            (
                u["name"].as_str().unwrap_or("").to_string(),
                (
                    u["machineID"].as_str().unwrap_or("").to_string(),
                    u["unscheduledReason"].as_str().unwrap_or("").to_string(),
                ),
            )
        })
        .collect()
}

/// machine -> units running there, from the inits.
fn running(ms: &[&Machine]) -> BTreeMap<String, Vec<String>> {
    ms.iter()
        .filter(|m| m.init.pid().is_some())
        .map(|m| (m.id.clone(), m.init.running().into_keys().collect()))
        .collect()
}

/// Machine -> (totalResources, reservedResources) as the API lists them.
fn resources(m: &Machine) -> BTreeMap<String, (serde_json::Value, serde_json::Value)> {
    let (_, b) = m.api("GET", "/fleet/v1/machines", None);
    json(&b)["machines"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|x| {
            (
                x["id"].as_str().unwrap_or("").to_string(),
                (x["totalResources"].clone(), x["reservedResources"].clone()),
            )
        })
        .collect()
}

fn res(memory: u64, cores: u64) -> serde_json::Value {
    serde_json::json!({"cores": cores, "memory": memory})
}

/// On failure: each machine's fleet units with their states and last log
/// lines, and what its clusterd said.
fn logs_of(ms: &[&Machine]) -> String {
    let mut out = String::new();
    for m in ms.iter().filter(|m| m.init.pid().is_some()) {
        out.push_str(&format!("--- {} ---\n", m.id));
        for (n, u) in m.init.fleet_units() {
            let log = m.init.unit_log(&n);
            let tail: Vec<&str> = log.lines().rev().take(5).collect();
            out.push_str(&format!("{n}: {:?}; last lines: {tail:?}\n", u.state));
        }
        let log = m.log();
        let tail: Vec<&str> = log.lines().rev().take(15).collect();
        out.push_str(&format!("clusterd, last lines: {tail:#?}\n"));
    }
    out
}

/// [`wait_for`], and on failure what the machines say.
fn wait_or_tell<T>(
    ms: &[&Machine],
    limit: Duration,
    what: &str,
    mut f: impl FnMut() -> Option<T>,
) -> T {
    let end = std::time::Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        if std::time::Instant::now() > end {
            panic!(
                "timed out after {limit:?} waiting for {what}\n{}",
                logs_of(ms)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn units_fill_machines_by_fit_wait_for_room_and_move_when_one_is_lost() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let flags = |s: &str| -> Vec<String> { s.split_whitespace().map(String::from).collect() };
    // Room for 2, 4 and 6 units of 512 MiB and half a core (the last
    // after what it keeps for its system).
    let small = Machine::start(
        &etcd.url(),
        dir.path(),
        "aaaaaaaa0001",
        "",
        "192.0.2.1",
        TTL,
        &flags("--capacity memory=1024,cores=1"),
    );
    let medium = Machine::start(
        &etcd.url(),
        dir.path(),
        "bbbbbbbb0002",
        "",
        "192.0.2.2",
        TTL,
        &flags("--capacity memory=2048,cores=2"),
    );
    let mut large = Machine::start(
        &etcd.url(),
        dir.path(),
        "cccccccc0003",
        "",
        "192.0.2.3",
        TTL,
        &flags("--capacity memory=4096,cores=4 --reserve memory=1024,cores=1"),
    );
    small.wait_api();
    wait_for(LIMIT, "three machines with their capacity", || {
        let r = resources(&small);
        (r.len() == 3
            && r["aaaaaaaa0001"].0 == res(1024, 100)
            && r["bbbbbbbb0002"].0 == res(2048, 200)
            && r["cccccccc0003"].0 == res(3072, 300))
        .then_some(())
    });
    let names: Vec<String> = (1..=12).map(|i| format!("fill{i:02}.service")).collect();
    for n in &names {
        put(&small, n, &filler(n));
    }
    let all = [&small, &medium, &large];
    let filled = wait_or_tell(
        &all,
        LIMIT,
        "12 units running, filling the machines",
        || {
            let r = running(&all);
            let counts: Vec<usize> = r.values().map(Vec::len).collect();
            (counts == [2, 4, 6]).then_some(r)
        },
    );
    // The inits run what the API says, and each machine reports what its
    // units reserve.
    let p = placements(&small);
    for (m, units) in &filled {
        for u in units {
            assert_eq!(&p[u].0, m, "{u}");
        }
    }
    wait_for(LIMIT, "the reservations published", || {
        let r = resources(&small);
        (r["aaaaaaaa0001"].1 == res(1024, 100)
            && r["bbbbbbbb0002"].1 == res(2048, 200)
            && r["cccccccc0003"].1 == res(3072, 300))
        .then_some(())
    });

    // One more fits nowhere: it waits, and says why, in the API and in
    // initctl cluster.
    put(&small, "huge.service", &filler("huge.service"));
    let why = wait_for(LIMIT, "huge.service's reason", || {
        let (m, why) = placements(&small).remove("huge.service")?;
        (m.is_empty() && !why.is_empty()).then_some(why)
    });
    assert_eq!(
        why,
        "fits on no machine: 3 machines have too little room left for its reservation \
         (512 MiB of memory and 0.50 cores)"
    );
    let ep = format!("unix://{}", small.sock.display());
    let out = initctl(&["cluster", "--endpoint", &ep, "status", "huge"], &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(
        out.stderr.trim(),
        format!("initctl cluster: Unit huge.service is not scheduled: {why}")
    );
    let out = initctl(
        &[
            "cluster",
            "--endpoint",
            &ep,
            "--no-legend",
            "list-unit-files",
        ],
        &[],
    );
    let row = out
        .stdout
        .lines()
        .find(|l| l.starts_with("huge.service"))
        .unwrap_or_default()
        .to_string();
    let cols: Vec<&str> = row.split('\t').collect();
    assert_eq!(
        cols.get(2..),
        Some(&["launched", "inactive", "-"][..]),
        "{row}"
    );

    // The reservation is the unit's cgroup limit on its machine: set, or
    // (where the cgroup has no memory controller) skipped and said so.
    let (m0, u0) = filled
        .iter()
        .next()
        .map(|(m, u)| (m.clone(), u[0].clone()))
        .unwrap();
    let host = all.iter().find(|m| m.id == m0).unwrap();
    let pid = host.init.running()[&u0];
    let log = wait_for(LIMIT, "the unit's first line", || {
        let out = initctl(&["cluster", "--endpoint", &ep, "logs", &u0], &[]);
        (out.code == 0 && out.stdout.contains("started")).then_some(out.stdout)
    });
    match cgroup_file(pid, "memory.max") {
        Some(max) => {
            assert_eq!(max.trim(), (512u64 << 20).to_string());
            assert_eq!(
                cgroup_file(pid, "cpu.max").as_deref().map(str::trim),
                Some("50000 100000")
            );
        }
        None => {
            let said = |key: &str| {
                log.lines()
                    .any(|l| l.contains(key) && l.contains("skipped"))
            };
            assert!(said("MemoryMax") && said("CPUQuota"), "{log}");
        }
    }
    assert!(log.contains(&format!("started {u0}")), "{log}");
    // initctl cluster logs: as initctl logs, -n included.
    let out = initctl(&["cluster", "--endpoint", &ep, "logs", &u0, "-n", "1"], &[]);
    let last = log.lines().last().unwrap_or_default();
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, format!("{last}\n").as_str()),
        "{out:?}"
    );

    // A machine with room joins: huge.service goes there at once.
    let big = Machine::start(
        &etcd.url(),
        dir.path(),
        "dddddddd0004",
        "",
        "192.0.2.4",
        TTL,
        &flags("--capacity memory=1536,cores=1.5"),
    );
    let all4 = [&small, &medium, &large, &big];
    wait_for(LIMIT, "huge.service running on the new machine", || {
        (running(&all4)["dddddddd0004"] == ["huge.service"]).then_some(())
    });
    assert_eq!(placements(&small)["huge.service"].1, "");

    // The large machine is lost: of its 6 units, the 2 that fit on the new
    // machine run there (name order), the other 4 wait with their reason.
    let lost = filled["cccccccc0003"].clone();
    large.init.crash();
    let alive = [&small, &medium, &big];
    let moved = wait_for(
        Duration::from_secs(40),
        "the lost machine's units moved",
        || {
            let r = running(&alive);
            (r["dddddddd0004"].len() == 3).then_some(r)
        },
    );
    let mut want: Vec<String> = lost[..2].to_vec();
    want.push("huge.service".into());
    want.sort();
    assert_eq!(moved["dddddddd0004"], want, "{}", logs_of(&alive));
    let p = placements(&small);
    for u in &lost[2..] {
        assert_eq!(p[u].0, "", "{u} is not squeezed in");
        assert!(p[u].1.contains("too little room left"), "{u}: {:?}", p[u].1);
    }
    // Nothing overcommitted on the machines that are left.
    let r = running(&alive);
    assert_eq!(r["aaaaaaaa0001"].len(), 2);
    assert_eq!(r["bbbbbbbb0002"].len(), 4);
    // A unit leaves: the first waiting one takes its room.
    let (c, _) = small.api(
        "PUT",
        "/fleet/v1/units/huge.service",
        Some("{\"desiredState\":\"inactive\"}\n"),
    );
    assert_eq!(c, 204);
    wait_for(LIMIT, "a waiting unit placed in the room left", || {
        running(&alive)["dddddddd0004"]
            .contains(&lost[2])
            .then_some(())
    });
}

/// `initctl cluster logs -f` follows a unit's output on the machine that
/// runs it, through another machine's API, until it is stopped.
#[test]
fn cluster_logs_follow_a_remote_unit() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let a = Machine::start(
        &etcd.url(),
        dir.path(),
        "aaaaaaaa0001",
        "",
        "192.0.2.1",
        TTL,
        &[],
    );
    let b = Machine::start(
        &etcd.url(),
        dir.path(),
        "bbbbbbbb0002",
        "",
        "192.0.2.2",
        TTL,
        &[],
    );
    a.wait_api();
    b.wait_api();
    let body = unit_body(
        "launched",
        "/bin/sh -c \"i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.2; done\"",
        &[("MachineID", "bbbbbbbb")],
    );
    put(&a, "ticker.service", &body);
    wait_for(LIMIT, "ticker running on b", || {
        b.init
            .running()
            .contains_key("ticker.service")
            .then_some(())
    });
    // Through a's API: the lines are b's.
    let mut child = Command::new(bin("initctl", "flotilla-ctl"))
        .args(["cluster", "--endpoint"])
        .arg(format!("unix://{}", a.sock.display()))
        .args(["logs", "ticker", "-n", "2", "-f"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("initctl cluster logs -f");
    let pid = child.id() as i32;
    let out = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                return;
            }
        }
    });
    let mut seen: Vec<u64> = Vec::new();
    let end = std::time::Instant::now() + LIMIT;
    while seen.len() < 8 && std::time::Instant::now() < end {
        if let Ok(l) = rx.recv_timeout(Duration::from_millis(200)) {
            // The init's own notes about the unit are in its log too.
            if l.starts_with("[init] ") {
                continue;
            }
            let n = l.strip_prefix("tick ").and_then(|n| n.parse().ok());
            seen.push(n.unwrap_or_else(|| panic!("not a tick: {l:?}")));
        }
    }
    signal(pid, libc::SIGKILL);
    let _ = child.wait();
    // Two lines of history, then every new line in order, none twice.
    assert_eq!(seen.len(), 8, "{seen:?}\n{}", b.log());
    assert!(seen.windows(2).all(|w| w[1] == w[0] + 1), "{seen:?}");
    // The follow request ends with the client (its lease revoked or
    // expired): the agent stops and its answer goes.
    wait_for(LIMIT, "the follow request gone", || {
        etcd_count(&etcd, "/flotilla/logfollow/")
            .eq(&0)
            .then_some(())
    });
    wait_for(LIMIT, "the followed lines gone", || {
        etcd_count(&etcd, "/flotilla/logtail/").eq(&0).then_some(())
    });
    // A unit that is not scheduled anywhere: a clear error.
    let out = initctl(
        &[
            "cluster",
            "--endpoint",
            &format!("unix://{}", a.sock.display()),
            "logs",
            "nothere",
        ],
        &[],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("Unit nothere.service not found"),
        "{out:?}"
    );
    // A global unit's output: on the machine named.
    let body = unit_body(
        "launched",
        "/bin/sh -c \"echo global here; exec sleep 1000\"",
        &[("Global", "true")],
    );
    put(&a, "everywhere.service", &body);
    let ep = format!("unix://{}", a.sock.display());
    wait_for(LIMIT, "the global unit's line from b", || {
        let out = initctl(
            &[
                "cluster",
                "--endpoint",
                &ep,
                "logs",
                "everywhere",
                "--machine",
                "bbbbbbbb0002",
            ],
            &[],
        );
        (out.code == 0 && out.stdout.contains("global here")).then_some(())
    });
    let out = initctl(&["cluster", "--endpoint", &ep, "logs", "everywhere"], &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("is a global unit: give the machine"),
        "{out:?}"
    );
}

/// fleetctl's sequences with the new keys: `submit` (GET 404, PUT inactive
/// with the options, poll until inactive) and `start` (PUT launched, poll
/// until launched, then `/state` until active) of a unit that fits; then
/// of one that does not, which stays `inactive` with no machine (as
/// `fleetctl list-unit-files` shows an unscheduled unit) and its reason.
#[test]
fn fleetctl_sequences_with_reservations() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let cd = Machine::start(
        &etcd.url(),
        dir.path(),
        "f1eetc7l0000",
        "",
        "192.0.2.1",
        "2s",
        &["--capacity".into(), "memory=1024,cores=2".into()],
    );
    cd.wait_api();
    let s = cd.sock.clone();
    let req = |m: &str, p: &str, b: Option<&str>| http_unix(&s, m, p, b.map(|_| JSON.unwrap()), b);
    let get = |n: &str| json(&req("GET", &format!("/fleet/v1/units/{n}?alt=json"), None).1);
    for (name, memory, fits) in [("web.service", "768", true), ("big.service", "768", false)] {
        assert_eq!(
            req("GET", &format!("/fleet/v1/units/{name}?alt=json"), None).0,
            404
        );
        // As fleetctl sends it: the unit file's options unchanged, the
        // body ending in a newline.
        let body = unit_body(
            "inactive",
            "/bin/sleep 1000",
            &[("MemoryReservation", memory), ("CoresReservation", "100")],
        );
        let (c, b) = req(
            "PUT",
            &format!("/fleet/v1/units/{name}?alt=json"),
            Some(&body),
        );
        assert_eq!(c, 201, "{b}");
        wait_for(LIMIT, "inactive", || {
            (get(name)["currentState"] == "inactive").then_some(())
        });
        let opts = get(name)["options"].clone();
        assert!(
            opts.as_array().is_some_and(|o| o
                .iter()
                .any(|o| o["name"] == "MemoryReservation" && o["value"] == memory)),
            "{opts}"
        );
        let (c, _) = req(
            "PUT",
            &format!("/fleet/v1/units/{name}?alt=json"),
            Some("{\"desiredState\":\"launched\"}\n"),
        );
        assert_eq!(c, 204);
        if fits {
            wait_or_tell(&[&cd], LIMIT, "launched", || {
                (get(name)["currentState"] == "launched").then_some(())
            });
            wait_or_tell(&[&cd], LIMIT, "active", || {
                let (c, b) = req("GET", &format!("/fleet/v1/state/{name}?alt=json"), None);
                (c == 200 && json(&b)["systemdActiveState"] == "active").then_some(())
            });
        } else {
            let u = wait_for(LIMIT, "the reason", || {
                let u = get(name);
                u.get("unscheduledReason").is_some().then_some(u)
            });
            assert_eq!(u["currentState"], "inactive");
            assert!(u.get("machineID").is_none(), "{u}");
            assert_eq!(
                u["unscheduledReason"],
                "fits on no machine: 1 machine has too little room left for its \
                 reservation (768 MiB of memory and 1.00 core)"
            );
            assert_eq!(req("GET", &format!("/fleet/v1/state/{name}"), None).0, 404);
        }
    }
    // A bad value is a 400 with the reason, and nothing is stored.
    let body = unit_body("launched", "/bin/true", &[("MemoryReservation", "1G")]);
    let (c, b) = req("PUT", "/fleet/v1/units/bad.service", Some(&body));
    assert_eq!(c, 400, "{b}");
    assert!(
        b.contains("MemoryReservation=1G is not a whole number of MiB"),
        "{b}"
    );
    assert_eq!(req("GET", "/fleet/v1/units/bad.service", None).0, 404);
    // The machine's resources in the API.
    let (_, b) = req("GET", "/fleet/v1/machines?alt=json", None);
    let m = &json(&b)["machines"][0];
    assert_eq!(m["totalResources"], res(1024, 200));
    wait_for(LIMIT, "web's reservation published", || {
        let (_, b) = req("GET", "/fleet/v1/machines?alt=json", None);
        let m = &json(&b)["machines"][0];
        (m["reservedResources"] == res(768, 100) && m["freeResources"] == res(256, 100))
            .then_some(())
    });
}

/// A file of the cgroup (v2) a process is in, when there is one to read.
fn cgroup_file(pid: i32, file: &str) -> Option<String> {
    let cg = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let path = cg.lines().find_map(|l| l.strip_prefix("0::"))?;
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    let root = mounts
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some("cgroup2"))?
        .split_whitespace()
        .nth(1)?
        .to_string();
    std::fs::read_to_string(format!("{root}{path}/{file}")).ok()
}

/// The number of keys under `prefix`.
fn etcd_count(e: &Etcd, prefix: &str) -> u64 {
    let end = {
        let mut b = prefix.as_bytes().to_vec();
        if let Some(l) = b.last_mut() {
            *l += 1;
        }
        b
    };
    let body = format!(
        "{{\"key\":\"{}\",\"range_end\":\"{}\",\"count_only\":true}}",
        b64_encode(prefix.as_bytes()),
        b64_encode(&end)
    );
    let v: serde_json::Value =
        serde_json::from_str(&e.gateway("/v3/kv/range", &body)).unwrap_or_default();
    v["count"]
        .as_str()
        .and_then(|c| c.parse().ok())
        .or_else(|| v["count"].as_u64())
        .unwrap_or(0)
}
