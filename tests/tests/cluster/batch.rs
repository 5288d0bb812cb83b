//! The API's grouped creations against a real etcd and a real clusterd:
//! PUTs of new units that arrive while a transaction is in flight go to
//! etcd together (`cluster/src/commit.rs`), and each request still gets
//! its own answer, as fleet's API gives one PUT.
//!
//! - concurrent PUTs from many clients with bad requests among the good
//!   ones: each good one `201` (a desired-state change `204`), each bad
//!   one its own `400` or `409` and JSON error entity, nothing lost, fewer
//!   transactions than creations;
//! - creations whose files together pass etcd's request size limit
//!   (1.5 MiB): split into transactions etcd accepts, every unit stored
//!   whole;
//! - etcd killed while creations are in flight: every request gets `201`
//!   or the `503` error entity, and after etcd is back each unit is all
//!   there (file and desired state) or not there at all.
//!
//! clusterd runs alone here (no init: its agent waits for one), and units
//! are submitted `inactive`, so the only transactions are the API's.

use crate::support::etcd::Etcd;
use crate::support::http::Conn;
use crate::support::*;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// A clusterd alone (no init) with its API on a unix socket, up.
fn clusterd(etcd: &Etcd, dir: &Path) -> (Clusterd, PathBuf) {
    let sock = dir.join("api.sock");
    let args = vec![
        "--etcd".to_string(),
        etcd.url(),
        "--machine-id".into(),
        "batch0001".into(),
        "--control".into(),
        dir.join("no-init.sock").display().to_string(),
        "--api-listen".into(),
        format!("unix://{}", sock.display()),
    ];
    let cd = Clusterd::start_args(args, dir.join("cd.log"), "batch0001", sock.clone());
    cd.wait_api();
    (cd, sock)
}

/// etcd's count of transactions handled so far (its own metrics).
fn etcd_txns(etcd: &Etcd) -> u64 {
    let addr = etcd.url().trim_start_matches("http://").to_string();
    let out = std::process::Command::new("curl")
        .args(["-s", "--max-time", "5"])
        .arg(format!("http://{addr}/metrics"))
        .output()
        .expect("curl");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            l.starts_with("grpc_server_handled_total{") && l.contains("grpc_method=\"Txn\"")
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// The error entity's code, or 0 when the body is not one.
fn error_code(body: &str) -> u64 {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v["error"]["code"].as_u64())
        .unwrap_or(0)
}

/// Runs `f(client, conn)` on `clients` threads at once (each with its own
/// kept connection), and returns what each returned.
fn at_once<T: Send + 'static>(
    sock: &Path,
    clients: usize,
    f: impl Fn(usize, &mut Conn) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let f = Arc::new(f);
    let start = Arc::new(Barrier::new(clients));
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let (f, start, sock) = (f.clone(), start.clone(), sock.to_path_buf());
            std::thread::spawn(move || {
                let mut conn = Conn::new(&sock);
                start.wait();
                f(c, &mut conn)
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|t| t.join().expect("client thread"))
        .collect()
}

fn good(c: usize, i: usize) -> String {
    format!("good-{c:02}-{i:02}.service")
}

