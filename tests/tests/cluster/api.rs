//! fleet API v1 against a real etcd and a real clusterd, with a real HTTP
//! client (curl) over the unix socket and over loopback TCP: every status
//! code, the error entity, pagination past 100 units, and fleetctl's own
//! request sequences (fleetctl itself cannot be installed here; the
//! sequences are those docs/fleet-compat.md "What fleetctl depends on" lists).

use crate::support::etcd::{free_port, Etcd};
use crate::support::*;
use std::time::Duration;

const JSON: Option<&str> = Some("application/json");

fn error_code(body: &str) -> u64 {
    json(body)["error"]["code"].as_u64().unwrap_or(0)
}

#[test]
fn every_status_code_over_the_unix_socket() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let cd = Machine::start(
        &etcd.url(),
        dir.path(),
        "m1aaaaaaaaaa",
        "role=web",
        "192.0.2.1",
        "2s",
        &[],
    );
    cd.wait_api();
    let s = cd.sock.clone();
    let req = |m: &str, p: &str, ct: Option<&str>, b: Option<&str>| http_unix(&s, m, p, ct, b);
    let body = unit_body("inactive", "/bin/sleep 100", &[]);

    // 404 for unknown units and paths, as error entities.
    let (c, b) = req("GET", "/fleet/v1/units/a.service?alt=json", None, None);
    assert_eq!((c, error_code(&b)), (404, 404), "{b}");
    let (c, b) = req("DELETE", "/fleet/v1/units/a.service", None, None);
    assert_eq!((c, error_code(&b)), (404, 404));
    assert_eq!(req("GET", "/fleet/v1/nothing", None, None).0, 404);
    // 415 before anything else.
    assert_eq!(
        req(
            "PUT",
            "/fleet/v1/units/bad",
            Some("text/plain"),
            Some("junk")
        )
        .0,
        415
    );
    // 400: undecodable body, name mismatch, bad name.
    assert_eq!(
        req("PUT", "/fleet/v1/units/a.service", JSON, Some("{")).0,
        400
    );
    assert_eq!(
        req(
            "PUT",
            "/fleet/v1/units/a.service",
            JSON,
            Some(r#"{"name":"b.service"}"#)
        )
        .0,
        400
    );
    assert_eq!(
        req("PUT", "/fleet/v1/units/a.foo", JSON, Some(&body)).0,
        400
    );
    // 409: create without options.
    assert_eq!(
        req(
            "PUT",
            "/fleet/v1/units/a.service",
            JSON,
            Some(r#"{"desiredState":"launched"}"#)
        )
        .0,
        409
    );
    // 400: bad options.
    let bad = unit_body(
        "inactive",
        "/bin/true",
        &[("MachineID", "x"), ("Global", "true")],
    );
    let (c, b) = req("PUT", "/fleet/v1/units/a.service", JSON, Some(&bad));
    assert_eq!((c, error_code(&b)), (400, 400));
    // 201 create (missing desiredState = inactive).
    let (c, _) = req(
        "PUT",
        "/fleet/v1/units/a.service?alt=json",
        JSON,
        Some(&body),
    );
    assert_eq!(c, 201);
    let (c, b) = req(
        "GET",
        "/fleet/v1/units/a.service?alt=json&whatever=1",
        None,
        None,
    );
    assert_eq!(c, 200);
    let u = json(&b);
    assert_eq!(u["desiredState"], "inactive");
    assert_eq!(u["currentState"], "inactive");
    assert_eq!(u["options"][0]["value"], "/bin/sleep 100");
    // 409: update without desiredState; same options are not a replacement.
    assert_eq!(
        req("PUT", "/fleet/v1/units/a.service", JSON, Some("{}")).0,
        409
    );
    assert_eq!(
        req(
            "PUT",
            "/fleet/v1/units/a.service",
            JSON,
            Some(
                &body
                    .replace(",\"desiredState\":\"inactive\"", "")
                    .replace("\"desiredState\":\"inactive\",", "")
            )
        )
        .0,
        409
    );
    // 400: bad desiredState on update.
    assert_eq!(
        req(
            "PUT",
            "/fleet/v1/units/a.service",
            JSON,
            Some(r#"{"desiredState":"running"}"#)
        )
        .0,
        400
    );
    // 204 update.
    assert_eq!(
        req(
            "PUT",
            "/fleet/v1/units/a.service",
            JSON,
            Some(r#"{"desiredState":"launched"}"#)
        )
        .0,
        204
    );
    // 201 replacement with different options.
    let newer = unit_body("launched", "/bin/sleep 200", &[]);
    assert_eq!(
        req("PUT", "/fleet/v1/units/a.service", JSON, Some(&newer)).0,
        201
    );
    let (_, b) = req("GET", "/fleet/v1/units/a.service", None, None);
    assert_eq!(json(&b)["options"][0]["value"], "/bin/sleep 200");
    // Templates: created inactive, never activated.
    let t = unit_body("inactive", "/bin/sleep %i", &[]);
    assert_eq!(
        req("PUT", "/fleet/v1/units/t@.service", JSON, Some(&t)).0,
        201
    );
    assert_eq!(
        req(
            "PUT",
            "/fleet/v1/units/t@.service",
            JSON,
            Some(r#"{"desiredState":"launched"}"#)
        )
        .0,
        400
    );
    assert_eq!(
        req(
            "PUT",
            "/fleet/v1/units/u@.service",
            JSON,
            Some(&unit_body("loaded", "/bin/true", &[]))
        )
        .0,
        400
    );
    // A circular Replaces is accepted, as fleet accepted it (the scheduler
    // keeps a cycle from moving round: docs/cluster.md "Engine"), on
    // creation and on replacement.
    let rep = |to: &str| unit_body("inactive", "/bin/true", &[("Replaces", to)]);
    for (n, to) in [("r1", "r2.service"), ("r2", "r3*"), ("r3", "r1.service")] {
        let path = format!("/fleet/v1/units/{n}.service");
        assert_eq!(req("PUT", &path, JSON, Some(&rep(to))).0, 201, "{n}");
    }
    assert_eq!(
        req("PUT", "/fleet/v1/units/r3.service", JSON, Some(&body)).0,
        201
    );
    assert_eq!(
        req(
            "PUT",
            "/fleet/v1/units/r3.service",
            JSON,
            Some(&rep("r1.service"))
        )
        .0,
        201,
        "replacing into a cycle"
    );
    for n in ["r1", "r2", "r3"] {
        assert_eq!(
            req(
                "DELETE",
                &format!("/fleet/v1/units/{n}.service"),
                None,
                None
            )
            .0,
            204
        );
    }
    // 405 wrong method.
    let (c, b) = req("POST", "/fleet/v1/units/a.service", JSON, Some("{}"));
    assert_eq!((c, error_code(&b)), (405, 405));
    assert_eq!(req("DELETE", "/fleet/v1/units", None, None).0, 405);
    assert_eq!(req("PUT", "/fleet/v1/machines", JSON, Some("[]")).0, 405);
    // 400 bad page token.
    assert_eq!(
        req("GET", "/fleet/v1/units?nextPageToken=zzz", None, None).0,
        400
    );
    assert_eq!(
        req("GET", "/fleet/v1/state?nextPageToken=00", None, None).0,
        400
    );
    // Discovery.
    let (c, b) = req("GET", "/fleet/v1/discovery", None, None);
    assert_eq!(c, 200);
    assert_eq!(json(&b)["kind"], "discovery#restDescription");
    // PATCH machines: validated whole, 204, visible in the listing.
    let bad_patch = r#"[{"op":"add","path":"/m1aaaaaaaaaa/metadata/disk","value":{"value":"ssd"}},{"op":"nope","path":"/x/metadata/y"}]"#;
    assert_eq!(
        req("PATCH", "/fleet/v1/machines", JSON, Some(bad_patch)).0,
        400
    );
    let patch = r#"[{"op":"add","path":"/m1aaaaaaaaaa/metadata/disk","value":{"value":"ssd"}}]"#;
    assert_eq!(req("PATCH", "/fleet/v1/machines", JSON, Some(patch)).0, 204);
    wait_for(Duration::from_secs(5), "patched metadata", || {
        let (_, b) = req("GET", "/fleet/v1/machines", None, None);
        let m = json(&b);
        (m["machines"][0]["metadata"]["disk"] == "ssd"
            && m["machines"][0]["metadata"]["role"] == "web")
            .then_some(())
    });
    // 204 delete, then 404.
    assert_eq!(
        req("DELETE", "/fleet/v1/units/a.service", None, None).0,
        204
    );
    assert_eq!(req("GET", "/fleet/v1/units/a.service", None, None).0, 404);

    // 503 while etcd is down.
    let mut etcd = etcd;
    etcd.stop();
    let (c, b) = req("GET", "/fleet/v1/units", None, None);
    assert_eq!((c, error_code(&b)), (503, 503), "{b}");
    assert_eq!(
        req("PUT", "/fleet/v1/units/x.service", JSON, Some(&body)).0,
        503
    );
    etcd.restart();
    wait_for(
        Duration::from_secs(20),
        "API back after etcd restart",
        || (req("GET", "/fleet/v1/units", None, None).0 == 200).then_some(()),
    );
}

/// A clusterd alone (no init) serving the API on a free loopback port, up.
fn tcp_clusterd(etcd: &Etcd, dir: &std::path::Path, id: &str) -> (Clusterd, u16) {
    let port = free_port();
    let args = vec![
        "--etcd".to_string(),
        etcd.url(),
        "--machine-id".into(),
        id.into(),
        "--control".into(),
        dir.join("no-init.sock").display().to_string(),
        "--api-listen".into(),
        format!("tcp://127.0.0.1:{port}"),
    ];
    let cd = Clusterd::start_args(args, dir.join("cd.log"), id, dir.join("unused"));
    let base = format!("http://127.0.0.1:{port}");
    wait_for(Duration::from_secs(20), "TCP API", || {
        (http_tcp(&base, "GET", "/fleet/v1/units", None, None).0 == 200).then_some(())
    });
    (cd, port)
}

#[test]
fn pagination_past_100_units_over_tcp() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let (_cd, port) = tcp_clusterd(&etcd, dir.path(), "pager0001");
    let base = format!("http://127.0.0.1:{port}");
    for i in 0..250 {
        let body = unit_body("inactive", "/bin/true", &[]);
        let (c, b) = http_tcp(
            &base,
            "PUT",
            &format!("/fleet/v1/units/u{i:03}.service"),
            JSON,
            Some(&body),
        );
        assert_eq!(c, 201, "{b}");
    }
    let mut names = Vec::new();
    let mut path = "/fleet/v1/units?alt=json".to_string();
    let mut pages = 0;
    loop {
        let (c, b) = http_tcp(&base, "GET", &path, None, None);
        assert_eq!(c, 200);
        let page = json(&b);
        let units = page["units"].as_array().unwrap();
        pages += 1;
        assert!(units.len() <= 100);
        names.extend(
            units
                .iter()
                .map(|u| u["name"].as_str().unwrap().to_string()),
        );
        match page["nextPageToken"].as_str() {
            Some(t) => path = format!("/fleet/v1/units?alt=json&nextPageToken={t}"),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(names.len(), 250);
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    // A plain-HTTP listen off loopback is refused at start.
    let out = std::process::Command::new(bin("clusterd", "flotilla-cluster"))
        .args([
            "--etcd",
            &etcd.url(),
            "--machine-id",
            "x1",
            "--api-listen",
            "tcp://0.0.0.0:1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("loopback"));
}

/// fleetctl's sequences: submit, load, start (with its /state poll), stop,
/// unload, destroy, against one machine (the real init runs the unit).
#[test]
fn fleetctl_request_sequences() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let cd = Machine::start(
        &etcd.url(),
        dir.path(),
        "f1eetc7l0000",
        "",
        "192.0.2.1",
        "2s",
        &[],
    );
    cd.wait_api();
    let init = &cd.init;
    let loaded = || init.fleet_units().into_keys().collect::<Vec<_>>();
    let running = || init.running().into_keys().collect::<Vec<_>>();
    let s = cd.sock.clone();
    let req = |m: &str, p: &str, ct: Option<&str>, b: Option<&str>| http_unix(&s, m, p, ct, b);
    let get_unit = || json(&req("GET", "/fleet/v1/units/hello.service?alt=json", None, None).1);
    let wait_current = |want: &str| {
        wait_for(
            Duration::from_secs(10),
            &format!("currentState {want}"),
            || (get_unit()["currentState"] == want).then_some(()),
        )
    };

    // submit: GET (404), PUT inactive with options, poll until inactive.
    assert_eq!(
        req("GET", "/fleet/v1/units/hello.service?alt=json", None, None).0,
        404
    );
    let body = unit_body("inactive", "/bin/sleep 1000", &[]);
    assert_eq!(
        req(
            "PUT",
            "/fleet/v1/units/hello.service?alt=json",
            JSON,
            Some(&body)
        )
        .0,
        201
    );
    wait_current("inactive");
    // load: PUT loaded, poll until loaded.
    assert_eq!(
        req(
            "PUT",
            "/fleet/v1/units/hello.service?alt=json",
            JSON,
            Some("{\"desiredState\":\"loaded\"}\n")
        )
        .0,
        204
    );
    wait_current("loaded");
    assert_eq!(get_unit()["machineID"], "f1eetc7l0000");
    let (c, b) = req("GET", "/fleet/v1/state/hello.service?alt=json", None, None);
    assert_eq!(c, 200);
    let st = json(&b);
    assert_eq!(
        (
            st["systemdLoadState"].as_str(),
            st["systemdActiveState"].as_str()
        ),
        (Some("loaded"), Some("inactive"))
    );
    assert_eq!(loaded(), vec!["hello.service"]);
    assert!(running().is_empty());
    // start: PUT launched, poll until launched, then /state until active.
    assert_eq!(
        req(
            "PUT",
            "/fleet/v1/units/hello.service?alt=json",
            JSON,
            Some("{\"desiredState\":\"launched\"}\n")
        )
        .0,
        204
    );
    wait_current("launched");
    // launched says the agent started the unit; its state goes through
    // activating before active, as fleetctl's own poll expects.
    let st = wait_for(
        Duration::from_secs(10),
        "state active once launched",
        || {
            let (c, b) = req("GET", "/fleet/v1/state/hello.service?alt=json", None, None);
            let st = json(&b);
            (c == 200 && st["systemdActiveState"] == "active").then_some(st)
        },
    );
    assert_eq!(st["systemdSubState"], "running");
    assert_eq!(st["hash"].as_str().map(str::len), Some(40));
    assert_eq!(running(), vec!["hello.service"]);
    let (_, b) = req(
        "GET",
        "/fleet/v1/state?machineID=f1eetc7l0000&alt=json",
        None,
        None,
    );
    assert_eq!(json(&b)["states"].as_array().map(Vec::len), Some(1));
    // stop: GET /units, PUT loaded.
    assert_eq!(req("GET", "/fleet/v1/units?alt=json", None, None).0, 200);
    assert_eq!(
        req(
            "PUT",
            "/fleet/v1/units/hello.service?alt=json",
            JSON,
            Some("{\"desiredState\":\"loaded\"}\n")
        )
        .0,
        204
    );
    wait_current("loaded");
    assert!(running().is_empty());
    // unload: PUT inactive: unscheduled, state gone.
    assert_eq!(
        req(
            "PUT",
            "/fleet/v1/units/hello.service?alt=json",
            JSON,
            Some("{\"desiredState\":\"inactive\"}\n")
        )
        .0,
        204
    );
    wait_for(Duration::from_secs(10), "unscheduled", || {
        let u = get_unit();
        (u["currentState"] == "inactive" && u.get("machineID").is_none()).then_some(())
    });
    wait_for(Duration::from_secs(10), "state removed", || {
        (req("GET", "/fleet/v1/state/hello.service", None, None).0 == 404).then_some(())
    });
    assert!(loaded().is_empty());
    // destroy.
    assert_eq!(
        req(
            "PUT",
            "/fleet/v1/units/hello.service",
            JSON,
            Some("{\"desiredState\":\"launched\"}\n")
        )
        .0,
        204
    );
    wait_current("launched");
    assert_eq!(
        req(
            "DELETE",
            "/fleet/v1/units/hello.service?alt=json",
            None,
            None
        )
        .0,
        204
    );
    wait_for(Duration::from_secs(10), "destroyed unit stopped", || {
        loaded().is_empty().then_some(())
    });
}

/// Sends `head` (request line and headers, without the blank line) and
/// then `body` from another thread (the server may answer, and close,
/// before reading it), and reads the answer: (status, Content-Type, body),
/// status 0 when the connection ended without one.
fn raw(addr: &str, head: &str, body: Vec<u8>) -> (u16, String, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(format!("{head}\r\n\r\n").as_bytes()).unwrap();
    let mut w = s.try_clone().unwrap();
    let writer = std::thread::spawn(move || {
        for chunk in body.chunks(64 * 1024) {
            if w.write_all(chunk).is_err() {
                return;
            }
        }
    });
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let _ = writer.join();
    let text = String::from_utf8_lossy(&out).to_string();
    let (h, b) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = h
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let ctype = h
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type:")
                .map(|v| v.trim().to_string())
        })
        .unwrap_or_default();
    // A chunked body's data is between its size lines.
    let body = match b.split_once("\r\n") {
        Some((size, rest))
            if usize::from_str_radix(size.trim(), 16).is_ok() && h.contains("chunked") =>
        {
            rest.split("\r\n").next().unwrap_or("").to_string()
        }
        _ => b.to_string(),
    };
    (status, ctype, body)
}

#[test]
fn floods_and_slow_clients_get_clear_answers() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let (_cd, port) = tcp_clusterd(&etcd, dir.path(), "limits0001");
    let addr = format!("127.0.0.1:{port}");
    let base = format!("http://{addr}");
    let put = |len: usize| {
        format!("PUT /fleet/v1/units/big.service HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {len}\r\nConnection: close")
    };
    let is_413 = |(code, ctype, body): (u16, String, String)| {
        assert_eq!(code, 413, "{body}");
        assert_eq!(ctype, "application/json");
        assert_eq!(error_code(&body), 413, "{body}");
        assert!(body.contains("too large"), "{body}");
    };

    // A Content-Length of 1 GB is refused from the headers alone: no body
    // is sent, and the answer comes at once.
    let t = std::time::Instant::now();
    is_413(raw(&addr, &put(1 << 30), Vec::new()));
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());

    // 100,000 options, and an ExecStart of 10 MB: a 413 with the error
    // entity, not a dropped connection.
    let opts: Vec<String> = (0..100_000)
        .map(|i| {
            format!("{{\"section\":\"Service\",\"name\":\"Environment\",\"value\":\"V{i}=1\"}}")
        })
        .collect();
    let many = format!(
        "{{\"desiredState\":\"launched\",\"options\":[{}]}}",
        opts.join(",")
    );
    is_413(raw(&addr, &put(many.len()), many.into_bytes()));
    let exec = format!("/bin/echo {}", "x".repeat(10 << 20));
    let huge = unit_body("launched", &exec, &[]);
    is_413(raw(&addr, &put(huge.len()), huge.into_bytes()));
    // The same without a length (chunked): refused once past the limit.
    let (code, _, body) = {
        let h = format!("PUT /fleet/v1/units/big.service HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close");
        let mut chunked = Vec::new();
        for part in unit_body("launched", &exec, &[]).as_bytes().chunks(1 << 16) {
            chunked.extend(format!("{:x}\r\n", part.len()).as_bytes());
            chunked.extend(part);
            chunked.extend(b"\r\n");
        }
        chunked.extend(b"0\r\n\r\n");
        raw(&addr, &h, chunked)
    };
    assert_eq!((code, error_code(&body)), (413, 413), "{body}");
    // Under the body limit but over what a unit file may be: 400, saying so.
    let small: Vec<String> = (0..5_000)
        .map(|i| format!("{{\"section\":\"Service\",\"name\":\"Environment\",\"value\":\"VARIABLE_{i}=0123456789\"}}"))
        .collect();
    let body = format!(
        "{{\"desiredState\":\"launched\",\"options\":[{}]}}",
        small.join(",")
    );
    let (c, _, b) = raw(&addr, &put(body.len()), body.into_bytes());
    assert_eq!((c, error_code(&b)), (400, 400), "{b}");
    assert!(b.contains("the limit is 65536"), "{b}");
    // A 100 kB ExecStart line: fleet's line limit, a 400.
    let long = unit_body(
        "launched",
        &format!("/bin/echo {}", "y".repeat(100_000)),
        &[],
    );
    let (c, _, b) = raw(&addr, &put(long.len()), long.into_bytes());
    assert_eq!((c, error_code(&b)), (400, 400), "{b}");

    // Slow clients are dropped: one that never finishes its headers, one
    // that never finishes its body (408 and the error entity); meanwhile
    // the API answers everyone else at once.
    let slow_head = {
        let addr = addr.clone();
        std::thread::spawn(move || {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(&addr).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(40))).unwrap();
            let t = std::time::Instant::now();
            s.write_all(b"GET /fleet/v1/units HTTP/1.1\r\nHost: x\r\n")
                .unwrap();
            let mut out = Vec::new();
            let _ = s.read_to_end(&mut out);
            (t.elapsed(), String::from_utf8_lossy(&out).to_string())
        })
    };
    let slow_body = {
        let addr = addr.clone();
        std::thread::spawn(move || {
            use std::io::{Read, Write};
            let mut s = std::net::TcpStream::connect(&addr).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(40))).unwrap();
            let t = std::time::Instant::now();
            let head = format!("PUT /fleet/v1/units/slow.service HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"desired");
            s.write_all(head.as_bytes()).unwrap();
            let mut out = Vec::new();
            let _ = s.read_to_end(&mut out);
            (t.elapsed(), String::from_utf8_lossy(&out).to_string())
        })
    };
    for _ in 0..10 {
        let t = std::time::Instant::now();
        assert_eq!(
            http_tcp(&base, "GET", "/fleet/v1/machines", None, None).0,
            200
        );
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        std::thread::sleep(Duration::from_millis(300));
    }
    let (took, out) = slow_head.join().unwrap();
    assert!(
        took >= Duration::from_secs(9) && took < Duration::from_secs(25),
        "headers not finished: dropped after {took:?}: {out}"
    );
    let (took, out) = slow_body.join().unwrap();
    assert!(
        took >= Duration::from_secs(14) && took < Duration::from_secs(30),
        "body not finished: answered after {took:?}: {out}"
    );
    assert!(out.starts_with("HTTP/1.1 408"), "{out}");
    assert!(out.contains("\"code\":408"), "{out}");

    // On a plain-HTTP TCP listen a Host name other than localhost is
    // refused (DNS rebinding); addresses and localhost are served.
    let host = |h: &str| {
        raw(
            &addr,
            &format!("GET /fleet/v1/machines HTTP/1.1\r\nHost: {h}\r\nConnection: close"),
            Vec::new(),
        )
        .0
    };
    assert_eq!(host("evil.example"), 403);
    assert_eq!(host(&format!("evil.example:{port}")), 403);
    assert_eq!(host(&addr), 200);
    assert_eq!(host(&format!("localhost:{port}")), 200);
    // `/` leads to the dashboard.
    let (code, _, _) = raw(
        &addr,
        &format!("GET / HTTP/1.1\r\nHost: {addr}\r\nConnection: close"),
        Vec::new(),
    );
    assert_eq!(code, 303);
}
