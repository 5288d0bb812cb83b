//! One committer across hosts (`docs/cluster.md`, "One committer"): three
//! machines whose APIs listen with TLS and client certificates on a
//! non-loopback address (the host side of a veth pair into a network
//! namespace the test makes) and advertise themselves as
//! `https://IP:PORT`. Clients in the namespace (curl with a user's
//! certificate) write through every API: every write is committed by the
//! engine leader's clusterd, which the others reach over TLS with their own
//! certificates; fleetctl's request sequences through a machine that is not
//! the leader get fleet's statuses; every unit runs once. A fourth machine
//! whose certificate is from another CA is refused by the leader's TLS
//! listener: its writes are committed by itself (nothing lost) and its log
//! says why. A plain-HTTP advertise off loopback, and an `https://` one
//! without the API's TLS, are refused at start. Needs root (the namespace).

use crate::support::etcd::{free_port, Etcd};
use crate::support::fleet::{command, launch_body, name};
use crate::support::tls::{curl, Answer, Netns, Pki};
use crate::support::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(30);
const MACHINES: usize = 3;
const PER_MACHINE: usize = 8;

/// A client of the TLS APIs: curl inside the namespace with the CA and a
/// user's certificate.
struct Client<'a> {
    ns: &'a Netns,
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

impl Client<'_> {
    fn request(&self, method: &str, url: &str, body: Option<&str>) -> Answer {
        let client = Some((self.cert.as_path(), self.key.as_path()));
        curl(self.ns.command("curl"), &self.ca, client, method, url, body)
    }
}

/// Starts machine `id` with its API on `ip:port` over TLS (`cert`,
/// `key`, client CA `ca`), advertised as `https://ip:port`.
fn tls_machine(
    etcd: &Etcd,
    dir: &Path,
    id: &str,
    ip: &str,
    port: u16,
    (cert, key): &(PathBuf, PathBuf),
    ca: &Path,
) -> Machine {
    let p = |x: &Path| x.display().to_string();
    Machine::start(
        &etcd.url(),
        dir,
        id,
        "tls=yes",
        ip,
        "3s",
        &[
            format!("--api-listen=tcp://{ip}:{port}"),
            format!("--api-advertise=https://{ip}:{port}"),
            "--api-cert".into(),
            p(cert),
            "--api-key".into(),
            p(key),
            "--api-client-ca".into(),
            p(ca),
        ],
    )
}

/// Which machines run each unit.
fn placements(machines: &[&Machine]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for m in machines {
        for u in m.init.running().into_keys() {
            out.entry(u).or_default().push(m.id.clone());
        }
    }
    out
}