#[test]
fn concurrent_puts_with_bad_ones_among_them_each_get_their_own_answer() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let (_cd, sock) = clusterd(&etcd, dir.path());
    // One unit exists: a client changes its desired state among the rest.
    let mut c = Conn::new(&sock);
    let body = unit_body("inactive", "/bin/sleep 1", &[]);
    assert_eq!(
        c.request("PUT", "/fleet/v1/units/old.service", Some(&body))
            .0,
        201
    );

    const CLIENTS: usize = 20;
    const EACH: usize = 15;
    let txns0 = etcd_txns(&etcd);
    // Each client creates EACH units; one of every five requests it sends
    // is also a bad one, a different kind per client.
    let answers = at_once(&sock, CLIENTS, |c, conn| {
        let mut out = Vec::new();
        for i in 0..EACH {
            let name = good(c, i);
            let body = unit_body("inactive", &format!("/bin/sleep {}", c * 100 + i), &[]);
            let (code, b) = conn.request("PUT", &format!("/fleet/v1/units/{name}"), Some(&body));
            out.push((name, 201, code, b));
            if i % 5 != 2 {
                continue;
            }
            let (path, body, want) = match c % 5 {
                // Undecodable JSON.
                0 => (format!("bad-{c}-{i}.service"), "{".to_string(), 400),
                // A name in the body that is not the one in the path.
                1 => (
                    format!("bad-{c}-{i}.service"),
                    r#"{"name":"other.service","desiredState":"launched","options":[]}"#
                        .to_string(),
                    400,
                ),
                // A new unit without options.
                2 => (
                    format!("bad-{c}-{i}.service"),
                    r#"{"desiredState":"launched"}"#.to_string(),
                    409,
                ),
                // Not a unit name.
                3 => (format!("bad-{c}-{i}.nothing"), body.clone(), 400),
                // A good change of an existing unit's desired state.
                _ => (
                    "old.service".to_string(),
                    r#"{"desiredState":"loaded"}"#.to_string(),
                    204,
                ),
            };
            let (code, b) = conn.request("PUT", &format!("/fleet/v1/units/{path}"), Some(&body));
            out.push((path, want, code, b));
        }
        out
    });
    let txns = etcd_txns(&etcd) - txns0;
    let answers: Vec<_> = answers.into_iter().flatten().collect();
    for (name, want, code, body) in &answers {
        assert_eq!(code, want, "PUT {name}: {body}");
        if *want >= 400 {
            assert_eq!(
                error_code(body),
                u64::from(*want),
                "PUT {name}: the error entity {body}"
            );
        }
    }
    // Nothing lost: every good unit is stored with its own file, no bad
    // one is, and the existing unit took its new desired state.
    let (units, _) = http::all_units(&mut c);
    let names: std::collections::BTreeSet<&str> = units.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(units.len(), CLIENTS * EACH + 1, "{names:?}");
    for u in &units {
        if u.name == "old.service" {
            assert_eq!(u.desired_state.as_deref(), Some("loaded"));
            continue;
        }
        let (c, i) = (&u.name[5..7], &u.name[8..10]);
        let n: usize = c.parse::<usize>().unwrap() * 100 + i.parse::<usize>().unwrap();
        assert_eq!(u.options[0].value, format!("/bin/sleep {n}"), "{}", u.name);
        assert_eq!(u.desired_state.as_deref(), Some("inactive"));
    }
    // The creations went in groups.
    eprintln!(
        "{} creations from {CLIENTS} clients in {txns} etcd transactions",
        CLIENTS * EACH
    );
    assert!(
        txns < (CLIENTS * EACH) as u64,
        "{txns} transactions for {} creations",
        CLIENTS * EACH
    );
}

#[test]
fn creations_over_etcds_request_limit_are_split() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let (_cd, sock) = clusterd(&etcd, dir.path());
    // 40 unit files of 60,000 bytes each (30 lines of 2,000: a line may
    // be 2,048 bytes long): 2.4 MB, well over etcd's 1.5 MiB request
    // limit if they went in one transaction.
    const UNITS: usize = 40;
    let options = |i: usize| -> Vec<serde_json::Value> {
        let mut o = vec![serde_json::json!(
            {"section": "Service", "name": "ExecStart", "value": format!("/bin/sleep {i}")}
        )];
        for k in 0..30 {
            let value = format!("V{k:02}={i:02}{}", "x".repeat(1_992));
            o.push(
                serde_json::json!({"section": "Service", "name": "Environment", "value": value}),
            );
        }
        o
    };
    let txns0 = etcd_txns(&etcd);
    let answers = at_once(&sock, UNITS, move |i, conn| {
        let body = serde_json::json!({"desiredState": "inactive", "options": options(i)});
        conn.request(
            "PUT",
            &format!("/fleet/v1/units/big{i:02}.service"),
            Some(&body.to_string()),
        )
    });
    let txns = etcd_txns(&etcd) - txns0;
    for (i, (code, body)) in answers.iter().enumerate() {
        assert_eq!(*code, 201, "big{i:02}.service: {body}");
    }
    // Every file whole, each under its own name.
    let mut c = Conn::new(&sock);
    for i in 0..UNITS {
        let (code, body) = c.request("GET", &format!("/fleet/v1/units/big{i:02}.service"), None);
        assert_eq!(code, 200, "{body}");
        let u = json(&body);
        assert_eq!(
            u["options"].as_array(),
            Some(&options(i)),
            "big{i:02}.service"
        );
    }
    // Grouped (fewer transactions than units), and in at least three
    // transactions (1 MiB each at most).
    eprintln!("{UNITS} creations of 60 kB in {txns} etcd transactions");
    assert!((3..UNITS as u64).contains(&txns), "{txns} transactions");
}

