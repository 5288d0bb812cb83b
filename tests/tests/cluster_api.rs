//! fleet API v1 against a real etcd and a real clusterd, with a real HTTP
//! client (curl) over the unix socket and over loopback TCP: every status
//! code, the error entity, pagination past 100 units, and fleetctl's own
//! request sequences (fleetctl itself cannot be installed here; the
//! sequences are those FLEET-NOTES "What fleetctl depends on" lists).

mod cluster_support;

use cluster_support::etcd::{free_port, Etcd};
use cluster_support::*;
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
    // 400: a circular Replaces, on create and on replacement; the chain
    // without the cycle is fine.
    let rep = |to: &str| unit_body("inactive", "/bin/true", &[("Replaces", to)]);
    assert_eq!(
        req(
            "PUT",
            "/fleet/v1/units/r1.service",
            JSON,
            Some(&rep("r2.service"))
        )
        .0,
        201
    );
    assert_eq!(
        req("PUT", "/fleet/v1/units/r2.service", JSON, Some(&rep("r3*"))).0,
        201
    );
    let (c, b) = req(
        "PUT",
        "/fleet/v1/units/r3.service",
        JSON,
        Some(&rep("r1.service")),
    );
    assert_eq!((c, error_code(&b)), (400, 400), "{b}");
    assert!(
        json(&b)["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("r3.service -> r1.service -> r2.service -> r3.service"),
        "{b}"
    );
    assert_eq!(
        req("GET", "/fleet/v1/units/r3.service", None, None).0,
        404,
        "a refused unit is not stored"
    );
    assert_eq!(
        req("PUT", "/fleet/v1/units/r3.service", JSON, Some(&body)).0,
        201
    );
    let (c, b) = req(
        "PUT",
        "/fleet/v1/units/r3.service",
        JSON,
        Some(&rep("r1.service")),
    );
    assert_eq!(
        (c, error_code(&b)),
        (400, 400),
        "replacing into a cycle: {b}"
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

#[test]
fn pagination_past_100_units_over_tcp() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let port = free_port();
    let args = vec![
        "--etcd".to_string(),
        etcd.url(),
        "--machine-id".into(),
        "pager0001".into(),
        "--control".into(),
        dir.path().join("no-init.sock").display().to_string(),
        "--api-listen".into(),
        format!("tcp://127.0.0.1:{port}"),
    ];
    let _cd = Clusterd::start_args(
        args,
        dir.path().join("cd.log"),
        "pager0001",
        dir.path().join("unused"),
    );
    let base = format!("http://127.0.0.1:{port}");
    wait_for(Duration::from_secs(20), "TCP API", || {
        (http_tcp(&base, "GET", "/fleet/v1/units", None, None).0 == 200).then_some(())
    });
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
    let (c, b) = req("GET", "/fleet/v1/state/hello.service?alt=json", None, None);
    assert_eq!(c, 200, "state must exist once launched");
    let st = json(&b);
    assert_eq!(st["systemdActiveState"], "active");
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