#[test]
fn writes_are_forwarded_to_the_leader_over_tls() {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "making a network namespace needs root (the README's test command runs as root)"
    );
    let ns = Netns::new().unwrap_or_else(|e| panic!("cannot make the network namespace: {e}"));
    let ip = ns.host_ip.clone();
    let dir = tempdir();
    let pki = Pki::new(&dir.path().join("pki"), "cluster-ca");
    let san = format!("IP:{ip}");
    let (user_cert, user_key) = pki.issue("user", &[]);
    let client = Client {
        ns: &ns,
        ca: pki.ca.clone(),
        cert: user_cert,
        key: user_key,
    };
    let etcd = Etcd::start();

    // clusterd refuses, at start, to forward in plain HTTP off loopback, and
    // an https:// advertise without the API's TLS.
    let cd = bin("clusterd", "flotilla-cluster");
    for (advertise, says) in [
        (
            format!("tcp://{ip}:{}", free_port()),
            "forwarded writes would travel in plain HTTP off loopback",
        ),
        (
            format!("https://{ip}:{}", free_port()),
            "an https:// API needs --api-cert, --api-key and --api-client-ca",
        ),
    ] {
        let out = Command::new(&cd)
            .args(["--etcd", &etcd.url(), "--machine-id", "x1"])
            .args(["--api-advertise", &advertise])
            .stdin(Stdio::null())
            .output()
            .expect("run clusterd");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{advertise}: {err}");
        assert!(err.contains(says), "{advertise}: {err}");
    }

    let ids: Vec<String> = (0..MACHINES).map(|i| format!("7f{i:02}00000000")).collect();
    let ports: Vec<u16> = (0..MACHINES).map(|_| free_port()).collect();
    let machines: Vec<Machine> = (0..MACHINES)
        .map(|i| {
            let cert = pki.issue(&format!("machine{i}"), &[&san]);
            tls_machine(&etcd, dir.path(), &ids[i], &ip, ports[i], &cert, &pki.ca)
        })
        .collect();
    let base = |i: usize| format!("https://{ip}:{}/fleet/v1", ports[i]);
    wait_for(LIMIT, "every machine, over TLS", || {
        let a = client.request("GET", &format!("{}/machines", base(0)), None);
        (a.code == 200 && a.body.matches("\"id\"").count() == MACHINES).then_some(())
    });
    let lid = wait_for(LIMIT, "an engine leader", || {
        etcd_get(&etcd, "/flotilla/engine/leader")
    });
    let leader = ids.iter().position(|m| *m == lid).expect("a machine leads");
    let url = wait_for(LIMIT, "the committer key", || {
        let v = json(&etcd_get(&etcd, "/flotilla/engine/committer")?);
        (v["machine"] == lid.as_str()).then(|| v["url"].as_str().unwrap_or("").to_string())
    });
    assert_eq!(url, format!("https://{ip}:{}", ports[leader]));

    // Clients on every API at once: every write committed by the leader.
    let mut want = BTreeMap::new();
    std::thread::scope(|s| {
        for t in 0..MACHINES {
            let (client, base, lid) = (&client, base(t), &lid);
            s.spawn(move || {
                for i in (t * PER_MACHINE)..((t + 1) * PER_MACHINE) {
                    let url = format!("{base}/units/{}", name(i));
                    let a = client.request("PUT", &url, Some(&launch_body(i, 0)));
                    assert_eq!(a.code, 201, "PUT {url}: {}", a.body);
                    assert_eq!(&a.by, lid, "PUT {url}");
                }
            });
        }
    });
    for i in 0..MACHINES * PER_MACHINE {
        want.insert(name(i), command(i, 0));
    }

    // fleetctl's submit, load and start through a machine that is not the
    // leader: fleet's statuses, committed by the leader.
    let other = base((leader + 1) % MACHINES);
    let seq = format!("{other}/units/seq.service?alt=json");
    assert_eq!(client.request("GET", &seq, None).code, 404);
    let body = unit_body("inactive", &command(9000, 0), &[]);
    for (b, code) in [
        (body.clone(), 201),
        (body, 204),
        ("{\"desiredState\":\"loaded\"}".to_string(), 204),
        ("{\"desiredState\":\"launched\"}".to_string(), 204),
    ] {
        let a = client.request("PUT", &seq, Some(&b));
        assert_eq!(
            (a.code, a.by.as_str()),
            (code, lid.as_str()),
            "{b}: {}",
            a.body
        );
    }
    want.insert("seq.service".into(), command(9000, 0));
    // The leader's errors are relayed as it gave them.
    let a = client.request(
        "PUT",
        &format!("{other}/units/bad.service"),
        Some("{\"x\":"),
    );
    assert_eq!((a.code, a.by.as_str()), (400, lid.as_str()), "{}", a.body);
    assert!(json(&a.body)["error"]["message"].is_string(), "{}", a.body);
    let a = client.request("DELETE", &format!("{other}/units/none.service"), None);
    assert_eq!((a.code, a.by.as_str()), (404, lid.as_str()), "{}", a.body);

    // Every unit runs once.
    let all: Vec<&Machine> = machines.iter().collect();
    let got = wait_for(LIMIT, "every unit running once", || {
        let p = placements(&all);
        want.keys()
            .all(|u| p.get(u).is_some_and(|m| m.len() == 1))
            .then_some(p)
    });
    for (u, on) in &got {
        assert_eq!(on.len(), 1, "{u} runs on {on:?}");
    }

    // A machine whose certificate is from another CA (it trusts the
    // cluster's CA, so it can check the leader's certificate): the leader's
    // listener refuses it, so its writes are committed by itself, none
    // lost, and its log says why.
    let rogue_ca = Pki::new(&dir.path().join("rogue"), "rogue-ca");
    let rogue_cert = rogue_ca.issue("rogue", &[&san]);
    let rid = "7f9900000000";
    let rport = free_port();
    let rogue = tls_machine(&etcd, dir.path(), rid, &ip, rport, &rogue_cert, &pki.ca);
    let rogue_client = Client {
        ns: &ns,
        ca: rogue_ca.ca.clone(),
        cert: client.cert.clone(),
        key: client.key.clone(),
    };
    let url = format!("https://{ip}:{rport}/fleet/v1/units/{}", name(500));
    // Until the rogue has read the committer from etcd it commits its
    // writes itself without trying (a loaded machine can answer its API
    // first): the write is made again until the log says why it was not
    // forwarded. Each answer is the rogue's own (created, then the same
    // unit written again).
    let log = wait_for(LIMIT, "the reason in the rogue's log", || {
        let a = rogue_client.request("PUT", &url, Some(&launch_body(500, 0)));
        if a.code == 0 {
            return None;
        }
        assert_eq!(a.by.as_str(), rid, "{} {}", a.code, a.body);
        assert!([201, 204].contains(&a.code), "{} {}", a.code, a.body);
        let l = rogue.log();
        l.contains("cannot forward unit writes to the committer")
            .then_some(l)
    });
    want.insert(name(500), command(500, 0));
    assert!(log.contains(&format!("machine {lid}")), "{log}");
    assert!(log.contains("TLS handshake"), "{log}");
    // The leader's listener refused the rogue's certificate.
    wait_for(LIMIT, "the refusal in the leader's log", || {
        machines[leader]
            .log()
            .contains(&format!("TLS handshake with {ip}:"))
            .then_some(())
    });
    let a = client.request(
        "GET",
        &format!("{}/units/{}", base(leader), name(500)),
        None,
    );
    assert_eq!(
        a.code, 200,
        "the rogue's write is in the cluster: {}",
        a.body
    );
    let all: Vec<&Machine> = machines.iter().chain([&rogue]).collect();
    wait_for(LIMIT, "every unit running once, the rogue's too", || {
        let p = placements(&all);
        (want.keys().all(|u| p.get(u).is_some_and(|m| m.len() == 1))
            && p.values().all(|m| m.len() == 1))
        .then_some(())
    });
}