#[test]
fn etcd_killed_during_creations_leaves_nothing_half_written() {
    let mut etcd = Etcd::start();
    let dir = tempdir();
    let (_cd, sock) = clusterd(&etcd, dir.path());
    const CLIENTS: usize = 16;
    const EACH: usize = 200;
    let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = sent.clone();
    let etcd_pid = etcd.pid().expect("etcd runs") as i32;
    // Each client creates units until one is refused; etcd is killed by
    // one of them after 300 answers in all, with the others' requests in
    // flight.
    let answers = at_once(&sock, CLIENTS, move |c, conn| {
        let mut out = Vec::new();
        for i in 0..EACH {
            let name = format!("k{c:02}-{i:03}.service");
            let body = unit_body("inactive", &format!("/bin/sleep {i}"), &[]);
            let (code, b) = conn.request("PUT", &format!("/fleet/v1/units/{name}"), Some(&body));
            let stop = code != 201;
            out.push((name, code, b));
            if counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 300 {
                signal(etcd_pid, libc::SIGKILL);
            }
            if stop {
                break;
            }
        }
        out
    });
    assert!(sent.load(std::sync::atomic::Ordering::SeqCst) > 300);
    let answers: Vec<_> = answers.into_iter().flatten().collect();
    let mut refused = 0;
    for (name, code, body) in &answers {
        match code {
            201 => {}
            503 => {
                assert_eq!(error_code(body), 503, "{name}: {body}");
                refused += 1;
            }
            other => panic!("PUT {name}: {other} {body}"),
        }
    }
    // Every client stopped at a refusal: etcd was gone for each of them.
    assert_eq!(refused, CLIENTS, "one refusal per client");

    etcd.restart();
    wait_for(Duration::from_secs(30), "the API back", || {
        (http_unix(&sock, "GET", "/fleet/v1/units", None, None).0 == 200).then_some(())
    });
    // Each unit is all there or not at all; each one created is there.
    for (name, code, _) in &answers {
        let file = etcd_get(&etcd, &format!("/flotilla/units/{name}"));
        let desired = etcd_get(&etcd, &format!("/flotilla/desired/{name}"));
        assert_eq!(
            file.is_some(),
            desired.is_some(),
            "{name}: half written (file {file:?}, desired {desired:?})"
        );
        if *code == 201 {
            assert!(file.is_some(), "{name} was created and is gone");
            assert_eq!(desired.as_deref(), Some("inactive"));
        }
    }
    // The refused ones can be sent again: created, or there already.
    let mut c = Conn::new(&sock);
    for (name, code, _) in answers.iter().filter(|(_, code, _)| *code == 503) {
        let body = unit_body("inactive", "/bin/sleep 0", &[]);
        let (again, b) = c.request("PUT", &format!("/fleet/v1/units/{name}"), Some(&body));
        assert!(
            again == 201 || again == 204,
            "{name} (first {code}): {again} {b}"
        );
    }
}
