//! TLS: clusterd reaches etcd over TLS with a client certificate
//! (`--etcd-ca/--etcd-cert/--etcd-key`; etcd on loopback with
//! `--client-cert-auth`), and serves the fleet API over TLS with client
//! certificates (`--api-cert/--api-key/--api-client-ca`) on a non-loopback
//! address: the host side of a veth pair into a network namespace the test
//! makes, reached from inside that namespace with curl. Certificates are
//! made in the test with the `openssl` command. Needs root (for the
//! namespace); without it the test says so and does nothing.

use crate::support::etcd::{free_port, Etcd, EtcdTls};
use crate::support::tls::{curl, Answer, Netns, Pki};
use crate::support::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(20);

#[test]
fn etcd_and_the_api_over_tls_with_client_certificates() {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "making a network namespace needs root (the README's test command runs as root)"
    );
    let ns = match Netns::new() {
        Ok(n) => n,
        Err(e) => panic!("cannot make the network namespace: {e}"),
    };
    let dir = tempdir();
    let pki = Pki::new(&dir.path().join("pki"), "test-ca");
    let (etcd_cert, etcd_key) = pki.issue("etcd", &["IP:127.0.0.1"]);
    let (cd_cert, cd_key) = pki.issue("clusterd-client", &[]);
    let (api_cert, api_key) = pki.issue("api", &[&format!("IP:{}", ns.host_ip)]);
    let (user_cert, user_key) = pki.issue("user", &[]);
    let rogue = Pki::new(&dir.path().join("rogue"), "rogue-ca");
    let (rogue_cert, rogue_key) = rogue.issue("intruder", &[]);

    let etcd = Etcd::start_tls(EtcdTls {
        ca: pki.ca.clone(),
        cert: etcd_cert,
        key: etcd_key,
        client_cert: cd_cert.clone(),
        client_key: cd_key.clone(),
    });
    assert!(etcd.url().starts_with("https://127.0.0.1:"));
    // etcd itself refuses clients without a certificate of its CA.
    let health = format!("{}/health", etcd.url());
    assert_eq!(
        curl(Command::new("curl"), &pki.ca, None, "GET", &health, None).code,
        0
    );
    assert_eq!(
        curl(
            Command::new("curl"),
            &pki.ca,
            Some((&rogue_cert, &rogue_key)),
            "GET",
            &health,
            None
        )
        .code,
        0
    );

    let port = free_port();
    let p = |x: &Path| x.display().to_string();
    let m = Machine::start(
        &etcd.url(),
        dir.path(),
        "7150000000aa",
        "tls=yes",
        &ns.host_ip,
        "2s",
        &[
            "--etcd-ca".into(),
            p(&pki.ca),
            "--etcd-cert".into(),
            p(&cd_cert),
            "--etcd-key".into(),
            p(&cd_key),
            format!("--api-listen=tcp://{}:{port}", ns.host_ip),
            "--api-cert".into(),
            p(&api_cert),
            "--api-key".into(),
            p(&api_key),
            "--api-client-ca".into(),
            p(&pki.ca),
        ],
    );
    let base = format!("https://{}:{port}/fleet/v1", ns.host_ip);
    let user = Some((user_cert.as_path(), user_key.as_path()));
    // From inside the namespace, with a client certificate: the machine is
    // there (its presence went to etcd over TLS).
    let machines = wait_for(LIMIT, "the API over TLS from the namespace", || {
        let Answer {
            code: c, body: b, ..
        } = curl(
            ns.command("curl"),
            &pki.ca,
            user,
            "GET",
            &format!("{base}/machines"),
            None,
        );
        (c == 200 && b.contains("7150000000aa")).then_some(b)
    });
    let v = json(&machines);
    assert_eq!(v["machines"][0]["primaryIP"], ns.host_ip.as_str());
    assert_eq!(v["machines"][0]["metadata"]["tls"], "yes");

    // A unit submitted over TLS runs on the machine's real init.
    let body = unit_body("launched", "/bin/sleep 1300", &[]);
    let Answer {
        code: c, body: b, ..
    } = curl(
        ns.command("curl"),
        &pki.ca,
        user,
        "PUT",
        &format!("{base}/units/secure.service"),
        Some(&body),
    );
    assert_eq!(c, 201, "{b}");
    wait_for(LIMIT, "secure.service runs", || {
        m.init
            .running()
            .contains_key("secure.service")
            .then_some(())
    });
    wait_for(LIMIT, "its state, over TLS", || {
        let Answer {
            code: c, body: b, ..
        } = curl(
            ns.command("curl"),
            &pki.ca,
            user,
            "GET",
            &format!("{base}/state/secure.service"),
            None,
        );
        (c == 200 && json(&b)["systemdActiveState"] == "active").then_some(())
    });

    // No client certificate, or one from another CA: no HTTP at all.
    for client in [None, Some((rogue_cert.as_path(), rogue_key.as_path()))] {
        let Answer {
            code: c, body: b, ..
        } = curl(
            ns.command("curl"),
            &pki.ca,
            client,
            "GET",
            &format!("{base}/machines"),
            None,
        );
        assert_eq!(c, 0, "refused without a good client certificate: {b}");
    }
    // Plain HTTP to the TLS port gets no answer either.
    let (c, _) = http_tcp(
        &format!("http://{}:{port}", ns.host_ip),
        "GET",
        "/fleet/v1/machines",
        None,
        None,
    );
    assert_ne!(c, 200);

    // clusterd refuses to start with plain HTTP off loopback, and with half
    // of the API's TLS flags.
    let cd = bin("clusterd", "flotilla-cluster");
    for extra in [
        vec![format!("--api-listen=tcp://{}:{}", ns.host_ip, free_port())],
        vec![
            format!("--api-listen=tcp://{}:{}", ns.host_ip, free_port()),
            "--api-cert".into(),
            p(&api_cert),
        ],
    ] {
        let out = Command::new(&cd)
            .args(["--etcd", &etcd.url(), "--machine-id", "x1"])
            .args(["--etcd-ca", &p(&pki.ca), "--etcd-cert", &p(&cd_cert)])
            .args(["--etcd-key", &p(&cd_key)])
            .args(&extra)
            .stdin(Stdio::null())
            .output()
            .expect("run clusterd");
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
    }

    // A clusterd whose etcd client certificate is not from etcd's CA gets
    // nowhere: its API answers 503.
    let sock = dir.path().join("rogue.sock");
    let rogue_cd = Clusterd::start_args(
        vec![
            "--etcd".into(),
            etcd.url(),
            "--machine-id".into(),
            "r0gue0000000".into(),
            "--control".into(),
            p(&dir.path().join("no-init.sock")),
            "--api-listen".into(),
            format!("unix://{}", sock.display()),
            "--etcd-ca".into(),
            p(&pki.ca),
            "--etcd-cert".into(),
            p(&rogue_cert),
            "--etcd-key".into(),
            p(&rogue_key),
        ],
        dir.path().join("rogue.log"),
        "r0gue0000000",
        sock.clone(),
    );
    let (c, b) = wait_for(LIMIT, "the rogue clusterd's API", || {
        let r = http_unix(&sock, "GET", "/fleet/v1/machines", None, None);
        (r.0 != 0).then_some(r)
    });
    assert_eq!(c, 503, "{b}; log: {}", rogue_cd.log_text());
    let Answer {
        code: c, body: b, ..
    } = curl(
        ns.command("curl"),
        &pki.ca,
        user,
        "GET",
        &format!("{base}/machines"),
        None,
    );
    assert_eq!(c, 200);
    assert_eq!(
        json(&b)["machines"].as_array().map(Vec::len),
        Some(1),
        "{b}"
    );
}
